// sim::Ring<T> — a first-in first-out queue in one array (a circular buffer whose size is a
// power of two, doubled when full): what the write cache keeps per volume in destage and
// eviction order, one entry per block that became dirty or clean.
//
// std::deque held them before: a 512-byte node from malloc for every 32 entries, each on
// memory never touched before, and as the cache filled (issue 16's RAID 5 write job: 2 M
// blocks in 3 s) those allocations were 2 % of the time (docs/performance.md, twentieth
// session). Here the array grows by doubling and, from 2 MiB, is whole huge pages
// (sim::CacheLineAllocator); a pop leaves the array as it is.
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
  }
  void push_back(const T& t) {
    if (size_ == slots_.size()) grow();
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
    return erased;
  }
  // Empties the ring (its array is kept).
  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  static constexpr std::size_t kMinSlots = 16;
  void grow() {
    std::vector<T, CacheLineAllocator<T>> bigger(slots_.empty() ? kMinSlots : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = slots_[(head_ + i) & (slots_.size() - 1)];
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<T, CacheLineAllocator<T>> slots_;  // size 0 or a power of two
  std::size_t head_ = 0;                         // the front's slot
  std::size_t size_ = 0;
};

}  // namespace afasim::sim
