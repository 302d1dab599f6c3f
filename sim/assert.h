// Assertions that stay on in every build (STYLE.md, TigerBeetle's habit).
//
// AFASIM_ASSERT(cond, message) checks an invariant of the model; when it does not hold the
// process prints the condition, the message, the file and line, and the seed of the running
// simulation (if one registered it) and aborts. Errors a caller can cause are never
// assertions: they are sim::Status values.
#pragma once

#include <cstdint>
#include <string_view>

namespace afasim::sim {

// Prints the failure and aborts. Never returns.
[[noreturn, gnu::cold]] void assert_fail(const char* condition, std::string_view message, const char* file,
                              int line);

// Records the root seed of the simulation running on this thread, so that a failing
// assertion prints the seed that replays it. Thread-local; 0 means "no simulation".
void set_current_seed(std::uint64_t seed);
std::uint64_t current_seed();

}  // namespace afasim::sim

#define AFASIM_ASSERT(cond, message)                                          \
  do {                                                                        \
    if (!(cond)) [[unlikely]]                                                 \
      ::afasim::sim::assert_fail(#cond, (message), __FILE__, __LINE__);       \
  } while (0)
