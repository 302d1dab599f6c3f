// qos::Scheduler — per-volume minimum, maximum and burst IOPS (DESIGN.md "QoS semantics",
// docs/qos.md): which queued host I/O goes to the array next, and when.
//
// Each volume has a bounded FIFO queue. A volume belongs to one *resource* (a controller: the
// cores that serve it). For each resource the scheduler keeps the array's own queue short —
// it hands work over only while the Dispatcher says the resource can start it at once — and
// picks, each time there is room, in two phases after mClock (Gulati, Merchant, Varman,
// OSDI 2010):
//   1. reservation: among volumes with a min_iops whose reservation tag R is due (R ≤ now),
//      the earliest R. R advances by cost/min per I/O served in this phase, so a volume that
//      wants its min gets it whatever the others do, as long as admission control kept the
//      sum of reservations within what the resource can do.
//   2. spare capacity: the oldest queued request (first come, first served) among volumes
//      their limit lets through. Work-conserving: nothing waits while the resource has room
//      and some volume is under its limit.
// A volume whose limit tag L is in the future is *throttled* until L. L paces it at max_iops
// (cost/max per I/O); with burst credit it may run ahead of that pace up to burst_iops (cost/
// burst per I/O), each I/O ahead of the max pace spending cost/(burst − max) seconds of credit
// (SolidFire: credit is spent at (actual − max) I/Os per second). Credit accrues, up to
// burst_credit_max_ns, for the time the volume's max allowance goes unused while it has
// nothing queued: an idle volume earns one second per second (docs/qos.md "Burst credit").
//
// Times come from the Simulator; decisions happen inside submit(), complete(), kick(),
// update_volume() and the scheduler's own wake-up events (at most one pending per resource).
// Deterministic: ties break by volume id and arrival order, never by address or hash.
//
// Not thread-safe: belongs to the model thread, like the Array that owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "qos/cost.h"
#include "sim/id_table.h"
#include "sim/ring.h"
#include "sim/simulator.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::qos {

using VolumeId = std::int64_t;

// Largest IOPS value a setting may hold (the array's kMaxIops).
inline constexpr std::int64_t kMaxSettingIops = 100'000'000;
// The largest share of a resource one volume may be given, ppm (add_volume's share_ppm; a
// whole resource is kPartsPerMillion, qos/cost.h; admission control's "everything and more"
// for a RAID type the resource cannot guarantee is 2 × 10^6).
inline constexpr std::int64_t kShareMaxPpm = 1'000 * kPartsPerMillion;

// A volume's effective QoS in 4 KiB IOPS (qos/cost.h). nullopt: no reservation (min), no
// limit (max), no burst above max (burst). 0 is a value: min 0 reserves nothing, max 0 holds
// every I/O of the volume until the setting changes.
struct Settings {
  std::optional<std::int64_t> min_iops;
  std::optional<std::int64_t> max_iops;
  std::optional<std::int64_t> burst_iops;
  bool operator==(const Settings&) const = default;
};

// ok, or kInvalidArgument naming the rule broken: each value in [0, kMaxSettingIops];
// min ≤ max; burst needs max; max ≤ burst.
sim::Status validate(const Settings& settings);

struct SchedulerOptions {
  // Burst credit a volume may hold, in seconds of running at its burst_iops. SolidFire's
  // burstTime (fixed at 60 s there). Range [0, 1 day].
  sim::Time burst_credit_max_ns = 60 * sim::kSecond;
  // Requests one volume may have waiting in the scheduler; a request beyond it is refused
  // (kUnavailable, the SCSI "task set full" of a real array). Assumption: 16,384 is far above
  // any host's queue depth for one LUN (SCSI initiators use 32-256; NBD clients a few hundred).
  // Range [1, 1 << 22].
  std::int64_t queue_depth_max = 16'384;
  // How far behind now a backlogged volume's reservation tag may be: the reservation service
  // it missed while the gate was closed (a few tens of µs at a time) that it catches up,
  // ahead of every volume's spare share. Bounded so that a volume starved for long (a
  // controller's takeover, a second of destage) does not then take every dispatch until its
  // tags reach now. Assumption: 1 ms, 50 requests at a 50,000 IOPS reservation, far above
  // the gate's pauses. Range [0, 1 s].
  sim::Time reservation_catch_up_ns = sim::kMillisecond;
  // Share of a resource's dispatched cost that the spare phase keeps, percent, while
  // reservations are due at every pick: when they cannot all be met (a controller failover
  // put both controllers' reservations on one; I/O the cost curve undercharges), the
  // reservation phase would otherwise take every dispatch and a volume without a reservation
  // would get no I/O at all (a review, 2026-12-06: 0 IOPS for 8 s after a failover). The
  // Array sets it to 100 − reservable_percent: what admission control holds back from
  // reservations is what the spare phase is sure to get. 0: strict priority (mClock). Range
  // [0, 99].
  int spare_floor_percent = 10;
};

// What a resource can take now. Implemented by the owner of the data path (the Array).
class Dispatcher {
 public:
  virtual ~Dispatcher() = default;
  // The earliest time, >= now, at which `resource` can start more work: now when it can take
  // work at once; sim::kTimeMax when only a completion can make room (the dispatcher then calls
  // Scheduler::kick). Must not call back into the Scheduler.
  virtual sim::Time ready_time(int resource) = 0;
  // Starts the request the scheduler picked. Must not call back into the Scheduler (the
  // completion comes later, through Scheduler::complete).
  // `resource`: the volume's resource now (resource_of() of the request's volume).
  virtual void dispatch(std::uint64_t cookie, int resource) = 0;
};

// What the API shows of a volume's QoS now.
struct VolumeStatus {
  std::int64_t current_iops = 0;  // I/Os completed in the last whole simulated second
  sim::Time throttled_ns = 0;     // total time held back by its max / burst limit
  // Seconds of burst the volume could run at burst_iops now; 0 when it has no burst above max.
  sim::Time burst_credit_ns = 0;
  std::int64_t queued_ios = 0;  // waiting in the scheduler now
  std::int64_t dispatched_ios = 0;
  std::int64_t reservation_ios = 0;  // dispatched in the reservation phase
  std::int64_t burst_ios = 0;        // dispatched ahead of the max pace, on burst credit
  // The reservation held now, 4 KiB IOPS: min_iops, or less in proportion while the
  // resource's shares add up to more than it can guarantee (add_volume). nullopt: no min.
  std::optional<std::int64_t> min_iops_held;
  std::int64_t completed_ios = 0;
  double burst_credit_seconds() const { return sim::to_seconds(burst_credit_ns); }
};

struct SchedulerCounters {
  std::int64_t decisions = 0;  // requests dispatched
  std::int64_t wakeups = 0;    // the scheduler's own timer events run
  std::int64_t refused_queue_full = 0;
};

class Scheduler {
 public:
  // kInvalidArgument for options out of range or resource_count < 1.
  // REQUIRES: sim and dispatcher outlive the scheduler.
  static sim::Result<std::unique_ptr<Scheduler>> create(sim::Simulator& sim,
                                                        SchedulerOptions options,
                                                        int resource_count, Dispatcher& dispatcher);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler();

  const SchedulerOptions& options() const { return options_; }
  int resource_count() const { return static_cast<int>(resources_.size()); }

  // Makes volume `id` known, served by `resource`, with `settings`. Its clocks start now: an
  // idle volume earns burst credit from now on. `share_ppm`: the share of what its resource
  // can guarantee to reservations that the volume's min_iops takes, in parts per million
  // (admission control's figure, qos::share_ppm; 0 when not known, as for a volume without a
  // min). When the shares of the volumes a resource serves add up to more than 10^6 (a
  // failover put both controllers' reservations on one), each of their reservations is held
  // at min_iops × 10^6 / that sum: in proportion, and together what the resource can
  // guarantee. A volume with a min and a share of 0 is held at its min_iops.
  // kConflict if known; kInvalidArgument for a bad id (< 1 or ≥ 2^31), resource, settings or
  // share (outside 0..kShareMaxPpm).
  sim::Status add_volume(VolumeId id, int resource, const Settings& settings,
                         std::int64_t share_ppm = 0);
  // New settings and share, in force for the next decision (a waiting volume's pending
  // interval is rescaled to the new rate). kNotFound / kInvalidArgument.
  sim::Status update_volume(VolumeId id, const Settings& settings, std::int64_t share_ppm = 0);
  // The volume is now served by `resource` (ALUA owner changed). kNotFound / kInvalidArgument.
  sim::Status move_volume(VolumeId id, int resource);
  // Forgets the volume. Returns the cookies still queued, oldest first, for the caller to
  // fail; requests already dispatched complete as usual (complete() then ignores them).
  std::vector<std::uint64_t> remove_volume(VolumeId id);
  // Empties the volume's queue and returns its cookies, oldest first, for the caller to fail
  // (power loss: I/O not yet acknowledged fails). The volume stays known with its settings and
  // clocks. Empty for an unknown volume.
  std::vector<std::uint64_t> drain_volume(VolumeId id);
  bool has_volume(VolumeId id) const { return find(id) != nullptr; }
  std::optional<Settings> settings(VolumeId id) const;
  std::optional<std::int64_t> share_ppm(VolumeId id) const;
  std::optional<int> resource_of(VolumeId id) const;
  // A request of volume `id` is coming (IoOrchestrator::hint_read): starts loading the line of
  // its state submit() writes. Nothing for an unknown volume. Speed only.
  void prefetch(VolumeId id) const;

  // Queues a request of `cost_units` (qos/cost.h) for volume `id` and dispatches what may go
  // now (possibly this one, before submit returns). `resource`: the one that serves the volume
  // now, or kSameResource; a volume filed on another moves there first (as move_volume), so
  // that a caller who knows the owner needs no lookup of its own. kNotFound for an unknown
  // volume (nothing done); kUnavailable when the volume's queue holds queue_depth_max requests
  // (nothing queued). REQUIRES: cost_units >= 1; resource is kSameResource or in
  // [0, resource_count()).
  static constexpr int kSameResource = -1;
  sim::Status submit(VolumeId id, std::uint64_t cookie, std::int64_t cost_units, int resource = kSameResource);
  // A request of volume `id` dispatched earlier completed now: counts it for current_iops.
  // Unknown (removed) volumes are ignored.
  void complete(VolumeId id);
  // `resource` has room again (after ready_time returned kTimeMax): dispatch what may go.
  void kick(int resource);

  // The volume's QoS figures now; nullopt for an unknown volume.
  std::optional<VolumeStatus> status(VolumeId id) const;
  const SchedulerCounters& counters() const { return counters_; }
  // Requests waiting in the scheduler, all volumes.
  std::int64_t queued_total() const { return queued_total_; }
  // Volumes served by `resource` with a reservation (min_iops above 0). While there is none,
  // the resource needs no short queue of its own for the reservation phase to act on.
  // REQUIRES: 0 <= resource < resource_count().
  std::int64_t reserving_volumes(int resource) const {
    return resources_[static_cast<std::size_t>(resource)].reserving_volumes;
  }
  // Sum of the shares (add_volume's share_ppm) of the volumes with a min that `resource`
  // serves now; above 10^6 their reservations are held in proportion.
  // REQUIRES: 0 <= resource < resource_count().
  std::int64_t reserved_share_ppm(int resource) const {
    return resources_[static_cast<std::size_t>(resource)].share_ppm;
  }

 private:
  struct Request {
    std::uint64_t cookie;
    std::uint64_t sequence;  // global arrival order: the spare phase serves the oldest first
    std::int64_t cost_units;
    sim::Time arrival;       // when it was submitted: its reservation tag is due no earlier
  };
  // Bound on a resource's spare_deficit (cost units × 100): 64 4 KiB I/Os' worth. Low enough
  // that a resource whose spare phase ran far above its floor (the usual case) owes it again
  // within ~640 reservation-phase I/Os once reservations take every pick; high enough that one
  // large I/O does not cross it in one step of a small one.
  static constexpr std::int64_t kSpareDeficitBound = 100 * 64 * kCostUnitsPerIo;
  enum class State : std::uint8_t { kIdle, kReady, kLimited };
  enum class Phase : std::uint8_t { kReservation, kSpare };
  struct Volume;
  struct HeapEntry {
    std::int64_t key;  // a time (R or L tag) or an arrival sequence
    VolumeId id;
    std::uint32_t version;
    bool operator>(const HeapEntry& o) const { return key != o.key ? key > o.key : id > o.id; }
  };
  using MinHeap = std::priority_queue<HeapEntry, std::vector<HeapEntry>, std::greater<HeapEntry>>;
  struct Resource {
    MinHeap ready;        // ready volumes by their head's arrival sequence
    MinHeap reservation;  // ready volumes with a min, by their head's R tag
    MinHeap limited;      // throttled volumes by their head's L tag
    sim::EventId wake;
    sim::Time wake_time = sim::kTimeMax;
    std::int64_t reserving_volumes = 0;  // volumes with a min_iops above 0
    std::int64_t share_ppm = 0;          // their shares (add_volume), summed
    // What the spare phase is owed, in cost units × 100: + floor × cost per reservation-phase
    // dispatch, − (100 − floor) × cost per spare-phase one, from −kSpareDeficitBound to
    // kSpareDeficitBound plus the last I/O's share. Above 0, pick() serves the oldest volume
    // without a reservation even when a reservation is due. Starts at the lower
    // bound: the floor acts only once reservations have taken ~64 I/Os' worth of picks more
    // than their share, not in a transient (a gate reopening with reservations due).
    std::int64_t spare_deficit = -kSpareDeficitBound;
  };

  Scheduler(sim::Simulator& sim, SchedulerOptions options, int resource_count,
            Dispatcher& dispatcher);

  Volume* find(VolumeId id);
  const Volume* find(VolumeId id) const;
  // The head changed (or its settings did): compute its tags, file it as ready or limited.
  void file_head(Volume& v, sim::Time now);
  void unfile(Volume& v, sim::Time now);
  // move_volume's work: `v` goes to `resource` (another than its own), both resources pumped.
  void move(Volume& v, int resource);
  void dispatch_head(Volume& v, Phase phase, sim::Time now);
  // Counts (sign 1) or uncounts (−1) the volume's reservation on its resource.
  void enlist(const Volume& v, int sign);
  // What the volume's min_iops is held by, ppm: the resource's sum of shares while it is
  // above a whole and the volume has a share, else a whole (held in full).
  std::int64_t held_divisor_ppm(const Volume& v) const;
  // Time `cost_units` take at the volume's reservation as held now (add_volume).
  sim::Time reservation_interval(const Volume& v, std::int64_t cost_units) const;
  Volume* pick(Resource& r, sim::Time now, Phase& phase);
  // The ready volume without a reservation whose head is oldest; nullptr when none.
  Volume* oldest_unreserved(Resource& r);
  void promote(Resource& r, sim::Time now);
  // No volume of `r` is ready, and no limited one is due by `now` (stale entries dropped):
  // a new request would be the only candidate of pump().
  bool nothing_due(Resource& r, sim::Time now);
  void pump(int resource);
  void arm_wake(int resource);
  bool valid(const HeapEntry& e, State state) const;
  void compact(MinHeap& heap, State state);
  void maybe_compact(Resource& r);
  sim::Time credit_now(const Volume& v, sim::Time now) const;

  sim::Simulator& sim_;
  SchedulerOptions options_;
  Dispatcher& dispatcher_;
  std::vector<Resource> resources_;
  // By volume id: the lookup is on every I/O's path.
  sim::IdTable<Volume> volumes_;  // in the table's pages: a lookup loads no pointer
  std::int64_t volume_count_ = 0;
  std::uint64_t next_sequence_ = 0;
  std::int64_t queued_total_ = 0;
  bool pumping_ = false;
  SchedulerCounters counters_;
  std::vector<HeapEntry> set_aside_;  // oldest_unreserved's scratch
};

}  // namespace afasim::qos
