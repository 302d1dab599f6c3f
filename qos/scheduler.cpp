#include "qos/scheduler.h"

#include <algorithm>
#include <cstddef>

#include "qos/cost.h"
#include "qos/scheduler_internal.h"
#include "sim/prefetch.h"
#include "sim/assert.h"

namespace afasim::qos {

using detail::add;
using detail::interval;
using detail::kNever;
using sim::Status;
using sim::Time;

sim::Result<std::unique_ptr<Scheduler>> Scheduler::create(sim::Simulator& sim,
                                                          SchedulerOptions options,
                                                          int resource_count,
                                                          Dispatcher& dispatcher) {
  static_assert(offsetof(Volume, completed) + sizeof(std::int64_t) <= 64,
                "qos::Scheduler::Volume: submit's and complete()'s fields in the first cache line");
  static_assert(offsetof(Volume, head_l) + sizeof(Time) <= 128,
                "qos::Scheduler::Volume: the settings and the head's tags in the second");
  if (options.burst_credit_max_ns < 0 || options.burst_credit_max_ns > sim::kDay)
    return sim::invalid_argument("burst_credit_max_ns must be between 0 and one day, got " +
                                 std::to_string(options.burst_credit_max_ns));
  if (options.queue_depth_max < 1 || options.queue_depth_max > (std::int64_t{1} << 22))
    return sim::invalid_argument("queue_depth_max must be between 1 and 4194304, got " +
                                 std::to_string(options.queue_depth_max));
  if (options.reservation_catch_up_ns < 0 || options.reservation_catch_up_ns > sim::kSecond)
    return sim::invalid_argument("reservation_catch_up_ns must be between 0 and one second, got " +
                                 std::to_string(options.reservation_catch_up_ns));
  if (options.spare_floor_percent < 0 || options.spare_floor_percent > 99)
    return sim::invalid_argument("spare_floor_percent must be between 0 and 99, got " +
                                 std::to_string(options.spare_floor_percent));
  if (resource_count < 1 || resource_count > 64)
    return sim::invalid_argument("resource_count must be between 1 and 64, got " +
                                 std::to_string(resource_count));
  return std::unique_ptr<Scheduler>(new Scheduler(sim, options, resource_count, dispatcher));
}

Scheduler::Scheduler(sim::Simulator& sim, SchedulerOptions options, int resource_count,
                     Dispatcher& dispatcher)
    : sim_(sim),
      options_(options),
      dispatcher_(dispatcher),
      resources_(static_cast<std::size_t>(resource_count)) {}

Scheduler::~Scheduler() {
  // The simulator may outlive us: no wake-up may run into a destroyed scheduler.
  for (Resource& r : resources_)
    if (r.wake.valid()) sim_.cancel(r.wake);
}

[[gnu::hot]] Scheduler::Volume* Scheduler::find(VolumeId id) {
  return id > 0 ? volumes_.find_in_use(static_cast<std::uint64_t>(id)) : nullptr;
}

void Scheduler::prefetch(VolumeId id) const {
  if (id > 0) sim::prefetch(volumes_.find(static_cast<std::uint64_t>(id)), true);
}

[[gnu::hot]] const Scheduler::Volume* Scheduler::find(VolumeId id) const {
  return const_cast<Scheduler*>(this)->find(id);
}

[[gnu::hot]] std::optional<int> Scheduler::resource_of(VolumeId id) const {
  const Volume* v = find(id);
  if (v == nullptr) return std::nullopt;
  return v->resource;
}


// ---------------------------------------------------------------------------------------
// Filing: tags of the head, and which heap holds the volume

void Scheduler::file_head(Volume& v, Time now) {
  AFASIM_ASSERT(!v.queue.empty() && v.state == State::kIdle,
                "filing a volume with no head or filed twice");
  const Request& head = v.queue.front();
  Time limit_tag = 0;  // no limit: eligible at once
  if (v.has_max()) {
    // Max allowance that lapsed while the volume had nothing queued becomes burst credit.
    if (v.m_clock < v.head_since) {
      v.credit_ns =
          std::min(options_.burst_credit_max_ns, v.credit_ns + (v.head_since - v.m_clock));
      v.m_clock = v.head_since;
    }
    if (v.max() == 0) {
      limit_tag = kNever;
    } else {
      const bool can_burst =
          v.has_burst() && v.credit_ns >= interval(head.cost_units, v.burst_above_max());
      limit_tag = can_burst ? v.b_clock : std::max(v.m_clock, v.b_clock);
    }
  }
  v.head_l = limit_tag;
  // mClock's R tag, max(previous R + 1 / min, arrival): a request that waited behind its
  // volume's earlier ones is due from its arrival, so a volume backlogged while the gate was
  // closed catches up the intervals it missed, up to reservation_catch_up_ns of them. (Until
  // 2026-12-04 the tag counted from when the request became the head, and every gate pause
  // longer than one interval was lost: 47,300 IOPS of a 50,000 reservation beside a busy
  // neighbour.) An idle volume banks nothing: its next request's arrival is later than R.
  v.head_r = v.has_min()
                 ? std::max({v.r_clock, head.arrival, now - options_.reservation_catch_up_ns})
                 : kNever;
  ++v.version;
  Resource& r = resources_[static_cast<std::size_t>(v.resource)];
  if (limit_tag > now) {
    v.state = State::kLimited;
    v.limited_since = now;
    r.limited.push({limit_tag, v.id, v.version});
  } else {
    v.state = State::kReady;
    r.ready.push({static_cast<std::int64_t>(head.sequence), v.id, v.version});
    if (v.has_min()) r.reservation.push({v.head_r, v.id, v.version});
  }
}

void Scheduler::unfile(Volume& v, Time now) {
  if (v.state == State::kLimited) v.throttled_ns += std::max<Time>(0, now - v.limited_since);
  v.state = State::kIdle;
  ++v.version;  // every heap entry of the volume is stale now
}

bool Scheduler::valid(const HeapEntry& e, State state) const {
  const Volume* v = find(e.id);
  return v != nullptr && v->version == e.version && v->state == state;
}

[[gnu::hot]] void Scheduler::promote(Resource& r, Time now) {
  while (!r.limited.empty()) {
    const HeapEntry top = r.limited.top();
    if (!valid(top, State::kLimited)) {
      r.limited.pop();
      continue;
    }
    if (top.key > now) break;
    r.limited.pop();
    Volume& v = *find(top.id);
    // Held by its limit from limited_since until its L tag, whenever we get to it.
    v.throttled_ns += std::max<Time>(0, top.key - v.limited_since);
    v.state = State::kReady;
    ++v.version;
    r.ready.push({static_cast<std::int64_t>(v.queue.front().sequence), v.id, v.version});
    if (v.has_min()) r.reservation.push({v.head_r, v.id, v.version});
  }
}

[[gnu::hot]] Scheduler::Volume* Scheduler::pick(Resource& r, Time now, Phase& phase) {
  while (!r.reservation.empty() && !valid(r.reservation.top(), State::kReady)) r.reservation.pop();
  if (!r.reservation.empty() && r.reservation.top().key <= now) {
    // A due reservation goes first, unless the spare phase is owed its floor and a volume
    // without a reservation is ready to take it (review 29: not any volume's oldest head).
    if (Volume* v = r.spare_deficit > 0 ? oldest_unreserved(r) : nullptr) {
      phase = Phase::kSpare;
      return v;
    }
    phase = Phase::kReservation;
    return find(r.reservation.top().id);
  }
  while (!r.ready.empty() && !valid(r.ready.top(), State::kReady)) r.ready.pop();
  if (!r.ready.empty()) {
    phase = Phase::kSpare;
    return find(r.ready.top().id);
  }
  return nullptr;
}

Scheduler::Volume* Scheduler::oldest_unreserved(Resource& r) {
  // Reserved volumes above the first without a reservation are set aside, then put back.
  Volume* found = nullptr;
  set_aside_.clear();
  while (found == nullptr && !r.ready.empty()) {
    const HeapEntry top = r.ready.top();
    r.ready.pop();
    if (!valid(top, State::kReady)) continue;
    set_aside_.push_back(top);
    if (Volume* v = find(top.id); !v->has_min()) found = v;
  }
  for (const HeapEntry& e : set_aside_) r.ready.push(e);
  return found;
}

// ---------------------------------------------------------------------------------------
// Dispatch

void Scheduler::dispatch_head(Volume& v, Phase phase, Time now) {
  const Request head = v.queue.front();
  v.queue.pop_front();
  --v.queued;
  --queued_total_;
  const std::int64_t c = head.cost_units;
  if (v.has_max() && v.max() > 0) {
    const Time step = interval(c, v.max());
    if (v.m_clock <= now) {
      // Within max. A dispatch the array delayed by less than one interval does not slow the
      // pace (the next interval counts from when this I/O was due); a longer delay is not
      // made up, so no catching up ever exceeds max by more than one I/O.
      v.m_clock = add(std::max(v.m_clock, now - step), step);
    } else {
      // Ahead of the max pace: a burst I/O, paid from the credit.
      const Time spend = interval(c, v.burst_above_max());
      AFASIM_ASSERT(v.has_burst() && v.credit_ns >= spend, "a burst I/O without burst credit");
      v.credit_ns -= spend;
      ++v.burst;
    }
    if (v.has_burst()) {
      const Time burst_step = interval(c, *v.settings.burst_iops);
      v.b_clock = add(std::max(v.b_clock, now - burst_step), burst_step);
    }
  }
  if (phase == Phase::kReservation) {
    v.r_clock = add(v.head_r, reservation_interval(v, c));
    ++v.reservation;
  }
  // The spare phase's floor (Resource::spare_deficit); costs past 2^40 units (no real I/O)
  // count as 2^40, so nothing overflows.
  const std::int64_t floor = options_.spare_floor_percent;
  const std::int64_t cost = std::min<std::int64_t>(c, std::int64_t{1} << 40);
  std::int64_t& owed = resources_[static_cast<std::size_t>(v.resource)].spare_deficit;
  owed = phase == Phase::kReservation ? std::min(kSpareDeficitBound + floor * cost, owed + floor * cost)
                                      : std::max(-kSpareDeficitBound, owed - (100 - floor) * cost);
  ++v.dispatched;
  ++counters_.decisions;
  v.state = State::kIdle;
  ++v.version;
  if (!v.queue.empty()) {
    v.head_since = now;
    file_head(v, now);
  }
  dispatcher_.dispatch(head.cookie, v.resource);
}

[[gnu::hot]] void Scheduler::pump(int resource) {
  if (pumping_) return;  // a dispatcher must not call back; be safe if it does
  pumping_ = true;
  Resource& r = resources_[static_cast<std::size_t>(resource)];
  const Time now = sim_.now();
  for (;;) {
    promote(r, now);
    Phase phase;
    Volume* v = pick(r, now, phase);
    if (v == nullptr) break;
    if (dispatcher_.ready_time(resource) > now) break;
    dispatch_head(*v, phase, now);
  }
  pumping_ = false;
  maybe_compact(r);
  arm_wake(resource);
}

[[gnu::hot]] void Scheduler::arm_wake(int resource) {
  Resource& r = resources_[static_cast<std::size_t>(resource)];
  Time t = sim::kTimeMax;
  while (!r.limited.empty() && !valid(r.limited.top(), State::kLimited)) r.limited.pop();
  if (!r.limited.empty() && r.limited.top().key < kNever) t = r.limited.top().key;
  while (!r.ready.empty() && !valid(r.ready.top(), State::kReady)) r.ready.pop();
  if (!r.ready.empty()) t = std::min(t, dispatcher_.ready_time(resource));
  if (t != sim::kTimeMax) t = std::max(t, sim_.now());
  if (r.wake.valid() && r.wake_time == t) return;
  if (r.wake.valid()) sim_.cancel(r.wake);
  r.wake = {};
  r.wake_time = sim::kTimeMax;
  if (t == sim::kTimeMax) return;
  r.wake_time = t;
  r.wake = sim_.at(t, [this, resource] {
    Resource& rr = resources_[static_cast<std::size_t>(resource)];
    rr.wake = {};
    rr.wake_time = sim::kTimeMax;
    ++counters_.wakeups;
    pump(resource);
  });
}

void Scheduler::compact(MinHeap& heap, State state) {
  std::vector<HeapEntry> keep;
  while (!heap.empty()) {
    if (valid(heap.top(), state)) keep.push_back(heap.top());
    heap.pop();
  }
  for (const HeapEntry& e : keep) heap.push(e);
}

[[gnu::hot]] void Scheduler::maybe_compact(Resource& r) {
  // Stale entries are dropped when they reach the top; one deep in a heap can linger. Bound
  // each heap to a few entries per volume.
  const std::size_t bound = 4 * static_cast<std::size_t>(volume_count_) + 1024;
  if (r.ready.size() > bound) compact(r.ready, State::kReady);
  if (r.reservation.size() > bound) compact(r.reservation, State::kReady);
  if (r.limited.size() > bound) compact(r.limited, State::kLimited);
}

// ---------------------------------------------------------------------------------------
// Requests

// Inline in submit(), its one caller: the two heaps are usually empty, and a call to find that
// out cost more than the test.
[[gnu::hot, gnu::always_inline]] inline bool Scheduler::nothing_due(Resource& r, Time now) {
  while (!r.ready.empty() && !valid(r.ready.top(), State::kReady)) r.ready.pop();
  if (!r.ready.empty()) return false;
  while (!r.limited.empty() && !valid(r.limited.top(), State::kLimited)) r.limited.pop();
  return r.limited.empty() || r.limited.top().key > now;
}

[[gnu::hot]] Status Scheduler::submit(VolumeId id, std::uint64_t cookie, std::int64_t cost_units, int resource) {
  AFASIM_ASSERT(cost_units >= 1, "an I/O costs at least one unit");
  AFASIM_ASSERT(resource >= kSameResource && resource < resource_count(), "submit: no such resource");
  Volume* v = find(id);
  if (v == nullptr) return sim::not_found("volume " + std::to_string(id) + " is not scheduled");
  if (resource != kSameResource && resource != v->resource) [[unlikely]]
    move(*v, resource);
  if (v->queued >= options_.queue_depth_max) {
    ++counters_.refused_queue_full;
    return sim::unavailable("the QoS queue of volume " + std::to_string(id) + " is full (" +
                            std::to_string(options_.queue_depth_max) +
                            " requests waiting): the host sends faster than the volume is served");
  }
  const Time now = sim_.now();
  if (v->queued == 0 && v->unlimited && !pumping_ &&
      nothing_due(resources_[static_cast<std::size_t>(v->resource)], now) &&
      dispatcher_.ready_time(v->resource) <= now) {
    // What pump() would decide, without filing the request: a volume with neither a
    // reservation nor a limit, alone on a resource where nothing else is ready or due, goes
    // at once when the dispatcher can take it (most I/O of an array without QoS policies).
    // Its tags are not written: only a volume with a min or a max reads them, after filing.
    ++next_sequence_;
    v->head_since = now;
    v->version += 2;  // filed and dispatched
    ++v->dispatched;
    ++counters_.decisions;
    const int resource = v->resource;  // `v` may be gone after the dispatch
    pumping_ = true;
    dispatcher_.dispatch(cookie, resource);
    pumping_ = false;
    // What the dispatch queued meanwhile, as pump()'s loop goes on. Nothing filed and no
    // wake-up armed on the resource (the common case): pump() would find nothing to pick and
    // no wake-up to arm or cancel, so it is skipped.
    const Resource& r = resources_[static_cast<std::size_t>(resource)];
    if (!r.ready.empty() || !r.reservation.empty() || !r.limited.empty() || r.wake.valid()) pump(resource);
    return Status::ok();
  }
  v->queue.push_back({cookie, next_sequence_++, cost_units, now});
  ++v->queued;
  ++queued_total_;
  if (v->queue.size() == 1) {
    v->head_since = now;
    file_head(*v, now);
  }
  pump(v->resource);
  return Status::ok();
}

[[gnu::hot]] void Scheduler::complete(VolumeId id) {
  Volume* v = find(id);
  if (v == nullptr) return;
  ++v->completed;
  const std::int64_t s = sim_.now() / sim::kSecond;
  if (s == v->second) {
    ++v->this_second;
  } else {
    v->last_second = s == v->second + 1 ? v->this_second : 0;
    v->this_second = 1;
    v->second = s;
  }
}

void Scheduler::kick(int resource) {
  AFASIM_ASSERT(resource >= 0 && resource < resource_count(), "kick: no such resource");
  pump(resource);
}

}  // namespace afasim::qos
