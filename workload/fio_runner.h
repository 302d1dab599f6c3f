// Runs fio jobs against the simulated array in virtual time (docs/workloads.md).
//
// Each clone (numjobs) of each job keeps `iodepth` I/Os in flight on its volume through
// controller::Array::submit — the same path NBD clients take — paced by rate_iops /
// rate_bytes_per_second, ramped and timed by ramp_time / runtime / time_based, in
// reporting groups ordered by stonewall / wait_for. Results fill workload::RunReport, which
// formats as fio's text or JSON. Volumes named by `filename=` are created in the array's
// pool (or reused when they exist and are large enough).
//
// Two ways in:
//  - run_fio(): one job file, run to completion; it owns the simulation loop (`afasim fio`).
//  - FioSession: one job file started inside a simulation whose loop the caller owns, so
//    that several job files (a scenario's workloads) run at once and the caller can
//    sample, inject faults and stop between events (docs/scenarios.md).
// run_fio is a FioSession plus the loop: both give the same results for the same inputs.
//
// Deterministic: the same array state, job files, options and seed give the same report.
// Not thread-safe: runs on the thread that owns the Simulator and Array.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/array.h"
#include "sim/simulator.h"
#include "workload/fio_job.h"
#include "workload/fio_report.h"
#include "workload/io_target.h"

namespace afasim::workload {

// How often, in simulation events, run_fio and replay_trace call their `progress` callback
// (the caller rate-limits the lines by wall time).
inline constexpr std::uint64_t kProgressSteps = 1 << 16;
// The virtual time a job may reach: 100 years, inside the simulator's clock of 292 years. A job
// whose thinktime, startdelay or rate would take it past this fails with EOVERFLOW.
inline constexpr sim::Time kMaxJobTimeNs = sim::kClockCeiling;

struct FioRunOptions {
  std::uint64_t seed = 1;
  // The seed of verify='s data pattern when it is not `seed`: a scenario gives each workload
  // its own seed, and one pattern for all of them, so that a workload that reads with
  // verify= checks what another wrote (as two jobs of one fio run do).
  std::optional<std::uint64_t> verify_seed;
  // How volumes that do not exist yet are created.
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  controller::Provisioning provisioning = controller::Provisioning::kThin;
  // run_fio only: called every simulated 100 ms with a one-line status; the caller decides
  // whether to print (e.g. once per wall second). Never changes the run.
  std::function<void(const std::string& line)> progress;
  // Where write_*_log files go (fio writes them in the current folder). Empty: here.
  std::string log_dir;
  // Files the run reads (job files, included files, read_iolog traces): a log file that is
  // one of them is refused rather than written over it (hostile round 23).
  std::vector<std::string> input_files;
  // run_fio only: when it reads true (a signal handler sets it), the run stops as a job's
  // runtime would end it and the report covers what ran, as fio does on Ctrl-C. Read every
  // kProgressSteps events.
  const std::atomic<bool>* interrupted = nullptr;
};

// The log files `f`'s clones keep open from the start of a run (FioLogWriter: one per log and
// clone, shared names included).
std::int64_t log_files_needed(const FioJobFile& f);
// kInvalidArgument "WHERE: the jobs' log files ..." when `needed` log files, with 64 of
// afasim's own, pass the open-file limit (ulimit -n): checked before any file is made, as
// more failed halfway and left ~1,000 empty files (hostile round 23).
sim::Status check_log_file_budget(std::int64_t needed, const std::string& where);

// Creates (or checks) the volumes `file` names. kUnprocessable naming the job file and line
// when an existing volume is too small or has another RAID type; the Array's errors
// otherwise (kNoSpace for fixed volumes that do not fit). Jobs that replay a trace
// (read_iolog=) use the volumes their trace names (trace_runner.h).
sim::Status prepare_volumes(controller::Array& array, const FioJobFile& file,
                            const FioRunOptions& options);

// One completed I/O of a FioSession, as its observer sees it. Valid during the call only.
struct FioCompletion {
  int job_index = 0;  // FioJob::job_index
  int clone = 0;      // 0..numjobs-1
  controller::Id volume_id = 0;
  Direction direction = Direction::kRead;
  std::int64_t bytes = 0;
  // After the job's ramp_time and successful: counted in the fio report. The observer sees
  // every completion, ramp and errors included.
  bool measured = false;
  const controller::IoCompletion* io = nullptr;  // status, submit and completion times
};

// The jobs of one fio job file, running in a simulation the caller drives.
//
// Life cycle: construct, optionally set_observer(), start() at the simulated time the jobs
// begin (startdelay counts from there), then run the Simulator (step / run_until) until
// finished(), or call stop() to end every job now. report() is complete once finished().
// REQUIRES: the array and simulator outlive the session; the session outlives every event
// it scheduled that the simulator will still run (after stop(), I/Os still in flight
// complete later: keep the session alive while the simulator runs, or stop stepping it).
class FioSession {
 public:
  using Observer = std::function<void(const FioCompletion&)>;

  FioSession(controller::Array& array, sim::Simulator& sim, FioJobFile file, FioRunOptions options);
  // Against any target (a bare device: workload/device_target.h). REQUIRES: `target`
  // outlives the session.
  FioSession(IoTarget& target, sim::Simulator& sim, FioJobFile file, FioRunOptions options);
  ~FioSession();
  FioSession(const FioSession&) = delete;
  FioSession& operator=(const FioSession&) = delete;

  // Called at every completion of an I/O this session issued, after the session's own
  // accounting and before it issues the next I/O. It may read the array; it must not
  // submit I/O, change the array or call stop() (schedule an event for that instead).
  void set_observer(Observer observer);
  // Called when a job stops on an error of its own, not a failed I/O's (a verify mismatch,
  // rate_iops_min not met, a thinktime past 100 years, a bad read_iolog line), with fio's
  // message; the same rules as the observer's.
  using JobErrorObserver = std::function<void(const std::string& message)>;
  void set_job_error_observer(JobErrorObserver observer);

  // Starts the jobs whose turn it is (file order, stonewall / wait_for as fio), now.
  // kNotFound naming the job file and line when a volume the file names does not exist
  // (call prepare_volumes first). REQUIRES: not started.
  sim::Status start();
  bool started() const;
  // Every clone has finished (or the session was stopped) and no I/O is in flight for it.
  // A stopped session is finished even when I/Os are still in flight; they are not counted.
  bool finished() const;
  // Ends every job now, as fio does when its runtime ends: no new I/O, results end at
  // now(); jobs not yet started never start. I/Os still in flight are not counted when
  // they complete. No effect on a finished session.
  void stop();
  // Makes the session call the simulator's stop() as it finishes, for a caller that runs the
  // simulator (Simulator::run_events) until then instead of asking finished() after every
  // event. Not for a session that shares its simulator with other work (a scenario's): a stop
  // would cut that work's run_until short.
  void stop_simulator_when_finished();

  const FioJobFile& job_file() const;
  // Clones started and not finished; I/Os completed so far (all clones, errors included).
  int clones_running() const;
  int clone_count() const;
  std::int64_t ios_done() const;
  // "12/16 clones running, 1234567 I/Os done".
  std::string status_line() const;

  // The results so far; complete once finished(). One JobResult per clone, job then clone
  // order, as run_fio returns.
  const RunReport& report() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs every job of `file` to completion. The result holds one JobResult per clone.
// Errors of the I/O itself (ENOSPC, EIO) stop the clone and are reported in its result,
// as fio does; the Status is for failures to set up (volumes), and kInvalidArgument for jobs
// that keep more than kMaxJobsInFlight I/Os in flight at once.
sim::Result<RunReport> run_fio(controller::Array& array, sim::Simulator& sim,
                               const FioJobFile& file, const FioRunOptions& options);
// The same against a bare device: no volumes are created; a job whose size passes the
// device's end is refused (kUnprocessable naming the job file and line), and so are jobs
// that keep more than kMaxJobsInFlight I/Os in flight at once (kInvalidArgument).
//
// Every clone issues its iodepth at once when it starts, each I/O an event and a command
// before the array or device answers: numjobs x iodepth of the jobs that run together (between
// stonewalls) is bounded. 4,096 clones x 65,536 asked for ~40 GB on a device and ~100 GB on an
// array, whose QoS queue refused all but 16,384 per volume only after they were issued (hostile
// round 15). 1,048,576: ~150 MB of commands; a 16-job x 65,536 test still runs.
inline constexpr std::int64_t kMaxJobsInFlight = 1 << 20;
// The most I/Os `file`'s jobs keep in flight at once: numjobs x iodepth summed over the jobs
// that run together (between stonewalls), the largest such group. A scenario's workloads run
// beside each other: their sum is held to kMaxJobsInFlight too.
std::int64_t jobs_in_flight(const FioJobFile& file);
sim::Result<RunReport> run_fio(IoTarget& target, std::int64_t capacity_bytes, sim::Simulator& sim,
                               const FioJobFile& file, const FioRunOptions& options);

}  // namespace afasim::workload
