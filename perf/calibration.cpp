#include "perf/calibration.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config/file_text.h"
#include "config/json_text.h"
#include "config/preset.h"

namespace afasim::perf {

namespace {

using json = nlohmann::json;

// A parse failure: the message names the file and the field.
struct Bad {
  std::string message;
};

[[noreturn]] void fail(const std::string& path, const std::string& field, const std::string& what) {
  throw Bad{path + (field.empty() ? "" : ": " + field) + ": " + what};
}

std::string string_at(const std::string& path, const json& j, const std::string& key, const std::string& field,
                      bool required = true) {
  if (!j.contains(key)) {
    if (required) fail(path, field + key, "missing");
    return "";
  }
  if (!j[key].is_string()) fail(path, field + key, "must be a string");
  return j[key].get<std::string>();
}

FigureMetric parse_metric(const std::string& path, const std::string& field, const std::string& s) {
  if (s == "iops") return FigureMetric::kIops;
  if (s == "mb_per_s") return FigureMetric::kMbPerSecond;
  if (s == "lat_mean_ms") return FigureMetric::kLatencyMeanMs;
  if (s == "lat_stddev_ms") return FigureMetric::kLatencyStddevMs;
  fail(path, field, "unknown metric \"" + s + "\" (iops, mb_per_s, lat_mean_ms, lat_stddev_ms)");
}

// The published figures a training file may give, per metric: wide enough for any array or
// drive (the fastest publish about 10^7 IOPS and 10^5 MB/s), narrow enough that a typo is
// caught (hostile round 22: figures of 1e300 and 1e-300 were taken and broke the table).
struct FigureRange {
  double lo, hi;
  const char* text;
};
FigureRange figure_range(FigureMetric m) {
  switch (m) {
    case FigureMetric::kIops: return {1, 1e9, "1 to 10^9 I/Os per second"};
    case FigureMetric::kMbPerSecond: return {0.001, 1e7, "0.001 to 10^7 MB/s"};
    case FigureMetric::kLatencyMeanMs:
    case FigureMetric::kLatencyStddevMs: return {1e-6, 1e6, "10^-6 to 10^6 ms"};
  }
  return {0, 0, ""};
}

TrainingFigure parse_figure(const std::string& path, const json& f, std::size_t i, const std::set<std::string>& sources) {
  const std::string field = "training_figures[" + std::to_string(i) + "].";
  if (!f.is_object()) fail(path, field, "must be an object");
  TrainingFigure t;
  t.id = string_at(path, f, "id", field);
  t.workload = string_at(path, f, "workload", field);
  t.section = string_at(path, f, "section", field, false);
  t.raid = string_at(path, f, "raid", field);
  if (t.raid != "RAID5" && t.raid != "RAID10") fail(path, field + "raid", "must be RAID5 or RAID10");
  t.metric = parse_metric(path, field + "metric", string_at(path, f, "metric", field));
  const FigureRange range = figure_range(t.metric);
  if (!f.contains("value") || !f["value"].is_number() || !(f["value"].get<double>() >= range.lo) ||
      !(f["value"].get<double>() <= range.hi))
    fail(path, field + "value", std::string("must be a number from ") + range.text);
  t.value = f["value"].get<double>();
  t.source = string_at(path, f, "source", field);
  if (!sources.count(t.source)) fail(path, field + "source", "\"" + t.source + "\" is not a key of sources.json");
  return t;
}

Parameter parse_parameter(const std::string& path, const std::string& name, const json& p,
                          const std::set<std::string>& sources, const std::set<std::string>& figure_ids) {
  const std::string field = "parameters." + name + ".";
  if (!p.is_object()) fail(path, field, "must be an object");
  Parameter out;
  if (!p.contains("value") || !p["value"].is_number()) fail(path, field + "value", "must be a number");
  out.value = p["value"].get<double>();
  if (out.value < 0) fail(path, field + "value", "must be >= 0");
  out.unit = string_at(path, p, "unit", field);
  // The unit the model reads the value in, by the name's suffix (hostile review 43: "us" beside
  // a value of 30 was read as 30 ns): the unit must say it first.
  static constexpr std::pair<std::string_view, std::string_view> kUnits[] = {
      {"_ns_per_kib", "ns per KiB"}, {"_ns", "ns"}, {"_bytes_per_second", "bytes/s"}, {"_bytes", "bytes"},
      {"_bytes_per_controller", "bytes"}};
  for (const auto& [suffix, unit] : kUnits)
    if (name.ends_with(suffix)) {
      if (!out.unit.starts_with(unit) || (out.unit.size() > unit.size() && std::isalpha(static_cast<unsigned char>(out.unit[unit.size()]))))
        fail(path, field + "unit", "\"" + out.unit + "\": the model reads " + name + " in " + std::string(unit) +
                                       " (say so first, and give the value in it)");
      break;
    }
  out.source = string_at(path, p, "source", field, false);
  out.assumption = string_at(path, p, "assumption", field, false);
  if (p.contains("fitted_to")) {
    if (!p["fitted_to"].is_array() || p["fitted_to"].empty())
      fail(path, field + "fitted_to", "must be a non-empty list of training figure ids");
    for (const auto& id : p["fitted_to"]) {
      if (!id.is_string() || !figure_ids.count(id.get<std::string>()))
        fail(path, field + "fitted_to", "names no training figure: " + id.dump());
      out.fitted_to.push_back(id.get<std::string>());
    }
  }
  const int kinds = !out.source.empty() + !out.assumption.empty() + out.fitted();
  if (kinds != 1) fail(path, field, "needs exactly one of source, assumption, fitted_to");
  if (!out.source.empty() && !sources.count(out.source))
    fail(path, field + "source", "\"" + out.source + "\" is not a key of sources.json");
  if (p.contains("provisional")) {
    if (!p["provisional"].is_boolean()) fail(path, field + "provisional", "must be true or false");
    out.provisional = p["provisional"].get<bool>();
  }
  return out;
}

// The typed model parameters from the named ones.
ModelParameters model_of(const std::string& path, const std::map<std::string, Parameter>& ps) {
  auto get = [&](const char* name) -> double {
    auto it = ps.find(name);
    if (it == ps.end()) fail(path, std::string("parameters.") + name, "missing");
    return it->second.value;
  };
  auto whole = [&](const char* name, double lo, double hi) -> std::int64_t {
    const double v = get(name);
    if (v < lo || v > hi || v != static_cast<double>(static_cast<std::int64_t>(v)))
      fail(path, std::string("parameters.") + name, "must be a whole number in " + std::to_string(static_cast<std::int64_t>(lo)) +
                                                       ".." + std::to_string(static_cast<std::int64_t>(hi)));
    return static_cast<std::int64_t>(v);
  };
  constexpr double kBig = 1e15;
  ModelParameters m;
  m.cpu_cores = static_cast<int>(whole("cpu_cores", 1, 256));
  m.cpu_per_core_queues = whole("cpu_per_core_queues", 0, 1) == 1;
  m.cpu_rebalance_fraction = get("cpu_rebalance_fraction");
  if (m.cpu_rebalance_fraction > 1) fail(path, "parameters.cpu_rebalance_fraction", "must be 0..1");
  const std::int64_t host_kib = whole("cpu_host_ns_per_kib", 0, 1e6);
  m.cpu.set(CpuOp::kHostRead, {whole("cpu_host_read_ns", 0, 1e9), host_kib});
  m.cpu.set(CpuOp::kHostWrite, {whole("cpu_host_write_ns", 0, 1e9), host_kib});
  m.cpu.set(CpuOp::kCacheHit, {whole("cpu_cache_hit_ns", 0, 1e9), 0});
  const std::int64_t backend = whole("cpu_backend_op_ns", 0, 1e9);
  m.cpu.set(CpuOp::kBackendRead, {backend, 0});
  m.cpu.set(CpuOp::kBackendWrite, {backend, 0});
  m.cpu.set(CpuOp::kMirror, {whole("cpu_mirror_ns", 0, 1e9), 0});
  m.cpu.set(CpuOp::kParity, {whole("cpu_parity_ns", 0, 1e9), whole("cpu_parity_ns_per_kib", 0, 1e6)});
  m.cpu_service_cv = get("cpu_service_cv");
  if (m.cpu_service_cv > 1) fail(path, "parameters.cpu_service_cv", "must be 0..1");
  m.memory_bytes_per_second = whole("memory_bytes_per_second", 1, kBig);
  m.host_ports = static_cast<int>(whole("host_ports_per_controller", 1, 64));
  m.host_port_bytes_per_second = whole("host_port_bytes_per_second", 1, kBig);
  m.host_port_latency_ns = whole("host_port_latency_ns", 0, 1e9);
  m.mirror_link_bytes_per_second = whole("mirror_link_bytes_per_second", 1, kBig);
  m.mirror_link_latency_ns = whole("mirror_link_latency_ns", 0, 1e9);
  m.backend_lanes = static_cast<int>(whole("backend_lanes_per_datapac", 1, 64));
  m.backend_lane_bytes_per_second = whole("backend_lane_bytes_per_second", 1, kBig);
  m.read_cache.capacity_bytes = whole("read_cache_bytes_per_controller", 0, kBig);
  m.read_cache.segment_bytes = whole("read_cache_segment_bytes", 1, kBig);
  m.streams.trigger_ios = static_cast<int>(whole("read_ahead_trigger_ios", 1, 1e6));
  m.streams.depth_bytes = whole("read_ahead_depth_bytes", 0, kBig);
  m.streams.max_io_bytes = whole("read_ahead_max_io_bytes", 1, kBig);
  m.streams.streams_per_volume = static_cast<int>(whole("streams_per_volume", 1, 64));
  if (auto s = m.read_cache.validate(); !s.is_ok()) fail(path, "parameters", s.message());
  if (auto s = m.streams.validate(); !s.is_ok()) fail(path, "parameters", s.message());
  return m;
}

Calibration parse(const std::string& path, const std::string& text, const std::set<std::string>& sources) {
  auto parsed = config::parse_json_strict(text);  // duplicate keys and NUL bytes refused
  if (!parsed.is_ok()) fail(path, "", parsed.status().message());
  const json j = std::move(parsed).value();
  if (!j.is_object()) fail(path, "", "not a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "schema" && it.key() != "system" && it.key() != "comment" && it.key() != "training_figures" &&
        it.key() != "parameters")
      fail(path, it.key(), "unknown field");
  if (string_at(path, j, "schema", "") != "afasim.calibration/1") fail(path, "schema", "must be afasim.calibration/1");
  Calibration c;
  c.system = string_at(path, j, "system", "");
  c.file = path;
  if (!j.contains("training_figures") || !j["training_figures"].is_array()) fail(path, "training_figures", "must be a list");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < j["training_figures"].size(); ++i) {
    c.figures.push_back(parse_figure(path, j["training_figures"][i], i, sources));
    if (!ids.insert(c.figures.back().id).second) fail(path, "training_figures", "duplicate id " + c.figures.back().id);
  }
  if (!j.contains("parameters") || !j["parameters"].is_object()) fail(path, "parameters", "must be an object");
  for (auto it = j["parameters"].begin(); it != j["parameters"].end(); ++it)
    c.parameters[it.key()] = parse_parameter(path, it.key(), it.value(), sources, ids);
  const auto fitted = c.fitted_names();
  if (static_cast<int>(fitted.size()) > Calibration::kMaxFitted)
    fail(path, "parameters", std::to_string(fitted.size()) + " fitted parameters; at most " +
                                 std::to_string(Calibration::kMaxFitted) + " may be fitted");
  c.model = model_of(path, c.parameters);
  return c;
}

std::set<std::string> source_keys(const std::string& text) {
  std::set<std::string> keys;
  json j = json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("sources") && j["sources"].is_object())
    for (auto it = j["sources"].begin(); it != j["sources"].end(); ++it) keys.insert(it.key());
  return keys;
}

// kNotFound when nothing is at `path`; kInvalidArgument for what is no regular file of at most
// 4 MiB (re-test of hostile review 43: a link to /dev/zero grew to 4 GB, a FIFO waited for
// ever, a folder was "invalid JSON").
sim::Result<std::string> read_text(const std::string& path) {
  constexpr std::size_t kMaxBytes = 4 << 20;
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) return sim::not_found(path + ": cannot open");
  if (!std::filesystem::is_regular_file(st))
    return sim::invalid_argument(path + ": " + (std::filesystem::is_directory(st) ? "a folder" : "not a regular file") +
                                 " where a JSON file belongs");
  auto text = config::read_file_text(path, kMaxBytes);
  if (!text.is_ok()) return sim::invalid_argument(text.status().message());
  if (text->size() > kMaxBytes) return sim::invalid_argument(path + ": larger than " + std::to_string(kMaxBytes) + " bytes");
  return text;
}

}  // namespace

std::string_view figure_metric_name(FigureMetric m) {
  switch (m) {
    case FigureMetric::kIops: return "IOPS";
    case FigureMetric::kMbPerSecond: return "MB/s";
    case FigureMetric::kLatencyMeanMs: return "ms mean";
    case FigureMetric::kLatencyStddevMs: return "ms stddev";
  }
  return "?";
}

std::vector<std::string> Calibration::fitted_names() const {
  std::vector<std::string> out;
  for (const auto& [name, p] : parameters)
    if (p.fitted()) out.push_back(name);
  return out;
}

sim::Result<Calibration> parse_calibration(const std::string& path, const std::string& text,
                                           const std::set<std::string>& sources) {
  try {
    return parse(path, text, sources);
  } catch (const Bad& b) {
    return sim::invalid_argument(b.message);
  }
}

sim::Result<Calibration> load_calibration(const std::string& system, const std::string& config_dir) {
  const std::string rel = "calibration/" + system + ".json";
  std::string text, sources_text;
  if (config_dir.empty()) {
    const auto& files = config::embedded_files();
    auto it = files.find(rel);
    if (it == files.end()) return sim::not_found("no calibration for system \"" + system + "\" (config/" + rel + ")");
    text = it->second;
    sources_text = files.at("sources.json");
  } else {
    const std::string path = (std::filesystem::path(config_dir) / rel).string();
    auto t = read_text(path);
    if (!t.is_ok() && t.status().code() != sim::Code::kNotFound) return t.status();
    if (!t.is_ok()) return sim::not_found("no calibration for system \"" + system + "\" (" + path + ")");
    auto s = read_text((std::filesystem::path(config_dir) / "sources.json").string());
    if (!s.is_ok()) return s.status();
    text = *t;
    sources_text = *s;
  }
  // Named with its folder, as the presets' errors are (hostile review 43: "calibration/x.json:
  // invalid JSON" said not which folder's).
  const std::string shown = config_dir.empty() ? rel : (std::filesystem::path(config_dir) / rel).string();
  auto c = parse_calibration(shown, text, source_keys(sources_text));
  if (c.is_ok() && c->system != system)
    return sim::invalid_argument(shown + ": system: \"" + c->system + "\" does not match the file name");
  return c;
}

sim::Status check_against_preset(const ModelParameters& m, const config::SystemPreset& preset,
                                 const std::string& calibration_file) {
  struct Pair {
    const char* parameter;
    std::int64_t calibration;
    const char* preset_field;
    std::int64_t preset;
  };
  const Pair pairs[] = {
      {"cpu_cores", m.cpu_cores, "controllers.cpu_cores", preset.controllers.cpu_cores},
      {"host_ports_per_controller", m.host_ports, "controllers.host_ports.count_per_controller",
       preset.controllers.host_ports.count_per_controller},
      {"host_port_bytes_per_second", m.host_port_bytes_per_second, "controllers.host_ports.payload_bytes_per_second",
       preset.controllers.host_ports.payload_bytes_per_second},
      {"backend_lanes_per_datapac", m.backend_lanes, "datapacs.backplane.lanes_per_controller",
       preset.datapacs.backplane.lanes_per_controller},
      {"backend_lane_bytes_per_second", m.backend_lane_bytes_per_second, "datapacs.backplane.lane_bytes_per_second",
       preset.datapacs.backplane.lane_bytes_per_second},
  };
  for (const Pair& p : pairs)
    if (p.calibration != p.preset)
      return sim::invalid_argument(calibration_file + ": parameters." + p.parameter + " is " +
                                   std::to_string(p.calibration) + " but system \"" + preset.name + "\" (" +
                                   (preset.file.empty() ? "config/systems/" : preset.file + " or the file it extends") +
                                   ") has " + p.preset_field + " " + std::to_string(p.preset) +
                                   ": one figure in two files, make them agree");
  return sim::Status::ok();
}

sim::Result<Calibration> calibration_for(const config::SystemPreset& preset, const std::string& config_dir) {
  // The folder's own file, its family file, then the embedded ones (a folder laid out before
  // calibration/ was read has none).
  std::vector<std::string> dirs;
  if (!config_dir.empty()) dirs.push_back(config_dir);
  dirs.emplace_back();
  sim::Result<Calibration> cal = sim::not_found("no calibration");
  std::string from;  // the folder it came from, "" for the embedded files
  for (const std::string& dir : dirs)
    for (const std::string& name : {preset.name, std::string(kFamilyCalibration)})
      if (!cal.is_ok() && cal.status().code() == sim::Code::kNotFound) {
        cal = load_calibration(name, dir);
        from = dir;
      }
  if (!cal.is_ok()) return cal;
  const std::string file = (from.empty() ? std::string("the built-in ") : from + "/") + "calibration/" + cal->system + ".json";
  AFASIM_RETURN_IF_ERROR(check_against_preset(cal->model, preset, file));
  return cal;
}

}  // namespace afasim::perf
