// The checked reader of the preset files (config/*.json) that config/preset.cpp builds its
// Catalog with: every figure carries its provenance ({"value", "source" | "assumption"}),
// unknown keys are errors, and every error names the file and the key path. Internal to
// config/: not a public interface.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "config/json_text.h"

namespace afasim::config {
struct ReliabilityParams;
}

namespace afasim::config::preset_detail {

using nlohmann::json;

// Thrown inside the preset readers only; Catalog's factories turn it into a Status.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string& file, const std::string& key, const std::string& what) {
  throw ConfigError(file + ": " + (key.empty() ? "(top level)" : key) + ": " + what);
}

inline std::string type_name(const json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  return std::string("a ") + j.type_name();
}

// Reads one JSON file with the rules of preset.h: every figure carries its provenance,
// unknown keys are errors.
class Reader {
 public:
  // Maps a key path to the file that defined it (for presets merged through `extends`).
  using Origin = std::function<std::string(const std::string& key)>;

  Reader(std::string file, const std::set<std::string>& sources, Origin origin = nullptr)
      : file_(std::move(file)), sources_(sources), origin_(std::move(origin)) {}

  const std::string& file() const { return file_; }
  // The file to blame for `key`.
  std::string file_for(const std::string& key) const { return origin_ ? origin_(key) : file_; }
  [[noreturn]] inline void fail(const std::string& key, const std::string& what) const {
    ::afasim::config::preset_detail::fail(file_for(key), key, what);
  }

  // REQUIRES the object at `path` to hold only `allowed` keys.
  void only_keys(const json& obj, const std::string& path, std::set<std::string> allowed) const {
    if (!obj.is_object()) fail(path, "must be an object, got " + type_name(obj));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (!allowed.count(it.key())) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(json_path_join(path, it.key()), "unknown key (expected one of: " + list + ")");
      }
    }
  }

  const json& member(const json& obj, const std::string& path, const std::string& key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(json_path_join(path, key), "missing");
    return *it;
  }

  std::string text(const json& obj, const std::string& path, const std::string& key,
                   std::set<std::string> one_of = {}) const {
    const json& v = member(obj, path, key);
    if (!v.is_string()) fail(json_path_join(path, key), "must be a string, got " + type_name(v));
    std::string s = v.get<std::string>();
    if (s.empty()) fail(json_path_join(path, key), "must not be empty");
    // Names, models and notes go into tables, logs and reports one line each (hostile round
    // 28a, L7: a newline in a model split the capacity table).
    for (std::size_t i = 0; i < s.size(); ++i)
      if (static_cast<unsigned char>(s[i]) < 0x20 || s[i] == 0x7f)
        fail(json_path_join(path, key), "must not hold control characters (a newline, a tab, NUL); byte " +
                                            std::to_string(i) + " is " + std::to_string(static_cast<int>(s[i])));
    if (!one_of.empty() && !one_of.count(s)) {
      std::string list;
      for (const auto& a : one_of) list += (list.empty() ? "" : ", ") + a;
      fail(json_path_join(path, key), "must be one of " + list + ", got \"" + s + "\"");
    }
    return s;
  }

  std::string optional_text(const json& obj, const std::string& path, const std::string& key) const {
    return obj.contains(key) ? text(obj, path, key) : std::string();
  }

  // A figure: {"value": N, "source": KEY | "assumption": TEXT [, "note": TEXT]}.
  double figure(const json& obj, const std::string& path, const std::string& key, double lo,
                double hi) const {
    const std::string p = json_path_join(path, key);
    const json& f = member(obj, path, key);
    if (f.is_number())
      fail(p, "a bare number; write {\"value\": N, \"source\": KEY} or "
                     "{\"value\": N, \"assumption\": \"why\"}");
    only_keys(f, p, {"value", "source", "assumption", "note"});
    const bool has_source = f.contains("source");
    const bool has_assumption = f.contains("assumption");
    if (has_source == has_assumption)
      fail(p, "needs exactly one of \"source\" or \"assumption\"");
    if (has_source) {
      const std::string src = text(f, p, "source");
      if (!sources_.count(src))
        fail(json_path_join(p, "source"), "\"" + src + "\" is not a key of sources.json");
    } else {
      text(f, p, "assumption");
    }
    if (f.contains("note")) text(f, p, "note");
    const json& v = member(f, p, "value");
    if (!v.is_number()) fail(json_path_join(p, "value"), "must be a number, got " + type_name(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
      std::ostringstream os;
      os << "must be in [" << number_text(lo) << ", " << number_text(hi) << "], got " << v.dump();
      fail(json_path_join(p, "value"), os.str());
    }
    return d;
  }

  std::int64_t integer_figure(const json& obj, const std::string& path, const std::string& key,
                              double lo, double hi) const {
    const double d = figure(obj, path, key, lo, hi);
    if (d != std::floor(d)) fail(json_path_join(json_path_join(path, key), "value"), "must be an integer");
    return static_cast<std::int64_t>(d);
  }

 private:
  std::string file_;
  const std::set<std::string>& sources_;
  Origin origin_;
};

constexpr double kMaxBytes = 1e18;
constexpr double kMaxRate = 1e15;

// The strict reader (config/json_text.h): duplicate keys and NUL bytes refused, where
// nlohmann alone kept the last of two keys and ended the text at a NUL (review 41).
inline json parse_json(const std::string& file, const std::string& text) {
  JsonParseError e;
  auto parsed = parse_json_strict(text, JsonParseOptions{}, &e);
  if (!parsed.is_ok())
    fail(file, e.path, e.kind == JsonParseError::Kind::kSyntax ? "not valid JSON: " + e.message : e.message);
  return std::move(parsed).value();
}

inline void check_schema(const Reader& r, const json& j, const std::string& expected) {
  const std::string schema = r.text(j, "", "schema");
  if (schema != expected)
    r.fail("schema", "expected \"" + expected + "\", got \"" + schema + "\"");
}

// models/capacity.json (config/capacity_model.cpp).
CapacityParams read_capacity(const Reader& r, const json& j);

// The most chunks a system's SSDs may hold in all. The pool keeps a few bytes for every chunk
// of every SSD from the start of a run (about 4.7 B each, measured: 128 SSDs of 30 TB at
// 16 MiB chunks, 229 M chunks, took 1.07 GB), so this bounds what a preset can make a run
// allocate: 2^28 chunks, about 1.3 GB (4.5 PB of SSDs at 16 MiB chunks); the ISE 860 G3 holds
// 3.8 M. A larger system fits with larger chunks (models/capacity.json chunk_bytes). An
// assumption, not a published figure.
constexpr double kMaxChunksPerSystem = 1 << 28;

// Fails, naming the system's file, when `s`'s SSDs hold more than kMaxChunksPerSystem chunks.
void check_chunk_count(const SystemPreset& s, const CapacityParams& c);

// models/reliability.json (config/reliability_model.cpp).
ReliabilityParams read_reliability(const Reader& r, const json& j);

}  // namespace afasim::config::preset_detail
