// The results of a sweep (docs/sweeps.md "Results"): one row per point and seed holding the
// run's headline figures, and a summary per point over its seeds.
//
// A row's figures are taken from the run's ScenarioReport and rounded to their figure's
// decimals when the row is made, so a row written to rows.jsonl and read back is the same
// row: a sweep resumed from its rows.jsonl writes the same bytes as one run in one go.
// The tables list rows in a fixed order, the points in the sweep file's order and each
// point's seeds ascending, whatever order the runs finished in.
// Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"
#include "sweep/statistics.h"
#include "sweep/sweep_file.h"
#include "reliability/simulate.h"
#include "workload/scenario_runner.h"

namespace afasim::sweep {

// A headline figure: its column name (unit last) and the decimals it is kept to.
struct Figure {
  const char* name;
  int decimals;
};

// The figures, in column order. Rates and latencies are the array's, over the whole run
// (every workload together, ramp included: ScenarioReport::array, as `afasim run` reports
// it). MB are 10^6 bytes.
//   iops, read_iops, write_iops    successful I/Os per second
//   mb_per_s                        successful bytes per second / 10^6
//   latency_us_mean, _p99, _max     completion latency of successful I/Os, microseconds
//   errors                          failed I/Os (e.g. ENOSPC on a full thin pool)
//   rebuild_s                       the last completed rebuild's duration, pauses excluded;
//                                   empty when no rebuild completed
//   rebuild_percent                 the last rebuild's progress at the end; empty when none ran
//   volumes_failed                  volumes in state failed (data lost) at the end
//   wear_percent_max, _min          most and least worn SSD, % of rated endurance, at the end
inline constexpr std::array<Figure, 13> kFigures = {{{"iops", 1},
                                                     {"read_iops", 1},
                                                     {"write_iops", 1},
                                                     {"mb_per_s", 3},
                                                     {"latency_us_mean", 1},
                                                     {"latency_us_p99", 1},
                                                     {"latency_us_max", 1},
                                                     {"errors", 0},
                                                     {"rebuild_s", 3},
                                                     {"rebuild_percent", 1},
                                                     {"volumes_failed", 0},
                                                     {"wear_percent_max", 6},
                                                     {"wear_percent_min", 6}}};

// The figures of a reliability sweep (a base with "schema": "afasim.reliability/1",
// docs/reliability.md), from its ReliabilityReport:
//   array_years                    exposure: lifetimes until their first loss or horizon
//   arrays_with_loss               lifetimes that lost data
//   losses_double_failure, losses_latent_error, losses_rebuild_read_error   by cause
//   loss_probability               of a loss within the horizon
//   losses_per_1000_array_years    arrays_with_loss ÷ array_years × 1000 (its mean over seeds
//                                  is near the pooled rate, not equal to it: a lifetime that
//                                  loses data ends early; the summary's pooled columns are exact)
//   mttdl_years                    array_years ÷ losses; empty with no loss
//   markov_mttdl_years             the closed form for double failures (markov.h)
//   drive_failures, rebuilds, datapac_replacements, latent_errors   counts
//   rebuild_hours                  one SSD's rebuild, mean over SSDs
//   unavailable_hours              both controllers down
inline constexpr std::array<Figure, 16> kReliabilityFigures = {{{"array_years", 6},
                                                                {"arrays_with_loss", 0},
                                                                {"losses_double_failure", 0},
                                                                {"losses_latent_error", 0},
                                                                {"losses_rebuild_read_error", 0},
                                                                {"loss_probability", 6},
                                                                {"losses_per_1000_array_years", 4},
                                                                {"mttdl_years", 3},
                                                                {"markov_mttdl_years", 3},
                                                                {"drive_failures", 0},
                                                                {"rebuilds", 0},
                                                                {"datapac_replacements", 0},
                                                                {"latent_errors", 0},
                                                                {"rebuild_hours", 4},
                                                                {"unavailable_hours", 3},
                                                                {"wear_percent_per_year", 4}}};

// Where the summary's pooled columns find their inputs in kReliabilityFigures.
inline constexpr std::size_t kArrayYearsFigure = 0;
inline constexpr std::size_t kArraysWithLossFigure = 1;
inline constexpr std::size_t kLossesDoubleFailureFigure = 2;
static_assert(std::string_view(kReliabilityFigures[kArrayYearsFigure].name) == "array_years");
static_assert(std::string_view(kReliabilityFigures[kArraysWithLossFigure].name) == "arrays_with_loss");
static_assert(std::string_view(kReliabilityFigures[kLossesDoubleFailureFigure].name) == "losses_double_failure");

// The figures of a kind, in column order.
std::span<const Figure> figure_set(SweepKind kind);

// One value per figure of the kind, in its order.
using Figures = std::vector<std::optional<double>>;

// One run: a point with a seed.
struct SweepRow {
  std::size_t point = 0;  // index into SweepFile::points
  std::uint64_t seed = 0;
  std::string error;  // empty when the run completed; else why it did not ("BASE: KEY: ...")
  Figures figures;    // one per figure of the sweep's kind; empty or all nullopt for a failed run
  bool failed() const { return !error.empty(); }
  // The machine, not the run, failed it (it ran out of memory): the row is reported but not
  // journalled, so a resume runs it again (hostile review 42: 7 of 48 runs that met a memory
  // limit under --jobs 1024 stayed failed on every resume).
  bool retry_on_resume() const { return error.rfind(kOutOfMemoryError, 0) == 0; }
  // The error of a run that ran out of memory (its text travels between MPI ranks).
  static constexpr const char* kOutOfMemoryError =
      "out of memory: the machine (or its limit) could not give this run what it needed; a resume runs it again "
      "(fewer --jobs leave each run more)";
};

// The figures of a completed run, rounded to their decimals.
Figures figures_of(const workload::ScenarioReport& report);
Figures figures_of(const reliability::ReliabilityReport& report);

// A row as one line of rows.jsonl (no newline), with the figures of `kind`:
// {"point": 3, "seed": 1, "error": null, "figures": {"iops": 1907.8, ..., "rebuild_s": null}}
std::string row_to_line(const SweepRow& row, SweepKind kind);
// The row of a line row_to_line wrote. kInvalidArgument "what is wrong" for anything else
// (not JSON, a missing or mistyped member, a figure not of `kind`, a point ≥ `points`).
sim::Result<SweepRow> row_from_line(const std::string& line, std::size_t points, SweepKind kind);

// Sorts rows into table order: by point, then seed.
void sort_rows(std::vector<SweepRow>& rows);

// The tables take the figures of file.kind.
// results.csv: a header, then one line per row in the order given: point, the sweep's
// fields (a string value as its text, any other JSON value as JSON; empty when the point
// does not set it), seed, status (ok | failed), the figures (empty when nullopt), error.
// Fields are quoted as RFC 4180 asks (a comma, quote or line break inside).
std::string results_csv(const SweepFile& file, const std::vector<SweepRow>& rows);
// Receives a document in pieces, in order, as it is printed (each piece whole lines, ~1 MiB
// at most but for one longer line): results of a 10^6-run sweep are written as they are
// printed, never held whole (a sweep of 10^6 runs printed ~0.8 GB of JSON into one string).
using TextSink = std::function<void(std::string_view)>;
void results_csv(const SweepFile& file, const std::vector<SweepRow>& rows, const TextSink& sink);
// Per point of the file, in its order, the mean and 95 % interval of figure number
// `figure` (an index into figure_set(file.kind)) over the point's completed runs: the
// summary's FIGURE_mean and FIGURE_ci95. REQUIRES: figure < figure_set(file.kind).size().
std::vector<MeanInterval> figure_by_point(const SweepFile& file, const std::vector<SweepRow>& rows, std::size_t figure);

// results.json: {"schema": "afasim.sweep-results/1", "name", "base", "fields", "figures",
// "seeds", "rows": [{"point", "fields": {POINTER: value}, "seed", "status", "figures":
// {...}, "error"}], "summary": [the summary's rows as objects]}; 2-space indent, newline.
std::string results_json(const SweepFile& file, const std::vector<SweepRow>& rows);
void results_json(const SweepFile& file, const std::vector<SweepRow>& rows, const TextSink& sink);
// summary.csv: one line per point in the file's order: point, the fields, runs (completed),
// failed, then per figure FIGURE_mean and FIGURE_ci95 (the half-width of the 95 %
// interval of the mean, statistics.h; empty below two completed runs with the figure).
std::string summary_csv(const SweepFile& file, const std::vector<SweepRow>& rows);

}  // namespace afasim::sweep
