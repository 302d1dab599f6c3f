// sim::Ring<T> — a first-in first-out queue in one array (a circular buffer whose size is a
// power of two, doubled when full): what the write cache keeps per volume in destage and
// eviction order, one entry per block that became dirty or clean.
//
// std::deque held them before: a 512-byte node from malloc for every 32 entries, each on
// memory never touched before, and as the cache filled (issue 16's RAID 5 write job: 777 K
// new blocks in the 3 s it measures) those allocations were 2-3 % of the time
// (docs/performance.md, twentieth session). Here the array grows by doubling and, from 2 MiB,
// is whole huge pages (sim::CacheLineAllocator). It gives memory back as the entries go, as the deque did: an
// array of more than kShrinkAboveSlots slots halves when fewer than an eighth are in use (a
// cache that filled a volume and drained it would otherwise keep up to 64 MiB for each of its
// FIFOs); release() frees it. How many entries there may be is the caller's bound.
//
// For trivially copyable T (entries are moved by copying). Not thread-safe.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

#include "sim/assert.h"
#include "sim/cache_line_allocator.h"

namespace afasim::sim {

template <typename T>
class Ring {
  static_assert(std::is_trivially_copyable_v<T>, "sim::Ring: entries are moved by copying");

 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // REQUIRES: !empty().
  const T& front() const {
    AFASIM_ASSERT(size_ > 0, "sim::Ring::front: empty");
    return slots_[head_];
  }
  // REQUIRES: !empty().
  void pop_front() {
    AFASIM_ASSERT(size_ > 0, "sim::Ring::pop_front: empty");
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    if (size_ < slots_.size() / 8 && slots_.size() > kShrinkAboveSlots) resize(slots_.size() / 2);
  }
  // `t` by value: it may be an entry of this ring, which growing moves.
  void push_back(T t) {
    if (size_ == slots_.size()) resize(slots_.empty() ? kMinSlots : slots_.size() * 2);
    slots_[(head_ + size_) & (slots_.size() - 1)] = t;
    ++size_;
  }
  // Removes the entries for which pred(entry) is true, keeping the others in order; returns
  // how many went.
  template <typename Pred>
  std::size_t erase_if(Pred&& pred) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      const T& t = slots_[(head_ + i) & mask];
      if (!pred(t)) slots_[(head_ + kept++) & mask] = t;
    }
    const std::size_t erased = size_ - kept;
    size_ = kept;
    std::size_t slots = slots_.size();
    while (size_ < slots / 8 && slots > kShrinkAboveSlots) slots /= 2;
    if (slots < slots_.size()) resize(slots);
    return erased;
  }
  // Empties the ring (its array is kept for the next entries).
  void clear() {
    head_ = 0;
    size_ = 0;
  }
  // Empties the ring and frees its array.
  void release() {
    clear();
    std::vector<T, CacheLineAllocator<T>>().swap(slots_);
  }
  // Slots of the array (what it takes in memory: capacity() × sizeof(T)).
  std::size_t capacity() const { return slots_.size(); }

  // Arrays up to this many slots are kept however few entries they hold (64 KiB of 16-byte
  // entries): a small FIFO that empties and fills again does not free and map memory each time.
  static constexpr std::size_t kShrinkAboveSlots = 4096;

 private:
  static constexpr std::size_t kMinSlots = 16;
  // Moves the entries, in order, to an array of `slots` (a power of two >= size_).
  void resize(std::size_t slots) {
    std::vector<T, CacheLineAllocator<T>> moved(slots);
    for (std::size_t i = 0; i < size_; ++i) moved[i] = slots_[(head_ + i) & (slots_.size() - 1)];
    slots_.swap(moved);
    head_ = 0;
  }

  std::vector<T, CacheLineAllocator<T>> slots_;  // size 0 or a power of two
  std::size_t head_ = 0;                         // the front's slot
  std::size_t size_ = 0;
};

}  // namespace afasim::sim
