// A sweep spread over the ranks of an MPI job (docs/sweeps.md "MPI and Slurm"):
// `mpirun -np N afasim sweep ...`, or `srun --mpi=pmix afasim sweep ...` under Slurm.
//
// Rank 0 is the coordinator. It holds the journal (DIR/rows.jsonl) and the runs still to do,
// in table order, exactly as run_sweep does, and hands them out one at a time to whichever
// worker asks: dynamic load balancing, as the local pool's shared counter does, so points of
// very different cost balance themselves. Every rank, rank 0 included, runs `jobs` worker
// threads; a worker asks rank 0 for a run, runs it with run_point, sends the row back as
// row_to_line's text and asks again, until rank 0 answers stop. Rank 0 parses each row with
// row_from_line, appends it to the journal and returns the rows in table order, so the
// results are byte-identical to a run without MPI whatever the number of ranks.
//
// Messages, on two communicators duplicated from MPI_COMM_WORLD (nothing else can match them):
//   worker -> rank 0 ("asks"), tag = the worker's index on its rank: the row of its last run
//     as row_to_line's text, or nothing for the first ask;
//   rank 0 -> worker ("answers"), the same tag: {point, seed} of the next run, or {kStop, 0}.
// Rank 0 answers every ask; once every worker was answered stop, the coordinator is done. So
// a coordinator that fails (a journal it cannot append to, a row that does not parse) still
// stops every worker: no rank waits forever. A rank that dies ends the whole job (mpirun and
// srun abort the other ranks); rows.jsonl keeps the finished rows and a rerun resumes.
//
// Every wait here polls (MPI_Test, MPI_Iprobe) with a sleep between polls that doubles from
// 16 us to 1 ms: Open MPI's blocking calls busy-poll a core, which on a node with more ranks
// than cores (--oversubscribe) takes CPU from the runs.
//
// Thread safety: an MpiSweep belongs to the thread that started it (MPI's main thread); its
// worker threads are its own. One MpiSweep per process (MPI is initialized once).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/preset.h"
#include "sim/status.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_results.h"
#include "sweep/sweep_runner.h"

namespace afasim::sweep {

// This process's place in a job that an MPI launcher started, as the launcher's environment
// says: Open MPI's mpirun (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), a PMIx launcher such
// as `srun --mpi=pmix` (PMIX_RANK; the size from SLURM_STEP_NUM_TASKS when set), a PMI-1/2
// launcher such as MPICH's hydra or `srun --mpi=pmi2` (PMI_RANK, PMI_SIZE).
struct MpiLaunch {
  int rank = 0;  // 0-based
  int size = 0;  // ranks in the job; 0 when the launcher's environment does not say
};

// The launch this process is part of, or nullopt when no launcher started it (a plain
// `afasim sweep`, which then never touches MPI). Reads only the environment.
std::optional<MpiLaunch> mpi_launch_from_environment();

// True when this afasim was built with MPI (CMake found it and AFASIM_MPI was ON).
bool mpi_built();

class MpiSweep {
 public:
  // Initializes MPI (MPI_Init_thread, MPI_THREAD_MULTIPLE: every worker thread talks to rank
  // 0 itself). Errors: kUnavailable "this afasim was built without MPI ..." in a build
  // without it; kUnavailable when the MPI library gives less than MPI_THREAD_MULTIPLE.
  // REQUIRES: called once per process, under a launcher (mpi_launch_from_environment).
  static sim::Result<std::unique_ptr<MpiSweep>> start();
  // MPI_Finalize.
  ~MpiSweep();
  MpiSweep(const MpiSweep&) = delete;
  MpiSweep& operator=(const MpiSweep&) = delete;

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  bool coordinator() const { return rank_ == 0; }

  // Every rank calls this once, after its own setup, and every rank gets the same answer.
  // `exit_code`: 0 when this rank is ready, else the exit code of what failed (rank 0's setup
  // includes opening the journal). `fingerprint`: this rank's SweepPlan::fingerprint (empty
  // when its setup failed); a worker whose plan is not rank 0's (another sweep file or base on
  // its node) fails with exit code 2 and its message in `*message`. `jobs`: the worker
  // threads this rank will run, 1 to kMaxSweepJobs.
  // Returns rank 0's exit code when it is not 0, else the highest of the workers' (0: go on).
  int agree_on_setup(int exit_code, const std::string& fingerprint, int jobs, std::string* message);

  // The sweep, after agree_on_setup returned 0, on every rank with the options it passed
  // there (`options.jobs` worker threads, 1 to kMaxSweepJobs).
  // Rank 0: coordinates, with run_sweep's contract: runs every (point, seed) of the plan that
  // `done` has no row for (at most options.max_runs of them), calls options.on_row for each
  // new row (a non-ok Status stops handing out runs; the runs out finish; that Status is
  // returned) and options.progress when a run goes out and when one comes back, and returns
  // `done`'s rows of the plan with the new ones, in table order. kInternal when a worker
  // sends a row that does not parse or is not the run it was given (a bug, or a node whose
  // afasim differs).
  // Other ranks: run what rank 0 hands out until it says stop; `done` and the callbacks are
  // not used; an empty vector.
  sim::Result<std::vector<SweepRow>> run(const SweepPlan& plan, const config::Catalog& catalog,
                                         std::vector<SweepRow> done,
                                         const SweepRunOptions& options);

  // Every rank calls this last: rank 0's `exit_code` on every rank (other ranks' argument is
  // not used).
  int agree_on_exit(int exit_code);

  struct Comms;  // the MPI handles (sweep_mpi.cpp)

 private:
  MpiSweep() = default;
  int rank_ = 0;
  int ranks_ = 1;
  int worker_ranks_jobs_ = 0;  // worker threads on ranks other than 0, from agree_on_setup
  std::unique_ptr<Comms> comms_;
};

}  // namespace afasim::sweep
