// `afasim fio JOB.fio`: a fio job file in virtual time against a fresh simulated array.
// As with fio, jobs may also be given on the command line (`--name=x --rw=randread ...`):
// options before the first --name form [global], each --name starts a job.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/file_text.h"
#include "app/commands.h"
#include "app/device_run.h"
#include "config/preset.h"
#include "config/size.h"
#include "controller/array.h"
#include "workload/fio_job.h"
#include "workload/fio_logs.h"
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
  std::string volume_size;
  bool volume_size_given = false;  // else a volume no job sizes is an error
  bool quiet = false;
  std::vector<std::string> extras;  // fio job options given as --key=value
  // fio's own command-line flags (fio --help) that scripts pass: --minimal (terse output),
  // --append-terse, --terse-version=3, --parse-only, --readonly, --warnings-fatal; and those
  // about fio's console or its process, taken and ignored (console_flag).
  bool minimal = false;
  bool append_terse = false;
  int terse_version = 3;
  bool parse_only = false;
  bool readonly = false;
  bool warnings_fatal = false;
  std::string console_flag;
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

// Options with no --name= after them: fio 3.33 takes them as defaults that the job files'
// own settings override (`fio --runtime=1s job.fio` runs job.fio's runtime= when it has
// one, silently). afasim does not merge them into job files, and a user shortening a
// shipped job with --runtime=10s got the whole run without a word: refused, after the
// options themselves were parsed (an unknown one is named as such first).
sim::Status refuse_unnamed_options(const std::vector<std::string>& args) {
  if (std::any_of(args.begin(), args.end(), [](const std::string& a) { return a.rfind("--name=", 0) == 0; }))
    return sim::Status::ok();
  return sim::invalid_argument("\"" + args.front() +
                               "\": options before any --name= are taken by fio as defaults that a job file's own "
                               "settings override; afasim does not merge them into job files: edit the job file or "
                               "a copy, or give whole jobs (--name=JOB --rw=... ) (docs/workloads.md \"The command line\")");
}

// A job file on standard input ("-"): at most workload::kMaxFileBytes, as a file on disk.
sim::Result<std::string> read_stdin_job() {
  std::string text;
  char buf[65536];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, stdin)) {
    text.append(buf, n);
    if (text.size() > workload::kMaxFileBytes)
      return sim::invalid_argument("-: the job file on standard input is larger than " +
                                   std::to_string(workload::kMaxFileBytes >> 20) + " MiB");
  }
  if (std::ferror(stdin)) return sim::io_error(std::string("-: cannot read standard input (") + std::strerror(errno) + ")");
  workload::drop_byte_order_mark(text);
  return text;
}

// A job file that cannot be read, beside a command-line option without '=': fio 3.33 takes
// `--size 1m`, where afasim reads "1m" as a job file (review 34: "1m: cannot open the job
// file"). The message says why.
sim::Status with_spacing_hint(const sim::Status& st, const std::vector<std::string>& extras) {
  const auto bare = std::find_if(extras.begin(), extras.end(), [](const std::string& a) {
    return a.size() > 2 && a.rfind("--", 0) == 0 && a.find('=') == std::string::npos;
  });
  if (bare == extras.end()) return st;
  return sim::Status(st.code(), st.message() + " (afasim takes a command-line job's options as --key=value: \"" +
                                    *bare + " VALUE\" reads VALUE as a job file; write " + *bare + "=VALUE)");
}

// Every job of the run: the job files in order, then the command-line jobs.
// `device_bytes`: a bare device's capacity, else 0 (workload::FioParseOptions).
sim::Result<workload::FioJobFile> load_jobs(const FioOptions& o, std::int64_t device_bytes) {
  workload::FioParseOptions parse = workload::host_parse_options();
  parse.sections = o.sections;
  parse.device_bytes = device_bytes;
  if (o.volume_size_given) {
    auto bytes = parse_volume_size(o.volume_size);
    if (!bytes.is_ok()) return bytes.status();
    parse.volume_bytes = *bytes;
  }
  std::string text;
  std::string name;
  if (std::count(o.job_files.begin(), o.job_files.end(), "-") > 1)
    return sim::invalid_argument("-: standard input can be read as one job file only");
  for (const std::string& path : o.job_files) {
    // "-": the job file on standard input, as fio reads it.
    auto file_text = path == "-" ? read_stdin_job() : workload::read_job_text(path);
    if (!file_text.is_ok()) return with_spacing_hint(file_text.status(), o.extras);
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
  auto parsed = workload::parse_fio_job_file(text, name, parse);
  if (parsed.is_ok() && !o.extras.empty()) AFASIM_RETURN_IF_ERROR(refuse_unnamed_options(o.extras));
  return parsed;
}

// --output, opened before the run as fio opens it: a path that cannot be written fails in a
// moment with the system's reason, not after the whole simulation. Closed at the end.
using OutputFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

OutputFile open_output(const std::string& path) {
  if (path.empty()) return OutputFile(nullptr, &std::fclose);
  return OutputFile(std::fopen(path.c_str(), "wb"), &std::fclose);
}

// Writes the report to --output (`out`) or stdout; 1 when a job failed or the file cannot be
// written; 128 + the signal when SIGINT or SIGTERM stopped the run (the report covers what ran,
// as fio's on Ctrl-C).
int emit(const FioOptions& o, const workload::RunReport& report,
         const std::vector<workload::OutputFormat>& formats, std::FILE* out) {
  if (report.interrupted)
    std::fprintf(stderr, "afasim fio: interrupted by %s: the report covers the run until then\n",
                 stop_signal_name(interrupt_signal()));
  const std::string text = workload::format_report(report, formats);
  if (out == nullptr) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0) {
    const int error = errno;
    return fail_command("fio", "--output: cannot write " + o.output + ": " + std::strerror(error), 1);
  }
  if (report.interrupted) return interrupted_exit_code();
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

// The write caches' dirty data through a run, sampled every 100 ms of simulated time (the
// interval doubles, up to an hour, while nothing moves, so an idle thinktime costs
// nothing). A measured group whose writes the caches absorbed, or gave back, measured a
// transient and not the steady state a published figure is (time-based groups: a group bound by
// its size, as the shipped files' fills, is preconditioning): the review preconditioned "to
// steady state", and on the ISE 860 G3 the 4 GiB caches take ~12-19 s of 8K 70/30 at 16T16Q to
// settle (config/workloads/ise860-8k-7030.fio). note() says so on stderr, beside fio's
// warnings. It only reads the array, so the run is the same with it.
class CacheWatch {
 public:
  CacheWatch(sim::Simulator& sim, const controller::Array& array) : sim_(sim), array_(array) { sample(); }
  ~CacheWatch() { sim_.cancel(next_); }
  CacheWatch(const CacheWatch&) = delete;
  CacheWatch& operator=(const CacheWatch&) = delete;

  void note(const workload::RunReport& report) const {
    struct Window {
      sim::Time start = sim::kTimeMax, end = 0;
      std::int64_t written = 0;
      std::string name;
      bool time_based = false;  // a measurement; a size-bound group preconditions (fills)
    };
    std::map<int, Window> groups;
    for (const workload::JobResult& r : report.results) {
      const workload::FioJob& job = report.job_file.jobs[static_cast<std::size_t>(r.job_index)];
      Window& w = groups[job.group_id];
      if (w.name.empty()) w.name = job.name;
      w.time_based = w.time_based || job.time_based;
      w.start = std::min(w.start, r.start_ns + job.ramp_time_ns);
      w.end = std::max(w.end, r.end_ns);
      w.written += static_cast<std::int64_t>(r.direction[workload::index_of(workload::Direction::kWrite)].io_bytes);
    }
    for (const auto& [id, w] : groups) {
      if (!w.time_based || w.written < (64 << 20) || w.end <= w.start) continue;  // fills, small writes
      const double from = static_cast<double>(dirty_bytes_at(w.start)), to = static_cast<double>(dirty_bytes_at(w.end));
      const double share = (to - from) / static_cast<double>(w.written);
      if (std::abs(share) < kTransientShare) continue;
      std::fprintf(stderr,
                   "afasim fio: note: group %d ([%s]): while it was measured the write caches' dirty data %s from "
                   "%.2f to %.2f GB, %.0f %% of the %.2f GB its jobs wrote: %s, so its figures are %s the steady "
                   "state; a longer ramp_time, or a group before it that fills the caches, reaches it (the shipped "
                   "job files: ise860-128k-seq.fio ramps 25 s, ise860-4k-randwrite.fio writes 1 GiB per job first)\n",
                   id, w.name.c_str(), share > 0 ? "grew" : "fell", from / 1e9, to / 1e9, 100.0 * std::abs(share),
                   static_cast<double>(w.written) / 1e9,
                   share > 0 ? "those writes were absorbed by the cache, not yet written to the SSDs"
                             : "destage ran ahead of the writes",
                   share > 0 ? "above" : "below");
    }
  }

 private:
  // Dirty data that changed by a tenth of what a group wrote: the result moved by about as much
  // (a 70/30 run read 266K instead of 236K IOPS while its cache filled).
  static constexpr double kTransientShare = 0.10;
  static constexpr sim::Time kIntervalNs = 100 * sim::kMillisecond;
  static constexpr sim::Time kIdleIntervalMaxNs = 3600 * sim::kSecond;
  static constexpr std::size_t kMaxSamples = std::size_t{1} << 16;  // 1 MB; 1.8 h of 100 ms steps

  void sample() {
    std::int64_t dirty_bytes = 0, host_bytes = 0;
    for (const controller::ControllerInfo& c : array_.controllers()) {
      dirty_bytes += c.dirty_bytes;
      const controller::ControllerIoStats& hw = array_.data_path().hardware().stats(c.id);
      host_bytes += hw.read_bytes + hw.write_bytes;
    }
    // Back to 100 ms as soon as anything moves (host I/O, or destage emptying the cache), so
    // a group's first sample is fresh; doubling, up to an hour, while nothing does.
    const bool moved = samples_.empty() || host_bytes != host_bytes_ || dirty_bytes != samples_.back().dirty_bytes;
    interval_ns_ = moved ? kIntervalNs : std::min(2 * interval_ns_, kIdleIntervalMaxNs);
    host_bytes_ = host_bytes;
    // Only changes are kept (the last sample at or before t reads the same), and past
    // kMaxSamples every other one is dropped: a year-long job's samples stay ~1 MB, at a
    // coarser step (review 41: 16 bytes per 100 ms, 9 MB a simulated day, never trimmed).
    if (samples_.empty() || dirty_bytes != samples_.back().dirty_bytes) {
      if (samples_.size() >= kMaxSamples) {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < samples_.size(); i += 2) samples_[kept++] = samples_[i];
        samples_.resize(kept);
      }
      samples_.push_back({sim_.now(), dirty_bytes});
    }
    ++taken_;
    // Nothing else to run (after the first sample, taken before the jobs start): the jobs are
    // done, or stuck, which run_fio must see as an empty queue, not as a sampler ticking forever.
    if (taken_ > 1 && sim_.pending() == 0) return;
    next_ = sim_.after(interval_ns_, [this] { sample(); });
  }

  // The last sample at or before `t`.
  std::int64_t dirty_bytes_at(sim::Time t) const {
    auto it = std::upper_bound(samples_.begin(), samples_.end(), t,
                               [](sim::Time at, const Sample& s) { return at < s.at_ns; });
    return it == samples_.begin() ? 0 : std::prev(it)->dirty_bytes;
  }

  struct Sample {
    sim::Time at_ns;
    std::int64_t dirty_bytes;
  };
  sim::Simulator& sim_;
  const controller::Array& array_;
  std::vector<Sample> samples_;
  sim::Time interval_ns_ = kIntervalNs;
  std::int64_t host_bytes_ = -1;
  std::int64_t taken_ = 0;  // samples taken, kept or not
  sim::EventId next_;
};

// verify= keeps every byte its jobs write in memory, to read it back: what their regions can
// hold, over all volumes, must fit this machine's memory. Refused up front, not left to grow
// into the kernel's OOM killer (review 34: bs=1g size=1000g verify=crc32c reached 6 GB in
// 15 s before an allocation failed under a ulimit; without one the machine would).
// A thin volume read while little of it was ever written (fio review 44: the first job a user
// types, randread of a new thin LUN, read 194K IOPS, 36 % above the array's 4K read maximum:
// a read of a never-written extent returns zeros from the controller and reaches no SSD).
void note_unwritten_thin_reads(const controller::Array& array) {
  constexpr double kWrittenShare = 0.5;  // below it, most of a uniform read's blocks are holes
  constexpr std::int64_t kReadBytes = 64 << 20;  // a measurement, not a verify's or a fill's tail
  for (const auto& [id, v] : array.volumes()) {
    if (v.provisioning != controller::Provisioning::kThin) continue;
    const controller::VolumeIoStats* io = array.data_path().volume_stats(v.id);
    if (io == nullptr || io->read_bytes < kReadBytes) continue;
    const std::int64_t allocated = array.data_path().allocated_extents(v.id) * array.extent_bytes(v.raid_type);
    const double share = static_cast<double>(std::min(allocated, v.capacity_bytes)) / static_cast<double>(v.capacity_bytes);
    if (share >= kWrittenShare) continue;
    std::fprintf(stderr,
                 "afasim fio: note: thin volume %s was read (%.2f GB) with %.0f %% of it ever written: a read of a "
                 "never-written extent returns zeros from the controller without reaching an SSD, so the reads' "
                 "IOPS and latency are mostly the controllers' alone; write the region first (a group before the "
                 "reads, as the shipped ise860-4k-randread.fio does) or run with --provisioning fixed\n",
                 config::printable(v.name).c_str(), static_cast<double>(io->read_bytes) / 1e9, 100.0 * share);
  }
}

sim::Status check_verify_memory(const workload::FioJobFile& file) {
  std::map<std::string, std::int64_t> held;  // volume → the end of its verified regions
  for (const auto& j : file.jobs) {
    if (!j.verify || !workload::does_writes(j.rw)) continue;
    for (int c = 0; c < j.numjobs; ++c)
      for (int f = 0; f < j.file_count(); ++f) {
        std::int64_t& end = held[j.volume_name(c, f)];
        end = std::max(end, j.region_offset_bytes(c) + j.size_bytes);
      }
  }
  __int128 total = 0;
  for (const auto& [volume, bytes] : held) total += bytes;
  // The machine's memory, or less where this process is held to less (ulimit -v, -d).
  __int128 memory = static_cast<__int128>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit limit {};
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      memory = std::min<__int128>(memory, static_cast<__int128>(limit.rlim_cur));
  }
  if (memory <= 0 || total <= memory) return sim::Status::ok();
  return sim::invalid_argument("verify= keeps every byte written in memory to read it back: the verifying jobs' "
                               "regions hold " + config::human_bytes(static_cast<std::int64_t>(total)) +
                               ", more than the " + config::human_bytes(static_cast<std::int64_t>(memory)) +
                               " of memory this process may use; give them a smaller size=");
}

// "" unless --output names a file the run reads (`inputs`), a log file a job writes (hostile
// review 43: the report and the log wrote over each other) or a file in --config-dir, else which.
std::string output_problem(const FioOptions& o, const workload::FioJobFile& file, const std::vector<std::string>& inputs) {
  const std::string& output = o.output;
  if (output.empty()) return "";
  if (std::string bad = output_is_input(output, inputs); !bad.empty()) return bad;
  if (std::string bad = output_in_config_dir(output, o.config_dir); !bad.empty()) return bad;
  if (std::error_code ec; std::filesystem::is_directory(output, ec)) return output + " is a folder, not a file";
  const std::filesystem::path out = written_path(output);
  int thread_number = 0;
  for (const workload::FioJob& j : file.jobs)
    for (int c = 0; c < j.numjobs; ++c) {
      ++thread_number;
      for (const std::string& log : workload::FioLogWriter::paths(j.logs, "", thread_number))
        if (written_path(log) == out)
          return output + " is the log file " + log + " job \"" + config::printable(j.name) +
                 "\" writes: give one of them another name";
    }
  return "";
}

// The parse's warnings and notes, on stderr. A job that names no ioengine= runs at its
// iodepth in afasim, and at 1 in fio (its default engine, psync, is synchronous): said once
// (hostile review 43).
void print_parse_messages(const workload::FioJobFile& file) {
  for (const auto& w : file.warnings) std::fprintf(stderr, "afasim fio: warning: %s\n", config::printable(w, true).c_str());
  for (const auto& n : file.notes) std::fprintf(stderr, "afasim fio: %s\n", config::printable(n, true).c_str());
  for (const workload::FioJob& j : file.jobs)
    if (j.ioengine.empty() && j.iodepth > 1) {
      std::fprintf(stderr,
                   "afasim fio: note: job \"%s\" names no ioengine: afasim keeps its iodepth=%d I/Os in flight, as "
                   "libaio would; fio's default engine, psync, would keep one (docs/workloads.md \"I/O engines\")\n",
                   config::printable(j.name, true).c_str(), j.iodepth);
      return;
    }
}

// fio's --warnings-fatal and --readonly against the parsed jobs; verify='s memory.
sim::Status check_fio_flags(const FioOptions& o, const workload::FioJobFile& file) {
  AFASIM_RETURN_IF_ERROR(check_verify_memory(file));
  if (o.warnings_fatal && !file.warnings.empty())
    return sim::invalid_argument("--warnings-fatal: the job file has warnings (above)");
  if (o.readonly)
    for (const auto& j : file.jobs)
      if (workload::does_writes(j.rw) || workload::does_trims(j.rw))
        return sim::invalid_argument("--readonly: job \"" + config::printable(j.name) + "\" writes (rw=" +
                                     std::string(workload::to_string(j.rw)) + "), as fio refuses it");
  return sim::Status::ok();
}

int run_fio_command(const FioOptions& o) {
  // fio: --minimal is --output-format=terse; --append-terse adds it to the others.
  auto formats = workload::parse_output_formats(
      o.minimal ? "terse" : o.output_format + (o.append_terse ? ",terse" : ""));
  if (!formats.is_ok()) return fail_command("fio", "--output-format: " + formats.status().message(), 2);
  if (o.terse_version != 3)
    return fail_command("fio", "--terse-version=" + std::to_string(o.terse_version) +
                                   ": afasim writes terse version 3 (fio's default) only", 2);
  // A bare device first: every filename is the whole device, as fio sees a block device.
  std::unique_ptr<DeviceRun> device_run;
  if (!o.device.empty()) {
    device_run = open_device_run("afasim fio", o.config_dir, o.device, o.device_state, o.seed);
    if (!device_run) return 2;
  }
  auto file = load_jobs(o, device_run ? device_run->target->capacity_bytes() : 0);
  if (!file.is_ok()) return fail_command("fio", file.status().message(), 2);
  print_parse_messages(*file);
  if (const sim::Status st = check_fio_flags(o, *file); !st.is_ok()) return fail_command("fio", st.message(), 2);
  if (o.parse_only) return 0;  // fio --parse-only: the job files parsed, nothing run
  // What the run reads may not be written over: --output or a log named like a job file, an
  // include or a read_iolog trace replaced it (hostile round 23).
  std::vector<std::string> inputs = workload::fio_referenced_files(*file);
  for (const std::string& path : o.job_files)
    if (path != "-") inputs.push_back(path);
  if (const std::string bad = output_problem(o, *file, inputs); !bad.empty()) return fail_command("fio", "--output: " + bad, 2);
  OutputFile out = open_output(o.output);
  if (!o.output.empty() && !out) {
    const int error = errno;
    return fail_command("fio", "--output: cannot write " + o.output + ": " + std::strerror(error), 1);
  }
  if (!o.device.empty()) {
    workload::FioRunOptions run_options;
    run_options.seed = o.seed;
    run_options.input_files = inputs;
    if (!o.quiet) run_options.progress = progress_printer("afasim ");
    run_options.interrupted = &catch_interrupts();
    return run_on_device(o, *device_run, *file, run_options, *formats, out.get());
  }
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(o.config_dir);
  if (!catalog.is_ok()) return fail_command("fio", catalog.status().message(), 2);
  auto preset = catalog->system(o.system);
  if (!preset.is_ok()) return fail_command("fio", "--system: " + preset.status().message(), 2);
  workload::FioRunOptions run_options;
  run_options.seed = o.seed;
  run_options.input_files = inputs;
  run_options.raid_type = *raid::parse_raid_type(o.raid_type);
  run_options.provisioning = *controller::parse_provisioning(o.provisioning);
  if (!o.quiet) run_options.progress = progress_printer("afasim ");
  run_options.interrupted = &catch_interrupts();

  // verify= reads back what was written: the SSDs keep the bytes (docs/workloads.md).
  controller::ArrayOptions array_options;
  for (const auto& j : file->jobs)
    if (j.verify) array_options.data_path.payload = datapac::PayloadKind::kMemory;
  sim::Simulator sim(o.seed);
  controller::MemoryJournal journal;
  auto array = controller::Array::open(sim, *catalog, *preset, journal, journal.snapshot(), array_options);
  // A bad calibration in --config-dir is bad input (2), as a bad preset is (hostile round 18).
  if (!array.is_ok())
    return fail_command("fio", array.status().message(), array.status().code() == sim::Code::kInvalidArgument ? 2 : 1);
  CacheWatch watch(sim, **array);
  auto report = workload::run_fio(**array, sim, *file, run_options);
  if (!report.is_ok()) return fail_command("fio", report.status().message(), 2);
  watch.note(*report);
  note_unwritten_thin_reads(**array);
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
  cmd->add_option("job_files", o->job_files, "fio job files (- reads one from standard input)");
  cmd->add_option("--system", o->system, "System preset")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Root seed (same seed, same report)")
      ->check(seed_check())
      ->capture_default_str();
  cmd->add_option("--output-format", o->output_format, "normal, terse, json, json+, or several: normal,json")
      ->capture_default_str();
  cmd->add_option("--output", o->output, "Write the report to this file instead of stdout");
  cmd->add_option("--section", o->sections, "Run only this job section (repeatable), as fio's --section")
      ->allow_extra_args(false);  // one value an occurrence: "--section a job.fio" took the job file as a second section
  const std::string fio_flags = "fio's own flags";
  cmd->add_flag("--minimal", o->minimal, "As fio: terse output (--output-format=terse)")->group(fio_flags);
  cmd->add_flag("--append-terse", o->append_terse, "As fio: terse output after the others")->group(fio_flags);
  cmd->add_option("--terse-version", o->terse_version, "As fio: the terse format's version (3 only)")
      ->check(count_check(1, 9))
      ->group(fio_flags);
  cmd->add_flag("--parse-only", o->parse_only, "As fio: parse the job files, run nothing")->group(fio_flags);
  cmd->add_flag("--readonly", o->readonly, "As fio: refuse jobs that write or trim")->group(fio_flags);
  cmd->add_flag("--warnings-fatal", o->warnings_fatal, "As fio: a job file warning is an error")->group(fio_flags);
  // fio's console and process flags: they change what fio prints while it runs or how it
  // allocates, not the workload or the report.
  for (const char* flag : {"--eta", "--eta-newline", "--eta-interval", "--status-interval", "--max-jobs", "--debug",
                           "--aux-path", "--alloc-size"})
    cmd->add_option(flag, o->console_flag, "Taken and ignored (fio's console or process)")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)  // fio takes the last one too
        ->group(fio_flags);
  add_volume_options(cmd, "job", o->raid_type, o->provisioning, o->config_dir, o->quiet);
  CLI::Option* device = cmd->add_option("--device", o->device,
                                        "Run on this bare device (afasim devices lists them) instead of an array");
  // The array's flags are refused beside --device, and --device-state without it: they were
  // taken and ignored without a word (hostile round 28: --device X --raid-type RAID5 printed
  // the same report as --device X).
  cmd->add_option("--volume-size", o->volume_size,
                  "Size of a volume no job sizes (fio jobs on a whole device: filename=/dev/nvme0n1 without size=); "
                  "such a job covers it");
  for (const char* array_flag : {"--system", "--raid-type", "--provisioning", "--volume-size"})
    device->excludes(cmd->get_option(array_flag));
  cmd->add_option("--device-state", o->device_state,
                  "With --device: fresh (out of the box), filled (written once, as reviews start) or steady (SNIA PTS preconditioned)")
      ->check(CLI::IsMember({"fresh", "filled", "steady"}))
      ->capture_default_str()
      ->needs(device);
  return [o, cmd] {
    o->extras = cmd->remaining();
    o->volume_size_given = cmd->count("--volume-size") > 0;
    return run_fio_command(*o);
  };
}

}  // namespace afasim::app
