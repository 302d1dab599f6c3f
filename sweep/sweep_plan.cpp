#include "sweep/sweep_plan.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "perf/calibration.h"

#include "config/json_text.h"

namespace afasim::sweep {
namespace {

std::uint64_t fnv1a(std::uint64_t h, const std::string& bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;  // the 64-bit FNV prime (FNV-1a, Fowler/Noll/Vo)
  }
  return h;
}

constexpr std::uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ULL;  // 64-bit FNV-1a's

// 16 hex digits.
std::string hex(std::uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::string fingerprint_of(const SweepPlan& plan, const std::string& inputs) {
  std::uint64_t h = fnv1a(kFnvOffsetBasis, plan.base.text);
  h = fnv1a(h, inputs);
  for (const FieldValue& f : plan.file.set) h = fnv1a(h, "set " + f.pointer.text + "=" + f.value.dump());
  for (const SweepPoint& p : plan.file.points) {
    h = fnv1a(h, "point");
    for (const FieldValue& f : p.fields) h = fnv1a(h, " " + f.pointer.text + "=" + f.value.dump());
  }
  return hex(h);
}

// The files a catalog of `dir` reads (Catalog::from_directory: sources.json and the JSON under
// systems/, ssds/, models/, devices/) and the performance model's calibration/, as "path\n"
// and the content's FNV-1a, in path order. Other folders (workloads/, scenarios/, a sweep's
// --out) are not presets.
std::string config_dir_contents(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), dir, ec).generic_string();
    const bool preset = rel == "sources.json" || rel.starts_with("systems/") || rel.starts_with("ssds/") ||
                        rel.starts_with("models/") || rel.starts_with("devices/") || rel.starts_with("calibration/");
    if (preset && it->path().extension() == ".json" && it->is_regular_file(ec)) files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  std::string out = "config-dir\n";
  for (const std::string& rel : files) {
    std::ifstream in(std::filesystem::path(dir) / rel, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    out += rel + " " + (in ? hex(fnv1a(kFnvOffsetBasis, text.str())) : "unreadable") + "\n";
  }
  return out;
}

sim::Status apply(nlohmann::json& document, const FieldValue& field, const std::string& where) {
  auto set = set_field(document, field.pointer, field.value);
  if (!set.is_ok()) return sim::invalid_argument(where + ": " + field.key + ": " + set.status().message());
  return sim::Status::ok();
}

sim::Status apply_point(nlohmann::json& document, const SweepPlan& plan, std::size_t point, bool name_point) {
  for (const FieldValue& f : plan.file.points[point].fields) {
    auto st = apply(document, f, plan.file.file_name);
    if (!st.is_ok())
      return sim::invalid_argument(st.message() + (name_point ? ", in point " + std::to_string(point) : ""));
  }
  return sim::Status::ok();
}

// The point's scenario text: the base document with `set` and the point's fields set.
sim::Result<std::string> point_text(const SweepPlan& plan, std::size_t point) {
  AFASIM_ASSERT(point < plan.file.points.size(), "a point the sweep does not have");
  nlohmann::json document = plan.document;
  AFASIM_RETURN_IF_ERROR(apply_point(document, plan, point, true));
  std::string text = config::dump_json(document);
  // The base with this point's values, not the base file, is what outgrew the bound (hostile
  // review 42: "base.json: larger than 4194304 bytes" for a 3 KB base).
  if (text.size() > workload::kMaxScenarioFileBytes)
    return sim::invalid_argument(plan.file.file_name + ": point " + std::to_string(point) + ": the base with its values is " +
                                 std::to_string(text.size()) + " bytes, larger than a scenario may be (" +
                                 std::to_string(workload::kMaxScenarioFileBytes) + ")");
  return text;
}

// A read_iolog= trace's contents, read in 1 MiB pieces (a trace may be gigabytes).
std::string trace_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unreadable";
  std::uint64_t h = kFnvOffsetBasis;
  std::string piece(1 << 20, '\0');
  while (in.read(piece.data(), static_cast<std::streamsize>(piece.size())) || in.gcount() > 0)
    h = fnv1a(h, piece.substr(0, static_cast<std::size_t>(in.gcount())));
  return hex(h);
}

// What the runs read besides the sweep and base texts: the job files (fio_file) the base and
// each point name, by content (not by path: the sweep file given as ./s.json or /tmp/s.json
// is the same sweep), and a --config-dir folder's presets. In the fingerprint, so that rows
// made before one of them was edited are not taken for this sweep's (hostile round 21: a
// resumed sweep put an edited job's rows beside the old job's), and the traces their jobs
// replay (read_iolog=, by content; review 41: an edited trace's rows joined the old one's). Each file is read once; a
// point is parsed for the files it reads only when one of its fields is under /workloads
// (the others read the base's). A point the loader refuses is the runner's to report.
std::string inputs_read(const SweepPlan& plan, const config::Catalog& catalog, std::vector<std::string>* paths) {
  std::string inputs;
  if (plan.file.kind == SweepKind::kScenario) {
    std::map<std::string, std::pair<sim::Result<std::string>, std::string>> read;  // path: text, its FNV-1a
    const workload::ScenarioFileReader record = [&](const std::string& path) {
      auto it = read.find(path);
      if (it == read.end()) {
        paths->push_back(path);
        auto text = plan.base.read_file(path);
        const std::string digest = text.is_ok() ? hex(fnv1a(kFnvOffsetBasis, *text)) : "unreadable";
        it = read.emplace(path, std::make_pair(std::move(text), digest)).first;
      }
      inputs += "file " + it->second.second + "\n";
      return it->second.first;
    };
    std::map<std::string, std::string> digests;  // trace path: its digest, each read once
    const auto traces = [&](const sim::Result<workload::Scenario>& s) {
      if (!s.is_ok()) return;
      for (const auto& w : s->workloads)
        for (const auto& j : w.file.jobs) {
          if (j.read_iolog.empty()) continue;
          auto it = digests.find(j.read_iolog);
          if (it == digests.end()) {
            paths->push_back(j.read_iolog);
            it = digests.emplace(j.read_iolog, trace_digest(j.read_iolog)).first;
          }
          inputs += "trace " + it->second + "\n";
        }
    };
    traces(workload::parse_scenario(config::dump_json(plan.document), plan.base.file_name, catalog, record));
    for (std::size_t p = 0; p < plan.file.points.size(); ++p) {
      const auto& fields = plan.file.points[p].fields;
      const bool reads_other_files = std::any_of(fields.begin(), fields.end(), [](const FieldValue& f) {
        return f.pointer.text.empty() || f.pointer.text.starts_with("/workloads");
      });
      if (!reads_other_files) continue;
      inputs += "point " + std::to_string(p) + "\n";
      if (auto text = point_text(plan, p); text.is_ok())
        traces(workload::parse_scenario(*text, plan.base.file_name, catalog, record));
    }
  }
  if (!catalog.directory().empty()) inputs += config_dir_contents(catalog.directory());
  return inputs;
}

// A field the loader does not know (`/duraton_s`: RFC 6902's "add" makes it a new member) is
// the sweep file's mistake, as a field that names nothing is: found here, before anything runs,
// by loading the first point of each set of pointers (hostile round 28: every run failed with
// the loader's "unknown key" and the sweep exited 1). A value the loader refuses stays that
// point's error, reported in its rows.
sim::Status check_point_keys(const SweepPlan& plan, const config::Catalog& catalog) {
  std::set<std::vector<std::string>> checked;
  for (std::size_t p = 0; p < plan.file.points.size(); ++p) {
    std::vector<std::string> pointers;
    for (const FieldValue& f : plan.file.points[p].fields) pointers.push_back(f.pointer.text);
    if (!checked.insert(pointers).second) continue;
    const std::uint64_t seed = plan.file.seeds.front();
    const sim::Status st = plan.file.kind == SweepKind::kScenario
                               ? point_scenario(plan, p, seed, catalog).status()
                               : point_reliability(plan, p, seed, catalog).status();
    if (st.is_ok() || st.message().find(": unknown key (expected one of: ") == std::string::npos) continue;
    std::string fields;
    for (const std::string& pointer : pointers) fields += (fields.empty() ? "" : ", ") + pointer;
    return sim::invalid_argument(plan.file.file_name + ": a field sets a key the " +
                                 (plan.file.kind == SweepKind::kScenario ? "scenario" : "reliability scenario") +
                                 " does not have (the fields of point " + std::to_string(p) + ": " +
                                 (fields.empty() ? "set only" : fields) + "): " + st.message());
  }
  return sim::Status::ok();
}

}  // namespace

sim::Result<SweepPlan> prepare_sweep(SweepFile file, const config::Catalog& catalog) {
  SweepPlan plan;
  plan.file = std::move(file);
  const std::string& name = plan.file.file_name;
  auto base = workload::read_scenario_source(workload::resolve_scenario_reference(plan.file.base, plan.file.file_name));
  if (!base.is_ok()) return sim::Status(base.status().code(), name + ": base: " + base.status().message());
  plan.base = std::move(base).value();
  // A sweep file named as the base: its keys were refused one by one as a scenario's unknown
  // keys (hostile review 42); say what it is.
  if (const auto j = nlohmann::json::parse(plan.base.text, nullptr, false);
      j.is_object() && j.contains("schema") && j["schema"] == "afasim.sweep/1")
    return sim::invalid_argument(name + ": base: " + plan.base.file_name +
                                 " is a sweep file (schema afasim.sweep/1); a base is a scenario (afasim.scenario/1 or "
                                 "a reliability scenario)");
  if (reliability::is_reliability_text(plan.base.text)) {
    plan.file.kind = SweepKind::kReliability;
    auto checked = reliability::parse_reliability(plan.base.text, plan.base.file_name, catalog);
    if (!checked.is_ok()) return sim::invalid_argument(name + ": base: " + checked.status().message());
  } else {
    auto checked = workload::parse_scenario_source(plan.base, catalog);
    if (!checked.is_ok()) return sim::invalid_argument(name + ": base: " + checked.status().message());
    // Before any run: a calibration that disagrees with its preset failed every run, one by
    // one (hostile review 42).
    if (auto cal = perf::calibration_for(checked->system, catalog.directory()); !cal.is_ok())
      return sim::invalid_argument(name + ": base: " + plan.base.file_name + ": " + cal.status().message());
  }
  config::JsonParseOptions options;
  options.allow_comments = true;  // what the loader accepted, it parses the same way
  auto document = config::parse_json_strict(plan.base.text, options);
  if (!document.is_ok()) return sim::invalid_argument(name + ": base: " + document.status().message());
  plan.document = std::move(document).value();
  for (const FieldValue& f : plan.file.set) AFASIM_RETURN_IF_ERROR(apply(plan.document, f, name));
  // A point's fields are all values of the same axes, so with axes checking the first
  // point would do, but one field's value may change the shape another walks
  // ("/volumes" then "/volumes/0/name"): every point is checked.
  for (std::size_t p = 0; p < plan.file.points.size(); ++p) {
    nlohmann::json copy = plan.document;
    AFASIM_RETURN_IF_ERROR(apply_point(copy, plan, p, plan.file.points.size() > 1));
  }
  AFASIM_RETURN_IF_ERROR(check_point_keys(plan, catalog));
  std::vector<std::string> paths;
  plan.fingerprint = fingerprint_of(plan, inputs_read(plan, catalog, &paths));
  plan.input_files = std::move(paths);
  return plan;
}

sim::Result<workload::Scenario> point_scenario(const SweepPlan& plan, std::size_t point, std::uint64_t seed,
                                               const config::Catalog& catalog) {
  AFASIM_ASSERT(plan.file.kind == SweepKind::kScenario, "point_scenario of a reliability sweep");
  auto text = point_text(plan, point);
  if (!text.is_ok()) return text.status();
  auto scenario = workload::parse_scenario(*text, plan.base.file_name, catalog, plan.base.read_file);
  if (!scenario.is_ok()) return scenario.status();
  scenario->seed = seed;
  return scenario;
}

sim::Result<reliability::ReliabilityScenario> point_reliability(const SweepPlan& plan, std::size_t point,
                                                                std::uint64_t seed, const config::Catalog& catalog) {
  AFASIM_ASSERT(plan.file.kind == SweepKind::kReliability, "point_reliability of an I/O scenario sweep");
  auto text = point_text(plan, point);
  if (!text.is_ok()) return text.status();
  auto scenario = reliability::parse_reliability(*text, plan.base.file_name, catalog);
  if (!scenario.is_ok()) return scenario.status();
  scenario->seed = seed;
  return scenario;
}

}  // namespace afasim::sweep
