// `afasim fio JOB.fio`: a fio job file in virtual time against a fresh simulated array.
#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.h"
#include "app/device_run.h"
#include "config/preset.h"
#include "controller/array.h"
#include "workload/fio_job.h"
#include "workload/fio_report.h"
#include "workload/device_target.h"
#include "workload/fio_runner.h"

namespace afasim::app {
namespace {

struct FioOptions {
  std::string job_file;
  std::string system = config::Catalog::kDefaultSystem;
  std::uint64_t seed = 1;
  std::string output_format = "normal";
  std::string raid_type = "RAID10";
  std::string provisioning = "thin";
  std::string config_dir;
  std::string device;
  std::string device_state = "filled";
  bool quiet = false;
};

int run_on_device(const FioOptions& o, const workload::FioJobFile& file,
                  const workload::FioRunOptions& run_options) {
  auto run = open_device_run("afasim fio", o.config_dir, o.device, o.device_state, o.seed);
  if (!run) return 2;
  auto report = workload::run_fio(*run->target, run->target->capacity_bytes(), run->sim, file,
                                  run_options);
  if (!report.is_ok()) {
    std::fprintf(stderr, "afasim fio: %s\n", report.status().message().c_str());
    return 2;
  }
  report->afasim_extra["device"] = o.device;
  report->afasim_extra["device_state"] = o.device_state;
  report->afasim_extra["device_stats"] = run->target->device_stats();
  const std::string out = o.output_format == "json" ? workload::format_json(*report) : workload::format_normal(*report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  for (const auto& r : report->results)
    if (r.error != 0) return 1;
  return 0;
}

int run_fio_command(const FioOptions& o) {
  auto file = workload::load_fio_job_file(o.job_file);
  if (!file.is_ok()) {
    std::fprintf(stderr, "afasim fio: %s\n", file.status().message().c_str());
    return 2;
  }
  for (const auto& w : file->warnings) std::fprintf(stderr, "afasim fio: warning: %s\n", w.c_str());
  if (!o.device.empty()) {
    workload::FioRunOptions run_options;
    run_options.seed = o.seed;
    if (!o.quiet) run_options.progress = progress_printer("afasim ");
    return run_on_device(o, *file, run_options);
  }
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(o.config_dir);
  if (!catalog.is_ok()) {
    std::fprintf(stderr, "afasim fio: %s\n", catalog.status().message().c_str());
    return 2;
  }
  auto preset = catalog->system(o.system);
  if (!preset.is_ok()) {
    std::fprintf(stderr, "afasim fio: --system: %s\n", preset.status().message().c_str());
    return 2;
  }
  workload::FioRunOptions run_options;
  run_options.seed = o.seed;
  run_options.raid_type = *raid::parse_raid_type(o.raid_type);
  run_options.provisioning = *controller::parse_provisioning(o.provisioning);
  if (!o.quiet) run_options.progress = progress_printer("afasim ");

  sim::Simulator sim(o.seed);
  controller::MemoryJournal journal;
  auto array = controller::Array::open(sim, *catalog, *preset, journal, journal.snapshot());
  if (!array.is_ok()) {
    std::fprintf(stderr, "afasim fio: %s\n", array.status().message().c_str());
    return 1;
  }
  auto report = workload::run_fio(**array, sim, *file, run_options);
  if (!report.is_ok()) {
    std::fprintf(stderr, "afasim fio: %s\n", report.status().message().c_str());
    return 2;
  }
  report->afasim_extra["raid_type"] = o.raid_type;
  report->afasim_extra["provisioning"] = o.provisioning;
  const std::string out = o.output_format == "json" ? workload::format_json(*report) : workload::format_normal(*report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  for (const auto& r : report->results)
    if (r.error != 0) return 1;
  return 0;
}

}  // namespace

Runner add_fio_command(CLI::App& app) {
  auto o = std::make_shared<FioOptions>();
  CLI::App* cmd = app.add_subcommand("fio", "Run a fio job file in virtual time against a simulated array");
  cmd->add_option("job_file", o->job_file, "fio job file")->required();
  cmd->add_option("--system", o->system, "System preset")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Root seed (same seed, same report)")
      ->check(seed_check())
      ->capture_default_str();
  cmd->add_option("--output-format", o->output_format, "normal or json")
      ->check(CLI::IsMember({"normal", "json"}))
      ->capture_default_str();
  cmd->add_option("--raid-type", o->raid_type, "RAID type of the volumes the job creates")
      ->check(CLI::IsMember({"RAID10", "RAID5"}))
      ->capture_default_str();
  cmd->add_option("--provisioning", o->provisioning, "thin or fixed volumes")
      ->check(CLI::IsMember({"thin", "fixed"}))
      ->capture_default_str();
  cmd->add_option("--config-dir", o->config_dir, "Read presets from this folder instead of the built-in ones");
  cmd->add_option("--device", o->device,
                  "Run on this bare device (afasim devices lists them) instead of an array");
  cmd->add_option("--device-state", o->device_state,
                  "With --device: fresh (out of the box), filled (written once, as reviews start) or steady (SNIA PTS preconditioned)")
      ->check(CLI::IsMember({"fresh", "filled", "steady"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "No progress lines on stderr");
  return [o] { return run_fio_command(*o); };
}

}  // namespace afasim::app
