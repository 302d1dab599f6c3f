// sim::Slab<T> — objects named by a small integer id, at addresses that never move, reused
// through a free list: the per-request state of the hot path (a timed host I/O, a timing
// request), which callbacks name by id and which may be reached again while another one is
// being created.
//
// The objects live in chunks of 256 allocated as the slab grows; id → object is a load from
// the chunk table (one cache line for the first 2,048 ids) and an offset, where a vector of
// unique_ptr cost a load from an array as long as the slab, a cache line per 8 ids, usually
// cold on the simulated I/O's next event. Chunks start on a cache line (64 bytes), so an
// object of 64 bytes (an event's action) is one line, not two: malloc's 16-byte alignment put
// every one of them across a line boundary. Objects are constructed once and kept: acquire()
// hands back a released one as it was left (the caller resets what it uses). A slab past
// 2 MiB takes its chunks from whole huge pages (new_chunk). Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/assert.h"
#include "sim/cache_line_allocator.h"

namespace afasim::sim {

template <typename T>
class Slab {
 public:
  static constexpr int kChunkBits = 8;
  static constexpr std::uint32_t kChunk = 1u << kChunkBits;

  Slab() = default;
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;
  Slab(Slab&& other) noexcept { swap(other); }
  Slab& operator=(Slab&& other) noexcept {
    if (this != &other) {
      destroy();
      free_.clear();
      free_count_ = 0;
      size_ = 0;
      region_next_ = nullptr;
      region_left_bytes_ = 0;
      swap(other);
    }
    return *this;
  }
  ~Slab() { destroy(); }

  // An id not in use: a released one (most recently released first), else a new object.
  // REQUIRES: fewer than `limit` objects exist already, when this needs a new one.
  std::uint32_t acquire(std::uint32_t limit = UINT32_MAX) {
    if (free_count_ > 0) return free_[--free_count_];
    return acquire_new(limit);
  }
  // Gives `id` back for reuse. REQUIRES: id came from acquire() and is in use. free_ has room
  // for every object (new_chunk makes it), so this never allocates.
  void release(std::uint32_t id) {
    AFASIM_ASSERT(free_count_ < size_, "sim::Slab: more ids released than acquired");
    free_[free_count_++] = id;
  }

  // REQUIRES: id < size().
  T& operator[](std::uint32_t id) { return chunks_[id >> kChunkBits][id & (kChunk - 1)]; }
  const T& operator[](std::uint32_t id) const { return chunks_[id >> kChunkBits][id & (kChunk - 1)]; }

  // Objects created (in use or free).
  std::uint32_t size() const { return size_; }
  std::uint32_t in_use() const { return size_ - free_count_; }

  void swap(Slab& other) noexcept {
    chunks_.swap(other.chunks_);
    regions_.swap(other.regions_);
    std::swap(region_next_, other.region_next_);
    std::swap(region_left_bytes_, other.region_left_bytes_);
    free_.swap(other.free_);
    std::swap(free_count_, other.free_count_);
    std::swap(size_, other.size_);
  }

 private:
  // A new object (none released): out of acquire()'s line, so that its callers do not save
  // registers for an allocation they seldom make.
  [[gnu::noinline]] std::uint32_t acquire_new(std::uint32_t limit) {
    AFASIM_ASSERT(size_ < limit, "sim::Slab: more objects in use than the caller's bound");
    if (size_ % kChunk == 0) new_chunk();
    return size_++;
  }
  // A chunk's bytes, a whole number of cache lines.
  static constexpr std::size_t kChunkBytes =
      (kChunk * sizeof(T) + CacheLineAllocator<T>::kLineBytes - 1) / CacheLineAllocator<T>::kLineBytes *
      CacheLineAllocator<T>::kLineBytes;
  struct Region {
    void* memory;
    std::size_t bytes;
  };
  // kChunk value-initialised objects on a cache-line boundary. While the slab is under a huge
  // page, each chunk is its own allocation; past that, chunks are carved from regions of whole
  // huge pages (the write cache's millions of blocks fault in 2 MiB at a time, not 4 KiB).
  T* new_chunk() {
    static_assert(alignof(T) <= CacheLineAllocator<T>::kLineBytes,
                  "sim::Slab: objects aligned beyond a cache line");
    if (region_left_bytes_ < kChunkBytes) {
      const bool big = chunks_.size() * kChunkBytes >= kHugePageBytes;
      const std::size_t bytes = big ? std::max(kHugePageBytes, kChunkBytes) : kChunkBytes;
      room_for_one(regions_);
      regions_.push_back(Region{allocate_lines(bytes), bytes});
      region_next_ = static_cast<std::byte*>(regions_.back().memory);
      region_left_bytes_ = bytes;
    }
    T* raw = reinterpret_cast<T*>(region_next_);
    room_for_one(chunks_);
    free_.resize((chunks_.size() + 1) * kChunk);  // room to release every object
    std::uninitialized_value_construct_n(raw, kChunk);  // on a throw the space stays unused
    region_next_ += kChunkBytes;
    region_left_bytes_ -= kChunkBytes;
    chunks_.push_back(raw);
    return raw;
  }
  // Makes the next push_back unable to throw (capacity doubles, as push_back's would).
  template <typename V>
  static void room_for_one(V& v) {
    if (v.size() == v.capacity()) v.reserve(std::max<std::size_t>(8, v.capacity() * 2));
  }
  void destroy() noexcept {
    // Last first, as delete[] did.
    for (std::size_t c = chunks_.size(); c-- > 0;)
      for (std::uint32_t i = kChunk; i-- > 0;) std::destroy_at(chunks_[c] + i);
    for (const Region& r : regions_) deallocate_lines(r.memory, r.bytes);
    chunks_.clear();
    regions_.clear();
  }

  std::vector<T*> chunks_;
  std::vector<Region> regions_;  // what chunks_ point into
  std::byte* region_next_ = nullptr;
  std::size_t region_left_bytes_ = 0;
  std::vector<std::uint32_t> free_;  // free_[0, free_count_): released ids; as long as the slab
  std::uint32_t free_count_ = 0;
  std::uint32_t size_ = 0;
};

}  // namespace afasim::sim
