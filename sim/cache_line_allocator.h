// sim::CacheLineAllocator<T> — a std::allocator that starts every allocation on a 64-byte
// cache line, for containers whose elements are laid out so that what one access reads sits in
// as few lines as it can (an event heap's four children, a volume's read-ahead streams): with
// malloc's 16-byte alignment the same layout straddles one line more.
#pragma once

#include <cstddef>
#include <new>

namespace afasim::sim {

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::size_t kLineBytes = 64;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kLineBytes}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{kLineBytes}); }
  bool operator==(const CacheLineAllocator&) const { return true; }
};

}  // namespace afasim::sim
