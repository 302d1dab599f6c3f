// perf::Calibration — the performance model's parameters and training figures of one system,
// read from config/calibration/<system>.json (docs/performance-model.md "Calibration").
//
// Every parameter carries its provenance: a source (a key of config/sources.json), a stated
// assumption, or `fitted_to`: the training figures it was fitted to. At most kMaxFitted
// parameters may be fitted (issue 13). The loader checks all of that and the ranges, and
// returns kInvalidArgument naming the file and field; nothing of a bad file is used.
// Value types, thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/preset.h"
#include "perf/cpu_costs.h"
#include "perf/read_cache.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::perf {

enum class FigureMetric { kIops, kMbPerSecond, kLatencyMeanMs, kLatencyStddevMs };
std::string_view figure_metric_name(FigureMetric m);

// One published figure the model is calibrated against.
struct TrainingFigure {
  std::string id;         // "4k-randread-raid5-iops"
  std::string workload;   // job file under config/workloads/
  std::string section;    // job-name prefix of the measured group ("read", "write"); empty: the last group
  std::string raid;       // "RAID5" or "RAID10"
  FigureMetric metric = FigureMetric::kIops;
  double value = 0;       // published value in the metric's unit
  std::string source;     // key of config/sources.json
};

// A parameter's value and where it comes from (exactly one of source, assumption, fitted_to).
struct Parameter {
  double value = 0;
  std::string unit;
  std::string source;
  std::string assumption;
  std::vector<std::string> fitted_to;  // training figure ids
  bool provisional = false;            // carried over, not yet refitted on this model
  bool fitted() const { return !fitted_to.empty(); }
};

// The resources and policies of one controller, as the model uses them.
struct ModelParameters {
  int cpu_cores = 6;
  bool cpu_per_core_queues = true;
  double cpu_rebalance_fraction = 0;
  CpuCosts cpu;
  double cpu_service_cv = 0;
  std::int64_t memory_bytes_per_second = 0;
  int host_ports = 4;
  std::int64_t host_port_bytes_per_second = 0;
  sim::Time host_port_latency_ns = 0;
  std::int64_t mirror_link_bytes_per_second = 0;
  sim::Time mirror_link_latency_ns = 0;
  int backend_lanes = 4;
  std::int64_t backend_lane_bytes_per_second = 0;
  ReadCacheOptions read_cache;
  StreamOptions streams;
};

struct Calibration {
  static constexpr int kMaxFitted = 6;
  std::string system;
  std::string file;  // where it was read, for messages: "calibration/ise-860-g3.json", or under --config-dir
  std::vector<TrainingFigure> figures;
  std::map<std::string, Parameter> parameters;  // by name, as in the file
  ModelParameters model;

  // Parameters with fitted_to, in name order.
  std::vector<std::string> fitted_names() const;
};

// Parses `text` (the file `path`) against the source keys `sources`.
sim::Result<Calibration> parse_calibration(const std::string& path, const std::string& text,
                                           const std::set<std::string>& sources);
// The embedded config/calibration/<system>.json (or from `config_dir` if not empty), checked
// against the matching sources.json. kNotFound when the system has no calibration file.
sim::Result<Calibration> load_calibration(const std::string& system, const std::string& config_dir = "");

// The figures a calibration file repeats from the system preset it runs with — cores per
// controller, host ports and their speed, SAS lanes and their speed — must agree: the timing
// model reads the calibration's, QoS admission and the capacity reports the preset's (hostile
// review 42: calibration cpu_cores 1 gave 32K IOPS while admission still promised 78,602 RAID 10
// IOPS "on 6 cores"). kInvalidArgument naming the parameter, both values and both files;
// `calibration_file` is the calibration's path as the message should show it.
sim::Status check_against_preset(const ModelParameters& m, const config::SystemPreset& preset,
                                 const std::string& calibration_file);

// The calibration a `preset` runs with: config_dir's calibration/<system>.json, then its
// calibration/<kFamilyCalibration>.json (the G3 models share their controllers), then the
// embedded ones, the first found; checked against the preset (check_against_preset).
// kNotFound when none exists; the errors of load_calibration and check_against_preset.
inline constexpr const char* kFamilyCalibration = "ise-860-g3";
sim::Result<Calibration> calibration_for(const config::SystemPreset& preset, const std::string& config_dir);

}  // namespace afasim::perf
