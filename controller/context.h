// What the parts of the data path share (controller/data_path.h builds and wires them): the
// options, the hardware, the RAID engine, the thin map, the controller-side state of each
// attached volume, the invariant checks and the event sink.
//
// Not thread-safe: the model thread's.
#pragma once

#include <cstdint>
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/preset.h"
#include "controller/controller_states.h"
#include "controller/cost_model.h"
#include "controller/hardware.h"
#include "controller/lost_blocks.h"
#include "controller/timing.h"
#include "controller/objects.h"
#include "datapac/payload.h"
#include "pool/thin_map.h"
#include "raid/engine.h"
#include "raid/scrub.h"
#include "sim/invariants.h"
#include "sim/id_table.h"
#include "sim/ring.h"
#include "sim/simulator.h"

namespace afasim::controller {

struct DataPathOptions {
  datapac::PayloadKind payload = datapac::PayloadKind::kNone;
  std::string payload_dir;            // for kFile: one sparse file per SSD in here
  bool payload_must_exist = false;    // for kFile: the files held data before (datapac::SsdOptions)
  std::int64_t memory_page_bytes = 64 << 10;  // for kMemory
  datapac::PayloadWrapper wrap_payload;       // tests: wraps each SSD's store (fault injection)
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
  // The performance model's parameters (docs/performance-model.md): null loads
  // config/calibration/<system>.json, or ise-860-g3's for a system without its own (the G3
  // models share their controllers; only the DataPacs differ).
  std::shared_ptr<const perf::ModelParameters> model;
  // A config folder (--config-dir) whose calibration/ is searched first, the same two names
  // in it, then the embedded ones; empty: the embedded ones. Array::open sets it from the
  // catalog's folder.
  std::string calibration_dir;
  // Error replies, FLUSH replies, trims, vault replay and QoS admission's prices still use the
  // analytic cost model (docs/performance-model.md).
  CostModel cost;
  CacheOptions cache;
  ControllerOptions controllers;
  raid::ScrubOptions scrub;  // background scrub (docs/raid.md "Scrub"), off by default
};

// Per-volume counters, since the volume was attached, counted as the I/O enters the data
// path. No latency: a volume's latency is telemetry's (PerfCounters, while telemetry runs and
// the QoS gate's completion feeds it: totals and a histogram per volume, docs/observability.md).
// A histogram here, on every I/O's completion, cost a read of one volume among 1,000 two lines
// from DRAM (its head and one of 12 KiB of buckets): ~300 ns of a read's ~3 µs under perf
// (docs/performance.md), for a figure nothing reported.
struct VolumeIoStats {
  // A read's counters first, beside the volume's id and thin map (VolumeRuntime).
  std::int64_t read_ops = 0, read_bytes = 0;
  std::int64_t write_ops = 0, other_ops = 0, write_bytes = 0;
  std::int64_t errors = 0;
};

// One volume's place in the write cache's destage and eviction order (WriteCache).
struct CacheFifoEntry {
  std::int64_t block;
  std::uint64_t seq;  // matches the block's CacheBlock::queued while the entry is live
};
struct CacheVolume {
  std::int64_t dirty_blocks = 0, cached_blocks = 0;  // first: a host read tests cached_blocks
  int destages_in_flight = 0;  // destage operations of its blocks under way (a FLUSH waits for 0)
  // Dirty blocks whose last destage failed (the payload write: a full host disk), and why; a
  // FLUSH fails while there are any, and the blocks are retried.
  std::int64_t failed_blocks = 0;
  sim::Code destage_error = sim::Code::kOk;
  // Blocks in the order they became dirty (destage order) / clean (eviction order). A block
  // has at most one live entry, the one whose `seq` is its CacheBlock::queued; older entries
  // are stale and skipped when popped. Bounded: stale entries are dropped when a FIFO grows
  // past twice the volume's cached blocks.
  sim::Ring<CacheFifoEntry> dirty_fifo, clean_fifo;
};

// The controller side of one attached volume.
//
// Laid out for a host read of a volume among many, which finds it cold: the id, the thin map,
// the owners' claims and the read counters in the first cache line, the write cache's count of
// the volume's blocks (tested by a read while the cache holds any block) in the second: one or
// two lines per read, where the old order spread them over four or five.
struct alignas(64) VolumeRuntime {
  Id id = 0;
  pool::ThinVolume* thin = nullptr;  // its thin map (owned by the pool::ThinMap)
  // Controllers (bit c-1) that hold the volume's reservation and write it (ControllerPair):
  // ControllerPair::owner reads it on every I/O. One, or none while a takeover is pending;
  // two only when fencing is switched off.
  std::uint8_t claims = 0;
  // The state last reported by an event: one event per transition.
  VolumeState reported_state = VolumeState::kOnline;
  std::int64_t reported_degraded_members = 0;  // thin->degraded_members when last reported
  VolumeIoStats stats;
  CacheVolume cache;
  Id preferred_controller = 1;
  raid::RaidType raid_type() const { return thin->raid_type; }
};

// Attached volumes by id (the lookup is on every I/O's path; sim::IdTable keeps the memory to
// the ids in use, however far the id counter has gone).
class VolumeTable {
 public:
  VolumeRuntime* find(Id id) { return id > 0 ? volumes_.find_in_use(static_cast<std::uint64_t>(id)) : nullptr; }
  const VolumeRuntime* find(Id id) const { return const_cast<VolumeTable*>(this)->find(id); }
  // Where volume `id`'s runtime is or would be, for a prefetch (null: no id of its page in
  // use); reads nothing of the volume's own.
  const VolumeRuntime* address(Id id) const { return id > 0 ? volumes_.find(static_cast<std::uint64_t>(id)) : nullptr; }
  VolumeRuntime& add(Id id) {
    VolumeRuntime& v = volumes_.acquire(static_cast<std::uint64_t>(id));
    v = VolumeRuntime{};
    v.id = id;
    return v;
  }
  void remove(Id id) { volumes_.release(static_cast<std::uint64_t>(id)); }
  // f(VolumeRuntime&) for each attached volume, by id.
  template <typename F>
  void for_each(F&& f) {
    volumes_.for_each([&](std::uint64_t, VolumeRuntime& v) { f(v); });
  }
  template <typename F>
  void for_each(F&& f) const {
    volumes_.for_each([&](std::uint64_t, const VolumeRuntime& v) { f(v); });
  }
  // The first attached volume, by id from `start` round to `start` - 1, for which
  // pred(VolumeRuntime&) is true; null if none (a round-robin cursor's walk).
  template <typename Pred>
  VolumeRuntime* find_cyclic(std::size_t start, Pred&& pred) {
    const std::uint64_t id = volumes_.find_cyclic(start, [&](std::uint64_t, VolumeRuntime& v) { return pred(v); });
    return id == decltype(volumes_)::kNone ? nullptr : volumes_.find_in_use(id);
  }

 private:
  // The runtimes in the table's pages (a lookup is the page and the entry, no pointer between).
  sim::IdTable<VolumeRuntime> volumes_;
};

using EventSink = std::function<void(Severity, std::string category, std::string object, std::string message)>;

struct ArrayContext {
  sim::Simulator& sim;
  const config::SystemPreset& preset;
  const DataPathOptions& options;
  Hardware& hw;
  Timing& timing;
  raid::Engine& raid;
  pool::ThinMap& thin;
  VolumeTable& volumes;
  sim::Invariants& invariants;
  EventSink events;
  // Runs after every executed plan (the extent mover counts the bytes a plan mirrored onto a
  // move target and the wear leveler wakes on member writes).
  std::function<void(const raid::Plan&)> after_execute;
  // Volume data the array lost, by volume (controller/lost_blocks.h).
  LostBlocks lost_data;
  // Saves the array's hardware state now if it changed (the Array sets it): a FLUSH or a FUA
  // write that made lost data readable again makes that durable before its reply.
  std::function<void()> save_state;

  // What on the host's file system a write went to: the SSDs' payload files, or afasim.db (a
  // thin extent's map entry). Each has its own episode: a payload write that succeeds says
  // nothing of the database, which may still be full (review, round 19: one flag for both
  // raised a critical/all-clear pair at every switch between the two kinds of write).
  enum class HostFile { kPayload, kStateDb };
  // True from a write to that file that failed because the host's file system is full until
  // the next one that succeeds (one event each way, issue 14 item 6).
  mutable std::array<bool, 2> host_disk_full{};
  // The last ENOSPC of each host file, for note_host_disk's debounce.
  mutable std::array<sim::Time, 2> host_disk_enospc_ns{};

  // Moves `plan`'s bytes (raid::Engine::execute) and tells after_execute. A kNoSpace from
  // the payload (the host's file system is full, not the SSD) raises one critical event per
  // episode, and its all-clear on the next plan that writes.
  // Inline, its aftermath out of line: a host read's plan (no writes) that the engine ran
  // cleanly has nothing to tell. always_inline: GCC kept it out of line, 23 instructions a
  // read for a call that tests three fields.
  [[gnu::always_inline]] sim::Status execute(raid::Plan& plan) const {
    sim::Status st = raid.execute(plan);
    if (plan.member_writes || plan.move_target_bytes > 0 || !st.is_ok()) after_plan(plan, st);
    return st;
  }
  // execute()'s aftermath: after_execute for a plan that wrote, the host disk's episode.
  void after_plan(const raid::Plan& plan, const sim::Status& st) const;
  void note_host_disk(const sim::Status& st, HostFile file = HostFile::kPayload) const;

  void emit(Severity s, std::string category, std::string object, std::string message) const {
    if (events) events(s, std::move(category), std::move(object), std::move(message));
  }
  bool has_payload() const { return options.payload != datapac::PayloadKind::kNone; }
  std::int64_t extent_bytes(raid::RaidType t) const { return thin.extent_bytes(t); }
  static std::string controller_name(Id c) { return std::string(1, static_cast<char>('A' + c - 1)); }
  // The object an event names: "controller/1"; "drive/7" for the 0-based drive 6.
  static std::string controller_object(Id c) { return "controller/" + std::to_string(c); }
  static std::string drive_object(int drive) { return "drive/" + std::to_string(drive + 1); }
  static Id peer_of(Id c) { return c == 1 ? 2 : 1; }
};

// The volume's state from its extents (online, degraded, failed).
inline VolumeState volume_state_of(const pool::ThinVolume& v) {
  switch (v.health()) {
    case pool::DataHealth::kFailed: return VolumeState::kFailed;
    case pool::DataHealth::kDegraded: return VolumeState::kDegraded;
    case pool::DataHealth::kOnline: return VolumeState::kOnline;
  }
  return VolumeState::kOnline;
}

// Emits a `volume` event when `v`'s state differs from the one last reported, `why` saying
// what changed it (`rebuilding`: a rebuild is under way, for the degraded message).
void report_volume_state(const ArrayContext& ctx, VolumeRuntime& v, const std::string& why, bool rebuilding);

}  // namespace afasim::controller
