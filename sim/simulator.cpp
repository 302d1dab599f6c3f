#include "sim/simulator.h"

#include <algorithm>
#include <utility>

#include "sim/assert.h"

namespace afasim::sim {

namespace {

// Time as an unsigned number in the same order (sign bit flipped), and back.
constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
std::uint64_t key_time(Time t) { return static_cast<std::uint64_t>(t) ^ kSignBit; }
Time time_of(std::uint64_t key_time) { return static_cast<Time>(key_time ^ kSignBit); }

}  // namespace

Simulator::Simulator(std::uint64_t seed, Time start, std::uint64_t sequence_limit)
    : seed_(seed), now_(start), sequence_limit_(sequence_limit), queue_(key_time(start)) {
  AFASIM_ASSERT(sequence_limit >= 1 && sequence_limit <= kSequenceLimit, "Simulator: sequence limit out of range");
  set_current_seed(seed);
}

[[gnu::hot]] std::uint32_t Simulator::schedule(Time t) {
  AFASIM_ASSERT(t >= now_, "event scheduled in the past");
  const std::uint32_t slot = events_.acquire(static_cast<std::uint32_t>(kSlotMask) + 1);
  if (next_sequence_ >= sequence_limit_) renumber();
  const Key key{key_time(t), next_sequence_++ << kSlotBits | slot};
  events_[slot].sequence_slot = key.sequence_slot;
  queue_.push(key);
  ++live_events_;
  return slot;
}

bool Simulator::cancel(EventId id) {
  if (!id.valid() || id.slot >= events_.size()) return false;
  Event& e = events_[id.slot];
  if (e.sequence_slot == Event::kFree || e.generation != id.generation) return false;
  e.action.reset();
  e.sequence_slot = Event::kFree;  // the queued key no longer matches: it is skipped
  ++e.generation;
  events_.release(id.slot);
  --live_events_;
  ++dead_keys_;
  return true;
}

[[gnu::hot]] void Simulator::skip_dead() const {
  while (dead_keys_ > 0 && !queue_.empty()) {
    if (live(queue_.top())) return;
    queue_.pop();
    --dead_keys_;
  }
}

void Simulator::renumber() {
  std::vector<Key> keys;
  keys.reserve(queue_.size());
  queue_.for_each([&](const Key& key) {
    if (live(key)) keys.push_back(key);
  });
  std::sort(keys.begin(), keys.end());
  queue_.clear();
  for (std::size_t i = 0; i < keys.size(); ++i) {  // in order: the sequence is the rank
    const std::uint64_t sequence_slot = static_cast<std::uint64_t>(i) << kSlotBits | keys[i].slot();
    queue_.push(Key{keys[i].time, sequence_slot});
    events_[keys[i].slot()].sequence_slot = sequence_slot;
  }
  dead_keys_ = 0;
  next_sequence_ = keys.size();
}

Time Simulator::next_event_time() const {
  skip_dead();
  return queue_.empty() ? kTimeMax : time_of(queue_.top().time);
}

[[gnu::hot]] bool Simulator::step() {
  if (dead_keys_ > 0) skip_dead();
  if (queue_.empty()) return false;
  const Key key = queue_.pop();
  const std::uint32_t slot = key.slot();
  now_ = time_of(key.time);
  Event& e = events_[slot];
  e.sequence_slot = Event::kFree;  // running: cancel() of it is refused
  ++e.generation;
  --live_events_;
  ++executed_;
  // In place: the slot is released only below, and the slab never moves what it holds.
  e.action();
  e.action.reset();
  events_.release(slot);
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

std::uint64_t Simulator::run_events(std::uint64_t max_events) {
  stopped_ = false;
  std::uint64_t ran = 0;
  while (ran < max_events && !stopped_ && step()) ++ran;
  return ran;
}

}  // namespace afasim::sim
