// controller::AlertMonitor — conditions a storage administrator must act on, raised and
// cleared as events (docs/observability.md "Alerts").
//
// evaluate() looks at the array and compares what is wrong now with the alerts already
// active: a new condition is raised (an event of category "alert", message "alert raised:
// KIND: text", the condition's severity), a condition gone is cleared (an info event
// "alert cleared: KIND: text"). An alert is one (kind, object) pair:
//   pool_space_N       pool/ID        raw allocation at or above the pool's N % threshold
//   drive_wear         drive/ID       an SSD in service at or above the wear limit
//   drive_failed       drive/ID       an SSD failed or was pulled, until it is replaced
//   volume_degraded    volume/ID      redundancy reduced (a member lost)
//   volume_failed      volume/ID      data lost
//   controller_failed  controller/ID  a controller failed, until it is active again
//   mains_lost         (array)        the mains are off
//   supercap_degraded  (array)        a supercap pack is degraded (cache write-through)
//   link_down          (array)        the inter-controller link is cut
// Active alerts survive a restart: the constructor replays the alert events of the event log
// (the newest raised/cleared event of each alert decides), so a condition that persists is
// not raised twice. An event that cannot be committed (the journal fails: a full host disk)
// is still in the event log in memory, and the alert's state follows it: raised once, not
// every evaluation (after a restart, the alert is raised again if its condition persists).
//
// Not thread-safe: belongs to the model thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "controller/objects.h"
#include "sim/time.h"

namespace afasim::controller {

class Array;

struct AlertOptions {
  // Wear limit, percent of rated endurance used, (0, 1000]. Assumption: 90 %, the level
  // at which NVMe's "percentage used" is commonly alerted on, leaving the last tenth of the
  // rated life to plan a replacement.
  double drive_wear_limit_percent = 90;
};

struct Alert {
  std::string kind;    // "volume_degraded", "pool_space_90", ...
  std::string object;  // "volume/3", "" for the array
  Severity severity = Severity::kWarning;
  std::string message;              // what is wrong, as of the last evaluation
  sim::Time raised_ns = 0;          // simulated time it was raised
  std::int64_t raised_event_id = 0;
};

class AlertMonitor {
 public:
  // REQUIRES: array outlives the monitor. kUnprocessable-style option errors are assertions:
  // Telemetry checks options first.
  AlertMonitor(Array& array, AlertOptions options);

  // Raises and clears alerts for the array's state now.
  void evaluate();
  // Active alerts, by (kind, object).
  std::vector<Alert> active() const;

  static constexpr const char* kCategory = "alert";
  static constexpr const char* kRaisedPrefix = "alert raised: ";
  static constexpr const char* kClearedPrefix = "alert cleared: ";

 private:
  using Key = std::pair<std::string, std::string>;  // (kind, object)
  std::map<Key, Alert> conditions() const;
  void add_space_and_wear(std::map<Key, Alert>& now) const;
  void add_drives_and_volumes(std::map<Key, Alert>& now) const;
  void add_controllers_and_power(std::map<Key, Alert>& now) const;
  void add_object_limits(std::map<Key, Alert>& now) const;
  void restore_from_events();

  Array& array_;
  AlertOptions options_;
  std::map<Key, Alert> active_;
};

}  // namespace afasim::controller
