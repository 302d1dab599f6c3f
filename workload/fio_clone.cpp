// One clone's I/O (fio_runner_internal.h): which I/O next, when, what its completion
// counts for; think time, flushes, minimum rates, verification and log files.
#include <algorithm>
#include <cerrno>

#include "sim/assert.h"
#include "workload/fio_runner_internal.h"
#include "workload/fio_verify.h"

namespace afasim::workload {
namespace {

using controller::HostIo;
using controller::IoCompletion;
using controller::IoOp;
using sim::Time;

constexpr Time kSampleInterval = 500 * sim::kMillisecond;  // fio's default log interval

IoOp op_of(Direction d) {
  switch (d) {
    case Direction::kRead:
      return IoOp::kRead;
    case Direction::kWrite:
      return IoOp::kWrite;
    case Direction::kTrim:
      return IoOp::kTrim;
  }
  return IoOp::kRead;
}

// The file the next I/O goes to (fio's file_service_type), advancing the choice.
int next_file(Clone& c) {
  const int n = static_cast<int>(c.files.size());
  const int chosen = c.file;
  if (n > 1 && --c.file_ios_left <= 0) {
    const FioJob& j = *c.job;
    std::int64_t ios = j.file_service_ios;
    if (j.file_service == FileService::kSequential) {
      // fio: one file after the other, each to the end of its region.
      ios = std::max<std::int64_t>(1, j.size_bytes / j.min_block_bytes());
    }
    c.file = j.file_service == FileService::kRandom
                 ? static_cast<int>(c.file_rng->uniform(static_cast<std::uint64_t>(n)))
                 : (c.file + 1) % n;
    c.file_ios_left = ios;
  }
  return chosen;
}

// The unit a file issues next, drawing as issue_next and verification's replay both must:
// the unit drawn ahead, or, when the rate gives the turn to `other` direction, a unit drawn
// for it while the one ahead waits. Inline: GCC kept a call for its two callers.
[[gnu::always_inline]] inline IoUnit take_unit(AccessPattern& pattern, std::optional<IoUnit>& ahead, std::optional<Direction> other) {
  if (!ahead) ahead = pattern.next();
  if (other) return pattern.next_for(*other);
  const IoUnit u = *ahead;
  ahead = pattern.next();
  return u;
}

// fio io_u.c rate_ddir: a mixed job's direction that is ahead of its rate gives its turn to
// the other one when that one is due, or due sooner. Without it a run of one direction's
// I/Os would hold every slot waiting for its rate while the other fell behind.
Direction rate_direction(const Clone& c, Direction d, Time now) {
  const FioJob& j = *c.job;
  if (d == Direction::kTrim || !does_reads(j.rw) || !does_writes(j.rw)) return d;
  const Direction other = d == Direction::kRead ? Direction::kWrite : Direction::kRead;
  const int other_share = other == Direction::kRead ? j.rwmix_read_percent : 100 - j.rwmix_read_percent;
  const Time due = c.direction[static_cast<std::size_t>(index_of(d))].next_allowed;
  const Time other_due = c.direction[static_cast<std::size_t>(index_of(other))].next_allowed;
  if (due <= now || other_share == 0) return d;
  if (other_due <= now) return other;
  return due <= other_due ? d : other;
}

}  // namespace

void FioSession::Impl::start_clone(Clone& c) {
  if (c.finished) return;  // the session was stopped during the startdelay
  c.started = true;
  c.issuing = true;
  c.start = sim_.now();
  c.measure_from = c.start + c.job->ramp_time_ns;
  c.interval_start = c.measure_from;
  c.rate_window_start = c.measure_from;
  if (c.job->runtime_ns > 0) c.stop_at = c.measure_from + c.job->runtime_ns;
  c.rate_epoch = c.start;
  for (CloneDirection& cd : c.direction) cd.next_allowed = c.start;
  c.result->start_ns = c.start;
  c.result->measure_from_ns = c.measure_from;
  start_latency_control(c);
  pump(c);
}

bool FioSession::Impl::workload_done(Clone& c, Time now) const {
  // A replayed trace ends with its last I/O (fio), not at io_size.
  return now >= c.stop_at ||
         (c.ends_at_bytes && c.bytes_issued >= c.bytes_target) ||
         (c.counts_ios && c.ios_issued >= c.job->number_ios * c.job->loops);
}

[[gnu::hot]] void FioSession::Impl::pump(Clone& c) {
  const FioJob& j = *c.job;
  while (c.issuing && !c.pausing && !c.idle_until_stop && c.in_flight < c.depth_limit) {
    if (c.phase == ClonePhase::kWorkload) {
      // fio: the sync is the next I/O after every Nth write, so none follows the last write
      // (fio review 32: 128 syncs for 1,024 writes with fsync=8, fio 127).
      if (workload_done(c, sim_.now())) {
        c.sync_due = false;
        end_workload(c);
        continue;
      }
      if (c.sync_due || (c.reopens_with_sync && opens_next_loop(c))) {
        issue_sync(c);
        continue;
      }
      if (c.latency && starts_latency_loop(c)) continue;
      if (c.iolog) {
        if (!issue_from_iolog(c)) break;
        if (c.latency) judge_latency_window(c);
        continue;
      }
      issue_next(c);
      if (c.latency) judge_latency_window(c);
      // backend.c handle_thinktime: every thinktime_blocks I/Os, drain, then idle.
      if (c.thinks && ++c.think_count % j.thinktime_blocks == 0) c.pausing = true;
    } else if (c.phase == ClonePhase::kVerifyWait) {
      if (c.in_flight > 0) break;  // every write has landed before the first read back
      c.phase = ClonePhase::kVerify;
      c.verify_from = sim_.now();
    } else if (!issue_verify_read(c)) {
      c.issuing = false;
    }
  }
  if (c.pausing && c.in_flight == 0 && !c.think_scheduled && !c.finished && c.stop_at - j.thinktime_ns <= sim_.now()) {
    c.pausing = false;  // the runtime ends before the pause does
    idle_until_stop(c);
    return;
  }
  if (c.pausing && c.in_flight == 0 && !c.think_scheduled && !c.finished &&
      sim_.now() > kMaxJobTimeNs - j.thinktime_ns) {
    c.pausing = false;
    fail_clone(c, EOVERFLOW, "thinktime: the job would run past 100 years of virtual time");
  }
  if (c.pausing && c.in_flight == 0 && !c.think_scheduled && !c.finished) {
    c.think_scheduled = true;
    Clone* cp = &c;
    sim_.after(j.thinktime_ns, [this, cp] {
      cp->pausing = false;
      cp->think_scheduled = false;
      if (!cp->finished) pump(*cp);
    });
  }
  if (!c.issuing && c.in_flight == 0 && !c.finished) finish_clone(c);
}

void FioSession::Impl::idle_until_stop(Clone& c) {
  c.idle_until_stop = true;
  Clone* cp = &c;
  sim_.at(std::max(c.stop_at, sim_.now()), [this, cp] {
    cp->idle_until_stop = false;
    if (!cp->finished) pump(*cp);
  });
}

// The workload part is over: verify what was written (fio's do_verify), or finish.
void FioSession::Impl::end_workload(Clone& c) {
  const FioJob& j = *c.job;
  if (c.latency) end_latency_control(c);
  // A job stopped by its runtime never verifies (fio backend.c: a terminated job breaks out
  // before do_verify; fio review 33: 100 writes then 100 reads back, fio 0 reads).
  if (!j.verify || !j.do_verify || c.result->error != 0 || c.writes_issued == 0 || sim_.now() >= c.stop_at) {
    c.issuing = false;
    return;
  }
  c.phase = ClonePhase::kVerifyWait;
  for (std::size_t f = 0; f < c.files.size(); ++f) {
    Clone::ReplayFile r;
    r.pattern = std::make_unique<AccessPattern>(
        j, c.result->clone, access_pattern_rng(options_.seed, j, c.result->clone, static_cast<int>(f)));
    r.left = c.files[f].units_drawn;
    c.replay.push_back(std::move(r));
  }
}

// The next write of the replayed patterns, read back; false when none is left.
bool FioSession::Impl::issue_verify_read(Clone& c) {
  for (std::size_t f = 0; f < c.replay.size(); ++f) {
    Clone::ReplayFile& r = c.replay[f];
    const auto& switched = c.files[f].switched;
    while (r.left > 0) {
      --r.left;
      std::optional<Direction> other;
      if (r.next_switch < switched.size() && switched[r.next_switch].first == r.index)
        other = switched[r.next_switch++].second;
      ++r.index;
      const IoUnit u = take_unit(*r.pattern, r.ahead, other);
      if (u.direction != Direction::kWrite) continue;
      HostIo io;
      io.op = IoOp::kRead;
      io.volume_id = c.files[f].volume_id;
      io.offset_bytes = u.offset_bytes;
      io.length_bytes = u.size_bytes;
      submit_verifying(c, io, IssuedIo{Direction::kRead, false, false, static_cast<int>(f), u.size_bytes, u.offset_bytes},
                       sim_.now());
      return true;
    }
  }
  return false;
}

// read_iolog=: the trace's next I/O, at its recorded time (relative to the clone's start)
// unless replay_no_stall; false when it is not due yet (a wake-up is scheduled) or the trace
// has ended (the workload is over).
bool FioSession::Impl::issue_from_iolog(Clone& c) {
  const FioJob& j = *c.job;
  if (!c.iolog_next) {
    while (true) {
      auto next = c.iolog->next();
      if (!next.is_ok()) {
        fail_clone(c, EINVAL, "read_iolog: " + next.status().message());
        return false;
      }
      if (!next->has_value()) {
        end_workload(c);
        return c.issuing;
      }
      if ((*next)->is_io) {
        c.iolog_next = std::move(**next);
        break;
      }
    }
  }
  const TraceRecord& r = *c.iolog_next;
  const Time due = c.start + r.time_ns;
  if (!j.replay_no_stall && due > sim_.now() && due >= c.stop_at) {
    idle_until_stop(c);  // the record comes after the runtime
    return false;
  }
  if (!j.replay_no_stall && due > sim_.now()) {
    if (!c.iolog_wait_scheduled) {
      c.iolog_wait_scheduled = true;
      Clone* cp = &c;
      sim_.at(due, [this, cp] {
        cp->iolog_wait_scheduled = false;
        if (!cp->finished) pump(*cp);
      });
    }
    return false;
  }
  auto [it, added] = c.iolog_files.try_emplace(r.device, static_cast<int>(c.iolog_files.size()) %
                                                             static_cast<int>(c.files.size()));
  const int fi = it->second;
  // The job's region, [offset=, offset= + size=) of this clone (docs/workloads.md); a flush has
  // no bytes to place.
  const std::int64_t region_start = j.region_offset_bytes(c.result->clone);
  const std::int64_t region_end = region_start + j.size_bytes;
  const char* outside = r.offset_bytes + r.length_bytes > region_end ? "beyond the job's region (size=)"
                        : r.op != TraceOp::kFlush && r.offset_bytes < region_start
                            ? "before the job's region (offset=)"
                            : nullptr;
  if (outside != nullptr) {
    fail_clone(c, EINVAL, "read_iolog: " + c.iolog->name() + ":" + std::to_string(r.line) + ": I/O " + outside);
    return false;
  }
  HostIo io;
  io.op = r.op == TraceOp::kRead    ? IoOp::kRead
          : r.op == TraceOp::kWrite ? IoOp::kWrite
          : r.op == TraceOp::kTrim  ? IoOp::kTrim
                                    : IoOp::kFlush;
  io.volume_id = c.files[static_cast<std::size_t>(fi)].volume_id;
  io.offset_bytes = r.offset_bytes;
  io.length_bytes = r.length_bytes;
  const Direction d = r.op == TraceOp::kRead ? Direction::kRead
                      : r.op == TraceOp::kTrim ? Direction::kTrim
                                               : Direction::kWrite;
  c.bytes_issued += r.length_bytes;
  if (r.op != TraceOp::kFlush) ++c.ios_issued;
  submit(c, io, IssuedIo{d, r.op == TraceOp::kFlush, false, fi, r.length_bytes, r.offset_bytes},
         sim_.now());
  c.iolog_next.reset();
  return true;
}

// fio closes and reopens the file between loops, and with fsync= or fdatasync= the reopened
// file starts with a sync (fio 3.33's write_iolog for bs=4k size=32k fsync=4 loops=3: "W W W W
// sync W W W W sync close | open sync W W W W ..."; 7 syncs, afasim had 5; review 32). True once
// at the start of each loop after the first.
bool FioSession::Impl::opens_next_loop(Clone& c) {
  const FioJob& j = *c.job;
  if (j.loops < 2 || (j.fsync_every_writes == 0 && j.fdatasync_every_writes == 0) || j.time_based || c.iolog) return false;
  const std::int64_t loop_bytes = c.bytes_target / j.loops;
  if (loop_bytes <= 0 || c.bytes_issued == 0 || c.bytes_issued / loop_bytes <= c.loops_opened) return false;
  c.loops_opened = c.bytes_issued / loop_bytes;
  return true;
}

void FioSession::Impl::issue_sync(Clone& c) {
  c.sync_due = false;
  HostIo io;
  io.op = IoOp::kFlush;
  io.volume_id = c.files[static_cast<std::size_t>(c.file)].volume_id;
  submit(c, io, IssuedIo{Direction::kWrite, true, false, c.file, 0, 0}, sim_.now());
}

// Inline in issue_next, its one caller.
[[gnu::hot, gnu::always_inline]] inline void FioSession::Impl::hint_next(Clone& c) {
  // The target's hint is of the clone's next I/O: the unit drawn ahead of the file next_file()
  // chose for it (this file again, with one). A job over many files hinted this file's next
  // I/O, a round of its files away, when what the hint loaded was long gone (a file not yet
  // drawn from is not hinted: a draw out of turn would be the same, but is not needed).
  if (CloneFile& upcoming = c.files[static_cast<std::size_t>(c.file)]; upcoming.ahead) {
    // And the lines its own draw at that issue will read (the unit ahead, the pattern's
    // generator, bounds and positions), cold in a job over many files.
    sim::prefetch_range(&upcoming, kCloneFileDrawBytes);
    HostIo next;
    next.op = op_of(upcoming.ahead->direction);
    next.volume_id = upcoming.volume_id;
    next.offset_bytes = upcoming.ahead->offset_bytes;
    next.length_bytes = upcoming.ahead->size_bytes;
    target_.hint(next);
    upcoming.ahead_hinted = true;
  }
}

[[gnu::hot]] void FioSession::Impl::issue_next(Clone& c) {
  const FioJob& j = *c.job;
  const int fi = next_file(c);
  CloneFile& file = c.files[static_cast<std::size_t>(fi)];
  // The unit drawn one I/O early, and the next drawn now for the target's hint: the pattern
  // has its own generator, so the sequence is the one drawn on demand.
  std::optional<Direction> other;
  if (c.paced) {
    start_rate_after_ramp(c);
    if (!file.ahead) file.ahead = file.pattern->next();
    const Direction d = rate_direction(c, file.ahead->direction, sim_.now());
    const Time due = c.direction[static_cast<std::size_t>(index_of(d))].next_allowed;
    if (due > sim_.now() && due >= c.stop_at) {  // fio rate_ddir: not due before the runtime ends
      idle_until_stop(c);
      return;
    }
    if (d != file.ahead->direction) other = d;
    if (other && j.verify) file.switched.emplace_back(file.units_drawn, d);
  }
  const bool hinted = file.ahead_hinted && file.ahead && !other;
  file.ahead_hinted = false;
  const IoUnit u = take_unit(*file.pattern, file.ahead, other);
  ++file.units_drawn;
  hint_next(c);
  const auto d = static_cast<std::size_t>(index_of(u.direction));
  // Rate limits: the I/O starts when its direction is due (now, if it is behind).
  const Time earliest = c.direction[d].next_allowed;
  if (c.paced && (j.rate_iops[d] > 0 || j.rate_bytes_per_second[d] > 0)) {
    advance_rate(c, u);
    if (c.direction[d].next_allowed > kMaxJobTimeNs) {
      fail_clone(c, EOVERFLOW, "rate: the job would run past 100 years of virtual time");
      return;
    }
  }
  c.bytes_issued += u.size_bytes;
  ++c.ios_issued;
  HostIo io;
  io.op = op_of(u.direction);
  io.volume_id = file.volume_id;
  io.offset_bytes = u.offset_bytes;
  io.length_bytes = u.size_bytes;
  io.hinted = hinted;
  if (u.direction == Direction::kWrite) {
    io.fua = j.sync_writes;
    ++c.writes_issued;
    if ((j.fsync_every_writes > 0 && c.writes_issued % j.fsync_every_writes == 0) ||
        (j.fdatasync_every_writes > 0 && c.writes_issued % j.fdatasync_every_writes == 0))
      c.sync_due = true;
  }
  const IssuedIo what{u.direction, false, false, fi, u.size_bytes, u.offset_bytes};
  // fio do_io: a read is checked in the workload only when the job writes nothing (it reads
  // what an earlier job wrote); a mixed job's reads may find blocks it has not written yet,
  // and its writes are checked in the verify phase.
  if (c.verifies) {
    const bool checked_read = u.direction == Direction::kRead && !does_writes(j.rw);
    if (u.direction == Direction::kWrite || checked_read) return submit_verifying(c, io, what, earliest);
  }
  submit(c, io, what, earliest);
}

// fio backend.c: when ramp_time is over, the rate schedule starts again from there.
void FioSession::Impl::start_rate_after_ramp(Clone& c) {
  if (c.rate_reset_after_ramp || c.job->ramp_time_ns == 0 || sim_.now() < c.measure_from) return;
  c.rate_reset_after_ramp = true;
  c.restart_rate_schedule(sim_.now());
}

// fio io_u.c usec_for_io: when the direction of `u`, just issued, is next due. Linear: after
// the bytes issued so far at the rate (rate_iops paces min_bs-sized bytes, as fio does, so with
// bssplit or bsrange it is rate_iops × the smallest size in bytes a second, fewer I/Os than
// rate_iops: fio 3.33, bssplit=4k/50:64k/50 rate_iops=500, 68.5 IOPS in one run, afasim 56), so a direction that fell
// behind catches up; poisson: an exponential gap after the last due time.
void FioSession::Impl::advance_rate(Clone& c, const IoUnit& u) {
  const FioJob& j = *c.job;
  const auto d = static_cast<std::size_t>(index_of(u.direction));
  const std::int64_t min_bs = j.bs[d].min_bytes;
  const __int128 wanted = j.rate_bytes_per_second[d] > 0
                              ? static_cast<__int128>(j.rate_bytes_per_second[d])
                              : static_cast<__int128>(j.rate_iops[d]) * min_bs;
  const auto bps = static_cast<std::int64_t>(std::min<__int128>(wanted, INT64_MAX));
  if (j.rate_process == RateProcess::kPoisson) {
    const double ios_per_s = std::max(1.0, static_cast<double>(bps / min_bs));
    const double gap_ns = c.poisson_rng->exponential(1.0 / ios_per_s) * static_cast<double>(sim::kSecond);
    c.direction[d].next_allowed += static_cast<Time>(std::min(gap_ns, static_cast<double>(kMaxJobTimeNs)));
  } else {
    c.rate_bytes[d] += u.size_bytes;
    c.direction[d].next_allowed = c.rate_epoch + sim::transfer_time(c.rate_bytes[d], bps);
  }
}

// verify=: a write carries the pattern; a read is checked against it at completion.
void FioSession::Impl::submit_verifying(Clone& c, HostIo io, IssuedIo what, Time earliest) {
  auto buffer = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(what.bytes));
  if (what.direction == Direction::kWrite) {
    fill_verify_pattern(c.files[static_cast<std::size_t>(what.file)].verify_key, what.offset,
                        what.bytes, buffer->data());
    io.write_data = buffer->data();
  } else {
    io.read_buffer = buffer->data();
    what.verify = true;
  }
  ++c.in_flight;
  Clone* cp = &c;
  auto go = [this, cp, io, what, buffer = std::move(buffer)] {
    if (cp->finished) {
      --cp->in_flight;
      return;
    }
    note_depth(*cp);
    target_.submit(io, [this, cp, what, buffer](const IoCompletion& done) {
      on_complete(*cp, what, done, buffer.get());
    });
  };
  submit_when(c, earliest, std::move(go));
}

// fio's "IO depths": the I/Os submitted and not yet complete, this one included; not those
// still waiting for their rate slot (review 32: iodepth=32 rate_iops=200 read 92 % at 32, fio
// 97.5 % at 1).
[[gnu::hot]] void FioSession::Impl::note_depth(Clone& c) {
  c.result->depth_bins.record(c.in_flight - c.rate_waiting);
}

// Runs `go` now, or at `earliest` when the I/O waits for its rate slot (counted meanwhile).
template <typename Go>
[[gnu::hot]] void FioSession::Impl::submit_when(Clone& c, Time earliest, Go&& go) {
  if (earliest <= sim_.now()) return go();
  ++c.rate_waiting;
  Clone* cp = &c;
  sim_.at(earliest, [cp, go = std::forward<Go>(go)]() mutable {
    --cp->rate_waiting;
    go();
  });
}

[[gnu::hot]] void FioSession::Impl::submit(Clone& c, const HostIo& io, const IssuedIo& what, Time earliest) {
  ++c.in_flight;
  Clone* cp = &c;
  auto go = [this, cp, io, what] {
    if (cp->finished) {  // stopped while this I/O waited for its rate slot
      --cp->in_flight;
      return;
    }
    note_depth(*cp);
    target_.submit(io, [this, cp, what](const IoCompletion& done) { on_complete(*cp, what, done, nullptr); });
  };
  submit_when(c, earliest, std::move(go));
}

void FioSession::Impl::fail_clone(Clone& c, int error, std::string message, bool failed_io) {
  if (c.result->error == 0) {
    if (!failed_io && job_error_observer_) job_error_observer_(message);
    c.result->error = error;
    c.result->error_message = std::move(message);
  }
  c.issuing = false;  // fio stops a job at its first error (continue_on_error=none)
}

[[gnu::hot]] void FioSession::Impl::on_complete(Clone& c, const IssuedIo& what, const IoCompletion& done,
                                   const std::vector<std::uint8_t>* buffer) {
  --c.in_flight;
  if (c.finished) return;  // stopped: I/O still in flight at the stop is not counted
  ++ios_done_;
  bool measured = false;
  if (!done.status.is_ok()) {
    // A failed sync is not shown to the completion observer (notify skips syncs): it is then
    // the job's own error, counted once through the job-error observer.
    fail_clone(c, errno_of(done.status.code()), done.status.message(), /*failed_io=*/!what.sync);
  } else if (done.submit_time >= c.measure_from) {
    measured = true;
    account(c, what, done);
  } else if (!what.sync) {
    const auto di = static_cast<std::size_t>(index_of(what.direction));
    ++c.ramp_ios[di];
    c.ramp_bytes[di] += static_cast<std::uint64_t>(what.bytes);
  }
  if (done.status.is_ok() && what.verify && buffer != nullptr) check_verified(c, what, *buffer);
  if (observer_ && !what.sync) notify(c, what, measured, done);
  if (measured && c.checks_min_rate) check_min_rate(c, done.complete_time);
  if (c.latency_checked && !c.finished) control_latency(c, what, done);
  pump(c);
}

[[gnu::hot]] void FioSession::Impl::account(Clone& c, const IssuedIo& what, const IoCompletion& done) {
  const Time now = done.complete_time;
  if (what.sync) {
    c.result->sync.record(done.latency());
    return;
  }
  const auto di = static_cast<std::size_t>(index_of(what.direction));
  c.result->record_io(what.direction, what.bytes, 0, done.latency());
  CloneDirection& cd = c.direction[di];
  cd.first_io = std::min(cd.first_io, done.submit_time);
  // Most completions fall inside the interval: flush_interval only when one has ended.
  if (now >= c.interval_start + kSampleInterval) flush_interval(c, now);
  cd.interval_bytes += what.bytes;
  cd.interval_ios += 1;
  cd.rate_window_ios += 1;
  cd.rate_window_bytes += what.bytes;
  if (c.logs) c.logs->record(now - c.start, what.direction, what.bytes, what.offset, 0, done.latency());
}

void FioSession::Impl::check_verified(Clone& c, const IssuedIo& what,
                                      const std::vector<std::uint8_t>& data) {
  const CloneFile& file = c.files[static_cast<std::size_t>(what.file)];
  const auto bad = check_verify_pattern(file.verify_key, what.offset, what.bytes, data.data());
  if (!bad) return;
  fail_clone(c, EILSEQ,
             "verify: bad data at byte " + std::to_string(*bad) + " of volume \"" +
                 file.volume_name + "\" (I/O at " + std::to_string(what.offset) + ", " +
                 std::to_string(what.bytes) + " bytes): not the verify pattern written there");
}

void FioSession::Impl::notify(Clone& c, const IssuedIo& what, bool measured,
                              const IoCompletion& done) {
  if (!observer_) return;
  FioCompletion fc;
  fc.job_index = c.job->job_index;
  fc.clone = c.result->clone;
  fc.volume_id = c.files[static_cast<std::size_t>(what.file)].volume_id;
  fc.direction = what.direction;
  fc.bytes = what.bytes;
  fc.measured = measured;
  fc.io = &done;
  observer_(fc);
}

[[gnu::hot]] void FioSession::Impl::flush_interval(Clone& c, Time now) {
  // Past 1,024 empty intervals, the rest at once (review 41: thinktime=3650d took 121 s here).
  if (const Time whole = (now - c.interval_start) / kSampleInterval; whole > 1024) {
    flush_interval(c, c.interval_start + kSampleInterval);  // the interval that may hold I/O
    for (std::size_t d = 0; d < kDirections; ++d)
      if (c.direction[d].first_io != sim::kTimeMax) c.result->direction[d].record_idle_intervals(whole - 1);
    c.interval_start += (whole - 1) * kSampleInterval;
    return;
  }
  while (now >= c.interval_start + kSampleInterval) {
    for (std::size_t d = 0; d < kDirections; ++d) {
      auto& ds = c.result->direction[d];
      CloneDirection& cd = c.direction[d];
      if (cd.first_io != sim::kTimeMax) ds.record_interval(cd.interval_bytes, cd.interval_ios, kSampleInterval);
      cd.interval_bytes = 0;
      cd.interval_ios = 0;
    }
    c.interval_start += kSampleInterval;
  }
}

}  // namespace afasim::workload
