#include "workload/fio_runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "sim/assert.h"
#include "workload/distribution.h"
#include "workload/fio_runner_internal.h"
#include "workload/fio_verify.h"

namespace afasim::workload {
namespace {

// "FILE:LINE" of the option `name` as the job has it: its own section's last one, else
// [global]'s; the section header when neither wrote it.
std::string written_at(const FioJobFile& f, const FioJob& j, const std::string& name) {
  const WrittenOption* at = nullptr;
  for (const auto* list : {&f.global_options, &j.options})
    for (const WrittenOption& o : *list)
      if (o.name == name) at = &o;
  if (at == nullptr) return f.file_name + ":" + std::to_string(j.line);
  return (at->file.empty() ? f.file_name : at->file) + ":" + std::to_string(at->line);
}

// read_iolog=: the whole trace is read once before the run starts, as fio 3.33 reads it up
// front (iolog.c read_iolog, unless read_iolog_chunked), so that a bad line stops the run with
// its file and line before anything is simulated instead of ending the job where the replay
// reaches it. The run streams the file again (memory stays one line). A pipe cannot be read
// twice: its lines are checked as they play.
sim::Status check_iolog(const FioJobFile& f, const FioJob& j) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(j.read_iolog, ec)) return sim::Status::ok();
  auto trace = TraceReader::open(j.read_iolog, TraceReaderOptions{});
  sim::Status st = trace.status();
  while (st.is_ok()) {
    auto next = (*trace)->next();
    st = next.status();
    if (st.is_ok() && !*next) break;
  }
  if (st.is_ok()) return st;
  return sim::Status(st.code(), written_at(f, j, "read_iolog") + ": read_iolog: " + st.message());
}

}  // namespace

int errno_of(sim::Code code) {
  switch (code) {
    case sim::Code::kNoSpace:
      return ENOSPC;
    case sim::Code::kOutOfRange:
    case sim::Code::kInvalidArgument:
      return EINVAL;
    case sim::Code::kReadOnly:
      return EPERM;
    case sim::Code::kUnavailable:
      return ESHUTDOWN;
    default:
      return EIO;
  }
}

sim::Status FioSession::Impl::start() {
  AFASIM_ASSERT(!started_, "FioSession started twice");
  report_.job_file = file_;
  report_.system = target_.name();
  report_.seed = options_.seed;
  std::map<std::string, controller::Id> volumes;
  for (const auto& v : file_.volumes) {
    auto found = target_.volume(v.name);
    if (!found.is_ok())
      return sim::not_found(file_.file_name + ":" + std::to_string(v.line) +
                            ": filename: " + found.status().message());
    volumes[v.name] = *found;
  }
  for (const auto& j : file_.jobs) {
    if (j.verify && !target_.keeps_payload())
      return sim::unprocessable(file_.file_name + ":" + std::to_string(j.line) + ": verify: " +
                                target_.payload_refusal());
  }
  for (const auto& j : file_.jobs)
    if (!j.read_iolog.empty()) AFASIM_RETURN_IF_ERROR(check_iolog(file_, j));
  AFASIM_RETURN_IF_ERROR(build_clones(volumes));
  started_ = true;
  start_ready_jobs();
  return sim::Status::ok();
}

// One result and one clone per (job, clone), in job then clone order; each clone's files,
// access patterns and log files.
sim::Status FioSession::Impl::build_clones(const std::map<std::string, controller::Id>& volumes) {
  AFASIM_RETURN_IF_ERROR(check_log_file_budget(log_files_needed(file_), file_.file_name));
  int total = 0;
  for (const auto& j : file_.jobs) total += j.numjobs;
  report_.results.resize(static_cast<std::size_t>(total));
  clones_.resize(static_cast<std::size_t>(total));
  job_clones_left_.assign(file_.jobs.size(), 0);
  // fio init.c: exitall in any job makes every job's end stop the jobs its exit_what names
  // (exitall_on_terminate is one flag for the run; review 32).
  exitall_ = std::any_of(file_.jobs.begin(), file_.jobs.end(), [](const FioJob& j) { return j.exitall; });
  job_started_.assign(file_.jobs.size(), false);
  std::size_t k = 0;
  for (const auto& j : file_.jobs) {
    for (int c = 0; c < j.numjobs; ++c, ++k) {
      Clone& cl = clones_[k];
      cl.job = &j;
      cl.thread_number = static_cast<int>(k) + 1;
      cl.result = &report_.results[k];
      cl.result->job_index = j.job_index;
      cl.result->clone = c;
      for (int f = 0; f < j.file_count(); ++f) {
        CloneFile file;
        file.volume_name = j.volume_name(c, f);
        file.volume_id = volumes.at(file.volume_name);
        file.pattern.emplace(j, c, access_pattern_rng(options_.seed, j, c, f));
        if (j.verify) file.verify_key = verify_volume_key(options_.verify_seed.value_or(options_.seed), file.volume_name);
        cl.files.push_back(std::move(file));
      }
      cl.file_ios_left = j.file_service_ios;
      if (j.file_service == FileService::kRandom)
        cl.file_rng.emplace(options_.seed, "workload/fio/" + std::to_string(j.job_index) + "/" +
                                               std::to_string(c) + "/files");
      cl.bytes_target = j.total_io_bytes();
      cl.latency_checked = j.latency.any();
      for (int d = 0; d < kDirections; ++d) {
        cl.checks_min_rate |= j.rate_iops_min[d] > 0 || j.rate_min_bytes_per_second[d] > 0;
        cl.paced |= j.rate_iops[d] > 0 || j.rate_bytes_per_second[d] > 0;
      }
      if (cl.paced && j.rate_process == RateProcess::kPoisson)
        cl.poisson_rng.emplace(options_.seed, "workload/fio/" + std::to_string(j.job_index) + "/" +
                                                  std::to_string(c) + "/rate");
      if (!j.read_iolog.empty()) {
        auto trace = TraceReader::open(j.read_iolog, TraceReaderOptions{});
        if (!trace.is_ok())
          return sim::Status(trace.status().code(),
                             written_at(file_, j, "read_iolog") + ": read_iolog: " + trace.status().message());
        cl.iolog = std::move(trace).value();
      }
      cl.ends_at_bytes = !cl.iolog && !j.time_based;
      cl.counts_ios = j.number_ios > 0;
      cl.reopens_with_sync =
          j.loops >= 2 && (j.fsync_every_writes != 0 || j.fdatasync_every_writes != 0) && !j.time_based && !cl.iolog;
      cl.thinks = j.thinktime_ns > 0;
      cl.verifies = j.verify;
      if (j.logs.any()) {
        auto logs = FioLogWriter::open(j.logs, options_.log_dir, cl.thread_number, log_paths_, options_.input_files);
        if (!logs.is_ok()) return logs.status();
        cl.logs = std::move(logs).value();
      }
    }
    job_clones_left_[static_cast<std::size_t>(j.job_index)] = j.numjobs;
  }
  clones_left_ = total;
  build_steadystate_units();
  return sim::Status::ok();
}

int FioSession::Impl::clones_running() const {
  int running = 0;
  for (const auto& c : clones_) running += c.started && !c.finished;
  return running;
}

// Starts the jobs whose turn has come: file order; a stonewall job waits for every earlier
// job, a wait_for job for the named one.
void FioSession::Impl::start_ready_jobs() {
  if (stopped_) return;
  for (const auto& j : file_.jobs) {
    const auto ji = static_cast<std::size_t>(j.job_index);
    if (job_started_[ji]) continue;
    bool ready = true;
    if (j.stonewall)
      for (std::size_t e = 0; e < ji; ++e) ready &= job_clones_left_[e] == 0 && job_started_[e];
    if (!j.wait_for.empty())
      for (const auto& other : file_.jobs)
        if (other.name == j.wait_for && other.job_index < j.job_index)
          ready &= job_started_[static_cast<std::size_t>(other.job_index)] &&
                   job_clones_left_[static_cast<std::size_t>(other.job_index)] == 0;
    if (!ready) {
      if (j.stonewall) break;  // nothing after a waiting stonewall may start either
      continue;
    }
    job_started_[ji] = true;
    for (auto& c : clones_)
      if (c.job == &j) {
        Clone* cp = &c;
        if (sim_.now() > kMaxJobTimeNs - j.startdelay_ns) {  // ends in an event of its own, as a start would
          sim_.after(0, [this, cp] {
            fail_clone(*cp, EOVERFLOW, "startdelay: the job would start past 100 years of virtual time");
            finish_clone(*cp);
          });
          continue;
        }
        sim_.after(j.startdelay_ns, [this, cp] {
          start_clone(*cp);
          if (cp->steadystate_unit >= 0) start_steadystate(*cp);
        });
      }
  }
}

// fio steadystate_setup: a job with steadystate_duration checks its own clones, or with
// group_reporting its whole reporting group's, as one unit.
void FioSession::Impl::build_steadystate_units() {
  std::map<std::pair<int, int>, int> unit_of;  // (group, -1) or (-1, clone index)
  for (std::size_t k = 0; k < clones_.size(); ++k) {
    Clone& c = clones_[k];
    if (!c.job->steadystate.enabled()) continue;
    const auto key = c.job->group_reporting ? std::pair{c.job->group_id, -1} : std::pair{-1, static_cast<int>(k)};
    const auto [at, fresh] = unit_of.try_emplace(key, static_cast<int>(steadystate_units_.size()));
    if (fresh) steadystate_units_.push_back(SteadyStateUnit{});
    SteadyStateUnit& u = steadystate_units_[static_cast<std::size_t>(at->second)];
    u.clones.push_back(&c);
    u.result.spec = c.job->steadystate;
    c.steadystate_unit = at->second;
  }
}

// The unit's first clone started: a check every second of virtual time from the end of its
// ramp_time (fio's steadystate_check, driven by its helper thread's ss_check_interval, 1 s in
// fio 3.33, counts from the job's epoch, which the ramp's end resets; review 33b: a job with
// ramp_time=5s ss_dur=3s stopped at 3 s, inside its ramp).
void FioSession::Impl::start_steadystate(Clone& c) {
  SteadyStateUnit& u = steadystate_units_[static_cast<std::size_t>(c.steadystate_unit)];
  if (u.start >= 0) return;
  u.start = c.measure_from;
  const int index = c.steadystate_unit;
  sim_.at(u.start + sim::kSecond, [this, index] { check_steadystate(index); });
}

void FioSession::Impl::check_steadystate(int index) {
  SteadyStateUnit& u = steadystate_units_[static_cast<std::size_t>(index)];
  std::uint64_t ios = 0, bytes = 0;
  bool running = false;
  for (const Clone* c : u.clones) {
    running |= !c->finished;
    for (const DirectionStats& ds : c->result->direction) {  // what completed past the ramp
      ios += ds.io_count;
      bytes += ds.io_bytes;
    }
  }
  if (!running || stopped_) return;
  // Samples begin one interval after steadystate_ramp_time (fio's FIO_SS_RAMP_OVER).
  const bool sampling = sim_.now() - u.start >= u.result.spec.ramp_ns + sim::kSecond;
  if (sampling && u.result.add_sample(ios - u.prev_ios, bytes - u.prev_bytes)) {
    for (Clone* c : u.clones) {  // fio_mark_td_terminate: stop issuing, reap what is in flight
      if (c->finished) continue;
      c->stop_at = std::min(c->stop_at, sim_.now());
      pump(*c);
    }
    return;
  }
  u.prev_ios = ios;
  u.prev_bytes = bytes;
  sim_.after(sim::kSecond, [this, index] { check_steadystate(index); });
}

// fio backend.c fio_terminate_threads(groupid, exit_what): a job of the group, or one running
// in any group, or all of them. A job stopped before it started never starts.
void FioSession::Impl::exit_all(const FioJob& ended) {
  if (ended.exit_what == ExitWhat::kAll) return stop();
  for (auto& c : clones_) {
    if (c.finished) continue;
    const bool chosen = ended.exit_what == ExitWhat::kGroup ? c.job->group_id == ended.group_id : c.started;
    if (!chosen) continue;
    if (!c.started) {
      c.result->start_ns = sim_.now();  // never ran: an empty result
      job_started_[static_cast<std::size_t>(c.job->job_index)] = true;
    }
    finish_clone(c);
  }
}

void FioSession::Impl::stop() {
  if (!started_ || clones_left_ == 0) return;
  stopped_ = true;
  for (auto& c : clones_)
    if (!c.finished) {
      if (!c.started) c.result->start_ns = sim_.now();  // never ran: an empty result
      finish_clone(c);
    }
}

FioSession::FioSession(controller::Array& array, sim::Simulator& sim, FioJobFile file,
                       FioRunOptions options) {
  auto owned = std::make_unique<ArrayTarget>(array);
  impl_ = std::make_unique<Impl>(*owned, sim, std::move(file), std::move(options));
  impl_->owned_target_ = std::move(owned);
}

FioSession::FioSession(IoTarget& target, sim::Simulator& sim, FioJobFile file,
                       FioRunOptions options)
    : impl_(std::make_unique<Impl>(target, sim, std::move(file), std::move(options))) {}
FioSession::~FioSession() = default;

void FioSession::set_job_error_observer(JobErrorObserver observer) {
  impl_->job_error_observer_ = std::move(observer);
}

void FioSession::set_observer(Observer observer) {
  impl_->observer_ = std::move(observer);
}
sim::Status FioSession::start() {
  return impl_->start();
}
bool FioSession::started() const {
  return impl_->started_;
}
bool FioSession::finished() const {
  return impl_->started_ && impl_->clones_left_ == 0;
}
void FioSession::stop() {
  impl_->stop();
}
void FioSession::stop_simulator_when_finished() {
  impl_->stop_simulator_when_finished_ = true;
}
const FioJobFile& FioSession::job_file() const {
  return impl_->file_;
}
int FioSession::clones_running() const {
  return impl_->clones_running();
}
int FioSession::clone_count() const {
  return static_cast<int>(impl_->clones_.size());
}
std::int64_t FioSession::ios_done() const {
  return impl_->ios_done_;
}
const RunReport& FioSession::report() const {
  for (const SteadyStateUnit& u : impl_->steadystate_units_)  // copied once, not every second
    for (Clone* c : u.clones) c->result->steadystate = u.result;
  return impl_->report_;
}

std::string FioSession::status_line() const {
  return std::to_string(clones_running()) + "/" + std::to_string(clone_count()) +
         " clones running, " + std::to_string(ios_done()) + " I/Os done";
}

std::int64_t log_files_needed(const FioJobFile& f) {
  std::int64_t needed = 0;
  for (const auto& j : f.jobs) needed += std::int64_t{FioLogWriter::files_per_clone(j.logs)} * j.numjobs;
  return needed;
}

sim::Status check_log_file_budget(std::int64_t needed, const std::string& where) {
  rlimit limit{};
  if (needed == 0 || ::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return sim::Status::ok();
  constexpr std::int64_t kOwnFiles = 64;  // the array's and the report's own, with a margin
  const auto allowed = static_cast<std::int64_t>(limit.rlim_cur);
  if (needed + kOwnFiles <= allowed) return sim::Status::ok();
  return sim::invalid_argument(where + ": the jobs' log files (write_*_log) keep " + std::to_string(needed) +
                               " files open, one per log and clone; the open-file limit (ulimit -n) is " +
                               std::to_string(allowed) + ", " + std::to_string(kOwnFiles) +
                               " of them afasim's own: raise the limit, or log fewer clones");
}

sim::Status prepare_volumes(controller::Array& array, const FioJobFile& file,
                            const FioRunOptions& options) {
  // Counted first: the 4,097th volume's own refusal blamed a filename= line the job may not
  // have and advised deleting one from a fresh array (hostile round 23).
  std::size_t new_volumes = 0;
  for (const auto& v : file.volumes) new_volumes += array.volume_by_name(v.name) == nullptr;
  if (array.volumes().size() + new_volumes > controller::kMaxVolumes)
    return sim::invalid_argument(file.file_name + ": the jobs name " + std::to_string(new_volumes) +
                                 " new volumes (filename=, or numjobs x nrfiles of their own); the array holds at "
                                 "most " + std::to_string(controller::kMaxVolumes) + ", " +
                                 std::to_string(array.volumes().size()) + " of them made already");
  for (const auto& v : file.volumes) {
    const std::int64_t size = (v.size_bytes + controller::kSectorBytes - 1) /
                              controller::kSectorBytes * controller::kSectorBytes;
    if (const controller::Volume* existing = array.volume_by_name(v.name)) {
      if (existing->capacity_bytes < size)
        return sim::unprocessable(file.file_name + ":" + std::to_string(v.line) +
                                  ": filename: volume \"" + v.name + "\" exists with " +
                                  std::to_string(existing->capacity_bytes) +
                                  " bytes; the job needs " + std::to_string(size));
      continue;
    }
    controller::VolumeSpec spec;
    spec.name = v.name;
    spec.capacity_bytes = size;
    spec.raid_type = options.raid_type;
    spec.provisioning = options.provisioning;
    auto created = array.create_volume(spec);
    if (!created.is_ok())
      return sim::Status(created.status().code(), file.file_name + ":" + std::to_string(v.line) +
                                                      ": filename: cannot create volume \"" +
                                                      v.name + "\": " + created.status().message());
  }
  return sim::Status::ok();
}

std::int64_t jobs_in_flight(const FioJobFile& file) {
  std::int64_t together = 0, most = 0;
  for (const FioJob& job : file.jobs) {
    if (job.stonewall) together = 0;
    together += static_cast<std::int64_t>(job.numjobs) * job.iodepth;
    most = std::max(most, together);
  }
  return most;
}

namespace {

// kMaxJobsInFlight (fio_runner.h): numjobs x iodepth of the jobs that run together.
sim::Status check_in_flight(const FioJobFile& file, const char* target) {
  std::int64_t together = 0;
  for (const FioJob& job : file.jobs) {
    if (job.stonewall) together = 0;
    together += static_cast<std::int64_t>(job.numjobs) * job.iodepth;
    if (together > kMaxJobsInFlight)
      return sim::invalid_argument(file.file_name + ":" + std::to_string(job.line) + ": iodepth: the jobs running with [" +
                                   job.name + "] keep " + std::to_string(together) +
                                   " I/Os in flight (numjobs x iodepth); " + target + " takes at most " +
                                   std::to_string(kMaxJobsInFlight));
  }
  return sim::Status::ok();
}

sim::Result<RunReport> run_session(FioSession& session, sim::Simulator& sim,
                                   const FioRunOptions& options) {
  session.stop_simulator_when_finished();
  AFASIM_RETURN_IF_ERROR(session.start());
  // Progress every kProgressSteps events (the caller rate-limits the lines), not on a timer of
  // simulated time: a thinktime or startdelay of years has nothing to run in it, and a timer
  // would run millions of times there. It only reads. The session stops the simulator after
  // the event that finishes it, so no event runs after that one.
  while (!session.finished()) {
    if (sim.run_events(kProgressSteps) == 0 || session.finished()) break;  // 0: nothing queued
    if (options.interrupted != nullptr && options.interrupted->load(std::memory_order_relaxed)) {
      session.stop();
      RunReport report = session.report();
      report.interrupted = true;
      return report;
    }
    if (!options.progress) continue;
    char line[160];
    std::snprintf(line, sizeof line, "fio: %.1f s simulated, %d/%d clones running, %lld I/Os done",
                  sim::to_seconds(sim.now()), session.clones_running(), session.clone_count(),
                  static_cast<long long>(session.ios_done()));
    options.progress(line);
  }
  AFASIM_ASSERT(session.finished(), "fio run ended with clones still running");
  return session.report();
}

}  // namespace

sim::Result<RunReport> run_fio(controller::Array& array, sim::Simulator& sim,
                               const FioJobFile& file, const FioRunOptions& options) {
  AFASIM_RETURN_IF_ERROR(check_in_flight(file, "the array"));
  AFASIM_RETURN_IF_ERROR(prepare_volumes(array, file, options));
  FioSession session(array, sim, file, options);
  return run_session(session, sim, options);
}

sim::Result<RunReport> run_fio(IoTarget& target, std::int64_t capacity_bytes, sim::Simulator& sim,
                               const FioJobFile& file, const FioRunOptions& options) {
  for (const auto& v : file.volumes)
    if (v.size_bytes > capacity_bytes)
      return sim::unprocessable(file.file_name + ":" + std::to_string(v.line) + ": filename: \"" +
                                v.name + "\" needs " + std::to_string(v.size_bytes) +
                                " bytes; device " + target.name() + " has " +
                                std::to_string(capacity_bytes));
  AFASIM_RETURN_IF_ERROR(check_in_flight(file, "a bare device"));
  FioSession session(target, sim, file, options);
  return run_session(session, sim, options);
}

void FioSession::Impl::finish_clone(Clone& c) {
  using sim::Time;
  c.finished = true;
  c.issuing = false;
  const Time now = sim_.now();
  c.result->end_ns = now;
  for (auto& ds : c.result->direction)
    if (ds.io_count > 0) ds.runtime_ns = std::max<Time>(1, now - c.measure_from);
  // Ended inside its ramp_time: fio never zeroed the counts, and reports them over the time
  // the job ran, with no latency samples (fio review 33: 512 reads in 256 ms reported as none).
  for (std::size_t d = 0; d < kDirections && now < c.measure_from; ++d) {
    auto& ds = c.result->direction[d];
    ds.io_count = c.ramp_ios[d];
    ds.io_bytes = c.ramp_bytes[d];
    if (ds.io_count > 0) ds.runtime_ns = std::max<Time>(1, now - c.start);
  }
  // A job that only writes, then verifies: fio times each direction over its own phase, the
  // writes until the verify began, the reads from there (fio review 32: both had the whole job's
  // time, so each direction's bandwidth read about half of fio's).
  if (c.verify_from >= 0 && !does_reads(c.job->rw)) {
    auto& writes = c.result->direction[static_cast<std::size_t>(index_of(Direction::kWrite))];
    auto& reads = c.result->direction[static_cast<std::size_t>(index_of(Direction::kRead))];
    if (writes.io_count > 0) writes.runtime_ns = std::max<Time>(1, c.verify_from - c.measure_from);
    if (reads.io_count > 0) reads.runtime_ns = std::max<Time>(1, now - std::max(c.verify_from, c.measure_from));
  }
  if (c.logs && c.started)
    if (sim::Status st = c.logs->finish(now - c.start); !st.is_ok()) fail_clone(c, EIO, st.message());
  --clones_left_;
  --job_clones_left_[static_cast<std::size_t>(c.job->job_index)];
  if (job_clones_left_[static_cast<std::size_t>(c.job->job_index)] == 0) start_ready_jobs();
  // exitall: a job that ends ends the others exit_what names (fio's td_exitall on thread exit).
  if (exitall_ && c.started && !stopped_) exit_all(*c.job);
  if (clones_left_ == 0 && stop_simulator_when_finished_) sim_.stop();
}

}  // namespace afasim::workload
