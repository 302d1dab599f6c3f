// qos::Scheduler's internals shared by its two source files (scheduler.cpp: filing,
// dispatch and requests; scheduler_volumes.cpp: volumes, settings and status). Not part of
// the library's interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "qos/cost.h"
#include "qos/scheduler.h"
#include "sim/ring.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::qos::detail {

using sim::Status;
using sim::Time;

// A clock this far out means "never" (a max of 0); kept well below kTimeMax so that adding an
// interval to it cannot overflow.
inline constexpr Time kNever = sim::kTimeMax / 4;

// Time `cost_units` take at `iops` 4 KiB IOPS, rounded to the nearest nanosecond; kNever for
// a rate of 0.
inline Time interval(std::int64_t cost_units, std::int64_t iops) {
  if (iops <= 0) return kNever;
  const __int128 n = static_cast<__int128>(cost_units) * sim::kSecond;
  const __int128 d = static_cast<__int128>(kCostUnitsPerIo) * iops;
  const __int128 q = (n + d / 2) / d;
  return q > kNever ? kNever : static_cast<Time>(q);
}

// interval(cost_units, iops) at iops × kPartsPerMillion / sum_ppm: a reservation held in
// proportion (Scheduler::add_volume).
inline Time interval_scaled(std::int64_t cost_units, std::int64_t iops, std::int64_t sum_ppm) {
  if (iops <= 0) return kNever;
  const __int128 n = static_cast<__int128>(cost_units) * sim::kSecond * sum_ppm;
  const __int128 d = static_cast<__int128>(kCostUnitsPerIo) * iops * kPartsPerMillion;
  const __int128 q = (n + d / 2) / d;
  return q > kNever ? kNever : static_cast<Time>(q);
}

inline Status check_share(std::int64_t share_ppm) {
  if (share_ppm < 0 || share_ppm > kShareMaxPpm)
    return sim::invalid_argument("share_ppm must be between 0 and " + std::to_string(kShareMaxPpm) +
                                 ", got " + std::to_string(share_ppm));
  return Status::ok();
}

inline Time add(Time t, Time d) {
  return std::min(kNever, t + d);
}

// The scheduler's own bound on the ids it takes (the array hands out far fewer:
// controller::kMaxVolumeId).
inline constexpr std::int64_t kIdsBelow = std::int64_t{1} << 31;

}  // namespace afasim::qos::detail

namespace afasim::qos {

// Laid out for the path of every I/O of a volume without a reservation or a limit: submit's
// fast path and complete() read and write the first cache line only; the settings and tags
// (the second) and the rest are touched when the volume queues or is paced. With many active
// volumes each I/O finds its volume cold: one line from memory per I/O, where the first
// order spread it over five.
struct alignas(64) Scheduler::Volume {
  // Line 1: submit and complete.
  int resource = 0;
  State state = State::kIdle;
  // Neither a min nor a max: settings' answer kept here, so that submit's test of the common
  // case (no QoS policy) reads no second line. Set with the settings (set_settings()).
  bool unlimited = true;
  // Bumped whenever the head's filing changes; stale heap entries differ.
  std::uint32_t version = 0;
  // queue.size() (at most queue_depth_max), so that submit need not touch the queue.
  std::int32_t queued = 0;
  std::int64_t second = -2;  // the simulated second `this_second` counts
  std::int64_t this_second = 0, last_second = 0;
  sim::Time head_since = 0;  // when the head request became the head
  std::int64_t dispatched = 0, completed = 0;
  // Line 2: submit.
  Settings settings;
  sim::Time head_r = 0;            // the head's reservation tag
  sim::Time head_l = 0;            // the head's limit tag: it may not go before this
  // The rest.
  VolumeId id = 0;
  sim::Time r_clock = 0;          // reservation pace: next R tag at the min rate
  sim::Time m_clock = 0;          // max pace: an I/O at or after this is within max_iops
  sim::Time b_clock = 0;          // burst pace: no I/O before this (burst_iops)
  sim::Time credit_ns = 0;        // burst credit, in seconds of running at burst_iops
  sim::Time limited_since = 0;    // while kLimited: when the current hold began
  std::int64_t share_ppm = 0;  // of its resource's guarantee, when it has a min (add_volume)
  sim::Time throttled_ns = 0;     // closed holds
  std::int64_t reservation = 0, burst = 0;
  // Its waiting requests, oldest first. A ring, not a std::deque: the volumes are held in the
  // scheduler's pages 16 ids at a time (sim::IdTable), and a deque allocates ~600 bytes empty.
  sim::Ring<Request> queue;

  void set_settings(const Settings& s) {
    settings = s;
    unlimited = !has_min() && !has_max();
  }
  bool has_min() const { return settings.min_iops && *settings.min_iops > 0; }
  bool has_max() const { return settings.max_iops.has_value(); }
  std::int64_t max() const { return *settings.max_iops; }
  bool has_burst() const {
    return has_max() && settings.burst_iops && *settings.burst_iops > max();
  }
  std::int64_t burst_above_max() const { return *settings.burst_iops - max(); }
};

}  // namespace afasim::qos
