// The progress line of long runs (app/commands.h).
#include <chrono>
#include <cstdio>

#include "app/commands.h"

namespace afasim::app {

std::function<void(const std::string&)> progress_printer(std::string prefix) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  return [prefix = std::move(prefix), start, last = start](const std::string& line) mutable {
    const Clock::time_point now = Clock::now();
    if (now - last < std::chrono::seconds(1)) return;
    last = now;
    std::fprintf(stderr, "%s%s (%.0f s wall)\n", prefix.c_str(), line.c_str(),
                 std::chrono::duration<double>(now - start).count());
  };
}

}  // namespace afasim::app
