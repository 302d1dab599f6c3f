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
// hands back a released one as it was left (the caller resets what it uses). Not
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
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
  Slab(Slab&&) noexcept = default;
  Slab& operator=(Slab&&) noexcept = default;

  // An id not in use: a released one (most recently released first), else a new object.
  // REQUIRES: fewer than `limit` objects exist already, when this needs a new one.
  std::uint32_t acquire(std::uint32_t limit = UINT32_MAX) {
    if (!free_.empty()) {
      const std::uint32_t id = free_.back();
      free_.pop_back();
      return id;
    }
    AFASIM_ASSERT(size_ < limit, "sim::Slab: more objects in use than the caller's bound");
    if (size_ % kChunk == 0) chunks_.push_back(new_chunk());
    return size_++;
  }
  // Gives `id` back for reuse. REQUIRES: id came from acquire() and is in use.
  void release(std::uint32_t id) { free_.push_back(id); }

  // REQUIRES: id < size().
  T& operator[](std::uint32_t id) { return chunks_[id >> kChunkBits][id & (kChunk - 1)]; }
  const T& operator[](std::uint32_t id) const { return chunks_[id >> kChunkBits][id & (kChunk - 1)]; }

  // Objects created (in use or free).
  std::uint32_t size() const { return size_; }
  std::uint32_t in_use() const { return size_ - static_cast<std::uint32_t>(free_.size()); }

 private:
  struct ChunkDeleter {
    void operator()(T* chunk) const {
      // Last first, as delete[] did.
      for (std::uint32_t i = kChunk; i-- > 0;) std::destroy_at(chunk + i);
      CacheLineAllocator<T>().deallocate(chunk, kChunk);
    }
  };
  using Chunk = std::unique_ptr<T[], ChunkDeleter>;
  // kChunk value-initialised objects on a cache-line boundary.
  static Chunk new_chunk() {
    static_assert(alignof(T) <= CacheLineAllocator<T>::kLineBytes,
                  "sim::Slab: objects aligned beyond a cache line");
    T* raw = CacheLineAllocator<T>().allocate(kChunk);
    try {
      std::uninitialized_value_construct_n(raw, kChunk);
    } catch (...) {
      CacheLineAllocator<T>().deallocate(raw, kChunk);
      throw;
    }
    return Chunk(raw);
  }

  std::vector<Chunk> chunks_;
  std::vector<std::uint32_t> free_;
  std::uint32_t size_ = 0;
};

}  // namespace afasim::sim
