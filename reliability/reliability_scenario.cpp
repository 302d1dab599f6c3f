#include "reliability/reliability_scenario.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "config/json_text.h"
#include "workload/scenario_loader.h"

namespace afasim::reliability {
namespace {

using nlohmann::json;
using workload::scenario_detail::in_quotes;
using workload::scenario_detail::join;
using workload::scenario_detail::LoadError;
using workload::scenario_detail::Reader;
using workload::scenario_detail::type_name;

// A JSON number in [lo, hi].
double number(const Reader& r, const json& obj, const std::string& path, const std::string& key, double lo, double hi) {
  const json& v = obj.at(key);
  const std::string p = join(path, key);
  if (!v.is_number()) r.fail(p, "must be a number, got " + type_name(v));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    char range[96];
    std::snprintf(range, sizeof range, "must be %g to %g, got ", lo, hi);
    r.fail(p, range + v.dump());
  }
  return d;
}

void read_model(const Reader& r, const json& m, config::ReliabilityParams& p) {
  if (!m.is_object()) r.fail("model", "must be an object, got " + type_name(m));
  std::vector<std::string> known{"drive_afr_percent", "drive_mtbf_hours"};
  for (const config::ReliabilityParamSpec& spec : config::reliability_param_specs()) known.push_back(spec.key);
  for (auto it = m.begin(); it != m.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end())
      r.fail(join("model", it.key()), "unknown key (expected one of: " + workload::scenario_detail::list_of(known) + ")");
  if (m.contains("drive_afr_percent") && m.contains("drive_mtbf_hours"))
    r.fail("model", "give drive_afr_percent or drive_mtbf_hours, not both");
  if (m.contains("drive_afr_percent"))
    p.drive_mtbf_hours = config::mtbf_hours_of_afr_percent(
        number(r, m, "model", "drive_afr_percent", config::kDriveAfrPercentMin, config::kDriveAfrPercentMax));
  if (m.contains("drive_mtbf_hours")) p.drive_mtbf_hours = number(r, m, "model", "drive_mtbf_hours", 1, 1e12);
  for (const config::ReliabilityParamSpec& spec : config::reliability_param_specs())
    if (m.contains(spec.key)) p.*spec.field = number(r, m, "model", spec.key, spec.lo, spec.hi);
}

// The value of `key` in `obj`, one of `names` (text -> value), as Reader::choice reads it.
template <typename T>
T one_of(const Reader& r, const json& obj, const std::string& path, const char* key,
         std::initializer_list<std::pair<const char*, T>> names) {
  std::vector<std::string> texts;
  for (const auto& n : names) texts.emplace_back(n.first);
  return r.choice<T>(
      obj, path, key,
      [&](const std::string& v) -> std::optional<T> {
        for (const auto& n : names)
          if (v == n.first) return n.second;
        return std::nullopt;
      },
      texts);
}

// `rebuild`: a probe scenario (read and checked here), the rate, the distribution.
void read_rebuild(const Reader& r, const json& j, ReliabilityScenario& s) {
  if (!j.contains("rebuild")) r.fail("rebuild", "missing (give a probe scenario or bytes_per_second)");
  const json& rb = j.at("rebuild");
  r.object(rb, "rebuild", {"probe", "bytes_per_second", "distribution"});
  if (rb.contains("bytes_per_second"))
    s.rebuild_bytes_per_second =
        static_cast<double>(r.size(rb.at("bytes_per_second"), "rebuild.bytes_per_second", 1, true));
  if (rb.contains("probe")) {
    const std::string probe = r.text(rb, "rebuild", "probe", 4096);
    auto source = workload::read_scenario_source(workload::resolve_scenario_reference(probe, r.file()));
    if (!source.is_ok()) r.fail("rebuild.probe", source.status().message(), source.status().code());
    if (is_reliability_text(source->text))
      r.fail("rebuild.probe", source->file_name + " is a reliability scenario; the probe is an I/O scenario with a drive_fail");
    // Only the JSON here: check_probe loads the probe as it will run, once everything it
    // takes from this file is read.
    config::JsonParseOptions options;
    options.allow_comments = true;
    auto parsed = config::parse_json_strict(source->text, options);
    if (!parsed.is_ok()) r.fail("rebuild.probe", source->file_name + ": " + parsed.status().message());
    s.probe = std::move(source).value();
  } else if (!s.rebuild_bytes_per_second) {
    r.fail("rebuild", "give a probe scenario (its rebuild is measured) or bytes_per_second (the rate)");
  }
  if (rb.contains("distribution"))
    s.repair = one_of<RepairDistribution>(r, rb, "rebuild", "distribution",
                                          {{"fixed", RepairDistribution::kFixed}, {"exponential", RepairDistribution::kExponential}});
}

// The probe as it will run (with this scenario's system, RAID type and rebuild setting) must
// load, so that a probe the loader refuses is bad input here, not a failed run later.
void check_probe(const Reader& r, const ReliabilityScenario& s, const config::Catalog& catalog) {
  const workload::ScenarioSource& probe = *s.probe;
  auto checked = workload::parse_scenario(probe_scenario_text(s), probe.file_name, catalog, probe.read_file);
  if (!checked.is_ok()) r.fail("rebuild.probe", checked.status().message());
}

void read_replacement_and_mechanisms(const Reader& r, const json& j, ReliabilityScenario& s) {
  if (j.contains("replacement"))
    s.replacement = one_of<Replacement>(r, j, "", "replacement",
                                        {{"datapac", Replacement::kDatapac}, {"drive", Replacement::kDrive}});
  if (j.contains("mechanisms")) {
    const json& m = j.at("mechanisms");
    r.object(m, "mechanisms", {"latent_errors", "rebuild_read_errors", "wear_out", "controllers"});
    const std::pair<const char*, bool Mechanisms::*> flags[] = {{"latent_errors", &Mechanisms::latent_errors},
                                                               {"rebuild_read_errors", &Mechanisms::rebuild_read_errors},
                                                               {"wear_out", &Mechanisms::wear_out},
                                                               {"controllers", &Mechanisms::controllers}};
    for (const auto& [key, field] : flags)
      if (m.contains(key)) s.mechanisms.*field = r.boolean(m, "mechanisms", key);
  }
}

ReliabilityScenario read(const Reader& r, const json& j, const config::Catalog& catalog) {
  r.object(j, "",
           {"schema", "name", "description", "system", "raid_type", "fill_percent", "seed", "arrays", "horizon_years",
            "host_write_bytes_per_second", "host_write_sequential_fraction", "rebuild", "replacement", "mechanisms", "model"});
  const std::string schema = r.required_text(j, "", "schema");
  if (schema != kReliabilitySchema)
    r.fail("schema", "expected \"" + std::string(kReliabilitySchema) + "\", got " + in_quotes(schema));
  ReliabilityScenario s;
  s.file_name = r.file();
  s.name = r.required_text(j, "", "name", 200);
  if (j.contains("description")) s.description = r.text(j, "", "description");
  const std::string system = j.contains("system") ? r.text(j, "", "system", 200) : config::Catalog::kDefaultSystem;
  auto preset = catalog.system(system);
  if (!preset.is_ok()) r.fail("system", preset.status().message(), sim::Code::kNotFound);
  s.system = *preset;
  if (!j.contains("raid_type")) r.fail("raid_type", "missing");
  s.raid_type = r.choice<raid::RaidType>(j, "", "raid_type", workload::scenario_detail::volume_raid_type,
                                         workload::scenario_detail::kRaidNames);
  if (j.contains("fill_percent")) s.fill = number(r, j, "", "fill_percent", 0.001, 100) / 100.0;
  if (j.contains("seed"))
    s.seed = static_cast<std::uint64_t>(r.integer(j.at("seed"), "seed", 0, INT64_MAX));
  if (!j.contains("arrays")) r.fail("arrays", "missing");
  s.arrays = r.integer(j.at("arrays"), "arrays", 1, kMaxArrays);
  if (j.contains("horizon_years")) s.horizon_years = number(r, j, "", "horizon_years", 1e-3, kMaxHorizonYears);
  if (j.contains("host_write_bytes_per_second"))
    s.host_write_bytes_per_second =
        static_cast<double>(r.size(j.at("host_write_bytes_per_second"), "host_write_bytes_per_second", 0, true));
  if (j.contains("host_write_sequential_fraction"))
    s.host_write_sequential_fraction = number(r, j, "", "host_write_sequential_fraction", 0, 1);

  read_rebuild(r, j, s);
  read_replacement_and_mechanisms(r, j, s);
  auto defaults = catalog.reliability();
  if (!defaults.is_ok()) r.fail("model", defaults.status().message(), sim::Code::kNotFound);
  s.model = *defaults;
  if (j.contains("model")) read_model(r, j.at("model"), s.model);
  if (s.probe) check_probe(r, s, catalog);
  return s;
}

}  // namespace

std::string probe_scenario_text(const ReliabilityScenario& s) {
  config::JsonParseOptions options;
  options.allow_comments = true;
  nlohmann::json j = config::parse_json_strict(s.probe->text, options).value();
  j["system"] = s.system.name;
  if (j.contains("volumes") && j["volumes"].is_array())
    for (auto& v : j["volumes"])
      if (v.is_object()) v["raid_type"] = std::string(raid::raid_type_name(s.raid_type));
  if (s.rebuild_bytes_per_second) {
    if (!j.contains("options") || !j["options"].is_object()) j["options"] = nlohmann::json::object();
    j["options"]["rebuild_bytes_per_second"] = static_cast<std::int64_t>(*s.rebuild_bytes_per_second);
  }
  return config::dump_json(j);
}

bool is_reliability_text(std::string_view text) {
  config::JsonParseOptions options;
  options.allow_comments = true;
  auto j = config::parse_json_strict(text, options);
  if (!j.is_ok() || !j->is_object()) return false;
  auto it = j->find("schema");
  return it != j->end() && it->is_string() && it->get<std::string>() == kReliabilitySchema;
}

sim::Result<ReliabilityScenario> parse_reliability(std::string_view text, const std::string& file_name,
                                                   const config::Catalog& catalog) {
  if (text.size() > workload::kMaxScenarioFileBytes)
    return sim::invalid_argument(file_name + ": (top level): the file is over " +
                                 std::to_string(workload::kMaxScenarioFileBytes) + " bytes");
  config::JsonParseOptions options;
  options.allow_comments = true;
  auto j = config::parse_json_strict(text, options);
  if (!j.is_ok()) return sim::invalid_argument(file_name + ": " + j.status().message());
  try {
    return read(Reader(file_name), *j, catalog);
  } catch (const LoadError& e) {
    return sim::Status(e.code, e.what());
  } catch (const nlohmann::json::exception& e) {
    return sim::invalid_argument(file_name + ": " + e.what());
  }
}

}  // namespace afasim::reliability
