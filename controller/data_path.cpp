#include "controller/data_path.h"

#include <algorithm>
#include <cstring>

#include "sim/assert.h"

namespace afasim::controller {

using datapac::SsdOp;
using pool::ChunkAddr;
using raid::RaidType;
using sim::Status;
using sim::Time;

namespace {

bool power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

}  // namespace

// ---------------------------------------------------------------------------------------
// Construction

sim::Result<std::unique_ptr<DataPath>> DataPath::create(sim::Simulator& sim, const config::SystemPreset& preset,
                                                        const pool::CapacityModel& capacity,
                                                        DataPathOptions options, EventSink events) {
  const std::int64_t chunk = capacity.params().chunk_bytes;
  if (options.raid5_data_members < 2 || options.raid5_data_members > pool::kMaxMembers - 1)
    return sim::invalid_argument("raid5 width must be 2+1 to " + std::to_string(pool::kMaxMembers - 1) +
                                 "+1, got " + std::to_string(options.raid5_data_members) + "+1");
  if (options.raid10_pairs < 1 || options.raid10_pairs * 2 > pool::kMaxMembers)
    return sim::invalid_argument("raid10_pairs must be 1 to " + std::to_string(pool::kMaxMembers / 2));
  if (!power_of_two(options.strip_bytes) || options.strip_bytes < 4096 || chunk % options.strip_bytes != 0)
    return sim::invalid_argument("strip_bytes must be a power of two of at least 4096 that divides the " +
                                 std::to_string(chunk) + "-byte chunk, got " + std::to_string(options.strip_bytes));
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
  std::vector<int> drive_datapacs;
  for (int d = 0; d < preset.datapacs.count; ++d)
    for (int s = 0; s < preset.datapacs.ssds_per_datapac; ++s) drive_datapacs.push_back(d + 1);
  std::unique_ptr<DataPath> dp(
      new DataPath(sim, preset, capacity, std::move(options), std::move(events), drive_datapacs));
  for (std::size_t i = 0; i < drive_datapacs.size(); ++i) {
    const int datapac = drive_datapacs[i];
    const int slot = static_cast<int>(i) % preset.datapacs.ssds_per_datapac + 1;
    datapac::SsdOptions so;
    so.name = "dp" + std::to_string(datapac) + "-ssd" + (slot < 10 ? "0" : "") + std::to_string(slot);
    so.preconditioned = dp->options_.preconditioned;
    so.payload = dp->options_.payload;
    so.memory_page_bytes = dp->options_.memory_page_bytes;
    so.payload_directory = dp->options_.payload_dir;
    so.payload_factory = dp->options_.payload_factory;
    // The array never writes the fifth of each SSD it keeps back: extra spare area for
    // the SSD's garbage collection (docs/capacity.md, docs/ssd-model.md).
    so.host_span_fraction = 1.0 - capacity.params().over_provisioning_fraction;
    so.seed = sim::mix64(sim.seed() ^ (i + 1));
    auto ssd = datapac::Ssd::create(preset.ssd, so);
    if (!ssd.is_ok()) return ssd.status();
    dp->ssds_.push_back(std::move(ssd).value());
  }
  // A cache the supercaps cannot vault starts write-through: say so, once, at start.
  for (Id c = 1; c <= 2; ++c) {
    const ControllerRuntime& cr = dp->ctl(c);
    if (cr.mode == CacheMode::kWriteThrough && dp->options_.cache.write_back)
      dp->emit(Severity::kWarning, "cache", "controller/" + std::to_string(c),
               "controller " + dp->ctl_name(c) + " cache write-through (" + cr.mode_reason + ")");
  }
  return dp;
}

DataPath::DataPath(sim::Simulator& sim, const config::SystemPreset& preset, const pool::CapacityModel& capacity,
                   DataPathOptions options, EventSink events, std::vector<int> drive_datapacs)
    : sim_(sim),
      preset_(preset),
      options_(std::move(options)),
      events_(std::move(events)),
      drive_datapac_(drive_datapacs),
      allocator_(capacity, preset.ssd.capacity_bytes, drive_datapacs),
      raid10_(raid::Layout::raid10(options_.raid10_pairs, options_.strip_bytes, capacity.params().chunk_bytes)),
      raid5_(raid::Layout::raid5(options_.raid5_data_members, options_.strip_bytes, capacity.params().chunk_bytes)),
      raid0_(raid::Layout::raid0(options_.raid5_data_members, options_.strip_bytes, capacity.params().chunk_bytes)) {
  const auto& bp = preset.datapacs.backplane;
  const auto& hp = preset.controllers.host_ports;
  for (int c = 0; c < preset.controllers.count; ++c) {
    const std::string cn(1, static_cast<char>('A' + c));
    std::array<std::vector<datapac::Link>, 2> links;
    for (int d = 0; d < preset.datapacs.count; ++d) {
      const std::string dn = std::to_string(d + 1);
      links[0].emplace_back("ctrl" + cn + "->dp" + dn, bp.lanes_per_controller * bp.lane_bytes_per_second, 0,
                            bp.lanes_per_controller);
      links[1].emplace_back("dp" + dn + "->ctrl" + cn, bp.lanes_per_controller * bp.lane_bytes_per_second, 0,
                            bp.lanes_per_controller);
    }
    backplane_.push_back(std::move(links));
    cores_.emplace_back(preset.controllers.cpu_cores);
    std::vector<datapac::Link> in, out;
    for (int p = 0; p < hp.count_per_controller; ++p) {
      in.emplace_back("ctrl" + cn + "-port" + std::to_string(p + 1) + "-in", hp.payload_bytes_per_second);
      out.emplace_back("ctrl" + cn + "-port" + std::to_string(p + 1) + "-out", hp.payload_bytes_per_second);
    }
    host_ports_in_.push_back(std::move(in));
    host_ports_out_.push_back(std::move(out));
    data_movers_.emplace_back("ctrl" + cn + "-data-mover", options_.cost.data_mover_bytes_per_second);
    interconnect_.emplace_back("ctrl" + cn + "->peer", options_.cost.interconnect_bytes_per_second);
  }
  controller_stats_.resize(static_cast<std::size_t>(preset.controllers.count));
  for (auto& s : scratch_) s.resize(static_cast<std::size_t>(options_.strip_bytes));
  // The array starts as it runs: both controllers active, mains on, supercaps charged.
  AFASIM_ASSERT(preset.controllers.count == 2, "the model is a dual-controller array");
  const std::int64_t cache_bytes =
      options_.cache.write_cache_bytes > 0 ? options_.cache.write_cache_bytes : preset.controllers.dram_bytes / 4;
  cache_blocks_cap_ = std::max<std::int64_t>(1, cache_bytes / kCacheBlock);
  energy_joules_ = preset.supercaps.usable_energy_joules();
  energy_at_ns_ = sim.now();
  charging_ = true;
  // The cache mode holds from the start, not only after the first event that re-evaluates it:
  // write-back disabled, or a cache too large for the supercaps to vault, is write-through now.
  const double need = vault_energy_joules();
  for (Id c = 1; c <= static_cast<Id>(ctl_.size()); ++c) {
    auto [mode, reason] = cache_mode_of(c, need);
    ctl(c).mode = mode;
    ctl(c).mode_reason = std::move(reason);
  }
}

const raid::Layout& DataPath::layout(RaidType type) const {
  switch (type) {
    case RaidType::kRaid10: return raid10_;
    case RaidType::kRaid5: return raid5_;
    case RaidType::kRaid0: return raid0_;
  }
  return raid10_;
}

DataPath::VolumeRuntime* DataPath::find_volume(Id id) {
  return id > 0 && static_cast<std::size_t>(id) < volumes_.size() ? volumes_[static_cast<std::size_t>(id)].get()
                                                                   : nullptr;
}
const DataPath::VolumeRuntime* DataPath::find_volume(Id id) const {
  return id > 0 && static_cast<std::size_t>(id) < volumes_.size() ? volumes_[static_cast<std::size_t>(id)].get()
                                                                   : nullptr;
}

void DataPath::emit(Severity s, std::string category, std::string object, std::string message) {
  if (events_) events_(s, std::move(category), std::move(object), std::move(message));
}

// ---------------------------------------------------------------------------------------
// Volumes and extents

sim::Status DataPath::attach_volume(const Volume& v, std::vector<int> pool_drives, bool allocate_fixed) {
  AFASIM_ASSERT(find_volume(v.id) == nullptr, "volume attached twice");
  AFASIM_ASSERT(v.id > 0, "volume ids are positive");
  VolumeRuntime rt;
  rt.id = v.id;
  rt.raid_type = v.raid_type;
  rt.provisioning = v.provisioning;
  rt.preferred_controller = v.preferred_controller;
  rt.capacity_bytes = v.capacity_bytes;
  rt.pool_drives = std::move(pool_drives);
  const std::int64_t ext = extent_bytes(v.raid_type);
  rt.map.assign(static_cast<std::size_t>((v.capacity_bytes + ext - 1) / ext), kNoExtent);
  if (static_cast<std::size_t>(v.id) >= volumes_.size()) volumes_.resize(static_cast<std::size_t>(v.id) + 1);
  VolumeRuntime& attached = *(volumes_[static_cast<std::size_t>(v.id)] = std::make_unique<VolumeRuntime>(std::move(rt)));
  // ALUA: its preferred controller owns it when active, else the other one.
  const Id other = v.preferred_controller == 1 ? 2 : 1;
  if (serving(v.preferred_controller)) attached.claims = static_cast<std::uint8_t>(1u << (v.preferred_controller - 1));
  else if (serving(other)) attached.claims = static_cast<std::uint8_t>(1u << (other - 1));
  if (v.provisioning == Provisioning::kFixed && allocate_fixed) {
    for (std::size_t i = 0; i < attached.map.size(); ++i) {
      auto e = allocate_extent(attached, static_cast<std::int64_t>(i));
      if (!e.is_ok()) {
        detach_volume(v.id);
        return e.status();
      }
    }
  }
  return Status::ok();
}

sim::Status DataPath::grow_volume(Id volume_id, std::int64_t capacity_bytes) {
  VolumeRuntime* v = find_volume(volume_id);
  if (v == nullptr) return sim::not_found("no volume " + std::to_string(volume_id) + " in the data path");
  const std::int64_t ext = extent_bytes(v->raid_type);
  const std::size_t old_size = v->map.size();
  const auto new_size = static_cast<std::size_t>((capacity_bytes + ext - 1) / ext);
  if (new_size < old_size) return sim::unprocessable("volumes do not shrink");
  v->map.resize(new_size, kNoExtent);
  if (v->provisioning == Provisioning::kFixed) {
    for (std::size_t i = old_size; i < new_size; ++i) {
      auto e = allocate_extent(*v, static_cast<std::int64_t>(i));
      if (!e.is_ok()) {
        for (std::size_t j = old_size; j < i; ++j) release_extent(v->map[j]);
        v->map.resize(old_size);
        return e.status();
      }
    }
  }
  v->capacity_bytes = capacity_bytes;
  return Status::ok();
}

void DataPath::shrink_volume(Id volume_id, std::int64_t capacity_bytes) {
  VolumeRuntime* v = find_volume(volume_id);
  if (v == nullptr) return;
  const std::int64_t ext = extent_bytes(v->raid_type);
  const auto keep = static_cast<std::size_t>((capacity_bytes + ext - 1) / ext);
  drop_range(*v, static_cast<std::int64_t>(keep) * ext / kCacheBlock,
             static_cast<std::int64_t>(v->map.size()) * ext / kCacheBlock, owner(volume_id));
  for (std::size_t i = keep; i < v->map.size(); ++i)
    if (v->map[i] != kNoExtent) release_extent(v->map[i]);
  v->map.resize(keep);
  v->capacity_bytes = capacity_bytes;
}

void DataPath::detach_volume(Id volume_id) {
  VolumeRuntime* v = find_volume(volume_id);
  if (v == nullptr) return;
  // Its cached blocks go with it, dirty or not: the volume no longer exists.
  drop_range(*v, 0, static_cast<std::int64_t>(v->map.size()) * extent_bytes(v->raid_type) / kCacheBlock, owner(volume_id));
  for (std::uint32_t id : v->map)
    if (id != kNoExtent) release_extent(id);
  volumes_[static_cast<std::size_t>(volume_id)].reset();
  recount_cache();
}

std::uint32_t DataPath::place_extent(VolumeRuntime& v, std::int64_t index, const std::vector<ChunkAddr>& members,
                                     std::uint16_t missing) {
  std::uint32_t id;
  if (!free_extent_ids_.empty()) {
    id = free_extent_ids_.back();
    free_extent_ids_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(extents_.size());
    extents_.emplace_back();
  }
  Extent& e = extents_[id];
  e = Extent{};
  e.type = v.raid_type;
  e.member_count = static_cast<std::uint8_t>(members.size());
  e.volume_id = v.id;
  e.index = index;
  e.missing = missing;
  for (std::size_t i = 0; i < members.size(); ++i) e.members[i] = members[i];
  v.map[static_cast<std::size_t>(index)] = id;
  ++v.allocated;
  if (missing) ++v.degraded_extents;
  return id;
}

sim::Result<std::uint32_t> DataPath::allocate_extent(VolumeRuntime& v, std::int64_t index) {
  const raid::Layout& l = layout(v.raid_type);
  auto members = allocator_.allocate(v.raid_type, l.data_members(), v.pool_drives);
  if (!members.is_ok()) return members.status();
  return place_extent(v, index, *members, 0);
}

void DataPath::release_extent(std::uint32_t id) {
  abort_move(id, "the extent was freed");
  Extent& e = extents_[id];
  AFASIM_ASSERT(e.member_count > 0, "releasing a free extent");
  std::vector<ChunkAddr> live;
  for (int m = 0; m < e.member_count; ++m)
    if (!(e.missing & (1u << m))) live.push_back(e.members[static_cast<std::size_t>(m)]);
  // A chunk goes back to the pool empty: the next extent on it must read zeros, never
  // another volume's data.
  if (has_payload())
    for (const ChunkAddr& a : live)
      (void)ssds_[static_cast<std::size_t>(a.drive)]->trim_payload(a.offset_bytes(allocator_.chunk_bytes()),
                                                                   allocator_.chunk_bytes());
  allocator_.release(live);
  if (VolumeRuntime* v = find_volume(e.volume_id)) {
    --v->allocated;
    if (e.lost) --v->lost_extents;
    else if (e.missing) --v->degraded_extents;
    v->map[static_cast<std::size_t>(e.index)] = kNoExtent;
  }
  e = Extent{};
  free_extent_ids_.push_back(id);
}

ExtentRecord DataPath::record_of(const Extent& e) const {
  ExtentRecord r;
  r.volume_id = e.volume_id;
  r.extent_index = e.index;
  r.raid_type = e.type;
  r.members = e.member_list();
  r.missing = e.missing;
  return r;
}

sim::Status DataPath::notify_extent(ExtentChange change, const Extent& e) {
  if (!extent_listener_) return Status::ok();
  return extent_listener_(change, record_of(e));
}

std::vector<ExtentRecord> DataPath::extent_records(Id volume_id) const {
  std::vector<ExtentRecord> out;
  const VolumeRuntime* v = find_volume(volume_id);
  if (v == nullptr) return out;
  for (std::uint32_t id : v->map)
    if (id != kNoExtent) out.push_back(record_of(extents_[id]));
  return out;
}

sim::Status DataPath::restore_extent(const ExtentRecord& r) {
  VolumeRuntime* v = find_volume(r.volume_id);
  if (v == nullptr) return sim::conflict("extent of unknown volume " + std::to_string(r.volume_id));
  if (r.extent_index < 0 || r.extent_index >= static_cast<std::int64_t>(v->map.size()))
    return sim::conflict("extent " + std::to_string(r.extent_index) + " is past the end of volume " +
                         std::to_string(r.volume_id));
  if (v->map[static_cast<std::size_t>(r.extent_index)] != kNoExtent)
    return sim::conflict("extent " + std::to_string(r.extent_index) + " of volume " + std::to_string(r.volume_id) +
                         " is listed twice");
  const raid::Layout& l = layout(r.raid_type);
  if (r.raid_type != v->raid_type || static_cast<int>(r.members.size()) != l.member_count())
    return sim::conflict("extent " + std::to_string(r.extent_index) + " of volume " + std::to_string(r.volume_id) +
                         " does not match the volume's RAID layout");
  std::vector<ChunkAddr> live;
  for (std::size_t m = 0; m < r.members.size(); ++m)
    if (!((r.missing >> m) & 1u)) live.push_back(r.members[m]);
  AFASIM_RETURN_IF_ERROR(allocator_.claim(live));
  place_extent(*v, r.extent_index, r.members, r.missing);
  v->reported_state = volume_state(v->id);  // as it was when the state was saved: no new event
  return Status::ok();
}

std::int64_t DataPath::allocated_extents(Id volume_id) const {
  const VolumeRuntime* v = find_volume(volume_id);
  return v ? v->allocated : 0;
}

VolumeState DataPath::volume_state(Id volume_id) const {
  const VolumeRuntime* v = find_volume(volume_id);
  if (v == nullptr) return VolumeState::kOnline;
  if (v->lost_extents > 0) return VolumeState::kFailed;
  if (v->degraded_extents > 0) return VolumeState::kDegraded;
  return VolumeState::kOnline;
}

const VolumeIoStats* DataPath::volume_stats(Id volume_id) const {
  const VolumeRuntime* v = find_volume(volume_id);
  return v ? &v->stats : nullptr;
}

bool DataPath::is_allocated(Id volume_id, std::int64_t offset_bytes) const {
  const VolumeRuntime* v = find_volume(volume_id);
  if (v == nullptr || offset_bytes < 0) return false;
  const auto idx = static_cast<std::size_t>(offset_bytes / extent_bytes(v->raid_type));
  return idx < v->map.size() && v->map[idx] != kNoExtent;
}

std::int64_t DataPath::raw_usable_bytes(const std::vector<int>& drives) const {
  return allocator_.total_normal_chunks(drives) * allocator_.chunk_bytes();
}

std::int64_t DataPath::raw_allocated_bytes(const std::vector<int>& drives) const {
  std::int64_t chunks = 0;
  for (int d : drives) {
    const auto& slot = allocator_.drive(d);
    if (slot.usable) chunks += slot.used();
  }
  return chunks * allocator_.chunk_bytes();
}

// ---------------------------------------------------------------------------------------
// Back-end operations

Time DataPath::backend(Time start, Id c, ChunkAddr addr, std::int64_t offset_in_chunk, std::int64_t length,
                       SsdOp op) {
  datapac::Ssd& ssd = *ssds_[static_cast<std::size_t>(addr.drive)];
  const auto dp = static_cast<std::size_t>(drive_datapac_[static_cast<std::size_t>(addr.drive)] - 1);
  auto& links = backplane_[static_cast<std::size_t>(c - 1)];
  const std::int64_t offset = addr.offset_bytes(allocator_.chunk_bytes()) + offset_in_chunk;
  Time t = start;
  if (op == SsdOp::kWrite) t = links[0][dp].transfer(t, length);
  auto done = ssd.schedule(t, op, offset, length);
  // A failed SSD answers at once; the RAID layer has already routed around lost members,
  // so an error here is an SSD that failed under an operation planned before: the time
  // still counts, the data was placed before the failure.
  t = done.is_ok() ? *done : t;
  if (op == SsdOp::kRead) t = links[1][dp].transfer(t, length);
  ++controller_stats_[static_cast<std::size_t>(c - 1)].backend_ops;
  return t;
}

}  // namespace afasim::controller
