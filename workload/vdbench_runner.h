// Runs a VDBench parameter file against an IoTarget (a bare device, docs/vdbench.md) in
// virtual time, and formats the results as VDBench's summary, as JSON, and as a
// latency-versus-I/O-rate SVG of the curve runs.
//
// Each rd= becomes one run per combination of its for-loops; iorate=curve becomes a run at
// the maximum rate followed by one run per curve percentage of the rate that run reached.
// VDBench threads are outstanding I/Os: iorate=max keeps every thread busy (closed loop);
// a fixed or curve rate issues I/Os at exponentially distributed gaps (VDBench's default
// distribution) and an I/O that finds every thread busy waits for one (its response time
// counts from when a thread takes it, as VDBench measures it). Intervals are attributed by
// completion time; avg_ covers the intervals after the warm-up (default: all but the first,
// as VDBench).
//
// Deterministic for a seed. Not thread-safe: runs on the thread that owns the Simulator.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/simulator.h"
#include "sim/status.h"
#include "workload/io_target.h"
#include "workload/vdbench_parm.h"

namespace afasim::workload {

struct VdbenchRunOptions {
  std::uint64_t seed = 1;
  // Quick runs (tests, --elapsed / --interval): > 0 replaces every rd's elapsed / interval;
  // the warm-up then defaults to one interval.
  sim::Time elapsed = 0;
  sim::Time interval = 0;
  std::function<void(const std::string& line)> progress;
};

struct VdInterval {
  int index = 0;               // 1-based
  sim::Time end = 0;           // simulated time at the interval's end
  std::int64_t ios = 0;
  double rate = 0;             // I/Os per second
  double mb_per_second = 0;    // 1024**2 bytes, as VDBench
  double bytes_per_io = 0;
  double read_pct = 0;
  double resp_ms = 0;
  double read_resp_ms = 0;
  double write_resp_ms = 0;
  double resp_max_ms = 0;
  double resp_stddev_ms = 0;
  double queue_depth = 0;      // mean I/Os outstanding (Little's law: rate × response)
};

struct VdRunResult {
  std::string rd;
  std::string rate_label;      // "Uncontrolled MAX", "Uncontrolled curve", "Controlled curve 50%", "1000"
  bool curve = false;          // part of an iorate=curve sequence
  double curve_pct = 0;        // its percentage (0 for the max run)
  double target_rate = 0;      // 0 for max
  std::string for_loops;       // "threads=128 xfersize=4k"
  int threads = 0;
  sim::Time start = 0;
  sim::Time elapsed = 0;
  sim::Time interval = 0;
  bool reached_eof = false;    // a seekpct=eof run that ended at the end of its range
  std::vector<VdInterval> intervals;
  VdInterval avg;
  int avg_from = 0, avg_to = 0;  // interval indexes avg_ covers
};

struct VdbenchReport {
  std::string file;
  std::string target;
  std::uint64_t seed = 0;
  std::vector<VdRunResult> runs;
  // The device's counters after the runs (DeviceTarget::device_stats), when the caller sets
  // them; printed after the runs and under "device" in JSON.
  nlohmann::ordered_json device = nlohmann::ordered_json::object();
};

// Runs every rd of `file` in order. kInvalidArgument (FILE:LINE) when an sd does not fit
// the target's `capacity_bytes`.
sim::Result<VdbenchReport> run_vdbench(IoTarget& target, std::int64_t capacity_bytes,
                                       sim::Simulator& sim, const VdbenchFile& file,
                                       const VdbenchRunOptions& options);

// VDBench's summary: per run a "Starting RD=" line, interval lines and the avg_ line.
std::string format_vdbench_summary(const VdbenchReport& report);
// {"file", "target", "seed", "runs": [{"rd", "rate", ..., "intervals": [...], "avg": {...}}]}.
std::string format_vdbench_json(const VdbenchReport& report);
// The same JSON, handed to `sink` in pieces (at most a run's skeleton or 64 KiB of intervals
// at a time): what `afasim vdbench --output-format json` writes, without the whole text or a
// JSON tree of every interval in memory.
void write_vdbench_json(const VdbenchReport& report, const std::function<void(std::string_view)>& sink);
// Latency (ms) versus I/O rate of every curve sequence, one line per rd; the legend sits
// beside the plot so it hides no data. Empty when the report has no curve run.
std::string format_vdbench_svg(const VdbenchReport& report);

}  // namespace afasim::workload
