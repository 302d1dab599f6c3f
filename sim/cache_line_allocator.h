// sim::CacheLineAllocator<T> — a std::allocator that starts every allocation on a 64-byte
// cache line, for containers whose elements are laid out so that what one access reads sits in
// as few lines as it can (an event heap's four children, a volume's read-ahead streams): with
// malloc's 16-byte alignment the same layout straddles one line more.
//
// Allocations of kHugePageBytes (2 MiB) and more are whole transparent huge pages
// (allocate_lines): the model's large tables — the write cache's index, blocks and FIFOs —
// fill with the cache, and on the development machine (a VM) a 4 KiB page
// fault cost ~12 us: 256 MB touched took 780 ms in 4 KiB pages and 18 ms in 2 MiB ones
// (docs/performance.md, twentieth session).
#pragma once

#include <cstddef>
#include <new>

namespace afasim::sim {

// The size from which allocate_lines maps whole huge pages: an x86-64 transparent huge page.
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Whether allocate_lines maps huge pages at all. Not under AddressSanitizer (make fuzz): a
// mapping of our own has no red zones around it, so every allocation goes to operator new.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kMapsHugePages = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kMapsHugePages = false;
#else
inline constexpr bool kMapsHugePages = true;
#endif
#else
inline constexpr bool kMapsHugePages = true;
#endif

// `bytes` of memory starting on a 64-byte line. From kHugePageBytes up: an anonymous mapping
// aligned to kHugePageBytes, rounded up to a whole number of them and advised as huge pages
// (madvise MADV_HUGEPAGE; where the kernel will not, it stays 4 KiB pages, nothing fails).
// Throws std::bad_alloc when there is no memory.
void* allocate_lines(std::size_t bytes);
// Frees what allocate_lines(bytes) returned, with the same `bytes`.
void deallocate_lines(void* p, std::size_t bytes) noexcept;

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::size_t kLineBytes = 64;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= kLineBytes, "sim::CacheLineAllocator: aligned beyond a cache line");
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_lines(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { deallocate_lines(p, n * sizeof(T)); }
  bool operator==(const CacheLineAllocator&) const { return true; }
};

}  // namespace afasim::sim
