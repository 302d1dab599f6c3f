// Runs a sweep's points on a local pool of worker threads (docs/sweeps.md "One machine").
//
// The runs (point × seed) not yet done are handed out through one shared counter: a worker
// that finishes takes the next run in table order, so long and short points balance
// themselves. Each run is the scenario point_scenario builds, run by workload::run_scenario
// on the worker's own array and simulator; nothing of a run is shared with another but the
// plan and the catalog, which are read-only.
//
// Why threads, not processes: a run touches no mutable state outside its own simulator and
// array. What is static in the code a run reaches was checked (docs/sweeps.md "Threads"):
// the SSD model's cache of preconditioned FTL replicas (ssd/flash_ssd.cpp) is behind a mutex
// and its entries are immutable; the assertion handler's seed is thread_local; the fault
// points' state (sim/buggify.h) is only ever set by tests and is null in a sweep; the
// embedded config files and the Catalog are immutable after their (thread-safe) first
// initialization; getenv for fio's ${VAR} only reads.
//
// A run that fails (a value the loader refuses, a setup the array refuses, a run error, an
// exception) becomes a row with its error; the others go on. A broken invariant of the model
// (AFASIM_ASSERT) still ends the process: it is a bug, and it prints the seed.
// Deterministic: the rows of a (point, seed) do not depend on the number of workers or the
// order they ran in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "config/preset.h"
#include "sim/status.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_results.h"

namespace afasim::sweep {

// Where a sweep stands, for a progress line.
struct SweepProgress {
  std::size_t done = 0;     // runs with a row (those done before this call included)
  std::size_t total = 0;    // points × seeds
  std::size_t running = 0;  // runs in progress now
  std::size_t failed = 0;   // rows with an error
};

struct SweepRunOptions {
  // Worker threads, 1 to kMaxSweepJobs.
  int jobs = 1;
  // Start at most this many runs in this call (the rest are left for a later call): a sweep
  // can be cut into pieces and resumed.
  std::size_t max_runs = std::numeric_limits<std::size_t>::max();
  // Called as each run finishes, with the lock held (calls never overlap), before the
  // progress callback: the place to append the row to rows.jsonl. A non-ok Status stops the
  // sweep: no new run starts, the ones running finish, run_sweep returns that Status.
  std::function<sim::Status(const SweepRow&)> on_row;
  // Called when a run starts and when one finishes, with the lock held.
  std::function<void(const SweepProgress&)> progress;
};

inline constexpr int kMaxSweepJobs = 1024;

// What is left of a plan given the rows already done: `done`'s rows of this plan's points
// and seeds (the first of two rows of one run counts; rows of other seeds are left out),
// how many of them failed, and the run indexes (point × seeds + seed index) without a row,
// at most `max_runs` of them, in table order. run_sweep and the MPI coordinator share it,
// so a sweep resumed with or without MPI runs the same runs.
struct RunsLeft {
  std::vector<SweepRow> rows;
  std::size_t failed = 0;
  std::vector<std::size_t> todo;
};
RunsLeft runs_left(const SweepPlan& plan, std::vector<SweepRow> done, std::size_t max_runs);

// The rows of `done` whose seed the plan does not list, which runs_left leaves out: a sweep
// resumed after its seeds (or --seed-count) changed keeps them in rows.jsonl, and its
// results do not show them. `seeds`: theirs, ascending, each once.
struct RowsLeftOut {
  std::size_t rows = 0;
  std::vector<std::uint64_t> seeds;
};
RowsLeftOut rows_left_out(const SweepPlan& plan, const std::vector<SweepRow>& done);
// How many runs `done` holds more than once with different results (rows.jsonl of two sweeps
// on one folder, or an edited file): runs_left keeps the first of each, and the caller says
// so (hostile review 42: the others were dropped without a word).
std::size_t conflicting_rows(const SweepPlan& plan, const std::vector<SweepRow>& done);

// The one run of `point` with `seed`: its row (failed rows carry the error). Never throws.
SweepRow run_point(const SweepPlan& plan, std::size_t point, std::uint64_t seed, const config::Catalog& catalog);

// Runs every (point, seed) of the plan that `done` has no row for, and returns `done`'s rows
// (those of this plan's points and seeds) with the new ones, in table order. Rows of `done`
// for seeds the plan does not have are left out. REQUIRES: options.jobs in [1, kMaxSweepJobs].
sim::Result<std::vector<SweepRow>> run_sweep(const SweepPlan& plan, const config::Catalog& catalog,
                                             std::vector<SweepRow> done, const SweepRunOptions& options);

}  // namespace afasim::sweep
