// controller::DataPath — the array's firmware below the management plane, built from the
// parts a reader can name (docs/architecture.md):
//   Hardware        SSDs, links, cores (controller/hardware.h)
//   raid::Engine    RAID planning, execution, reconstruction, scrub (raid/)
//   pool::ThinMap   volumes' extents, allocation, the extent allocator (pool/)
//   WriteCache      the write-back cache and its mirror, destage (controller/write_cache.h)
//   ControllerPair  controller states, ownership, failover, power and vault
//   ExtentMover     background member moves (the wear leveler's tool)
//   Rebuilder       rebuild of a failed SSD's chunks
//   raid::Scrubber  the background scrub
//   IoOrchestrator  the route of host I/O: QoS → thin map → cache → RAID, timed
// This class builds and wires them, and is the one place the Array reaches them through:
// volume attach and growth, faults, and read-only views.
//
// Not thread-safe: belongs to the model thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/preset.h"
#include "controller/context.h"
#include "controller/controller_pair.h"
#include "controller/extent_mover.h"
#include "controller/hardware.h"
#include "controller/io.h"
#include "controller/io_orchestrator.h"
#include "controller/objects.h"
#include "controller/rebuilder.h"
#include "controller/write_cache.h"
#include "pool/thin_map.h"
#include "raid/engine.h"
#include "raid/members.h"
#include "raid/scrub.h"
#include "sim/invariants.h"
#include "sim/simulator.h"

namespace afasim::controller {

class DataPath : private raid::ScrubHost {
 public:
  using ExtentChange = pool::ThinMap::Change;
  using ExtentListener = pool::ThinMap::Listener;
  static constexpr std::int64_t kCacheBlock = WriteCache::kBlockBytes;
  // The range of a slow-SSD fault's multiplier (1 = normal speed). Assumption: three decades
  // cover the slow drives worth simulating (a drive retrying reads internally is 10-100x
  // slower); past that the drive is as good as failed.
  static constexpr double kLatencyMultiplierMin = 1.0;
  static constexpr double kLatencyMultiplierMax = 1000.0;

  // Builds the hardware of `preset` and the parts above it. kInvalidArgument for bad
  // options; kIoError if a payload file cannot be opened.
  static sim::Result<std::unique_ptr<DataPath>> create(sim::Simulator& sim, const config::SystemPreset& preset,
                                                       const pool::CapacityModel& capacity,
                                                       DataPathOptions options, EventSink events);
  ~DataPath() override;

  const DataPathOptions& options() const { return options_; }
  std::int64_t extent_bytes(raid::RaidType type) const { return thin_->extent_bytes(type); }
  std::int64_t raw_bytes_per_extent(raid::RaidType type) const { return thin_->raw_bytes_per_extent(type); }

  // --- Volumes ------------------------------------------------------------------------
  // Makes `v` known (thin map sized from its capacity), in pool `pool_drives`. With
  // `allocate_fixed`, a fixed volume allocates all its extents here; kNoSpace (and nothing
  // allocated) when they do not fit. At boot the Array attaches without allocating and
  // restores the persisted extents instead.
  sim::Status attach_volume(const Volume& v, std::vector<int> pool_drives, bool allocate_fixed = true);
  // Puts back a persisted extent (boot). kConflict if its chunks are taken or it is known.
  sim::Status restore_extent(const ExtentRecord& record);
  std::vector<ExtentRecord> extent_records(Id volume_id) const { return thin_->records(volume_id); }
  // Called when the data path itself changes the extent map: a thin allocation on write
  // (kAllocated), a member moved or lost (kUpdated), an unmap (kReleased). An error refuses an
  // allocation (the write fails with it); for the others it is reported as an event.
  void set_extent_listener(ExtentListener listener) { thin_->set_listener(std::move(listener)); }
  // Called after controller `survivor` took over the volumes of `lost`.
  // Set by the Array: saves its hardware state now if it changed (ArrayContext::save_state).
  void set_state_saver(std::function<void()> saver) { ctx_->save_state = std::move(saver); }
  void set_takeover_listener(std::function<void(Id survivor, Id lost)> listener) {
    takeover_listener_ = std::move(listener);
  }
  // Grows the thin map to the new capacity (fixed volumes allocate the new extents).
  sim::Status grow_volume(Id volume_id, std::int64_t capacity_bytes);
  // Undoes a grow whose commit failed: releases the extents past `capacity_bytes`.
  void shrink_volume(Id volume_id, std::int64_t capacity_bytes);
  void set_preferred_controller(Id volume_id, Id controller);
  // The controller that owns (writes) the volume now, 0 while none does.
  Id owner(Id volume_id) const { return pair_->owner(volume_id); }
  void detach_volume(Id volume_id);
  std::int64_t allocated_extents(Id volume_id) const;
  VolumeState volume_state(Id volume_id) const;
  const VolumeIoStats* volume_stats(Id volume_id) const;
  bool is_allocated(Id volume_id, std::int64_t offset_bytes) const { return thin_->is_allocated(volume_id, offset_bytes); }
  std::int64_t raw_usable_bytes(const std::vector<int>& drives) const { return thin_->raw_usable_bytes(drives); }
  std::int64_t placeable_extents(raid::RaidType type, const std::vector<int>& drives) const {
    return thin_->placeable_extents(type, drives);
  }
  std::int64_t raw_allocated_bytes(const std::vector<int>& drives) const { return thin_->raw_allocated_bytes(drives); }

  // --- I/O ----------------------------------------------------------------------------
  IoOrchestrator& io() { return *io_; }
  const IoOrchestrator& io() const { return *io_; }

  // --- Controllers, cache and power (docs/controller-states.md, docs/write-cache.md) ---
  sim::Status fail_controller(Id c) { return pair_->fail_controller(c); }
  sim::Status restore_controller(Id c) { return pair_->restore_controller(c); }
  sim::Status cut_link() { return pair_->cut_link(); }
  sim::Status restore_link() { return pair_->restore_link(); }
  sim::Status lose_power() { return pair_->lose_power(); }
  sim::Status restore_power() { return pair_->restore_power(); }
  sim::Status degrade_supercap() { return pair_->degrade_supercap(); }
  sim::Status restore_supercap() { return pair_->restore_supercap(); }
  ControllerInfo controller_info(Id c) const { return pair_->info(c); }
  ControllerState controller_state(Id c) const { return pair_->state(c); }
  PowerStatus power_status() const { return pair_->power_status(); }
  bool online() const { return pair_->online(); }
  bool mains_on() const { return pair_->mains_on(); }
  // Destages every dirty block now (a clean shutdown); run the simulator until dirty_bytes() is 0.
  void destage_all() { cache_->destage_all(); }
  // A clean stop of the process: a vault in progress completes, what the controllers vaulted
  // is written into the pool, a takeover under way completes, and every serving controller's
  // cache destages (hostile round 17: a stop while the mains were off dropped the vaulted
  // writes); what is still dirty is marked lost (controller/lost_blocks.h).
  void write_back_at_stop();
  std::int64_t dirty_bytes() const { return cache_->dirty_bytes(); }
  // Bytes of payload the write cache holds in this process's memory (dirty blocks' copies).
  std::int64_t cache_payload_bytes() const { return cache_->payload_bytes(); }
  std::int64_t write_cache_bytes() const { return cache_->capacity_bytes(); }
  std::string check_one_writer() const { return pair_->check_one_writer(); }
  // The worst time from a controller's failure to its volumes being owned by the survivor.
  sim::Time takeover_bound_ns() const { return pair_->takeover_bound_ns(); }

  // --- Faults (docs/faults.md) --------------------------------------------------------
  // Fails SSD `drive` (index): its chunks are lost, affected volumes go degraded or failed,
  // a rebuild into spare space starts. kNotFound / kConflict (already failed).
  sim::Status fail_drive(int drive) { return lose_drive(drive, "failed"); }
  // Pulls SSD `drive` out of its DataPac: as fail_drive, and the slot is empty.
  sim::Status pull_drive(int drive) { return lose_drive(drive, "pulled"); }
  // Inserts a new SSD in the slot of a failed or pulled one: empty, zero wear, in service.
  sim::Status replace_drive(int drive);
  // Multiplies the SSD's latency (slow-SSD fault); 1.0 clears it. kNotFound, kUnprocessable
  // for a multiplier outside [kLatencyMultiplierMin, Max], kConflict when the drive is not in
  // service or already has that multiplier.
  sim::Status set_drive_latency_multiplier(int drive, double multiplier);
  // Corrupts one 4 KiB block of SSD `drive` (a media error: reads of it fail until it is
  // rewritten; docs/faults.md "corrupt_block"): at `offset_bytes` of the device, or, when
  // nullopt, a block of an allocated chunk chosen from the run's seed. Returns the device
  // offset. kNotFound, kConflict for a drive not in service, with no allocated chunk, or with
  // payload none (nothing to corrupt).
  sim::Result<std::int64_t> corrupt_block(int drive, std::optional<std::int64_t> offset_bytes);
  // The media errors now (drive index → device byte offsets), and one put back at a restart.
  const std::map<int, std::set<std::int64_t>>& media_errors() const { return members_->bad_blocks(); }
  // Counts the changes to what the array's hardware state saves of the data path: the media
  // errors (raid::DriveMembers::media_error_changes) and the lost data (LostBlocks::changes).
  std::uint64_t saved_state_changes() const { return members_->media_error_changes() + ctx_->lost_data.changes(); }
  // Volume data the array lost (controller/lost_blocks.h): f(volume id, first block, blocks,
  // sector mask) for each run of 4 KiB blocks with the same lost sectors, by volume and block;
  // the bytes a volume has lost; and a run put back at a restart (kNotFound: no such volume,
  // deleted since; kOutOfRange: past the volume's end).
  template <typename F>
  void for_each_lost_run(F&& f) const {
    for (const auto& [volume, lost] : ctx_->lost_data.by_volume())
      for (auto it = lost.begin(); it != lost.end();) {
        const auto [first, mask] = *it;
        std::int64_t n = 0;
        while (it != lost.end() && it->first == first + n && it->second == mask) ++it, ++n;
        f(volume, first, n, mask);
      }
  }
  std::int64_t lost_bytes(Id volume_id) const;
  sim::Status restore_lost_blocks(Id volume_id, std::int64_t first_block, std::int64_t blocks, std::uint8_t sectors);
  void restore_media_error(int drive, std::int64_t offset_bytes) { members_->restore_bad_block(drive, offset_bytes); }
  const RebuildStatus& rebuild_status() const { return rebuild_->status(); }
  // After a restart: queues a rebuild for every drive that extents are still missing
  // members on (a rebuild the stop interrupted) and starts the first. How many were queued.
  int resume_rebuilds() { return rebuild_->resume_interrupted(); }

  // --- Scrub (docs/raid.md "Scrub") -----------------------------------------------------
  sim::Status set_scrub_options(const raid::ScrubOptions& options) { return scrubber_->set_options(options); }
  const raid::ScrubOptions& scrub_options() const { return scrubber_->options(); }
  const raid::ScrubStatus& scrub_status() const { return scrubber_->status(); }

  // --- Parts, for the wear leveler and read-only views ------------------------------------
  // The performance model's timing of host I/O and destage (controller/timing.h).
  Timing& timing() { return *timing_; }
  const Timing& timing() const { return *timing_; }
  const ArrayContext& context() const { return *ctx_; }
  Hardware& hardware() { return *hw_; }
  const Hardware& hardware() const { return *hw_; }
  pool::ThinMap& thin_map() { return *thin_; }
  const pool::ThinMap& thin_map() const { return *thin_; }
  ExtentMover& mover() { return *mover_; }
  const ExtentMover& mover() const { return *mover_; }
  const config::SystemPreset& preset() const { return preset_; }
  std::size_t moves_in_flight() const { return mover_->in_flight(); }
  std::vector<MoveInFlight> moves() const { return mover_->moves(); }
  const ExtentMoveStats& move_stats() const { return mover_->stats(); }

  // --- Introspection ------------------------------------------------------------------
  // Every SSD command's service time and every host I/O the QoS scheduler completes go to
  // `perf` (controller/perf.h); nullptr: nowhere. Kept by the Hardware.
  void set_perf_counters(PerfCounters* perf) { hw_->set_perf_counters(perf); }
  // The inter-controller link in one direction: 0 A→B, 1 B→A (mirror traffic).
  const datapac::Link& interconnect(int direction) const {
    return std::as_const(*hw_).interconnect(static_cast<Id>(direction + 1));
  }
  int drive_count() const { return hw_->drive_count(); }
  const datapac::Ssd& ssd(int drive) const { return hw_->ssd(drive); }
  int datapac_of(int drive) const { return hw_->datapac_of(drive); }
  const ControllerIoStats& controller_stats(Id controller) const { return hw_->stats(controller); }
  // When a core of `controller` could start new work, at the earliest.
  sim::Time core_earliest_start(Id controller) const { return hw_->cores(controller).earliest_start(sim_.now()); }
  sim::Time controller_busy_ns(Id controller) const {
    return hw_->cores(controller).busy_ns() + timing_->cores_busy_ns(controller);
  }
  const pool::ExtentAllocator& allocator() const { return thin_->allocator(); }
  const raid::EngineStats& raid_stats() const { return raid_->stats(); }
  // The core time of a host write of `bytes` at the start of a whole extent of `type`: the
  // host command, its mirror into the peer's cache, and its destage as the RAID engine plans
  // it, priced by the CostModel. Admission control's unit (docs/qos.md).
  sim::Time host_write_core_ns(raid::RaidType type, std::int64_t bytes);
  // Invariant checks run by simulation tests (parity after each RAID 5 write, etc.).
  sim::Invariants& invariants() { return invariants_; }
  // Verifies the parity of every RAID 5 row of every whole extent (payload required);
  // returns "" or a description of the first bad row.
  std::string check_all_parity() const { return raid_->check_parity(thin_->extents()); }

 private:
  // Whether a volume has no owner while a controller serves (a takeover or a boot under way).
  bool awaiting_owner() const;
  // After a plan that changed the media errors: an info event when writes cleared some.
  void note_media_changes();
  std::uint64_t media_changes_seen_ = 0;
  std::uint64_t media_cleared_seen_ = 0;
  DataPath(sim::Simulator& sim, const config::SystemPreset& preset, DataPathOptions options, EventSink events);
  sim::Status build(const pool::CapacityModel& capacity);
  sim::Status lose_drive(int drive, const char* how);
  // Marks the members on `drive` lost; returns whether any extent can be rebuilt.
  bool mark_members_lost(int drive);
  std::vector<raid::ChunkAddr> allocated_chunks_on(int drive) const;

  // raid::ScrubHost
  bool scrub_allowed() override { return pair_->online(); }
  void time_scrub(const raid::Plan& plan, const raid::Extent& e, std::function<void()> done) override;
  void scrub_event(Level level, const std::string& object, const std::string& message) override;

  sim::Simulator& sim_;
  config::SystemPreset preset_;
  DataPathOptions options_;
  EventSink events_;
  std::unique_ptr<Hardware> hw_;
  std::unique_ptr<Timing> timing_;
  std::unique_ptr<raid::DriveMembers> members_;
  std::unique_ptr<raid::Engine> raid_;
  std::unique_ptr<pool::ThinMap> thin_;
  VolumeTable volumes_;
  sim::Invariants invariants_;
  std::unique_ptr<ArrayContext> ctx_;
  std::unique_ptr<WriteCache> cache_;
  std::unique_ptr<ControllerPair> pair_;
  std::function<void(Id survivor, Id lost)> takeover_listener_;
  std::unique_ptr<ExtentMover> mover_;
  std::unique_ptr<Rebuilder> rebuild_;
  std::unique_ptr<IoOrchestrator> io_;
  std::unique_ptr<raid::Scrubber> scrubber_;
  sim::Rng fault_rng_;
};

}  // namespace afasim::controller
