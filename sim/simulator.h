// The discrete-event kernel: virtual time, the event queue and the run's random streams.
//
// Events run in (time, insertion sequence) order, so two events at the same nanosecond run
// in the order they were scheduled and a run is a pure function of its seed and inputs.
// The queue is a 4-ary min-heap of 24-byte keys (half the depth of a binary one); actions live in a slab indexed by the
// key, so sifting never moves a callable. Single-threaded: the Simulator and everything
// it drives belong to one thread (DESIGN.md); serve mode hands work in through an inbox
// outside this class.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/action.h"
#include "sim/rng.h"
#include "sim/time.h"

namespace afasim::sim {

// Names one scheduled event so that it can be cancelled. Default-constructed: no event.
struct EventId {
  std::uint32_t slot = UINT32_MAX;
  std::uint32_t generation = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

class Simulator {
 public:
  // `seed` is the run's root seed; every Rng of the run derives from it. `start` is the
  // virtual time the run begins at (serve mode resumes the clock where it stopped).
  explicit Simulator(std::uint64_t seed, Time start = 0);
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }
  std::uint64_t seed() const { return seed_; }

  // Schedules `action` at absolute time `t`. REQUIRES: t >= now(), action not empty.
  EventId at(Time t, Action action);
  // Schedules `action` `delay` after now(). REQUIRES: delay >= 0.
  EventId after(Time delay, Action action) { return at(now_ + delay, std::move(action)); }
  // Cancels a pending event. Returns false if it already ran, was cancelled, or is invalid.
  bool cancel(EventId id);

  // Runs the next event, advancing now() to its time. Returns false when the queue is empty.
  bool step();
  // Runs every event with time <= t, then sets now() to t. REQUIRES: t >= now().
  void run_until(Time t);
  // Runs until the queue is empty or `stop()` is called from an event.
  void run();
  // Makes run()/run_until() return after the current event.
  void stop() { stopped_ = true; }

  // Time of the next pending event, or kTimeMax when none.
  Time next_event_time() const;
  // Number of events scheduled and not yet run or cancelled.
  std::size_t pending() const { return live_events_; }
  // Events executed since construction.
  std::uint64_t events_executed() const { return executed_; }

  // A random stream of this run named `stream` (e.g. "ssd", "workload.job1").
  Rng rng(std::string_view stream) const { return Rng(seed_, stream); }

 private:
  struct Key {
    Time time;
    std::uint64_t sequence;
    std::uint32_t slot;
    std::uint32_t generation;
    bool operator<(const Key& o) const {
      return time != o.time ? time < o.time : sequence < o.sequence;
    }
  };
  struct Slot {
    Action action;
    std::uint32_t generation = 0;
    bool live = false;
  };

  void heap_push(const Key& key);
  Key heap_pop();
  // Drops cancelled keys from the top of the heap.
  void skip_dead() const;

  std::uint64_t seed_;
  Time now_ = 0;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t executed_ = 0;
  std::size_t live_events_ = 0;
  bool stopped_ = false;
  mutable std::vector<Key> heap_;
  mutable std::size_t dead_keys_ = 0;  // keys of cancelled events still in heap_
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace afasim::sim
