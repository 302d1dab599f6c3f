#include "datapac/wear.h"

#include <cmath>
#include <limits>

#include "sim/assert.h"

namespace afasim::datapac {

double greedy_random_write_amplification(double alpha) {
  if (!(alpha > 1.0)) return std::numeric_limits<double>::infinity();
  // WA = 1 / (1 − u), where u, the valid fraction of the block GC picks, is the root in
  // (0, 1) of f(u) = u − exp(−α(1 − u)) other than the trivial u = 1. f is concave with
  // f(0) < 0 and its maximum at u_max = 1 − ln(α)/α, where f > 0; so the root lies in
  // (0, u_max) and bisection finds it. (u = −W0(−α e^−α)/α: the Lambert-W form above.)
  double lo = 0.0;
  double hi = 1.0 - std::log(alpha) / alpha;
  for (int i = 0; i < 200 && hi - lo > 1e-15; ++i) {
    const double mid = 0.5 * (lo + hi);
    const double f = mid - std::exp(-alpha * (1.0 - mid));
    if (f < 0)
      lo = mid;
    else
      hi = mid;
  }
  const double u = 0.5 * (lo + hi);
  return 1.0 / (1.0 - u);
}

RateMeter::RateMeter(sim::Time window) : window_(window) {
  AFASIM_ASSERT(window > 0, "RateMeter window must be positive");
}

void RateMeter::roll(sim::Time t) {
  if (t < current_start_ + window_) return;
  const sim::Time windows = (t - current_start_) / window_;
  // The window just finished had current_bytes_; any further elapsed windows were idle.
  previous_rate_ =
      windows == 1 ? static_cast<double>(current_bytes_) / sim::to_seconds(window_) : 0.0;
  current_start_ += windows * window_;
  current_bytes_ = 0;
}

void RateMeter::add(sim::Time t, std::int64_t bytes) {
  roll(t);
  current_bytes_ += bytes;
}

void RateMeter::add_span(sim::Time start, sim::Time duration, std::int64_t bytes) {
  AFASIM_ASSERT(duration >= 0, "RateMeter span must not be negative");
  if (duration < window_) {
    add(start + duration, bytes);
    return;
  }
  const sim::Time end = start + duration;
  roll(end);
  // The span covers at least the whole window before the current one: that window's rate is
  // the span's mean rate. Bytes already counted in the current window stay there.
  previous_rate_ = static_cast<double>(bytes) / sim::to_seconds(duration);
}

double RateMeter::rate(sim::Time now) const {
  if (now < current_start_ + window_) return previous_rate_;
  if (now < current_start_ + 2 * window_)
    return static_cast<double>(current_bytes_) / sim::to_seconds(window_);
  return 0.0;
}

void RateMeter::reset() {
  current_start_ = 0;
  current_bytes_ = 0;
  previous_rate_ = 0;
}

}  // namespace afasim::datapac
