#include "sweep/sweep_mpi.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "sim/assert.h"

#if AFASIM_HAVE_MPI
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <system_error>
#include <thread>
#include <utility>
#endif

namespace afasim::sweep {
namespace {

// A non-negative int from the environment variable `name`; nullopt when unset or not one.
std::optional<int> env_int(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  const std::string_view s(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::optional<MpiLaunch> mpi_launch_from_environment() {
  if (const auto rank = env_int("OMPI_COMM_WORLD_RANK"))  // Open MPI's mpirun
    return MpiLaunch{*rank, env_int("OMPI_COMM_WORLD_SIZE").value_or(0)};
  if (const auto rank = env_int("PMIX_RANK"))  // a PMIx launcher: srun --mpi=pmix, prterun
    return MpiLaunch{*rank, env_int("SLURM_STEP_NUM_TASKS").value_or(0)};
  if (const auto rank = env_int("PMI_RANK"))  // PMI-1/2: MPICH's hydra, srun --mpi=pmi2
    return MpiLaunch{*rank, env_int("PMI_SIZE").value_or(0)};
  return std::nullopt;
}

#if !AFASIM_HAVE_MPI

bool mpi_built() {
  return false;
}

struct MpiSweep::Comms {};

sim::Result<std::unique_ptr<MpiSweep>> MpiSweep::start() {
  return sim::unavailable(
      "this afasim was built without MPI (CMake found no MPI library, or AFASIM_MPI was OFF): run "
      "`afasim sweep` without mpirun or srun, or rebuild it with Debian's libopenmpi-dev "
      "(scripts/bootstrap.sh installs it)");
}

MpiSweep::~MpiSweep() = default;

int MpiSweep::agree_on_setup(int, const std::string&, int, std::string*) {
  AFASIM_ASSERT(false, "MpiSweep without MPI");
  return 1;
}

sim::Result<std::vector<SweepRow>> MpiSweep::run(const SweepPlan&, const config::Catalog&,
                                                 std::vector<SweepRow>, const SweepRunOptions&) {
  AFASIM_ASSERT(false, "MpiSweep without MPI");
  return sim::unavailable("MpiSweep without MPI");
}

int MpiSweep::agree_on_exit(int) {
  AFASIM_ASSERT(false, "MpiSweep without MPI");
  return 1;
}

#else  // AFASIM_HAVE_MPI

bool mpi_built() {
  return true;
}

struct MpiSweep::Comms {
  MPI_Comm collective = MPI_COMM_NULL;  // agree_on_setup, agree_on_exit
  MPI_Comm asks = MPI_COMM_NULL;        // worker -> rank 0: a row (or nothing) and a request
  MPI_Comm answers = MPI_COMM_NULL;     // rank 0 -> worker: the next run, or stop
};

namespace {

constexpr int kCoordinator = 0;
constexpr std::size_t kFingerprintChars = 64;  // SweepPlan::fingerprint: 16 hex digits

// What rank 0 answers a worker: the (point, seed) of its next run, or point == kStop.
struct Answer {
  std::uint64_t point = 0;
  std::uint64_t seed = 0;
};
constexpr std::uint64_t kStop = std::numeric_limits<std::uint64_t>::max();
static_assert(sizeof(Answer) == 2 * sizeof(std::uint64_t), "sent as 2 MPI_UINT64_T");

// The sleep between two polls of a wait: 16 us, doubling to 1 ms. The first polls come
// quickly (a run is handed out within tens of microseconds); a long wait (a worker waiting
// for rank 0 to write the results) wakes 1000 times a second and costs next to no CPU.
class Backoff {
 public:
  void pause() {
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, std::chrono::microseconds(1000));
  }

 private:
  std::chrono::microseconds sleep_{16};
};

// Waits for every request of `requests`, polling without spinning (see Backoff).
void wait_all(std::span<MPI_Request> requests) {
  for (Backoff backoff;; backoff.pause()) {
    int done = 0;
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done != 0) return;
  }
}

// One worker thread (or a worker rank's main thread): asks rank 0 for a run, runs it, sends
// its row with the next ask, until rank 0 answers stop. `tag`: the worker's index on its rank.
void work(const MpiSweep::Comms& comms, int tag, const SweepPlan& plan,
          const config::Catalog& catalog) {
  std::string row_text;  // the last run's row; nothing on the first ask
  while (true) {
    Answer answer;
    MPI_Request requests[2];
    MPI_Isend(row_text.data(), static_cast<int>(row_text.size()), MPI_CHAR, kCoordinator, tag,
              comms.asks, &requests[0]);
    MPI_Irecv(&answer, 2, MPI_UINT64_T, kCoordinator, tag, comms.answers, &requests[1]);
    wait_all(requests);
    if (answer.point == kStop) return;
    AFASIM_ASSERT(answer.point < plan.file.points.size(),
                  "rank 0 handed out a point this plan does not have");
    row_text =
        row_to_line(run_point(plan, static_cast<std::size_t>(answer.point), answer.seed, catalog), plan.file.kind);
  }
}

// An ask as rank 0 received it.
struct Ask {
  int rank = 0;
  int tag = 0;
  std::string row_text;
};

// Rank 0's side: the runs left and who has which, the rows, the counts, the first error.
class Coordinator {
 public:
  Coordinator(const MpiSweep::Comms& comms, const SweepPlan& plan, const SweepRunOptions& options)
      : comms_(comms), plan_(plan), options_(options) {}

  // Takes `done`'s rows of this plan and lists the runs left (runs_left, as run_sweep).
  void plan_runs(std::vector<SweepRow> done) {
    RunsLeft left = runs_left(plan_, std::move(done), options_.max_runs);
    rows_ = std::move(left.rows);
    progress_.failed = left.failed;
    todo_ = std::move(left.todo);
    progress_.total = plan_.file.runs();
    progress_.done = rows_.size();
  }

  // Answers asks until each of `workers` workers was answered stop.
  void serve(int workers) {
    while (workers > 0) {
      const Ask ask = receive();
      take_row(ask);
      if (status_.is_ok() && next_ < todo_.size()) {
        hand_out(ask, todo_[next_++]);
      } else {
        answer(ask, Answer{kStop, 0});
        --workers;
      }
    }
  }

  sim::Result<std::vector<SweepRow>> result() && {
    if (!status_.is_ok()) return status_;
    sort_rows(rows_);
    return std::move(rows_);
  }

 private:
  Ask receive() {
    MPI_Status probed;
    for (Backoff backoff;; backoff.pause()) {
      int found = 0;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms_.asks, &found, &probed);
      if (found != 0) break;
    }
    int chars = 0;
    MPI_Get_count(&probed, MPI_CHAR, &chars);
    Ask ask{probed.MPI_SOURCE, probed.MPI_TAG, std::string(static_cast<std::size_t>(chars), '\0')};
    MPI_Recv(ask.row_text.data(), chars, MPI_CHAR, ask.rank, ask.tag, comms_.asks,
             MPI_STATUS_IGNORE);
    return ask;
  }

  // The row an ask carries: checked against the run its worker was given, appended to the
  // journal (options.on_row), counted.
  void take_row(const Ask& ask) {
    const auto out = out_.find({ask.rank, ask.tag});
    if (out == out_.end()) {
      if (!ask.row_text.empty()) fail(ask, "a row it was not given a run for");
      return;
    }
    const std::size_t run = out->second;
    out_.erase(out);
    --progress_.running;
    const std::size_t seeds = plan_.file.seeds.size();
    auto row = row_from_line(ask.row_text, plan_.file.points.size(), plan_.file.kind);
    if (!row.is_ok()) {
      fail(ask, "a row that does not parse (" + row.status().message() + ")");
    } else if (row->point != run / seeds || row->seed != plan_.file.seeds[run % seeds]) {
      fail(ask, "the row of point " + std::to_string(row->point) + " seed " +
                    std::to_string(row->seed) + " for a run of point " +
                    std::to_string(run / seeds) + " seed " +
                    std::to_string(plan_.file.seeds[run % seeds]));
    } else {
      ++progress_.done;
      if (row->failed()) ++progress_.failed;
      if (options_.on_row && status_.is_ok()) status_ = options_.on_row(*row);
      rows_.push_back(std::move(row).value());
    }
    report();
  }

  void hand_out(const Ask& ask, std::size_t run) {
    const std::size_t seeds = plan_.file.seeds.size();
    out_[{ask.rank, ask.tag}] = run;
    ++progress_.running;
    answer(ask, Answer{run / seeds, plan_.file.seeds[run % seeds]});
    report();
  }

  void answer(const Ask& ask, const Answer& a) {
    MPI_Send(&a, 2, MPI_UINT64_T, ask.rank, ask.tag, comms_.answers);
  }

  void fail(const Ask& ask, const std::string& what) {
    if (status_.is_ok())
      status_ = sim::Status(sim::Code::kInternal, "rank " + std::to_string(ask.rank) + " worker " +
                                                      std::to_string(ask.tag) + " sent " + what);
  }

  void report() {
    if (options_.progress) options_.progress(progress_);
  }

  const MpiSweep::Comms& comms_;
  const SweepPlan& plan_;
  const SweepRunOptions& options_;
  std::vector<std::size_t> todo_;  // run indexes (point × seeds + seed index), table order
  std::size_t next_ = 0;
  std::map<std::pair<int, int>, std::size_t> out_;  // (rank, tag) -> the run it has
  std::vector<SweepRow> rows_;
  SweepProgress progress_;
  sim::Status status_;
};

// Starts workers with tags [first, first + count) on threads; returns the threads started
// (fewer when the system has no more to give).
std::vector<std::thread> start_workers(const MpiSweep::Comms& comms, int first, int count,
                                       const SweepPlan& plan, const config::Catalog& catalog) {
  std::vector<std::thread> threads;
  try {
    for (int tag = first; tag < first + count; ++tag)
      threads.emplace_back([&comms, tag, &plan, &catalog] { work(comms, tag, plan, catalog); });
  } catch (const std::system_error&) {  // no more threads to be had
  }
  return threads;
}

}  // namespace

sim::Result<std::unique_ptr<MpiSweep>> MpiSweep::start() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    return sim::unavailable(
        "the MPI library gives no MPI_THREAD_MULTIPLE, which afasim sweep needs (every worker "
        "thread talks to rank 0)");
  }
  std::unique_ptr<MpiSweep> mpi(new MpiSweep());
  mpi->comms_ = std::make_unique<Comms>();
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi->ranks_);
  MPI_Comm_dup(MPI_COMM_WORLD, &mpi->comms_->collective);
  MPI_Comm_dup(MPI_COMM_WORLD, &mpi->comms_->asks);
  MPI_Comm_dup(MPI_COMM_WORLD, &mpi->comms_->answers);
  return mpi;
}

MpiSweep::~MpiSweep() {
  MPI_Comm_free(&comms_->answers);
  MPI_Comm_free(&comms_->asks);
  MPI_Comm_free(&comms_->collective);
  MPI_Finalize();
}

int MpiSweep::agree_on_setup(int exit_code, const std::string& fingerprint, int jobs,
                             std::string* message) {
  AFASIM_ASSERT(jobs >= 1 && jobs <= kMaxSweepJobs, "agree_on_setup: jobs out of range");
  char theirs[kFingerprintChars] = {};  // rank 0's fingerprint
  if (coordinator()) {
    AFASIM_ASSERT(fingerprint.size() < kFingerprintChars, "fingerprint too long");
    std::memcpy(theirs, fingerprint.data(), fingerprint.size());
  }
  MPI_Request request;
  MPI_Ibcast(theirs, kFingerprintChars, MPI_CHAR, kCoordinator, comms_->collective, &request);
  wait_all({&request, 1});
  if (!coordinator() && exit_code == 0 && theirs[0] != '\0' && fingerprint != theirs) {
    exit_code = 2;
    *message = "the sweep read here is not rank 0's (fingerprint " + fingerprint + ", rank 0's " +
               theirs + "): every rank must read the same sweep file and base scenario";
  }

  const int mine[2] = {exit_code, jobs};
  std::vector<int> all(2 * static_cast<std::size_t>(ranks_));
  MPI_Iallgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comms_->collective, &request);
  wait_all({&request, 1});
  if (all[0] != 0) {  // rank 0 failed: it says why, once
    if (!coordinator()) message->clear();
    return all[0];
  }
  int worst = 0;
  worker_ranks_jobs_ = 0;
  for (int r = 1; r < ranks_; ++r) {
    worst = std::max(worst, all[2 * r]);
    worker_ranks_jobs_ += all[2 * r + 1];
  }
  return worst;
}

sim::Result<std::vector<SweepRow>> MpiSweep::run(const SweepPlan& plan,
                                                 const config::Catalog& catalog,
                                                 std::vector<SweepRow> done,
                                                 const SweepRunOptions& options) {
  AFASIM_ASSERT(options.jobs >= 1 && options.jobs <= kMaxSweepJobs,
                "MpiSweep::run: jobs out of range");
  if (!coordinator()) {
    // Tag 0 works on this thread; a tag whose thread could not start works here after it.
    std::vector<std::thread> threads = start_workers(*comms_, 1, options.jobs - 1, plan, catalog);
    for (int tag = 0; tag < options.jobs; ++tag)
      if (tag == 0 || tag > static_cast<int>(threads.size())) work(*comms_, tag, plan, catalog);
    for (std::thread& t : threads) t.join();
    return std::vector<SweepRow>{};
  }
  Coordinator coordinator(*comms_, plan, options);
  coordinator.plan_runs(std::move(done));
  std::vector<std::thread> threads = start_workers(*comms_, 0, options.jobs, plan, catalog);
  const int workers = worker_ranks_jobs_ + static_cast<int>(threads.size());
  if (workers == 0)
    return sim::unavailable("rank 0 could not start a worker thread and no other rank has workers");
  coordinator.serve(workers);
  for (std::thread& t : threads) t.join();
  return std::move(coordinator).result();
}

int MpiSweep::agree_on_exit(int exit_code) {
  MPI_Request request;
  MPI_Ibcast(&exit_code, 1, MPI_INT, kCoordinator, comms_->collective, &request);
  wait_all({&request, 1});
  return exit_code;
}

#endif  // AFASIM_HAVE_MPI

}  // namespace afasim::sweep
