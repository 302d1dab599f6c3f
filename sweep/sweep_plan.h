// A sweep ready to run: its file, its base scenario read and checked, and the scenario of
// any (point, seed) on demand (docs/sweeps.md "How a point runs").
//
// prepare_sweep reads the base (a path relative to the sweep file's folder, or a built-in
// scenario's name, as `afasim run` takes it), checks that it loads as a scenario, applies
// the sweep's `set`, and sets every point's fields into a copy of the result, so that a
// pointer that names nothing is a mistake of the sweep file (exit 2 from the CLI) found
// before anything runs. A field's *value* is not checked here: a value the scenario loader
// refuses (`"raid_type": "RAID6"`) is that point's error, reported in its rows.
//
// point_scenario then builds the point's scenario exactly as `afasim run` would load a file
// holding the base with those fields set, and replaces its seed as `afasim run --seed` does.
// The plan is immutable after prepare_sweep: point_scenario may run on many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/preset.h"
#include "reliability/reliability_scenario.h"
#include "sim/status.h"
#include "sweep/sweep_file.h"
#include "workload/scenario.h"

namespace afasim::sweep {

struct SweepPlan {
  SweepFile file;
  workload::ScenarioSource base;  // as read; base.file_name starts the points' messages
  nlohmann::json document;        // the base scenario's JSON with the sweep's `set` applied
  // FNV-1a (64 bits, hex) of the base text, the contents of the job files it and the points
  // read, a --config-dir folder's presets, `set` and the points: the rows of one plan never go into
  // the results of another (rows.jsonl's header, sweep_store.h). The seeds are not in it: a
  // sweep may be rerun with more seeds and keep the rows it has.
  std::string fingerprint;
  // The job files (fio_file) and traces (read_iolog) the base and the points read, as paths:
  // what nothing the sweep writes may be (afasim sweep --out).
  std::vector<std::string> input_files;
  // Where the runs' fio log files (write_*_log) go: run (P, S) writes under
  // LOG_DIR/point-P-seed-S, so that no two runs write one file. Empty: the current folder
  // (tests); afasim sweep sets DIR/logs.
  std::string log_dir;
};

// Errors (kInvalidArgument unless said): "SWEEP: base: MESSAGE" when the base cannot be
// read (kNotFound) or does not load as a scenario (the loader's message); "SWEEP: KEY:
// POINTER: what is wrong (at PATH)" for a field that names nothing in the base, KEY being
// the field's place in the sweep file, with ", in point N" for a point's own fields.
sim::Result<SweepPlan> prepare_sweep(SweepFile file, const config::Catalog& catalog);

// The base is a reliability scenario (docs/reliability.md) when its schema says so; then
// plan.file.kind is kReliability and its points are built by point_reliability.
//
// The scenario of point `point` (index into plan.file.points) with seed `seed`. Errors:
// the scenario loader's "BASE: KEY: what is wrong" for a value it refuses.
// REQUIRES: point < plan.file.points.size(), plan.file.kind == kScenario.
sim::Result<workload::Scenario> point_scenario(const SweepPlan& plan, std::size_t point, std::uint64_t seed,
                                               const config::Catalog& catalog);

// The same for a reliability sweep. REQUIRES: plan.file.kind == kReliability.
sim::Result<reliability::ReliabilityScenario> point_reliability(const SweepPlan& plan, std::size_t point,
                                                                std::uint64_t seed, const config::Catalog& catalog);

}  // namespace afasim::sweep
