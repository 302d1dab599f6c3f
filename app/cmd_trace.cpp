// `afasim trace FILE`: replays a block trace (fio iolog, blkparse, MSR CSV, DiskSim) in
// virtual time against a fresh simulated array (docs/workloads.md "Trace replay").
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/commands.h"
#include "config/file_text.h"
#include "config/preset.h"
#include "config/size.h"
#include "controller/array.h"
#include "workload/fio_job.h"
#include "workload/trace_replay.h"

namespace afasim::app {
namespace {

struct TraceCliOptions {
  std::string file;
  std::string format;
  std::string system = config::Catalog::kDefaultSystem;
  std::uint64_t seed = 1;
  double speed = 1.0;
  int iodepth = 0;  // > 0: closed loop
  std::vector<std::string> maps;
  std::string volume_size = "1t";
  std::string interval = "1s";
  std::string raid_type = "RAID10";
  std::string provisioning = "thin";
  std::string output_format = "text";
  std::int64_t max_records = 0;
  std::string config_dir;
  bool skip_bad = false;
  bool quiet = false;
};

// --map DEVICE=VOLUME, each checked now: a bad volume name is a usage error before the replay,
// not a failure at the device's first record. A volume name holds no '=' (Array::check_name),
// so the device is what precedes the last one: a trace's path may hold one (hostile review 43).
sim::Status parse_maps(const std::vector<std::string>& maps, std::map<std::string, std::string>& out) {
  for (const std::string& m : maps) {
    const auto eq = m.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == m.size())
      return sim::invalid_argument("--map " + m + ": want DEVICE=VOLUME");
    const std::string device = m.substr(0, eq);
    if (auto seen = out.find(device); seen != out.end())
      return sim::invalid_argument("--map " + m + ": device \"" + device + "\" is already mapped (to \"" +
                                   seen->second + "\")");
    if (sim::Status st = controller::Array::check_name("volume", m.substr(eq + 1)); !st.is_ok())
      return sim::invalid_argument("--map " + m + ": " + st.message());
    out[device] = m.substr(eq + 1);
  }
  return sim::Status::ok();
}

sim::Status fill_replay_options(const TraceCliOptions& o, workload::TraceReplayOptions& r) {
  r.timing = o.iodepth > 0 ? workload::TraceTiming::kClosedLoop : workload::TraceTiming::kRecorded;
  r.speed = o.speed;
  if (o.iodepth > 0) r.iodepth = o.iodepth;
  AFASIM_RETURN_IF_ERROR(parse_maps(o.maps, r.device_map));
  auto size = parse_volume_size(o.volume_size);
  if (!size.is_ok()) return size.status();
  r.volume_size_bytes = *size;
  auto interval = workload::parse_fio_time(o.interval, sim::kSecond);
  if (!interval.is_ok()) return sim::invalid_argument("--interval: " + interval.status().message());
  if (*interval <= 0) return sim::invalid_argument("--interval " + o.interval + ": must be longer than 0");
  r.interval_ns = *interval;
  r.raid_type = *raid::parse_raid_type(o.raid_type);
  r.provisioning = *controller::parse_provisioning(o.provisioning);
  r.max_records = o.max_records;
  if (!o.quiet) r.progress = progress_printer("afasim ");
  return sim::Status::ok();
}

// --map names a device as written in the file ("hm_01"); the records name it canonically.
sim::Status canonical_maps(workload::TraceFormat format, std::map<std::string, std::string>& maps) {
  std::map<std::string, std::string> canonical;
  for (const auto& [device, volume] : maps) {
    auto [at, added] = canonical.emplace(workload::canonical_trace_device(format, device), volume);
    if (!added && at->second != volume)
      return sim::invalid_argument("--map " + device + "=" + volume + ": device " + device + " is " + at->first +
                                   " of this trace, which another --map puts on " + at->second);
  }
  maps = std::move(canonical);
  return sim::Status::ok();
}

// A --map for a device the replay never met is likely a typo: say so after the totals.
void warn_unused_maps(const workload::TraceReplayOptions& replay, const workload::TraceReport& report) {
  for (const auto& [device, volume] : replay.device_map) {
    const std::string& name = device;  // a lambda cannot capture a structured binding in clang 14 (make fuzz)
    const bool seen = std::any_of(report.volumes.begin(), report.volumes.end(),
                                  [&](const workload::TraceVolume& v) { return v.device == name; });
    if (!seen)
      std::fprintf(stderr, "afasim trace: warning: --map %s=%s: device \"%s\" is not in the replayed records\n",
                   config::printable(device).c_str(), volume.c_str(), config::printable(device).c_str());
  }
}

// A fixed volume of --volume-size must fit in the pool's free space before the replay starts:
// the flags' doing, exit 2, not an error halfway through the output (hostile round 21 had
// exit 1 mid-run). The rule Array::admit_fixed applies: its extents' raw bytes against the
// pool's free raw bytes.
sim::Status check_fixed_volume_fits(const controller::Array& array, const workload::TraceReplayOptions& r) {
  if (r.provisioning != controller::Provisioning::kFixed || array.pools().empty()) return sim::Status::ok();
  const controller::Id pool = array.pools().begin()->first;
  const controller::PoolCapacity cap = array.pool_capacity(pool);
  const std::int64_t extent = array.extent_bytes(r.raid_type);
  const std::int64_t extents = (r.volume_size_bytes + extent - 1) / extent;
  const auto free = cap.free_bytes.find(r.raid_type);
  const std::int64_t has = free == cap.free_bytes.end() ? 0 : free->second;
  if (extents <= has / extent) return sim::Status::ok();  // free_bytes: what the allocator can place
  return sim::invalid_argument("--volume-size: a fixed " + std::string(raid::raid_type_name(r.raid_type)) +
                               " volume of " + config::human_bytes(r.volume_size_bytes) + " does not fit: pool " +
                               std::to_string(pool) + " has " + config::human_bytes(has) + " free for " +
                               std::string(raid::raid_type_name(r.raid_type)));
}

// A whole replay's exit code, said on stderr when not 0: 2 when no I/O was replayed (nothing
// replayed is no result: hostile review 43, a header alone or every line bad under --skip-bad
// exited 0), 1 when I/Os failed (as fio's exit code for a job with errors).
int finished_exit_code(const TraceCliOptions& o, const workload::TraceReport& report) {
  if (report.records == 0) {
    std::fprintf(stderr, "afasim trace: %s: no I/O replayed: %s\n", config::printable(o.file).c_str(),
                 report.bad_lines > 0 ? "every record line was bad (--skip-bad counted them; the first is named above)"
                                      : "the trace holds no read, write, trim or flush (only headers, file actions "
                                        "or events)");
    return 2;
  }
  if (report.io_errors() > 0) {
    std::fprintf(stderr, "afasim trace: %lld I/Os failed; the first: %s\n", static_cast<long long>(report.io_errors()),
                 report.first_io_error.c_str());
    return 1;
  }
  return 0;
}

int run_trace_command(const TraceCliOptions& o) {
  workload::TraceReplayOptions replay;
  if (sim::Status st = fill_replay_options(o, replay); !st.is_ok()) return fail_command("trace", st.message(), 2);
  workload::TraceReaderOptions read;
  read.skip_bad = o.skip_bad;
  read.stop = &catch_interrupts();
  if (!o.format.empty()) {
    auto f = workload::parse_trace_format(o.format);
    if (!f.is_ok()) return fail_command("trace", "--format: " + f.status().message(), 2);
    read.format = *f;
  }
  // A FIFO is read as `cat` reads it: from its first writer, however late (a live `blkparse
  // -o FIFO`). Said, so that a wait for a writer that never comes is not taken for a hang.
  struct stat st {};
  if (!o.quiet && o.file != "-" && ::stat(o.file.c_str(), &st) == 0 && S_ISFIFO(st.st_mode))
    std::fprintf(stderr, "afasim trace: %s is a FIFO: reading from its writer (Ctrl-C to stop)\n",
                 config::printable(o.file).c_str());
  auto reader = workload::TraceReader::open(o.file, read);
  if (!reader.is_ok() && read.stop->load()) {
    // Stopped while looking for the first record (an endless run of bad lines skipped): no
    // report, and not "the trace is empty".
    std::fprintf(stderr, "afasim trace: interrupted by %s before the first record\n", stop_signal_name(interrupt_signal()));
    return interrupted_exit_code();
  }
  if (!reader.is_ok()) return fail_command("trace", reader.status().message(), 2);
  if (sim::Status st = canonical_maps((*reader)->format(), replay.device_map); !st.is_ok())
    return fail_command("trace", st.message(), 2);
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(o.config_dir);
  if (!catalog.is_ok()) return fail_command("trace", catalog.status().message(), 2);
  auto preset = catalog->system(o.system);
  if (!preset.is_ok()) return fail_command("trace", "--system: " + preset.status().message(), 2);
  sim::Simulator sim(o.seed);
  controller::MemoryJournal journal;
  auto array = controller::Array::open(sim, *catalog, *preset, journal, journal.snapshot());
  if (!array.is_ok())
    return fail_command("trace", array.status().message(), array.status().code() == sim::Code::kInvalidArgument ? 2 : 1);
  if (sim::Status st = check_fixed_volume_fits(**array, replay); !st.is_ok())
    return fail_command("trace", st.message(), 2);
  const bool json = o.output_format == "json";
  if (!json) std::fputs(config::printable(workload::format_trace_header(**reader, replay), true).c_str(), stdout);
  auto on_row = [json](const workload::TraceRow& row) {
    const std::string line = json ? workload::trace_row_json(row) : workload::format_trace_row(row);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);  // each row as it completes, through a pipe too (hostile round 32)
  };
  replay.interrupted = &catch_interrupts();
  auto report = workload::replay_trace(**array, sim, **reader, replay, on_row);
  if (!report.is_ok()) return fail_command("trace", report.status().message(), report.status().code() == sim::Code::kInvalidArgument ? 2 : 1);
  const std::string totals = json ? workload::trace_totals_json(*report) : workload::format_trace_totals(*report);
  std::fwrite(totals.data(), 1, totals.size(), stdout);
  std::fflush(stdout);
  warn_unused_maps(replay, *report);
  if (report->interrupted) {
    std::fprintf(stderr, "afasim trace: interrupted by %s: the report covers the records read until then\n",
                 stop_signal_name(interrupt_signal()));
    return interrupted_exit_code();
  }
  return finished_exit_code(o, *report);
}

}  // namespace

Runner add_trace_command(CLI::App& app) {
  auto o = std::make_shared<TraceCliOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Replay a block trace (fio iolog, blkparse, MSR CSV, DiskSim) in virtual time");
  cmd->add_option("file", o->file, "Trace file ('-' reads standard input)")->required();
  cmd->add_option("--format", o->format, "fio, blkparse, msr or disksim (default: detected from the first line)");
  CLI::Option* speed = cmd->add_option("--speed", o->speed, "Replay the recorded times this many times faster")
                           ->check(finite_range_check(1e-6, 1e6))
                           ->capture_default_str();
  // A closed loop ignores the times, so a speed with it would be dropped without a word
  // (hostile round 15).
  cmd->add_option("--iodepth", o->iodepth, "Closed loop: ignore the times, keep this many I/Os in flight")
      ->check(count_check(1, 65536))
      ->excludes(speed);
  cmd->add_option("--map", o->maps, "DEVICE=VOLUME: the volume a trace device goes to (repeatable)");
  cmd->add_option("--volume-size", o->volume_size, "Size of the volumes the replay creates (thin by default)")
      ->capture_default_str();
  cmd->add_option("--interval", o->interval, "Length of a timeline row")->capture_default_str();
  cmd->add_option("--max-records", o->max_records, "Stop after this many I/Os (0: the whole trace)")
      ->check(count_check(0, std::numeric_limits<std::int64_t>::max()));
  cmd->add_flag("--skip-bad", o->skip_bad, "Count bad lines and go on instead of stopping at the first");
  cmd->add_option("--output-format", o->output_format, "text, or json (JSON lines: rows, then totals)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--system", o->system, "System preset")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Root seed")->check(seed_check())->capture_default_str();
  add_volume_options(cmd, "replay", o->raid_type, o->provisioning, o->config_dir, o->quiet);
  return [o] { return run_trace_command(*o); };
}

}  // namespace afasim::app
