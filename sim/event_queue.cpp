#include "sim/event_queue.h"

#include <bit>

#include "sim/assert.h"

namespace afasim::sim {

// ---------------------------------------------------------------------------------------
// The 4-ary heap

EventQueue::Heap::Heap() { keys_.assign(64, kNoKey); }

[[gnu::hot]] void EventQueue::Heap::push_more(EventKey key) {
  // Room for the new key and the padding a node's last child block may reach into.
  if (keys_.size() < size_ + 1 + 2 * kFront + 1) keys_.resize(keys_.size() * 2, kNoKey);
  sift_up(keys_.data() + kFront, size_++, key);
}

[[gnu::hot]] void EventQueue::Heap::sift_up(EventKey* h, std::size_t i, const EventKey& key) {
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
// last node with fewer than four children needs no bounds test.
[[gnu::hot]] EventKey EventQueue::Heap::pop_more() {
  EventKey* h = keys_.data() + kFront;
  const EventKey top = h[0];
  const std::size_t n = --size_;
  const EventKey last = h[n];
  h[n] = kNoKey;
  if (n == 0) return top;
  std::size_t i = 0;
  for (std::size_t first = 1; first < n; first = 4 * i + 1) {
    const EventKey* c = h + first;
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

void EventQueue::Heap::clear() {
  std::fill(keys_.begin(), keys_.end(), kNoKey);
  size_ = 0;
}

// ---------------------------------------------------------------------------------------
// The queue

EventQueue::EventQueue(std::uint64_t now) : cursor_(now >> kBucketShift) { heads_.fill(kNone); }

// Out of push's line: inline, the vector's growth made every push save and restore registers.
[[gnu::cold, gnu::noinline]] std::uint32_t EventQueue::new_node() {
  nodes_.push_back({});
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

[[gnu::hot]] EventKey EventQueue::pop_far() {
  const EventKey key = far_.pop();
  // The cursor moves up to the key's bucket (keys pushed from now on into later buckets go
  // to the wheel again). Only when nothing else is queued before it: near_ was filled from the
  // first non-empty bucket if it was empty, and its top is later than this key, so a later
  // bucket than the cursor's means near_ and the wheel are empty.
  if (bucket_of(key) > cursor_) cursor_ = bucket_of(key);
  return key;
}

[[gnu::always_inline]] inline std::uint64_t EventQueue::next_bucket() const {
  // The first non-empty bucket index at or after the one after the cursor's, wrapping round.
  const auto from = static_cast<std::size_t>((cursor_ + 1) % kBuckets);
  const std::size_t w = from / 64;
  std::size_t index;
  if (const std::uint64_t word = bits_[w] & (~std::uint64_t{0} << (from % 64)); word != 0) {
    index = w * 64 + static_cast<std::size_t>(std::countr_zero(word));
  } else {
    const std::uint64_t later = w + 1 < 64 ? summary_ & (~std::uint64_t{0} << (w + 1)) : 0;
    const std::size_t w2 = static_cast<std::size_t>(std::countr_zero(later != 0 ? later : summary_));
    index = w2 * 64 + static_cast<std::size_t>(std::countr_zero(bits_[w2]));
  }
  return cursor_ + 1 + ((index - from) % kBuckets);
}

void EventQueue::load_next_bucket() { load_bucket(next_bucket()); }

void EventQueue::close_bucket(std::uint64_t bucket, std::size_t index) {
  heads_[index] = kNone;
  bits_[index / 64] &= ~(std::uint64_t{1} << (index % 64));
  if (bits_[index / 64] == 0) summary_ &= ~(std::uint64_t{1} << (index / 64));
  cursor_ = bucket;
}

void EventQueue::load_bucket(std::uint64_t bucket) {
  const auto index = static_cast<std::size_t>(bucket % kBuckets);
  for (std::uint32_t n = heads_[index]; n != kNone;) {
    Node& node = nodes_[n];
    near_.push(node.key);
    const std::uint32_t next = node.next;
    node.next = free_node_;
    free_node_ = n;
    n = next;
    --wheel_size_;
  }
  close_bucket(bucket, index);
}

[[gnu::hot]] EventKey EventQueue::pop_next_bucket() {
  const std::uint64_t bucket = next_bucket();
  const auto index = static_cast<std::size_t>(bucket % kBuckets);
  const std::uint32_t n = heads_[index];
  Node& node = nodes_[n];
  if (node.next == kNone && (far_.empty() || node.key < far_.top())) {
    const EventKey key = node.key;
    node.next = free_node_;
    free_node_ = n;
    --wheel_size_;
    close_bucket(bucket, index);
    return key;
  }
  load_bucket(bucket);
  return near_before_far() ? near_.pop() : pop_far();
}

void EventQueue::clear() {
  near_.clear();
  far_.clear();
  heads_.fill(kNone);
  bits_.fill(0);
  summary_ = 0;
  nodes_.clear();
  free_node_ = kNone;
  wheel_size_ = 0;
  size_ = 0;
}

}  // namespace afasim::sim
