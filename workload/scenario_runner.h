// Runs a loaded Scenario in virtual time and reports it (docs/scenarios.md).
//
// The runner builds a fresh array for the scenario's system (configuration in a
// MemoryJournal: nothing is written to disk), creates its QoS policies and volumes, then
// the volumes its workloads name that the scenario does not declare, starts each workload
// (a FioSession) at its start time, applies the timeline's actions at theirs, and every
// report interval samples the array into one timeline row. It stops at duration_s, or when
// every workload has finished and every action has been applied (at the end of that
// interval).
//
// What is counted: every I/O a workload completes, its ramp_time included (the timeline
// shows what the array did); successful I/O gives IOPS, bandwidth and latency, failed I/O
// (for example ENOSPC on a full thin pool) is counted as an error. A failed I/O stops the
// fio job that issued it, as fio does.
//
// Deterministic: the same scenario and seed give the same report, byte for byte in both
// formats. The progress callback only reads; it never changes the run.
// Not thread-safe: run_scenario owns its simulator and array for the duration of the call.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/preset.h"
#include "controller/array.h"
#include "sim/histogram.h"
#include "sim/status.h"
#include "sim/time.h"
#include "workload/scenario.h"

namespace afasim::workload {

// Totals of one data direction.
struct DirectionTotals {
  std::int64_t ios = 0;    // successful completions
  std::int64_t bytes = 0;  // their bytes
  sim::Histogram latency_ns;
};

// Totals of one workload, or of the whole array.
struct WorkloadTotals {
  std::string name;        // the workload's name, or "array"
  sim::Time start_ns = 0;  // when it started
  sim::Time end_ns = 0;    // when its last job finished, or the end of the run
  bool stopped = false;    // still running when duration_s ended the run
  std::array<DirectionTotals, kDirections> direction;  // index_of(Direction)
  // Failed completions, and jobs stopped by an error of their own (a verify mismatch,
  // rate_iops_min not met: one each).
  std::int64_t errors = 0;
  std::string first_error;  // "12.345 s: no space ..." or empty
  sim::Histogram latency_ns;                           // reads and writes (not trims)
};

// One report interval: (end_ns − length_ns, end_ns].
struct TimelineRow {
  sim::Time end_ns = 0;
  sim::Time length_ns = 0;  // the interval, or less for a last row cut by duration_s
  std::int64_t read_ios = 0, write_ios = 0;
  std::int64_t read_bytes = 0, write_bytes = 0;
  std::int64_t errors = 0;
  std::uint64_t latency_count = 0;   // successful I/Os the three latency figures describe
  std::int64_t latency_ns_mean = 0;  // rounded to whole ns
  std::int64_t latency_ns_p99 = 0;
  std::int64_t latency_ns_max = 0;
  // Rebuild progress at end_ns; nullopt when no rebuild has started yet.
  std::optional<double> rebuild_percent;
  std::int64_t pool_allocated_bytes = 0;  // host bytes of allocated extents, at end_ns
  double pool_allocated_percent = 0;      // raw allocated ÷ raw usable × 100, at end_ns
  std::vector<std::int64_t> volume_ios;   // per ScenarioReport::volumes entry, both directions
  // Per ScenarioReport::volumes entry, the interval's bytes and latency (the HTML report's
  // per-volume MB/s and latency charts). Empty once the run has passed kMaxDetailCells
  // (rows × volumes): long runs keep volume_ios only.
  struct VolumeDetail {
    std::int64_t bytes = 0;           // both directions, successful I/O
    float latency_us_p50 = 0;         // 0 when no I/O completed
    float latency_us_p99 = 0;
    float latency_us_max = 0;
  };
  std::vector<VolumeDetail> volume_detail;
  std::int64_t cache_dirty_bytes = 0;  // both controllers' dirty write cache, at end_ns
};

// Rows × volumes for which TimelineRow::volume_detail is kept (about 40 MB at the bound).
inline constexpr std::int64_t kMaxDetailCells = 2'000'000;

struct ReportVolume {
  controller::Id id = 0;
  std::string name;
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  controller::Provisioning provisioning = controller::Provisioning::kThin;
  std::int64_t capacity_bytes = 0;
  std::int64_t allocated_bytes = 0;                                  // at the end
  controller::VolumeState state = controller::VolumeState::kOnline;  // at the end
  controller::Id preferred_controller = 1;
  controller::QosSettings qos;  // effective, at the end
  std::string created_by;       // "volumes[0]" or "workloads[1]"
};

struct AppliedAction {
  std::string key;  // "timeline[2]"
  sim::Time at_ns = 0;
  std::string description;  // TimelineAction::describe()
  std::string note;
};

// Every SSD's percent of rated endurance used at one time (drive index order).
struct WearSample {
  sim::Time t_ns = 0;
  std::vector<double> percent;
};

// Wear of the run (docs/wear-leveling.md): at the end, and over time.
struct ScenarioWearReport {
  controller::WearLevelingOptions options;
  controller::WearSummary summary;           // at the end
  std::vector<controller::DriveWear> drives;  // at the end, drive index order
  // At the end of the per-I/O run, every wear.sample_every_s of fast-forward, and at the
  // end (one sample at the end without fast-forward).
  std::vector<WearSample> over_time;
  bool fast_forward = false;
  sim::Time fast_forward_from_ns = 0;  // the end of the per-I/O run
  sim::Time measured_from_ns = 0;      // the rates' window: [measured_from, fast_forward_from)
  sim::Time epoch_ns = 0;
};

struct ScenarioReport {
  std::string file_name;
  std::string name;
  std::string description;
  std::string system;        // preset name
  std::string system_model;  // "ISE 860 G3"
  std::uint64_t seed = 0;
  std::optional<sim::Time> duration_ns;
  sim::Time interval_ns = 0;
  sim::Time end_ns = 0;    // simulated time the run ended
  std::string end_reason;  // "duration_s reached" or "workloads finished"
  std::string afasim_version = "0.1.0";
  std::vector<std::string> warnings;

  std::vector<ReportVolume> volumes;      // id order; TimelineRow::volume_ios follows it
  std::vector<WorkloadTotals> workloads;  // scenario order
  WorkloadTotals array;                   // every workload together, over the whole run
  std::vector<AppliedAction> actions;     // in the order they were applied
  std::vector<TimelineRow> timeline;
  std::vector<controller::Event> events;      // oldest first
  controller::PoolCapacity pool;              // at the end
  controller::RebuildStatus rebuild;          // at the end
  std::vector<controller::DriveInfo> drives;  // at the end
  ScenarioWearReport wear;
};

struct ScenarioRunOptions {
  // Called every 100 ms of simulated time with a one-line status (for a progress line);
  // the caller decides whether to print. Reading only: never changes the run.
  std::function<void(const std::string& line)> progress;
  // Where the workloads' write_*_log files go (created when a workload writes one); empty:
  // the current folder. A sweep gives each run its own (DIR/logs/point-P-seed-S), and then a
  // log path that leaves it (absolute, or with ..), which every run would write over, is refused.
  std::string log_dir;
};

// Runs `scenario` on a fresh array built from `catalog` (which must hold its system).
// Errors: a setup step or timeline action the array refuses is reported as
// "FILE: KEY: the array's message" with the array's code (kUnprocessable, kConflict,
// kNotFound, kNoSpace, kInvalidArgument for an unknown fault type...); kInternal /
// kUnavailable when the array itself cannot be built; kOutOfRange when a run without
// duration_s passes kMaxTimelineRows intervals. I/O errors of workloads are not failures:
// they are in the report.
sim::Result<ScenarioReport> run_scenario(const Scenario& scenario, const config::Catalog& catalog,
                                         const ScenarioRunOptions& options = {});

// The report for people: tables of volumes, workload totals, the timeline, per-volume IOPS,
// the actions and the events.
std::string format_scenario_text(const ScenarioReport& report);
// The same data as JSON ("schema": "afasim.scenario-report/1", docs/scenarios.md).
nlohmann::ordered_json scenario_to_json(const ScenarioReport& report);
std::string format_scenario_json(const ScenarioReport& report);  // 2-space indent, newline
// The same text in pieces, the timeline a row at a time (memory: one row's JSON, not the
// report's whole tree).
void write_scenario_json(const ScenarioReport& report, const std::function<void(std::string_view)>& write);
// Self-contained SVG charts stacked on one simulated-time axis (scenario_html.cpp): IOPS,
// MB/s and latency p50/p99/max per volume (volumes whose lines cannot be told apart drawn
// as one group: mean line, min-max band), rebuild progress and pool allocation, dirty write
// cache; the timeline's actions marked through every panel. Without per-volume detail
// (kMaxDetailCells) the MB/s and latency panels are left out.
std::string format_scenario_svg(const ScenarioReport& report);
// One HTML page (no script, no external file): the charts above and the report's tables
// (volumes, workloads, timeline actions, events).
std::string format_scenario_html(const ScenarioReport& report);

}  // namespace afasim::workload
