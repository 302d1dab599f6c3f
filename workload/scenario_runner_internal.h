// The scenario runner's class (scenario_runner.h's run_scenario), shared by its two files:
// scenario_runner.cpp (the per-I/O run, the timeline, the report) and
// scenario_runner_wear.cpp (the wear measurement, fast-forward and the clean stop).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/array.h"
#include "sim/simulator.h"
#include "workload/fio_runner.h"
#include "workload/scenario_runner.h"

namespace afasim::workload::detail {

using controller::Id;
using sim::Status;
using sim::Time;

// Progress granularity: the loop advances the simulation in steps of at most this much
// simulated time and offers a status line after each (fio's own status interval).
constexpr Time kProgressStep = 100 * sim::kMillisecond;
// The clean stop at the end of a run waits at most this long for the write cache to drain
// (16 MiB destages in milliseconds; 4 GiB of random 4 KiB blocks in a few seconds). A cache
// that cannot drain (its controller down) is reported as it is.
constexpr Time kCleanStopMax = 60 * sim::kSecond;

// "12.345 s".
std::string seconds_text(Time t);

class Runner {
 public:
  Runner(const Scenario& s, const config::Catalog& catalog, const ScenarioRunOptions& options)
      : s_(s), catalog_(catalog), options_(options), sim_(s.seed) {}

  sim::Result<ScenarioReport> run();

 private:
  Status build_array();
  Status create_policies_and_volumes();
  Status create_workload_volumes();
  Status create_sessions();
  void schedule();
  void start_workload(std::size_t i);
  void apply(const TimelineAction& a);
  Status apply_change(const TimelineAction& a);
  void fail(Status st);
  void on_completion(std::size_t workload, const FioCompletion& c);
  // One failed I/O, or one job stopped by an error of its own: counted, the first one kept.
  void count_error(std::size_t workload, const std::string& message);
  void sample(Time end, Time length);
  void open_row();
  bool all_done() const;
  Status stalled() const;
  void progress() const;
  void finish();
  // The report's rows fit its bounds (kMaxTimelineRows, kMaxTimelineCells), known before the run.
  Status check_row_budget(std::int64_t cells_per_row) const;
  // Fast-forward (wear.fast_forward): stops the workloads, then advances wear in epochs.
  Status fast_forward();
  void begin_wear_measurement();
  // A warning per workload that ran below its rate_iops over the window fast-forward projects.
  void warn_if_short_of_rate();
  void sample_wear();
  // The end of a run is a clean stop of the array, as `afasim serve` on SIGTERM: the write
  // cache is destaged, so the SSDs (wear, counters) hold every acknowledged write.
  void stop_cleanly();
  // "FILE: " or "FILE: workloads[1].fio_file: ", before a message that names the job file.
  std::string job_prefix(const ScenarioWorkload& w) const;
  Status check_log_dir() const;

  const Scenario& s_;
  const config::Catalog& catalog_;
  const ScenarioRunOptions& options_;
  // Declaration order is destruction order reversed: sessions go first, the simulator last.
  sim::Simulator sim_;
  controller::MemoryJournal journal_;
  std::unique_ptr<controller::Array> array_;
  std::vector<std::unique_ptr<FioSession>> sessions_;

  Id pool_id_ = 0;
  std::map<std::string, Id> policy_ids_;
  std::map<Id, std::string> created_by_;   // volume id → the key that created it
  std::map<Id, std::size_t> volume_slot_;  // volume id → index in report_.volumes
  std::size_t actions_applied_ = 0;
  Status failure_;
  ScenarioReport report_;
  TimelineRow open_;  // the interval being counted
  sim::Histogram open_latency_ns_;
  std::vector<sim::Histogram> open_volume_latency_ns_;  // per volume slot, while detail is kept
  std::optional<Time> io_end_;          // the per-I/O run's end when fast-forward followed it
  std::vector<bool> stopped_at_io_end_;  // per session: still running when it was stopped
  std::vector<std::int64_t> ios_at_measure_;  // per workload: completed I/Os at measure_from
};

}  // namespace afasim::workload::detail
