// How many seeds a randomized test sweeps: AFASIM_SEEDS overrides the test's default (the
// `torture` ctest label sets it to run the long sweeps).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace afasim::testing {

inline constexpr long kMaxSeeds = 1'000'000;

// AFASIM_SEEDS's text as a seed count: a decimal integer 1..kMaxSeeds, else nullopt. Zero
// is refused: a sweep of zero seeds checks nothing and would pass.
inline std::optional<int> parse_seed_count(const std::string& text) {
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const long n = std::strtol(text.c_str(), nullptr, 10);
  if (n < 1 || n > kMaxSeeds) return std::nullopt;
  return static_cast<int>(n);
}

// The sweep's seed count: AFASIM_SEEDS when set, else `default_count`; divided by `divisor`
// for sub-sweeps that cost more per seed, never below 1. Throws std::invalid_argument (the
// test fails, naming the variable) when AFASIM_SEEDS is set but not 1..kMaxSeeds.
inline int seed_count(int default_count, int divisor = 1) {
  int n = default_count;
  if (const char* env = std::getenv("AFASIM_SEEDS")) {
    const std::optional<int> parsed = parse_seed_count(env);
    if (!parsed)
      throw std::invalid_argument("AFASIM_SEEDS must be a whole number of seeds from 1 to " +
                                  std::to_string(kMaxSeeds) + ", got \"" + env + "\"");
    n = *parsed;
  }
  return std::max(1, n / divisor);
}

}  // namespace afasim::testing
