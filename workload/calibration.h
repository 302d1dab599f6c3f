// workload::run_calibration — runs the training figures of a system's calibration file
// (config/calibration/<system>.json, perf::Calibration) with the shipped fio job files and
// compares the model with the published figures (`afasim calibrate`,
// docs/performance-model.md "Calibration").
//
// Each distinct (job file, RAID type) runs once on a fresh array; every figure of that run
// reads its metric from the run's last reporting group, or from the group whose first job's
// name starts with the figure's section ("read", "write"). Deterministic for a seed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/preset.h"
#include "perf/calibration.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::workload {

// Both engines' calibration runs: a 256 MiB write cache per controller (instead of 4 GiB)
// reaches destage's steady state within the warm-up; the steady-state rates do not depend on
// its size (the published figures are steady-state ones: the review preconditioned to steady
// state). With 4 GiB, a short run measures the cache absorbing writes (128K writes +40 %).
inline constexpr std::int64_t kCalibrationWriteCacheBytes = 256LL << 20;

// The tolerance a figure must meet (issue 13): throughput ±5 %, mean latency ±10 %,
// latency standard deviation ±30 %, as a fraction of the published value.
double figure_tolerance(perf::FigureMetric metric);

struct FigureResult {
  perf::TrainingFigure figure;
  double model = 0;          // the model's value, in the figure's unit
  double error = 0;          // (model - published) / published
  bool within = false;       // |error| <= figure_tolerance
};

// What times the runs: the controller pair running the fio job files (the product path), or
// perf::ArrayModel alone under the job files' measured load, closed loop (perf/closed_loop.h).
enum class CalibrationEngine { kArray, kModel };

struct CalibrationRunOptions {
  CalibrationEngine engine = CalibrationEngine::kArray;
  std::uint64_t seed = 1;
  // If > 0: every measured job runs this long after `ramp_ns` instead of the job file's
  // runtime and ramp_time (shorter runs for tests; the model's queues fill within a ramp).
  sim::Time runtime_ns = 0;
  sim::Time ramp_ns = 0;
  // Only figures whose id contains this text (empty: all).
  std::string only;
  // Called with one line per run started, for progress output; may be empty.
  std::function<void(const std::string&)> progress;
};

// kInvalidArgument, naming the calibration file and field, unless every figure's job file is
// one of config/workloads and its section names a group there (an empty section is the last
// group, allowed only when that group's jobs are no section's: "lun0", not "write-lun0").
// Checked before any figure runs (hostile review 43: a figure without its section measured the
// writes without a word; a job file or section naming nothing failed only at its turn).
sim::Status check_calibration_figures(const perf::Calibration& calibration);

// Runs every figure of `calibration` on `preset` (those whose id contains options.only, when
// it is set). kNotFound when a figure names a job file that is not among the shipped
// workloads; kInvalidArgument when options.only matches no figure (naming the ids there are);
// the job file's or the array's errors otherwise.
sim::Result<std::vector<FigureResult>> run_calibration(const config::Catalog& catalog,
                                                       const config::SystemPreset& preset,
                                                       const perf::Calibration& calibration,
                                                       const CalibrationRunOptions& options);

// The table `afasim calibrate` prints: one line per figure (model, published, error, within
// tolerance), a summary line, then the fitted parameters, each with the figures it was fitted
// to, and the parameter values that are still provisional.
// One point of a sweep on the model engine: a reporting group of a job file (e.g. "8t8q").
struct SweepPoint {
  std::string name;      // the group's first job's name
  int jobs = 0, iodepth = 0;
  double iops = 0, mb_per_s = 0, lat_mean_ms = 0, lat_stddev_ms = 0;
};

// Runs every measured group of the shipped job file `workload` (all but group 0, which
// preconditions) on perf::ArrayModel as a closed load, RAID type `raid`. kNotFound for an
// unknown job file.
sim::Result<std::vector<SweepPoint>> run_model_sweep(const perf::Calibration& calibration, const std::string& workload,
                                                     const std::string& raid, const CalibrationRunOptions& options);
// The sweep as a text table and as an SVG chart (IOPS bars, mean latency and stddev lines).
std::string format_sweep_table(const std::vector<SweepPoint>& points);
std::string format_sweep_svg(const std::vector<SweepPoint>& points, const std::string& title);

std::string format_calibration(const perf::Calibration& calibration, const std::vector<FigureResult>& results,
                               const std::string& engine_note);

}  // namespace afasim::workload
