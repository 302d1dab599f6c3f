#include "sim/assert.h"

#include <cstdio>
#include <cstdlib>

namespace afasim::sim {
namespace {
thread_local std::uint64_t g_seed = 0;
}

void set_current_seed(std::uint64_t seed) { g_seed = seed; }
std::uint64_t current_seed() { return g_seed; }

void assert_fail(const char* condition, std::string_view message, const char* file, int line) {
  std::fprintf(stderr, "afasim: assertion failed: %s: %.*s (%s:%d)", condition,
               static_cast<int>(message.size()), message.data(), file, line);
  if (g_seed != 0) std::fprintf(stderr, " [replay with seed %llu]", (unsigned long long)g_seed);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  std::abort();
}

}  // namespace afasim::sim
