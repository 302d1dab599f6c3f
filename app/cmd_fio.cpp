// `afasim fio JOB.fio`: a fio job file in virtual time against a fresh simulated array.
// As with fio, jobs may also be given on the command line (`--name=x --rw=randread ...`):
// options before the first --name form [global], each --name starts a job.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

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
  std::vector<std::string> job_files;
  std::string system = config::Catalog::kDefaultSystem;
  std::uint64_t seed = 1;
  std::string output_format = "normal";
  std::string output;
  std::vector<std::string> sections;
  std::string raid_type = "RAID10";
  std::string provisioning = "thin";
  std::string config_dir;
  std::string device;
  std::string device_state = "filled";
  bool quiet = false;
  std::vector<std::string> extras;  // fio job options given as --key=value
};

// fio's command-line jobs as job-file text: "--key=value" lines, "[NAME]" for each --name.
sim::Result<std::string> command_line_jobs(const std::vector<std::string>& args) {
  std::string text = "[global]\n";
  for (const std::string& arg : args) {
    if (arg.size() < 3 || arg.substr(0, 2) != "--")
      return sim::invalid_argument("\"" + arg + "\": a fio option is written --name=value");
    const std::string option = arg.substr(2);
    if (option.find('\n') != std::string::npos)
      return sim::invalid_argument("\"" + arg + "\": a line break in an option");
    // The options become job-file lines, where ';' and '#' start a comment: a value holding
    // one would be cut there (--filename=x#y ran on volume "x").
    if (option.find_first_of(";#") != std::string::npos)
      return sim::invalid_argument("\"" + arg + "\": a value with ';' or '#' is not taken on the command line "
                                   "(command-line jobs become job-file lines, where they start a comment)");
    if (option.rfind("name=", 0) == 0) {
      text += "[" + option.substr(5) + "]\n";
      continue;
    }
    text += option + "\n";
  }
  return text;
}

// Every job of the run: the job files in order, then the command-line jobs.
// `device_bytes`: a bare device's capacity, else 0 (workload::FioParseOptions).
sim::Result<workload::FioJobFile> load_jobs(const FioOptions& o, std::int64_t device_bytes) {
  workload::FioParseOptions parse = workload::host_parse_options();
  parse.sections = o.sections;
  parse.device_bytes = device_bytes;
  std::string text;
  std::string name;
  for (const std::string& path : o.job_files) {
    auto file_text = workload::read_job_text(path);
    if (!file_text.is_ok()) return file_text.status();
    if (o.job_files.size() == 1 && o.extras.empty()) return workload::parse_fio_job_file(*file_text, path, parse);
    text += *file_text + "\n";
    name += (name.empty() ? "" : "+") + path;
  }
  if (!o.extras.empty()) {
    auto cli = command_line_jobs(o.extras);
    if (!cli.is_ok()) return cli.status();
    text += *cli;
    name += (name.empty() ? "" : "+") + std::string("<command line>");
  }
  if (name.empty()) return sim::invalid_argument("no job file and no --name=... job");
  return workload::parse_fio_job_file(text, name, parse);
}

// --output, opened before the run as fio opens it: a path that cannot be written fails in a
// moment with the system's reason, not after the whole simulation. Closed at the end.
using OutputFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

OutputFile open_output(const std::string& path) {
  if (path.empty()) return OutputFile(nullptr, &std::fclose);
  return OutputFile(std::fopen(path.c_str(), "wb"), &std::fclose);
}

// Writes the report to --output (`out`) or stdout; 1 when a job failed or the file cannot be written.
int emit(const FioOptions& o, const workload::RunReport& report,
         const std::vector<workload::OutputFormat>& formats, std::FILE* out) {
  const std::string text = workload::format_report(report, formats);
  if (out == nullptr) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0) {
    const int error = errno;
    return fail_command("fio", "--output: cannot write " + o.output + ": " + std::strerror(error), 1);
  }
  for (const auto& r : report.results)
    if (r.error != 0) return 1;
  return 0;
}

int run_on_device(const FioOptions& o, DeviceRun& run, const workload::FioJobFile& file,
                  const workload::FioRunOptions& run_options,
                  const std::vector<workload::OutputFormat>& formats, std::FILE* out) {
  auto report = workload::run_fio(*run.target, run.target->capacity_bytes(), run.sim, file,
                                  run_options);
  if (!report.is_ok()) return fail_command("fio", report.status().message(), 2);
  report->afasim_extra["device"] = o.device;
  report->afasim_extra["device_state"] = o.device_state;
  report->afasim_extra["device_stats"] = run.target->device_stats();
  return emit(o, *report, formats, out);
}

// A write run too short to fill a controller's write cache to its destage watermark measured
// the cache: every write was acknowledged from DRAM and none went on to the SSDs, so RAID 5
// and RAID 10 come out alike (a new user's 8 s 70/30 sweep: 264,858 against 266,645 IOPS,
// both above the review's ~230,000). Says so on stderr, beside fio's warnings.
void note_cache_only_writes(const controller::Array& array) {
  const controller::DataPath& dp = array.data_path();
  const int watermark_percent = dp.options().cache.low_watermark_percent;
  for (const controller::ControllerInfo& c : array.controllers()) {
    const std::int64_t written = dp.hardware().stats(c.id).write_bytes;
    const std::int64_t watermark = c.write_cache_bytes / 100 * watermark_percent;
    // Small writes, or a cache that destaged (dirty reached the watermark, or most of what was
    // written has left it): nothing to say.
    if (written < (64 << 20) || c.dirty_bytes >= watermark || c.dirty_bytes < written / 2) continue;
    std::fprintf(stderr,
                 "afasim fio: note: controller %s's write cache still holds %.0f %% of the %.2f GB written to its "
                 "volumes and never reached its destage watermark (%d %% of %.1f GiB): the write results measure "
                 "the write-back cache, not the RAID writes to the SSDs; a longer run reaches the steady state "
                 "(the shipped job files run 60 s and more)\n",
                 c.name.c_str(), 100.0 * static_cast<double>(c.dirty_bytes) / static_cast<double>(written),
                 static_cast<double>(written) / 1e9, watermark_percent,
                 static_cast<double>(c.write_cache_bytes) / static_cast<double>(1LL << 30));
  }
}

int run_fio_command(const FioOptions& o) {
  auto formats = workload::parse_output_formats(o.output_format);
  if (!formats.is_ok()) return fail_command("fio", "--output-format: " + formats.status().message(), 2);
  // A bare device first: every filename is the whole device, as fio sees a block device.
  std::unique_ptr<DeviceRun> device_run;
  if (!o.device.empty()) {
    device_run = open_device_run("afasim fio", o.config_dir, o.device, o.device_state, o.seed);
    if (!device_run) return 2;
  }
  auto file = load_jobs(o, device_run ? device_run->target->capacity_bytes() : 0);
  if (!file.is_ok()) return fail_command("fio", file.status().message(), 2);
  for (const auto& w : file->warnings) std::fprintf(stderr, "afasim fio: warning: %s\n", w.c_str());
  OutputFile out = open_output(o.output);
  if (!o.output.empty() && !out) {
    const int error = errno;
    return fail_command("fio", "--output: cannot write " + o.output + ": " + std::strerror(error), 1);
  }
  if (!o.device.empty()) {
    workload::FioRunOptions run_options;
    run_options.seed = o.seed;
    if (!o.quiet) run_options.progress = progress_printer("afasim ");
    return run_on_device(o, *device_run, *file, run_options, *formats, out.get());
  }
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(o.config_dir);
  if (!catalog.is_ok()) return fail_command("fio", catalog.status().message(), 2);
  auto preset = catalog->system(o.system);
  if (!preset.is_ok()) return fail_command("fio", "--system: " + preset.status().message(), 2);
  workload::FioRunOptions run_options;
  run_options.seed = o.seed;
  run_options.raid_type = *raid::parse_raid_type(o.raid_type);
  run_options.provisioning = *controller::parse_provisioning(o.provisioning);
  if (!o.quiet) run_options.progress = progress_printer("afasim ");

  // verify= reads back what was written: the SSDs keep the bytes (docs/workloads.md).
  controller::ArrayOptions array_options;
  for (const auto& j : file->jobs)
    if (j.verify) array_options.data_path.payload = datapac::PayloadKind::kMemory;
  sim::Simulator sim(o.seed);
  controller::MemoryJournal journal;
  auto array = controller::Array::open(sim, *catalog, *preset, journal, journal.snapshot(), array_options);
  if (!array.is_ok()) return fail_command("fio", array.status().message(), 1);
  auto report = workload::run_fio(**array, sim, *file, run_options);
  if (!report.is_ok()) return fail_command("fio", report.status().message(), 2);
  note_cache_only_writes(**array);
  report->afasim_extra["raid_type"] = o.raid_type;
  report->afasim_extra["provisioning"] = o.provisioning;
  return emit(o, *report, *formats, out.get());
}

}  // namespace

Runner add_fio_command(CLI::App& app) {
  auto o = std::make_shared<FioOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fio", "Run fio job files (or --name=... jobs, as fio) in virtual time against a simulated array");
  cmd->allow_extras();
  cmd->add_option("job_files", o->job_files, "fio job files");
  cmd->add_option("--system", o->system, "System preset")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Root seed (same seed, same report)")
      ->check(seed_check())
      ->capture_default_str();
  cmd->add_option("--output-format", o->output_format, "normal, terse, json, json+, or several: normal,json")
      ->capture_default_str();
  cmd->add_option("--output", o->output, "Write the report to this file instead of stdout");
  cmd->add_option("--section", o->sections, "Run only this job section (repeatable), as fio's --section");
  add_volume_options(cmd, "job", o->raid_type, o->provisioning, o->config_dir, o->quiet);
  cmd->add_option("--device", o->device,
                  "Run on this bare device (afasim devices lists them) instead of an array");
  cmd->add_option("--device-state", o->device_state,
                  "With --device: fresh (out of the box), filled (written once, as reviews start) or steady (SNIA PTS preconditioned)")
      ->check(CLI::IsMember({"fresh", "filled", "steady"}))
      ->capture_default_str();
  return [o, cmd] {
    o->extras = cmd->remaining();
    return run_fio_command(*o);
  };
}

}  // namespace afasim::app
