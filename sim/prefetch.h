// sim::prefetch — starts loading the cache line at `p` into the CPU's caches, for a caller that
// will read it after other work (the per-I/O state of the model is large and cold: a random
// read's extent descriptor, the read cache's table slot, an SSD's die). Speed only: no state
// changes, `p` is never dereferenced and may point anywhere.
//
// Not __builtin_prefetch alone: GCC 12's IPA pure-const pass takes a function whose only effect
// is a __builtin_prefetch for a pure one, and a call to a pure function whose result is unused
// is then deleted — the read cache's prefetch of its table slot, called through two inline
// accessors, was compiled to nothing (found by reading the disassembly, 2026-12-03). The empty
// volatile asm that takes the address is an effect the optimiser keeps.
#pragma once

#include <cstddef>

namespace afasim::sim {

// `write`: the line will be written (prefetchw where the CPU has it).
inline void prefetch(const void* p, bool write = false) {
  if (write) __builtin_prefetch(p, 1);
  else __builtin_prefetch(p, 0);
  asm volatile("" : : "r"(p));
}

// Every line of [p, p + bytes): a structure whose hot part spans several lines.
inline void prefetch_range(const void* p, std::size_t bytes) {
  const char* at = static_cast<const char*>(p);
  for (std::size_t offset = 0; offset < bytes; offset += 64) prefetch(at + offset);
}

}  // namespace afasim::sim
