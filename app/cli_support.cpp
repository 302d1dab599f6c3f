// Option checks and the progress line of long runs (app/commands.h).
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "app/commands.h"

namespace afasim::app {

CLI::Validator seed_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ptr != end || ec != std::errc())
          return "a seed is a whole number from 0 to 18446744073709551615, got " + text;
        return {};
      },
      "SEED");
}

CLI::Validator finite_range_check(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::size_t used = 0;
        double v = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || !std::isfinite(v) || v < lo || v > hi)
          return "must be a number from " + CLI::detail::to_string(lo) + " to " + CLI::detail::to_string(hi) +
                 ", got " + text;
        return {};
      },
      "NUMBER in [" + CLI::detail::to_string(lo) + " - " + CLI::detail::to_string(hi) + "]");
}

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

void add_volume_options(CLI::App* cmd, const std::string& creator, std::string& raid_type, std::string& provisioning,
                        std::string& config_dir, bool& quiet) {
  cmd->add_option("--raid-type", raid_type, "RAID type of the volumes the " + creator + " creates")
      ->check(CLI::IsMember({"RAID10", "RAID5"}))
      ->capture_default_str();
  cmd->add_option("--provisioning", provisioning, "thin or fixed volumes")
      ->check(CLI::IsMember({"thin", "fixed"}))
      ->capture_default_str();
  cmd->add_option("--config-dir", config_dir, "Read presets from this folder instead of the built-in ones");
  cmd->add_flag("--quiet", quiet, "No progress lines on stderr");
}

}  // namespace afasim::app
