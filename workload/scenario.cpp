// The scenario loader (scenario.h, docs/scenarios.md).
//
// Reading a scenario walks its JSON once, section by section, with a Reader that knows the
// file name and turns every problem into `FILE: KEY: what is wrong`. Inside this file a
// problem is a LoadError exception (the same pattern as config/preset.cpp: every check is
// one line); parse_scenario turns it into a Status, so nothing escapes the loader.
#include "workload/scenario.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "config/json_text.h"
#include "config/size.h"
#include "datapac/payload.h"

namespace afasim::workload {
namespace {

using json = nlohmann::json;
using controller::Id;

struct LoadError : std::runtime_error {
  using std::runtime_error::runtime_error;
  sim::Code code = sim::Code::kInvalidArgument;
};

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string at_index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string in_quotes(const std::string& s) {
  return "\"" + s + "\"";
}

std::string type_name(const json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array";
  return std::string("a ") + j.type_name();
}

std::string list_of(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Reads values out of the parsed document; every failure throws LoadError with the path.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what,
                         sim::Code code = sim::Code::kInvalidArgument) const {
    LoadError e(file_ + ": " + (path.empty() ? "(top level)" : path) + ": " + what);
    e.code = code;
    throw e;
  }

  void object(const json& j, const std::string& path,
              std::initializer_list<std::string_view> allowed) const {
    if (!j.is_object()) fail(path, "must be an object, got " + type_name(j));
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
      std::vector<std::string> names(allowed.begin(), allowed.end());
      fail(join(path, it.key()), "unknown key (expected one of: " + list_of(names) + ")");
    }
  }

  const json& array(const json& obj, const std::string& path, std::string_view key) const {
    const json& v = obj.at(std::string(key));
    const std::string p = join(path, key);
    if (!v.is_array()) fail(p, "must be an array, got " + type_name(v));
    if (v.size() > kMaxScenarioItems)
      fail(p, "has " + std::to_string(v.size()) + " entries; at most " +
                  std::to_string(kMaxScenarioItems) + " are allowed");
    return v;
  }

  std::string text(const json& obj, const std::string& path, std::string_view key,
                   std::size_t max_chars = 1 << 20) const {
    const json& v = obj.at(std::string(key));
    const std::string p = join(path, key);
    if (!v.is_string()) fail(p, "must be a string, got " + type_name(v));
    std::string s = v.get<std::string>();
    if (s.empty()) fail(p, "must not be empty");
    if (s.size() > max_chars)
      fail(p, "is " + std::to_string(s.size()) + " characters long; at most " +
                  std::to_string(max_chars) + " are allowed");
    return s;
  }

  std::string required_text(const json& obj, const std::string& path, std::string_view key,
                            std::size_t max_chars = 1 << 20) const {
    if (!obj.contains(std::string(key))) fail(join(path, key), "missing");
    return text(obj, path, key, max_chars);
  }

  bool boolean(const json& obj, const std::string& path, std::string_view key) const {
    const json& v = obj.at(std::string(key));
    if (!v.is_boolean()) fail(join(path, key), "must be true or false, got " + type_name(v));
    return v.get<bool>();
  }

  std::int64_t integer(const json& v, const std::string& p, std::int64_t lo,
                       std::int64_t hi) const {
    if (!v.is_number_integer()) fail(p, "must be an integer, got " + type_name(v));
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(p, "must be " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + v.dump());
    const std::int64_t n = v.get<std::int64_t>();
    if (n < lo || n > hi)
      fail(p, "must be " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + v.dump());
    return n;
  }

  // A size: an integer of bytes or a string with a unit ("100GiB", "2TB"; config/size.h).
  // `rate` also accepts a trailing "/s" ("400MB/s").
  std::int64_t size(const json& v, const std::string& p, std::int64_t lo, bool rate = false) const {
    std::int64_t bytes = 0;
    if (v.is_number_integer()) {
      bytes = integer(v, p, INT64_MIN, INT64_MAX);
    } else if (v.is_string()) {
      std::string s = v.get<std::string>();
      if (rate && s.size() > 2 && s.compare(s.size() - 2, 2, "/s") == 0) s.resize(s.size() - 2);
      auto parsed = config::parse_size(s);
      if (!parsed.is_ok()) fail(p, parsed.status().message());
      bytes = *parsed;
    } else {
      fail(p, std::string("must be ") + (rate ? "a rate" : "a size") +
                  " (an integer of bytes or a string such as \"100GiB\"), got " + type_name(v));
    }
    if (bytes < lo) fail(p, "must be at least " + std::to_string(lo) + " bytes, got " + v.dump());
    return bytes;
  }

  // Seconds as a JSON number (fractions allowed), converted to nanoseconds.
  sim::Time seconds(const json& v, const std::string& p, bool positive) const {
    if (!v.is_number()) fail(p, "must be a number of seconds, got " + type_name(v));
    const double s = v.get<double>();
    if (!std::isfinite(s) || s < 0 || (positive && s == 0))
      fail(p, std::string("must be ") + (positive ? "greater than 0" : "0 or more") + ", got " +
                  v.dump());
    if (s > sim::to_seconds(kMaxScenarioDuration))
      fail(p, "must be at most " + std::to_string(kMaxScenarioDuration / sim::kSecond) +
                  " s (10 years), got " + v.dump());
    return static_cast<sim::Time>(std::llround(s * 1e9));
  }

  // An IOPS value of a QoS setting: an integer 0..kMaxIops.
  std::int64_t iops(const json& v, const std::string& p) const {
    return integer(v, p, 0, controller::kMaxIops);
  }
  // The same, or null (clear the value) in a change.
  QosChange iops_change(const json& obj, const std::string& path, std::string_view key) const {
    if (!obj.contains(std::string(key))) return std::nullopt;
    const json& v = obj.at(std::string(key));
    if (v.is_null()) return std::optional<std::int64_t>();
    return std::optional<std::int64_t>(iops(v, join(path, key)));
  }

  Id controller_id(const json& v, const std::string& p) const {
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "A") return 1;
      if (s == "B") return 2;
    } else if (v.is_number_integer() &&
               (v.get<std::int64_t>() == 1 || v.get<std::int64_t>() == 2)) {
      return v.get<std::int64_t>();
    }
    fail(p, "must be 1 or 2 (or \"A\" or \"B\"), got " + v.dump());
  }

  template <typename T, typename Parse>
  T choice(const json& obj, const std::string& path, std::string_view key, Parse parse,
           const std::vector<std::string>& names) const {
    const std::string s = text(obj, path, key);
    auto parsed = parse(s);
    if (!parsed)
      fail(join(path, key), "must be one of " + list_of(names) + ", got " + in_quotes(s));
    return *parsed;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

std::optional<raid::RaidType> volume_raid_type(std::string_view s) {
  if (s == "RAID10") return raid::RaidType::kRaid10;
  if (s == "RAID5") return raid::RaidType::kRaid5;
  return std::nullopt;
}
const std::vector<std::string> kRaidNames = {"RAID10", "RAID5"};
const std::vector<std::string> kProvisioningNames = {"thin", "fixed"};

// --- JSON text --------------------------------------------------------------------------

// Parses with comments allowed, refusing duplicate keys and nesting deeper than
// kMaxScenarioJsonDepth (config/json_text.h).
json parse_json(std::string_view text, const Reader& r) {
  config::JsonParseOptions options;
  options.max_depth = kMaxScenarioJsonDepth;
  options.allow_comments = true;
  config::JsonParseError error;
  auto parsed = config::parse_json_strict(text, options, &error);
  if (parsed.is_ok()) return std::move(parsed).value();
  if (error.kind == config::JsonParseError::Kind::kSyntax)
    throw LoadError(r.file() + ": invalid JSON: " + error.message);
  r.fail(error.path, error.message);
}

// --- sections ---------------------------------------------------------------------------

struct Loader {
  const Reader& r;
  const config::Catalog& catalog;
  const ScenarioFileReader& read_file;
  Scenario& s;

  void top(const json& j);
  void options(const json& o, const std::string& path);
  void policies(const json& list);
  void volumes(const json& list);
  void workloads(const json& list);
  void timeline(const json& list);
  void report(const json& o, const std::string& path);
  void wear(const json& o, const std::string& path);

  ScenarioWorkload workload(const json& w, const std::string& path);
  std::string inline_job_text(const json& v, const std::string& path) const;
  TimelineAction action(const json& a, const std::string& path);
  void fault(const json& f, const std::string& path, controller::FaultSpec& out);
  void set_volume(const json& v, const std::string& path, VolumeChange& out);
  void set_policy(const json& v, const std::string& path, PolicyChange& out);

  void check_times() const;
  std::set<std::string> volume_names() const;
  bool has_policy(const std::string& name) const {
    return std::any_of(s.qos_policies.begin(), s.qos_policies.end(),
                       [&](const ScenarioQosPolicy& p) { return p.spec.name == name; });
  }
};

void Loader::top(const json& j) {
  r.object(j, "",
           {"schema", "name", "description", "system", "seed", "duration_s", "options",
            "qos_policies", "volumes", "workloads", "timeline", "report", "wear"});
  const std::string schema = r.required_text(j, "", "schema");
  if (schema != kScenarioSchema)
    r.fail("schema", "expected \"" + std::string(kScenarioSchema) + "\", got " + in_quotes(schema));
  s.name = r.required_text(j, "", "name", kMaxScenarioNameChars);
  if (j.contains("description")) s.description = r.text(j, "", "description");
  std::string system = config::Catalog::kDefaultSystem;
  if (j.contains("system")) system = r.text(j, "", "system");
  auto preset = catalog.system(system);
  if (!preset.is_ok()) r.fail("system", preset.status().message());
  s.system = *preset;
  if (j.contains("seed")) {
    const json& v = j.at("seed");
    if (!v.is_number_unsigned()) r.fail("seed", "must be an integer 0 to 2^64-1, got " + v.dump());
    s.seed = v.get<std::uint64_t>();
  }
  if (j.contains("duration_s")) s.duration_ns = r.seconds(j.at("duration_s"), "duration_s", true);
  if (j.contains("options")) options(j.at("options"), "options");
  if (j.contains("report")) report(j.at("report"), "report");
  if (j.contains("wear")) wear(j.at("wear"), "wear");
  if (j.contains("qos_policies")) policies(r.array(j, "", "qos_policies"));
  if (j.contains("volumes")) volumes(r.array(j, "", "volumes"));
  if (j.contains("workloads")) workloads(r.array(j, "", "workloads"));
  if (j.contains("timeline")) timeline(r.array(j, "", "timeline"));
  check_times();
}

void Loader::options(const json& o, const std::string& path) {
  r.object(o, path,
           {"payload", "rebuild_bytes_per_second", "raid5_data_members", "raid10_pairs",
            "strip_bytes", "preconditioned", "qos_scheduler", "write_cache", "write_back", "scrub",
            "scrub_bytes_per_second"});
  controller::DataPathOptions& d = s.array_options.data_path;
  if (o.contains("payload")) {
    const std::string p = r.text(o, path, "payload");
    if (p == "none")
      d.payload = datapac::PayloadKind::kNone;
    else if (p == "memory")
      d.payload = datapac::PayloadKind::kMemory;
    else
      r.fail(join(path, "payload"),
             "must be \"none\" or \"memory\" (a scenario keeps no files), got " + in_quotes(p));
  }
  if (o.contains("rebuild_bytes_per_second"))
    d.rebuild_bytes_per_second =
        r.size(o.at("rebuild_bytes_per_second"), join(path, "rebuild_bytes_per_second"), 1, true);
  if (o.contains("raid5_data_members"))
    d.raid5_data_members = static_cast<int>(r.integer(
        o.at("raid5_data_members"), join(path, "raid5_data_members"), 2, pool::kMaxMembers - 1));
  if (o.contains("raid10_pairs"))
    d.raid10_pairs = static_cast<int>(
        r.integer(o.at("raid10_pairs"), join(path, "raid10_pairs"), 1, pool::kMaxMembers / 2));
  if (o.contains("strip_bytes"))
    d.strip_bytes = r.size(o.at("strip_bytes"), join(path, "strip_bytes"), 4096);
  if (o.contains("preconditioned")) d.preconditioned = r.boolean(o, path, "preconditioned");
  if (o.contains("qos_scheduler")) s.array_options.qos.enabled = r.boolean(o, path, "qos_scheduler");
  if (o.contains("write_cache")) {
    d.cache.write_cache_bytes = r.size(o.at("write_cache"), join(path, "write_cache"), 1 << 20);
    // The cache and the mirror of the peer's both live in the controller's DRAM.
    const std::int64_t dram = s.system.controllers.dram_bytes;
    if (d.cache.write_cache_bytes > dram / 2)
      r.fail(join(path, "write_cache"),
             "must be at most half of a controller's DRAM (" + std::to_string(dram / 2) +
                 " bytes of " + std::to_string(dram) +
                 ": the cache and the mirror of the peer's both live there), got " +
                 std::to_string(d.cache.write_cache_bytes) + " bytes");
  }
  if (o.contains("write_back")) d.cache.write_back = r.boolean(o, path, "write_back");
  // The background scrub (docs/raid.md "Scrub"): on/off and its rate.
  if (o.contains("scrub")) d.scrub.enabled = r.boolean(o, path, "scrub");
  if (o.contains("scrub_bytes_per_second"))
    d.scrub.bytes_per_second =
        r.size(o.at("scrub_bytes_per_second"), join(path, "scrub_bytes_per_second"), 1, true);
}

void Loader::wear(const json& o, const std::string& path) {
  r.object(o, path,
           {"policy", "stagger_gap_points", "threshold_points", "move_bytes_per_second", "fast_forward",
            "sample_every_s"});
  controller::WearLevelingOptions& w = s.array_options.wear;
  if (o.contains("policy")) {
    auto p = pool::parse_wear_policy(r.text(o, path, "policy"));
    if (!p.is_ok()) r.fail(join(path, "policy"), p.status().message());
    w.policy = *p;
  }
  auto points = [&](const char* key, double lo, double hi) {
    const json& v = o.at(key);
    if (!v.is_number() || !(v.get<double>() > lo && v.get<double>() <= hi))
      r.fail(join(path, key), "must be a number in (" + std::to_string(static_cast<int>(lo)) + ", " +
                                  std::to_string(static_cast<int>(hi)) + "], got " +
                                  v.dump());
    return v.get<double>();
  };
  if (o.contains("stagger_gap_points")) {
    if (w.policy != pool::WearPolicy::kStaggered)
      r.fail(join(path, "stagger_gap_points"), "applies to policy \"staggered\" only");
    w.stagger_gap_points = points("stagger_gap_points", 0, 90);
  }
  if (o.contains("threshold_points")) w.threshold_points = points("threshold_points", 0, 50);
  if (o.contains("move_bytes_per_second"))
    w.move_bytes_per_second =
        r.size(o.at("move_bytes_per_second"), join(path, "move_bytes_per_second"), 1, true);
  if (o.contains("sample_every_s"))
    s.wear.sample_every_ns = r.seconds(o.at("sample_every_s"), join(path, "sample_every_s"), true);
  if (o.contains("fast_forward")) {
    const json& f = o.at("fast_forward");
    const std::string fp = join(path, "fast_forward");
    r.object(f, fp, {"until_s", "epoch_s", "measure_from_s"});
    if (!f.contains("until_s")) r.fail(join(fp, "until_s"), "missing");
    s.wear.fast_forward = true;
    s.wear.until_ns = r.seconds(f.at("until_s"), join(fp, "until_s"), true);
    if (f.contains("epoch_s")) s.wear.epoch_ns = r.seconds(f.at("epoch_s"), join(fp, "epoch_s"), true);
    if (f.contains("measure_from_s"))
      s.wear.measure_from_ns = r.seconds(f.at("measure_from_s"), join(fp, "measure_from_s"), false);
  }
}

void Loader::report(const json& o, const std::string& path) {
  r.object(o, path, {"interval_ms"});
  if (o.contains("interval_ms")) {
    const std::int64_t ms = r.integer(o.at("interval_ms"), join(path, "interval_ms"),
                                      kMinReportInterval / sim::kMillisecond, 3'600'000);
    s.interval_ns = ms * sim::kMillisecond;
  }
}

void Loader::policies(const json& list) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = at_index("qos_policies", i);
    const json& p = list[i];
    r.object(p, path, {"name", "min_iops", "max_iops", "burst_iops"});
    ScenarioQosPolicy q;
    q.key = path;
    q.spec.name = r.required_text(p, path, "name", kMaxScenarioNameChars);
    if (has_policy(q.spec.name))
      r.fail(join(path, "name"), "duplicate QoS policy name " + in_quotes(q.spec.name));
    if (p.contains("min_iops"))
      q.spec.qos.min_iops = r.iops(p.at("min_iops"), join(path, "min_iops"));
    if (p.contains("max_iops"))
      q.spec.qos.max_iops = r.iops(p.at("max_iops"), join(path, "max_iops"));
    if (p.contains("burst_iops"))
      q.spec.qos.burst_iops = r.iops(p.at("burst_iops"), join(path, "burst_iops"));
    s.qos_policies.push_back(std::move(q));
  }
}

void Loader::volumes(const json& list) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = at_index("volumes", i);
    const json& v = list[i];
    r.object(v, path,
             {"name", "capacity", "raid_type", "provisioning", "preferred_controller", "min_iops",
              "max_iops", "burst_iops", "qos_policy"});
    ScenarioVolume sv;
    sv.key = path;
    controller::VolumeSpec& spec = sv.spec;
    spec.name = r.required_text(v, path, "name", kMaxScenarioNameChars);
    for (const auto& other : s.volumes)
      if (other.spec.name == spec.name)
        r.fail(join(path, "name"),
               "duplicate volume name " + in_quotes(spec.name) + " (also " + other.key + ")");
    if (!v.contains("capacity")) r.fail(join(path, "capacity"), "missing");
    spec.capacity_bytes = r.size(v.at("capacity"), join(path, "capacity"), 1);
    if (v.contains("raid_type"))
      spec.raid_type = r.choice<raid::RaidType>(v, path, "raid_type", volume_raid_type, kRaidNames);
    if (v.contains("provisioning"))
      spec.provisioning = r.choice<controller::Provisioning>(
          v, path, "provisioning", controller::parse_provisioning, kProvisioningNames);
    if (v.contains("preferred_controller"))
      spec.preferred_controller =
          r.controller_id(v.at("preferred_controller"), join(path, "preferred_controller"));
    if (v.contains("min_iops"))
      spec.qos.min_iops = r.iops(v.at("min_iops"), join(path, "min_iops"));
    if (v.contains("max_iops"))
      spec.qos.max_iops = r.iops(v.at("max_iops"), join(path, "max_iops"));
    if (v.contains("burst_iops"))
      spec.qos.burst_iops = r.iops(v.at("burst_iops"), join(path, "burst_iops"));
    if (v.contains("qos_policy")) {
      sv.qos_policy = r.text(v, path, "qos_policy");
      if (!has_policy(sv.qos_policy))
        r.fail(join(path, "qos_policy"),
               "no QoS policy named " + in_quotes(sv.qos_policy) + " in qos_policies");
    }
    s.volumes.push_back(std::move(sv));
  }
}

void Loader::workloads(const json& list) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    ScenarioWorkload w = workload(list[i], at_index("workloads", i));
    for (const auto& other : s.workloads)
      if (other.name == w.name)
        r.fail(join(w.key, "name"),
               "duplicate workload name " + in_quotes(w.name) + " (also " + other.key + ")");
    for (const auto& warning : w.file.warnings) s.warnings.push_back(w.source_key + ": " + warning);
    s.workloads.push_back(std::move(w));
  }
}

// Where a workload's fio_file is: relative to the scenario file's folder.
std::string resolve_relative(const std::string& scenario_file, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (std::filesystem::path(scenario_file).parent_path() / p).lexically_normal().string();
}

// An inline job file: one string, or an array of strings (its lines, so that line N of
// fio's messages is element N-1).
std::string Loader::inline_job_text(const json& v, const std::string& path) const {
  std::string text;
  if (v.is_string()) {
    text = v.get<std::string>();
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string())
        r.fail(at_index(path, i),
               "must be a string (a line of the job file), got " + type_name(v[i]));
      text += v[i].get<std::string>();
      text += '\n';
      if (text.size() > kMaxFileBytes) break;
    }
  } else {
    r.fail(path,
           "must be the job file's text: a string, or an array of lines; got " + type_name(v));
  }
  if (text.empty()) r.fail(path, "must not be empty");
  if (text.size() > kMaxFileBytes)
    r.fail(path, "is longer than " + std::to_string(kMaxFileBytes) + " bytes");
  return text;
}

ScenarioWorkload Loader::workload(const json& w, const std::string& path) {
  r.object(w, path, {"name", "fio", "fio_file", "start_s", "raid_type", "provisioning"});
  ScenarioWorkload out;
  out.key = path;
  out.name = r.required_text(w, path, "name", kMaxScenarioNameChars);
  const bool inline_text = w.contains("fio");
  const bool from_file = w.contains("fio_file");
  if (inline_text == from_file)
    r.fail(path, inline_text ? "has both \"fio\" and \"fio_file\"; give one"
                             : "needs \"fio\" (the job file's text) or \"fio_file\" (its path)");
  sim::Result<FioJobFile> file = sim::invalid_argument("unset");
  if (inline_text) {
    out.source_key = join(path, "fio");
    // Labelled with its key, so fio's own "FILE:LINE: OPTION: ..." reads KEY:LINE: ...
    file = parse_fio_job_file(inline_job_text(w.at("fio"), out.source_key), out.source_key);
    if (!file.is_ok()) throw LoadError(r.file() + ": " + file.status().message());
  } else {
    out.source_key = join(path, "fio_file");
    const std::string resolved = resolve_relative(r.file(), r.text(w, path, "fio_file"));
    auto text = read_file(resolved);
    if (!text.is_ok()) r.fail(out.source_key, text.status().message(), text.status().code());
    if (text->size() > kMaxFileBytes)
      r.fail(out.source_key,
             resolved + " is larger than " + std::to_string(kMaxFileBytes) + " bytes");
    file = parse_fio_job_file(*text, resolved);
    if (!file.is_ok()) r.fail(out.source_key, file.status().message());
  }
  out.file = std::move(file).value();
  if (w.contains("start_s"))
    out.start_ns = r.seconds(w.at("start_s"), join(path, "start_s"), false);
  if (w.contains("raid_type"))
    out.raid_type = r.choice<raid::RaidType>(w, path, "raid_type", volume_raid_type, kRaidNames);
  if (w.contains("provisioning"))
    out.provisioning = r.choice<controller::Provisioning>(
        w, path, "provisioning", controller::parse_provisioning, kProvisioningNames);
  return out;
}

std::set<std::string> Loader::volume_names() const {
  std::set<std::string> names;
  for (const auto& v : s.volumes) names.insert(v.spec.name);
  for (const auto& w : s.workloads)
    for (const auto& v : w.file.volumes) names.insert(v.name);
  return names;
}

void Loader::timeline(const json& list) {
  for (std::size_t i = 0; i < list.size(); ++i)
    s.timeline.push_back(action(list[i], at_index("timeline", i)));
}

TimelineAction Loader::action(const json& a, const std::string& path) {
  r.object(a, path, {"at_s", "note", "fault", "set_volume", "set_qos_policy"});
  TimelineAction t;
  t.key = path;
  if (!a.contains("at_s")) r.fail(join(path, "at_s"), "missing");
  t.at_ns = r.seconds(a.at("at_s"), join(path, "at_s"), false);
  if (a.contains("note")) t.note = r.text(a, path, "note");
  const int kinds = a.contains("fault") + a.contains("set_volume") + a.contains("set_qos_policy");
  if (kinds != 1)
    r.fail(path, kinds == 0 ? "needs one action: \"fault\", \"set_volume\" or \"set_qos_policy\""
                            : "has more than one action; give one per entry");
  if (a.contains("fault")) {
    t.kind = TimelineActionKind::kFault;
    t.action_key = join(path, "fault");
    fault(a.at("fault"), t.action_key, t.fault);
  } else if (a.contains("set_volume")) {
    t.kind = TimelineActionKind::kSetVolume;
    t.action_key = join(path, "set_volume");
    set_volume(a.at("set_volume"), t.action_key, t.volume_change);
  } else {
    t.kind = TimelineActionKind::kSetQosPolicy;
    t.action_key = join(path, "set_qos_policy");
    set_policy(a.at("set_qos_policy"), t.action_key, t.policy_change);
  }
  return t;
}

void Loader::fault(const json& f, const std::string& path, controller::FaultSpec& out) {
  r.object(f, path, {"type", "drive", "latency_multiplier", "controller"});
  out.type = r.required_text(f, path, "type", 64);
  // The type takes exactly the fields controller::kFaultTypes gives it, as in the API.
  const controller::FaultTypeInfo* known = controller::find_fault_type(out.type);
  if (known == nullptr)
    r.fail(join(path, "type"), "unknown fault type " + in_quotes(out.type) +
                                   " (known: " + controller::fault_type_names() + ")");
  const unsigned fields = known->fields;
  if (f.contains("drive")) {
    if (!(fields & controller::kFaultDrive))
      r.fail(join(path, "drive"), "does not apply to " + out.type);
    const std::int64_t drives = s.system.drive_count();
    const json& d = f.at("drive");
    if (!d.is_number_integer())
      r.fail(join(path, "drive"), "must be a drive id (an integer), got " + type_name(d));
    // nlohmann holds every non-negative integer as unsigned, negative ones as signed.
    if (!d.is_number_unsigned() || d.get<std::uint64_t>() < 1 ||
        d.get<std::uint64_t>() > static_cast<std::uint64_t>(drives))
      r.fail(join(path, "drive"), "no drive " + d.dump() + " (the " + s.system.name +
                                      " has drives 1 to " + std::to_string(drives) + ")");
    out.drive = d.get<std::int64_t>();
  } else if (fields & controller::kFaultDrive) {
    r.fail(join(path, "drive"), "missing (" + out.type + " needs the drive's id)");
  }
  if (f.contains("latency_multiplier")) {
    const std::string p = join(path, "latency_multiplier");
    if (!(fields & controller::kFaultLatencyMultiplier)) r.fail(p, "does not apply to " + out.type);
    const json& m = f.at("latency_multiplier");
    if (!m.is_number()) r.fail(p, "must be a number, got " + type_name(m));
    out.latency_multiplier = m.get<double>();
    if (!(out.latency_multiplier >= controller::DataPath::kLatencyMultiplierMin &&
          out.latency_multiplier <= controller::DataPath::kLatencyMultiplierMax))
      r.fail(p, "must be 1 to 1000, got " + m.dump());
  } else if (fields & controller::kFaultLatencyMultiplier) {
    r.fail(join(path, "latency_multiplier"), "missing (" + out.type + " needs it)");
  }
  if (f.contains("controller")) {
    const std::string p = join(path, "controller");
    if (!(fields & controller::kFaultController)) r.fail(p, "does not apply to " + out.type);
    out.controller = r.controller_id(f.at("controller"), p);  // 1/2 or "A"/"B", as the API
  } else if (fields & controller::kFaultController) {
    r.fail(join(path, "controller"), "missing (" + out.type + " needs the controller: 1 or 2)");
  }
}

void Loader::set_volume(const json& v, const std::string& path, VolumeChange& out) {
  r.object(v, path,
           {"volume", "min_iops", "max_iops", "burst_iops", "qos_policy", "preferred_controller",
            "capacity"});
  out.volume = r.required_text(v, path, "volume", kMaxScenarioNameChars);
  if (!volume_names().count(out.volume))
    r.fail(join(path, "volume"), "no volume named " + in_quotes(out.volume) +
                                     " in volumes or in the workloads' filename=");
  out.min_iops = r.iops_change(v, path, "min_iops");
  out.max_iops = r.iops_change(v, path, "max_iops");
  out.burst_iops = r.iops_change(v, path, "burst_iops");
  if (v.contains("qos_policy")) {
    if (v.at("qos_policy").is_null()) {
      out.qos_policy = std::optional<std::string>();
    } else {
      const std::string name = r.text(v, path, "qos_policy");
      if (!has_policy(name))
        r.fail(join(path, "qos_policy"),
               "no QoS policy named " + in_quotes(name) + " in qos_policies");
      out.qos_policy = std::optional<std::string>(name);
    }
  }
  if (v.contains("preferred_controller"))
    out.preferred_controller =
        r.controller_id(v.at("preferred_controller"), join(path, "preferred_controller"));
  if (v.contains("capacity"))
    out.capacity_bytes = r.size(v.at("capacity"), join(path, "capacity"), 1);
  if (v.size() == 1)
    r.fail(path, "changes nothing; give at least one value to set besides \"volume\"");
}

void Loader::set_policy(const json& v, const std::string& path, PolicyChange& out) {
  r.object(v, path, {"policy", "min_iops", "max_iops", "burst_iops"});
  out.policy = r.required_text(v, path, "policy", kMaxScenarioNameChars);
  if (!has_policy(out.policy))
    r.fail(join(path, "policy"),
           "no QoS policy named " + in_quotes(out.policy) + " in qos_policies");
  out.min_iops = r.iops_change(v, path, "min_iops");
  out.max_iops = r.iops_change(v, path, "max_iops");
  out.burst_iops = r.iops_change(v, path, "burst_iops");
  if (v.size() == 1)
    r.fail(path, "changes nothing; give at least one value to set besides \"policy\"");
}

// Times against the duration and the number of timeline rows it gives.
void Loader::check_times() const {
  if (s.wear.fast_forward) {
    if (!s.duration_ns)
      r.fail("wear.fast_forward", "needs duration_s: the per-I/O run that measures the write rates");
    if (s.wear.until_ns <= *s.duration_ns)
      r.fail("wear.fast_forward.until_s", "must be after duration_s");
    if (s.wear.measure_from_ns >= *s.duration_ns)
      r.fail("wear.fast_forward.measure_from_s", "must be before duration_s");
    if (s.wear.epoch_ns > s.wear.until_ns - *s.duration_ns)
      r.fail("wear.fast_forward.epoch_s", "is longer than the fast-forward itself");
    if ((s.wear.until_ns - *s.duration_ns) / s.wear.epoch_ns > kMaxFastForwardEpochs)
      r.fail("wear.fast_forward.epoch_s", "gives more than " + std::to_string(kMaxFastForwardEpochs) +
                                              " epochs; raise it");
  }
  if (!s.duration_ns) return;
  const sim::Time d = *s.duration_ns;
  const std::int64_t rows = (d + s.interval_ns - 1) / s.interval_ns;
  if (rows > kMaxTimelineRows)
    r.fail("duration_s", "gives " + std::to_string(rows) + " timeline rows at report.interval_ms " +
                             std::to_string(s.interval_ns / sim::kMillisecond) + "; at most " +
                             std::to_string(kMaxTimelineRows) + " (raise the interval)");
  for (const auto& w : s.workloads)
    if (w.start_ns >= d)
      r.fail(join(w.key, "start_s"), "is not before duration_s; the workload would never run");
  // With fast-forward, actions may also fall in it (a drive replaced in year two).
  const sim::Time last = s.wear.fast_forward ? s.wear.until_ns : d;
  for (const auto& t : s.timeline)
    if (t.at_ns >= last)
      r.fail(join(t.key, "at_s"), s.wear.fast_forward
                                      ? "is not before wear.fast_forward.until_s; the action would never run"
                                      : "is not before duration_s; the action would never run");
}

std::string format_iops_change(const char* name, const QosChange& c) {
  if (!c) return "";
  return std::string(" ") + name + "=" + (*c ? std::to_string(**c) : "none");
}

}  // namespace

std::string TimelineAction::describe() const {
  std::ostringstream os;
  switch (kind) {
    case TimelineActionKind::kFault:
      os << "fault " << fault.type;
      if (fault.drive != 0) os << " drive " << fault.drive;
      if (fault.type == "drive_slow" || fault.latency_multiplier != 1.0)
        os << " latency x" << fault.latency_multiplier;
      break;
    case TimelineActionKind::kSetVolume: {
      const VolumeChange& c = volume_change;
      os << "set_volume " << c.volume << format_iops_change("min_iops", c.min_iops)
         << format_iops_change("max_iops", c.max_iops)
         << format_iops_change("burst_iops", c.burst_iops);
      if (c.qos_policy) os << " qos_policy=" << (*c.qos_policy ? **c.qos_policy : "none");
      if (c.preferred_controller)
        os << " preferred_controller=" << (*c.preferred_controller == 1 ? "A" : "B");
      if (c.capacity_bytes) os << " capacity=" << *c.capacity_bytes;
      break;
    }
    case TimelineActionKind::kSetQosPolicy: {
      const PolicyChange& c = policy_change;
      os << "set_qos_policy " << c.policy << format_iops_change("min_iops", c.min_iops)
         << format_iops_change("max_iops", c.max_iops)
         << format_iops_change("burst_iops", c.burst_iops);
      break;
    }
  }
  return os.str();
}

sim::Result<Scenario> parse_scenario(std::string_view text, const std::string& file_name,
                                     const config::Catalog& catalog,
                                     const ScenarioFileReader& read_file) {
  Scenario s;
  s.file_name = file_name;
  const Reader r(file_name);
  try {
    if (text.size() > kMaxScenarioFileBytes)
      throw LoadError(file_name + ": larger than " + std::to_string(kMaxScenarioFileBytes) +
                      " bytes");
    const json j = parse_json(text, r);
    Loader{r, catalog, read_file, s}.top(j);
  } catch (const LoadError& e) {
    return sim::Status(e.code, e.what());
  } catch (const json::exception& e) {  // a path the checks above missed: still no crash
    return sim::invalid_argument(file_name + ": " + e.what());
  }
  return s;
}

namespace {

sim::Result<std::string> read_disk_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return sim::not_found("cannot read " + path);
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxScenarioFileBytes)  // stop reading; the caller refuses the size
      break;
  }
  if (in.bad()) return sim::io_error("cannot read " + path);
  return text;
}

constexpr std::string_view kEmbeddedPrefix = "config/";

}  // namespace

sim::Result<Scenario> load_scenario_file(const std::string& path, const config::Catalog& catalog) {
  auto text = read_disk_file(path);
  if (!text.is_ok()) return text.status();
  return parse_scenario(*text, path, catalog, read_disk_file);
}

sim::Result<Scenario> load_embedded_scenario(const std::string& name,
                                             const config::Catalog& catalog) {
  std::string base = name;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0)
    base.resize(base.size() - 5);
  const auto& files = config::embedded_files();
  auto it = files.find("scenarios/" + base + ".json");
  if (it == files.end())
    return sim::not_found("no built-in scenario " + in_quotes(name) +
                          " (built in: " + list_of(embedded_scenario_names()) + ")");
  // Messages name the file as it sits in the source tree; fio_file paths resolve among
  // the embedded files the same way.
  const ScenarioFileReader reader = [&files](const std::string& path) -> sim::Result<std::string> {
    if (path.rfind(kEmbeddedPrefix, 0) == 0)
      if (auto f = files.find(path.substr(kEmbeddedPrefix.size())); f != files.end())
        return f->second;
    return sim::not_found("no built-in file " + path);
  };
  return parse_scenario(it->second, std::string(kEmbeddedPrefix) + it->first, catalog, reader);
}

std::vector<std::string> embedded_scenario_names() {
  std::vector<std::string> names;
  for (const auto& [path, text] : config::embedded_files())
    if (path.rfind("scenarios/", 0) == 0 && path.size() > 15 &&
        path.compare(path.size() - 5, 5, ".json") == 0)
      names.push_back(path.substr(10, path.size() - 15));
  return names;
}

}  // namespace afasim::workload
