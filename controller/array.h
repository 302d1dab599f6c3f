// controller::Array — the simulated ISE: its hardware as the preset builds it, and the
// management plane over it (pools, volumes, hosts, mappings, QoS policies, events).
//
// Every mutating call validates first, then hands one ChangeSet to the Journal, then
// applies it: a failed call changes nothing, in memory or on disk. Errors (sim::Status):
//   kNotFound            the id (or a referenced id) does not exist
//   kPreconditionFailed  `expected_revision` given and stale (ETag / If-Match)
//   kConflict            a name is taken, a DataPac is in a pool, a LUN is taken, a volume
//                        is mapped, a policy is in use, a pool is not empty
//   kUnprocessable       a value is out of range or inconsistent (min > max, shrink, RAID
//                        type the pool cannot hold, bad WWPN...)
//   kNoSpace             a fixed volume (or its growth) does not fit in the pool
//   kUnavailable/kInternal  the journal could not commit
// Single-threaded: the Array belongs to the model thread (DESIGN.md); other threads reach it
// through the serve runtime's inbox.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/preset.h"
#include "controller/data_path.h"
#include "controller/io.h"
#include "controller/journal.h"
#include "controller/objects.h"
#include "controller/wear_leveler.h"
#include "pool/capacity.h"
#include "qos/admission.h"
#include "qos/scheduler.h"
#include "sim/simulator.h"
#include "sim/status.h"

namespace afasim::controller {

// Capacity of one pool (Swordfish words, DESIGN.md). Bytes.
struct PoolCapacity {
  std::int64_t pre_raid_bytes = 0;       // Σ SSDs' pre-RAID bytes
  std::int64_t raw_usable_bytes = 0;     // Σ SSDs' raw usable bytes (docs/capacity.md)
  std::int64_t raw_allocated_bytes = 0;  // SSD space held by allocated extents, RAID included
  std::int64_t raw_free_bytes = 0;       // raw_usable − raw_allocated
  std::int64_t provisioned_bytes = 0;    // Σ volumes' capacity_bytes (thin and fixed)
  std::int64_t allocated_bytes = 0;      // Σ volumes' allocated extents × extent_bytes
  // What raw_usable / raw_free hold for each RAID type this pool offers.
  std::map<raid::RaidType, std::int64_t> usable_bytes;
  std::map<raid::RaidType, std::int64_t> free_bytes;
};

struct PoolSpec {
  std::string name;
  std::vector<Id> datapac_ids;
  std::optional<std::vector<int>> space_thresholds_percent;  // default 80, 90, 95
};
struct PoolPatch {
  std::optional<std::string> name;
  std::optional<std::vector<int>> space_thresholds_percent;
};

struct VolumeSpec {
  std::string name;
  std::optional<Id> pool_id;               // default: the only pool, if there is one
  std::int64_t capacity_bytes = 0;
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  Provisioning provisioning = Provisioning::kThin;
  std::optional<Id> preferred_controller;  // default: the controller preferred by fewer volumes
  QosSettings qos;
  std::optional<Id> qos_policy_id;
};
// A field left nullopt is unchanged. For the QoS fields the inner optional is the new value
// (nullopt inside = clear it).
struct VolumePatch {
  std::optional<std::string> name;
  std::optional<std::int64_t> capacity_bytes;  // grow only
  std::optional<Id> preferred_controller;
  std::optional<std::optional<std::int64_t>> min_iops;
  std::optional<std::optional<std::int64_t>> max_iops;
  std::optional<std::optional<std::int64_t>> burst_iops;
  std::optional<std::optional<Id>> qos_policy_id;
};

struct HostSpec {
  std::string name;
  std::string description;
  std::vector<Initiator> initiators;
};
struct HostPatch {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::vector<Initiator>> initiators;
};

struct MappingSpec {
  Id volume_id = 0;
  Id host_id = 0;
  std::optional<std::int64_t> lun;  // default: the host's lowest free LUN
  MappingAccess access = MappingAccess::kReadWrite;
};

struct QosPolicySpec {
  std::string name;
  QosSettings qos;
};
struct QosPolicyPatch {
  std::optional<std::string> name;
  std::optional<std::optional<std::int64_t>> min_iops;
  std::optional<std::optional<std::int64_t>> max_iops;
  std::optional<std::optional<std::int64_t>> burst_iops;
};

// How the array runs QoS (docs/qos.md).
struct QosOptions {
  // false: host I/O goes straight to the data path, as before QoS existed — no queues, no
  // reservations, no limits (QoS settings are still stored, validated and admitted). For
  // side-by-side measurements of what the scheduler costs or changes.
  bool enabled = true;
  qos::SchedulerOptions scheduler;
  // Share of a controller's cores that admission control lets reservations (min_iops) take,
  // percent, 1..100. Assumption: 90 leaves a tenth for I/O the cost curve undercharges (RAID 5
  // writes crossing strips, errors, trims) and for the dispatch slack below.
  int reservable_percent = 90;
  // The scheduler hands a controller more I/O while the earliest of its cores frees within
  // this; beyond it, requests wait in the scheduler, where the reservation and limit tags
  // order them. Assumption: 100 µs, a little over two 4 KiB reads of core time — enough that
  // the cores never idle while the first stages of a write (host port, data mover, a few µs)
  // run, short enough that an I/O the scheduler favours starts within ~0.1 ms. Range
  // [0, 100 ms].
  sim::Time dispatch_backlog_ns = 100 * sim::kMicrosecond;
  // I/Os one controller may have in the data path at once, whatever the cores' backlog: the
  // bound for workloads whose bottleneck is not the cores (large I/O on the data movers, a slow
  // SSD). Assumption: 256, above the ~40 a saturated controller holds with 4 KiB I/O
  // (142,000 IOPS × ~0.25 ms in the data path) so that it never limits throughput there.
  // Range [1, 1 << 20].
  int outstanding_ios_max = 256;
};

struct ArrayOptions {
  DataPathOptions data_path;
  QosOptions qos;
  WearLevelingOptions wear;  // docs/wear-leveling.md
};

// The fields of a FaultSpec a fault type takes, as bits of FaultTypeInfo::fields.
enum FaultField : unsigned {
  kFaultDrive = 1u << 0,              // FaultSpec::drive
  kFaultLatencyMultiplier = 1u << 1,  // FaultSpec::latency_multiplier
  kFaultController = 1u << 2,         // FaultSpec::controller
};

// A fault type inject_fault knows and the fields it takes: every one of them is required,
// and no other may be given. The one table both readers of faults check against (the ReST
// API, api/endpoints.cpp, and the scenario loader, workload/scenario.cpp); adding a type is
// one line here and its case in Array::inject_fault.
struct FaultTypeInfo {
  std::string_view name;
  unsigned fields = 0;  // FaultField bits
};
// clang-format off
inline constexpr FaultTypeInfo kFaultTypes[] = {
    {"drive_fail",          kFaultDrive},
    {"drive_pull",          kFaultDrive},
    {"drive_replace",       kFaultDrive},
    {"drive_slow",          kFaultDrive | kFaultLatencyMultiplier},
    {"drive_restore_speed", kFaultDrive},
    {"controller_fail",     kFaultController},
    {"controller_restore",  kFaultController},
    {"link_cut",            0},
    {"link_restore",        0},
    {"power_loss",          0},
    {"power_restore",       0},
    {"supercap_degrade",    0},
    {"supercap_restore",    0},
};
// clang-format on

// The entry of kFaultTypes named `type`; nullptr when there is none.
constexpr const FaultTypeInfo* find_fault_type(std::string_view type) {
  for (const FaultTypeInfo& t : kFaultTypes)
    if (t.name == type) return &t;
  return nullptr;
}

// The names of kFaultTypes, comma-separated, for error messages.
std::string fault_type_names();

// A fault to inject now (DESIGN.md "Faults"). Drive faults name the drive by id (1-based),
// controller_fail / controller_restore the controller (1 = A, 2 = B); link, power and
// supercap faults name nothing (kFaultTypes says which type takes which field).
struct FaultSpec {
  std::string type;  // one of kFaultTypes
  Id drive = 0;
  double latency_multiplier = 1.0;  // drive_slow: DataPath::kLatencyMultiplierMin..Max
  Id controller = 0;
};

template <typename T>
struct Page {
  std::vector<T> items;
  std::int64_t total = 0;
};

class Array : private qos::Dispatcher {
 public:
  // Builds the array for `preset` and restores `snapshot`. On first boot (an empty
  // snapshot) it creates one pool spanning both DataPacs, as shipped, and commits that.
  // Fails with kPreconditionFailed when the snapshot belongs to another system preset.
  // REQUIRES: sim and journal outlive the Array.
  static sim::Result<std::unique_ptr<Array>> open(sim::Simulator& sim,
                                                  const config::Catalog& catalog,
                                                  const config::SystemPreset& preset,
                                                  Journal& journal, const Snapshot& snapshot,
                                                  ArrayOptions options = {});

  sim::Simulator& simulator() { return sim_; }
  const config::SystemPreset& preset() const { return preset_; }
  const pool::CapacityModel& capacity_model() const { return capacity_model_; }
  // Host bytes per extent of `type`, the unit of thin allocation (docs/capacity.md).
  std::int64_t extent_bytes(raid::RaidType type = raid::RaidType::kRaid10) const;
  DataPath& data_path() { return *data_; }
  const DataPath& data_path() const { return *data_; }
  // Array-level wear leveling: per-SSD wear, the leveler, projected life.
  WearLeveler& wear() { return *wear_; }
  const WearLeveler& wear() const { return *wear_; }

  // Host I/O into the model (DESIGN.md "One host write"): the volume's QoS queue, then the data
  // path; `done` runs at the simulated completion time with the outcome, its submit_time the
  // time of this call (QoS wait included). A volume whose QoS queue is full refuses the I/O
  // with kUnavailable (completed at once). Never blocks; `done` never runs inside this call.
  void submit(const HostIo& io, IoCallback done);
  // The volume's QoS figures now (current IOPS, time throttled, burst credit); nullopt for an
  // unknown volume.
  std::optional<qos::VolumeStatus> qos_status(Id volume_id) const { return qos_->status(volume_id); }
  const qos::Scheduler& qos_scheduler() const { return *qos_; }
  // What each controller can guarantee to reservations, per RAID type (docs/qos.md
  // "Admission control"): reservable_percent of its cores ÷ the core time of a 4 KiB write.
  const qos::ReservableCapacity& reservable_capacity() const { return reservable_; }
  // online, degraded (a member lost, redundancy reduced) or failed (data lost).
  VolumeState volume_state(Id volume_id) const { return data_->volume_state(volume_id); }

  // Faults (DESIGN.md "Faults", docs/controller-states.md), now. On success the record, its
  // id from a counter persisted with the fault's events (ids never repeat, even across
  // restarts). kNotFound for an unknown drive or controller, kConflict when the drive,
  // controller, link or power is not in a state the fault applies to (a failed drive
  // failed again, the speed of a drive at normal speed restored, a failed drive slowed),
  // kUnprocessable for a multiplier out of range, kInvalidArgument for an unknown type. It
  // reads only the fields kFaultTypes gives the type; checking that the others are absent
  // is the reader's job (the API, the scenario loader).
  sim::Result<FaultRecord> inject_fault(const FaultSpec& spec);
  // The faults injected since this Array was opened, oldest first: the list is per run;
  // the event log keeps every fault across restarts.
  const std::vector<FaultRecord>& faults() const { return faults_; }

  // Hardware. Controller views are refreshed from the data path on each call.
  const std::vector<ControllerInfo>& controllers() const;
  const ControllerInfo* controller(Id id) const;
  const std::vector<DataPacInfo>& datapacs() const { return datapacs_; }
  const DataPacInfo* datapac(Id id) const;
  const std::vector<DriveInfo>& drives() const { return drives_; }
  const DriveInfo* drive(Id id) const;
  // The pool a DataPac belongs to, if any.
  std::optional<Id> pool_of_datapac(Id datapac_id) const;

  // Managed objects, by id (ascending).
  const std::map<Id, Pool>& pools() const { return pools_; }
  const std::map<Id, Volume>& volumes() const { return volumes_; }
  const std::map<Id, Host>& hosts() const { return hosts_; }
  const std::map<Id, Mapping>& mappings() const { return mappings_; }
  const std::map<Id, QosPolicy>& qos_policies() const { return qos_policies_; }
  const Pool* pool(Id id) const;
  const Volume* volume(Id id) const;
  const Volume* volume_by_name(const std::string& name) const;
  const Host* host(Id id) const;
  const Mapping* mapping(Id id) const;
  const QosPolicy* qos_policy(Id id) const;

  PoolCapacity pool_capacity(Id pool_id) const;
  // The QoS that applies to `v`: its own values, else its policy's.
  QosSettings effective_qos(const Volume& v) const;
  // Drive indexes (drive id − 1) of the pool's DataPacs.
  std::vector<int> pool_drives(const Pool& pool) const;
  // RAID types `pool` can hold (RAID10 needs both DataPacs: its mirrors pair across them).
  std::vector<raid::RaidType> raid_types_offered(const Pool& pool) const;
  // Raw SSD bytes `extents` extents of `type` hold.
  std::int64_t raw_bytes_for_extents(raid::RaidType type, std::int64_t extents) const;

  // Newest first.
  Page<Event> events(std::int64_t offset, std::int64_t limit) const;
  std::int64_t event_count() const { return static_cast<std::int64_t>(events_.size()); }

  sim::Result<Pool> create_pool(const PoolSpec& spec);
  sim::Result<Pool> update_pool(Id id, const PoolPatch& patch,
                                std::optional<std::uint64_t> expected_revision = {});
  sim::Status delete_pool(Id id, std::optional<std::uint64_t> expected_revision = {});

  sim::Result<Volume> create_volume(const VolumeSpec& spec);
  sim::Result<Volume> update_volume(Id id, const VolumePatch& patch,
                                    std::optional<std::uint64_t> expected_revision = {});
  sim::Status delete_volume(Id id, std::optional<std::uint64_t> expected_revision = {});

  sim::Result<Host> create_host(const HostSpec& spec);
  sim::Result<Host> update_host(Id id, const HostPatch& patch,
                                std::optional<std::uint64_t> expected_revision = {});
  sim::Status delete_host(Id id, std::optional<std::uint64_t> expected_revision = {});

  sim::Result<Mapping> create_mapping(const MappingSpec& spec);
  sim::Status delete_mapping(Id id, std::optional<std::uint64_t> expected_revision = {});

  sim::Result<QosPolicy> create_qos_policy(const QosPolicySpec& spec);
  sim::Result<QosPolicy> update_qos_policy(Id id, const QosPolicyPatch& patch,
                                           std::optional<std::uint64_t> expected_revision = {});
  sim::Status delete_qos_policy(Id id, std::optional<std::uint64_t> expected_revision = {});

  // Appends an event to the log (and the journal). For state changes the model makes.
  sim::Status log_event(Severity severity, std::string category, std::string object,
                        std::string message);

  // The user on whose behalf the following changes are made: the API sets it around each
  // request (issue 14: every mutation's event records who made it); "" while the array
  // acts on its own. Stamped on every event made meanwhile. Model thread.
  void set_actor(std::string actor) { actor_ = std::move(actor); }
  const std::string& actor() const { return actor_; }

  // Called after every committed event (for the serve log). Model thread.
  void set_event_listener(std::function<void(const Event&)> listener) {
    event_listener_ = std::move(listener);
  }

  // Persists the simulated clock so that a restarted serve resumes time where it stopped.
  sim::Status save_clock();
  // The clock a snapshot saved (0 when none).
  static sim::Time saved_clock(const Snapshot& snapshot);

  // Events kept in memory (and returned by events()); older ones stay in the journal.
  static constexpr std::size_t kEventsInMemory = 100'000;

 private:
  Array(sim::Simulator& sim, const config::Catalog& catalog, const config::SystemPreset& preset,
        Journal& journal);
  sim::Status restore(const Snapshot& snapshot);
  sim::Status start_data_path(const Snapshot& snapshot, ArrayOptions options);
  // Hardware state that outlives a restart (controller/hardware_state.cpp): failed and
  // pulled drives, slow drives, a failed controller, a degraded supercap, a cut link.
  std::string hardware_state() const;
  static constexpr const char* kMetaHardware = "hardware";
  // Applies the saved hardware state, resumes interrupted rebuilds, and logs one event
  // that says what came back. REQUIRES: start_data_path succeeded.
  sim::Status restore_hardware(const Snapshot& snapshot);
  sim::Status start_qos(const QosOptions& options);

  // qos::Dispatcher: resources are controllers (index = controller id − 1).
  sim::Time ready_time(int resource) override;
  void dispatch(std::uint64_t cookie) override;
  void finish_io(std::uint64_t cookie, const IoCompletion& done);
  // Completes `done` with `status` at once (in an event of its own, never inside submit()).
  void refuse_io(IoCallback done, sim::Status status);
  // Fails every request waiting in the QoS queues with `status` (power loss: I/O not yet
  // acknowledged fails, docs/controller-states.md "Power"), each at the current time.
  void fail_queued_io(const sim::Status& status);
  // The QoS of `v`, with `policy` standing in for its attached policy when given and the same.
  QosSettings effective_qos_with(const Volume& v, const QosPolicy* policy) const;
  // Every volume's reservation, with `changed` replacing (or adding) one volume and `policy`
  // replacing one policy.
  std::vector<qos::Reservation> reservations(const Volume* changed, const QosPolicy* policy) const;
  // Pushes `v`'s effective QoS and owner to the scheduler (after a committed change).
  void sync_qos(const Volume& v);
  // The data path changed an extent (thin allocation, unmap, rebuild): persist it.
  sim::Status on_extent_changed(DataPath::ExtentChange change, const ExtentRecord& record);
  void build_hardware();

  // The model side of inject_fault: checks the fault applies now and applies it.
  sim::Status apply_fault(const FaultSpec& spec);
  // Commits `changes` (plus the next-id counters) and applies them to memory.
  sim::Status commit(ChangeSet& changes);
  void apply(const ChangeSet& changes);
  Event make_event(Severity severity, std::string category, std::string object,
                   std::string message);
  Id next_id(const char* kind, ChangeSet& changes);

  sim::Status check_name(const std::string& what, const std::string& name) const;
  sim::Status check_qos(const QosSettings& qos, const std::string& context) const;
  sim::Status check_initiators(const std::vector<Initiator>& initiators, Id host_id) const;
  sim::Status check_revision(std::uint64_t actual, std::optional<std::uint64_t> expected,
                             const std::string& object) const;
  // Events for thresholds of `pool_id` crossed upward as its raw allocation goes from
  // `raw_before` to `raw_after`.
  void threshold_events(Id pool_id, std::int64_t raw_before, std::int64_t raw_after, ChangeSet& changes);

  sim::Simulator& sim_;
  const config::Catalog& catalog_;
  config::SystemPreset preset_;
  Journal& journal_;
  pool::CapacityModel capacity_model_;

  mutable std::vector<ControllerInfo> controllers_;
  std::vector<DataPacInfo> datapacs_;
  std::vector<DriveInfo> drives_;

  std::map<Id, Pool> pools_;
  std::map<Id, Volume> volumes_;
  std::map<Id, Host> hosts_;
  std::map<Id, Mapping> mappings_;
  std::map<Id, QosPolicy> qos_policies_;
  std::vector<Event> events_;  // oldest first, bounded by kEventsInMemory
  std::int64_t events_dropped_ = 0;  // older events not kept in memory
  std::map<std::string, std::int64_t> next_ids_;
  std::int64_t next_event_id_ = 1;
  std::function<void(const Event&)> event_listener_;
  std::string actor_;  // set_actor()
  std::unique_ptr<DataPath> data_;
  std::unique_ptr<WearLeveler> wear_;  // after data_: destroyed before it
  std::vector<FaultRecord> faults_;    // this run's, oldest first (docs/api.md "Faults")
  ChangeSet* fault_changes_ = nullptr;  // set while inject_fault runs: its events' ChangeSet

  // QoS (docs/qos.md). Host I/O waits in the scheduler; its request lives in pending_ (a slab
  // indexed by the scheduler's cookie) from submit() until its completion. The slab holds at
  // most the queued requests (bounded per volume by the scheduler) plus those in the data path
  // (bounded per controller by outstanding_ios_max).
  struct PendingIo {
    HostIo io;
    IoCallback done;
    sim::Time submit_time = 0;
    int resource = 0;
  };
  QosOptions qos_options_;
  std::unique_ptr<qos::Scheduler> qos_;
  qos::ReservableCapacity reservable_;
  std::vector<PendingIo> pending_;
  std::vector<std::uint64_t> free_pending_;
  std::vector<int> outstanding_;    // per controller: I/Os in the data path
  std::vector<bool> waiting_room_;  // per controller: ready_time said "after a completion"
};

}  // namespace afasim::controller
