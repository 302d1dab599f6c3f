#include "controller/array.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "config/size.h"
#include "qos/cost.h"
#include "sim/assert.h"

namespace afasim::controller {
namespace {

using config::human_bytes;
using sim::Status;

constexpr const char* kMetaSystem = "system";
constexpr const char* kMetaInitialized = "initialized";
constexpr const char* kMetaNextEventId = "next_id.event";
constexpr const char* kMetaClock = "clock_ns";

std::string object_name(const char* kind, Id id) { return std::string(kind) + "/" + std::to_string(id); }

std::string qos_text(const QosSettings& q) {
  auto f = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "-"; };
  return "min " + f(q.min_iops) + " / max " + f(q.max_iops) + " / burst " + f(q.burst_iops) +
         " IOPS";
}

template <typename Map>
const typename Map::mapped_type* find_in(const Map& m, Id id) {
  auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

template <typename T>
void apply_puts(std::map<Id, T>& into, const std::vector<T>& items, const std::vector<Id>& deleted) {
  for (const T& item : items) into[item.id] = item;
  for (Id id : deleted) into.erase(id);
}

template <typename T>
void apply_qos_patch(QosSettings& qos, const T& patch) {
  if (patch.min_iops) qos.min_iops = *patch.min_iops;
  if (patch.max_iops) qos.max_iops = *patch.max_iops;
  if (patch.burst_iops) qos.burst_iops = *patch.burst_iops;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Construction and restore

Array::Array(sim::Simulator& sim, const config::Catalog& catalog, const config::SystemPreset& preset,
             Journal& journal)
    : sim_(sim), catalog_(catalog), preset_(preset), journal_(journal),
      capacity_model_(catalog.capacity()) {
  build_hardware();
}

sim::Result<std::unique_ptr<Array>> Array::open(sim::Simulator& sim, const config::Catalog& catalog,
                                                const config::SystemPreset& preset,
                                                Journal& journal, const Snapshot& snapshot,
                                                ArrayOptions options) {
  auto it = snapshot.meta.find(kMetaSystem);
  if (it != snapshot.meta.end() && it->second != preset.name)
    return sim::precondition_failed("this state belongs to an " + it->second +
                                    " array, not an " + preset.name + " one");
  std::unique_ptr<Array> array(new Array(sim, catalog, preset, journal));
  AFASIM_RETURN_IF_ERROR(array->restore(snapshot));
  AFASIM_RETURN_IF_ERROR(array->start_data_path(snapshot, std::move(options)));
  AFASIM_RETURN_IF_ERROR(array->restore_hardware(snapshot));
  if (!snapshot.meta.count(kMetaInitialized)) {
    // First boot: one pool over both DataPacs, as the array ships.
    ChangeSet c;
    Pool pool;
    pool.id = array->next_id("pool", c);
    pool.name = "Pool 1";
    for (const auto& dp : array->datapacs_) pool.datapac_ids.push_back(dp.id);
    c.put_pools.push_back(pool);
    c.meta[kMetaSystem] = preset.name;
    c.meta[kMetaInitialized] = "1";
    c.events.push_back(array->make_event(
        Severity::kInfo, "system", "",
        preset.model + " initialized: " + std::to_string(preset.drive_count()) + " SSDs in " +
            std::to_string(array->datapacs_.size()) + " DataPacs, pool 1 spans both"));
    AFASIM_RETURN_IF_ERROR(array->commit(c));
  }
  return array;
}

void Array::build_hardware() {
  for (int i = 0; i < preset_.controllers.count; ++i)
  {
    ControllerInfo c;
    c.id = i + 1;
    c.name = std::string(1, static_cast<char>('A' + i));
    controllers_.push_back(c);
  }
  Id drive_id = 1;
  for (int d = 0; d < preset_.datapacs.count; ++d) {
    DataPacInfo dp;
    dp.id = d + 1;
    dp.name = "DataPac " + std::to_string(d + 1);
    for (int s = 0; s < preset_.datapacs.ssds_per_datapac; ++s) {
      DriveInfo drive;
      drive.id = drive_id++;
      drive.datapac_id = dp.id;
      drive.slot = s + 1;
      drive.model = preset_.ssd.name;
      drive.capacity_bytes = preset_.ssd.capacity_bytes;
      dp.drive_ids.push_back(drive.id);
      drives_.push_back(drive);
    }
    datapacs_.push_back(dp);
  }
}

Status Array::restore(const Snapshot& s) {
  for (const auto& p : s.pools) pools_[p.id] = p;
  for (const auto& v : s.volumes) volumes_[v.id] = v;
  for (const auto& h : s.hosts) hosts_[h.id] = h;
  for (const auto& m : s.mappings) mappings_[m.id] = m;
  for (const auto& q : s.qos_policies) qos_policies_[q.id] = q;
  for (const auto& [k, v] : s.meta) {
    if (k.rfind("next_id.", 0) != 0) continue;
    try {
      const std::int64_t n = std::stoll(v);
      if (k == kMetaNextEventId) next_event_id_ = n;
      else next_ids_[k.substr(8)] = n;
    } catch (...) {
      return sim::Status(sim::Code::kInternal, "state: meta " + k + " is not a number: " + v);
    }
  }
  const std::size_t first = s.events.size() > kEventsInMemory ? s.events.size() - kEventsInMemory : 0;
  events_.assign(s.events.begin() + static_cast<std::ptrdiff_t>(first), s.events.end());
  if (!s.events.empty()) next_event_id_ = std::max(next_event_id_, s.events.back().id + 1);
  events_dropped_ = events_.empty() ? 0 : events_.front().id - 1;
  // Referential integrity of what was loaded: a broken state directory must not boot into
  // undefined behaviour.
  for (const auto& [id, v] : volumes_) {
    if (!pools_.count(v.pool_id))
      return sim::Status(sim::Code::kInternal, "state: volume " + std::to_string(id) +
                                                   " refers to missing pool " + std::to_string(v.pool_id));
  }
  for (const auto& [id, m] : mappings_) {
    if (!volumes_.count(m.volume_id) || !hosts_.count(m.host_id))
      return sim::Status(sim::Code::kInternal,
                         "state: mapping " + std::to_string(id) + " refers to a missing volume or host");
  }
  return Status::ok();
}

Status Array::start_data_path(const Snapshot& snapshot, ArrayOptions options) {
  auto data = DataPath::create(
      sim_, preset_, capacity_model_, std::move(options.data_path),
      [this](Severity s, std::string category, std::string object, std::string message) {
        // While a fault is being injected its events join the fault's ChangeSet.
        if (fault_changes_ != nullptr)
          fault_changes_->events.push_back(
              make_event(s, std::move(category), std::move(object), std::move(message)));
        else
          (void)log_event(s, std::move(category), std::move(object), std::move(message));
      });
  if (!data.is_ok()) return data.status();
  data_ = std::move(data).value();
  for (auto& [id, v] : volumes_) {
    AFASIM_RETURN_IF_ERROR(data_->attach_volume(v, pool_drives(pools_.at(v.pool_id)), false));
  }
  for (const auto& r : snapshot.extents) {
    Status st = data_->restore_extent(r);
    if (!st.is_ok()) return Status(sim::Code::kInternal, "state: " + st.message());
  }
  data_->set_extent_listener(
      [this](DataPath::ExtentChange change, const ExtentRecord& record) { return on_extent_changed(change, record); });
  AFASIM_RETURN_IF_ERROR(WearLeveler::validate(options.wear, capacity_model_.params().chunk_bytes));
  wear_ = std::make_unique<WearLeveler>(sim_, *data_, options.wear);
  wear_->start();
  return start_qos(options.qos);
}

Status Array::start_qos(const QosOptions& options) {
  if (options.reservable_percent < 1 || options.reservable_percent > 100)
    return sim::invalid_argument("qos.reservable_percent must be between 1 and 100, got " +
                                 std::to_string(options.reservable_percent));
  if (options.dispatch_backlog_ns < 0 || options.dispatch_backlog_ns > 100 * sim::kMillisecond)
    return sim::invalid_argument("qos.dispatch_backlog_ns must be between 0 and 100 ms");
  if (options.outstanding_ios_max < 1 || options.outstanding_ios_max > (1 << 20))
    return sim::invalid_argument("qos.outstanding_ios_max must be between 1 and 1048576");
  qos_options_ = options;
  auto scheduler = qos::Scheduler::create(sim_, options.scheduler, static_cast<int>(controllers_.size()), *this);
  if (!scheduler.is_ok()) return scheduler.status();
  qos_ = std::move(scheduler).value();
  outstanding_.assign(controllers_.size(), 0);
  waiting_room_.assign(controllers_.size(), false);

  // What a controller guarantees to reservations: reservable_percent of its cores ÷ the core
  // time of one 4 KiB write (the dearer of read and write on every RAID type).
  const CostModel& cost = data_->options().cost;
  const sim::Time raid10_write_ns = cost.host_io_ns + cost.mirror_ns + 2 * cost.backend_op_ns;
  const sim::Time raid5_write_ns = cost.host_io_ns + cost.mirror_ns + 4 * cost.backend_op_ns + cost.parity_op_ns +
                                   cost.parity_xor_ns(2 * qos::kBaseIoBytes);
  const int cores = preset_.controllers.cpu_cores;
  auto guaranteed = [&](sim::Time per_io_ns) {
    const __int128 n = static_cast<__int128>(options.reservable_percent) * cores * sim::kSecond;
    return static_cast<std::int64_t>(n / (100 * static_cast<__int128>(per_io_ns)));
  };
  reservable_ = {};
  for (const auto& c : controllers_) reservable_.resource_names.push_back("controller " + c.name);
  reservable_.iops[raid::RaidType::kRaid10] = guaranteed(raid10_write_ns);
  reservable_.iops[raid::RaidType::kRaid5] = guaranteed(raid5_write_ns);
  char basis[200];
  std::snprintf(basis, sizeof basis,
                "%d %% of a controller's %d cores, a 4 KiB write taking %.2f us of core time on RAID10 and %.2f us "
                "on RAID5",
                options.reservable_percent, cores, sim::to_us(raid10_write_ns), sim::to_us(raid5_write_ns));
  reservable_.basis = basis;

  for (const auto& [id, v] : volumes_) {
    const QosSettings q = effective_qos(v);
    Status st = qos_->add_volume(id, static_cast<int>(v.preferred_controller - 1), {q.min_iops, q.max_iops, q.burst_iops});
    if (!st.is_ok()) return Status(sim::Code::kInternal, "state: volume " + std::to_string(id) + ": " + st.message());
  }
  return Status::ok();
}

Status Array::on_extent_changed(DataPath::ExtentChange change, const ExtentRecord& r) {
  auto vit = volumes_.find(r.volume_id);
  if (vit == volumes_.end()) return sim::not_found("no volume " + std::to_string(r.volume_id));
  ChangeSet c;
  if (change == DataPath::ExtentChange::kReleased) {
    c.delete_extents.emplace_back(r.volume_id, r.extent_index);
  } else {
    c.put_extents.push_back(r);
    if (change == DataPath::ExtentChange::kAllocated) {
      // A thin allocation may cross a low-space threshold; the data path holds its chunks.
      const Pool& p = pools_.at(vit->second.pool_id);
      const std::int64_t now_raw = data_->raw_allocated_bytes(pool_drives(p));
      threshold_events(p.id, now_raw - data_->raw_bytes_per_extent(r.raid_type), now_raw, c);
    }
  }
  return commit(c);
}

// ---------------------------------------------------------------------------------------
// Commit machinery

Id Array::next_id(const char* kind, ChangeSet& changes) {
  // Counters in `changes.meta` win over the applied ones, so that one ChangeSet can take
  // several ids of a kind.
  const std::string key = std::string("next_id.") + kind;
  std::int64_t next = 1;
  if (auto it = changes.meta.find(key); it != changes.meta.end()) next = std::stoll(it->second);
  else if (auto n = next_ids_.find(kind); n != next_ids_.end()) next = n->second;
  changes.meta[key] = std::to_string(next + 1);
  return next;
}

Event Array::make_event(Severity severity, std::string category, std::string object,
                        std::string message) {
  Event e;
  e.time_ns = sim_.now();
  e.severity = severity;
  e.category = std::move(category);
  e.object = std::move(object);
  e.message = std::move(message);
  e.actor = actor_;
  return e;  // id assigned at commit
}

Status Array::commit(ChangeSet& changes) {
  std::int64_t event_id = next_event_id_;
  for (auto& e : changes.events) e.id = event_id++;
  if (!changes.events.empty()) changes.meta[kMetaNextEventId] = std::to_string(event_id);
  Status st = journal_.commit(changes);
  if (!st.is_ok()) return st;
  apply(changes);
  return Status::ok();
}

void Array::apply(const ChangeSet& c) {
  apply_puts(pools_, c.put_pools, c.delete_pools);
  apply_puts(volumes_, c.put_volumes, c.delete_volumes);
  apply_puts(hosts_, c.put_hosts, c.delete_hosts);
  apply_puts(mappings_, c.put_mappings, c.delete_mappings);
  apply_puts(qos_policies_, c.put_qos_policies, c.delete_qos_policies);
  for (const auto& e : c.events) {
    events_.push_back(e);
    if (event_listener_) event_listener_(e);
  }
  if (events_.size() > kEventsInMemory) {
    const std::size_t drop = events_.size() - kEventsInMemory;
    events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(drop));
    events_dropped_ += static_cast<std::int64_t>(drop);
  }
  for (const auto& [k, v] : c.meta) {
    if (k == kMetaNextEventId) next_event_id_ = std::stoll(v);
    else if (k.rfind("next_id.", 0) == 0) next_ids_[k.substr(8)] = std::stoll(v);
  }
}

Status Array::log_event(Severity severity, std::string category, std::string object,
                        std::string message) {
  ChangeSet c;
  c.events.push_back(make_event(severity, std::move(category), std::move(object), std::move(message)));
  return commit(c);
}

Status Array::save_clock() {
  ChangeSet c;
  c.meta[kMetaClock] = std::to_string(sim_.now());
  return commit(c);
}

sim::Time Array::saved_clock(const Snapshot& snapshot) {
  // A killed process never saved its clock: its last event bounds it from below.
  sim::Time t = snapshot.events.empty() ? 0 : snapshot.events.back().time_ns;
  if (auto it = snapshot.meta.find(kMetaClock); it != snapshot.meta.end()) {
    try {
      t = std::max<sim::Time>(t, std::stoll(it->second));
    } catch (...) {
    }
  }
  return t;
}

// ---------------------------------------------------------------------------------------
// Lookups and derived figures

const std::vector<ControllerInfo>& Array::controllers() const {
  for (auto& c : controllers_) c = data_->controller_info(c.id);
  return controllers_;
}

const ControllerInfo* Array::controller(Id id) const {
  for (const auto& c : controllers())
    if (c.id == id) return &c;
  return nullptr;
}
const DataPacInfo* Array::datapac(Id id) const {
  for (const auto& d : datapacs_)
    if (d.id == id) return &d;
  return nullptr;
}
const DriveInfo* Array::drive(Id id) const {
  return id >= 1 && id <= static_cast<Id>(drives_.size()) ? &drives_[id - 1] : nullptr;
}
const Pool* Array::pool(Id id) const { return find_in(pools_, id); }
const Volume* Array::volume(Id id) const { return find_in(volumes_, id); }
const Host* Array::host(Id id) const { return find_in(hosts_, id); }
const Mapping* Array::mapping(Id id) const { return find_in(mappings_, id); }
const QosPolicy* Array::qos_policy(Id id) const { return find_in(qos_policies_, id); }

const Volume* Array::volume_by_name(const std::string& name) const {
  for (const auto& [id, v] : volumes_)
    if (v.name == name) return &v;
  return nullptr;
}

std::optional<Id> Array::pool_of_datapac(Id datapac_id) const {
  for (const auto& [id, p] : pools_)
    if (std::find(p.datapac_ids.begin(), p.datapac_ids.end(), datapac_id) != p.datapac_ids.end())
      return id;
  return std::nullopt;
}

std::int64_t Array::extent_bytes(raid::RaidType type) const { return data_->extent_bytes(type); }

std::int64_t Array::raw_bytes_for_extents(raid::RaidType type, std::int64_t extents) const {
  return extents * data_->raw_bytes_per_extent(type);
}

std::vector<int> Array::pool_drives(const Pool& pool) const {
  std::vector<int> drives;
  for (Id dp : pool.datapac_ids)
    if (const DataPacInfo* d = datapac(dp))
      for (Id drive : d->drive_ids) drives.push_back(static_cast<int>(drive - 1));
  return drives;
}

// ---------------------------------------------------------------------------------------
// Host I/O through the QoS scheduler

void Array::submit(const HostIo& io, IoCallback done) {
  if (!qos_options_.enabled || !qos_->has_volume(io.volume_id) || !data_->mains_on()) {
    // No such volume, or no mains: the data path refuses it at once (it must not wait in a
    // QoS queue to run after the power comes back).
    data_->submit(io, std::move(done));
    return;
  }
  std::uint64_t cookie;
  if (!free_pending_.empty()) {
    cookie = free_pending_.back();
    free_pending_.pop_back();
  } else {
    cookie = pending_.size();
    pending_.emplace_back();
  }
  // The volume's I/O is gated by the controller that owns it now: after a failover or a
  // move back to the preferred controller, its queue follows.
  if (const Id owner = data_->owner(io.volume_id); owner != 0 && qos_->resource_of(io.volume_id) != owner - 1)
    (void)qos_->move_volume(io.volume_id, static_cast<int>(owner - 1));
  PendingIo& p = pending_[cookie];
  p.io = io;
  p.done = std::move(done);
  p.submit_time = sim_.now();
  const std::int64_t cost = io.op == IoOp::kRead || io.op == IoOp::kWrite ? qos::io_cost_units(io.length_bytes)
                                                                          : qos::kCommandCostUnits;
  Status st = qos_->submit(io.volume_id, cookie, cost);
  if (!st.is_ok()) {
    IoCallback cb = std::move(pending_[cookie].done);
    free_pending_.push_back(cookie);
    refuse_io(std::move(cb), std::move(st));
  }
}

void Array::fail_queued_io(const Status& status) {
  for (const auto& [id, v] : volumes_)
    for (std::uint64_t cookie : qos_->drain_volume(id)) {
      IoCallback cb = std::move(pending_[cookie].done);
      free_pending_.push_back(cookie);
      refuse_io(std::move(cb), status);
    }
}

void Array::refuse_io(IoCallback done, Status status) {
  const sim::Time now = sim_.now();
  sim_.at(now, [cb = std::move(done), st = std::move(status), now]() mutable { cb(IoCompletion{std::move(st), now, now}); });
}

sim::Time Array::ready_time(int resource) {
  const auto r = static_cast<std::size_t>(resource);
  if (outstanding_[r] >= qos_options_.outstanding_ios_max) {
    waiting_room_[r] = true;
    return sim::kTimeMax;
  }
  const sim::Time start = data_->core_earliest_start(resource + 1);
  return std::max(sim_.now(), start - qos_options_.dispatch_backlog_ns);
}

void Array::dispatch(std::uint64_t cookie) {
  PendingIo& p = pending_[cookie];
  p.resource = qos_->resource_of(p.io.volume_id).value_or(0);
  ++outstanding_[static_cast<std::size_t>(p.resource)];
  data_->submit(p.io, [this, cookie](const IoCompletion& done) { finish_io(cookie, done); });
}

void Array::finish_io(std::uint64_t cookie, const IoCompletion& done) {
  PendingIo& p = pending_[cookie];
  IoCallback cb = std::move(p.done);
  const Id volume_id = p.io.volume_id;
  const auto r = static_cast<std::size_t>(p.resource);
  const sim::Time submitted = p.submit_time;
  free_pending_.push_back(cookie);
  --outstanding_[r];
  qos_->complete(volume_id);
  if (waiting_room_[r]) {
    waiting_room_[r] = false;
    qos_->kick(static_cast<int>(r));
  }
  cb(IoCompletion{done.status, submitted, done.complete_time});
}

// ---------------------------------------------------------------------------------------
// QoS settings and admission control

QosSettings Array::effective_qos_with(const Volume& v, const QosPolicy* policy) const {
  QosSettings q;
  if (v.qos_policy_id) {
    if (policy != nullptr && policy->id == *v.qos_policy_id) q = policy->qos;
    else if (const QosPolicy* p = qos_policy(*v.qos_policy_id)) q = p->qos;
  }
  if (v.qos.min_iops) q.min_iops = v.qos.min_iops;
  if (v.qos.max_iops) q.max_iops = v.qos.max_iops;
  if (v.qos.burst_iops) q.burst_iops = v.qos.burst_iops;
  return q;
}

std::vector<qos::Reservation> Array::reservations(const Volume* changed, const QosPolicy* policy) const {
  std::vector<qos::Reservation> out;
  auto add = [&](const Volume& v) {
    const QosSettings q = effective_qos_with(v, policy);
    if (q.min_iops && *q.min_iops > 0)
      out.push_back({v.id, v.name, static_cast<int>(v.preferred_controller - 1), v.raid_type, *q.min_iops});
  };
  for (const auto& [id, v] : volumes_)
    if (changed == nullptr || id != changed->id) add(v);
  if (changed != nullptr) add(*changed);
  return out;
}

void Array::sync_qos(const Volume& v) {
  const QosSettings q = effective_qos(v);
  const qos::Settings s{q.min_iops, q.max_iops, q.burst_iops};
  const Id owner = data_->owner(v.id);
  const int resource = static_cast<int>((owner != 0 ? owner : v.preferred_controller) - 1);
  if (!qos_->has_volume(v.id)) {
    Status st = qos_->add_volume(v.id, resource, s);
    AFASIM_ASSERT(st.is_ok(), "QoS scheduler refused a volume the array accepted: " + st.to_string());
    return;
  }
  if (qos_->settings(v.id) != s) {
    Status st = qos_->update_volume(v.id, s);
    AFASIM_ASSERT(st.is_ok(), "QoS scheduler refused settings the array accepted: " + st.to_string());
  }
  if (qos_->resource_of(v.id) != resource) {
    Status st = qos_->move_volume(v.id, resource);
    AFASIM_ASSERT(st.is_ok(), "QoS scheduler refused a move: " + st.to_string());
  }
}

std::string fault_type_names() {
  std::string names;
  for (const FaultTypeInfo& t : kFaultTypes)
    names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

sim::Result<FaultRecord> Array::inject_fault(const FaultSpec& spec) {
  if (find_fault_type(spec.type) == nullptr) {
    // The type is the caller's text: quote at most a line of it.
    const std::string shown = spec.type.size() > 64 ? spec.type.substr(0, 61) + "..." : spec.type;
    return sim::invalid_argument("unknown fault type \"" + shown +
                                 "\" (known: " + fault_type_names() + ")");
  }
  // The events the fault causes now and the fault id counter go to the journal in one
  // ChangeSet, as a management call's do: the counter is on disk with the events, so an id
  // is never handed out twice, even across restarts (docs/api.md "Faults").
  ChangeSet changes;
  fault_changes_ = &changes;
  const Status st = apply_fault(spec);
  fault_changes_ = nullptr;
  FaultRecord r;
  if (st.is_ok()) {
    r.id = next_id("fault", changes);
    r.time_ns = sim_.now();
    r.type = spec.type;
    r.drive = spec.drive;
    r.latency_multiplier = spec.latency_multiplier;
    r.controller = spec.controller;
    r.result = "applied";
    changes.meta[kMetaHardware] = hardware_state();  // kept across restarts
  }
  if (!changes.events.empty() || st.is_ok()) {
    const Status committed = commit(changes);
    if (!committed.is_ok() && st.is_ok()) {
      // The fault took effect in the model but its events, the counter and the saved
      // hardware state did not reach the store: keep the counter moving in memory so
      // this run hands the id out once, and say so in the record.
      next_ids_["fault"] = r.id + 1;
      r.result = "applied; not recorded in the store: " + committed.message();
    }
  }
  if (!st.is_ok()) return st;
  faults_.push_back(r);
  return r;
}

Status Array::apply_fault(const FaultSpec& spec) {
  if (spec.type.rfind("drive_", 0) != 0) {
    if (spec.type == "controller_fail" || spec.type == "controller_restore") {
      if (spec.controller != 1 && spec.controller != 2)
        return sim::not_found("no controller " + std::to_string(spec.controller) + " (controllers are 1 (A) and 2 (B))");
      return spec.type == "controller_fail" ? data_->fail_controller(spec.controller)
                                            : data_->restore_controller(spec.controller);
    }
    if (spec.type == "link_cut") return data_->cut_link();
    if (spec.type == "link_restore") return data_->restore_link();
    if (spec.type == "power_loss") {
      AFASIM_RETURN_IF_ERROR(data_->lose_power());
      // Host I/O waiting for its QoS turn was not acknowledged: it fails like the data path's
      // in-flight I/O (kUnavailable; NBD clients get ESHUTDOWN).
      fail_queued_io(sim::unavailable("the array lost power"));
      return Status::ok();
    }
    if (spec.type == "power_restore") return data_->restore_power();
    if (spec.type == "supercap_degrade") return data_->degrade_supercap();
    if (spec.type == "supercap_restore") return data_->restore_supercap();
    AFASIM_ASSERT(false, "fault type " + spec.type + " is in kFaultTypes but not handled");
    return Status(sim::Code::kInternal, "fault type " + spec.type + " is not handled");
  }
  if (spec.drive < 1 || spec.drive > static_cast<Id>(drives_.size()))
    return sim::not_found("no drive " + std::to_string(spec.drive) + " (drives are 1 to " +
                          std::to_string(drives_.size()) + ")");
  const int index = static_cast<int>(spec.drive - 1);
  Status st;
  if (spec.type == "drive_fail") st = data_->fail_drive(index);
  else if (spec.type == "drive_pull") st = data_->pull_drive(index);
  else if (spec.type == "drive_replace") st = data_->replace_drive(index);
  else if (spec.type == "drive_slow") st = data_->set_drive_latency_multiplier(index, spec.latency_multiplier);
  else if (spec.type == "drive_restore_speed") st = data_->set_drive_latency_multiplier(index, 1.0);
  else
    AFASIM_ASSERT(false, "fault type " + spec.type + " is in kFaultTypes but not handled");
  if (!st.is_ok()) return st;
  DriveInfo& d = drives_[static_cast<std::size_t>(index)];
  switch (data_->ssd(index).state()) {
    case datapac::SsdState::kHealthy: d.state = DriveState::kHealthy; break;
    case datapac::SsdState::kFailed: d.state = DriveState::kFailed; break;
    case datapac::SsdState::kRemoved: d.state = DriveState::kRemoved; break;
  }
  return Status::ok();
}

std::vector<raid::RaidType> Array::raid_types_offered(const Pool& pool) const {
  std::vector<raid::RaidType> types;
  if (pool.datapac_ids.size() >= 2) types.push_back(raid::RaidType::kRaid10);
  types.push_back(raid::RaidType::kRaid5);
  return types;
}

PoolCapacity Array::pool_capacity(Id pool_id) const {
  PoolCapacity c;
  const Pool* p = pool(pool_id);
  if (p == nullptr) return c;
  const pool::DriveCapacity per_drive = capacity_model_.drive(preset_.ssd.capacity_bytes);
  const std::vector<int> drives = pool_drives(*p);
  c.pre_raid_bytes = per_drive.pre_raid_bytes * static_cast<std::int64_t>(drives.size());
  // From the allocator: SSDs that failed leave the usable space with their chunks.
  c.raw_usable_bytes = data_->raw_usable_bytes(drives);
  c.raw_allocated_bytes = data_->raw_allocated_bytes(drives);
  for (const auto& [id, v] : volumes_) {
    if (v.pool_id != pool_id) continue;
    c.provisioned_bytes += v.capacity_bytes;
    c.allocated_bytes += data_->allocated_extents(id) * extent_bytes(v.raid_type);
  }
  c.raw_free_bytes = std::max<std::int64_t>(0, c.raw_usable_bytes - c.raw_allocated_bytes);
  for (raid::RaidType t : raid_types_offered(*p)) {
    c.usable_bytes[t] = capacity_model_.usable_from_raw(t, c.raw_usable_bytes);
    // Free space counts whole extents only: a partial extent cannot be allocated.
    c.free_bytes[t] = c.raw_free_bytes / data_->raw_bytes_per_extent(t) * extent_bytes(t);
  }
  return c;
}

QosSettings Array::effective_qos(const Volume& v) const {
  QosSettings q;
  if (v.qos_policy_id)
    if (const QosPolicy* p = qos_policy(*v.qos_policy_id)) q = p->qos;
  if (v.qos.min_iops) q.min_iops = v.qos.min_iops;
  if (v.qos.max_iops) q.max_iops = v.qos.max_iops;
  if (v.qos.burst_iops) q.burst_iops = v.qos.burst_iops;
  return q;
}

Page<Event> Array::events(std::int64_t offset, std::int64_t limit) const {
  Page<Event> page;
  page.total = static_cast<std::int64_t>(events_.size()) + events_dropped_;
  const auto n = static_cast<std::int64_t>(events_.size());
  for (std::int64_t i = offset; i < offset + limit && i < n; ++i)
    page.items.push_back(events_[static_cast<std::size_t>(n - 1 - i)]);
  return page;
}

// ---------------------------------------------------------------------------------------
// Validation helpers

Status Array::check_name(const std::string& what, const std::string& name) const {
  if (name.empty() || name.size() > 64)
    return sim::unprocessable(what + " name must be 1 to 64 characters, got " +
                              std::to_string(name.size()));
  if (!std::isalnum(static_cast<unsigned char>(name[0])))
    return sim::unprocessable(what + " name must start with a letter or digit: \"" + name + "\"");
  for (char ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.')
      return sim::unprocessable(what + " name may hold only letters, digits, '-', '_' and '.': \"" +
                                name + "\"");
  }
  return Status::ok();
}

Status Array::check_qos(const QosSettings& q, const std::string& context) const {
  auto range = [&](const char* field, const std::optional<std::int64_t>& v) -> Status {
    if (v && (*v < 0 || *v > kMaxIops))
      return sim::unprocessable(context + ": " + field + " must be between 0 and " +
                                std::to_string(kMaxIops) + ", got " + std::to_string(*v));
    return Status::ok();
  };
  AFASIM_RETURN_IF_ERROR(range("min_iops", q.min_iops));
  AFASIM_RETURN_IF_ERROR(range("max_iops", q.max_iops));
  AFASIM_RETURN_IF_ERROR(range("burst_iops", q.burst_iops));
  if (q.min_iops && q.max_iops && *q.min_iops > *q.max_iops)
    return sim::unprocessable(context + ": min_iops (" + std::to_string(*q.min_iops) +
                              ") must not exceed max_iops (" + std::to_string(*q.max_iops) + ")");
  if (q.burst_iops && !q.max_iops)
    return sim::unprocessable(context + ": burst_iops needs max_iops (burst is a limit above max)");
  if (q.max_iops && q.burst_iops && *q.max_iops > *q.burst_iops)
    return sim::unprocessable(context + ": max_iops (" + std::to_string(*q.max_iops) +
                              ") must not exceed burst_iops (" + std::to_string(*q.burst_iops) + ")");
  if (q.min_iops && q.burst_iops && *q.min_iops > *q.burst_iops)
    return sim::unprocessable(context + ": min_iops must not exceed burst_iops");
  return Status::ok();
}

Status Array::check_initiators(const std::vector<Initiator>& initiators, Id host_id) const {
  static const std::regex wwpn("^([0-9a-fA-F]{2}:){7}[0-9a-fA-F]{2}$|^[0-9a-fA-F]{16}$");
  static const std::regex iqn(
      "^iqn\\.[0-9]{4}-[0-9]{2}\\.[a-zA-Z0-9][a-zA-Z0-9.-]*(:[^\\s]+)?$|^eui\\.[0-9A-Fa-f]{16}$|"
      "^naa\\.[0-9A-Fa-f]{16}([0-9A-Fa-f]{16})?$");
  // nbd: the client's IP address, a glob over it ("*", "10.0.0.*") or "unix" (docs/nbd.md);
  // "*" and IPv6's "::1" start with a character other than a letter or digit.
  static const std::regex nbd("^[A-Za-z0-9:*][A-Za-z0-9._:@*-]{0,254}$");
  std::set<std::pair<InitiatorType, std::string>> seen;
  for (const auto& i : initiators) {
    const std::string& a = i.address;
    // Bound the length before any regex: std::regex recurses per character and overflows
    // the stack on megabyte-long inputs.
    if (a.empty() || a.size() > 255)
      return sim::unprocessable(std::string(to_string(i.type)) + " initiator address must be 1 to 255 characters, got " +
                                std::to_string(a.size()));
    switch (i.type) {
      case InitiatorType::kFc:
        if (!std::regex_match(a, wwpn))
          return sim::unprocessable("fc initiator \"" + a +
                                    "\" is not a WWPN (16 hex digits, optionally colon-separated)");
        break;
      case InitiatorType::kIscsi:
        if (!std::regex_match(a, iqn))
          return sim::unprocessable("iscsi initiator \"" + a +
                                    "\" is not an iqn., eui. or naa. name (RFC 3720)");
        break;
      case InitiatorType::kNbd:
        if (!std::regex_match(a, nbd))
          return sim::unprocessable("nbd initiator \"" + a +
                                    "\" must be 1-255 characters of letters, digits and ._:@*-, not starting with . @ or -: "
                                    "an IP address, a glob such as * or 10.0.0.*, or unix (docs/nbd.md)");
        break;
    }
    if (!seen.insert({i.type, a}).second)
      return sim::unprocessable(std::string(to_string(i.type)) + " initiator \"" + a +
                                "\" is listed twice");
    for (const auto& [id, h] : hosts_) {
      if (id == host_id) continue;
      for (const auto& other : h.initiators)
        if (other.type == i.type && other.address == a)
          return sim::conflict(std::string(to_string(i.type)) + " initiator \"" + a +
                               "\" already belongs to host " + std::to_string(id) + " (\"" +
                               h.name + "\")");
    }
  }
  return Status::ok();
}

Status Array::check_revision(std::uint64_t actual, std::optional<std::uint64_t> expected,
                             const std::string& object) const {
  if (expected && *expected != actual)
    return sim::precondition_failed(object + " is at revision " + std::to_string(actual) +
                                    ", the request expected revision " + std::to_string(*expected));
  return Status::ok();
}

void Array::threshold_events(Id pool_id, std::int64_t raw_before, std::int64_t raw_after, ChangeSet& changes) {
  const Pool* p = pool(pool_id);
  if (p == nullptr) return;
  const std::int64_t usable = data_->raw_usable_bytes(pool_drives(*p));
  if (usable == 0) return;
  const double before = 100.0 * static_cast<double>(raw_before) / static_cast<double>(usable);
  const double after = 100.0 * static_cast<double>(raw_after) / static_cast<double>(usable);
  for (std::size_t i = 0; i < p->space_thresholds_percent.size(); ++i) {
    const int t = p->space_thresholds_percent[i];
    if (before < t && after >= t) {
      const Severity sev = i == 0 ? Severity::kWarning : (i == 1 ? Severity::kError : Severity::kCritical);
      char buf[160];
      std::snprintf(buf, sizeof buf, "pool \"%s\" is %.1f %% allocated (threshold %d %%)",
                    p->name.c_str(), after, t);
      changes.events.push_back(make_event(sev, "pool", object_name("pool", pool_id), buf));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Pools

namespace {
Status check_thresholds(const std::vector<int>& t) {
  if (t.empty() || t.size() > 5)
    return sim::unprocessable("space_thresholds_percent must list 1 to 5 percentages");
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] < 1 || t[i] > 100)
      return sim::unprocessable("space_thresholds_percent values must be 1 to 100, got " +
                                std::to_string(t[i]));
    if (i > 0 && t[i] <= t[i - 1])
      return sim::unprocessable("space_thresholds_percent must be strictly increasing");
  }
  return Status::ok();
}
}  // namespace

sim::Result<Pool> Array::create_pool(const PoolSpec& spec) {
  AFASIM_RETURN_IF_ERROR(check_name("pool", spec.name));
  for (const auto& [id, p] : pools_)
    if (p.name == spec.name) return sim::conflict("a pool named \"" + spec.name + "\" exists (id " + std::to_string(id) + ")");
  if (spec.datapac_ids.empty()) return sim::unprocessable("a pool needs at least one DataPac");
  std::vector<Id> dps = spec.datapac_ids;
  std::sort(dps.begin(), dps.end());
  if (std::adjacent_find(dps.begin(), dps.end()) != dps.end())
    return sim::unprocessable("datapac_ids lists a DataPac twice");
  for (Id dp : dps) {
    if (datapac(dp) == nullptr) return sim::not_found("no DataPac " + std::to_string(dp));
    if (auto owner = pool_of_datapac(dp))
      return sim::conflict("DataPac " + std::to_string(dp) + " already belongs to pool " +
                           std::to_string(*owner));
  }
  Pool p;
  if (spec.space_thresholds_percent) {
    AFASIM_RETURN_IF_ERROR(check_thresholds(*spec.space_thresholds_percent));
    p.space_thresholds_percent = *spec.space_thresholds_percent;
  }
  ChangeSet c;
  p.id = next_id("pool", c);
  p.name = spec.name;
  p.datapac_ids = dps;
  c.put_pools.push_back(p);
  std::string list;
  for (Id dp : dps) list += (list.empty() ? "" : ", ") + std::to_string(dp);
  c.events.push_back(make_event(Severity::kInfo, "pool", object_name("pool", p.id),
                                "pool \"" + p.name + "\" created from DataPac " + list));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return p;
}

sim::Result<Pool> Array::update_pool(Id id, const PoolPatch& patch,
                                     std::optional<std::uint64_t> expected_revision) {
  const Pool* cur = pool(id);
  if (cur == nullptr) return sim::not_found("no pool " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(cur->revision, expected_revision, "pool " + std::to_string(id)));
  Pool p = *cur;
  if (patch.name) {
    AFASIM_RETURN_IF_ERROR(check_name("pool", *patch.name));
    for (const auto& [oid, o] : pools_)
      if (oid != id && o.name == *patch.name) return sim::conflict("a pool named \"" + *patch.name + "\" exists");
    p.name = *patch.name;
  }
  if (patch.space_thresholds_percent) {
    AFASIM_RETURN_IF_ERROR(check_thresholds(*patch.space_thresholds_percent));
    p.space_thresholds_percent = *patch.space_thresholds_percent;
  }
  ++p.revision;
  ChangeSet c;
  c.put_pools.push_back(p);
  c.events.push_back(make_event(Severity::kInfo, "pool", object_name("pool", id), "pool \"" + p.name + "\" updated"));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return p;
}

Status Array::delete_pool(Id id, std::optional<std::uint64_t> expected_revision) {
  const Pool* p = pool(id);
  if (p == nullptr) return sim::not_found("no pool " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(p->revision, expected_revision, "pool " + std::to_string(id)));
  std::int64_t n = 0;
  for (const auto& [vid, v] : volumes_) n += v.pool_id == id;
  if (n > 0)
    return sim::conflict("pool " + std::to_string(id) + " holds " + std::to_string(n) +
                         " volume(s); delete them first");
  ChangeSet c;
  c.delete_pools.push_back(id);
  c.events.push_back(make_event(Severity::kInfo, "pool", object_name("pool", id),
                                "pool \"" + p->name + "\" deleted; its DataPacs are unassigned"));
  return commit(c);
}

// ---------------------------------------------------------------------------------------
// Volumes

sim::Result<Volume> Array::create_volume(const VolumeSpec& spec) {
  AFASIM_RETURN_IF_ERROR(check_name("volume", spec.name));
  if (const Volume* other = volume_by_name(spec.name))
    return sim::conflict("a volume named \"" + spec.name + "\" exists (id " + std::to_string(other->id) + ")");
  Id pool_id;
  if (spec.pool_id) {
    pool_id = *spec.pool_id;
    if (pool(pool_id) == nullptr) return sim::not_found("no pool " + std::to_string(pool_id));
  } else if (pools_.size() == 1) {
    pool_id = pools_.begin()->first;
  } else {
    return sim::unprocessable(pools_.empty() ? "the array has no pool; create one first"
                                             : "the array has several pools; say which (pool_id)");
  }
  const Pool& p = pools_.at(pool_id);
  if (spec.capacity_bytes <= 0 || spec.capacity_bytes > kMaxVolumeBytes)
    return sim::unprocessable("capacity_bytes must be between 1 and " + std::to_string(kMaxVolumeBytes) +
                              " (1 PiB), got " + std::to_string(spec.capacity_bytes));
  if (spec.capacity_bytes % kSectorBytes != 0)
    return sim::unprocessable("capacity_bytes must be a multiple of 512, got " + std::to_string(spec.capacity_bytes));
  const auto offered = raid_types_offered(p);
  if (std::find(offered.begin(), offered.end(), spec.raid_type) == offered.end())
    return sim::unprocessable(std::string(raid::raid_type_name(spec.raid_type)) + " is not offered by pool " +
                              std::to_string(pool_id) +
                              (spec.raid_type == raid::RaidType::kRaid10
                                   ? " (RAID10 mirrors across DataPacs; this pool has one)"
                                   : " on the " + preset_.model));
  Id preferred;
  if (spec.preferred_controller) {
    preferred = *spec.preferred_controller;
    if (controller(preferred) == nullptr)
      return sim::unprocessable("preferred_controller must be 1 or 2, got " + std::to_string(preferred));
  } else {
    std::int64_t on[3] = {0, 0, 0};
    for (const auto& [id, v] : volumes_) on[v.preferred_controller == 2 ? 2 : 1]++;
    preferred = on[2] < on[1] ? 2 : 1;
  }
  if (spec.qos_policy_id && qos_policy(*spec.qos_policy_id) == nullptr)
    return sim::not_found("no QoS policy " + std::to_string(*spec.qos_policy_id));
  AFASIM_RETURN_IF_ERROR(check_qos(spec.qos, "volume QoS"));
  Volume v;
  v.name = spec.name;
  v.pool_id = pool_id;
  v.capacity_bytes = spec.capacity_bytes;
  v.raid_type = spec.raid_type;
  v.provisioning = spec.provisioning;
  v.preferred_controller = preferred;
  v.qos = spec.qos;
  v.qos_policy_id = spec.qos_policy_id;
  AFASIM_RETURN_IF_ERROR(check_qos(effective_qos(v), "volume QoS with its policy"));
  v.created_time_ns = sim_.now();
  ChangeSet c;
  const PoolCapacity cap = pool_capacity(pool_id);
  if (v.provisioning == Provisioning::kFixed) {
    const std::int64_t ext = extent_bytes(v.raid_type);
    const std::int64_t extents = (v.capacity_bytes + ext - 1) / ext;
    const std::int64_t raw = raw_bytes_for_extents(v.raid_type, extents);
    if (raw > cap.raw_free_bytes)
      return sim::no_space("fixed volume \"" + v.name + "\" needs " + human_bytes(extents * ext) + " of " +
                           std::string(raid::raid_type_name(v.raid_type)) + " space; pool " +
                           std::to_string(pool_id) + " has " +
                           human_bytes(cap.free_bytes.count(v.raid_type) ? cap.free_bytes.at(v.raid_type) : 0) +
                           " free for " + std::string(raid::raid_type_name(v.raid_type)));
    threshold_events(pool_id, cap.raw_allocated_bytes, cap.raw_allocated_bytes + raw, c);
  }
  v.id = next_id("volume", c);
  AFASIM_RETURN_IF_ERROR(qos::check_admission(reservations(nullptr, nullptr), reservations(&v, nullptr), reservable_));
  // The data path places a fixed volume's extents now; all or nothing.
  AFASIM_RETURN_IF_ERROR(data_->attach_volume(v, pool_drives(p), true));
  c.put_extents = data_->extent_records(v.id);
  c.put_volumes.push_back(v);
  c.events.insert(c.events.begin(),
                  make_event(Severity::kInfo, "volume", object_name("volume", v.id),
                             "volume \"" + v.name + "\" created: " + human_bytes(v.capacity_bytes) + " " +
                                 std::string(raid::raid_type_name(v.raid_type)) + " " +
                                 std::string(to_string(v.provisioning)) + " in pool " +
                                 std::to_string(pool_id) + ", preferred controller " +
                                 controllers_[static_cast<std::size_t>(preferred - 1)].name));
  if (Status st = commit(c); !st.is_ok()) {
    data_->detach_volume(v.id);
    return st;
  }
  sync_qos(v);
  return v;
}

sim::Result<Volume> Array::update_volume(Id id, const VolumePatch& patch,
                                         std::optional<std::uint64_t> expected_revision) {
  const Volume* cur = volume(id);
  if (cur == nullptr) return sim::not_found("no volume " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(cur->revision, expected_revision, "volume " + std::to_string(id)));
  Volume v = *cur;
  ChangeSet c;
  std::vector<std::string> changed;
  std::optional<std::int64_t> grow_to;
  if (patch.name && *patch.name != v.name) {
    AFASIM_RETURN_IF_ERROR(check_name("volume", *patch.name));
    if (const Volume* other = volume_by_name(*patch.name))
      return sim::conflict("a volume named \"" + *patch.name + "\" exists (id " + std::to_string(other->id) + ")");
    changed.push_back("renamed from \"" + v.name + "\"");
    v.name = *patch.name;
  }
  if (patch.capacity_bytes && *patch.capacity_bytes != v.capacity_bytes) {
    const std::int64_t n = *patch.capacity_bytes;
    if (n < v.capacity_bytes)
      return sim::unprocessable("a volume can grow, not shrink: capacity_bytes " + std::to_string(n) +
                                " is below the current " + std::to_string(v.capacity_bytes));
    if (n > kMaxVolumeBytes)
      return sim::unprocessable("capacity_bytes must be at most " + std::to_string(kMaxVolumeBytes) + " (1 PiB)");
    if (n % kSectorBytes != 0)
      return sim::unprocessable("capacity_bytes must be a multiple of 512, got " + std::to_string(n));
    if (v.provisioning == Provisioning::kFixed) {
      const std::int64_t ext = extent_bytes(v.raid_type);
      const std::int64_t extents = (n + ext - 1) / ext;
      const std::int64_t have = data_->allocated_extents(id);
      const std::int64_t more = raw_bytes_for_extents(v.raid_type, extents - have);
      const PoolCapacity cap = pool_capacity(v.pool_id);
      if (more > cap.raw_free_bytes)
        return sim::no_space("growing fixed volume \"" + v.name + "\" to " + human_bytes(n) + " needs " +
                             human_bytes((extents - have) * ext) + " more; pool " +
                             std::to_string(v.pool_id) + " has " +
                             human_bytes(cap.free_bytes.count(v.raid_type) ? cap.free_bytes.at(v.raid_type) : 0) +
                             " free for " + std::string(raid::raid_type_name(v.raid_type)));
      threshold_events(v.pool_id, cap.raw_allocated_bytes, cap.raw_allocated_bytes + more, c);
    }
    grow_to = n;
    changed.push_back("grown from " + human_bytes(v.capacity_bytes) + " to " + human_bytes(n));
    v.capacity_bytes = n;
  }
  if (patch.preferred_controller && *patch.preferred_controller != v.preferred_controller) {
    if (controller(*patch.preferred_controller) == nullptr)
      return sim::unprocessable("preferred_controller must be 1 or 2, got " +
                                std::to_string(*patch.preferred_controller));
    v.preferred_controller = *patch.preferred_controller;
    changed.push_back("preferred controller " + controllers_[static_cast<std::size_t>(v.preferred_controller - 1)].name);
  }
  const QosSettings qos_before = effective_qos(v);
  apply_qos_patch(v.qos, patch);
  if (patch.qos_policy_id) {
    if (*patch.qos_policy_id && qos_policy(**patch.qos_policy_id) == nullptr)
      return sim::not_found("no QoS policy " + std::to_string(**patch.qos_policy_id));
    v.qos_policy_id = *patch.qos_policy_id;
  }
  AFASIM_RETURN_IF_ERROR(check_qos(v.qos, "volume QoS"));
  const QosSettings qos_after = effective_qos(v);
  AFASIM_RETURN_IF_ERROR(check_qos(qos_after, "volume QoS with its policy"));
  if (!(qos_after == qos_before) || v.qos_policy_id != cur->qos_policy_id)
    changed.push_back("QoS " + qos_text(qos_after));
  if (changed.empty()) return *cur;  // nothing to change: no new revision, no event
  if (!(qos_after == qos_before) || v.preferred_controller != cur->preferred_controller)
    AFASIM_RETURN_IF_ERROR(qos::check_admission(reservations(nullptr, nullptr), reservations(&v, nullptr), reservable_));
  const std::int64_t old_capacity = cur->capacity_bytes;
  if (grow_to) {
    AFASIM_RETURN_IF_ERROR(data_->grow_volume(id, *grow_to));
    if (v.provisioning == Provisioning::kFixed) c.put_extents = data_->extent_records(id);
  }
  ++v.revision;
  c.put_volumes.push_back(v);
  std::string what;
  for (const auto& s : changed) what += (what.empty() ? "" : "; ") + s;
  c.events.insert(c.events.begin(), make_event(Severity::kInfo, "volume", object_name("volume", id),
                                               "volume \"" + v.name + "\" " + what));
  if (Status st = commit(c); !st.is_ok()) {
    if (grow_to) data_->shrink_volume(id, old_capacity);
    return st;
  }
  data_->set_preferred_controller(id, v.preferred_controller);
  sync_qos(v);
  return v;
}

Status Array::delete_volume(Id id, std::optional<std::uint64_t> expected_revision) {
  const Volume* v = volume(id);
  if (v == nullptr) return sim::not_found("no volume " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(v->revision, expected_revision, "volume " + std::to_string(id)));
  for (const auto& [mid, m] : mappings_)
    if (m.volume_id == id)
      return sim::conflict("volume " + std::to_string(id) + " is mapped to host " + std::to_string(m.host_id) +
                           " as LUN " + std::to_string(m.lun) + " (mapping " + std::to_string(mid) +
                           "); unmap it first");
  ChangeSet c;
  c.delete_volumes.push_back(id);
  c.events.push_back(make_event(Severity::kInfo, "volume", object_name("volume", id),
                                "volume \"" + v->name + "\" deleted; " +
                                    human_bytes(data_->allocated_extents(id) * extent_bytes(v->raid_type)) +
                                    " returned to pool " + std::to_string(v->pool_id)));
  AFASIM_RETURN_IF_ERROR(commit(c));
  data_->detach_volume(id);
  // I/O still waiting for the volume's QoS turn fails: the volume is gone.
  for (std::uint64_t cookie : qos_->remove_volume(id)) {
    IoCallback cb = std::move(pending_[cookie].done);
    free_pending_.push_back(cookie);
    refuse_io(std::move(cb), sim::not_found("volume " + std::to_string(id) + " was deleted"));
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------
// Hosts

sim::Result<Host> Array::create_host(const HostSpec& spec) {
  AFASIM_RETURN_IF_ERROR(check_name("host", spec.name));
  for (const auto& [id, h] : hosts_)
    if (h.name == spec.name) return sim::conflict("a host named \"" + spec.name + "\" exists (id " + std::to_string(id) + ")");
  if (spec.description.size() > 1024) return sim::unprocessable("description must be at most 1024 characters");
  if (spec.initiators.size() > 64) return sim::unprocessable("a host may have at most 64 initiators");
  AFASIM_RETURN_IF_ERROR(check_initiators(spec.initiators, 0));
  Host h;
  ChangeSet c;
  h.id = next_id("host", c);
  h.name = spec.name;
  h.description = spec.description;
  h.initiators = spec.initiators;
  for (auto& i : h.initiators)
    if (i.type == InitiatorType::kFc) {  // canonical WWPN: lower case, colon-separated
      std::string hex;
      for (char ch : i.address)
        if (ch != ':') hex += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      std::string canon;
      for (std::size_t k = 0; k < hex.size(); k += 2) canon += (k ? ":" : "") + hex.substr(k, 2);
      i.address = canon;
    }
  AFASIM_RETURN_IF_ERROR(check_initiators(h.initiators, 0));
  c.put_hosts.push_back(h);
  c.events.push_back(make_event(Severity::kInfo, "host", object_name("host", h.id),
                                "host \"" + h.name + "\" created with " + std::to_string(h.initiators.size()) +
                                    " initiator(s)"));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return h;
}

sim::Result<Host> Array::update_host(Id id, const HostPatch& patch,
                                     std::optional<std::uint64_t> expected_revision) {
  const Host* cur = host(id);
  if (cur == nullptr) return sim::not_found("no host " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(cur->revision, expected_revision, "host " + std::to_string(id)));
  HostSpec merged{patch.name.value_or(cur->name), patch.description.value_or(cur->description),
                  patch.initiators.value_or(cur->initiators)};
  AFASIM_RETURN_IF_ERROR(check_name("host", merged.name));
  for (const auto& [oid, o] : hosts_)
    if (oid != id && o.name == merged.name) return sim::conflict("a host named \"" + merged.name + "\" exists");
  if (merged.description.size() > 1024) return sim::unprocessable("description must be at most 1024 characters");
  if (merged.initiators.size() > 64) return sim::unprocessable("a host may have at most 64 initiators");
  AFASIM_RETURN_IF_ERROR(check_initiators(merged.initiators, id));
  Host h = *cur;
  h.name = merged.name;
  h.description = merged.description;
  h.initiators = merged.initiators;
  ++h.revision;
  ChangeSet c;
  c.put_hosts.push_back(h);
  c.events.push_back(make_event(Severity::kInfo, "host", object_name("host", id), "host \"" + h.name + "\" updated"));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return h;
}

Status Array::delete_host(Id id, std::optional<std::uint64_t> expected_revision) {
  const Host* h = host(id);
  if (h == nullptr) return sim::not_found("no host " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(h->revision, expected_revision, "host " + std::to_string(id)));
  for (const auto& [mid, m] : mappings_)
    if (m.host_id == id)
      return sim::conflict("host " + std::to_string(id) + " has mapping " + std::to_string(mid) +
                           " (volume " + std::to_string(m.volume_id) + " as LUN " + std::to_string(m.lun) +
                           "); unmap it first");
  ChangeSet c;
  c.delete_hosts.push_back(id);
  c.events.push_back(make_event(Severity::kInfo, "host", object_name("host", id), "host \"" + h->name + "\" deleted"));
  return commit(c);
}

// ---------------------------------------------------------------------------------------
// Mappings

sim::Result<Mapping> Array::create_mapping(const MappingSpec& spec) {
  const Volume* v = volume(spec.volume_id);
  if (v == nullptr) return sim::not_found("no volume " + std::to_string(spec.volume_id));
  const Host* h = host(spec.host_id);
  if (h == nullptr) return sim::not_found("no host " + std::to_string(spec.host_id));
  std::set<std::int64_t> used;
  for (const auto& [id, m] : mappings_) {
    if (m.host_id != spec.host_id) continue;
    if (m.volume_id == spec.volume_id)
      return sim::conflict("volume " + std::to_string(spec.volume_id) + " is already mapped to host " +
                           std::to_string(spec.host_id) + " as LUN " + std::to_string(m.lun) + " (mapping " +
                           std::to_string(id) + ")");
    used.insert(m.lun);
  }
  std::int64_t lun = 0;
  if (spec.lun) {
    lun = *spec.lun;
    if (lun < 0 || lun > kMaxLun)
      return sim::unprocessable("lun must be between 0 and " + std::to_string(kMaxLun) + ", got " + std::to_string(lun));
    if (used.count(lun))
      return sim::conflict("LUN " + std::to_string(lun) + " is already used on host " + std::to_string(spec.host_id));
  } else {
    while (used.count(lun)) ++lun;
    if (lun > kMaxLun) return sim::conflict("host " + std::to_string(spec.host_id) + " has no free LUN");
  }
  Mapping m;
  ChangeSet c;
  m.id = next_id("mapping", c);
  m.volume_id = spec.volume_id;
  m.host_id = spec.host_id;
  m.lun = lun;
  m.access = spec.access;
  c.put_mappings.push_back(m);
  c.events.push_back(make_event(Severity::kInfo, "mapping", object_name("mapping", m.id),
                                "volume \"" + v->name + "\" mapped to host \"" + h->name + "\" as LUN " +
                                    std::to_string(lun) + " (" + std::string(to_string(m.access)) + ")"));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return m;
}

Status Array::delete_mapping(Id id, std::optional<std::uint64_t> expected_revision) {
  const Mapping* m = mapping(id);
  if (m == nullptr) return sim::not_found("no mapping " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(m->revision, expected_revision, "mapping " + std::to_string(id)));
  ChangeSet c;
  c.delete_mappings.push_back(id);
  c.events.push_back(make_event(Severity::kInfo, "mapping", object_name("mapping", id),
                                "volume " + std::to_string(m->volume_id) + " unmapped from host " +
                                    std::to_string(m->host_id) + " (LUN " + std::to_string(m->lun) + ")"));
  return commit(c);
}

// ---------------------------------------------------------------------------------------
// QoS policies

sim::Result<QosPolicy> Array::create_qos_policy(const QosPolicySpec& spec) {
  AFASIM_RETURN_IF_ERROR(check_name("QoS policy", spec.name));
  for (const auto& [id, q] : qos_policies_)
    if (q.name == spec.name) return sim::conflict("a QoS policy named \"" + spec.name + "\" exists (id " + std::to_string(id) + ")");
  AFASIM_RETURN_IF_ERROR(check_qos(spec.qos, "QoS policy"));
  QosPolicy q;
  ChangeSet c;
  q.id = next_id("qos_policy", c);
  q.name = spec.name;
  q.qos = spec.qos;
  c.put_qos_policies.push_back(q);
  c.events.push_back(make_event(Severity::kInfo, "qos", object_name("qos-policy", q.id),
                                "QoS policy \"" + q.name + "\" created: " + qos_text(q.qos)));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return q;
}

sim::Result<QosPolicy> Array::update_qos_policy(Id id, const QosPolicyPatch& patch,
                                                std::optional<std::uint64_t> expected_revision) {
  const QosPolicy* cur = qos_policy(id);
  if (cur == nullptr) return sim::not_found("no QoS policy " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(cur->revision, expected_revision, "QoS policy " + std::to_string(id)));
  QosPolicy q = *cur;
  if (patch.name) {
    AFASIM_RETURN_IF_ERROR(check_name("QoS policy", *patch.name));
    for (const auto& [oid, o] : qos_policies_)
      if (oid != id && o.name == *patch.name) return sim::conflict("a QoS policy named \"" + *patch.name + "\" exists");
    q.name = *patch.name;
  }
  apply_qos_patch(q.qos, patch);
  // A patch that changes nothing is not a change: no new revision (other clients' If-Match
  // stays valid), no event; as for volumes.
  if (q.name == cur->name && q.qos == cur->qos) return q;
  AFASIM_RETURN_IF_ERROR(check_qos(q.qos, "QoS policy"));
  // Every volume under this policy must still have a consistent effective QoS.
  for (const auto& [vid, v] : volumes_) {
    if (v.qos_policy_id != id) continue;
    QosSettings eff = q.qos;
    if (v.qos.min_iops) eff.min_iops = v.qos.min_iops;
    if (v.qos.max_iops) eff.max_iops = v.qos.max_iops;
    if (v.qos.burst_iops) eff.burst_iops = v.qos.burst_iops;
    AFASIM_RETURN_IF_ERROR(check_qos(eff, "volume " + std::to_string(vid) + " (\"" + v.name + "\") under this policy"));
  }
  AFASIM_RETURN_IF_ERROR(qos::check_admission(reservations(nullptr, nullptr), reservations(nullptr, &q), reservable_));
  ++q.revision;
  ChangeSet c;
  c.put_qos_policies.push_back(q);
  c.events.push_back(make_event(Severity::kInfo, "qos", object_name("qos-policy", id),
                                "QoS policy \"" + q.name + "\" set to " + qos_text(q.qos)));
  AFASIM_RETURN_IF_ERROR(commit(c));
  // In force for every volume of the policy from the next decision on.
  for (const auto& [vid, v] : volumes_)
    if (v.qos_policy_id == id) sync_qos(v);
  return q;
}

Status Array::delete_qos_policy(Id id, std::optional<std::uint64_t> expected_revision) {
  const QosPolicy* q = qos_policy(id);
  if (q == nullptr) return sim::not_found("no QoS policy " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(q->revision, expected_revision, "QoS policy " + std::to_string(id)));
  std::int64_t n = 0;
  for (const auto& [vid, v] : volumes_) n += v.qos_policy_id == id;
  if (n > 0)
    return sim::conflict("QoS policy " + std::to_string(id) + " is attached to " + std::to_string(n) +
                         " volume(s); detach it first");
  ChangeSet c;
  c.delete_qos_policies.push_back(id);
  c.events.push_back(make_event(Severity::kInfo, "qos", object_name("qos-policy", id),
                                "QoS policy \"" + q->name + "\" deleted"));
  return commit(c);
}

}  // namespace afasim::controller
