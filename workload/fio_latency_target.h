// fio's latency target (fio 3.33 io_u.c lat_target_*, HOWTO "latency_target"): the job looks
// for the highest queue depth, up to iodepth, at which `latency_percentile` percent of its
// I/Os complete within `latency_target`, judged over windows of `latency_window`. It starts at
// depth 1 and doubles while a window succeeds; the first failure bounds the search, which then
// bisects between the last depth that held and the one that failed. Once a success leaves the
// depth where it was, the queue drains, the job's statistics are reset and it runs one more
// window at that depth: what it reports is that run, and its depth (`latency_run=1` keeps
// adjusting instead, and never resets). With `latency_percentile=100` one late I/O is a failed
// window at once; at depth 1 it is the job's error (ETIMEDOUT), as is any I/O over
// `max_latency`. What a storage engineer uses it for: "how many IOPS does this LUN give at a
// p99 under 1 ms, and at what queue depth".
//
// Not thread-safe (model thread).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sim/status.h"
#include "sim/time.h"

namespace afasim::workload {

// latency_target=, latency_window=, latency_percentile=, latency_run=, max_latency=.
struct LatencyTargetSpec {
  sim::Time target_ns = 0;   // 0: no search (fio's default); fio's text is µs without a unit
  sim::Time window_ns = 0;   // each window's length (fio keeps µs: whole microseconds)
  double percentile = 100;   // of a window's I/Os within the target, 0 to 100
  bool run = false;          // latency_run: keep adjusting; never settle on a final run
  // max_latency= by direction (read, write, trim), ns; 0: none. An I/O over it fails the job.
  std::array<sim::Time, 3> max_ns{};
  // disable_lat=1 or gtod_reduce=1: fio takes no I/O's latency against either limit (every
  // window of the search holds).
  bool judged = true;
  bool enabled() const { return target_ns > 0; }
  bool any() const { return enabled() || max_ns[0] > 0 || max_ns[1] > 0 || max_ns[2] > 0; }
};

// Parses latency_percentile=P (fio's float list of one value: 0 to 100, optional '%').
// kInvalidArgument naming what is wrong.
sim::Status parse_latency_percentile(std::string_view value, double& percentile);

// One clone's search, the state fio keeps in its thread_data (latency_qd, _low, _high,
// _stable_count, _end_run, the window's start and I/O count, its failed I/Os).
class LatencyTargetSearch {
 public:
  // What the job must do after an event of the search.
  enum class Step {
    kNone,
    kQuiesce,   // the depth fell: let every I/O in flight complete, then new_cycle()
    kFinalRun,  // settled: drain, reset the job's statistics and runtime, then new_cycle()
    kDone,      // the final run's window held at the same depth: the job ends
    kFatal,     // a late I/O at depth 1 with latency_percentile=100: ETIMEDOUT
  };

  // REQUIRES: spec.enabled(), iodepth >= 1.
  LatencyTargetSearch(const LatencyTargetSpec& spec, int iodepth);

  // fio lat_target_init (at the start, and when ramp_time ends, unless in the final run):
  // depth 1, bounds [1, iodepth], a window from `now`; `completed` counts the job's I/Os.
  void reset(sim::Time now, std::uint64_t completed);
  // fio lat_new_cycle: a window starts at `now`, after `completed` I/Os, none late yet.
  void new_cycle(sim::Time now, std::uint64_t completed);
  // fio lat_target_failed: an I/O completed later than the target.
  Step on_late_io();
  // fio lat_target_check: once the window has run its length, judge it (no I/O completed in
  // it is a failed window, as fio's 0/0). A success that moves the depth starts the next
  // window here; after kQuiesce and kFinalRun the caller starts it once the queue is empty.
  Step check(sim::Time now, std::uint64_t completed);

  int depth() const { return depth_; }
  bool final_run() const { return end_run_; }

 private:
  Step ramp_down();  // fio __lat_target_failed
  Step ramp_up();    // fio lat_target_success

  LatencyTargetSpec spec_;
  int iodepth_;
  int depth_ = 1;
  int low_ = 1;
  int high_ = 1;
  int stable_count_ = 0;
  bool end_run_ = false;
  sim::Time window_start_ = 0;
  std::uint64_t window_ios_ = 0;  // `completed` when the window began
  std::uint64_t late_ios_ = 0;
};

}  // namespace afasim::workload
