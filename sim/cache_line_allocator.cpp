#include "sim/cache_line_allocator.h"

#include <sys/mman.h>

#include <cstdint>

namespace afasim::sim {
namespace {

constexpr std::size_t kLineBytes = 64;

std::size_t mapped_bytes(std::size_t bytes) {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

bool mapped(std::size_t bytes) { return kMapsHugePages && bytes >= kHugePageBytes; }

}  // namespace

void* allocate_lines(std::size_t bytes) {
  if (!mapped(bytes)) return ::operator new(bytes, std::align_val_t{kLineBytes});
  const std::size_t size = mapped_bytes(bytes);
  if (size < bytes || size > static_cast<std::size_t>(-1) - kHugePageBytes) throw std::bad_alloc();
  // Map one huge page more than needed and give back the unaligned head and the tail.
  void* raw = ::mmap(nullptr, size + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePageBytes - 1) & ~(std::uintptr_t{kHugePageBytes} - 1);
  if (aligned > start) ::munmap(raw, aligned - start);
  const std::uintptr_t end = start + size + kHugePageBytes;
  if (end > aligned + size) ::munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  ::madvise(p, size, MADV_HUGEPAGE);  // advice only: 4 KiB pages still work
#endif
  return p;
}

void deallocate_lines(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  if (!mapped(bytes)) {
    ::operator delete(p, std::align_val_t{kLineBytes});
    return;
  }
  ::munmap(p, mapped_bytes(bytes));
}

}  // namespace afasim::sim
