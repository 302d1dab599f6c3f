#include "sim/rng.h"

#include <cmath>

#include "sim/assert.h"

namespace afasim::sim {
namespace {
inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

std::uint64_t hash_name(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Rng::Rng(std::uint64_t root_seed, std::string_view stream_name)
    : Rng(mix64(root_seed) ^ hash_name(stream_name)) {}

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) {  // the SplitMix64 sequence from `seed`
    s = mix64(x);
    x += 0x9e3779b97f4a7c15ULL;
  }
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

[[gnu::hot]] std::uint64_t Rng::uniform(std::uint64_t bound) {
  AFASIM_ASSERT(bound > 0, "Rng::uniform bound must be positive");
  // Lemire, "Fast Random Integer Generation in an Interval" (2019).
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * bound;
  std::uint64_t low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = -bound % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

std::int64_t Rng::uniform_range(std::int64_t lo, std::int64_t hi) {
  AFASIM_ASSERT(lo <= hi, "Rng::uniform_range needs lo <= hi");
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (span == UINT64_MAX) return static_cast<std::int64_t>(next_u64());
  return lo + static_cast<std::int64_t>(uniform(span + 1));
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

[[gnu::hot]] bool Rng::bernoulli(double p) {
  if (p <= 0) return false;
  if (p >= 1) return true;
  return uniform01() < p;
}

[[gnu::hot]] double Rng::exponential(double mean) {
  AFASIM_ASSERT(mean > 0, "Rng::exponential mean must be positive");
  return -mean * std::log1p(-uniform01());
}

Rng Rng::split(std::uint64_t salt) { return Rng(mix64(next_u64() ^ mix64(salt))); }

}  // namespace afasim::sim
