// The discrete-event kernel: virtual time, the event queue and the run's random streams.
//
// Events run in (time, insertion sequence) order, so two events at the same nanosecond run
// in the order they were scheduled and a run is a pure function of its seed and inputs.
// The queue (sim::EventQueue: a calendar queue in front of a 4-ary heap) holds 16-byte keys;
// actions live in a slab indexed by the key, so the queue never moves a callable, and each
// is built and run in its slot (no move in, no move out). Single-threaded: the Simulator and everything it drives belong to one thread
// (DESIGN.md); serve mode hands work in through an inbox outside this class.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/action.h"
#include "sim/event_queue.h"
#include "sim/assert.h"
#include "sim/rng.h"
#include "sim/slab.h"
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
  // `sequence_limit` bounds the insertion sequence numbers before they are renumbered
  // (order kept); tests lower it to exercise renumbering. REQUIRES: 1 <= sequence_limit <=
  // kSequenceLimit.
  static constexpr std::uint64_t kSequenceLimit = std::uint64_t{1} << 36;
  explicit Simulator(std::uint64_t seed, Time start = 0, std::uint64_t sequence_limit = kSequenceLimit);
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }
  std::uint64_t seed() const { return seed_; }

  // Schedules `action` (a callable, or an Action moved in) at absolute time `t`; it is built
  // in its event slot, where it also runs. REQUIRES: t >= now(), action not empty.
  template <typename F>
  EventId at(Time t, F&& action) {
    const std::uint32_t slot = schedule(t);
    Event& e = events_[slot];
    e.action.assign(std::forward<F>(action));
    AFASIM_ASSERT(static_cast<bool>(e.action), "event with an empty action");
    return EventId{slot, e.generation};
  }
  // Schedules `action` `delay` after now(). REQUIRES: delay >= 0.
  template <typename F>
  EventId after(Time delay, F&& action) {
    return at(now_ + delay, std::forward<F>(action));
  }
  // Cancels a pending event. Returns false if it already ran, was cancelled, or is invalid.
  bool cancel(EventId id);

  // Runs the next event, advancing now() to its time. Returns false when the queue is empty.
  bool step();
  // Runs every event with time <= t, then sets now() to t. REQUIRES: t >= now().
  void run_until(Time t);
  // Runs until the queue is empty or `stop()` is called from an event.
  void run();
  // Runs at most `max_events` events, fewer when the queue empties or an event calls stop();
  // returns how many ran. For a caller that reports progress every so many events and whose
  // own end an event signals with stop(): one loop here instead of one call per event.
  std::uint64_t run_events(std::uint64_t max_events);
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
  using Key = EventKey;
  static constexpr int kSlotBits = EventKey::kSlotBits;
  static constexpr std::uint64_t kSlotMask = EventKey::kSlotMask;
  // An event's slot: its action, the key of its pending event (kFree when none; a queued key
  // that differs is a cancelled event's) and the generation EventIds name. One 64-byte line
  // (the slab starts its chunks on a line): a popped event's slot is cold, and its action and
  // state kept apart (a vector of states beside a slab of actions) cost two misses an event,
  // three events a simulated read (docs/performance.md, "thirty-ninth session").
  struct Event {
    Action action;
    std::uint64_t sequence_slot = kFree;
    std::uint32_t generation = 0;
    static constexpr std::uint64_t kFree = UINT64_MAX;
  };
  static_assert(sizeof(Event) == 64, "Simulator::Event: one cache line");

  // A slot for an event at `t`, its key in the queue; the caller puts the action in it.
  std::uint32_t schedule(Time t);
  // Drops cancelled keys from the front of the queue.
  void skip_dead() const;
  bool live(const Key& key) const { return events_[key.slot()].sequence_slot == key.sequence_slot; }
  // Gives the pending events sequences 0..n-1 in the order they would run (cancelled keys go).
  void renumber();

  std::uint64_t seed_;
  Time now_ = 0;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t executed_ = 0;
  std::size_t live_events_ = 0;
  bool stopped_ = false;
  std::uint64_t sequence_limit_;
  mutable EventQueue queue_;
  mutable std::size_t dead_keys_ = 0;  // keys of cancelled events still in the queue
  // By slot. A slab: an action runs where it was built, and the events it schedules never move
  // it (a vector's growth would); a slot is handed out again only after its action has run.
  Slab<Event> events_;
};

}  // namespace afasim::sim
