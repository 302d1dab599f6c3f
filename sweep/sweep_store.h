// A sweep's output folder (docs/sweeps.md "Output and resume"):
//
//   DIR/rows.jsonl    a header line, then one row per line as each run finishes (the journal
//                     a rerun resumes from)
//   DIR/results.csv   the table, DIR/results.json the table and the summary, DIR/summary.csv
//                     the summary (sweep_results.h); written once every run has a row
//
// rows.jsonl's header, {"schema": "afasim.sweep-rows/1", "sweep": NAME, "fingerprint": HEX},
// ties the rows to one plan (SweepPlan::fingerprint): rows of another base, `set` or points
// are never mixed into a sweep's results. Each row is written with one write and flushed to
// the operating system, so a killed sweep loses at most the line it was writing; that torn
// last line is dropped when the journal is opened again.
// Not thread-safe: one RowJournal per DIR, its calls serialized by the caller (run_sweep's
// on_row is).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/status.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_results.h"

namespace afasim::sweep {

inline constexpr const char* kRowsSchema = "afasim.sweep-rows/1";

class RowJournal {
 public:
  // Opens DIR/rows.jsonl for `plan`, creating DIR and the file as needed, and returns the rows
  // it already holds in `*rows` (file order). Errors: kConflict "DIR/rows.jsonl: the rows of
  // another sweep (...)" when its header's fingerprint is not the plan's; kInvalidArgument
  // "DIR/rows.jsonl:LINE: what is wrong" for a whole line that is not a header or row;
  // kIoError when DIR or the file cannot be created, read or written; kUnavailable when
  // another afasim sweep holds DIR (an flock on the folder, held until the journal is destroyed: two
  // sweeps on one DIR both ran every run and wrote every row twice, hostile round 17).
  static sim::Result<std::unique_ptr<RowJournal>> open(const std::string& dir, const SweepPlan& plan,
                                                       std::vector<SweepRow>* rows);
  ~RowJournal();
  RowJournal(const RowJournal&) = delete;
  RowJournal& operator=(const RowJournal&) = delete;

  // Appends `row` as one line and flushes it; a row to retry on resume (SweepRow::
  // retry_on_resume) is not kept. kIoError when the write fails.
  sim::Status append(const SweepRow& row);

 private:
  RowJournal(std::string path, std::FILE* file, SweepKind kind, int lock_fd)
      : path_(std::move(path)), file_(file), kind_(kind), lock_fd_(lock_fd) {}
  std::string path_;
  std::FILE* file_;
  SweepKind kind_;
  int lock_fd_;  // DIR itself, flocked
};

// kInvalidArgument when a folder stands at DIR/results.csv, results.json or summary.csv, or at
// DIR/plot-FIGURE.svg for one of `plots`: no rename or write can replace it (checked before a
// sweep runs, and again by write_results).
sim::Status check_results_paths(const std::string& dir, const std::vector<std::string>& plots = {});
// Writes DIR/results.csv, DIR/results.json and DIR/summary.csv from `rows` (table order),
// each to a temporary file; once all three are written they are renamed over the old ones.
// kIoError when one cannot be written (the old set stays, and no .tmp file);
// check_results_paths' error first.
sim::Status write_results(const std::string& dir, const SweepFile& file, const std::vector<SweepRow>& rows);

// Writes plot_svg(file, rows, figure) to `path` (a temporary file renamed over it).
// kInvalidArgument for a figure the sweep does not have, kIoError when it cannot be written.
sim::Status write_plot(const std::string& path, const SweepFile& file, const std::vector<SweepRow>& rows,
                       const std::string& figure);

}  // namespace afasim::sweep
