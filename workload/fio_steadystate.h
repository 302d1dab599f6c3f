// fio's steady-state detection (fio 3.33 steadystate.c, HOWTO "steadystate"): once a second
// of virtual time a job's (with group_reporting, its reporting group's) completed I/Os and
// bytes are sampled; over the last `steadystate_duration` seconds of samples, after
// `steadystate_ramp_time`, the job stops when the samples' largest deviation from their mean
// (`iops`, `bw`) or their least-squares slope (`iops_slope`, `bw_slope`) is under the limit,
// in units or in percent of the mean. What an SSD engineer uses it for: "run until the drive
// is in steady state", SNIA PTS's rule in one line (`ss=iops_slope:10%`).
//
// Not thread-safe (model thread).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"
#include "sim/time.h"

namespace afasim::workload {

// steadystate= (ss=), steadystate_duration= (ss_dur=), steadystate_ramp_time= (ss_ramp=).
struct SteadyStateSpec {
  bool bandwidth = false;  // bw / bw_slope (bytes a second), else iops / iops_slope
  bool slope = true;       // *_slope: the samples' least-squares slope; else max deviation
  bool percent = true;     // the limit is a percentage of the samples' mean
  double limit = 0.01;     // fio's default: iops_slope:0.01%
  int duration_s = 0;      // the window, whole seconds; 0: detection off (fio's default)
  sim::Time ramp_ns = 0;   // no samples until one check interval past this
  bool enabled() const { return duration_s > 0; }
  bool operator==(const SteadyStateSpec&) const = default;
};

// Parses steadystate=KIND:LIMIT[%] into `spec` (duration and ramp untouched), as fio's
// str_steadystate_cb. kInvalidArgument naming what is wrong.
sim::Status parse_steadystate(std::string_view value, SteadyStateSpec& spec);

// One job's (or group's) detection: the window of samples and what the last check found.
struct SteadyStateResult {
  SteadyStateSpec spec;
  bool attained = false;
  double criterion = 0;      // the deviation or slope, in percent of the mean when spec.percent
  double max_deviation = 0;  // I/Os or bytes a second
  double slope = 0;          // I/Os or bytes a second, per second
  std::deque<std::uint64_t> iops;  // the window, oldest first, at most spec.duration_s
  std::deque<std::uint64_t> bw;    // bytes a second, same seconds

  // Adds one second's sample (dropping the oldest past the window) and, once the window is
  // full, checks the criterion; returns whether it holds (attained is then set). O(1)
  // amortized: running sums for the mean and the slope, monotonic queues for the extremes
  // (review 33b: a window of a day of samples cost 27 s of a 3-day run).
  bool add_sample(std::uint64_t ios, std::uint64_t bytes);
  // fio's steadystate_data_mean: the window's sum over its full length (integer).
  std::uint64_t iops_mean() const;
  std::uint64_t bw_mean() const;
  // fio's "ss" text: "iops_slope:0.010000%".
  std::string criterion_name() const;

 private:
  unsigned __int128 sum_y_ = 0;   // of the criterion's series over the window
  unsigned __int128 sum_xy_ = 0;  // Σ i·y_i, i = 0 the oldest
  std::deque<std::uint64_t> max_;  // the window's maxima candidates, decreasing
  std::deque<std::uint64_t> min_;  // minima candidates, increasing
};

}  // namespace afasim::workload
