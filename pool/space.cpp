#include "pool/space.h"

#include <string>

namespace afasim::pool {

sim::Status check_space_thresholds(const std::vector<int>& t) {
  if (t.empty() || t.size() > 5) return sim::unprocessable("space_thresholds_percent must list 1 to 5 percentages");
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] < 1 || t[i] > 100)
      return sim::unprocessable("space_thresholds_percent values must be 1 to 100, got " + std::to_string(t[i]));
    if (i > 0 && t[i] <= t[i - 1]) return sim::unprocessable("space_thresholds_percent must be strictly increasing");
  }
  return sim::Status::ok();
}

std::vector<ThresholdCrossing> thresholds_crossed(const std::vector<int>& thresholds, std::int64_t usable,
                                                  std::int64_t raw_before, std::int64_t raw_after) {
  std::vector<ThresholdCrossing> out;
  if (usable == 0) return out;
  const double before = 100.0 * static_cast<double>(raw_before) / static_cast<double>(usable);
  const double after = 100.0 * static_cast<double>(raw_after) / static_cast<double>(usable);
  for (std::size_t i = 0; i < thresholds.size(); ++i)
    if (before < thresholds[i] && after >= thresholds[i]) out.push_back({i, thresholds[i], after});
  return out;
}

}  // namespace afasim::pool
