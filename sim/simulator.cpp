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

// Heap entries before the root, so that every node's four children share a cache line.
constexpr std::size_t kFront = 3;

}  // namespace

Simulator::Simulator(std::uint64_t seed, Time start, std::uint64_t sequence_limit)
    : seed_(seed), now_(start), sequence_limit_(sequence_limit) {
  AFASIM_ASSERT(sequence_limit >= 1 && sequence_limit <= kSequenceLimit, "Simulator: sequence limit out of range");
  set_current_seed(seed);
  heap_.assign(1024, kNoKey);
  slot_states_.reserve(1024);
}

[[gnu::hot]] std::uint32_t Simulator::schedule(Time t) {
  AFASIM_ASSERT(t >= now_, "event scheduled in the past");
  const std::uint32_t slot = actions_.acquire(static_cast<std::uint32_t>(kSlotMask) + 1);
  if (slot == slot_states_.size()) slot_states_.emplace_back();
  if (next_sequence_ >= sequence_limit_) renumber();
  const Key key{key_time(t), next_sequence_++ << kSlotBits | slot};
  slot_states_[slot].sequence_slot = key.sequence_slot;
  heap_push(key);
  ++live_events_;
  return slot;
}

bool Simulator::cancel(EventId id) {
  if (!id.valid() || id.slot >= slot_states_.size()) return false;
  SlotState& s = slot_states_[id.slot];
  if (s.sequence_slot == SlotState::kFree || s.generation != id.generation) return false;
  actions_[id.slot].reset();
  s.sequence_slot = SlotState::kFree;  // the heap key no longer matches: it is skipped
  ++s.generation;
  actions_.release(id.slot);
  --live_events_;
  ++dead_keys_;
  return true;
}

// A 4-ary heap: children of i are 4i+1..4i+4. Keys are unique (the sequence), so any heap
// pops them in the same order.
[[gnu::hot]] void Simulator::heap_push(const Key& key) {
  // Room for the new key and the padding a node's last child block may reach into.
  if (heap_.size() < heap_size_ + 1 + 2 * kFront + 1) heap_.resize(heap_.size() * 2, kNoKey);
  sift_up(heap_.data() + kFront, heap_size_++, key);
}

[[gnu::hot]] void Simulator::sift_up(Key* h, std::size_t i, const Key& key) {
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!(key < h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = key;
}

// Floyd's bottom-up pop: the hole at the root follows the smallest children down to a leaf,
// then the last key sifts up from there (it belongs near the bottom, so this compares less
// than sifting it down). Padding past the last key is kNoKey, larger than every key, so a
// last node with fewer than four children needs no bounds test. (A branch-free choice of the
// smallest child ran slower: each level's loads then wait for the previous compares.)
[[gnu::hot]] Simulator::Key Simulator::heap_pop() {
  Key* h = heap_.data() + kFront;
  const Key top = h[0];
  const std::size_t n = --heap_size_;
  const Key last = h[n];
  h[n] = kNoKey;
  if (n == 0) return top;
  std::size_t i = 0;
  for (std::size_t first = 1; first < n; first = 4 * i + 1) {
    const Key* c = h + first;
    std::size_t m = 0;
    if (c[1] < c[m]) m = 1;
    if (c[2] < c[m]) m = 2;
    if (c[3] < c[m]) m = 3;
    h[i] = c[m];
    i = first + m;
  }
  sift_up(h, i, last);
  return top;
}

[[gnu::hot]] void Simulator::skip_dead() const {
  auto* self = const_cast<Simulator*>(this);
  while (dead_keys_ > 0 && heap_size_ > 0) {
    if (live(heap_[kFront])) return;
    self->heap_pop();
    --dead_keys_;
  }
}

void Simulator::renumber() {
  Key* h = heap_.data() + kFront;
  std::vector<Key> keys;
  keys.reserve(heap_size_);
  for (std::size_t i = 0; i < heap_size_; ++i)
    if (live(h[i])) keys.push_back(h[i]);
  std::sort(keys.begin(), keys.end());
  std::fill(heap_.begin(), heap_.end(), kNoKey);
  for (std::size_t i = 0; i < keys.size(); ++i) {  // a sorted array is a heap
    const std::uint64_t sequence_slot = static_cast<std::uint64_t>(i) << kSlotBits | keys[i].slot();
    h[i] = Key{keys[i].time, sequence_slot};
    slot_states_[keys[i].slot()].sequence_slot = sequence_slot;
  }
  heap_size_ = keys.size();
  dead_keys_ = 0;
  next_sequence_ = keys.size();
}

Time Simulator::next_event_time() const {
  skip_dead();
  return heap_size_ == 0 ? kTimeMax : time_of(heap_[kFront].time);
}

[[gnu::hot]] bool Simulator::step() {
  skip_dead();
  if (heap_size_ == 0) return false;
  const Key key = heap_pop();
  const std::uint32_t slot = key.slot();
  now_ = time_of(key.time);
  SlotState& state = slot_states_[slot];
  state.sequence_slot = SlotState::kFree;  // running: cancel() of it is refused
  ++state.generation;
  --live_events_;
  ++executed_;
  // In place: the slot is released only below, and the slab never moves what it holds.
  Action& action = actions_[slot];
  action();
  action.reset();
  actions_.release(slot);
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
