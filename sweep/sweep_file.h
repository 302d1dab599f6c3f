// Sweep files (docs/sweeps.md): a base scenario, the fields that vary (axes, or a list of
// points) and the seeds, as one JSON document ("schema": "afasim.sweep/1").
//
//   {"schema": "afasim.sweep/1", "name": "raid-vs-rebuild-rate",
//    "base": "drive-failure-short.json",
//    "set": {"/duration_s": 12},
//    "axes": [{"field": "/volumes/*/raid_type", "values": ["RAID5", "RAID10"]},
//             {"field": "/options/rebuild_bytes_per_second", "values": ["100MB/s", "400MB/s"]}],
//    "seeds": {"first": 1, "count": 8}}
//
// The parser is strict, as the scenario loader is: an unknown key, a wrong type, a value out
// of range, a duplicate key, a bad pointer (field_pointer.h), a duplicate seed or axis
// field, and both or neither of `axes` / `points` are refused with `FILE: KEY: what is
// wrong`, KEY the JSON path of the offending value (`axes[1].field`, `points[2]`,
// `seeds.count`). Nothing about the base scenario is checked here (sweep_plan.h does).
//
// Pure functions of their inputs except for the file read; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"
#include "sweep/field_pointer.h"

namespace afasim::sweep {

inline constexpr std::string_view kSweepSchema = "afasim.sweep/1";

// Bounds (every list has one). Far above a sweep a person writes to run on a cluster, low
// enough that a typo cannot exhaust memory: a million rows of results is ~200 MB of CSV.
inline constexpr std::size_t kMaxSweepFileBytes = 4 << 20;
inline constexpr int kMaxSweepJsonDepth = 32;
inline constexpr std::size_t kMaxSweepAxes = 16;
inline constexpr std::size_t kMaxSweepFieldsPerPoint = 64;  // `set`, and each point's fields
inline constexpr std::size_t kMaxSweepValues = 4096;        // per axis
inline constexpr std::size_t kMaxSweepPoints = 100'000;     // after the axes are multiplied out
inline constexpr std::size_t kMaxSweepSeeds = 100'000;
inline constexpr std::size_t kMaxSweepRuns = 1'000'000;     // points × seeds

// One field set to one value.
struct FieldValue {
  std::string key;  // where the sweep file says so, for messages: "axes[1].field", "set"
  FieldPointer pointer;
  nlohmann::json value;
};

// One point of the sweep: the fields it sets, in the order they are set.
struct SweepPoint {
  std::vector<FieldValue> fields;
};

// What the base is: an I/O scenario (docs/scenarios.md) or a reliability scenario
// (docs/reliability.md). It decides the figures of the results (sweep_results.h).
enum class SweepKind { kScenario, kReliability };

struct SweepFile {
  std::string file_name;  // as given to the parser; starts every message
  std::string name;
  std::string description;
  // The base scenario as written: a path (relative to the sweep file's folder) or the name
  // of a built-in scenario, as `afasim run` takes it.
  std::string base;
  // Set in every point before its own fields, in the order of their pointers.
  std::vector<FieldValue> set;
  // The columns of the results: the axes' fields in file order, or every field any point
  // sets in the order of their pointers. Each point sets a subset of them.
  std::vector<std::string> fields;
  std::vector<SweepPoint> points;    // in order: the axes multiplied out, first axis slowest
  std::vector<std::uint64_t> seeds;  // ascending, distinct, at least one
  SweepKind kind = SweepKind::kScenario;  // set by prepare_sweep from the base's schema
  std::size_t runs() const { return points.size() * seeds.size(); }
};

// Parses sweep text; `file_name` labels messages. kInvalidArgument "FILE: KEY: what is
// wrong" for the first problem found.
sim::Result<SweepFile> parse_sweep_file(std::string_view text, const std::string& file_name);

// Reads `path` and parses it. kNotFound "cannot read PATH" when it cannot be read,
// kInvalidArgument for a file over kMaxSweepFileBytes or bad content.
// `path` that is no file and has no '/' is the name of a built-in sweep (config/sweeps/NAME.json,
// ".json" optional); kNotFound lists the built-in ones when there is none of that name.
sim::Result<SweepFile> load_sweep_file(const std::string& path);

// The built-in sweeps' names (config/sweeps/*.json), sorted.
std::vector<std::string> embedded_sweep_names();

}  // namespace afasim::sweep
