#include "sweep/sweep_runner.h"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include "workload/scenario_runner.h"

namespace afasim::sweep {
namespace {

// What the workers share, behind one mutex: the runs to do and the next one to hand out,
// the rows, the counts and the first error of on_row.
struct Pool {
  const SweepPlan& plan;
  const config::Catalog& catalog;
  const SweepRunOptions& options;
  std::vector<std::size_t> todo;  // run indexes (point × seeds + seed index), table order
  std::mutex mu;
  std::size_t next = 0;  // the shared next-run counter: dynamic load balancing
  SweepProgress progress;
  std::vector<SweepRow> rows;
  sim::Status status;

  void report() {
    if (options.progress) options.progress(progress);
  }

  void worker() {
    while (true) {
      std::size_t run = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!status.is_ok() || next >= todo.size()) return;
        run = todo[next++];
        ++progress.running;
        report();
      }
      const std::size_t seeds = plan.file.seeds.size();
      SweepRow row = run_point(plan, run / seeds, plan.file.seeds[run % seeds], catalog);
      std::lock_guard<std::mutex> lock(mu);
      --progress.running;
      ++progress.done;
      if (row.failed()) ++progress.failed;
      if (options.on_row && status.is_ok()) status = options.on_row(row);
      rows.push_back(std::move(row));
      report();
    }
  }
};

}  // namespace

RunsLeft runs_left(const SweepPlan& plan, std::vector<SweepRow> done, std::size_t max_runs) {
  const std::vector<std::uint64_t>& seeds = plan.file.seeds;
  RunsLeft left;
  std::vector<bool> have(plan.file.runs(), false);
  for (SweepRow& row : done) {
    const auto s = std::lower_bound(seeds.begin(), seeds.end(), row.seed);
    if (row.point >= plan.file.points.size() || s == seeds.end() || *s != row.seed) continue;
    const std::size_t run = row.point * seeds.size() + static_cast<std::size_t>(s - seeds.begin());
    if (have[run]) continue;  // the same run twice (two processes on one DIR): the first counts
    have[run] = true;
    if (row.failed()) ++left.failed;
    left.rows.push_back(std::move(row));
  }
  for (std::size_t run = 0; run < have.size() && left.todo.size() < max_runs; ++run)
    if (!have[run]) left.todo.push_back(run);
  return left;
}

std::size_t conflicting_rows(const SweepPlan& plan, const std::vector<SweepRow>& done) {
  std::map<std::pair<std::size_t, std::uint64_t>, std::string> first;
  std::size_t conflicts = 0;
  for (const SweepRow& row : done) {
    const std::string line = row_to_line(row, plan.file.kind);
    const auto [it, added] = first.emplace(std::make_pair(row.point, row.seed), line);
    if (!added && it->second != line) ++conflicts;
  }
  return conflicts;
}

RowsLeftOut rows_left_out(const SweepPlan& plan, const std::vector<SweepRow>& done) {
  const std::vector<std::uint64_t>& seeds = plan.file.seeds;  // ascending (runs_left bisects)
  RowsLeftOut out;
  for (const SweepRow& row : done) {
    if (std::binary_search(seeds.begin(), seeds.end(), row.seed)) continue;
    ++out.rows;
    out.seeds.push_back(row.seed);
  }
  std::sort(out.seeds.begin(), out.seeds.end());
  out.seeds.erase(std::unique(out.seeds.begin(), out.seeds.end()), out.seeds.end());
  return out;
}

SweepRow run_point(const SweepPlan& plan, std::size_t point, std::uint64_t seed, const config::Catalog& catalog) {
  SweepRow row;
  row.point = point;
  row.seed = seed;
  row.figures.assign(figure_set(plan.file.kind).size(), std::nullopt);  // a failed row's
  // The point's scenario of either kind, run: its figures, or its error in the row.
  const auto run = [&row](auto scenario, auto run_it) {
    if (!scenario.is_ok()) {
      row.error = scenario.status().message();
      return;
    }
    auto report = run_it(*scenario);
    if (!report.is_ok()) {
      row.error = report.status().message();
      return;
    }
    row.figures = figures_of(*report);
  };
  try {
    if (plan.file.kind == SweepKind::kReliability)
      run(point_reliability(plan, point, seed, catalog),
          [&](const reliability::ReliabilityScenario& s) { return reliability::run_reliability(s, catalog); });
    else
      run(point_scenario(plan, point, seed, catalog), [&](const workload::Scenario& s) {
        workload::ScenarioRunOptions options;
        if (!plan.log_dir.empty())
          options.log_dir = plan.log_dir + "/point-" + std::to_string(point) + "-seed-" + std::to_string(seed);
        return workload::run_scenario(s, catalog, options);
      });
  } catch (const std::bad_alloc&) {  // this run fails, the others go on
    row.error = SweepRow::kOutOfMemoryError;
    row.figures.assign(figure_set(plan.file.kind).size(), std::nullopt);
  } catch (const std::exception& e) {
    row.error = std::string("the run threw: ") + e.what();
    row.figures.assign(figure_set(plan.file.kind).size(), std::nullopt);
  }
  return row;
}

sim::Result<std::vector<SweepRow>> run_sweep(const SweepPlan& plan, const config::Catalog& catalog,
                                             std::vector<SweepRow> done, const SweepRunOptions& options) {
  AFASIM_ASSERT(options.jobs >= 1 && options.jobs <= kMaxSweepJobs, "run_sweep: jobs out of range");
  Pool pool{plan, catalog, options, {}, {}, 0, {}, {}, sim::Status::ok()};
  RunsLeft left = runs_left(plan, std::move(done), options.max_runs);
  pool.rows = std::move(left.rows);
  pool.progress.failed = left.failed;
  pool.todo = std::move(left.todo);
  pool.progress.total = plan.file.runs();
  pool.progress.done = pool.rows.size();

  const std::size_t threads = std::min<std::size_t>(static_cast<std::size_t>(options.jobs), pool.todo.size());
  if (threads <= 1) {
    pool.worker();
  } else {
    std::vector<std::thread> workers;
    try {
      for (std::size_t t = 0; t < threads; ++t) workers.emplace_back([&pool] { pool.worker(); });
    } catch (const std::system_error&) {  // no more threads to be had: fewer workers
    }
    if (workers.empty()) pool.worker();
    for (std::thread& w : workers) w.join();
  }
  if (!pool.status.is_ok()) return pool.status;
  sort_rows(pool.rows);
  return std::move(pool.rows);
}

}  // namespace afasim::sweep
