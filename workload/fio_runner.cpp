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
    case sim::Code::kNoSpace: return ENOSPC;
    case sim::Code::kOutOfRange:
    case sim::Code::kInvalidArgument: return EINVAL;
    case sim::Code::kReadOnly: return EPERM;
    case sim::Code::kUnavailable: return ESHUTDOWN;
    default: return EIO;
  }
}

class Run;

// One clone of one job: its own access pattern, queue and counters.
struct Clone {
  Run* run = nullptr;
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
  bool wakeup_pending = false;
};

class Run {
 public:
  Run(controller::Array& array, sim::Simulator& sim, const FioJobFile& file, const FioRunOptions& options)
      : array_(array), sim_(sim), file_(file), options_(options) {}

  sim::Result<RunReport> execute();
  void on_complete(Clone& c, Direction d, std::int64_t bytes, const IoCompletion& done);
  void pump(Clone& c);

 private:
  void start_ready_jobs();
  void start_clone(Clone& c);
  void finish_clone(Clone& c);
  void flush_interval(Clone& c, Time now);
  void progress_tick();

  controller::Array& array_;
  sim::Simulator& sim_;
  const FioJobFile& file_;
  const FioRunOptions& options_;
  RunReport report_;
  std::vector<Clone> clones_;
  std::vector<int> job_clones_left_;   // per job: clones not finished
  std::vector<bool> job_started_;
  int clones_left_ = 0;
  std::int64_t ios_done_ = 0;
};

sim::Result<RunReport> Run::execute() {
  report_.job_file = file_;
  report_.system = array_.preset().name;
  report_.seed = options_.seed;
  std::map<std::string, controller::Id> volumes;
  for (const auto& v : file_.volumes) volumes[v.name] = array_.volume_by_name(v.name)->id;
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
      cl.run = this;
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
  const Time run_start = sim_.now();
  (void)run_start;
  start_ready_jobs();
  sim_.after(kProgressInterval, [this] { progress_tick(); });
  while (clones_left_ > 0 && sim_.step()) {
  }
  AFASIM_ASSERT(clones_left_ == 0, "fio run ended with clones still running");
  return std::move(report_);
}

void Run::progress_tick() {
  if (clones_left_ == 0) return;
  if (options_.progress) {
    int running = 0;
    for (const auto& c : clones_) running += c.started && !c.finished;
    char line[160];
    std::snprintf(line, sizeof line, "fio: %.1f s simulated, %d/%zu clones running, %lld I/Os done",
                  sim::to_seconds(sim_.now()), running, clones_.size(), static_cast<long long>(ios_done_));
    options_.progress(line);
  }
  sim_.after(kProgressInterval, [this] { progress_tick(); });
}

// Starts the jobs whose turn has come: file order; a stonewall job waits for every earlier
// job, a wait_for job for the named one.
void Run::start_ready_jobs() {
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

void Run::start_clone(Clone& c) {
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

void Run::pump(Clone& c) {
  const FioJob& j = *c.job;
  while (c.issuing && c.in_flight < j.iodepth) {
    const Time now = sim_.now();
    if (now >= c.stop_at || (!j.time_based && c.bytes_issued >= c.bytes_target)) {
      c.issuing = false;
      break;
    }
    const IoUnit u = c.pattern->next();
    const int d = index_of(u.direction);
    // Rate limits: the next I/O of a direction may start one interval after the previous.
    Time earliest = c.next_allowed[static_cast<std::size_t>(d)];
    if (j.rate_iops[static_cast<std::size_t>(d)] > 0 || j.rate_bytes_per_second[static_cast<std::size_t>(d)] > 0) {
      Time gap = 0;
      if (j.rate_iops[static_cast<std::size_t>(d)] > 0)
        gap = std::max(gap, sim::interval_for_rate(j.rate_iops[static_cast<std::size_t>(d)]));
      if (j.rate_bytes_per_second[static_cast<std::size_t>(d)] > 0)
        gap = std::max(gap, sim::transfer_time(u.size_bytes, j.rate_bytes_per_second[static_cast<std::size_t>(d)]));
      c.next_allowed[static_cast<std::size_t>(d)] = std::max(earliest, now) + gap;
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
      array_.submit(io, [this, cp, dir, bytes](const IoCompletion& done) { on_complete(*cp, dir, bytes, done); });
    };
    if (earliest > now) sim_.at(earliest, std::move(submit));
    else submit();
  }
  if (!c.issuing && c.in_flight == 0 && !c.finished) finish_clone(c);
}

void Run::flush_interval(Clone& c, Time now) {
  while (now >= c.interval_start + kSampleInterval) {
    for (int d = 0; d < kDirections; ++d) {
      auto& ds = c.result->direction[static_cast<std::size_t>(d)];
      if (c.first_io[static_cast<std::size_t>(d)] != sim::kTimeMax)
        ds.record_interval(c.interval_bytes[static_cast<std::size_t>(d)], c.interval_ios[static_cast<std::size_t>(d)],
                           kSampleInterval);
      c.interval_bytes[static_cast<std::size_t>(d)] = 0;
      c.interval_ios[static_cast<std::size_t>(d)] = 0;
    }
    c.interval_start += kSampleInterval;
  }
}

void Run::on_complete(Clone& c, Direction d, std::int64_t bytes, const IoCompletion& done) {
  --c.in_flight;
  ++ios_done_;
  const Time now = done.complete_time;
  if (!done.status.is_ok()) {
    if (c.result->error == 0) {
      c.result->error = errno_of(done.status.code());
      c.result->error_message = done.status.message();
    }
    c.issuing = false;  // fio stops a job at its first error (continue_on_error=none)
  } else if (done.submit_time >= c.measure_from) {
    const auto di = static_cast<std::size_t>(index_of(d));
    c.result->record_io(d, bytes, 0, done.latency());
    c.first_io[di] = std::min(c.first_io[di], done.submit_time);
    c.last_io[di] = std::max(c.last_io[di], now);
    flush_interval(c, now);
    c.interval_bytes[di] += bytes;
    c.interval_ios[di] += 1;
  }
  pump(c);
}

void Run::finish_clone(Clone& c) {
  c.finished = true;
  const Time now = sim_.now();
  c.result->end_ns = now;
  for (int d = 0; d < kDirections; ++d) {
    auto& ds = c.result->direction[static_cast<std::size_t>(d)];
    if (ds.io_count > 0) ds.runtime_ns = std::max<Time>(1, now - c.measure_from);
  }
  --clones_left_;
  --job_clones_left_[static_cast<std::size_t>(c.job->job_index)];
  if (job_clones_left_[static_cast<std::size_t>(c.job->job_index)] == 0) start_ready_jobs();
}

}  // namespace

sim::Status prepare_volumes(controller::Array& array, const FioJobFile& file, const FioRunOptions& options) {
  for (const auto& v : file.volumes) {
    const std::int64_t size = (v.size_bytes + controller::kSectorBytes - 1) / controller::kSectorBytes *
                              controller::kSectorBytes;
    if (const controller::Volume* existing = array.volume_by_name(v.name)) {
      if (existing->capacity_bytes < size)
        return sim::unprocessable(file.file_name + ":" + std::to_string(v.line) + ": filename: volume \"" + v.name +
                                  "\" exists with " + std::to_string(existing->capacity_bytes) +
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
                                                      ": filename: cannot create volume \"" + v.name +
                                                      "\": " + created.status().message());
  }
  return sim::Status::ok();
}

sim::Result<RunReport> run_fio(controller::Array& array, sim::Simulator& sim, const FioJobFile& file,
                               const FioRunOptions& options) {
  AFASIM_RETURN_IF_ERROR(prepare_volumes(array, file, options));
  Run run(array, sim, file, options);
  return run.execute();
}

}  // namespace afasim::workload
