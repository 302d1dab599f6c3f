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
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "config/file_text.h"
#include "config/json_text.h"
#include "config/size.h"
#include "datapac/payload.h"
#include "workload/scenario_loader.h"


namespace afasim::workload {
namespace scenario_detail {

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

void Loader::top(const json& j) {
  // The schema before the keys (config::schema_hint).
  if (j.is_object() && j.contains("schema") && j.at("schema").is_string() && j.at("schema") != kScenarioSchema) {
    const std::string schema = j.at("schema").get<std::string>();
    r.fail("schema", "expected \"" + std::string(kScenarioSchema) + "\", got " + in_quotes(schema) + config::schema_hint(schema));
  }
  r.object(j, "",
           {"schema", "name", "description", "system", "seed", "duration_s", "options",
            "qos_policies", "volumes", "workloads", "timeline", "report", "wear"});
  r.required_text(j, "", "schema");
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
            "strip_bytes", "preconditioned", "qos_scheduler", "write_cache", "write_back", "destage_age_s", "scrub",
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
  if (o.contains("destage_age_s")) {
    // As serve's --destage-age: 0 (never) to an hour.
    d.cache.destage_age_ns = r.seconds(o.at("destage_age_s"), join(path, "destage_age_s"), false);
    if (d.cache.destage_age_ns > sim::kHour)
      r.fail(join(path, "destage_age_s"), "must be at most 3600 (an hour), got " + o.at("destage_age_s").dump());
    if (d.cache.destage_age_ns == 0 && o.at("destage_age_s").get<double>() > 0) d.cache.destage_age_ns = 1;
  }
  // The background scrub (docs/raid.md "Scrub"): on/off and its rate.
  if (o.contains("scrub")) d.scrub.enabled = r.boolean(o, path, "scrub");
  if (o.contains("scrub_bytes_per_second")) {
    d.scrub.bytes_per_second =
        r.size(o.at("scrub_bytes_per_second"), join(path, "scrub_bytes_per_second"), 1, true);
    // A warning, not an error: a sweep may turn the scrub off in some points (hostile round 44:
    // ignored without a word).
    if (!d.scrub.enabled)
      s.warnings.push_back(r.file() + ": " + join(path, "scrub_bytes_per_second") +
                           ": the scrub is off (\"scrub\": true turns it on): this rate changes nothing");
  }
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
  if (o.contains("sample_every_s") && !o.contains("fast_forward"))
    s.warnings.push_back(r.file() + ": " + join(path, "sample_every_s") +
                         ": wear is sampled during a fast_forward only, and this scenario has none: it changes nothing");
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
    // fio's notes too: a synchronous engine's iodepth capped at 1 ran without a word (re-test
    // of hostile review 43).
    for (const auto& note : w.file.notes) s.warnings.push_back(w.source_key + ": " + note);
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
      const std::string& line = v[i].get_ref<const std::string&>();
      // One element, one line: fio's messages number lines, and a line break inside an
      // element would move every later element's number (line N is element N-1).
      if (line.find_first_of("\n\r") != std::string::npos)
        r.fail(at_index(path, i),
               "must be one line of the job file, without a line break; give each line its own "
               "element, or the whole job file as one string");
      text += line;
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
  // A job without size= covers a volume `volumes` declares (hostile round 44: it was refused,
  // pointing at afasim fio's --volume-size, which run does not have).
  FioParseOptions options;
  for (const ScenarioVolume& v : s.volumes) options.declared_volume_bytes[v.spec.name] = v.spec.capacity_bytes;
  if (inline_text) {
    out.source_key = join(path, "fio");
    // Labelled with its key, so fio's own "FILE:LINE: OPTION: ..." reads KEY:LINE: ...
    file = parse_fio_job_file(inline_job_text(w.at("fio"), out.source_key), out.source_key, options);
    if (!file.is_ok()) throw LoadError(r.file() + ": " + file.status().message());
  } else {
    out.source_key = join(path, "fio_file");
    const std::string resolved = resolve_relative(r.file(), r.text(w, path, "fio_file"));
    auto text = read_file(resolved);
    if (!text.is_ok()) r.fail(out.source_key, text.status().message(), text.status().code());
    if (text->size() > kMaxFileBytes)
      r.fail(out.source_key,
             resolved + " is larger than " + std::to_string(kMaxFileBytes) + " bytes");
    file = parse_fio_job_file(*text, resolved, options);
    if (!file.is_ok()) r.fail(out.source_key, file.status().message());
  }
  out.file = std::move(file).value();
  // A relative read_iolog= is the scenario's, as fio_file is: beside the file it is written in
  // (the scenario's folder for inline lines, the job file's for fio_file), so that a scenario
  // and every sweep run of it reads the same trace from any current folder. "-" (standard
  // input) stays as it is.
  const std::string& written_in = inline_text ? r.file() : out.file.file_name;
  for (FioJob& j : out.file.jobs)
    if (!j.read_iolog.empty() && j.read_iolog != "-")
      j.read_iolog = resolve_relative(written_in, j.read_iolog);
  if (w.contains("start_s"))
    out.start_ns = r.seconds(w.at("start_s"), join(path, "start_s"), false);
  if (w.contains("raid_type"))
    out.raid_type = r.choice<raid::RaidType>(w, path, "raid_type", volume_raid_type, kRaidNames);
  if (w.contains("provisioning"))
    out.provisioning = r.choice<controller::Provisioning>(
        w, path, "provisioning", controller::parse_provisioning, kProvisioningNames);
  // They make the volumes `volumes` does not declare (hostile round 44: ignored without a word
  // when it declares every one).
  const bool all_declared = std::all_of(out.file.volumes.begin(), out.file.volumes.end(), [&](const FioVolume& v) {
    return std::any_of(s.volumes.begin(), s.volumes.end(), [&](const ScenarioVolume& d) { return d.spec.name == v.name; });
  });
  for (const char* key : {"raid_type", "provisioning"})
    if (w.contains(key) && all_declared)
      s.warnings.push_back(r.file() + ": " + join(path, key) +
                           ": every volume its jobs use is declared in volumes, with its own; this changes nothing");
  return out;
}

std::set<std::string> Loader::volume_names() const {
  std::set<std::string> names;
  for (const auto& v : s.volumes) names.insert(v.spec.name);
  for (const auto& w : s.workloads)
    for (const auto& v : w.file.volumes) names.insert(v.name);
  return names;
}

}  // namespace scenario_detail

using namespace scenario_detail;

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
  return config::read_file_text(path, kMaxScenarioFileBytes);  // the loader refuses the size
}

constexpr std::string_view kEmbeddedPrefix = "config/";

}  // namespace

sim::Result<ScenarioSource> read_scenario_file(const std::string& path) {
  auto text = read_disk_file(path);
  if (!text.is_ok()) return text.status();
  return ScenarioSource{std::move(text).value(), path, read_disk_file};
}

sim::Result<ScenarioSource> read_embedded_scenario(const std::string& name) {
  std::string base = name;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0)
    base.resize(base.size() - 5);
  const auto& files = config::embedded_files();
  // Built-in reliability scenarios (config/reliability/, docs/reliability.md) are found
  // the same way; their loader is reliability/.
  auto it = files.find("scenarios/" + base + ".json");
  if (it == files.end()) it = files.find("reliability/" + base + ".json");
  if (it == files.end()) {
    std::vector<std::string> names = embedded_scenario_names();
    for (std::string& n : config::embedded_json_names("reliability")) names.push_back(std::move(n));
    return sim::not_found("no built-in scenario " + in_quotes(name) + " (built in: " + list_of(names) + ")");
  }
  // Messages name the file as it sits in the source tree; fio_file paths resolve among
  // the embedded files the same way.
  // The reader outlives this call: it holds the (static) map itself, not the reference.
  const ScenarioFileReader reader = [all = &files](const std::string& path) -> sim::Result<std::string> {
    if (path.rfind(kEmbeddedPrefix, 0) == 0)
      if (auto f = all->find(path.substr(kEmbeddedPrefix.size())); f != all->end())
        return f->second;
    return sim::not_found("no built-in file " + path);
  };
  return ScenarioSource{it->second, std::string(kEmbeddedPrefix) + it->first, reader};
}

sim::Result<ScenarioSource> read_scenario_source(const std::string& path_or_name) {
  std::error_code ec;
  // A folder of the same name in the current one is no scenario: the name is the built-in's,
  // if there is one (hostile round 24, for sweeps).
  const bool folder = std::filesystem::is_directory(path_or_name, ec);
  if ((std::filesystem::exists(path_or_name, ec) && !folder) || path_or_name.find('/') != std::string::npos)
    return read_scenario_file(path_or_name);
  auto embedded = read_embedded_scenario(path_or_name);
  if (folder && !embedded.is_ok()) return read_scenario_file(path_or_name);  // "a directory"
  if (embedded.is_ok() || embedded.status().code() != sim::Code::kNotFound) return embedded;
  return sim::not_found("cannot read " + path_or_name + ", and " + embedded.status().message());
}

std::string resolve_scenario_reference(const std::string& reference, const std::string& referring_file) {
  const std::filesystem::path ref(reference);
  const std::filesystem::path folder = std::filesystem::path(referring_file).parent_path();
  if (ref.is_absolute() || folder.empty()) return reference;
  const std::filesystem::path candidate = folder / ref;
  std::error_code ec;
  if (std::filesystem::exists(candidate, ec) || reference.find('/') != std::string::npos) return candidate.string();
  return reference;
}

sim::Result<Scenario> parse_scenario_source(const ScenarioSource& source, const config::Catalog& catalog) {
  return parse_scenario(source.text, source.file_name, catalog, source.read_file);
}

std::vector<std::string> scenario_input_files(const Scenario& s) {
  std::vector<std::string> inputs;
  for (const ScenarioWorkload& w : s.workloads) {
    if (w.source_key.ends_with(".fio_file")) inputs.push_back(w.file.file_name);
    for (std::string& f : fio_referenced_files(w.file)) inputs.push_back(std::move(f));
  }
  return inputs;
}

sim::Result<Scenario> load_scenario_file(const std::string& path, const config::Catalog& catalog) {
  auto source = read_scenario_file(path);
  if (!source.is_ok()) return source.status();
  return parse_scenario_source(*source, catalog);
}

sim::Result<Scenario> load_embedded_scenario(const std::string& name,
                                             const config::Catalog& catalog) {
  auto source = read_embedded_scenario(name);
  if (!source.is_ok()) return source.status();
  return parse_scenario_source(*source, catalog);
}

std::vector<std::string> embedded_scenario_names() { return config::embedded_json_names("scenarios"); }

}  // namespace afasim::workload
