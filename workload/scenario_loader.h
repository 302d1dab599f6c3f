// Internals of the scenario loader (scenario.h), shared by scenario.cpp (the document and
// its sections) and scenario_timeline.cpp (the timeline's actions and their checks).
//
// Reading a scenario walks its JSON once, section by section, with a Reader that knows the
// file name and turns every problem into `FILE: KEY: what is wrong`. Inside the loader a
// problem is a LoadError exception (the same pattern as config/preset.cpp: every check is
// one line); parse_scenario turns it into a Status, so nothing escapes the loader.
// Not a public interface.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/size.h"
#include "workload/scenario.h"

namespace afasim::workload::scenario_detail {

using json = nlohmann::json;
using controller::Id;

struct LoadError : std::runtime_error {
  using std::runtime_error::runtime_error;
  sim::Code code = sim::Code::kInvalidArgument;
};

inline std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
inline std::string at_index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
inline std::string in_quotes(const std::string& s) {
  return "\"" + s + "\"";
}

inline std::string type_name(const json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array";
  return std::string("a ") + j.type_name();
}

inline std::string list_of(const std::vector<std::string>& names) {
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
    // A NUL cut the name short in the text report (hostile round 15); other control
    // characters garble it. Tabs and line breaks are text.
    for (std::size_t i = 0; i < s.size(); ++i) {
      const auto ch = static_cast<unsigned char>(s[i]);
      if ((ch < 0x20 && ch != '\t' && ch != '\n') || ch == 0x7f) {
        char code[8];
        std::snprintf(code, sizeof code, "U+%04X", ch);
        fail(p, std::string("holds a control character (") + code + ") at character " + std::to_string(i + 1));
      }
    }
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
    if (bytes < lo) fail(p, "must be at least " + config::byte_count(lo) + ", got " + v.dump());
    return bytes;
  }

  // Seconds as a JSON number (fractions allowed), converted to nanoseconds.
  sim::Time seconds(const json& v, const std::string& p, bool positive) const {
    if (!v.is_number()) fail(p, "must be a number of seconds, got " + type_name(v));
    const double s = v.get<double>();
    // A positive value under half a nanosecond would round to 0 (a run of no time).
    if (!std::isfinite(s) || s < 0 || (positive && s < 1e-9))
      fail(p, std::string("must be ") + (positive ? "at least 1 ns (1e-9)" : "0 or more") + ", got " +
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

inline std::optional<raid::RaidType> volume_raid_type(std::string_view s) {
  if (s == "RAID10") return raid::RaidType::kRaid10;
  if (s == "RAID5") return raid::RaidType::kRaid5;
  return std::nullopt;
}
inline const std::vector<std::string> kRaidNames = {"RAID10", "RAID5"};
inline const std::vector<std::string> kProvisioningNames = {"thin", "fixed"};

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

}  // namespace afasim::workload::scenario_detail
