// The inside of FioSession (fio_runner.h), shared by fio_runner.cpp (life cycle: start,
// job order, stop) and fio_clone.cpp (one clone's I/O: issue, pacing, completion, think
// time, flushes, minimum rates, verification, logs). Not a public interface.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/rng.h"
#include "workload/distribution.h"
#include "workload/fio_logs.h"
#include "workload/fio_runner.h"
#include "workload/trace_reader.h"

namespace afasim::workload {

// One file (volume) of a clone, with its own access pattern. The pattern is stored inline,
// after the fields an I/O reads first: a job over many files finds a file's state cold, and
// one block of lines comes in faster than the entry and then a pattern it pointed to.
// `ahead` comes before the pattern, in the line its first fields share (AccessPattern is long:
// after it, `ahead` was a line of its own).
struct alignas(64) CloneFile {
  controller::Id volume_id = 0;
  std::int64_t units_drawn = 0;  // I/Os taken from `pattern` (verification replays them)
  // The pattern's next unit, drawn one I/O early so that the target can start loading what it
  // will touch (IoTarget::hint); the pattern's own generator makes the sequence the same.
  std::optional<IoUnit> ahead;
  bool ahead_hinted = false;  // `ahead` was given to the target's hint
  std::optional<AccessPattern> pattern;
  // verify=: the units (by index among those issued) where the rate gave the turn to the
  // other direction, and which, so that verification replays the same draws.
  std::vector<std::pair<std::int64_t, Direction>> switched;
  std::string volume_name;
  std::uint64_t verify_key = 0;  // fio_verify.h, when the job verifies
};
// The bytes of a CloneFile an I/O's draw reads first (its fields before the pattern, and the
// pattern's generator, bounds and per-direction positions: workload/distribution.h), for the
// prefetch of the file a clone issues to next.
inline constexpr std::size_t kCloneFileDrawBytes = 256;

// What one I/O in flight was, for its completion.
struct IssuedIo {
  Direction direction = Direction::kRead;
  bool sync = false;     // a flush (fsync / fdatasync)
  bool verify = false;   // a verification read
  int file = 0;
  std::int64_t bytes = 0;
  std::int64_t offset = 0;
};

enum class ClonePhase : std::uint8_t { kWorkload, kVerifyWait, kVerify };

// A clone's counters of one direction that each I/O of that direction updates, side by side: a
// read touches one 48-byte block instead of a slot in each of six arrays.
struct CloneDirection {
  sim::Time next_allowed = 0;  // rate: see Clone::rate_epoch
  std::int64_t interval_bytes = 0;
  std::int64_t interval_ios = 0;
  sim::Time first_io = sim::kTimeMax;
  std::int64_t rate_window_ios = 0;
  std::int64_t rate_window_bytes = 0;
};

// One clone of one job: its files, queue and counters.
struct alignas(64) Clone {
  // What every read reads or writes, first, in the struct's first three cache lines (aligned
  // to one): with 16 clones of 16 I/Os in flight a clone's state is cold by its next
  // completion, and each line it spans is a miss (the rest, below, is read when a job starts,
  // ends, syncs, verifies, writes or is paced). Cachegrind, the 4K read job: 6 L1 misses a
  // read fewer than with these fields among the others, and with CloneDirection, the job's
  // fields cached below and CloneFile's and JobResult's layouts, 10 fewer again.
  const FioJob* job = nullptr;
  JobResult* result = nullptr;
  std::vector<CloneFile> files;
  int file = 0;  // the file the next I/O goes to
  int in_flight = 0;
  int rate_waiting = 0;  // of in_flight, those waiting for their rate slot
  // I/Os in flight the clone may have: iodepth, or latency_target's depth; 0 while it drains.
  int depth_limit = 1;
  bool started = false;
  bool issuing = false;  // accepts new I/O
  bool finished = false;
  bool paced = false;  // the job has a rate in some direction (rate_epoch, below)
  // thinktime: pausing = waiting for the queue to drain (think_count, below).
  bool pausing = false;
  bool think_scheduled = false;
  // Nothing more is due before stop_at (a rate, a thinktime or an iolog wait past the
  // runtime): the clone idles until then and ends there, as fio's rate_ddir and
  // handle_thinktime bound their sleeps by the runtime left.
  bool idle_until_stop = false;
  bool sync_due = false;  // fsync / fdatasync: a flush owed before the next I/O
  bool checks_min_rate = false;  // rate_iops_min / rate_min (rate_window_start, below)
  bool latency_checked = false;  // the job has latency_target or max_latency
  // What pump and issue_next would otherwise read from the job (another cold line) on every
  // I/O, decided when the clone is built: io_size ends the workload (neither time_based nor
  // read_iolog); number_ios does; a loop after the first may open with a sync
  // (opens_next_loop); thinktime pauses; verify checks data.
  bool ends_at_bytes = false;
  bool counts_ios = false;
  bool reopens_with_sync = false;
  bool thinks = false;
  bool verifies = false;
  ClonePhase phase = ClonePhase::kWorkload;  // verify=: see verify_from, below
  sim::Time measure_from = 0;  // start + ramp_time
  sim::Time stop_at = sim::kTimeMax;
  std::int64_t bytes_issued = 0;
  std::int64_t bytes_target = 0;
  std::int64_t ios_issued = 0;  // reads, writes and trims of the workload (number_ios)
  sim::Time interval_start = 0;
  std::unique_ptr<FioLogWriter> logs;
  std::unique_ptr<TraceReader> iolog;  // read_iolog=: the trace (iolog_next, below)
  // latency_target= / max_latency= (fio_latency_target.h): the search (latency_completed and
  // the rest, below).
  std::unique_ptr<LatencyTargetSearch> latency;
  std::array<CloneDirection, kDirections> direction{};  // index_of(Direction)

  std::int64_t writes_issued = 0;  // fsync / fdatasync count them

  int thread_number = 0;  // 1-based over the session's clones (fio's td->thread_number)
  std::int64_t file_ios_left = 0;  // I/Os before file_service switches file
  std::optional<sim::Rng> file_rng;  // file_service_type=random
  sim::Time start = 0;
  // I/Os and bytes completed during ramp_time, by direction: reported only when the job ends
  // before its ramp does (fio zeroes its counters at the ramp's end, not before).
  std::array<std::uint64_t, kDirections> ramp_ios{};
  std::array<std::uint64_t, kDirections> ramp_bytes{};
  // rate / rate_iops, as fio's rate_next_io_time: when each direction's next I/O is due
  // (CloneDirection::next_allowed), on a schedule from `rate_epoch` (the start; the end of ramp_time
  // once it is over, where fio resets it), and the bytes issued on it.
  bool rate_reset_after_ramp = false;
  sim::Time rate_epoch = 0;
  std::array<std::int64_t, kDirections> rate_bytes{};
  // The rate schedule starts again at `at` (the end of ramp_time, a latency target's final run).
  void restart_rate_schedule(sim::Time at) {
    rate_epoch = at;
    for (CloneDirection& cd : direction) cd.next_allowed = at;
    rate_bytes.fill(0);
  }
  std::optional<sim::Rng> poisson_rng;  // rate_process=poisson: the gaps
  std::int64_t think_count = 0;  // thinktime: I/Os issued since the last pause
  std::int64_t loops_opened = 0;  // loops after the first begun with fio's reopening sync
  // rate_iops_min / rate_min: completions in the current rate_cycle window.
  sim::Time rate_window_start = 0;
  // verify=: after the workload, each file's writes are replayed as reads.
  sim::Time verify_from = -1;  // when the verify phase's reads began (-1: none)
  struct ReplayFile {
    std::unique_ptr<AccessPattern> pattern;  // a fresh pattern of the file's stream
    std::optional<IoUnit> ahead;
    std::int64_t left = 0;   // units still to replay
    std::int64_t index = 0;  // units replayed
    std::size_t next_switch = 0;  // into the file's `switched`
  };
  std::vector<ReplayFile> replay;  // per file
  // read_iolog=: the trace's next I/O, and which job file each trace device goes to.
  std::optional<TraceRecord> iolog_next;
  std::map<std::string, int> iolog_files;
  bool iolog_wait_scheduled = false;
  int steadystate_unit = -1;  // into FioSession::Impl::steadystate_units_, or none
  // latency_target= / max_latency=: the I/Os completed (fio's io_blocks: its windows count
  // them), what waits for the queue to drain, and whether the end of ramp_time restarted the
  // search (fio's lat_target_reset).
  std::uint64_t latency_completed = 0;
  std::uint64_t latency_since_reset = 0;  // latency_completed when fio's counters were zeroed
  LatencyTargetSearch::Step latency_draining = LatencyTargetSearch::Step::kNone;
  bool latency_ramp_reset = false;
  bool latency_done = false;  // the final run's window held: the search ended the job
  std::int64_t latency_loop = 0;  // loops= begun after the first (each restarts the search)
  bool latency_new_loop = false;  // the drain under way ends in a restart
};

// The clones one steady-state check covers (a job's clone, or a reporting group).
struct SteadyStateUnit {
  std::vector<Clone*> clones;
  SteadyStateResult result;
  sim::Time start = -1;  // the first clone's start (-1: not yet)
  std::uint64_t prev_ios = 0;
  std::uint64_t prev_bytes = 0;
};

struct FioSession::Impl {
  Impl(IoTarget& target, sim::Simulator& sim, FioJobFile file, FioRunOptions options)
      : target_(target), sim_(sim), file_(std::move(file)), options_(std::move(options)) {}

  // fio_runner.cpp
  sim::Status start();
  sim::Status build_clones(const std::map<std::string, controller::Id>& volumes);
  void stop();
  void exit_all(const FioJob& ended);
  void note_depth(Clone& c);
  bool opens_next_loop(Clone& c);
  template <typename Go>
  void submit_when(Clone& c, sim::Time earliest, Go&& go);  // exitall: stops the jobs ended.exit_what names
  void start_ready_jobs();
  int clones_running() const;
  void build_steadystate_units();
  void start_steadystate(Clone& c);
  void check_steadystate(int index);

  // fio_clone.cpp
  void start_clone(Clone& c);
  void pump(Clone& c);
  // Idles `c` until its stop_at, then pumps it (which ends the workload).
  void idle_until_stop(Clone& c);
  bool workload_done(Clone& c, sim::Time now) const;
  void end_workload(Clone& c);
  bool issue_verify_read(Clone& c);
  bool issue_from_iolog(Clone& c);
  void issue_sync(Clone& c);
  void issue_next(Clone& c);
  // Hands the target the clone's next I/O (IoTarget::hint) and marks it hinted.
  void hint_next(Clone& c);
  void start_rate_after_ramp(Clone& c);
  void advance_rate(Clone& c, const IoUnit& u);
  void submit(Clone& c, const controller::HostIo& io, const IssuedIo& what, sim::Time earliest);
  void submit_verifying(Clone& c, controller::HostIo io, IssuedIo what, sim::Time earliest);
  void on_complete(Clone& c, const IssuedIo& what, const controller::IoCompletion& done,
                   const std::vector<std::uint8_t>* buffer);
  void account(Clone& c, const IssuedIo& what, const controller::IoCompletion& done);
  void check_verified(Clone& c, const IssuedIo& what, const std::vector<std::uint8_t>& data);
  // Stops the clone with its first error; `failed_io`: the error is a failed I/O's (the
  // completion observer sees it), else the job's own and the job-error observer hears of it.
  void fail_clone(Clone& c, int error, std::string message, bool failed_io = false);
  void notify(Clone& c, const IssuedIo& what, bool measured, const controller::IoCompletion& done);
  void finish_clone(Clone& c);
  void flush_interval(Clone& c, sim::Time now);

  // fio_limits.cpp
  void check_min_rate(Clone& c, sim::Time now);
  void start_latency_control(Clone& c);
  void control_latency(Clone& c, const IssuedIo& what, const controller::IoCompletion& done);
  void judge_latency_window(Clone& c);
  void finish_latency_drain(Clone& c);
  bool starts_latency_loop(Clone& c);
  void take_latency_step(Clone& c, LatencyTargetSearch::Step step);
  void end_latency_control(Clone& c);
  void fail_latency(Clone& c, const IssuedIo& what, const controller::IoCompletion& done, sim::Time limit_ns);
  void reset_for_final_run(Clone& c);

  std::unique_ptr<ArrayTarget> owned_target_;  // when constructed on an Array
  IoTarget& target_;
  sim::Simulator& sim_;
  const FioJobFile file_;  // clones point into its jobs
  const FioRunOptions options_;
  Observer observer_;
  JobErrorObserver job_error_observer_;
  RunReport report_;
  std::vector<Clone> clones_;
  std::set<std::string> log_paths_;  // log files this session has opened
  std::vector<int> job_clones_left_;  // per job: clones not finished
  std::vector<bool> job_started_;
  int clones_left_ = 0;
  std::int64_t ios_done_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  bool stop_simulator_when_finished_ = false;  // FioSession::stop_simulator_when_finished
  bool exitall_ = false;  // some job has exitall: every job's end stops others (exit_all)
  std::vector<SteadyStateUnit> steadystate_units_;
};

// errno of a failed I/O, as fio reports it.
int errno_of(sim::Code code);

}  // namespace afasim::workload
