// controller::snapshot_problem (controller/state_check.h): what the loaded rows say together.
#include "controller/state_check.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "config/size.h"

namespace afasim::controller {

std::string preset_shape_hint(const config::SystemPreset& preset, const std::string& refusal) {
  const bool shape = refusal.find("unknown drive index") != std::string::npos ||
                     refusal.find("out of range") != std::string::npos ||
                     refusal.find("which does not exist") != std::string::npos;
  if (!shape) return "";
  const int drives = preset.drive_count();
  return " (this system, " + preset.name + ", has " + std::to_string(drives) + " SSDs, drive indexes 0.." +
         std::to_string(drives - 1) + ", of " + config::human_bytes(preset.ssd.capacity_bytes) +
         "; a state opens only with the presets it was made with: was --config-dir or a preset in it changed?)";
}

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

// The saved clock (meta clock_ns, when present) and every event's time: 0..kMaxClockNs.
std::string clock_problem(const Snapshot& s) {
  const auto it = s.meta.find("clock_ns");
  if (it != s.meta.end()) {
    const std::optional<std::int64_t> t = parse_counter(it->second);
    if (!t || *t > kMaxClockNs)
      return "meta clock_ns is \"" + it->second.substr(0, 40) + "\": a simulated time is 0.." +
             std::to_string(kMaxClockNs) + " ns (100 years)";
  }
  for (const Event& e : s.events)
    if (e.time_ns < 0 || e.time_ns > kMaxClockNs)
      return "table events, event " + std::to_string(e.id) + ": time_ns " + std::to_string(e.time_ns) +
             " is not between 0 and " + std::to_string(kMaxClockNs) + " (100 years)";
  return "";
}

std::string qos_rows_problem(const Snapshot& s) {
  std::map<Id, const QosPolicy*> policies;
  for (const QosPolicy& p : s.qos_policies) {
    const std::string row = "table qos_policies, policy " + std::to_string(p.id) + " (\"" + p.name + "\")";
    if (std::string problem = qos_problem(p.qos, row); !problem.empty()) return problem;
    policies[p.id] = &p;
  }
  for (const Volume& v : s.volumes) {
    const std::string row = "table volumes, volume " + std::to_string(v.id) + " (\"" + v.name + "\")";
    if (std::string problem = qos_problem(v.qos, row); !problem.empty()) return problem;
    if (!v.qos_policy_id) continue;
    const auto it = policies.find(*v.qos_policy_id);
    if (it == policies.end())
      return row + ": qos_policy_id " + std::to_string(*v.qos_policy_id) + " names no row of table qos_policies";
    if (std::string problem = qos_problem(overlay_qos(it->second->qos, v.qos), row + " with its policy"); !problem.empty())
      return problem;
  }
  return "";
}

std::string mappings_problem(const Snapshot& s) {
  std::set<Id> volumes, hosts;
  for (const Volume& v : s.volumes) volumes.insert(v.id);
  for (const Host& h : s.hosts) hosts.insert(h.id);
  std::map<std::pair<Id, std::int64_t>, Id> luns;  // (host, LUN) -> mapping
  std::map<std::pair<Id, Id>, Id> pairs;            // (host, volume) -> mapping
  for (const Mapping& m : s.mappings) {
    const std::string row = "table mappings, mapping " + std::to_string(m.id) + ": ";
    if (!volumes.count(m.volume_id)) return row + "volume_id " + std::to_string(m.volume_id) + " names no volume";
    if (!hosts.count(m.host_id)) return row + "host_id " + std::to_string(m.host_id) + " names no host";
    if (m.lun < 0 || m.lun > kMaxLun)
      return row + "lun " + std::to_string(m.lun) + " is not between 0 and " + std::to_string(kMaxLun);
    if (const auto [at, fresh] = luns.emplace(std::pair{m.host_id, m.lun}, m.id); !fresh)
      return row + "host " + std::to_string(m.host_id) + " already has LUN " + std::to_string(m.lun) + " (mapping " +
             std::to_string(at->second) + ")";
    if (const auto [at, fresh] = pairs.emplace(std::pair{m.host_id, m.volume_id}, m.id); !fresh)
      return row + "host " + std::to_string(m.host_id) + " already sees volume " + std::to_string(m.volume_id) +
             " (mapping " + std::to_string(at->second) + ")";
  }
  return "";
}

}  // namespace

std::string qos_problem(const QosSettings& q, const std::string& context) {
  for (const auto& [field, v] : {std::pair{"min_iops", q.min_iops}, std::pair{"max_iops", q.max_iops},
                                 std::pair{"burst_iops", q.burst_iops}})
    if (v && (*v < 0 || *v > kMaxIops))
      return context + ": " + field + " must be between 0 and " + std::to_string(kMaxIops) + ", got " +
             std::to_string(*v);
  if (q.min_iops && q.max_iops && *q.min_iops > *q.max_iops)
    return context + ": min_iops (" + std::to_string(*q.min_iops) + ") must not exceed max_iops (" +
           std::to_string(*q.max_iops) + ")";
  if (q.burst_iops && !q.max_iops) return context + ": burst_iops needs max_iops (burst is a limit above max)";
  if (q.max_iops && q.burst_iops && *q.max_iops > *q.burst_iops)
    return context + ": max_iops (" + std::to_string(*q.max_iops) + ") must not exceed burst_iops (" +
           std::to_string(*q.burst_iops) + ")";
  if (q.min_iops && q.burst_iops && *q.min_iops > *q.burst_iops)
    return context + ": min_iops must not exceed burst_iops";
  return "";
}

std::string snapshot_problem(const Snapshot& s, const config::SystemPreset& preset) {
  for (const std::string& p : {counters_problem(s), volumes_problem(s, preset), clock_problem(s),
                               qos_rows_problem(s), mappings_problem(s)})
    if (!p.empty()) return p;
  return "";
}

}  // namespace afasim::controller
