// How many seeds a randomized test sweeps: AFASIM_SEEDS overrides the test's default (the
// `torture` ctest label sets it to run the long sweeps).
#pragma once

#include <cstdlib>

namespace afasim::testing {

inline int seed_count(int default_count) {
  const char* env = std::getenv("AFASIM_SEEDS");
  return env ? std::atoi(env) : default_count;
}

}  // namespace afasim::testing
