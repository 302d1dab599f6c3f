// The fio session's limits on a job's service: the minimum rates (rate_iops_min=, rate_min=)
// and latency_target= and max_latency= (fio_latency_target.h). For the latter each
// completed I/O is held against the limits, the search is judged where fio's do_io loop
// judges it (fio calls lat_target_check once per pass of its loop; here once per completion,
// which at a full queue is the same one check per I/O), and its steps are carried out: a
// lower depth drains the queue first (fio's io_u_quiesce), the settled depth drains it and
// resets the job's statistics and runtime (fio's reset_all_stats and reset_io_stats, as at
// the end of ramp_time), and a final window that holds ends the job.
#include <cerrno>

#include "workload/fio_runner_internal.h"

namespace afasim::workload {

using controller::IoCompletion;
using sim::Time;
using Step = LatencyTargetSearch::Step;

// backend.c check_min_rate: each rate_cycle, a direction with a minimum must have met it.
void FioSession::Impl::check_min_rate(Clone& c, Time now) {
  const FioJob& j = *c.job;
  if (now < c.rate_window_start + j.rate_cycle_ns) return;
  const Time window = now - c.rate_window_start;
  for (int d = 0; d < kDirections; ++d) {
    if (!does_direction(j.rw, static_cast<Direction>(d))) continue;
    const auto ios_per_s = static_cast<std::int64_t>(
        static_cast<__int128>(c.direction[static_cast<std::size_t>(d)].rate_window_ios) * sim::kSecond / window);
    const auto bytes_per_s = static_cast<std::int64_t>(
        static_cast<__int128>(c.direction[static_cast<std::size_t>(d)].rate_window_bytes) * sim::kSecond / window);
    if (j.rate_iops_min[d] > 0 && ios_per_s < j.rate_iops_min[d]) {
      fail_clone(c, EIO, "min iops rate " + std::to_string(j.rate_iops_min[d]) + " not met, got " +
                             std::to_string(ios_per_s));
    } else if (j.rate_min_bytes_per_second[d] > 0 && bytes_per_s < j.rate_min_bytes_per_second[d]) {
      fail_clone(c, EIO, "min rate " + std::to_string(j.rate_min_bytes_per_second[d]) +
                             " not met, got " + std::to_string(bytes_per_s));
    }
  }
  c.rate_window_start = now;
  for (CloneDirection& cd : c.direction) {
    cd.rate_window_ios = 0;
    cd.rate_window_bytes = 0;
  }
}

void FioSession::Impl::start_latency_control(Clone& c) {
  const FioJob& j = *c.job;
  c.depth_limit = j.iodepth;
  if (!j.latency.enabled()) return;
  c.latency = std::make_unique<LatencyTargetSearch>(j.latency, j.iodepth);
  c.latency->reset(sim_.now(), c.latency_completed);
  c.depth_limit = c.latency->depth();
  c.result->latency_depth = c.latency->depth();
}

void FioSession::Impl::control_latency(Clone& c, const IssuedIo& what, const IoCompletion& done) {
  const FioJob& j = *c.job;
  if (!what.sync && done.status.is_ok()) {  // fio io_completed: syncs count in neither
    ++c.latency_completed;
    const Time max = j.latency.max_ns[static_cast<std::size_t>(index_of(what.direction))];
    const bool over_max = j.latency.judged && max > 0 && done.latency() > max;
    // fio io_u.c: max_latency's lat_fatal, then the target's lat_target_failed, on one I/O.
    // fio's verify phase (do_verify) has its own loop: no window is judged there, and its
    // reads leave the search alone (review 35: a final run's reset wiped the job's writes).
    const bool searching = c.latency && c.phase == ClonePhase::kWorkload;
    if (searching && j.latency.judged && done.latency() > j.latency.target_ns) {
      const Step step = c.latency->on_late_io();
      if (step == Step::kFatal && !over_max) return fail_latency(c, what, done, j.latency.target_ns);
      take_latency_step(c, step);
    }
    if (over_max) return fail_latency(c, what, done, max);
  }
  if (!c.latency || !c.issuing || c.phase != ClonePhase::kWorkload) return;
  if (c.latency_draining != Step::kNone) {
    if (c.in_flight == 0) finish_latency_drain(c);
    return;
  }
  judge_latency_window(c);
}

// fio lat_target_check, once per pass of fio's do_io loop: here after each completion and
// after each I/O issued (a pass that only submits), so a window in which nothing completed is
// judged, and fails, as fio's 0/0 (review 34: the default latency_window=0 settles at depth 1).
void FioSession::Impl::judge_latency_window(Clone& c) {
  const Time now = sim_.now();
  if (c.latency_draining != Step::kNone || now < c.measure_from) return;  // fio: none in ramp_time
  if (c.job->ramp_time_ns > 0 && !c.latency_ramp_reset) {
    // fio's ramp end resets the statistics, and with them the search (lat_target_reset).
    c.latency_ramp_reset = true;
    if (!c.latency->final_run()) c.latency->reset(now, c.latency_completed);
    c.latency_since_reset = c.latency_completed;
  }
  // fio skips the check until an I/O has completed since its counters were last zeroed
  // (backend.c: bytes_done == 0 goes round the loop again).
  if (c.latency_completed == c.latency_since_reset) return;
  take_latency_step(c, c.latency->check(now, c.latency_completed));
  if (c.latency_draining == Step::kNone) c.depth_limit = c.latency->depth();
  else if (c.in_flight == 0) finish_latency_drain(c);  // nothing to wait for (iodepth=1, thinktime)
}

// The queue drained after a lower depth, before the final run or at a new loop: the next
// window starts (a new loop's search from depth 1).
void FioSession::Impl::finish_latency_drain(Clone& c) {
  const Step drained = c.latency_draining;
  c.latency_draining = Step::kNone;
  if (drained == Step::kFinalRun) {
    reset_for_final_run(c);
    c.latency_since_reset = c.latency_completed;
  }
  if (c.latency_new_loop) {
    c.latency_new_loop = false;
    c.latency->reset(sim_.now(), c.latency_completed);
  }
  c.latency->new_cycle(sim_.now(), c.latency_completed);
  c.depth_limit = c.latency->depth();
}

// fio runs each of loops= through do_io, which waits for its I/O at the end and starts the
// search over at the beginning (lat_target_init): at a loop's first I/O the queue drains and
// the search restarts at depth 1 (review 34b: one search ran across three loops, depth 4
// where fio's last loop reports 2). True when the clone must wait for the drain.
bool FioSession::Impl::starts_latency_loop(Clone& c) {
  const FioJob& j = *c.job;
  if (j.loops < 2 || j.time_based || c.iolog) return false;
  const std::int64_t loop_bytes = c.bytes_target / j.loops;
  if (loop_bytes <= 0 || c.bytes_issued / loop_bytes <= c.latency_loop) return false;
  c.latency_loop = c.bytes_issued / loop_bytes;
  c.latency_new_loop = true;
  if (c.latency_draining == Step::kNone) c.latency_draining = Step::kQuiesce;
  c.depth_limit = 0;
  if (c.in_flight == 0) finish_latency_drain(c);
  return true;
}

void FioSession::Impl::take_latency_step(Clone& c, Step step) {
  c.result->latency_depth = c.latency->depth();
  switch (step) {
    case Step::kNone:
    case Step::kFatal:  // check() gives none; on_late_io()'s is the caller's
      return;
    case Step::kQuiesce:
    case Step::kFinalRun:
      // A depth lowered while the final run drains still gets its final run (fio: the nested
      // quiesce, then reset_all_stats).
      if (c.latency_draining != Step::kFinalRun) c.latency_draining = step;
      c.depth_limit = 0;
      return;
    case Step::kDone:
      c.latency_done = true;
      c.stop_at = sim_.now();  // fio's td->done: the workload ends, I/O in flight completes
      return;
  }
}

// The workload ended by size= after the final run's reset, before its window held: fio's
// reset zeroed the bytes its loop counts, so it enters do_io again, which starts the search
// over (lat_target_init) and ends at once: it reports depth 1 (review 34, fio 3.33).
void FioSession::Impl::end_latency_control(Clone& c) {
  const FioJob& j = *c.job;
  const bool by_number_ios = j.number_ios > 0 && c.ios_issued >= j.number_ios * j.loops;  // fio stops there
  if (c.latency->final_run() && !c.latency_done && sim_.now() < c.stop_at && !by_number_ios) c.result->latency_depth = 1;
}

// fio lat_fatal: ETIMEDOUT ("max latency exceeded"), with fio's line naming the I/O.
void FioSession::Impl::fail_latency(Clone& c, const IssuedIo& what, const IoCompletion& done, Time limit_ns) {
  fail_clone(c, ETIMEDOUT,
             "latency of " + std::to_string(done.latency()) + " nsec exceeds specified max (" +
                 std::to_string(limit_ns) + " nsec): " + c.files[static_cast<std::size_t>(what.file)].volume_name +
                 " " + std::string(to_string(what.direction)) + " " + std::to_string(what.offset) + " " +
                 std::to_string(what.bytes));
}

// fio reset_all_stats + reset_io_stats: what the job reports starts again from here, and so
// do its runtime and its rate schedule; the logs go on.
void FioSession::Impl::reset_for_final_run(Clone& c) {
  const FioJob& j = *c.job;
  const Time now = sim_.now();
  JobResult& r = *c.result;
  r.direction = {};
  r.clat_bins = {};
  r.sync = {};
  r.depth_bins = {};
  c.measure_from = now;
  r.measure_from_ns = now;
  c.ramp_ios.fill(0);
  c.ramp_bytes.fill(0);
  c.interval_start = now;
  c.rate_window_start = now;
  for (CloneDirection& cd : c.direction) {
    cd.interval_bytes = 0;
    cd.interval_ios = 0;
    cd.first_io = sim::kTimeMax;
    cd.rate_window_ios = 0;
    cd.rate_window_bytes = 0;
  }
  if (j.runtime_ns > 0) c.stop_at = std::min(now + j.runtime_ns, kMaxJobTimeNs);
  // Not the bytes issued against size=: fio's reset leaves io_issue_bytes, so the final run
  // gets what is left of size= (review 34: 4,381 I/Os of a 3,072-I/O job). It does zero
  // io_issues, which number_ios counts (review 35).
  c.ios_issued = 0;
  c.restart_rate_schedule(now);
}

}  // namespace afasim::workload
