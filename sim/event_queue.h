// sim::EventQueue — the simulator's priority queue of event keys: (time, sequence) pairs,
// popped smallest first. Keys are unique (the sequence), so the order is total and any
// correct queue pops the same keys in the same order: a run does not depend on this design.
//
// A calendar queue in front of a heap (Brown, "Calendar queues", CACM 31(10), 1988, with a
// fixed bucket width). Most events of a simulated I/O fall a few microseconds to a few
// milliseconds ahead (a core, a DMA transfer, an SSD read); a key that falls within
// kBuckets buckets of kBucketNs after the current bucket goes, unsorted, into its bucket's
// list (a push: a shift, a bit set and a link); the current bucket's keys and anything
// earlier are in `near_`, a 4-ary heap that holds a handful of keys; later keys (timers
// seconds ahead) in `far_`, another. A pop takes the smaller of near_'s and far_'s tops,
// first moving the next non-empty bucket (found in a two-level bitmap) into near_ when near_
// is empty; a bucket of one key (most: events are sparser than 512 ns) is popped straight
// from its node. Each key is thus moved at most once, and the heaps stay small: with 260 events
// pending at exponential delays (mean 300 µs) an event costs the kernel 44-58 ns against
// 70-75 ns with one heap of all of them (docs/performance.md). Keys crowded into one bucket
// (hundreds within a microsecond) cost what one heap costs, plus the move. Memory: 16 KiB of
// bucket heads, 24 bytes per key in a bucket.
//
// Not thread-safe (model thread).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/assert.h"
#include "sim/cache_line_allocator.h"

namespace afasim::sim {

// An event's place in the queue: its time as an unsigned number in the same order (the sign
// bit flipped: the simulator's time is signed) and its sequence number above its action's
// slot, compared as one 128-bit number.
struct EventKey {
  static constexpr int kSlotBits = 28;  // 268 M pending events: memory runs out first
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  std::uint64_t time;
  std::uint64_t sequence_slot;
  unsigned __int128 order() const { return static_cast<unsigned __int128>(time) << 64 | sequence_slot; }
  bool operator<(const EventKey& o) const { return order() < o.order(); }
  std::uint32_t slot() const { return static_cast<std::uint32_t>(sequence_slot & kSlotMask); }
};

class EventQueue {
 public:
  // Bucket width: 512 ns, under the shortest service times of the model (a 4 KiB DMA
  // transfer, a core's command), so that a bucket seldom holds two keys to sort; 4,096
  // buckets: 2.1 ms ahead, beyond an SSD read under load. (1,024 ns: ~20 instructions more per
  // 4K read and per RAID 5 write; 256 ns: as few for the read, more for the write, whose
  // keys beyond 1 ms go to the far heap. Callgrind, docs/performance.md "thirty-seventh".)
  static constexpr int kBucketShift = 9;
  static constexpr std::size_t kBuckets = 4096;

  // `now`: the time key of the simulator's start (EventKey::time).
  explicit EventQueue(std::uint64_t now);
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // REQUIRES: key.time >= the time of every key popped so far. Inline into the simulator's
  // schedule(): one call per event fewer (a new bucket node, seldom needed, is out of line).
  void push(EventKey key) {  // by value: two registers, not a copy on the stack
    ++size_;
    const std::uint64_t bucket = bucket_of(key);
    if (bucket <= cursor_) return near_.push(key);
    if (bucket - cursor_ >= kBuckets) return far_.push(key);
    std::uint32_t n = free_node_;
    if (n != kNone) free_node_ = nodes_[n].next;
    else n = new_node();
    const auto index = static_cast<std::size_t>(bucket % kBuckets);
    nodes_[n] = Node{key, heads_[index]};
    heads_[index] = n;
    bits_[index / 64] |= std::uint64_t{1} << (index % 64);
    summary_ |= std::uint64_t{1} << (index / 64);
    ++wheel_size_;
  }
  // The smallest key. REQUIRES: !empty().
  const EventKey& top() { return near_first() ? near_.top() : far_.top(); }
  EventKey pop() {
    AFASIM_ASSERT(size_ > 0, "EventQueue: pop of an empty queue");
    --size_;
    if (near_.empty() && wheel_size_ > 0) return pop_next_bucket();
    return near_before_far() ? near_.pop() : pop_far();
  }
  // Calls f(key) for every key, in no particular order.
  template <typename F>
  void for_each(F&& f) const {
    near_.for_each(f);
    far_.for_each(f);
    for (std::uint32_t head : heads_)
      for (std::uint32_t n = head; n != kNone; n = nodes_[n].next) f(nodes_[n].key);
  }
  // Removes every key (the cursor stays: later keys may not be earlier than popped ones).
  void clear();

 private:
  // A 4-ary min-heap: children of i are 4i+1..4i+4, laid out so that every node's four
  // children share a 64-byte cache line.
  class Heap {
   public:
    Heap();
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const EventKey& top() const { return keys_[kFront]; }
    // Most pushes find the heap empty (the near heap holds one bucket's keys, about one):
    // the key goes to the root; keys_ always has room for it (64 entries at least).
    void push(EventKey key) {
      if (size_ == 0) {
        keys_[kFront] = key;
        size_ = 1;
        return;
      }
      push_more(key);
    }
    EventKey pop() {
      if (size_ == 1) {  // what pop_more does for the last key
        size_ = 0;
        const EventKey top = keys_[kFront];
        keys_[kFront] = kNoKey;
        return top;
      }
      return pop_more();
    }
    static constexpr EventKey kNoKey{UINT64_MAX, UINT64_MAX};  // pads a heap: after every key
    void clear();
    template <typename F>
    void for_each(F&& f) const {
      for (std::size_t i = 0; i < size_; ++i) f(keys_[kFront + i]);
    }

   private:
    void push_more(EventKey key);
    EventKey pop_more();
    static constexpr std::size_t kFront = 3;  // entries before the root
    static void sift_up(EventKey* h, std::size_t i, const EventKey& key);
    std::vector<EventKey, CacheLineAllocator<EventKey>> keys_;  // children of a node in one line
    std::size_t size_ = 0;
  };
  static constexpr std::uint32_t kNone = UINT32_MAX;
  static constexpr std::size_t kWords = kBuckets / 64;
  static_assert(kWords <= 64, "one summary word");
  struct Node {
    EventKey key;
    std::uint32_t next;
  };
  // A node at the end of nodes_ (none free).
  std::uint32_t new_node();
  static std::uint64_t bucket_of(const EventKey& key) { return key.time >> kBucketShift; }
  // Whether the smallest key is near_'s (else far_'s), after moving the next bucket into an
  // empty near_. REQUIRES: !empty().
  bool near_first() {
    AFASIM_ASSERT(size_ > 0, "EventQueue: the front of an empty queue");
    if (near_.empty() && wheel_size_ > 0) load_next_bucket();
    return near_before_far();
  }
  // Whether the smallest key is near_'s, the wheel's next bucket not counted. REQUIRES: !empty().
  bool near_before_far() const { return far_.empty() || (!near_.empty() && near_.top() < far_.top()); }
  // Pops far_'s top (REQUIRES: it is the smallest key), moving the cursor up to its bucket.
  EventKey pop_far();
  // The first non-empty bucket after the cursor's. REQUIRES: wheel_size_ > 0.
  std::uint64_t next_bucket() const;
  // Moves the first non-empty bucket after the cursor into near_ and makes it the cursor's.
  // REQUIRES: wheel_size_ > 0.
  void load_next_bucket();
  void load_bucket(std::uint64_t bucket);
  // pop() when near_ is empty and the wheel is not: the next bucket's key taken straight from
  // its node when it holds only one and far_ has nothing earlier (most pops: events are
  // sparser than the buckets), else the bucket loaded into near_ as top() does.
  EventKey pop_next_bucket();
  // Unlinks `bucket`'s list (index `index`) from the wheel and makes it the cursor's.
  void close_bucket(std::uint64_t bucket, std::size_t index);

  Heap near_;  // keys of buckets up to cursor_
  Heap far_;   // keys beyond the wheel when pushed
  std::uint64_t cursor_;  // the current bucket: the wheel holds buckets (cursor_, cursor_ + kBuckets)
  std::array<std::uint32_t, kBuckets> heads_;  // first node of each bucket (by bucket % kBuckets)
  std::array<std::uint64_t, kWords> bits_{};   // bucket non-empty
  std::uint64_t summary_ = 0;                  // word of bits_ non-zero
  std::vector<Node> nodes_;
  std::uint32_t free_node_ = kNone;
  std::size_t wheel_size_ = 0;
  std::size_t size_ = 0;
};

}  // namespace afasim::sim
