#include "controller/alerts.h"

#include <cstdio>
#include <tuple>

#include "controller/array.h"
#include "sim/assert.h"

namespace afasim::controller {
namespace {

std::string percent_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", p);
  return buf;
}

Alert make(std::string kind, std::string object, Severity severity, std::string message) {
  Alert a;
  a.kind = std::move(kind);
  a.object = std::move(object);
  a.severity = severity;
  a.message = std::move(message);
  return a;
}

// The severity of a pool's i-th threshold of n (the last one is the most urgent).
Severity threshold_severity(std::size_t i, std::size_t n) {
  if (i + 1 == n && n > 1) return Severity::kCritical;
  return i == 0 ? Severity::kWarning : Severity::kError;
}

}  // namespace

AlertMonitor::AlertMonitor(Array& array, AlertOptions options) : array_(array), options_(options) {
  AFASIM_ASSERT(options_.drive_wear_limit_percent > 0 && options_.drive_wear_limit_percent <= 1000,
                "drive wear limit in (0, 1000] %");
  restore_from_events();
}

void AlertMonitor::restore_from_events() {
  const auto all = array_.events(0, array_.event_count());  // newest first
  for (auto it = all.items.rbegin(); it != all.items.rend(); ++it) {
    const Event& e = *it;
    if (e.category != kCategory) continue;
    const bool raised = e.message.rfind(kRaisedPrefix, 0) == 0;
    const bool cleared = e.message.rfind(kClearedPrefix, 0) == 0;
    if (!raised && !cleared) continue;
    const std::string rest = e.message.substr(std::string(raised ? kRaisedPrefix : kClearedPrefix).size());
    const auto colon = rest.find(": ");
    if (colon == std::string::npos) continue;
    Key key{rest.substr(0, colon), e.object};
    if (cleared) {
      active_.erase(key);
      continue;
    }
    Alert a = make(key.first, e.object, e.severity, rest.substr(colon + 2));
    a.raised_ns = e.time_ns;
    a.raised_event_id = e.id;
    active_[key] = std::move(a);
  }
}

void AlertMonitor::add_space_and_wear(std::map<Key, Alert>& now) const {
  auto add = [&now](Alert a) { now.emplace(Key{a.kind, a.object}, std::move(a)); };
  for (const auto& [id, pool] : array_.pools()) {
    const PoolCapacity cap = array_.pool_capacity(id);
    if (cap.raw_usable_bytes <= 0) continue;
    const double used = 100.0 * static_cast<double>(cap.raw_allocated_bytes) / static_cast<double>(cap.raw_usable_bytes);
    const auto& t = pool.space_thresholds_percent;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (used < t[i]) continue;
      add(make("pool_space_" + std::to_string(t[i]), "pool/" + std::to_string(id), threshold_severity(i, t.size()),
               "pool " + pool.name + " is " + percent_text(used) + " allocated, at or above its " +
                   std::to_string(t[i]) + " % threshold"));
    }
  }
  for (const DriveWear& w : array_.wear().drive_wear_all()) {
    if (!w.in_service || w.percent_endurance_used < options_.drive_wear_limit_percent) continue;
    add(make("drive_wear", "drive/" + std::to_string(w.drive + 1), Severity::kWarning,
             "SSD " + std::to_string(w.drive + 1) + " has used " + percent_text(w.percent_endurance_used) +
                 " of its rated endurance (limit " + percent_text(options_.drive_wear_limit_percent) + ")"));
  }
}

// A failed or pulled SSD stays an alert until it is replaced: the rebuild restores
// redundancy (volume_degraded clears) but not the spare space the rebuild used.
void AlertMonitor::add_drives_and_volumes(std::map<Key, Alert>& now) const {
  auto add = [&now](Alert a) { now.emplace(Key{a.kind, a.object}, std::move(a)); };
  for (const DriveInfo& d : array_.drives()) {
    if (d.state == DriveState::kHealthy) continue;
    add(make("drive_failed", "drive/" + std::to_string(d.id), Severity::kError,
             "SSD " + std::to_string(d.id) + " (DataPac " + std::to_string(d.datapac_id) + " slot " +
                 std::to_string(d.slot) + ") " + (d.state == DriveState::kFailed ? "has failed" : "was pulled") +
                 ": replace it"));
  }
  for (const auto& [id, v] : array_.volumes()) {
    const VolumeState s = array_.volume_state(id);
    if (s == VolumeState::kOnline) continue;
    const bool failed = s == VolumeState::kFailed;
    add(make(failed ? "volume_failed" : "volume_degraded", "volume/" + std::to_string(id),
             failed ? Severity::kCritical : Severity::kWarning,
             "volume " + v.name + (failed ? " has lost data" : " is degraded: a member is lost, redundancy reduced")));
  }
}

// A failed controller stays an alert until it is active again: restored, it boots and
// syncs with its peer before it serves (a power cycle's boot raises nothing).
void AlertMonitor::add_controllers_and_power(std::map<Key, Alert>& now) const {
  auto add = [&now](Alert a) { now.emplace(Key{a.kind, a.object}, std::move(a)); };
  for (const ControllerInfo& c : array_.controllers()) {
    const Key key{"controller_failed", "controller/" + std::to_string(c.id)};
    const bool recovering = (c.state == ControllerState::kBooting || c.state == ControllerState::kSyncing) &&
                            active_.count(key) != 0;
    if (c.state != ControllerState::kFailed && !recovering) continue;
    add(make(key.first, key.second, Severity::kCritical,
             "controller " + c.name +
                 (recovering ? " failed and is not serving yet (" + std::string(to_string(c.state)) + ")" : " has failed")));
  }
  const PowerStatus p = array_.data_path().power_status();
  if (!p.mains_on) add(make("mains_lost", "", Severity::kCritical, "the mains are off"));
  if (p.supercap_degraded)
    add(make("supercap_degraded", "", Severity::kWarning,
             "a supercap pack is degraded: the write cache runs write-through"));
  if (!p.link_up)
    add(make("link_down", "", Severity::kError, "the inter-controller link is down: no cache mirroring"));
}

// A state saved before hosts, mappings and QoS policies were bounded (hostile round 23)
// may hold more than the bound: it loads, and creating more is refused until fewer.
void AlertMonitor::add_object_limits(std::map<Key, Alert>& now) const {
  for (const auto& [object, table, rows, most] :
       {std::tuple{"hosts", "hosts", array_.hosts().size(), kMaxHosts},
        std::tuple{"mappings", "mappings", array_.mappings().size(), kMaxMappings},
        std::tuple{"qos-policies", "QoS policies", array_.qos_policies().size(), kMaxQosPolicies}})
    if (rows > most)
      now.emplace(Key{"objects_over_limit", object},
                  make("objects_over_limit", object, Severity::kWarning,
                       "the array holds " + std::to_string(rows) + " " + table + ", more than the " +
                           std::to_string(most) + " it supports: creating " + table +
                           " is refused until fewer remain"));
}

std::map<AlertMonitor::Key, Alert> AlertMonitor::conditions() const {
  std::map<Key, Alert> now;
  add_object_limits(now);
  add_space_and_wear(now);
  add_drives_and_volumes(now);
  add_controllers_and_power(now);
  return now;
}

void AlertMonitor::evaluate() {
  std::map<Key, Alert> now = conditions();
  for (auto it = active_.begin(); it != active_.end();) {
    if (now.count(it->first) != 0) {
      ++it;
      continue;
    }
    const Alert& a = it->second;
    // Gone because a worse alert of the same object took its place (a degraded volume that
    // failed): not "resolved" (hostile review 42).
    std::string by;
    for (const auto& [key, other] : now)
      if (key.second == a.object && key.first != a.kind && other.severity > a.severity) by = key.first;
    char lasted[96];
    std::snprintf(lasted, sizeof lasted, "%s%s after %.1f s (was: ", by.empty() ? "resolved" : "superseded by ",
                  by.c_str(), sim::to_seconds(array_.simulator().now() - a.raised_ns));
    // Uncommitted (a full host disk), the event is still in the log in memory (Array::log_event):
    // the alert's state follows it, or the next second raised it again (45,730 "alert raised"
    // events in 33 s; hostile round 18).
    (void)array_.log_event(Severity::kInfo, kCategory, a.object, kClearedPrefix + a.kind + ": " + lasted + a.message + ")");
    it = active_.erase(it);
  }
  for (auto& [key, a] : now) {
    auto found = active_.find(key);
    if (found != active_.end()) {
      found->second.message = a.message;
      continue;
    }
    (void)array_.log_event(a.severity, kCategory, a.object, kRaisedPrefix + a.kind + ": " + a.message);
    a.raised_ns = array_.simulator().now();
    a.raised_event_id = array_.events(0, 1).items.front().id;
    active_.emplace(key, std::move(a));
  }
}

std::vector<Alert> AlertMonitor::active() const {
  std::vector<Alert> out;
  for (const auto& [key, a] : active_) out.push_back(a);
  return out;
}

}  // namespace afasim::controller
