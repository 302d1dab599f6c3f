// The real-time pacer: keeps virtual time at wall time × speed in serve mode.
//
// The pacer never reads a clock itself (nothing in the model does); the serve loop passes
// in steady-clock readings in nanoseconds. With pacing off (`--pace none`) the model runs
// as fast as the host can and virtual time only follows events. Not thread-safe.
#pragma once

#include <cstdint>

#include "sim/time.h"

namespace afasim::sim {

class Pacer {
 public:
  enum class Mode { kRealtime, kNone };

  // `speed` is virtual seconds per wall second (1.0 = real time). REQUIRES: speed > 0.
  explicit Pacer(Mode mode = Mode::kRealtime, double speed = 1.0);

  Mode mode() const { return mode_; }
  bool paced() const { return mode_ == Mode::kRealtime; }

  // Anchors virtual time `virtual_now` to wall time `wall_now_ns`.
  void start(Time virtual_now, std::int64_t wall_now_ns);
  // The virtual time that corresponds to `wall_now_ns`: the model may run events up to it.
  Time virtual_at(std::int64_t wall_now_ns) const;
  // The wall time at which virtual time `t` falls due.
  std::int64_t wall_at(Time t) const;

 private:
  Mode mode_;
  double speed_;
  Time virtual_origin_ = 0;
  std::int64_t wall_origin_ns_ = 0;
};

}  // namespace afasim::sim
