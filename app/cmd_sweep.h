// The parts of `afasim sweep` that its two ways of running share: on one machine
// (cmd_sweep.cpp, a pool of worker threads) and over MPI ranks (cmd_sweep_mpi.cpp), so that
// both read the same inputs, fail with the same messages and exit codes, and write the same
// files (docs/sweeps.md).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/preset.h"
#include "sim/status.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_store.h"

namespace afasim::app {

struct SweepOptions {
  std::string sweep_file;
  std::string out;
  int jobs = 1;                // worker threads: per process without MPI, per rank with it
  bool jobs_given = false;     // --jobs was on the command line (under MPI the default is 1)
  std::size_t max_runs = 0;    // 0: no limit
  std::size_t seed_count = 0;  // 0: every seed of the file
  std::string config_dir;
  bool quiet = false;
  std::vector<std::string> plots;  // figures to plot into DIR/plot-FIGURE.svg (sweep_plot.h)
};

// What a sweep runs with, read and checked.
struct SweepSetup {
  std::optional<config::Catalog> catalog;
  std::optional<sweep::SweepPlan> plan;
  std::unique_ptr<sweep::RowJournal> journal;  // only when asked for
  std::vector<sweep::SweepRow> done;           // the journal's rows
};

// Reads the catalog and the sweep's plan and, when `open_journal`, opens DIR/rows.jsonl.
// Returns 0, or the command's exit code for what failed with its message in `*message`:
// 2 for bad input (the catalog, the sweep file, its base, a rows.jsonl of another sweep),
// 1 when DIR or rows.jsonl cannot be created or read.
int set_up_sweep(const SweepOptions& o, bool open_journal, SweepSetup* setup, std::string* message);

// run_sweep's options for `o`: rows appended to `journal`; `*last` the last progress seen,
// a line printed on stderr for each finished run unless --quiet.
sweep::SweepRunOptions sweep_run_options(const SweepOptions& o, sweep::RowJournal* journal,
                                         sweep::SweepProgress* last);

// After the runs: writes the results when every run has a row, prints the closing line on
// stderr and returns the exit code: 1 when `rows` is an error (printed) or a row failed (this
// call's runs or earlier ones) or a results file cannot be written, else 0.
int finish_sweep(const SweepOptions& o, const sweep::SweepPlan& plan,
                 const sim::Result<std::vector<sweep::SweepRow>>& rows);

// The sweep under an MPI launcher (mpirun, srun), on every rank (cmd_sweep_mpi.cpp).
int run_sweep_over_mpi(const SweepOptions& o);

}  // namespace afasim::app
