// `afasim sweep` under an MPI launcher (`mpirun -np N afasim sweep ...`, `srun --mpi=pmix
// afasim sweep ...`): the same sweep as on one machine, its runs spread over the ranks by
// sweep::MpiSweep (sweep/sweep_mpi.h), the same files written by rank 0 (docs/sweeps.md).
//
// Every rank reads the catalog and the plan (each runs points); rank 0 alone opens the journal,
// prints and writes. A failure any rank meets before the runs (a bad sweep file, an --out that
// cannot be created, the rows of another sweep) makes every rank exit with the code the
// command has without MPI; rank 0 prints the message (a worker prints its own only when rank
// 0 had none: its plan is not rank 0's).
#include <string>

#include "app/cmd_sweep.h"
#include "app/commands.h"
#include "sweep/sweep_mpi.h"

namespace afasim::app {

int run_sweep_over_mpi(const SweepOptions& options) {
  auto started = sweep::MpiSweep::start();
  if (!started.is_ok()) {  // every rank of the launch meets the same failure: one says so
    const auto launch = sweep::mpi_launch_from_environment();
    return launch && launch->rank == 0 ? fail_command("sweep", started.status().message(), 2) : 2;
  }
  sweep::MpiSweep& mpi = **started;
  SweepOptions o = options;
  if (!o.jobs_given) o.jobs = 1;  // one run at a time per rank: the launcher places the ranks

  SweepSetup setup;
  std::string message;
  const int code = set_up_sweep(o, mpi.coordinator(), &setup, &message);
  const int agreed = mpi.agree_on_setup(code, code == 0 ? setup.plan->fingerprint : std::string(),
                                        o.jobs, &message);
  if (agreed != 0) {
    if (!message.empty()) {
      if (!mpi.coordinator()) message = "rank " + std::to_string(mpi.rank()) + ": " + message;
      fail_command("sweep", message, agreed);
    }
    return agreed;
  }

  sweep::SweepProgress last;
  const auto rows = mpi.run(*setup.plan, *setup.catalog, std::move(setup.done),
                            sweep_run_options(o, setup.journal.get(), &last));
  return mpi.agree_on_exit(mpi.coordinator() ? finish_sweep(o, *setup.plan, rows) : 0);
}

}  // namespace afasim::app
