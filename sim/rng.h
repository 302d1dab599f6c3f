// Seeded random streams (DESIGN.md "Time, threads, determinism").
//
// One root seed per run; each subsystem asks for its own stream by name, so adding random
// draws to one subsystem never shifts another's sequence. The generator is xoshiro256**
// (Blackman & Vigna, 2018), seeded through SplitMix64. Not thread-safe: a stream belongs
// to the model thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace afasim::sim {

class Rng {
 public:
  // A stream for (root_seed, name). Same inputs, same sequence, on every platform.
  Rng(std::uint64_t root_seed, std::string_view stream_name);
  // A stream from a raw 64-bit seed (for derived streams).
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();
  // Uniform integer in [0, bound). REQUIRES: bound > 0. Unbiased (Lemire's method).
  std::uint64_t uniform(std::uint64_t bound);
  // Uniform integer in [lo, hi]. REQUIRES: lo <= hi.
  std::int64_t uniform_range(std::int64_t lo, std::int64_t hi);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform01();
  // True with probability p (clamped to [0, 1]).
  bool bernoulli(double p);
  // Exponentially distributed value with the given mean. REQUIRES: mean > 0.
  double exponential(double mean);
  // A child stream, for per-object streams derived from a subsystem stream.
  Rng split(std::uint64_t salt);

 private:
  std::uint64_t s_[4];
};

// 64-bit FNV-1a of a name, used to derive stream seeds. Stable across platforms.
std::uint64_t hash_name(std::string_view name);
// One SplitMix64 step (Steele, Lea & Flood, 2014): a well-mixed 64-bit value from any 64-bit
// input. Inline: fio's random map calls it in every round of its Feistel permutation.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace afasim::sim
