#include "sim/pacer.h"

#include <cmath>

#include "sim/assert.h"

namespace afasim::sim {

Pacer::Pacer(Mode mode, double speed) : mode_(mode), speed_(speed) {
  AFASIM_ASSERT(speed > 0 && std::isfinite(speed), "pacer speed must be positive");
}

void Pacer::start(Time virtual_now, std::int64_t wall_now_ns) {
  virtual_origin_ = virtual_now;
  wall_origin_ns_ = wall_now_ns;
}

Time Pacer::virtual_at(std::int64_t wall_now_ns) const {
  const std::int64_t elapsed = wall_now_ns - wall_origin_ns_;
  if (speed_ == 1.0) return virtual_origin_ + elapsed;
  return virtual_origin_ + static_cast<Time>(std::llround(static_cast<double>(elapsed) * speed_));
}

std::int64_t Pacer::wall_at(Time t) const {
  const Time ahead = t - virtual_origin_;
  if (speed_ == 1.0) return wall_origin_ns_ + ahead;
  return wall_origin_ns_ + static_cast<std::int64_t>(std::llround(static_cast<double>(ahead) / speed_));
}

}  // namespace afasim::sim
