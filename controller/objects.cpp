#include "controller/objects.h"

#include <algorithm>

namespace afasim::controller {

std::string_view to_string(ControllerState s) {
  switch (s) {
    case ControllerState::kOff: return "off";
    case ControllerState::kBooting: return "booting";
    case ControllerState::kSyncing: return "syncing";
    case ControllerState::kActive: return "active";
    case ControllerState::kFailed: return "failed";
    case ControllerState::kVaulting: return "vaulting";
  }
  return "?";
}

std::string_view to_string(CacheMode m) {
  switch (m) {
    case CacheMode::kNone: return "none";
    case CacheMode::kWriteBack: return "write-back";
    case CacheMode::kWriteThrough: return "write-through";
  }
  return "?";
}

std::string_view to_string(DriveState s) {
  switch (s) {
    case DriveState::kHealthy: return "healthy";
    case DriveState::kFailed: return "failed";
    case DriveState::kRemoved: return "removed";
  }
  return "?";
}

std::string_view to_string(Provisioning p) { return p == Provisioning::kThin ? "thin" : "fixed"; }

std::string_view to_string(InitiatorType t) {
  switch (t) {
    case InitiatorType::kFc: return "fc";
    case InitiatorType::kIscsi: return "iscsi";
    case InitiatorType::kNbd: return "nbd";
  }
  return "?";
}

std::string_view to_string(MappingAccess a) {
  return a == MappingAccess::kReadWrite ? "read_write" : "read_only";
}

std::string_view to_string(VolumeState s) {
  switch (s) {
    case VolumeState::kOnline: return "online";
    case VolumeState::kDegraded: return "degraded";
    case VolumeState::kFailed: return "failed";
  }
  return "?";
}

static_assert(std::is_sorted(kEventCategories.begin(), kEventCategories.end()),
              "kEventCategories is searched by bisection");

bool is_event_category(std::string_view category) {
  return std::binary_search(kEventCategories.begin(), kEventCategories.end(), category);
}

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
    case Severity::kCritical: return "critical";
  }
  return "?";
}

std::optional<Id> parse_object_id(std::string_view segment) {
  if (segment.empty() || segment.size() > 18 || segment[0] == '0') return std::nullopt;
  Id id = 0;
  for (char ch : segment) {
    if (ch < '0' || ch > '9') return std::nullopt;
    id = id * 10 + (ch - '0');
  }
  return id;
}

std::optional<Provisioning> parse_provisioning(std::string_view s) {
  if (s == "thin") return Provisioning::kThin;
  if (s == "fixed") return Provisioning::kFixed;
  return std::nullopt;
}

std::optional<InitiatorType> parse_initiator_type(std::string_view s) {
  for (auto t : {InitiatorType::kFc, InitiatorType::kIscsi, InitiatorType::kNbd})
    if (to_string(t) == s) return t;
  return std::nullopt;
}

std::optional<MappingAccess> parse_mapping_access(std::string_view s) {
  if (s == "read_write") return MappingAccess::kReadWrite;
  if (s == "read_only") return MappingAccess::kReadOnly;
  return std::nullopt;
}

}  // namespace afasim::controller
