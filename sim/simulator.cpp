#include "sim/simulator.h"

#include <algorithm>
#include <utility>

#include "sim/assert.h"

namespace afasim::sim {

Simulator::Simulator(std::uint64_t seed, Time start) : seed_(seed), now_(start) {
  set_current_seed(seed);
  heap_.reserve(1024);
  slots_.reserve(1024);
}

EventId Simulator::at(Time t, Action action) {
  AFASIM_ASSERT(t >= now_, "event scheduled in the past");
  AFASIM_ASSERT(static_cast<bool>(action), "event with an empty action");
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[slot];
  s.action = std::move(action);
  s.live = true;
  heap_push(Key{t, next_sequence_++, slot, s.generation});
  ++live_events_;
  return EventId{slot, s.generation};
}

bool Simulator::cancel(EventId id) {
  if (!id.valid() || id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (!s.live || s.generation != id.generation) return false;
  s.action.reset();
  s.live = false;
  ++s.generation;  // the heap key now points at a dead generation and is skipped
  free_slots_.push_back(id.slot);
  --live_events_;
  ++dead_keys_;
  return true;
}

// A 4-ary heap: children of i are 4i+1..4i+4. Keys are unique (the sequence), so any heap
// pops them in the same order.
void Simulator::heap_push(const Key& key) {
  heap_.push_back(key);
  std::size_t i = heap_.size() - 1;
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!(key < heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = key;
}

Simulator::Key Simulator::heap_pop() {
  const Key top = heap_.front();
  const Key last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n > 0) {
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t child = first;
      const std::size_t end = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < end; ++c)
        if (heap_[c] < heap_[child]) child = c;
      if (!(heap_[child] < last)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
  }
  return top;
}

void Simulator::skip_dead() const {
  auto* self = const_cast<Simulator*>(this);
  while (dead_keys_ > 0 && !heap_.empty()) {
    const Key& k = heap_.front();
    if (slots_[k.slot].generation == k.generation) return;
    self->heap_pop();
    --dead_keys_;
  }
}

Time Simulator::next_event_time() const {
  skip_dead();
  return heap_.empty() ? kTimeMax : heap_.front().time;
}

bool Simulator::step() {
  skip_dead();
  if (heap_.empty()) return false;
  const Key key = heap_pop();
  Slot& s = slots_[key.slot];
  now_ = key.time;
  Action action = std::move(s.action);
  s.live = false;
  ++s.generation;
  free_slots_.push_back(key.slot);
  --live_events_;
  ++executed_;
  action();
  return true;
}

void Simulator::run_until(Time t) {
  AFASIM_ASSERT(t >= now_, "run_until into the past");
  stopped_ = false;
  while (!stopped_ && next_event_time() <= t) step();
  if (!stopped_) now_ = t;
}

void Simulator::run() {
  stopped_ = false;
  while (!stopped_ && step()) {
  }
}

}  // namespace afasim::sim
