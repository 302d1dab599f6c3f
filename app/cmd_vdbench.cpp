// `afasim vdbench PARMFILE --device NAME`: a VDBench parameter file in virtual time against a
// bare device (docs/vdbench.md).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "config/file_text.h"
#include "app/commands.h"
#include "app/device_run.h"
#include "workload/vdbench_parm.h"
#include "workload/vdbench_runner.h"

namespace afasim::app {
namespace {

struct VdbenchOptions {
  std::string parm_file;
  std::string device;
  std::string device_state = "filled";
  std::uint64_t seed = 1;
  std::string output_format = "normal";
  std::string svg;
  double elapsed_s = 0;
  double interval_s = 0;
  std::string config_dir;
  bool quiet = false;
};

int run_vdbench_command(const VdbenchOptions& o) {
  auto file = workload::load_vdbench_file(o.parm_file);
  if (!file.is_ok()) {
    return fail_command("vdbench", file.status().message(), 2);  // escaped (hostile review 43)
  }
  if (!o.svg.empty()) {  // a file that cannot be written fails now, not after the run
    if (const std::string bad = output_file_problem(o.svg, {o.parm_file}, o.config_dir); !bad.empty())
      return fail_command("vdbench", "--svg: " + bad, 2);
    // Said before the runs, not after them (hostile review 43).
    if (std::none_of(file->rds.begin(), file->rds.end(), [](const workload::VdRun& r) { return r.rate == workload::VdRate::kCurve; }))
      return fail_command("vdbench", "--svg: the file has no iorate=curve run to draw", 2);
  }
  workload::VdbenchRunOptions options;
  options.seed = o.seed;
  options.elapsed = static_cast<sim::Time>(o.elapsed_s * 1e9);
  options.interval = static_cast<sim::Time>(o.interval_s * 1e9);
  // The file's bound on intervals per run, for the flags that replace its elapsed= and
  // interval= (hostile round 28: --elapsed 100000 --interval 0.001 ran out of memory).
  if (sim::Status st = workload::check_run_overrides(*file, options.elapsed, options.interval); !st.is_ok())
    return fail_command("vdbench", st.message(), 2);
  auto run = open_device_run("afasim vdbench", o.config_dir, o.device, o.device_state, o.seed);
  if (!run) return 2;
  if (!o.quiet) options.progress = progress_printer("afasim ");
  auto report = workload::run_vdbench(*run->target, run->target->capacity_bytes(), run->sim,
                                      *file, options);
  if (!report.is_ok()) {
    return fail_command("vdbench", report.status().message(), 2);  // escaped (hostile review 43)
  }
  report->device = run->target->device_stats();
  if (o.output_format == "json") {
    workload::write_vdbench_json(*report, [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); });
  } else {
    const std::string out = config::printable(workload::format_vdbench_summary(*report), true);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (!o.svg.empty()) {
    const std::string svg = workload::format_vdbench_svg(*report);
    if (svg.empty()) {
      std::fprintf(stderr, "afasim vdbench: --svg: the file has no iorate=curve run to draw\n");
      return 1;
    }
    if (const std::string bad = write_output_file(o.svg, svg); !bad.empty())
      return fail_command("vdbench", "--svg: " + bad, 1);
  }
  return 0;
}

}  // namespace

Runner add_vdbench_command(CLI::App& app) {
  auto o = std::make_shared<VdbenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "vdbench", "Run a VDBench parameter file in virtual time against a bare device");
  cmd->add_option("parm_file", o->parm_file, "VDBench parameter file")->required();
  cmd->add_option("--device", o->device, "The device (afasim devices lists them)")->required();
  cmd->add_option("--device-state", o->device_state,
                  "fresh (out of the box), filled (written once) or steady (SNIA PTS preconditioned)")
      ->check(CLI::IsMember({"fresh", "filled", "steady"}))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Root seed (same seed, same report)")
      ->check(seed_check())
      ->capture_default_str();
  cmd->add_option("--output-format", o->output_format, "normal (VDBench's summary) or json")
      ->check(CLI::IsMember({"normal", "json"}))
      ->capture_default_str();
  cmd->add_option("--svg", o->svg, "Write latency versus I/O rate of the curve runs to this SVG file");
  cmd->add_option("--elapsed", o->elapsed_s, "Seconds per run, replacing every rd's elapsed=")
      ->check(finite_range_check(0.001, 1e6));
  cmd->add_option("--interval", o->interval_s, "Seconds per interval, replacing every rd's interval=")
      ->check(finite_range_check(0.001, 1e6));
  cmd->add_option("--config-dir", o->config_dir, "Read presets from this folder instead of the built-in ones");
  cmd->add_flag("--quiet", o->quiet, "No progress lines on stderr");
  return [o] { return run_vdbench_command(*o); };
}

}  // namespace afasim::app
