// Pool space: low-space thresholds and the capacity side of admission (docs/capacity.md).
//
// A pool warns as its raw allocation (SSD space held by extents, RAID included) crosses each
// of its thresholds upward; a fixed (thick) volume, or its growth, is admitted only when the
// pool's free raw space holds all its extents. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/status.h"

namespace afasim::pool {

// 1 to 5 strictly increasing percentages in [1, 100]; kUnprocessable otherwise.
sim::Status check_space_thresholds(const std::vector<int>& thresholds_percent);

struct ThresholdCrossing {
  std::size_t level = 0;        // index into the thresholds (0: the first, a warning)
  int threshold_percent = 0;
  double allocated_percent = 0;  // after the change
};

// The thresholds an allocation going from `raw_before` to `raw_after` bytes of
// `raw_usable` crosses upward, lowest first. None when raw_usable is 0.
std::vector<ThresholdCrossing> thresholds_crossed(const std::vector<int>& thresholds_percent,
                                                  std::int64_t raw_usable, std::int64_t raw_before,
                                                  std::int64_t raw_after);

// Whether `raw_needed` bytes of new extents fit in `raw_free` (fixed provisioning).
inline bool fits(std::int64_t raw_needed, std::int64_t raw_free) { return raw_needed <= raw_free; }

}  // namespace afasim::pool
