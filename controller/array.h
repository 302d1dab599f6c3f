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

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/preset.h"
#include "controller/data_path.h"
#include "controller/io.h"
#include "controller/journal.h"
#include "controller/snapshot.h"
#include "controller/objects.h"
#include "controller/wear_leveler.h"
#include "pool/capacity.h"
#include "qos/admission.h"
#include "qos/scheduler.h"
#include "sim/simulator.h"
#include "sim/status.h"

namespace afasim::controller {

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
  std::optional<Id> preferred_controller;  // default: with a min_iops, the most reservable room; else fewer volumes
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
    {"corrupt_block",       kFaultDrive},
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
  // corrupt_block: the device byte offset of the 4 KiB block; unset, the model picks a block
  // of an allocated chunk from the run's seed. Not a field of the API or scenarios (tests).
  std::optional<std::int64_t> block_offset_bytes = std::nullopt;
};

template <typename T>
struct Page {
  std::vector<T> items;
  std::int64_t total = 0;
};

class Array {
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

  // The rule for the name of a pool, volume, host or QoS policy: 1 to 64 letters, digits,
  // '-', '_' and '.', starting with a letter or digit. kUnprocessable "WHAT name ..." when it
  // breaks it. Public so that a command line can check a name before it runs anything.
  static sim::Status check_name(const std::string& what, const std::string& name);

  sim::Simulator& simulator() { return sim_; }
  const sim::Simulator& simulator() const { return sim_; }
  const config::SystemPreset& preset() const { return preset_; }
  const pool::CapacityModel& capacity_model() const { return capacity_model_; }
  // Host bytes per extent of `type`, the unit of thin allocation (docs/capacity.md).
  std::int64_t extent_bytes(raid::RaidType type = raid::RaidType::kRaid10) const;
  // The firmware below the management plane, read-only (views; the layers above never get
  // a mutable engine: what they may change goes through the methods of this class).
  const DataPath& data_path() const { return *data_; }
  // Array-level wear leveling: per-SSD wear, the leveler, projected life.
  const WearLeveler& wear() const { return *wear_; }
  // The state of the array as immutable values, taken now on the model thread; safe to hand
  // to another thread (controller/snapshot.h).
  std::shared_ptr<const ArraySnapshot> snapshot() const;

  // Wear fast-forward (docs/wear-leveling.md): WearLeveler::begin_measurement / fast_forward.
  void begin_wear_measurement() { wear_->begin_measurement(); }
  sim::Status fast_forward_wear(sim::Time until, sim::Time epoch, const WearLeveler::EpochObserver& observer = {}) {
    return wear_->fast_forward(until, epoch, observer, [this] { return data_->online(); });
  }
  // Ages drive `drive` (index) as if `host_bytes` had been written to it over `duration`
  // from `start` (datapac::Ssd::add_bulk_writes): what-if studies and tests start from a worn
  // array. Its errors.
  sim::Status add_drive_wear(int drive, sim::Time start, sim::Time duration, std::int64_t host_bytes,
                             double sequential_fraction) {
    return data_->hardware().ssd(drive).add_bulk_writes(start, duration, host_bytes, sequential_fraction);
  }
  // Destages every dirty block now (a clean shutdown); the writes complete through events.
  void destage_all() { data_->destage_all(); }
  void write_back_at_stop() { data_->write_back_at_stop(); }
  // The invariant checks simulation tests switch on (sim::Invariants).
  sim::Invariants& invariants() { return data_->invariants(); }
  // The background scrub (docs/raid.md "Scrub"): on/off and rate, saved with the array's
  // state (a restart resumes them). kInvalidArgument for a rate that is not positive or a
  // negative interval; kUnavailable when the store cannot take them (nothing changes).
  sim::Status set_scrub_options(const raid::ScrubOptions& options);

  // Host I/O into the model (DESIGN.md "One host write"): the volume's QoS queue, then the data
  // path; `done` runs at the simulated completion time with the outcome, its submit_time the
  // time of this call (QoS wait included). A volume whose QoS queue is full refuses the I/O
  // with kUnavailable (completed at once). Never blocks; `done` never runs inside this call.
  void submit(const HostIo& io, IoCallback&& done);
  // `io` will be submitted later (after other I/O): for a write, starts loading the write
  // cache's index slot and the read cache's table slot it will touch, cold for a random
  // write. Speed only: no state changes.
  void hint(const HostIo& io);
  // The volume's QoS figures now (current IOPS, time throttled, burst credit); nullopt for an
  // unknown volume.
  std::optional<qos::VolumeStatus> qos_status(Id volume_id) const { return data_->io().scheduler().status(volume_id); }
  const qos::Scheduler& qos_scheduler() const { return data_->io().scheduler(); }
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

  // Hardware. Controller views are refreshed from the data path on each call (each counts the
  // volumes its controller owns: O(volumes)).
  const std::vector<ControllerInfo>& controllers() const;
  // How many controllers are active, without the views: O(1), for a per-volume view (hostile
  // round 44: GET /volumes of 4,096 volumes refreshed every view per volume, 0.4 s on the model
  // thread, stalling NBD I/O).
  std::size_t active_controllers() const {
    std::size_t n = 0;
    for (const ControllerInfo& c : controllers_) n += data_->controller_state(c.id) == ControllerState::kActive;
    return n;
  }
  std::size_t controller_count() const { return controllers_.size(); }
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
  // RAID types `pool` can hold: RAID10 needs two DataPacs of at least raid10_pairs SSDs (its
  // mirrors pair across them), RAID5 k + 1 SSDs (DataPathOptions' geometry).
  std::vector<raid::RaidType> raid_types_offered(const Pool& pool) const;
  // Why `pool` does not offer `type`, " (...)", for the refusal's message.
  std::string not_offered_reason(const Pool& pool, raid::RaidType type) const;
  // Raw SSD bytes `extents` extents of `type` hold.
  std::int64_t raw_bytes_for_extents(raid::RaidType type, std::int64_t extents) const;

  // Newest first.
  Page<Event> events(std::int64_t offset, std::int64_t limit) const;
  std::int64_t event_count() const { return static_cast<std::int64_t>(events_.size()); }
  // The events kept in memory, oldest first (the newest kEventsInMemory).
  const std::vector<Event>& recent_events() const { return events_; }

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

  // Hooks `perf` (controller/perf.h) into the I/O path: every host I/O completed through
  // the QoS scheduler and every SSD command; nullptr removes it. Telemetry does this.
  void set_perf_counters(PerfCounters* perf) { data_->set_perf_counters(perf); }

  // Called after every committed event, beside the event listener: Telemetry re-evaluates
  // its alerts on state changes. Model thread.
  void set_telemetry_listener(std::function<void(const Event&)> listener) {
    telemetry_listener_ = std::move(listener);
  }

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
  // One saved line of the data path's state ("drive D bad OFFSET", "volume V lost FIRST
  // COUNT"): put back, counted, `handled` true; another kind of line: `handled` false.
  sim::Status restore_data_path_line(const std::string& line, int& media_errors, std::int64_t& lost_blocks,
                                     bool& handled);
  // The scrub's settings as saved in meta "scrub" ("enabled 1", "bytes_per_second N",
  // "pass_interval_ns N", a line each), and applied again at open. REQUIRES: start_data_path
  // succeeded.
  static std::string scrub_state(const raid::ScrubOptions& options);
  static constexpr const char* kMetaScrub = "scrub";
  sim::Status restore_scrub(const Snapshot& snapshot);
  sim::Status start_qos(const QosOptions& options);

  // The core time of a 4 KiB write of `type` (the dearer of read and write): admission
  // control's unit, planned by the RAID engine and priced by the CostModel.
  sim::Time write_4k_core_ns(raid::RaidType type) const { return data_->host_write_core_ns(type, 4096); }
  // The QoS of `v`, with `policy` standing in for its attached policy when given and the same.
  QosSettings effective_qos_with(const Volume& v, const QosPolicy* policy) const;
  // Every volume's reservation, with `changed` replacing (or adding) one volume and `policy`
  // replacing one policy.
  std::vector<qos::Reservation> reservations(const Volume* changed, const QosPolicy* policy) const;
  // Pushes `v`'s effective QoS and owner to the scheduler (after a committed change).
  void sync_qos(const Volume& v);
  // The data path changed an extent (thin allocation, unmap, rebuild): persist it.
  sim::Status on_extent_changed(DataPath::ExtentChange change, const ExtentRecord& record);
  // After a takeover: a warning event when the reservations the survivor now serves need more
  // than it can guarantee (docs/qos.md "Admission control").
  void warn_reservations_after_takeover(Id survivor, Id lost);
  // What the reservations each controller serves now (by owner, not preferred controller) need
  // of what it can guarantee, ppm (qos::reserved_ppm); controllers A and B.
  std::array<std::int64_t, 2> served_reservation_ppm() const;
  // After a committed QoS change: an event for each controller whose served reservations were
  // or now are over 100 % and changed (`before`: served_reservation_ppm() before the change).
  // Admission control checks the preferred controller, so during a failover a new or raised
  // reservation lowers what the survivor holds; this says so.
  void note_reservation_holds(const std::array<std::int64_t, 2>& before);
  // The share of its controller's guarantee `v`'s reservation takes under `q`, ppm
  // (qos::share_ppm; 0 without a min): what the scheduler holds reservations in proportion by.
  std::int64_t reservation_share(const Volume& v, const QosSettings& q) const;
  void build_hardware();

  // The model side of inject_fault: checks the fault applies now and applies it.
  sim::Status apply_fault(const FaultSpec& spec);
  sim::Status apply_array_fault(const FaultSpec& spec);
  sim::Status apply_drive_fault(const FaultSpec& spec);
  // Commits `changes` (plus the next-id counters) and applies them to memory. A full host disk
  // is kUnavailable here (the API's 503) and kNoSpace from commit_to_journal (the data path's
  // ENOSPC).
  sim::Status commit(ChangeSet& changes);
  sim::Status commit_to_journal(ChangeSet& changes);
  void apply(const ChangeSet& changes);
  // After apply(changes) of a ChangeSet whose commit failed: keeps it for the next commit.
  void keep_unsaved(const ChangeSet& changes);
  // Keeps volume_ids_by_name_ in step with the volumes `c` puts and deletes (before they are applied).
  void apply_volume_names(const ChangeSet& c);
  Event make_event(Severity severity, std::string category, std::string object,
                   std::string message);
  Id next_id(const char* kind, ChangeSet& changes);

  sim::Status check_qos(const QosSettings& qos, const std::string& context) const;
  // Each initiator's form, no address twice, and (`against_other_hosts`) none held by a host
  // other than `host_id`. Stored initiators are canonical: the hosts are searched with the
  // canonical list only, not with the list as written too.
  sim::Status check_initiators(const std::vector<Initiator>& initiators, Id host_id, bool against_other_hosts) const;
  sim::Status check_revision(std::uint64_t actual, std::optional<std::uint64_t> expected,
                             const std::string& object) const;
  // Events for thresholds of `pool_id` crossed upward as its raw allocation goes from
  // `raw_before` to `raw_after`.
  void threshold_events(Id pool_id, std::int64_t raw_before, std::int64_t raw_after, ChangeSet& changes);
  // create_volume's and update_volume's parts.
  sim::Result<Id> volume_pool(const VolumeSpec& spec) const;
  sim::Result<Id> volume_preferred_controller(const VolumeSpec& spec) const;
  sim::Status check_growth(const Volume& v, std::int64_t capacity_bytes) const;
  // A new volume's capacity: 1 byte to kMaxVolumeBytes, whole sectors, within
  // kMaxProvisionedBytes with the others (kUnprocessable).
  sim::Status check_new_capacity(std::int64_t capacity_bytes) const;
  // kUnprocessable when `more_bytes` more would take the capacity every volume provisions
  // past kMaxProvisionedBytes.
  sim::Status check_provisioned(std::int64_t more_bytes) const;
  // Applies the QoS fields of `patch` to `v` and checks the result.
  sim::Status patch_volume_qos(Volume& v, const VolumePatch& patch) const;
  // kNoSpace (`needs` says what was asked) unless `extents` more extents of `v` fit in its
  // pool now; else adds the threshold events they cause to `changes`.
  sim::Status admit_fixed(const Volume& v, std::int64_t extents, const std::string& needs, ChangeSet& changes);

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
  std::unordered_map<std::string, Id> volume_ids_by_name_;  // volumes_ by name (names are unique)
  std::map<Id, Host> hosts_;
  std::map<Id, Mapping> mappings_;
  std::map<Id, QosPolicy> qos_policies_;
  std::vector<Event> events_;  // oldest first, bounded by kEventsInMemory
  std::int64_t events_dropped_ = 0;  // older events not kept in memory
  std::map<std::string, std::int64_t> next_ids_;
  std::int64_t next_event_id_ = 1;
  // What took effect in memory but whose commit failed (an event logged, a fault applied, on a
  // full or locked disk): written ahead of the next commit that succeeds, so that its events
  // reach the log and the ids it handed out stay taken across a restart (hostile round 28:
  // a fault id and an event id were handed out twice, and a fault's events never stored).
  ChangeSet unsaved_;
  // The most events unsaved_ keeps (the oldest go first; they stay in the log in memory).
  static constexpr std::size_t kUnsavedEventsMax = 10'000;
  std::function<void(const Event&)> event_listener_;
  std::function<void(const Event&)> telemetry_listener_;
  std::string actor_;  // set_actor()
  std::unique_ptr<DataPath> data_;
  std::unique_ptr<WearLeveler> wear_;  // after data_: destroyed before it
  std::vector<FaultRecord> faults_;    // this run's, oldest first (docs/api.md "Faults")
  ChangeSet* fault_changes_ = nullptr;  // set while inject_fault runs: its events' ChangeSet
  // Set while inject_fault runs: the extents the fault changes go into its ChangeSet, one
  // transaction, not one each (hostile review 42: a drive failure under 8 TiB of fixed
  // volumes committed thousands of extents one by one and held the API for 10-40 s).
  ChangeSet* fault_extents_ = nullptr;
  // DataPath::saved_state_changes when the hardware state was last saved: a media error the
  // model adds (a rebuild's unreadable block) or a write clears, or a lost write marked or
  // written again, is saved with the next event or extent change (hardware_if_changed).
  std::uint64_t media_errors_saved_ = 0;
  // Puts the hardware state into `c` (and notes the media errors it holds); the second only
  // when the media errors changed since they were last put.
  void put_hardware(ChangeSet& c);
  void hardware_if_changed(ChangeSet& c);

  qos::ReservableCapacity reservable_;
};

}  // namespace afasim::controller
