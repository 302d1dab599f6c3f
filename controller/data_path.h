// controller::DataPath — the array's I/O engine: thin map, RAID, SSD timing, rebuild.
//
// One host I/O (DESIGN.md "One host write, end to end"): the owning controller's cores take
// its CPU cost (controller/cost_model.h), the thin map turns volume offsets into extents (a
// first write allocates one; no free extent → kNoSpace before anything is written), the
// RAID layout turns extent ranges into SSD operations (mirror pairs; RAID 5 full-stripe
// writes or read-modify-write with parity), the SSD and link models time them, and one
// event at the computed completion time runs the caller's callback. With a payload the
// bytes are real: RAID 5 parity is XOR of real data and a rebuild reconstructs it.
//
// Places for later issues: the QoS scheduler gates submit() (issue 5); the write-back cache
// and its mirror sit between the thin map and RAID (issue 6) — until then a write is
// written through, paying the mirror's CPU cost so that steady-state figures hold.
//
// Not thread-safe: belongs to the model thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/preset.h"
#include "controller/cost_model.h"
#include "controller/io.h"
#include "controller/objects.h"
#include "datapac/link.h"
#include "datapac/payload.h"
#include "datapac/ssd.h"
#include "pool/extent_allocator.h"
#include "raid/layout.h"
#include "sim/histogram.h"
#include "sim/invariants.h"
#include "sim/simulator.h"
#include "sim/station.h"

namespace afasim::controller {

struct DataPathOptions {
  datapac::PayloadKind payload = datapac::PayloadKind::kNone;
  std::string payload_dir;            // for kFile: one sparse file per SSD in here
  std::int64_t memory_page_bytes = 64 << 10;  // for kMemory
  // RAID geometry (docs/raid.md). RAID 5 width k+1 with k in [2, 8]; RAID 10 stripes an
  // extent over `raid10_pairs` mirror pairs; strips of `strip_bytes` (power of two, >= 4 KiB,
  // dividing the chunk).
  int raid5_data_members = 4;
  int raid10_pairs = 4;
  std::int64_t strip_bytes = 64 << 10;
  // Rebuild rate per failed SSD, bytes of rebuilt chunk per second. Assumption: the ISE
  // rebuilt into distributed spare in minutes to hours; 400 MB/s keeps a full 1.6 TB SSD's
  // data (1.14 TB) under an hour while leaving most back-end bandwidth to hosts.
  std::int64_t rebuild_bytes_per_second = 400'000'000;
  // SSDs start in steady state (the review preconditioned them), not fresh out of the box.
  bool preconditioned = true;
  CostModel cost;
};

// Per-volume counters, since the volume was attached.
struct VolumeIoStats {
  std::int64_t read_ops = 0, write_ops = 0, other_ops = 0;
  std::int64_t read_bytes = 0, write_bytes = 0;
  std::int64_t errors = 0;
  sim::Histogram read_latency_ns, write_latency_ns;
};

// Per-controller counters.
struct ControllerIoStats {
  std::int64_t host_ios = 0, backend_ops = 0, forwarded_ios = 0;
  std::int64_t read_bytes = 0, write_bytes = 0;
};

struct RebuildStatus {
  bool active = false;
  int drive = -1;                 // drive index being rebuilt (the failed one)
  std::int64_t total_bytes = 0;   // chunk bytes to rebuild
  std::int64_t done_bytes = 0;
  sim::Time started_ns = 0;
  double percent() const { return total_bytes == 0 ? 100.0 : 100.0 * done_bytes / total_bytes; }
};

class DataPath {
 public:
  // Where events go (the Array logs and persists them).
  using EventSink = std::function<void(Severity, std::string category, std::string object, std::string message)>;

  // Builds the SSDs, DataPacs and links of `preset`. kInvalidArgument for bad options;
  // kIoError if a payload file cannot be opened.
  static sim::Result<std::unique_ptr<DataPath>> create(sim::Simulator& sim, const config::SystemPreset& preset,
                                                       const pool::CapacityModel& capacity,
                                                       DataPathOptions options, EventSink events);

  const DataPathOptions& options() const { return options_; }
  std::int64_t extent_bytes(raid::RaidType type) const { return layout(type).extent_bytes(); }
  std::int64_t raw_bytes_per_extent(raid::RaidType type) const {
    return layout(type).member_count() * allocator_.chunk_bytes();
  }

  // --- Volumes ------------------------------------------------------------------------
  // Makes `v` known to the data path (thin map sized from its capacity), in pool `drives`
  // (drive indexes of the pool's DataPacs). With `allocate_fixed`, a fixed volume allocates
  // all its extents here; kNoSpace (and nothing allocated) when they do not fit. At boot the
  // Array attaches without allocating and restores the persisted extents instead.
  sim::Status attach_volume(const Volume& v, std::vector<int> pool_drives, bool allocate_fixed = true);
  // Puts back a persisted extent (boot). kConflict if its chunks are taken or it is known.
  sim::Status restore_extent(const ExtentRecord& record);
  // The volume's extents as records, by extent index.
  std::vector<ExtentRecord> extent_records(Id volume_id) const;
  // Called when the data path itself changes the extent map: a thin allocation on write
  // (kAllocated), a member moved or lost (kUpdated), an unmap (kReleased; `record` then only
  // names the volume and index). An error refuses an allocation (the write fails with it,
  // nothing written); for the others it is reported as an event.
  enum class ExtentChange { kAllocated, kUpdated, kReleased };
  using ExtentListener = std::function<sim::Status(ExtentChange change, const ExtentRecord& record)>;
  void set_extent_listener(ExtentListener listener) { extent_listener_ = std::move(listener); }
  // Grows the thin map to the new capacity (fixed volumes allocate the new extents).
  sim::Status grow_volume(Id volume_id, std::int64_t capacity_bytes);
  // Undoes a grow whose commit failed: releases the extents past `capacity_bytes`.
  void shrink_volume(Id volume_id, std::int64_t capacity_bytes);
  void set_preferred_controller(Id volume_id, Id controller);
  // Releases every extent of the volume and forgets it.
  void detach_volume(Id volume_id);
  std::int64_t allocated_extents(Id volume_id) const;
  VolumeState volume_state(Id volume_id) const;
  const VolumeIoStats* volume_stats(Id volume_id) const;
  // True where the volume's extent covering `offset` is allocated (thin map).
  bool is_allocated(Id volume_id, std::int64_t offset_bytes) const;

  // Pool accounting from the allocator (drives = the pool's drive indexes).
  std::int64_t raw_usable_bytes(const std::vector<int>& drives) const;
  std::int64_t raw_allocated_bytes(const std::vector<int>& drives) const;

  // --- I/O ----------------------------------------------------------------------------
  // Starts `io`; `done` runs at the simulated completion time (also for errors, which
  // complete after the controller's front-end cost). Never blocks.
  void submit(const HostIo& io, IoCallback done);

  // --- Faults (docs/faults.md) --------------------------------------------------------
  // Fails SSD `drive` (index): its chunks are lost, affected volumes go degraded or failed,
  // a rebuild into spare space starts. kNotFound / kConflict (already failed).
  sim::Status fail_drive(int drive);
  // Pulls SSD `drive` out of its DataPac: as fail_drive, and the slot is empty.
  sim::Status pull_drive(int drive);
  // Inserts a new SSD in the slot of a failed or pulled one: empty, zero wear, in service.
  sim::Status replace_drive(int drive);
  // Multiplies the SSD's latency (slow-SSD fault); 1.0 clears it.
  sim::Status set_drive_latency_multiplier(int drive, double multiplier);
  const RebuildStatus& rebuild_status() const { return rebuild_; }

  // --- Introspection ------------------------------------------------------------------
  int drive_count() const { return static_cast<int>(ssds_.size()); }
  const datapac::Ssd& ssd(int drive) const { return *ssds_[static_cast<std::size_t>(drive)]; }
  datapac::Ssd& ssd(int drive) { return *ssds_[static_cast<std::size_t>(drive)]; }
  int datapac_of(int drive) const { return drive_datapac_[static_cast<std::size_t>(drive)]; }
  const ControllerIoStats& controller_stats(Id controller) const {
    return controller_stats_[static_cast<std::size_t>(controller - 1)];
  }
  sim::Time controller_busy_ns(Id controller) const {
    return cores_[static_cast<std::size_t>(controller - 1)].busy_ns();
  }
  const pool::ExtentAllocator& allocator() const { return allocator_; }
  // Invariant checks run by simulation tests (parity after each RAID 5 write, etc.).
  sim::Invariants& invariants() { return invariants_; }
  // Verifies the parity of every RAID 5 row of every healthy extent (payload required);
  // returns "" or a description of the first bad row.
  std::string check_all_parity() const;

 private:
  struct Extent {
    raid::RaidType type = raid::RaidType::kRaid10;
    std::uint8_t member_count = 0;
    std::uint16_t missing = 0;  // bit i: member i's chunk is lost (awaiting rebuild)
    bool lost = false;          // more members lost than the layout tolerates
    Id volume_id = 0;
    std::int64_t index = 0;     // extent index within the volume
    std::array<pool::ChunkAddr, pool::kMaxMembers> members{};
    std::vector<pool::ChunkAddr> member_list() const {
      return {members.begin(), members.begin() + member_count};
    }
  };
  struct VolumeRuntime {
    Id id = 0;
    raid::RaidType raid_type = raid::RaidType::kRaid10;
    Provisioning provisioning = Provisioning::kThin;
    Id preferred_controller = 1;
    std::int64_t capacity_bytes = 0;
    std::vector<int> pool_drives;
    std::vector<std::uint32_t> map;  // extent id per volume extent, kNoExtent if none
    std::int64_t allocated = 0;
    std::int64_t lost_extents = 0;
    std::int64_t degraded_extents = 0;
    VolumeIoStats stats;
  };
  static constexpr std::uint32_t kNoExtent = UINT32_MAX;

  DataPath(sim::Simulator& sim, const config::SystemPreset& preset, const pool::CapacityModel& capacity,
           DataPathOptions options, EventSink events, std::vector<int> drive_datapacs);

  const raid::Layout& layout(raid::RaidType type) const;
  VolumeRuntime* find_volume(Id id);
  const VolumeRuntime* find_volume(Id id) const;
  Id owner_of(const VolumeRuntime& v) const;
  void emit(Severity s, std::string category, std::string object, std::string message);

  // Allocation: a new extent of `v` at `index` on `members` (already taken from the
  // allocator); allocate_extent chooses and takes them.
  std::uint32_t place_extent(VolumeRuntime& v, std::int64_t index, const std::vector<pool::ChunkAddr>& members,
                             std::uint16_t missing);
  sim::Result<std::uint32_t> allocate_extent(VolumeRuntime& v, std::int64_t index);
  void release_extent(std::uint32_t id);

  // Timing of one back-end operation from controller `c` on `addr`.
  sim::Time backend(sim::Time start, Id c, pool::ChunkAddr addr, std::int64_t offset_in_chunk,
                    std::int64_t length, datapac::SsdOp op);

  // The plan of one host I/O: its back-end operations (phase 0 runs first; phase 1 waits
  // for all of phase 0, e.g. RAID 5 writes after their reads) and its parity work. The
  // payload is read and written while planning; timing comes after, from the plan.
  struct Work {
    struct Op {
      pool::ChunkAddr addr;
      std::int64_t offset_in_chunk;
      std::int64_t length;
      datapac::SsdOp op;
      std::uint8_t phase;
    };
    std::vector<Op> ops;
    std::int64_t xor_bytes = 0;
    std::int64_t parity_rows = 0;
    void clear() {
      ops.clear();
      xor_bytes = 0;
      parity_rows = 0;
    }
  };
  // Times `w`'s operations from `start` on controller `c`; returns when the last completes.
  sim::Time run_plan(const Work& w, sim::Time start, Id c);
  sim::Status read_extent(Extent& e, std::int64_t offset, std::int64_t length, std::uint8_t* out, Work& w);
  sim::Status write_extent(Extent& e, std::int64_t offset, std::int64_t length, const std::uint8_t* data, Work& w);
  sim::Status write_raid5_row(Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                              const std::uint8_t* data, Work& w);
  // Reads `length` bytes of member `m` at `offset` into `out`, reconstructing from the other
  // members when it is lost (RAID 5) or using the mirror (RAID 10).
  sim::Status read_member(Extent& e, int m, std::int64_t offset, std::int64_t length, std::uint8_t* out, Work& w);
  sim::Status write_member(Extent& e, int m, std::int64_t offset, std::int64_t length, const std::uint8_t* data,
                           Work& w);
  bool has_payload() const { return options_.payload != datapac::PayloadKind::kNone; }
  std::string check_row_parity(const Extent& e, std::int64_t row) const;

  void complete(IoCallback& done, sim::Status status, sim::Time submit, sim::Time at);
  void do_trim(VolumeRuntime& v, const HostIo& io);

  // Faults and rebuild (rebuild.cpp).
  sim::Status lose_drive(int drive, const char* how);
  void update_extent_health(Extent& e, bool was_degraded, bool was_lost);
  void start_rebuild();
  void rebuild_next();
  // Picks the next extent to rebuild and its replacement chunk; false when none is left.
  bool next_rebuild_chunk();
  sim::Status rebuild_member(Extent& e, int m, pool::ChunkAddr replacement);
  sim::Time time_rebuild_piece(const Extent& e, int m, pool::ChunkAddr replacement, std::int64_t offset,
                               std::int64_t length);

  sim::Simulator& sim_;
  config::SystemPreset preset_;
  DataPathOptions options_;
  EventSink events_;
  std::vector<int> drive_datapac_;
  pool::ExtentAllocator allocator_;
  raid::Layout raid10_, raid5_, raid0_;

  std::vector<std::unique_ptr<datapac::Ssd>> ssds_;
  // backplane_[controller-1][datapac-1][0 = to SSDs, 1 = from SSDs]
  std::vector<std::array<std::vector<datapac::Link>, 2>> backplane_;
  std::vector<sim::Station> cores_;
  std::vector<std::vector<datapac::Link>> host_ports_in_, host_ports_out_;
  std::vector<datapac::Link> data_movers_;
  std::vector<datapac::Link> interconnect_;  // [0] A→B, [1] B→A
  std::vector<ControllerIoStats> controller_stats_;

  std::vector<Extent> extents_;
  std::vector<std::uint32_t> free_extent_ids_;
  // Indexed by volume id (ids are small and dense); null where no volume is attached. The
  // lookup is on every I/O's path, so no map.
  std::vector<std::unique_ptr<VolumeRuntime>> volumes_;

  RebuildStatus rebuild_;
  std::vector<int> rebuild_queue_;            // failed drives waiting for their rebuild
  std::vector<std::uint32_t> rebuild_extents_;  // extents left for the current drive
  // The chunk being rebuilt: its extent (and the identity it had, in case the slot is
  // reused), the lost member, where it goes, and how many pieces are done.
  struct RebuildChunk {
    std::uint32_t extent;
    Id volume_id;
    std::int64_t index;
    int member;
    pool::ChunkAddr replacement;
    std::int64_t piece;
  };
  std::optional<RebuildChunk> rebuild_chunk_;
  // Rebuild I/O moves in pieces of this size (assumption: the 1 MiB a RAID rebuild
  // typically issues per request, small enough to interleave with host I/O).
  static constexpr std::int64_t kRebuildPieceBytes = 1 << 20;
  int rebuild_progress_reported_ = 0;

  ExtentRecord record_of(const Extent& e) const;
  sim::Status notify_extent(ExtentChange change, const Extent& e);

  ExtentListener extent_listener_;
  Work work_;  // the plan being built (one at a time: the model is single-threaded)
  std::vector<std::uint8_t> scratch_[3];
  std::vector<std::uint8_t> zeros_;
  sim::Invariants invariants_;
};

}  // namespace afasim::controller
