#include "workload/fio_runner.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <memory>

#include "sim/assert.h"
#include "workload/distribution.h"

namespace afasim::workload {
namespace {

using controller::HostIo;
using controller::IoCompletion;
using controller::IoOp;
using sim::Time;

constexpr Time kSampleInterval = 500 * sim::kMillisecond;  // fio's default log interval
constexpr Time kProgressInterval = 100 * sim::kMillisecond;

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

// One clone of one job: its own access pattern, queue and counters.
struct Clone {
  const FioJob* job = nullptr;
  JobResult* result = nullptr;
  controller::Id volume_id = 0;
  std::unique_ptr<AccessPattern> pattern;
  int in_flight = 0;
  bool started = false;
  bool issuing = false;  // accepts new I/O
  bool finished = false;
  Time start = 0;
  Time measure_from = 0;  // start + ramp_time
  Time stop_at = sim::kTimeMax;
  std::int64_t bytes_issued = 0;
  std::int64_t bytes_target = 0;
  std::array<Time, kDirections> next_allowed{0, 0};  // rate limiting
  std::array<std::int64_t, kDirections> interval_bytes{0, 0};
  std::array<std::int64_t, kDirections> interval_ios{0, 0};
  Time interval_start = 0;
  std::array<Time, kDirections> first_io{sim::kTimeMax, sim::kTimeMax};
  std::array<Time, kDirections> last_io{0, 0};
};

}  // namespace

struct FioSession::Impl {
  Impl(IoTarget& target, sim::Simulator& sim, FioJobFile file, FioRunOptions options)
      : target_(target), sim_(sim), file_(std::move(file)), options_(std::move(options)) {}

  sim::Status start();
  void stop();
  void on_complete(Clone& c, Direction d, std::int64_t bytes, const IoCompletion& done);
  void pump(Clone& c);
  void start_ready_jobs();
  void start_clone(Clone& c);
  void finish_clone(Clone& c);
  void flush_interval(Clone& c, Time now);
  int clones_running() const;

  std::unique_ptr<ArrayTarget> owned_target_;  // when constructed on an Array
  IoTarget& target_;
  sim::Simulator& sim_;
  const FioJobFile file_;  // clones point into its jobs
  const FioRunOptions options_;
  Observer observer_;
  RunReport report_;
  std::vector<Clone> clones_;
  std::vector<int> job_clones_left_;  // per job: clones not finished
  std::vector<bool> job_started_;
  int clones_left_ = 0;
  std::int64_t ios_done_ = 0;
  bool started_ = false;
  bool stopped_ = false;
};

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
  started_ = true;
  // One result and one clone per (job, clone), in job then clone order.
  int total = 0;
  for (const auto& j : file_.jobs) total += j.numjobs;
  report_.results.resize(static_cast<std::size_t>(total));
  clones_.resize(static_cast<std::size_t>(total));
  job_clones_left_.assign(file_.jobs.size(), 0);
  job_started_.assign(file_.jobs.size(), false);
  std::size_t k = 0;
  for (const auto& j : file_.jobs) {
    for (int c = 0; c < j.numjobs; ++c, ++k) {
      Clone& cl = clones_[k];
      cl.job = &j;
      cl.result = &report_.results[k];
      cl.result->job_index = j.job_index;
      cl.result->clone = c;
      cl.volume_id = volumes.at(j.volume_name(c));
      cl.pattern = std::make_unique<AccessPattern>(j, c, access_pattern_rng(options_.seed, j, c));
      cl.bytes_target = j.total_io_bytes();
    }
    job_clones_left_[static_cast<std::size_t>(j.job_index)] = j.numjobs;
  }
  clones_left_ = total;
  start_ready_jobs();
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
        sim_.after(j.startdelay_ns, [this, cp] { start_clone(*cp); });
      }
  }
}

void FioSession::Impl::start_clone(Clone& c) {
  if (c.finished) return;  // the session was stopped during the startdelay
  c.started = true;
  c.issuing = true;
  c.start = sim_.now();
  c.measure_from = c.start + c.job->ramp_time_ns;
  c.interval_start = c.measure_from;
  if (c.job->runtime_ns > 0) c.stop_at = c.measure_from + c.job->runtime_ns;
  c.next_allowed = {c.start, c.start};
  c.result->start_ns = c.start;
  pump(c);
}

void FioSession::Impl::pump(Clone& c) {
  const FioJob& j = *c.job;
  while (c.issuing && c.in_flight < j.iodepth) {
    const Time now = sim_.now();
    if (now >= c.stop_at || (!j.time_based && c.bytes_issued >= c.bytes_target)) {
      c.issuing = false;
      break;
    }
    const IoUnit u = c.pattern->next();
    const auto d = static_cast<std::size_t>(index_of(u.direction));
    // Rate limits: the next I/O of a direction may start one interval after the previous.
    Time earliest = c.next_allowed[d];
    if (j.rate_iops[d] > 0 || j.rate_bytes_per_second[d] > 0) {
      Time gap = 0;
      if (j.rate_iops[d] > 0) gap = std::max(gap, sim::interval_for_rate(j.rate_iops[d]));
      if (j.rate_bytes_per_second[d] > 0)
        gap = std::max(gap, sim::transfer_time(u.size_bytes, j.rate_bytes_per_second[d]));
      c.next_allowed[d] = std::max(earliest, now) + gap;
    }
    c.bytes_issued += u.size_bytes;
    ++c.in_flight;
    HostIo io;
    io.op = u.direction == Direction::kRead ? IoOp::kRead : IoOp::kWrite;
    io.volume_id = c.volume_id;
    io.offset_bytes = u.offset_bytes;
    io.length_bytes = u.size_bytes;
    Clone* cp = &c;
    const Direction dir = u.direction;
    const std::int64_t bytes = u.size_bytes;
    auto submit = [this, cp, io, dir, bytes] {
      if (cp->finished) {  // stopped while this I/O waited for its rate slot
        --cp->in_flight;
        return;
      }
      target_.submit(io, [this, cp, dir, bytes](const IoCompletion& done) {
        on_complete(*cp, dir, bytes, done);
      });
    };
    if (earliest > now)
      sim_.at(earliest, std::move(submit));
    else
      submit();
  }
  if (!c.issuing && c.in_flight == 0 && !c.finished) finish_clone(c);
}

void FioSession::Impl::flush_interval(Clone& c, Time now) {
  while (now >= c.interval_start + kSampleInterval) {
    for (std::size_t d = 0; d < kDirections; ++d) {
      auto& ds = c.result->direction[d];
      if (c.first_io[d] != sim::kTimeMax)
        ds.record_interval(c.interval_bytes[d], c.interval_ios[d], kSampleInterval);
      c.interval_bytes[d] = 0;
      c.interval_ios[d] = 0;
    }
    c.interval_start += kSampleInterval;
  }
}

void FioSession::Impl::on_complete(Clone& c, Direction d, std::int64_t bytes,
                                   const IoCompletion& done) {
  --c.in_flight;
  if (c.finished) return;  // stopped: I/O still in flight at the stop is not counted
  ++ios_done_;
  const Time now = done.complete_time;
  bool measured = false;
  if (!done.status.is_ok()) {
    if (c.result->error == 0) {
      c.result->error = errno_of(done.status.code());
      c.result->error_message = done.status.message();
    }
    c.issuing = false;  // fio stops a job at its first error (continue_on_error=none)
  } else if (done.submit_time >= c.measure_from) {
    measured = true;
    const auto di = static_cast<std::size_t>(index_of(d));
    c.result->record_io(d, bytes, 0, done.latency());
    c.first_io[di] = std::min(c.first_io[di], done.submit_time);
    c.last_io[di] = std::max(c.last_io[di], now);
    flush_interval(c, now);
    c.interval_bytes[di] += bytes;
    c.interval_ios[di] += 1;
  }
  if (observer_) {
    FioCompletion fc;
    fc.job_index = c.job->job_index;
    fc.clone = c.result->clone;
    fc.volume_id = c.volume_id;
    fc.direction = d;
    fc.bytes = bytes;
    fc.measured = measured;
    fc.io = &done;
    observer_(fc);
  }
  pump(c);
}

void FioSession::Impl::finish_clone(Clone& c) {
  c.finished = true;
  c.issuing = false;
  const Time now = sim_.now();
  c.result->end_ns = now;
  for (auto& ds : c.result->direction)
    if (ds.io_count > 0) ds.runtime_ns = std::max<Time>(1, now - c.measure_from);
  --clones_left_;
  --job_clones_left_[static_cast<std::size_t>(c.job->job_index)];
  if (job_clones_left_[static_cast<std::size_t>(c.job->job_index)] == 0) start_ready_jobs();
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
  return impl_->report_;
}

std::string FioSession::status_line() const {
  return std::to_string(clones_running()) + "/" + std::to_string(clone_count()) +
         " clones running, " + std::to_string(ios_done()) + " I/Os done";
}

sim::Status prepare_volumes(controller::Array& array, const FioJobFile& file,
                            const FioRunOptions& options) {
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

namespace {

sim::Result<RunReport> run_session(FioSession& session, sim::Simulator& sim,
                                   const FioRunOptions& options) {
  AFASIM_RETURN_IF_ERROR(session.start());
  // The progress tick only reads: the events it adds never reorder the run's own.
  sim::EventId tick;
  std::function<void()> progress_tick = [&] {
    if (session.finished()) return;
    if (options.progress) {
      char line[160];
      std::snprintf(line, sizeof line,
                    "fio: %.1f s simulated, %d/%d clones running, %lld I/Os done",
                    sim::to_seconds(sim.now()), session.clones_running(), session.clone_count(),
                    static_cast<long long>(session.ios_done()));
      options.progress(line);
    }
    tick = sim.after(kProgressInterval, [&progress_tick] { progress_tick(); });
  };
  tick = sim.after(kProgressInterval, [&progress_tick] { progress_tick(); });
  while (!session.finished() && sim.step()) {
  }
  AFASIM_ASSERT(session.finished(), "fio run ended with clones still running");
  sim.cancel(tick);  // it refers to this frame
  return session.report();
}

}  // namespace

sim::Result<RunReport> run_fio(controller::Array& array, sim::Simulator& sim,
                               const FioJobFile& file, const FioRunOptions& options) {
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
  FioSession session(target, sim, file, options);
  return run_session(session, sim, options);
}

}  // namespace afasim::workload
