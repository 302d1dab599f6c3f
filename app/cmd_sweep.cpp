// `afasim sweep SWEEP.json --out DIR`: many runs of one scenario, a point per combination of
// field values and a run per seed, on a pool of worker threads, or over MPI ranks when an MPI
// launcher started it (cmd_sweep_mpi.cpp) (docs/sweeps.md).
#include <filesystem>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "app/cmd_sweep.h"
#include "app/commands.h"
#include "config/preset.h"
#include "sweep/sweep_file.h"
#include "sweep/sweep_mpi.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_plot.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_store.h"

namespace afasim::app {
namespace {

int default_jobs() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(std::min<unsigned>(cores, sweep::kMaxSweepJobs));
}

void print_progress(const sweep::SweepProgress& p) {
  std::fprintf(stderr, "sweep: %zu/%zu runs, %zu running, %zu failed\n", p.done, p.total, p.running, p.failed);
}

// Says on stderr what a resumed sweep takes from DIR/rows.jsonl: the runs it has rows for,
// and the rows it leaves out because their seeds are not in this sweep (the file's seeds or
// --seed-count changed since): without a word these looked like lost runs.
void note_resume(const SweepOptions& o, const sweep::SweepPlan& plan,
                 const std::vector<sweep::SweepRow>& done) {
  if (done.empty()) return;
  const sweep::RowsLeftOut out = sweep::rows_left_out(plan, done);
  const std::string journal = o.out + "/rows.jsonl";
  std::fprintf(stderr, "afasim sweep: resuming from %s: %zu of %zu runs have a row\n",
               journal.c_str(), sweep::runs_left(plan, done, 0).rows.size(), plan.file.runs());
  if (const std::size_t twice = sweep::conflicting_rows(plan, done); twice > 0)
    std::fprintf(stderr,
                 "afasim sweep: note: %s holds %zu run%s more than once with different results (two sweeps "
                 "on one folder, or an edited file?): the first row of each is used\n",
                 journal.c_str(), twice, twice == 1 ? "" : "s");
  if (out.rows == 0) return;
  std::string seeds;
  for (std::size_t i = 0; i < out.seeds.size() && i < 10; ++i)
    seeds += (i == 0 ? "" : ", ") + std::to_string(out.seeds[i]);
  if (out.seeds.size() > 10) seeds += " and " + std::to_string(out.seeds.size() - 10) + " more";
  std::fprintf(stderr,
               "afasim sweep: note: %s holds %zu %s of %s %s that this sweep does not run (its "
               "seeds or --seed-count changed): kept in the file, left out of the results\n",
               journal.c_str(), out.rows, out.rows == 1 ? "row" : "rows",
               out.seeds.size() == 1 ? "seed" : "seeds", seeds.c_str());
}

// The plan of the file, with its seeds cut to the first --seed-count.
sim::Result<sweep::SweepPlan> plan_of(const SweepOptions& o, const config::Catalog& catalog) {
  auto file = sweep::load_sweep_file(o.sweep_file);
  if (!file.is_ok()) return file.status();
  if (o.seed_count > 0 && o.seed_count < file->seeds.size()) file->seeds.resize(o.seed_count);
  return sweep::prepare_sweep(std::move(file).value(), catalog);
}

// Nothing the sweep writes under --out may be a file it reads: the sweep file (review, round
// 23: DIR/results.json as the sweep file was replaced by the results), the base scenario, its
// job files, their includes and traces (hostile round 44: a base named DIR/results.json and a
// job file named DIR/summary.csv were replaced, exit 0); nor may one lie under DIR/logs, where
// the runs write their fio logs.
sim::Status check_outputs_not_read(const SweepOptions& o, const sweep::SweepPlan& plan) {
  // The points' own files too (re-test of round 44: a point's fio_file named DIR/results.csv).
  std::vector<std::string> inputs{o.sweep_file, plan.base.file_name};
  inputs.insert(inputs.end(), plan.input_files.begin(), plan.input_files.end());
  std::vector<std::string> outputs{"rows.jsonl", "results.csv", "results.json", "summary.csv"};
  for (const std::string& figure : o.plots) outputs.push_back("plot-" + figure + ".svg");
  for (const std::string& name : outputs)
    if (std::string same = output_is_input(o.out + "/" + name, inputs); !same.empty())
      return sim::invalid_argument("--out: " + same);
  const std::filesystem::path logs = written_path(o.out + "/logs");
  for (const std::string& input : inputs) {
    const std::filesystem::path in = written_path(input);
    if (std::mismatch(logs.begin(), logs.end(), in.begin(), in.end()).first == logs.end())
      return sim::invalid_argument("--out: " + input + " is inside " + logs.string() +
                                   ", where the runs write their fio logs: move it, or give another --out");
  }
  return sim::Status::ok();
}

int run_sweep_command(const SweepOptions& o) {
  if (sweep::mpi_launch_from_environment()) return run_sweep_over_mpi(o);
  SweepSetup setup;
  std::string message;
  if (const int code = set_up_sweep(o, true, &setup, &message); code != 0) return fail_command("sweep", message, code);
  sweep::SweepProgress last;
  const auto rows = sweep::run_sweep(*setup.plan, *setup.catalog, std::move(setup.done),
                                     sweep_run_options(o, setup.journal.get(), &last));
  return finish_sweep(o, *setup.plan, rows);
}

}  // namespace

int set_up_sweep(const SweepOptions& o, bool open_journal, SweepSetup* setup, std::string* message) {
  const auto fail = [message](const sim::Status& st, int code) {
    *message = st.message();
    return code;
  };
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(o.config_dir);
  if (!catalog.is_ok()) return fail(catalog.status(), 2);
  setup->catalog = std::move(catalog).value();
  auto plan = plan_of(o, *setup->catalog);
  if (!plan.is_ok()) return fail(plan.status(), 2);
  setup->plan = std::move(plan).value();
  setup->plan->log_dir = o.out + "/logs";
  if (auto st = check_outputs_not_read(o, *setup->plan); !st.is_ok()) return fail(st, 2);
  for (std::size_t i = 0; i < o.plots.size(); ++i) {  // before any run: a typo costs nothing
    const std::string& figure = o.plots[i];
    if (auto st = sweep::check_figure(setup->plan->file.kind, figure); !st.is_ok())
      return fail(sim::invalid_argument("--plot " + st.message()), 2);
    if (std::find(o.plots.begin(), o.plots.begin() + static_cast<std::ptrdiff_t>(i), figure) != o.plots.begin() + static_cast<std::ptrdiff_t>(i))
      return fail(sim::invalid_argument("--plot " + figure + " is given twice"), 2);  // hostile round 44: drawn twice
  }
  if (!open_journal) return 0;
  auto journal = sweep::RowJournal::open(o.out, *setup->plan, &setup->done);
  if (!journal.is_ok()) return fail(journal.status(), journal.status().code() == sim::Code::kIoError ? 1 : 2);
  setup->journal = std::move(journal).value();
  // Before any run: a folder at a results or plot name would fail the sweep at its end.
  if (auto st = sweep::check_results_paths(o.out, o.plots); !st.is_ok()) return fail(st, 2);
  note_resume(o, *setup->plan, setup->done);
  return 0;
}

sweep::SweepRunOptions sweep_run_options(const SweepOptions& o, sweep::RowJournal* journal, sweep::SweepProgress* last) {
  sweep::SweepRunOptions run;
  run.jobs = o.jobs;
  if (o.max_runs > 0) run.max_runs = o.max_runs;
  run.on_row = [journal](const sweep::SweepRow& row) { return journal->append(row); };
  run.progress = [&o, last](const sweep::SweepProgress& p) {
    if (!o.quiet && p.done != last->done) print_progress(p);
    *last = p;
  };
  return run;
}

int finish_sweep(const SweepOptions& o, const sweep::SweepPlan& plan,
                 const sim::Result<std::vector<sweep::SweepRow>>& rows) {
  if (!rows.is_ok()) return fail_command("sweep", rows.status().message(), 1);
  // Counted in the rows, resumed ones included: a rerun with nothing left to run said "0
  // failed" and exit 0 over a table with a failed row (docs check, round 24).
  const auto failed = static_cast<std::size_t>(
      std::count_if(rows->begin(), rows->end(), [](const sweep::SweepRow& r) { return r.failed(); }));
  if (rows->size() < plan.file.runs()) {
    std::fprintf(stderr, "afasim sweep: stopped by --max-runs: %zu of %zu runs done, %zu failed; run it again with --out %s to go on\n",
                 rows->size(), plan.file.runs(), failed, o.out.c_str());
    return failed > 0 ? 1 : 0;
  }
  if (auto st = sweep::write_results(o.out, plan.file, *rows); !st.is_ok()) return fail_command("sweep", st.message(), 1);
  const auto count = [](std::size_t n, const char* noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  std::fprintf(
      stderr, "afasim sweep: %s (%s × %s), %zu failed: %s/results.csv, results.json, summary.csv\n",
      count(plan.file.runs(), "run").c_str(), count(plan.file.points.size(), "point").c_str(),
      count(plan.file.seeds.size(), "seed").c_str(), failed, o.out.c_str());
  for (const std::string& figure : o.plots) {
    const std::string path = o.out + "/plot-" + figure + ".svg";
    if (auto st = sweep::write_plot(path, plan.file, *rows, figure); !st.is_ok()) return fail_command("sweep", st.message(), 1);
    std::fprintf(stderr, "afasim sweep: plot %s\n", path.c_str());
  }
  return failed > 0 ? 1 : 0;
}

Runner add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  o->jobs = default_jobs();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run a scenario over a grid or list of field values and seeds; one table of results (docs/sweeps.md)");
  std::string builtin;
  for (const std::string& name : sweep::embedded_sweep_names()) builtin += (builtin.empty() ? "" : ", ") + name;
  cmd->add_option("sweep", o->sweep_file,
                  "Sweep file (JSON, \"schema\": \"afasim.sweep/1\", docs/sweeps.md), or the name of a built-in one (" +
                      builtin + ")")
      ->required();
  cmd->add_option("--out", o->out,
                  "Folder for rows.jsonl (written as runs finish; a rerun resumes from it), results.csv, "
                  "results.json and summary.csv")
      ->required();
  CLI::Option* jobs = cmd->add_option("--jobs", o->jobs,
                                      "Runs at once, on worker threads (default: the machine's cores; under mpirun or "
                                      "srun: threads per rank, default 1)")
                          ->check(count_check(1, sweep::kMaxSweepJobs))
                          ->capture_default_str();
  cmd->add_option("--max-runs", o->max_runs, "Start at most N runs, then stop (rerun to go on)")
      ->check(count_check(1, static_cast<std::int64_t>(sweep::kMaxSweepRuns)));
  cmd->add_option("--seed-count", o->seed_count, "Only the N smallest of the file's seeds (a quick look first)")
      ->check(count_check(1, static_cast<std::int64_t>(sweep::kMaxSweepSeeds)));
  cmd->add_option("--config-dir", o->config_dir, "Read presets from this folder instead of the built-in ones");
  cmd->add_flag("--quiet", o->quiet, "No progress lines on stderr");
  cmd->add_option("--plot", o->plots,
                  "Also plot FIGURE (a results column: iops, latency_us_p99, rebuild_s, mttdl_years...) against the "
                  "sweep's fields into DIR/plot-FIGURE.svg; repeatable");
  return [o, jobs] {
    o->jobs_given = jobs->count() > 0;
    return run_sweep_command(*o);
  };
}

}  // namespace afasim::app
