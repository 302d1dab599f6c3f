// The sweep file parser (sweep_file.h, docs/sweeps.md "Format"). As in the scenario loader,
// a problem inside the parser is a SweepError exception, so that every check is one line;
// parse_sweep_file turns it into a Status and nothing escapes.
#include "sweep/sweep_file.h"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "config/file_text.h"
#include "config/json_text.h"
#include "config/preset.h"

namespace afasim::sweep {
namespace {

using nlohmann::json;

struct SweepError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

class Parser {
 public:
  explicit Parser(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw SweepError(file_ + ": " + (key.empty() ? "(top level)" : key) + ": " + what);
  }

  void top(const json& j, SweepFile& out) const {
    // The schema before the keys (config::schema_hint).
    if (j.is_object() && j.contains("schema") && j.at("schema").is_string() && j.at("schema") != kSweepSchema) {
      const std::string schema = j.at("schema").get<std::string>();
      fail("schema", "expected " + quoted(std::string(kSweepSchema)) + ", got " + quoted(schema) + config::schema_hint(schema));
    }
    only_keys(j, "", {"schema", "name", "description", "base", "set", "axes", "points", "seeds"});
    required_text(j, "schema");
    no_control_characters(j, "");
    out.name = required_text(j, "name");
    if (j.contains("description")) out.description = text(j.at("description"), "description");
    out.base = required_text(j, "base");
    if (j.contains("set")) out.set = field_object(j.at("set"), "set");
    if (j.contains("axes") == j.contains("points"))
      fail("", "give exactly one of \"axes\" (a grid) and \"points\" (a list)");
    if (j.contains("axes")) axes(j.at("axes"), out);
    if (j.contains("points")) points(j.at("points"), out);
    if (!j.contains("seeds")) fail("seeds", "required: a list of seeds, or {\"first\": 1, \"count\": 8}");
    out.seeds = seeds(j.at("seeds"));
    if (out.runs() > kMaxSweepRuns)
      fail("seeds", std::to_string(out.points.size()) + " points × " + std::to_string(out.seeds.size()) +
                        " seeds is more than " + std::to_string(kMaxSweepRuns) + " runs");
  }

 private:
  void only_keys(const json& j, const std::string& key, std::initializer_list<const char*> known) const {
    if (!j.is_object()) fail(key, "must be an object, got " + std::string(j.type_name()));
    for (const auto& item : j.items()) {
      const std::string& k = item.key();  // not a structured binding: clang 14 (make fuzz) cannot capture one
      if (std::find_if(known.begin(), known.end(), [&](const char* n) { return k == n; }) != known.end()) continue;
      std::string names;
      for (const char* n : known) names += (names.empty() ? "" : ", ") + std::string(n);
      fail(config::json_path_join(key, k), "unknown key (known: " + names + ")");
    }
  }

  // Every string of the file, keys too: a control character (an ESC) in a name or a value
  // reached the results' CSV files raw, and a terminal that showed them (hostile round 44).
  // Tabs and line breaks are text, as the scenario loader takes them.
  void no_control_characters(const json& j, const std::string& key) const {
    const auto check = [&](const std::string& s, const std::string& at) {
      for (std::size_t i = 0; i < s.size(); ++i) {
        const auto ch = static_cast<unsigned char>(s[i]);
        // C1 controls (U+0080..U+009F, 0xc2 0x80..0x9f in UTF-8) too: an 8-bit CSI (re-test).
        const bool c1 = ch == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f;
        if ((ch < 0x20 && ch != '\t' && ch != '\n') || ch == 0x7f || c1) {
          char code[8];
          std::snprintf(code, sizeof code, "U+%04X", c1 ? static_cast<unsigned char>(s[i + 1]) : ch);
          fail(at, std::string("holds a control character (") + code + ") at byte " + std::to_string(i + 1));
        }
      }
    };
    if (j.is_string()) check(j.get_ref<const std::string&>(), key);
    if (j.is_array())
      for (std::size_t i = 0; i < j.size(); ++i) no_control_characters(j[i], key + "[" + std::to_string(i) + "]");
    if (j.is_object())
      for (const auto& [k, v] : j.items()) {
        const std::string at = config::json_path_join(key, k);
        check(k, at);
        no_control_characters(v, at);
      }
  }

  std::string text(const json& v, const std::string& key) const {
    if (!v.is_string()) fail(key, "must be a string, got " + std::string(v.type_name()));
    return v.get<std::string>();
  }

  std::string required_text(const json& j, const char* name) const {
    if (!j.contains(name)) fail(name, "required");
    std::string s = text(j.at(name), name);
    if (s.empty()) fail(name, "must not be empty");
    return s;
  }

  FieldPointer pointer(const std::string& pointer_text, const std::string& key) const {
    auto p = parse_field_pointer(pointer_text);
    if (!p.is_ok()) fail(key, p.status().message());
    // Each run's seed comes from "seeds" and replaces the scenario's: a /seed field would be
    // overwritten, its column showing seeds that were never run.
    if (p->text == "/seed") fail(key, "/seed is set by \"seeds\" (each point runs once per seed): list the seeds there");
    return std::move(p).value();
  }

  // An object of pointer → value ("set", each of "points"), in the order of the pointers.
  std::vector<FieldValue> field_object(const json& j, const std::string& key) const {
    if (!j.is_object()) fail(key, "must be an object of field → value, got " + std::string(j.type_name()));
    if (j.size() > kMaxSweepFieldsPerPoint)
      fail(key, std::to_string(j.size()) + " fields, more than " + std::to_string(kMaxSweepFieldsPerPoint));
    std::vector<FieldValue> fields;
    for (const auto& [k, v] : j.items()) {
      const std::string field_key = key + "[" + quoted(k) + "]";
      fields.push_back({field_key, pointer(k, field_key), v});
      no_overlap(fields);
    }
    return fields;
  }

  // The last of `fields` may not overlap an earlier one (fields_overlap): both would set one
  // value, the second silently winning (hostile round 25).
  void no_overlap(const std::vector<FieldValue>& fields) const {
    const FieldValue& last = fields.back();
    for (std::size_t i = 0; i + 1 < fields.size(); ++i)
      if (fields_overlap(fields[i].pointer, last.pointer))
        fail(last.key, quoted(last.pointer.text) + " overlaps " + quoted(fields[i].pointer.text) + " (" + fields[i].key +
                           "): both would set the same field");
  }

  const json& list(const json& j, const std::string& key, std::size_t max) const {
    if (!j.is_array()) fail(key, "must be an array, got " + std::string(j.type_name()));
    if (j.empty()) fail(key, "must not be empty");
    if (j.size() > max) fail(key, std::to_string(j.size()) + " entries, more than " + std::to_string(max));
    return j;
  }

  void axes(const json& j, SweepFile& out) const {
    list(j, "axes", kMaxSweepAxes);
    std::vector<FieldValue> axis_fields;  // the value member holds the axis' values
    std::size_t points = 1;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const std::string key = "axes[" + std::to_string(i) + "]";
      only_keys(j[i], key, {"field", "values"});
      if (!j[i].contains("field")) fail(key + ".field", "required");
      const std::string field = text(j[i].at("field"), key + ".field");
      if (std::find(out.fields.begin(), out.fields.end(), field) != out.fields.end())
        fail(key + ".field", quoted(field) + " is already an axis");
      if (!j[i].contains("values")) fail(key + ".values", "required");
      const json& values = list(j[i].at("values"), key + ".values", kMaxSweepValues);
      for (std::size_t v = 0; v < values.size(); ++v)
        for (std::size_t w = 0; w < v; ++w)
          if (values[v] == values[w])
            fail(key + ".values[" + std::to_string(v) + "]", values[v].dump() + " is also values[" + std::to_string(w) + "]");
      if (points > kMaxSweepPoints / values.size())
        fail(key + ".values", "the axes make more than " + std::to_string(kMaxSweepPoints) + " points");
      points *= values.size();
      out.fields.push_back(field);
      axis_fields.push_back({key + ".field", pointer(field, key + ".field"), values});
      no_overlap(axis_fields);
    }
    expand(axis_fields, points, out);
  }

  // Point n takes value (n / stride_a) % size_a of axis a, the last axis varying fastest.
  static void expand(const std::vector<FieldValue>& axes, std::size_t points, SweepFile& out) {
    out.points.resize(points);
    std::size_t stride = points;
    for (const FieldValue& axis : axes) {
      stride /= axis.value.size();
      for (std::size_t n = 0; n < points; ++n)
        out.points[n].fields.push_back({axis.key, axis.pointer, axis.value[(n / stride) % axis.value.size()]});
    }
  }

  void points(const json& j, SweepFile& out) const {
    list(j, "points", kMaxSweepPoints);
    std::set<std::string> columns;
    std::map<json, std::size_t> seen;  // a point: its index; 1 and 1.0 are one value, as in axes
    for (std::size_t i = 0; i < j.size(); ++i) {
      // The same point twice ran twice (hostile round 44); as an axis' values, once is enough.
      if (const auto [it, added] = seen.emplace(j[i], i); !added)
        fail("points[" + std::to_string(i) + "]", "is also points[" + std::to_string(it->second) + "]");
      SweepPoint p;
      p.fields = field_object(j[i], "points[" + std::to_string(i) + "]");
      for (const FieldValue& f : p.fields) columns.insert(f.pointer.text);
      out.points.push_back(std::move(p));
    }
    out.fields.assign(columns.begin(), columns.end());
  }

  std::uint64_t seed(const json& v, const std::string& key) const {
    if (!v.is_number_unsigned()) fail(key, "must be an integer 0 to 2^64-1, got " + v.dump());
    return v.get<std::uint64_t>();
  }

  std::vector<std::uint64_t> seeds(const json& j) const {
    std::vector<std::uint64_t> out;
    if (j.is_object()) {
      only_keys(j, "seeds", {"first", "count"});
      if (!j.contains("first") || !j.contains("count")) fail("seeds", "needs both \"first\" and \"count\"");
      const std::uint64_t first = seed(j.at("first"), "seeds.first");
      const json& count = j.at("count");
      if (!count.is_number_unsigned() || count.get<std::uint64_t>() < 1 || count.get<std::uint64_t>() > kMaxSweepSeeds)
        fail("seeds.count", "must be an integer 1 to " + std::to_string(kMaxSweepSeeds) + ", got " + count.dump());
      const std::uint64_t n = count.get<std::uint64_t>();
      if (first > std::numeric_limits<std::uint64_t>::max() - (n - 1)) fail("seeds", "the last seed is past 2^64-1");
      for (std::uint64_t s = 0; s < n; ++s) out.push_back(first + s);
      return out;
    }
    if (!j.is_array()) fail("seeds", "must be a list of seeds or {\"first\": F, \"count\": N}, got " + std::string(j.type_name()));
    list(j, "seeds", kMaxSweepSeeds);
    for (std::size_t i = 0; i < j.size(); ++i) out.push_back(seed(j[i], "seeds[" + std::to_string(i) + "]"));
    std::sort(out.begin(), out.end());
    for (std::size_t i = 1; i < out.size(); ++i)
      if (out[i] == out[i - 1]) fail("seeds", "seed " + std::to_string(out[i]) + " is listed twice");
    return out;
  }

  std::string file_;
};

}  // namespace

sim::Result<SweepFile> parse_sweep_file(std::string_view text, const std::string& file_name) {
  SweepFile out;
  out.file_name = file_name;
  const Parser parser(file_name);
  if (text.size() > kMaxSweepFileBytes)
    return sim::invalid_argument(file_name + ": larger than " + std::to_string(kMaxSweepFileBytes) + " bytes");
  config::JsonParseOptions options;
  options.max_depth = kMaxSweepJsonDepth;
  options.allow_comments = true;
  auto parsed = config::parse_json_strict(text, options);
  if (!parsed.is_ok()) return sim::invalid_argument(file_name + ": " + parsed.status().message());
  try {
    parser.top(*parsed, out);
  } catch (const SweepError& e) {
    return sim::invalid_argument(e.what());
  } catch (const json::exception& e) {  // a path the checks above missed: still no crash
    return sim::invalid_argument(file_name + ": " + e.what());
  }
  return out;
}

std::vector<std::string> embedded_sweep_names() { return config::embedded_json_names("sweeps"); }

sim::Result<SweepFile> load_sweep_file(const std::string& path) {
  std::error_code ec;
  // A folder of the same name in the current one is no sweep file (hostile round 24: "cannot
  // read raid-vs-rebuild-rate: a directory" with the built-in of that name there).
  const bool folder = std::filesystem::is_directory(path, ec);
  if ((!std::filesystem::exists(path, ec) || folder) && path.find('/') == std::string::npos) {
    // The name of a built-in sweep, as `afasim run` takes a built-in scenario's (new-user trial 17).
    std::string base = path;
    if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0) base.resize(base.size() - 5);
    const auto& files = config::embedded_files();
    if (auto it = files.find("sweeps/" + base + ".json"); it != files.end())
      return parse_sweep_file(it->second, "config/" + it->first);
    if (folder) return sim::invalid_argument("cannot read " + path + ": a directory");
    std::string names;
    for (const std::string& name : embedded_sweep_names()) names += (names.empty() ? "" : ", ") + name;
    return sim::not_found("cannot read " + path + ": no such file, and no built-in sweep of that name (built in: " +
                          names + ")");
  }
  auto text = config::read_file_text(path, kMaxSweepFileBytes);  // parse_sweep_file refuses the size
  if (!text.is_ok()) return text.status();
  return parse_sweep_file(*text, path);
}

}  // namespace afasim::sweep
