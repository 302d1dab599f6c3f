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
// The write-back cache and its mirror sit between the thin map and RAID (docs/write-cache.md):
// a write's bytes go into its owner's cache and the peer's mirror and are acknowledged; they
// reach the SSDs at destage. Reads see the cache first. The two controllers are state
// machines (controller/controller_states.h, docs/controller-states.md) with volume
// ownership (ALUA), failover over heartbeats and DataPac reservations, power loss with a
// supercap-powered vault, and power restore replaying it. The QoS scheduler (qos/, docs/qos.md)
// sits in front of submit(), in the Array, and reads core_earliest_start() to keep the cores'
// queue short.
//
// Contents move when an operation is planned (at submission for host I/O, at issue for a
// destage); the time it takes is computed from the cost model and one event completes it.
// A fault between the two decides what the completion does: a controller's failure parks
// its in-flight I/O until a survivor owns the volume (the host's multipath retry), a power
// loss fails it with kUnavailable.
//
// Not thread-safe: belongs to the model thread.
#pragma once

#include <array>
#include <deque>
#include <unordered_map>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/preset.h"
#include "controller/controller_states.h"
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
  // Test seam: makes each SSD's payload store instead of `payload` (datapac/ssd.h).
  std::function<std::unique_ptr<datapac::PayloadStore>(const std::string&, std::int64_t)> payload_factory;
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
  CacheOptions cache;
  ControllerOptions controllers;
};

// Mains, supercaps and the inter-controller link, for GET /system. Energies in joules.
struct PowerStatus {
  bool mains_on = true;
  std::string state;                   // "on", "holdup" (on supercaps, vaulting), "off"
  int supercap_packs = 0;
  bool supercap_degraded = false;      // a pack is degraded: the cache stays write-through
  double energy_joules = 0;            // usable energy stored now
  double capacity_joules = 0;          // usable energy when fully charged (degraded: less)
  double vault_energy_joules = 0;      // what a vault of full caches needs
  bool charging = false;
  double holdup_seconds = 0;           // energy / hold-up load
  bool link_up = true;                 // inter-controller link
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

// Back-end traffic of extent moves (the wear leveler's copies), since the data path started.
struct ExtentMoveStats {
  std::int64_t started = 0;         // moves begun
  std::int64_t completed = 0;       // members switched to their new chunk
  std::int64_t aborted = 0;         // given up: a drive failed, the extent was freed or rebuilt
  std::int64_t bytes_read = 0;      // bytes read from source chunks (per-I/O and fast-forward)
  std::int64_t bytes_written = 0;   // bytes written to target chunks, copies and mirrored host writes
  std::int64_t backend_ops = 0;     // SSD commands the per-I/O copies issued
};

struct RebuildStatus {
  bool active = false;
  int drive = -1;                 // drive index being rebuilt (the failed one)
  std::int64_t total_bytes = 0;   // chunk bytes to rebuild
  std::int64_t done_bytes = 0;
  sim::Time started_ns = 0;
  // Time the rebuild spent paused (array off or no controller serving), not counted in its
  // duration; paused_since_ns is when the current pause began (-1: running).
  sim::Time paused_ns = 0;
  sim::Time paused_since_ns = -1;
  double percent() const { return total_bytes == 0 ? 100.0 : 100.0 * done_bytes / total_bytes; }
};

class WearLeveler;

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
  // Sets the volume's preferred controller; when that controller is active the volume moves
  // to it (an event).
  void set_preferred_controller(Id volume_id, Id controller);
  // The controller that owns (writes) the volume now, 0 while none does (takeover pending,
  // array off).
  Id owner(Id volume_id) const;
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

  // --- Controllers, cache and power (docs/controller-states.md, docs/write-cache.md) ---
  // Each fails with kConflict when it does not apply (a failed controller fails again, the
  // link is cut twice, power is restored while on...) and kNotFound for a controller id that
  // is not 1 or 2; on success the state changes (now, or through later events) and each
  // change is an event.
  sim::Status fail_controller(Id c);
  sim::Status restore_controller(Id c);
  sim::Status cut_link();
  sim::Status restore_link();
  sim::Status lose_power();
  sim::Status restore_power();
  sim::Status degrade_supercap();
  sim::Status restore_supercap();
  ControllerInfo controller_info(Id c) const;
  PowerStatus power_status() const;
  // Whether the array accepts host I/O (mains on and a controller active).
  bool online() const;
  // Whether the mains are on (false from power_loss to power_restore).
  bool mains_on() const { return mains_on_; }
  // Destages every dirty block now (for a clean shutdown); the destages complete through
  // events: run the simulator until dirty_bytes() is 0.
  void destage_all();
  std::int64_t dirty_bytes() const;
  std::int64_t write_cache_bytes() const { return cache_blocks_cap_ * kCacheBlock; }
  // Invariant: every volume has at most one controller that writes it (holds its
  // reservation) among those up. "" or the first violation.
  std::string check_one_writer() const;
  // The worst time from a controller's failure to its volumes being owned by the survivor
  // (docs/controller-states.md): the later of heartbeat detection and the reservation
  // lapsing, then the takeover work. 1.05 s with the defaults.
  sim::Time takeover_bound_ns() const {
    const ControllerOptions& o = options_.controllers;
    return std::max<sim::Time>(o.lease_ns, (o.heartbeat_misses + 1) * o.heartbeat_interval_ns) + o.takeover_ns;
  }
  static constexpr std::int64_t kCacheBlock = 4096;

  // --- Faults (docs/faults.md) --------------------------------------------------------
  // Fails SSD `drive` (index): its chunks are lost, affected volumes go degraded or failed,
  // a rebuild into spare space starts. kNotFound / kConflict (already failed).
  sim::Status fail_drive(int drive);
  // Pulls SSD `drive` out of its DataPac: as fail_drive, and the slot is empty.
  sim::Status pull_drive(int drive);
  // Inserts a new SSD in the slot of a failed or pulled one: empty, zero wear, in service.
  sim::Status replace_drive(int drive);
  // After a restart: queues a rebuild for every drive that extents are still missing
  // members on (a rebuild the stop interrupted, or one never started), and starts the
  // first. Returns how many drives were queued.
  int resume_rebuilds();
  // Multiplies the SSD's latency (slow-SSD fault); 1.0 clears it. kNotFound for an unknown
  // drive, kUnprocessable for a multiplier outside [kLatencyMultiplierMin, Max], kConflict
  // when the drive is failed or pulled (a slow-drive fault applies to a drive in service) or
  // already has that multiplier (restoring the speed of a drive at normal speed).
  sim::Status set_drive_latency_multiplier(int drive, double multiplier);
  // The range of a slow-SSD fault's multiplier (1 = normal speed). Assumption: three decades
  // cover the slow drives worth simulating (a drive retrying reads internally is 10-100x
  // slower); past that the drive is as good as failed.
  static constexpr double kLatencyMultiplierMin = 1.0;
  static constexpr double kLatencyMultiplierMax = 1000.0;
  const RebuildStatus& rebuild_status() const { return rebuild_; }

  // --- Extent moves (controller/extent_move.cpp, docs/wear-leveling.md) -----------------
  // Moves member `member` of extent `extent_id` to `target` (a free normal chunk the caller
  // took from the allocator on another SSD) in the background: `segment_bytes` at a time,
  // each segment read from the old chunk and written to the new one as back-end I/O, paced
  // to `bytes_per_second`. Host writes to the member while it moves land on both chunks for
  // the part already copied; reads use the old chunk. When the last segment is written the
  // member switches to the new chunk in one event, the change is persisted (kUpdated) and the
  // old chunk is trimmed and freed. A drive failure, an unmap or a rebuild of the extent
  // aborts the move (the new chunk is freed, the old one was never left). `done` runs with
  // true when the member switched, false when the move was aborted.
  // kNotFound for a free extent id; kConflict when the extent is already moving, degraded or
  // lost, or `target` is on an SSD that holds one of its members.
  using MoveDone = std::function<void(bool switched)>;
  sim::Status start_member_move(std::uint32_t extent_id, int member, pool::ChunkAddr target,
                                std::int64_t bytes_per_second, std::int64_t segment_bytes, MoveDone done);
  // The same move done at once, with no timing (fast-forward: no host I/O runs meanwhile).
  // The payload is copied and the member switched now; the caller accounts the copy's wear.
  sim::Status move_member_now(std::uint32_t extent_id, int member, pool::ChunkAddr target);
  const ExtentMoveStats& move_stats() const { return move_stats_; }
  // Bytes the per-I/O moves' copy segments wrote to SSD `drive` (by slot) since the data path
  // started; not the host writes mirrored onto a target. The wear leveler leaves them out of
  // a drive's measured sequential fraction: fast-forward counts the copies itself.
  std::int64_t move_copy_bytes_to(int drive) const {
    const auto d = static_cast<std::size_t>(drive);
    return d < move_copy_bytes_.size() ? move_copy_bytes_[d] : 0;
  }
  std::size_t moves_in_flight() const { return moves_.size(); }
  struct MoveInFlight {
    std::uint32_t extent_id = 0;
    int member = -1;
    pool::ChunkAddr from, to;
    std::int64_t copied_bytes = 0;
  };
  std::vector<MoveInFlight> moves() const;
  // Host bytes written to each member of extent `extent_id` since it was allocated (the
  // wear leveler's heat); nullptr for a free id.
  const std::array<std::int64_t, pool::kMaxMembers>* member_write_bytes(std::uint32_t extent_id) const;
  // Lets the wear leveler place new extents (ExtentAllocator::set_placement_score).
  void set_placement_score(pool::ExtentAllocator::Score score) { allocator_.set_placement_score(std::move(score)); }
  // A normal chunk on `drive` for a move target; kNoSpace when it has none, kUnavailable
  // when the drive is not in service.
  sim::Result<pool::ChunkAddr> allocate_move_target(int drive) { return allocator_.allocate_on(drive); }
  void release_chunk(pool::ChunkAddr chunk);
  // Called on the first host write after set_write_wakeup() armed it (the wear leveler
  // sleeps while no host writes come and wakes with the next one).
  void set_write_wakeup(std::function<void()> wakeup) { write_wakeup_ = std::move(wakeup); }
  void arm_write_wakeup() { write_wakeup_armed_ = true; }

  // --- Introspection ------------------------------------------------------------------
  int drive_count() const { return static_cast<int>(ssds_.size()); }
  const datapac::Ssd& ssd(int drive) const { return *ssds_[static_cast<std::size_t>(drive)]; }
  datapac::Ssd& ssd(int drive) { return *ssds_[static_cast<std::size_t>(drive)]; }
  int datapac_of(int drive) const { return drive_datapac_[static_cast<std::size_t>(drive)]; }
  const ControllerIoStats& controller_stats(Id controller) const {
    return controller_stats_[static_cast<std::size_t>(controller - 1)];
  }
  // When a core of `controller` could start new work, at the earliest (now when one is idle).
  // The QoS scheduler hands the controller more I/O only while this is close to now
  // (docs/qos.md "Knowing what the array can do now").
  sim::Time core_earliest_start(Id controller) const {
    return cores_[static_cast<std::size_t>(controller - 1)].earliest_start(sim_.now());
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
    // Member being moved by the wear leveler (extent_move.cpp), -1 when none.
    std::int8_t moving_member = -1;
    // Host bytes written to each member since allocation (wear leveler heat).
    std::array<std::int64_t, pool::kMaxMembers> written_bytes{};
    std::vector<pool::ChunkAddr> member_list() const {
      return {members.begin(), members.begin() + member_count};
    }
  };
  struct FifoEntry {
    std::int64_t block;
    std::uint64_t seq;  // matches the block's CacheBlock::queued while the entry is live
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
    // Controllers (bit c-1) that hold the volume's reservation and write it. One, or none
    // while a takeover is pending; two only when fencing is switched off (test-only).
    std::uint8_t claims = 0;
    // Cache: blocks in the order they became dirty (destage order) / clean (eviction order),
    // and counts of the volume's cached blocks. A block has at most one live entry, the one
    // whose `seq` is its CacheBlock::queued; older entries of the block are stale and skipped
    // when popped (a block cleaned and dirtied again goes to the back, it does not keep its
    // old place). Bounded: compact_fifo() drops stale entries when a FIFO grows past twice the
    // volume's cached blocks.
    std::deque<FifoEntry> dirty_fifo, clean_fifo;
    std::int64_t dirty_blocks = 0, cached_blocks = 0;
    sim::Time destage_until_ns = 0;  // when the last destage issued for it completes
    // The state last reported by an event (report_volume_state): one event per transition.
    VolumeState reported_state = VolumeState::kOnline;
  };
  // One 4 KiB block of a volume in the cache. Its owner's cache holds `data`; the peer holds
  // a copy of version `mirrored_version` (0: none). A copy is current when it equals
  // `version`; it goes stale when the owner changes the block while the peer is out of reach
  // (the change is then logged on the DataPacs, so a survivor skips stale copies).
  struct CacheBlock {
    std::shared_ptr<std::uint8_t[]> data;  // kCacheBlock bytes; null without payload
    std::uint64_t version = 0;
    std::uint64_t queued = 0;              // seq of its live FIFO entry (0: none)
    std::uint64_t mirrored_version = 0;
    std::uint64_t destaging_version = 0;   // version an in-flight destage writes (0: none)
    sim::Time destage_done_ns = 0;
    bool dirty = false;
  };
  // A block saved in a controller's vault flash at power loss.
  struct VaultRecord {
    Id volume_id;
    std::int64_t block;
    std::uint64_t version;
    std::shared_ptr<std::uint8_t[]> data;
  };
  // Host I/O waiting: for a volume's owner (takeover pending) — `execute` — or, already done,
  // for its acknowledgement to be sent by a live owner.
  struct Parked {
    HostIo io;
    bool execute = false;
    sim::Status status;
    IoCallback done;
    sim::Time submitted = 0;
  };
  // A write-back write acknowledged once the cache has room.
  struct Waiter {
    Id volume_id;
    std::int64_t new_blocks;
    sim::Time ack_ns;
    sim::Time submitted;
    IoCallback done;
  };
  struct ControllerRuntime {
    ControllerState state = ControllerState::kActive;
    std::uint64_t epoch = 1;        // changes when it fails or loses power
    sim::Time down_since_ns = 0;    // when it last stopped renewing its reservation
    CacheMode mode = CacheMode::kWriteBack;
    std::string mode_reason;
    std::int64_t dirty_blocks = 0, cached_blocks = 0;  // its own volumes'
    int destages = 0;                // destage operations in flight
    std::deque<Waiter> waiting;
    std::int64_t waiting_blocks = 0;
    std::vector<VaultRecord> vault;  // non-volatile
    sim::EventId timer;              // boot, sync or takeover
    std::size_t destage_cursor = 0;
  };
  struct DestageOp {
    Id controller;
    std::uint64_t epoch;
    Id volume_id;
    std::int64_t first_block;
    std::vector<std::uint64_t> versions;
  };
  static constexpr std::uint32_t kNoExtent = UINT32_MAX;

  DataPath(sim::Simulator& sim, const config::SystemPreset& preset, const pool::CapacityModel& capacity,
           DataPathOptions options, EventSink events, std::vector<int> drive_datapacs);

  const raid::Layout& layout(raid::RaidType type) const;
  VolumeRuntime* find_volume(Id id);
  const VolumeRuntime* find_volume(Id id) const;
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
  // A payload write failed or succeeded: raises the host-disk-full event on the first
  // kNoSpace and its all-clear on the next success (one pair per episode).
  sim::Status note_payload_write(sim::Status st, int drive);
  bool host_disk_full_ = false;
  std::string check_row_parity(const Extent& e, std::int64_t row) const;

  void complete(IoCallback& done, sim::Status status, sim::Time submit, sim::Time at);
  // Completes host I/O served by controller `c` at `at`, unless `c` fails or the power goes
  // first (then it is parked for a survivor, or fails with kUnavailable).
  void complete_on(Id c, const HostIo& io, IoCallback& done, sim::Status status, sim::Time submit, sim::Time at);
  void submit_at(const HostIo& io, IoCallback done, sim::Time submitted);
  void do_trim(VolumeRuntime& v, const HostIo& io, Id c);
  sim::Status allocate_range(VolumeRuntime& v, std::int64_t offset, std::int64_t length);
  // Writes [offset, +length) through to RAID (data null: zeros), keeping cached blocks
  // coherent; fills `w`.
  sim::Status write_through(VolumeRuntime& v, Id c, std::int64_t offset, std::int64_t length,
                            const std::uint8_t* data, Work& w);
  // Puts the write into the cache (owner's copy and peer's mirror); returns the fill reads in
  // `w` and the number of blocks that became dirty.
  sim::Status write_back(VolumeRuntime& v, Id c, const HostIo& io, Work& w, std::int64_t& new_blocks);
  // Overlays cached blocks on a read; true when every block of the range was cached.
  bool cache_read(VolumeRuntime& v, std::int64_t offset, std::int64_t length, std::uint8_t* out, bool copy);
  void flush_volume(VolumeRuntime& v, Id c, const HostIo& io, IoCallback& done, sim::Time now, sim::Time submitted);

  // Cache (cache.cpp).
  static std::uint64_t cache_key(Id volume, std::int64_t block) {
    return (static_cast<std::uint64_t>(volume) << 40) | static_cast<std::uint64_t>(block);
  }
  CacheBlock* cached(Id volume, std::int64_t block);
  void mark_dirty(VolumeRuntime& v, CacheBlock& b, std::int64_t block);
  void mark_clean(VolumeRuntime& v, CacheBlock& b, std::int64_t block);
  // Gives the block a new live entry at the back of the volume's dirty (or clean) FIFO.
  void enqueue(VolumeRuntime& v, CacheBlock& b, std::int64_t block, bool dirty);
  // Drops the stale entries of `fifo` (they would be skipped anyway) once it holds more
  // than twice the volume's cached blocks: the FIFOs stay O(cached blocks), amortized O(1).
  void compact_fifo(VolumeRuntime& v, std::deque<FifoEntry>& fifo, bool dirty);
  void drop_block(VolumeRuntime& v, std::int64_t block, Id c);
  void drop_range(VolumeRuntime& v, std::int64_t first_block, std::int64_t end_block, Id c);
  void evict_clean(Id c);
  void pump_destage(Id c);
  // Starts one destage of controller `c`'s dirty data (the run from the oldest dirty block
  // of its next volume); returns its completion time, or nullopt when nothing is left.
  std::optional<sim::Time> destage_one(Id c, VolumeRuntime* only = nullptr);
  std::optional<sim::Time> destage_run(Id c, VolumeRuntime& v, std::int64_t block);
  void destage_done(std::size_t op);
  void admit_waiters(Id c);
  bool mirror_reachable(Id owner) const;
  void check_writer(const VolumeRuntime& v, Id c);

  // Controllers (controllers.cpp).
  ControllerRuntime& ctl(Id c) { return ctl_[static_cast<std::size_t>(c - 1)]; }
  const ControllerRuntime& ctl(Id c) const { return ctl_[static_cast<std::size_t>(c - 1)]; }
  static Id peer_of(Id c) { return c == 1 ? 2 : 1; }
  std::string ctl_name(Id c) const { return std::string(1, static_cast<char>('A' + c - 1)); }
  void transition(Id c, ControllerTrigger trigger, const std::string& why);
  void controller_down(Id c, const std::string& why);
  void schedule_peer_lost(Id survivor, Id lost, sim::Time stopped_ns);
  void peer_lost(Id survivor, Id lost);
  void takeover(Id survivor, Id lost);
  void claim(VolumeRuntime& v, Id c, const std::string& why);
  void start_boot(Id c);
  void boot_complete(Id c);
  void start_sync(Id c);
  void sync_complete(Id c);
  void become_active(Id c);
  void vault_done(Id c, bool ok, std::vector<VaultRecord> records, std::int64_t bytes);
  void update_cache_modes(const std::string& why);
  // The cache mode controller `c` should be in now and its reason, given the energy a vault
  // needs (`need_joules`).
  std::pair<CacheMode, std::string> cache_mode_of(Id c, double need_joules) const;
  void release_parked();
  void power_off_done();
  void recount_cache();
  void settle_energy() const;
  double vault_energy_joules() const;
  double power_status_capacity() const;
  bool serving(Id c) const {
    const ControllerState s = ctl(c).state;
    return s == ControllerState::kActive || s == ControllerState::kSyncing;
  }

  // Faults and rebuild (rebuild.cpp).
  sim::Status lose_drive(int drive, const char* how);
  void update_extent_health(Extent& e, bool was_degraded, bool was_lost);
  // Emits a `volume` event when the volume's state differs from the one last reported
  // (online, degraded, failed), `why` saying what changed it.
  void report_volume_state(VolumeRuntime& v, const std::string& why);
  // Pauses the rebuild in progress (an event, once per pause); resume_rebuild continues it.
  void pause_rebuild(const std::string& why);
  void resume_rebuild();
  // Runs rebuild_next() at `at` unless the rebuild is paused (or paused and resumed) first.
  void schedule_rebuild_next(sim::Time at);
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
  bool rebuild_paused_ = false;  // the array lost power mid-rebuild
  std::uint64_t rebuild_epoch_ = 0;  // bumped at each resume: older scheduled pieces are void

  // Extent moves (extent_move.cpp).
  struct ExtentMove {
    std::uint32_t extent = 0;
    int member = -1;
    pool::ChunkAddr from, to;
    std::int64_t copied_bytes = 0;  // [0, copied) of the new chunk holds the member's bytes
    std::int64_t bytes_per_second = 0;
    std::int64_t segment_bytes = 0;
    sim::EventId next;
    MoveDone done;
  };
  ExtentMove* find_move(std::uint32_t extent_id);
  sim::Status check_move(std::uint32_t extent_id, int member, pool::ChunkAddr target) const;
  void move_step(std::uint32_t extent_id);
  void finish_move(std::uint32_t extent_id);
  // Gives up the move of `extent_id` (no-op when it has none): frees the target chunk.
  void abort_move(std::uint32_t extent_id, const char* why);
  void abort_moves_on_drive(int drive);
  // write_member's half for a moving member: the part of the write below the copy mark also
  // goes to the new chunk.
  sim::Status write_move_target(Extent& e, std::int64_t offset, std::int64_t length, const std::uint8_t* src,
                                Work& w);
  std::uint32_t id_of(const Extent& e) const { return static_cast<std::uint32_t>(&e - extents_.data()); }
  sim::Status copy_chunk_payload(pool::ChunkAddr from, pool::ChunkAddr to, std::int64_t offset, std::int64_t length);
  void wake_writers() {
    if (write_wakeup_armed_ && write_wakeup_) {
      write_wakeup_armed_ = false;
      write_wakeup_();
    }
  }
  std::vector<ExtentMove> moves_;  // in flight; bounded by the leveler's max_moves_in_flight
  ExtentMoveStats move_stats_;
  std::vector<std::int64_t> move_copy_bytes_;  // by drive: move_copy_bytes_to()
  std::function<void()> write_wakeup_;
  bool write_wakeup_armed_ = false;
  friend class WearLeveler;

  ExtentRecord record_of(const Extent& e) const;
  sim::Status notify_extent(ExtentChange change, const Extent& e);

  ExtentListener extent_listener_;
  // Cache and controllers.
  std::unordered_map<std::uint64_t, CacheBlock> cache_;
  std::int64_t cache_blocks_cap_ = 0;
  std::uint64_t version_counter_ = 0;
  std::uint64_t fifo_seq_ = 0;  // last FifoEntry::seq handed out
  std::array<ControllerRuntime, 2> ctl_;  // A, B (the model is a dual-controller array)
  std::vector<DestageOp> destage_ops_;
  std::vector<std::size_t> free_destage_ops_;
  std::deque<Parked> parked_;
  static constexpr std::size_t kMaxParked = 65536;
  std::uint64_t power_epoch_ = 1;
  bool mains_on_ = true;
  bool link_up_ = true;
  bool supercap_degraded_ = false;
  mutable double energy_joules_ = 0;
  mutable sim::Time energy_at_ns_ = 0;
  bool charging_ = false;
  sim::Time power_lost_ns_ = 0;
  sim::EventId charge_event_;
  std::unordered_map<std::uint64_t, std::uint64_t> replayed_version_;  // during a replay
  Work destage_work_;
  std::vector<std::uint8_t> destage_buf_;
  Work work_;  // the plan being built (one at a time: the model is single-threaded)
  std::vector<std::uint8_t> scratch_[3];
  std::vector<std::uint8_t> zeros_;
  sim::Invariants invariants_;
};

}  // namespace afasim::controller
