#include "controller/data_path.h"

#include <algorithm>

#include "sim/assert.h"

namespace afasim::controller {

using sim::Status;
using sim::Time;

// ---------------------------------------------------------------------------------------
// Construction

namespace {
Status check_options(const DataPathOptions& options, const config::SystemPreset& preset, std::int64_t chunk) {
  raid::Geometry g{options.raid5_data_members, options.raid10_pairs, options.strip_bytes, chunk};
  AFASIM_RETURN_IF_ERROR(raid::Engine::validate(g));
  if (options.rebuild_bytes_per_second <= 0) return sim::invalid_argument("rebuild rate must be positive");
  if (options.payload == datapac::PayloadKind::kFile && options.payload_dir.empty())
    return sim::invalid_argument("payload file needs a directory");
  // The write cache and the mirror of the peer's both live in the controller's DRAM.
  if (options.cache.write_cache_bytes < 0)
    return sim::invalid_argument("write_cache_bytes must be 0 (the default) or positive, got " +
                                 std::to_string(options.cache.write_cache_bytes));
  if (options.cache.write_cache_bytes > preset.controllers.dram_bytes / 2)
    return sim::invalid_argument(
        "write cache of " + std::to_string(options.cache.write_cache_bytes) +
        " bytes does not fit: it and the mirror "
        "of the peer's cache live in the controller's " +
        std::to_string(preset.controllers.dram_bytes) + " bytes of DRAM, so at most " +
        std::to_string(preset.controllers.dram_bytes / 2) + " bytes");
  if (options.cache.destage_age_ns < 0 || options.cache.destage_age_check_ns <= 0)
    return sim::invalid_argument("destage age must be 0 (never) or positive and its check interval positive, got " +
                                 std::to_string(options.cache.destage_age_ns) + " ns and " +
                                 std::to_string(options.cache.destage_age_check_ns) + " ns");
  return raid::Scrubber::validate(options.scrub);
}
}  // namespace

sim::Result<std::unique_ptr<DataPath>> DataPath::create(sim::Simulator& sim, const config::SystemPreset& preset,
                                                        const pool::CapacityModel& capacity,
                                                        DataPathOptions options, EventSink events) {
  AFASIM_RETURN_IF_ERROR(check_options(options, preset, capacity.params().chunk_bytes));
  std::unique_ptr<DataPath> dp(new DataPath(sim, preset, std::move(options), std::move(events)));
  AFASIM_RETURN_IF_ERROR(dp->build(capacity));
  return dp;
}

DataPath::DataPath(sim::Simulator& sim, const config::SystemPreset& preset, DataPathOptions options, EventSink events)
    : sim_(sim),
      preset_(preset),
      options_(std::move(options)),
      events_(std::move(events)),
      fault_rng_(sim.seed(), "fault.corrupt_block") {}

DataPath::~DataPath() = default;

Status DataPath::build(const pool::CapacityModel& capacity) {
  HardwareOptions ho;
  ho.payload = options_.payload;
  ho.payload_dir = options_.payload_dir;
  ho.payload_must_exist = options_.payload_must_exist;
  ho.memory_page_bytes = options_.memory_page_bytes;
  ho.wrap_payload = options_.wrap_payload;
  ho.preconditioned = options_.preconditioned;
  ho.cost = options_.cost;
  auto hw = Hardware::create(sim_, preset_, capacity, ho);
  if (!hw.is_ok()) return hw.status();
  hw_ = std::move(hw).value();
  const std::int64_t chunk = capacity.params().chunk_bytes;
  if (!options_.model) {
    auto cal = perf::calibration_for(preset_, options_.calibration_dir);
    if (!cal.is_ok()) return cal.status();
    options_.model = std::make_shared<const perf::ModelParameters>(cal->model);
  }
  timing_ = std::make_unique<Timing>(sim_, *hw_, *options_.model, preset_.controllers.count, preset_.datapacs.count, chunk);
  members_ = std::make_unique<raid::DriveMembers>(hw_->block_devices(), chunk);
  raid_ = std::make_unique<raid::Engine>(
      raid::Geometry{options_.raid5_data_members, options_.raid10_pairs, options_.strip_bytes, chunk},
      options_.payload != datapac::PayloadKind::kNone ? members_.get() : nullptr);
  raid_->set_invariants(&invariants_, &sim_);
  thin_ = std::make_unique<pool::ThinMap>(capacity, preset_.ssd.capacity_bytes, hw_->drive_datapacs(), *raid_);
  ctx_.reset(new ArrayContext{sim_, preset_, options_, *hw_, *timing_, *raid_, *thin_, volumes_, invariants_, events_, {}, {}, {}});
  const std::int64_t cache_bytes = options_.cache.write_cache_bytes > 0 ? options_.cache.write_cache_bytes
                                                                       : preset_.controllers.dram_bytes / 4;
  cache_ = std::make_unique<WriteCache>(*ctx_, cache_bytes / kCacheBlock);
  pair_ = std::make_unique<ControllerPair>(*ctx_, *cache_);
  mover_ = std::make_unique<ExtentMover>(*ctx_, *pair_);
  rebuild_ = std::make_unique<Rebuilder>(*ctx_, *pair_, *mover_);
  io_ = std::make_unique<IoOrchestrator>(*ctx_, *pair_, *cache_, *mover_);
  scrubber_ = std::make_unique<raid::Scrubber>(sim_, *raid_, thin_->extents(), static_cast<raid::ScrubHost&>(*this),
                                               options_.scrub);
  cache_->wire(pair_.get(), io_.get());
  pair_->wire(io_.get(), {[this](const std::string& why) { rebuild_->pause(why); },
                          [this] {
                            rebuild_->resume();
                            scrubber_->resume();
                          },
                          [this](Id survivor, Id lost) {
                            if (takeover_listener_) takeover_listener_(survivor, lost);
                          }});
  ctx_->after_execute = [this](const raid::Plan& plan) {
    mover_->plan_executed(plan);
    if (members_->media_error_changes() != media_changes_seen_) note_media_changes();
  };
  thin_->set_release_hook([this](std::uint32_t id) { mover_->abort(id, "the extent was freed"); });
  // A cache the supercaps cannot vault starts write-through: say so, once, at start.
  pair_->announce_cache_modes();
  return Status::ok();
}

void DataPath::note_media_changes() {
  media_changes_seen_ = members_->media_error_changes();
  const std::uint64_t cleared = members_->media_errors_cleared() - media_cleared_seen_;
  media_cleared_seen_ = members_->media_errors_cleared();
  // One event per plan that healed any: its commit saves the hardware state (Array::log_event),
  // so a kill after the write does not bring the marks back (review 38).
  if (cleared > 0)
    ctx_->emit(Severity::kInfo, "drive", "",
               std::to_string(cleared) + " unreadable 4 KiB block(s) rewritten: they read again (" +
                   std::to_string(members_->media_error_blocks()) + " left)");
}

// ---------------------------------------------------------------------------------------
// Volumes

Status DataPath::attach_volume(const Volume& v, std::vector<int> pool_drives, bool allocate_fixed) {
  AFASIM_ASSERT(volumes_.find(v.id) == nullptr, "volume attached twice");
  pool::ThinVolume t;
  t.id = v.id;
  t.raid_type = v.raid_type;
  t.fixed = v.provisioning == Provisioning::kFixed;
  t.capacity_bytes = v.capacity_bytes;
  t.pool_drives = std::move(pool_drives);
  AFASIM_RETURN_IF_ERROR(thin_->attach(std::move(t), allocate_fixed));
  VolumeRuntime& rt = volumes_.add(v.id);
  rt.thin = thin_->find(v.id);
  rt.preferred_controller = v.preferred_controller;
  pair_->attach(rt);  // ALUA: its preferred controller owns it when active, else the other one
  return Status::ok();
}

Status DataPath::restore_extent(const ExtentRecord& r) {
  AFASIM_RETURN_IF_ERROR(thin_->restore(r));
  VolumeRuntime* v = volumes_.find(r.volume_id);
  v->reported_state = volume_state_of(*v->thin);  // as it was when the state was saved: no new event
  v->reported_degraded_members = v->thin->degraded_members;
  return Status::ok();
}

Status DataPath::grow_volume(Id volume_id, std::int64_t capacity_bytes) {
  return thin_->grow(volume_id, capacity_bytes);
}

void DataPath::shrink_volume(Id volume_id, std::int64_t capacity_bytes) {
  VolumeRuntime* v = volumes_.find(volume_id);
  if (v == nullptr) return;
  const std::int64_t ext = extent_bytes(v->raid_type());
  const auto keep = static_cast<std::int64_t>((capacity_bytes + ext - 1) / ext);
  cache_->drop_range(*v, keep * ext / kCacheBlock, static_cast<std::int64_t>(v->thin->map.size()) * ext / kCacheBlock,
                     owner(volume_id));
  thin_->shrink(volume_id, capacity_bytes);
}

void DataPath::write_back_at_stop() {
  // The vault is bounded by the supercaps' hold-up (seconds of simulated time).
  while (pair_->any_vaulting() && sim_.step()) {
  }
  pair_->write_vaults_into_pool();
  // A takeover or a boot under way ends first (within a minute of simulated time), so that the
  // controller taking the volumes over destages their blocks: a stop during a takeover left a
  // failed controller's mirrored writes in the cache, destaged by no one (review 41).
  const sim::Time bound = sim_.now() + 60 * sim::kSecond;
  while (awaiting_owner() && sim_.now() < bound && sim_.step()) {
  }
  cache_->destage_all();
  // What is still dirty is lost, and marked so (saved with the event's commit): after the
  // restart reads of it fail instead of returning the SSDs' older bytes.
  const std::int64_t left = cache_->mark_lost_unless_vaulted({});
  if (left > 0)
    ctx_->emit(Severity::kCritical, "cache", "",
               "stop: " + std::to_string(left * WriteCache::kBlockBytes) +
                   " bytes of acknowledged writes could not be destaged (their destage kept failing, the volume's "
                   "\"destage failed\" event says why, or no controller serves their volume); they are lost, and "
                   "read as errors until written again");
}

bool DataPath::awaiting_owner() const {
  if (!pair_->serving(1) && !pair_->serving(2)) return false;
  bool waiting = false;
  volumes_.for_each([&](const VolumeRuntime& v) { waiting = waiting || pair_->owner(v.id) == 0; });
  return waiting;
}

void DataPath::set_preferred_controller(Id volume_id, Id controller) {
  if (VolumeRuntime* v = volumes_.find(volume_id)) pair_->set_preferred_controller(*v, controller);
}

void DataPath::detach_volume(Id volume_id) {
  VolumeRuntime* v = volumes_.find(volume_id);
  if (v == nullptr) return;
  // Its cached blocks go with it, dirty or not: the volume no longer exists.
  cache_->drop_range(*v, 0, static_cast<std::int64_t>(v->thin->map.size()) * extent_bytes(v->raid_type()) / kCacheBlock,
                     owner(volume_id));
  ctx_->lost_data.forget(*v);
  thin_->detach(volume_id);
  volumes_.remove(volume_id);
  cache_->recount();
}

std::int64_t DataPath::lost_bytes(Id volume_id) const {
  return ctx_->lost_data.bytes(volume_id);
}

Status DataPath::restore_lost_blocks(Id volume_id, std::int64_t first_block, std::int64_t blocks, std::uint8_t sectors) {
  VolumeRuntime* v = volumes_.find(volume_id);
  if (v == nullptr) return sim::not_found("no volume " + std::to_string(volume_id));
  const std::int64_t volume_blocks = (v->thin->capacity_bytes + LostBlocks::kBlockBytes - 1) / LostBlocks::kBlockBytes;
  if (first_block >= volume_blocks || blocks > volume_blocks - first_block)
    return Status(sim::Code::kOutOfRange, "blocks " + std::to_string(first_block) + "+" + std::to_string(blocks) +
                                              " lie past the end of volume " + std::to_string(volume_id) + " (" +
                                              std::to_string(v->thin->capacity_bytes) + " bytes)");
  if (blocks > LostBlocks::kMaxRestoredBlocks - ctx_->lost_data.blocks())
    return Status(sim::Code::kOutOfRange, "more lost data than afasim keeps (" +
                                              std::to_string(LostBlocks::kMaxRestoredBlocks) + " blocks of 4 KiB in all)");
  for (std::int64_t b = first_block; b < first_block + blocks; ++b) ctx_->lost_data.mark(*v, b, sectors);
  return Status::ok();
}

std::int64_t DataPath::allocated_extents(Id volume_id) const {
  const pool::ThinVolume* v = thin_->find(volume_id);
  return v ? v->allocated : 0;
}

VolumeState DataPath::volume_state(Id volume_id) const {
  const pool::ThinVolume* v = thin_->find(volume_id);
  return v ? volume_state_of(*v) : VolumeState::kOnline;
}

const VolumeIoStats* DataPath::volume_stats(Id volume_id) const {
  const VolumeRuntime* v = volumes_.find(volume_id);
  return v ? &v->stats : nullptr;
}

Time DataPath::host_write_core_ns(raid::RaidType type, std::int64_t bytes) {
  raid::Extent e;
  e.type = type;
  e.member_count = static_cast<std::uint8_t>(raid_->layout(type).member_count());
  raid::Plan plan;
  const Status st = raid_->plan_write(e, 0, bytes, nullptr, plan);
  AFASIM_ASSERT(st.is_ok(), "a write to a whole extent plans");
  return options_.cost.core_ns(Work::of(plan).plus_host().plus_mirror(bytes));
}

// ---------------------------------------------------------------------------------------
// Scrub host

void DataPath::time_scrub(const raid::Plan& plan, const raid::Extent& e, std::function<void()> done) {
  // The worker's cores, DRAM and SAS paths, beside host I/O (Timing::background).
  timing_->background(pair_->worker_for(e.volume_id), plan, [done = std::move(done)](Time) { done(); });
}

void DataPath::scrub_event(Level level, const std::string& object, const std::string& message) {
  const Severity s = level == Level::kInfo      ? Severity::kInfo
                     : level == Level::kWarning ? Severity::kWarning
                     : level == Level::kError   ? Severity::kError
                                                : Severity::kCritical;
  ctx_->emit(s, "scrub", object, message);
}

}  // namespace afasim::controller
