// controller::snapshot_problem (controller/state_check.h): what the loaded rows say together.
#include "controller/state_check.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

namespace afasim::controller {

namespace {

// One id counter in meta ("next_id.<kind>") and the table whose ids it hands out.
struct Counter {
  const char* kind;   // "volume"
  const char* table;  // "volumes"; nullptr when no table keeps its rows (faults)
  std::int64_t smallest_id = 0, largest_id = 0, rows = 0;
  // Ids are 1..max_id; the counter is 1..max_id + 1 (max_id + 1: every id handed out).
  std::int64_t max_id = kMaxId;
  // The counter may lag the table: the load raises it past the newest row (events).
  bool raised_at_load = false;
};

template <typename T>
Counter counter(const char* kind, const char* table, const std::vector<T>& rows) {
  Counter c{kind, table};
  for (const T& r : rows) {
    c.smallest_id = c.rows == 0 ? r.id : std::min(c.smallest_id, r.id);
    c.largest_id = c.rows == 0 ? r.id : std::max(c.largest_id, r.id);
    ++c.rows;
  }
  return c;
}

// A counter's value: decimal digits only (std::stoll took "12abc" as 12 and " -3" as -3).
std::optional<std::int64_t> parse_counter(const std::string& text) {
  std::int64_t n = 0;
  const char* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, n);
  if (text.empty() || text[0] == '-' || error != std::errc() || at != end) return std::nullopt;
  return n;
}

std::string counter_problem(const Snapshot& s, const Counter& c) {
  const std::string key = std::string("next_id.") + c.kind;
  const std::string table = c.table == nullptr ? "" : std::string(c.table);
  if (c.rows > 0 && (c.smallest_id < 1 || c.largest_id > c.max_id))
    return "table " + table + " holds id " + std::to_string(c.smallest_id < 1 ? c.smallest_id : c.largest_id) +
           ": ids are 1.." + std::to_string(c.max_id);
  const auto it = s.meta.find(key);
  if (it == s.meta.end()) {
    if (c.rows == 0 || c.raised_at_load) return "";
    return "meta " + key + " is missing, but table " + table + " holds ids up to " + std::to_string(c.largest_id) +
           " (the next " + c.kind + " would take id 1, in use)";
  }
  const std::optional<std::int64_t> next = parse_counter(it->second);
  if (!next) return "meta " + key + " is not a count: \"" + it->second.substr(0, 40) + "\"";
  if (*next < 1 || *next > c.max_id + 1)
    return "meta " + key + " is " + it->second + ": a counter is 1.." + std::to_string(c.max_id + 1) +
           " (the ids it would hand out would overflow or not fit the array's tables)";
  if (c.rows > 0 && !c.raised_at_load && *next <= c.largest_id)
    return "meta " + key + " is " + it->second + ", not above the largest id in table " + table + " (" +
           std::to_string(c.largest_id) + "): the next " + c.kind + " would take the id of one in use";
  return "";
}

std::string counters_problem(const Snapshot& s) {
  Counter volumes = counter("volume", "volumes", s.volumes);
  volumes.max_id = kMaxVolumeId;
  // An event's id is given at commit and the load raises the counter past the newest event
  // (Array::restore): only ids past the ceiling are refused.
  Counter events = counter("event", "events", s.events);
  events.raised_at_load = true;
  const std::vector<Counter> counters = {
      counter("pool", "pools", s.pools),       volumes,
      counter("host", "hosts", s.hosts),       counter("mapping", "mappings", s.mappings),
      counter("qos_policy", "qos_policies", s.qos_policies),
      Counter{"fault", nullptr},  // faults are kept in memory: only the counter is stored
      events,
  };
  for (const Counter& c : counters)
    if (std::string p = counter_problem(s, c); !p.empty()) return p;
  return "";
}

std::string volume_problem(const Volume& v, const config::SystemPreset& preset) {
  const std::string row = "table volumes, volume " + std::to_string(v.id) + " (\"" + v.name + "\"): ";
  if (v.capacity_bytes < kSectorBytes || v.capacity_bytes > kMaxVolumeBytes)
    return row + "capacity_bytes " + std::to_string(v.capacity_bytes) + " is not between " +
           std::to_string(kSectorBytes) + " and " + std::to_string(kMaxVolumeBytes) + " (1 PiB)";
  if (v.capacity_bytes % kSectorBytes != 0)
    return row + "capacity_bytes " + std::to_string(v.capacity_bytes) + " is not a multiple of " +
           std::to_string(kSectorBytes);
  if (v.preferred_controller < 1 || v.preferred_controller > preset.controllers.count)
    return row + "preferred_controller " + std::to_string(v.preferred_controller) + " is not a controller (1.." +
           std::to_string(preset.controllers.count) + ")";
  return "";
}

std::string volumes_problem(const Snapshot& s, const config::SystemPreset& preset) {
  if (s.volumes.size() > kMaxVolumes)
    return "table volumes holds " + std::to_string(s.volumes.size()) + " volumes, more than the " +
           std::to_string(kMaxVolumes) + " an array holds";
  std::int64_t provisioned = 0;  // each at most 1 PiB once checked, at most 4,096 of them: no overflow
  for (const Volume& v : s.volumes) {
    if (std::string p = volume_problem(v, preset); !p.empty()) return p;
    provisioned += v.capacity_bytes;
  }
  if (provisioned > kMaxProvisionedBytes)
    return "table volumes: the volumes provision " + std::to_string(provisioned) + " bytes together, more than the " +
           std::to_string(kMaxProvisionedBytes) + " (16 PiB) an array's volumes may";
  return "";
}

}  // namespace

std::string snapshot_problem(const Snapshot& s, const config::SystemPreset& preset) {
  if (std::string p = counters_problem(s); !p.empty()) return p;
  return volumes_problem(s, preset);
}

}  // namespace afasim::controller
