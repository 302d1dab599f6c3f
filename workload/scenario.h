// Scenario files (docs/scenarios.md): a system, QoS policies, volumes, fio workloads and a
// timeline of faults and changes, as one JSON document ("schema": "afasim.scenario/1").
//
// The loader is strict: an unknown key, a wrong type, a bad value, a duplicate key or name,
// a reference to a volume, policy or drive that does not exist, and a bad fio job inside a
// workload are each refused with `FILE: KEY: what is wrong`, KEY being the JSON path of the
// offending value, e.g.
//   s.json: timeline[2].fault.drive: no drive 41 (the ise-860-g3 has drives 1 to 40)
//   s.json: workloads[0].fio:3: bs: "4q" is not a size
// (an inline fio job's lines are numbered within the string). Nothing is simulated while
// loading; scenario_runner.h runs a loaded Scenario.
//
// Pure functions of their inputs except for the file reads they are given. Thread-safe (no
// shared state); the Scenario is plain data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/preset.h"
#include "controller/array.h"
#include "sim/status.h"
#include "sim/time.h"
#include "workload/fio_job.h"

namespace afasim::workload {

inline constexpr std::string_view kScenarioSchema = "afasim.scenario/1";

// Bounds on a scenario (every queue has a bound). Assumptions: far above any scenario a
// person writes, low enough that a typo cannot exhaust memory.
inline constexpr std::size_t kMaxScenarioFileBytes = 4 << 20;
inline constexpr int kMaxScenarioJsonDepth = 32;
inline constexpr std::size_t kMaxScenarioItems = 4096;  // per list: volumes, workloads, timeline
inline constexpr std::size_t kMaxScenarioNameChars = 128;
inline constexpr std::int64_t kMaxTimelineRows = 1'000'000;  // duration ÷ interval
// Rows × (volumes + 1) a report may hold: 160 MB of per-volume counts at most.
inline constexpr std::int64_t kMaxTimelineCells = 20'000'000;
inline constexpr sim::Time kMinReportInterval = 10 * sim::kMillisecond;
inline constexpr sim::Time kMaxScenarioDuration = 10 * sim::kYear;
// Fast-forward epochs a scenario may ask for (ten years of hours).
inline constexpr std::int64_t kMaxFastForwardEpochs = 10 * 366 * 24;

struct ScenarioQosPolicy {
  std::string key;  // "qos_policies[0]", for messages
  controller::QosPolicySpec spec;
};

struct ScenarioVolume {
  std::string key;  // "volumes[1]"
  controller::VolumeSpec spec;
  std::string qos_policy;  // a ScenarioQosPolicy's name, or empty
};

struct ScenarioWorkload {
  std::string key;         // "workloads[0]"
  std::string source_key;  // "workloads[0].fio" or "workloads[0].fio_file"
  std::string name;        // unique among the workloads
  FioJobFile file;         // parsed; its volumes are scenario volumes or created for it
  sim::Time start_ns = 0;  // when its jobs start (their startdelay counts from here)
  // How the volumes its jobs name, and the scenario does not declare, are created.
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  controller::Provisioning provisioning = controller::Provisioning::kThin;
};

// A QoS value in a change: absent (unchanged), null (cleared) or a number of IOPS.
using QosChange = std::optional<std::optional<std::int64_t>>;

struct VolumeChange {
  std::string volume;  // a volume's name
  QosChange min_iops, max_iops, burst_iops;
  std::optional<std::optional<std::string>> qos_policy;  // null: detach from its policy
  std::optional<controller::Id> preferred_controller;
  std::optional<std::int64_t> capacity_bytes;  // grow
};

struct PolicyChange {
  std::string policy;  // a policy's name
  QosChange min_iops, max_iops, burst_iops;
};

enum class TimelineActionKind { kFault, kSetVolume, kSetQosPolicy };

// One timeline entry: exactly one action at one simulated time.
struct TimelineAction {
  std::string key;         // "timeline[2]"
  std::string action_key;  // "timeline[2].fault"
  sim::Time at_ns = 0;
  std::string note;  // free text, printed with the action
  TimelineActionKind kind = TimelineActionKind::kFault;
  controller::FaultSpec fault;  // kFault: passed to Array::inject_fault as it is
  VolumeChange volume_change;   // kSetVolume
  PolicyChange policy_change;   // kSetQosPolicy
  // "fault drive_fail drive 7", "set_volume db max_iops=5000", for reports.
  std::string describe() const;
};

// The scenario's "wear" section (docs/wear-leveling.md, docs/scenarios.md). The leveling
// options themselves go to Scenario::array_options.wear.
struct ScenarioWear {
  // Fast-forward after the per-I/O run (which then needs duration_s): wear advances in
  // epochs from the per-extent write rates measured over [measure_from, duration_s).
  bool fast_forward = false;
  sim::Time until_ns = 0;          // fast_forward.until_s, > duration_s
  sim::Time epoch_ns = 86400 * sim::kSecond;  // fast_forward.epoch_s
  sim::Time measure_from_ns = 0;   // fast_forward.measure_from_s, < duration_s
  // Wear over time: a sample of every SSD's wear every this long during fast-forward
  // (sample_every_s; default 30 days), plus one when it starts and one at the end.
  sim::Time sample_every_ns = 30 * 86400 * sim::kSecond;
};

struct Scenario {
  std::string file_name;  // as given to the loader; starts every message
  std::string name;
  std::string description;
  config::SystemPreset system;  // default ise-860-g3
  std::uint64_t seed = 1;
  // Stop here even if workloads still run; nullopt: when every workload has finished and
  // every timeline action has been applied (rounded up to a whole interval).
  std::optional<sim::Time> duration_ns;
  controller::ArrayOptions array_options;  // payload none by default
  std::vector<ScenarioQosPolicy> qos_policies;
  std::vector<ScenarioVolume> volumes;
  std::vector<ScenarioWorkload> workloads;
  std::vector<TimelineAction> timeline;  // file order (the runner applies them by time)
  sim::Time interval_ns = sim::kSecond;  // report.interval_ms
  ScenarioWear wear;
  // fio warnings of the workloads, "KEY: FILE:LINE: OPTION: explanation".
  std::vector<std::string> warnings;
};

// Reads a file a workload names (`fio_file`), by the path the loader resolved (relative
// paths are relative to the scenario file's folder). kNotFound when it cannot be read.
using ScenarioFileReader = std::function<sim::Result<std::string>(const std::string& path)>;

// Parses scenario text. `file_name` labels messages and anchors relative `fio_file` paths.
// On failure kInvalidArgument "FILE: KEY: what is wrong" for the first problem found
// (kNotFound for an unreadable fio_file, with the same form).
sim::Result<Scenario> parse_scenario(std::string_view text, const std::string& file_name,
                                     const config::Catalog& catalog,
                                     const ScenarioFileReader& read_file);

// A scenario's text with what its loader needs besides: the name its messages start with
// (and its relative fio_file paths are anchored at) and the reader of those files.
struct ScenarioSource {
  std::string text;
  std::string file_name;  // the path, or "config/scenarios/NAME.json" for a built-in one
  ScenarioFileReader read_file;
};

// A scenario file on disk; kNotFound when it cannot be read, kIoError on a read error.
sim::Result<ScenarioSource> read_scenario_file(const std::string& path);
// A scenario compiled into the binary (config/scenarios/NAME.json, ".json" optional); its
// fio_file paths resolve among the embedded files ("../workloads/x.fio"). kNotFound lists
// the names there are.
sim::Result<ScenarioSource> read_embedded_scenario(const std::string& name);
// As `afasim run SCENARIO` takes it: a path when a file of that name exists or the text has
// a `/`, else the name of a built-in scenario. kNotFound says both what was tried and the
// built-in names.
sim::Result<ScenarioSource> read_scenario_source(const std::string& path_or_name);
// A scenario named inside another file (a sweep's base, a reliability scenario's probe):
// `reference` as written there, resolved against `referring_file`'s folder (a file there
// when one exists or the text has a `/`), else the name of a built-in scenario. Returns the
// path or name to give read_scenario_source.
std::string resolve_scenario_reference(const std::string& reference, const std::string& referring_file);
// parse_scenario of the source's text, name and reader.
sim::Result<Scenario> parse_scenario_source(const ScenarioSource& source, const config::Catalog& catalog);
// The files a run of `s` reads besides the scenario file: its workloads' fio_file job files,
// their includes and read_iolog traces, as paths on disk (a built-in scenario's job files are
// not on disk: no file has their names). What an output may not be written over.
std::vector<std::string> scenario_input_files(const Scenario& s);

// Reads `path` from disk and parses it (fio_file paths from disk too). kNotFound when the
// file cannot be read; kInvalidArgument for a file over kMaxScenarioFileBytes or bad content.
sim::Result<Scenario> load_scenario_file(const std::string& path, const config::Catalog& catalog);

// A scenario compiled into the binary (config/scenarios/NAME.json, ".json" optional); its
// fio_file paths resolve among the embedded files ("../workloads/x.fio"). kNotFound lists
// the names there are.
sim::Result<Scenario> load_embedded_scenario(const std::string& name,
                                             const config::Catalog& catalog);
std::vector<std::string> embedded_scenario_names();  // sorted, without ".json"

}  // namespace afasim::workload
