// The array's managed objects (no data path): what the ReST API shows and SQLite keeps.
//
// Plain values. Ids are positive integers, unique per kind, never reused (even across
// restarts). `revision` starts at 1 and grows by one with every change; the API's ETag is
// derived from it. Sizes in bytes, rates per second, times in simulated nanoseconds.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pool/extent_allocator.h"
#include "pool/extent_record.h"
#include "raid/raid_type.h"
#include "sim/time.h"

namespace afasim::controller {

using Id = std::int64_t;

// The controller state machine (controller/controller_states.h, docs/controller-states.md).
enum class ControllerState { kOff, kBooting, kSyncing, kActive, kFailed, kVaulting };
enum class DriveState { kHealthy, kFailed, kRemoved };
enum class Provisioning { kThin, kFixed };
enum class InitiatorType { kFc, kIscsi, kNbd };
enum class MappingAccess { kReadWrite, kReadOnly };
enum class VolumeState { kOnline, kDegraded, kFailed };
enum class Severity { kInfo, kWarning, kError, kCritical };

std::string_view to_string(ControllerState s);
std::string_view to_string(DriveState s);
std::string_view to_string(Provisioning p);
std::string_view to_string(InitiatorType t);
std::string_view to_string(MappingAccess a);
std::string_view to_string(VolumeState s);
std::string_view to_string(Severity s);
std::optional<Provisioning> parse_provisioning(std::string_view s);
// An object's id as a path segment writes it: decimal digits, no sign, no leading zero,
// at most 18 digits (so "01" and "+1" name nothing, as the API's ids are written once).
// nullopt for anything else.
std::optional<Id> parse_object_id(std::string_view segment);
std::optional<InitiatorType> parse_initiator_type(std::string_view s);
std::optional<MappingAccess> parse_mapping_access(std::string_view s);

// QoS values in IOPS (DESIGN.md "QoS semantics"). Unset means: no reservation (min), no
// limit (max), burst equal to max (burst). Enforced by the QoS scheduler (issue 5).
struct QosSettings {
  std::optional<std::int64_t> min_iops;
  std::optional<std::int64_t> max_iops;
  std::optional<std::int64_t> burst_iops;
  bool empty() const { return !min_iops && !max_iops && !burst_iops; }
  bool operator==(const QosSettings&) const = default;
};

// A volume's effective QoS: its policy's values, each overridden by the volume's own where
// it has one (DESIGN.md "QoS semantics").
inline QosSettings overlay_qos(const QosSettings& policy, const QosSettings& own) {
  QosSettings q = policy;
  if (own.min_iops) q.min_iops = own.min_iops;
  if (own.max_iops) q.max_iops = own.max_iops;
  if (own.burst_iops) q.burst_iops = own.burst_iops;
  return q;
}

// Cache mode of a controller (docs/controller-states.md "The write cache"): write-back acks
// a write once it is in the owner's cache and mirrored into the peer's; write-through acks
// after the SSDs; none while the controller serves no I/O (off, booting, vaulting, failed).
enum class CacheMode { kNone, kWriteBack, kWriteThrough };
std::string_view to_string(CacheMode m);

struct ControllerInfo {
  Id id = 0;               // 1 or 2
  std::string name;        // "A", "B"
  ControllerState state = ControllerState::kActive;
  CacheMode cache_mode = CacheMode::kWriteBack;
  std::string cache_mode_reason;       // why write-through or none ("" when write-back)
  std::int64_t dirty_bytes = 0;        // written, acknowledged, not yet destaged (own volumes)
  std::int64_t cached_bytes = 0;       // dirty + clean bytes of its own volumes in its cache
  std::int64_t mirrored_bytes = 0;     // the peer's dirty bytes it holds a mirror copy of
  std::int64_t write_cache_bytes = 0;  // the write cache's size (docs/write-cache.md)
  std::int64_t owned_volumes = 0;      // volumes it owns now (ALUA active/optimized)
};

struct DriveInfo {
  Id id = 0;               // 1..drive_count, DataPac 1's first
  Id datapac_id = 0;
  int slot = 0;            // 1-based slot in its DataPac
  std::string model;       // SSD model name from the preset
  std::int64_t capacity_bytes = 0;  // nominal
  DriveState state = DriveState::kHealthy;
};

struct DataPacInfo {
  Id id = 0;               // 1 or 2
  std::string name;        // "DataPac 1"
  std::vector<Id> drive_ids;
};

struct Pool {
  Id id = 0;
  std::string name;
  std::vector<Id> datapac_ids;  // sorted, non-empty; a DataPac is in at most one pool
  // Low-space thresholds in percent of raw usable capacity; each crossing raises an event.
  std::vector<int> space_thresholds_percent{80, 90, 95};
  std::uint64_t revision = 1;
};

struct Volume {
  Id id = 0;
  std::string name;
  Id pool_id = 0;
  std::int64_t capacity_bytes = 0;        // host-visible size, a multiple of 512
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  Provisioning provisioning = Provisioning::kThin;
  Id preferred_controller = 1;
  QosSettings qos;                        // per-volume values; override the policy's
  std::optional<Id> qos_policy_id;
  VolumeState state = VolumeState::kOnline;
  sim::Time created_time_ns = 0;
  std::uint64_t revision = 1;
};

struct Initiator {
  InitiatorType type = InitiatorType::kFc;
  std::string address;  // fc: WWPN; iscsi: IQN/EUI; nbd: client name (see docs/api.md)
  bool operator==(const Initiator&) const = default;
};

struct Host {
  Id id = 0;
  std::string name;
  std::string description;
  std::vector<Initiator> initiators;
  std::uint64_t revision = 1;
};

struct Mapping {
  Id id = 0;
  Id volume_id = 0;
  Id host_id = 0;
  std::int64_t lun = 0;  // 0..kMaxLun, unique per host
  MappingAccess access = MappingAccess::kReadWrite;
  std::uint64_t revision = 1;
};

struct QosPolicy {
  Id id = 0;
  std::string name;
  QosSettings qos;
  std::uint64_t revision = 1;
};

// Where one extent of a volume lives: its RAID members (chunks on SSDs). Persisted so that
// a restarted array finds its data (thin map and placement). The thin map's (pool/).
using ExtentRecord = pool::ExtentRecord;

// A fault injected through the API or a scenario timeline (DESIGN.md "Faults").
struct FaultRecord {
  std::int64_t id = 0;
  sim::Time time_ns = 0;   // simulated time it took effect
  std::string type;        // "drive_fail", "drive_pull", "drive_replace", "drive_slow", ...
  Id drive = 0;            // for drive faults: drive id (1-based)
  double latency_multiplier = 1.0;  // drive_slow
  Id controller = 0;       // for controller_fail / controller_restore: 1 (A) or 2 (B)
  std::string result;      // what it did, or why it was refused
};

struct Event {
  std::int64_t id = 0;     // sequence number, 1-based, increasing
  sim::Time time_ns = 0;   // simulated time
  Severity severity = Severity::kInfo;
  std::string category;    // one of kEventCategories
  std::string object;      // "volume/7", "" for the array
  std::string message;
  std::string actor;       // the user whose request made it, "" for the array itself
};

// Every category an event may have, sorted: what GET /api/v1/events?kind= accepts (an
// unknown kind is a 400 listing these, not an empty answer). Array::make_event asserts that
// each event's category is one of them, so a new category is added here first
// (docs/observability.md lists them too).
inline constexpr std::array<std::string_view, 16> kEventCategories = {
    "alert", "cache", "controller", "drive", "host",   "mapping", "nbd",    "pool",
    "power", "qos",   "rebuild",    "scrub", "system", "user",    "volume", "wear"};
bool is_event_category(std::string_view category);

inline constexpr std::int64_t kMaxLun = 16383;  // SAM-5 flat space addressing
inline constexpr std::int64_t kSectorBytes = 512;
// Largest volume the array accepts: 1 PiB (the ISE's largest pool is under 37 TB; thin
// volumes may over-subscribe, but not absurdly).
inline constexpr std::int64_t kMaxVolumeBytes = 1LL << 50;
// Capacity the array's volumes may provision together: 16 PiB, some 350 times the ISE 860
// G3's 45 TB of usable flash. A thin volume's map holds an entry for every extent it may
// have (4 bytes per 64 MiB extent: 64 MiB of memory for a 1 PiB volume), written or not, so
// this keeps the maps within 1 GiB. Unbounded, 4,096 volumes of 1 PiB would need 256 GiB:
// the process was killed for lack of memory after a few hundred (67 MB each, measured).
inline constexpr std::int64_t kMaxProvisionedBytes = 1LL << 54;
// Volumes an array holds at most. An assumption: the ISE spec sheets publish no figure, and
// arrays of its class take 1,024 to 4,096 LUNs. It also bounds the management plane, whose
// every change looks at every volume (capacity, snapshot, reservations).
inline constexpr std::size_t kMaxVolumes = 4096;
// Hosts, mappings and QoS policies an array holds at most. Assumptions, as kMaxVolumes: a host
// per volume, four paths' worth of mappings per volume, a policy per volume. They bound the
// management plane, which runs on the model thread: without them an operator adding hosts made
// every request wait (hostile round 23: 13,900 hosts, 11 s per request).
inline constexpr std::size_t kMaxHosts = 4096;
inline constexpr std::size_t kMaxMappings = 4 * kMaxVolumes;
inline constexpr std::size_t kMaxQosPolicies = 4096;
inline constexpr std::int64_t kMaxIops = 100'000'000;

}  // namespace afasim::controller
