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
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/status.h"
#include "sweep/sweep_file.h"
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

using Figures = std::array<std::optional<double>, kFigures.size()>;

// One run: a point with a seed.
struct SweepRow {
  std::size_t point = 0;  // index into SweepFile::points
  std::uint64_t seed = 0;
  std::string error;  // empty when the run completed; else why it did not ("BASE: KEY: ...")
  Figures figures;    // all nullopt for a failed run
  bool failed() const { return !error.empty(); }
};

// The figures of a completed run, rounded to their decimals.
Figures figures_of(const workload::ScenarioReport& report);

// A row as one line of rows.jsonl (no newline):
// {"point": 3, "seed": 1, "error": null, "figures": {"iops": 1907.8, ..., "rebuild_s": null}}
std::string row_to_line(const SweepRow& row);
// The row of a line row_to_line wrote. kInvalidArgument "what is wrong" for anything else
// (not JSON, a missing or mistyped member, an unknown figure, a point ≥ `points`).
sim::Result<SweepRow> row_from_line(const std::string& line, std::size_t points);

// Sorts rows into table order: by point, then seed.
void sort_rows(std::vector<SweepRow>& rows);

// results.csv: a header, then one line per row in the order given: point, the sweep's
// fields (a string value as its text, any other JSON value as JSON; empty when the point
// does not set it), seed, status (ok | failed), the figures (empty when nullopt), error.
// Fields are quoted as RFC 4180 asks (a comma, quote or line break inside).
std::string results_csv(const SweepFile& file, const std::vector<SweepRow>& rows);
// results.json: {"schema": "afasim.sweep-results/1", "name", "base", "fields", "figures",
// "seeds", "rows": [{"point", "fields": {POINTER: value}, "seed", "status", "figures":
// {...}, "error"}], "summary": [the summary's rows as objects]}; 2-space indent, newline.
std::string results_json(const SweepFile& file, const std::vector<SweepRow>& rows);
// summary.csv: one line per point in the file's order: point, the fields, runs (completed),
// failed, then per figure FIGURE_mean and FIGURE_ci95 (the half-width of the 95 %
// interval of the mean, statistics.h; empty below two completed runs with the figure).
std::string summary_csv(const SweepFile& file, const std::vector<SweepRow>& rows);

}  // namespace afasim::sweep
