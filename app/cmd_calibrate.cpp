// `afasim calibrate --system ise-860-g3`: runs the system's training figures (its
// config/calibration/<system>.json) with the shipped fio job files and prints, per figure,
// the model's value, the published one and the error, then the fitted parameters with the
// figures each was fitted to (docs/performance-model.md "Calibration").
#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.h"
#include "config/preset.h"
#include "perf/calibration.h"
#include "workload/calibration.h"

namespace afasim::app {
namespace {

struct CalibrateOptions {
  std::string system = config::Catalog::kDefaultSystem;
  std::uint64_t seed = 1;
  double runtime_s = 0;
  double ramp_s = 2;
  std::string only;
  std::string engine = "array";
  std::string config_dir;
  bool check = false;
  std::string sweep;
  std::string raid = "RAID10";
  std::string svg;
  bool quiet = false;
};

// Escaped as every command's messages (re-test of hostile review 43: a calibration file's
// U+202E reached the terminal).
int fail(const std::string& message, int code) { return fail_command("calibrate", message, code); }

int run_calibrate(const CalibrateOptions& o) {
  auto calibration = perf::load_calibration(o.system, o.config_dir);
  if (!calibration.is_ok()) return fail(calibration.status().message(), 2);
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(o.config_dir);
  if (!catalog.is_ok()) return fail(catalog.status().message(), 2);
  auto preset = catalog->system(o.system);
  if (!preset.is_ok()) return fail("--system: " + preset.status().message(), 2);
  if (const sim::Status agree = perf::check_against_preset(calibration->model, *preset, calibration->file);
      !agree.is_ok())
    return fail(agree.message(), 2);
  workload::CalibrationRunOptions run;
  run.seed = o.seed;
  run.only = o.only;
  run.engine = o.engine == "model" ? workload::CalibrationEngine::kModel : workload::CalibrationEngine::kArray;
  if (o.runtime_s > 0) {
    run.runtime_ns = static_cast<sim::Time>(o.runtime_s * 1e9);
    run.ramp_ns = static_cast<sim::Time>(o.ramp_s * 1e9);
  }
  if (!o.quiet) run.progress = progress_printer("afasim calibrate: ");
  if (!o.svg.empty() && o.sweep.empty())
    return fail("--svg draws a --sweep: give --sweep JOBFILE too", 2);
  if (!o.sweep.empty()) {
    if (run.engine != workload::CalibrationEngine::kModel)
      return fail("--sweep runs on --engine model; for the array run `afasim fio` on the job file", 2);
    if (const std::string bad = o.svg.empty() ? "" : output_file_problem(o.svg, {o.sweep}, o.config_dir); !bad.empty())
      return fail("--svg: " + bad, 2);
    auto points = workload::run_model_sweep(*calibration, o.sweep, o.raid, run);
    if (!points.is_ok()) return fail(points.status().message(), 2);
    const std::string table = workload::format_sweep_table(*points);
    std::fwrite(table.data(), 1, table.size(), stdout);
    if (!o.svg.empty()) {
      const std::string title = o.system + " " + o.raid + " " + o.sweep + " (perf::ArrayModel)";
      if (const std::string bad =
              write_output_file(o.svg, workload::format_sweep_svg(*points, title));
          !bad.empty())
        return fail("--svg: " + bad, 1);
    }
    return 0;
  }
  if (const sim::Status st = workload::check_calibration_figures(*calibration); !st.is_ok()) return fail(st.message(), 2);
  auto results = workload::run_calibration(*catalog, *preset, *calibration, run);
  // A --only that matches nothing is a bad option (2); a run that failed is 1.
  if (!results.is_ok()) {
    if (results.status().code() == sim::Code::kInvalidArgument) return fail("--only: " + results.status().message(), 2);
    return fail(results.status().message(), 1);
  }
  char runtime[64];
  std::snprintf(runtime, sizeof runtime, "%g s after a %g s ramp", o.runtime_s, o.ramp_s);
  const std::string runs = o.runtime_s > 0 ? std::string("measured ") + runtime : "the job files' run times";
  // The array engine: the shipped fio job files on the simulated array, whose timing is the
  // performance model (controller/timing.h) with the SSD model behind it.
  const std::string engine =
      "seed " + std::to_string(o.seed) + ", " +
      (run.engine == workload::CalibrationEngine::kModel
           ? std::string("engine: perf::ArrayModel, closed loop of each job file's measured group, stand-in SSDs, "
                         "256 MiB write cache; ") +
                 (o.runtime_s > 0 ? runs : "measured 1 s after a 1.5 s warm-up")
           : runs + "; engine: the array (fio job files; perf/ resources via controller::Timing, the SSD model), "
                    "256 MiB write cache per controller");
  const std::string table = workload::format_calibration(*calibration, *results, engine);
  std::fwrite(table.data(), 1, table.size(), stdout);
  if (o.check)
    for (const auto& r : *results)
      if (!r.within) return 1;
  return 0;
}

}  // namespace

Runner add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Run the system's training figures and print model / published / error and the fitted parameters");
  cmd->add_option("--system", o->system, "System preset with a config/calibration/<system>.json")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Root seed (same seed, same table)")->check(seed_check())->capture_default_str();
  cmd->add_option("--runtime", o->runtime_s, "Seconds each measured job runs (0: the job files' 60 s; else at least 0.001)")
      ->check(finite_range_check(0, 3600))
      ->check([](const std::string& text) {
        // Below a millisecond a 128 KiB job completes nothing ("0 MB/s"), and below a
        // nanosecond the value rounded to 0, the job files' 60 s.
        const double v = std::strtod(text.c_str(), nullptr);
        return v == 0 || v >= 0.001 ? std::string() : "must be 0 (the job files' 60 s) or at least 0.001 s, got " + text;
      })
      ->capture_default_str();
  CLI::Option* ramp = cmd->add_option("--ramp", o->ramp_s, "Seconds of ramp before each measured job, with --runtime")
                          ->check(finite_range_check(0, 3600))
                          ->capture_default_str();
  cmd->add_option("--only", o->only, "Only figures whose id contains this text (e.g. 128k)");
  cmd->add_option("--engine", o->engine,
                  "array: fio job files on the simulated array; model: perf::ArrayModel alone (closed loop)")
      ->check(CLI::IsMember({"array", "model"}))
      ->capture_default_str();
  cmd->add_option("--config-dir", o->config_dir, "Read presets and calibration from this folder");
  cmd->add_option("--sweep", o->sweep,
                  "With --engine model: run every measured group of this config/workloads job file "
                  "(e.g. ise860-8k-7030-sweep.fio) and print a table per point");
  cmd->add_option("--raid-type", o->raid, "RAID type for --sweep")
      ->check(CLI::IsMember({"RAID10", "RAID5"}))
      ->capture_default_str();
  cmd->add_option("--svg", o->svg, "With --sweep: also write an SVG chart of IOPS and latency to this file");
  cmd->add_flag("--check", o->check, "Exit 1 if any figure is outside its tolerance");
  cmd->add_flag("--quiet", o->quiet, "No progress lines on stderr");
  return [o, ramp] {
    // Without --runtime the job files' own ramp applies: a --ramp was dropped without a word
    // (hostile review 42).
    if (ramp->count() > 0 && o->runtime_s == 0) return fail("--ramp applies with --runtime only (the job files set their own ramp)", 2);
    return run_calibrate(*o);
  };
}

}  // namespace afasim::app
