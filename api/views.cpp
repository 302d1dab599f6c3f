#include "api/views.h"

#include <cmath>

namespace afasim::api {
namespace {

using nlohmann::json;
using namespace afasim::controller;

json optional_int(const std::optional<std::int64_t>& v) {
  return v ? json(*v) : json(nullptr);
}

json by_raid_type(const std::map<raid::RaidType, std::int64_t>& m) {
  json out = json::object();
  for (const auto& [t, bytes] : m) out[std::string(raid::raid_type_name(t))] = bytes;
  return out;
}

json capacity_view(const PoolCapacity& c) {
  return {
      {"pre_raid_bytes", c.pre_raid_bytes},           {"raw_usable_bytes", c.raw_usable_bytes},
      {"raw_allocated_bytes", c.raw_allocated_bytes}, {"raw_free_bytes", c.raw_free_bytes},
      {"provisioned_bytes", c.provisioned_bytes},     {"allocated_bytes", c.allocated_bytes},
      {"usable_bytes", by_raid_type(c.usable_bytes)}, {"free_bytes", by_raid_type(c.free_bytes)}};
}

}  // namespace

// Online while every controller is active, degraded with at least one, else offline.
std::string system_state(const Array& array) {
  const std::size_t active = array.active_controllers();
  if (active == array.controller_count()) return "online";
  return active > 0 ? "degraded" : "offline";
}

std::string management_unavailable(const Array& array) {
  const PowerStatus p = array.data_path().power_status();
  if (!p.mains_on)
    return "the mains are off (power " + p.state +
           "); until POST /faults {\"type\": \"power_restore\"} only reads are served";
  if (system_state(array) != "offline") return "";
  std::string states;
  for (const auto& c : array.controllers())
    states += (states.empty() ? "" : ", ") + std::string("controller ") + c.name + " " +
              std::string(to_string(c.state));
  return "no controller is active (" + states + "); only reads are served until one is";
}

json qos_view(const QosSettings& q) {
  return {{"min_iops", optional_int(q.min_iops)},
          {"max_iops", optional_int(q.max_iops)},
          {"burst_iops", optional_int(q.burst_iops)}};
}

json system_view(Array& array, const SystemIdentity& identity) {
  const auto& preset = array.preset();
  PoolCapacity total;
  std::map<raid::RaidType, std::int64_t> usable;
  std::map<raid::RaidType, std::int64_t> free;
  for (const auto& [id, p] : array.pools()) {
    const PoolCapacity c = array.pool_capacity(id);
    total.pre_raid_bytes += c.pre_raid_bytes;
    total.raw_usable_bytes += c.raw_usable_bytes;
    total.raw_allocated_bytes += c.raw_allocated_bytes;
    total.raw_free_bytes += c.raw_free_bytes;
    total.provisioned_bytes += c.provisioned_bytes;
    total.allocated_bytes += c.allocated_bytes;
    for (const auto& [t, b] : c.usable_bytes) usable[t] += b;
    for (const auto& [t, b] : c.free_bytes) free[t] += b;
  }
  json capacity = capacity_view(total);
  capacity["usable_bytes"] = by_raid_type(usable);
  capacity["free_bytes"] = by_raid_type(free);
  std::int64_t nominal = 0;
  for (const auto& d : array.drives()) nominal += d.capacity_bytes;
  capacity["nominal_bytes"] = nominal;

  json extent_bytes = json::object();
  for (raid::RaidType t : {raid::RaidType::kRaid10, raid::RaidType::kRaid5})
    extent_bytes[std::string(raid::raid_type_name(t))] = array.extent_bytes(t);

  return {{"name", identity.name},
          {"model", preset.model},
          {"vendor", preset.vendor},
          {"preset", preset.name},
          {"state", system_state(array)},
          {"sim_time_ns", array.simulator().now()},
          {"seed", array.simulator().seed()},
          {"extent_bytes", extent_bytes},
          {"firmware_version", identity.afasim_version},
          {"afasim_version", identity.afasim_version},
          {"api_version", "v1"},
          {"rebuild", rebuild_view(array.data_path().rebuild_status())},
          {"power", power_view(array.data_path().power_status())},
          {"wear", wear_view(array.wear())},
          {"counts",
           {{"controllers", array.controllers().size()},
            {"datapacs", array.datapacs().size()},
            {"drives", array.drives().size()},
            {"pools", array.pools().size()},
            {"volumes", array.volumes().size()},
            {"hosts", array.hosts().size()},
            {"mappings", array.mappings().size()},
            {"qos_policies", array.qos_policies().size()},
            {"events", array.events(0, 0).total}}},
          {"capacity", capacity}};
}

namespace {

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// One SSD's wear (docs/wear-leveling.md "API").
json drive_wear_view(const DriveWear& w) {
  return {{"host_bytes_written", w.host_bytes_written},
          {"nand_bytes_written", w.nand_bytes_written},
          {"write_amplification", w.write_amplification},
          {"percent_endurance_used", w.percent_endurance_used},
          {"host_write_bytes_per_second", w.host_write_bytes_per_second},
          {"nand_write_bytes_per_second", w.nand_write_bytes_per_second},
          {"target_offset_points", w.target_offset_points},
          {"life_at_current_rate_s", optional_number(w.life_at_current_rate_s)},
          {"life_leveled_s", optional_number(w.life_leveled_s)}};
}

}  // namespace

json wear_view(const WearLeveler& wear) {
  const WearSummary s = wear.summary();
  const auto& o = wear.options();
  auto drive_id = [](int index) { return index >= 0 ? json(index + 1) : json(nullptr); };
  json replacements = json::array();
  for (const auto& r : s.replacements)
    replacements.push_back({{"drive", r.drive + 1},
                            {"replaced_time_ns", r.replaced_ns},
                            {"absorbed_time_ns", r.absorbed_ns ? json(*r.absorbed_ns) : json(nullptr)},
                            {"spread_at_replacement_points", r.spread_at_replacement_points}});
  return {{"policy", pool::wear_policy_name(s.policy)},
          {"threshold_points", o.threshold_points},
          {"stagger_gap_points", o.stagger_gap_points},
          {"drives_in_service", s.drives_in_service},
          {"min_percent_endurance_used", s.min_percent},
          {"max_percent_endurance_used", s.max_percent},
          {"mean_percent_endurance_used", s.mean_percent},
          {"spread_points", s.spread_points},
          {"max_min_ratio", optional_number(s.max_min_ratio)},
          {"most_worn_drive", drive_id(s.most_worn_drive)},
          {"least_worn_drive", drive_id(s.least_worn_drive)},
          {"projected_life_s", optional_number(s.projected_life_s)},
          {"projected_life_unleveled_s", optional_number(s.projected_life_unleveled_s)},
          {"moves",
           {{"started", s.moves.started},
            {"completed", s.moves.completed},
            {"aborted", s.moves.aborted},
            {"bytes_read", s.moves.bytes_read},
            {"bytes_written", s.moves.bytes_written},
            {"in_flight", wear.moves_in_flight()}}},
          {"replacements", replacements}};
}

json controller_view(const ControllerInfo& c) {
  return {{"id", c.id},
          {"name", c.name},
          {"state", std::string(to_string(c.state))},
          {"cache_mode", std::string(to_string(c.cache_mode))},
          {"cache_mode_reason", c.cache_mode_reason},
          {"dirty_bytes", c.dirty_bytes},
          {"cached_bytes", c.cached_bytes},
          {"mirrored_bytes", c.mirrored_bytes},
          {"write_cache_bytes", c.write_cache_bytes},
          {"owned_volumes", c.owned_volumes}};
}

json power_view(const controller::PowerStatus& p) {
  return {{"mains", p.mains_on ? "on" : "off"},
          {"state", p.state},
          {"inter_controller_link", p.link_up ? "up" : "cut"},
          {"supercaps",
           {{"packs", p.supercap_packs},
            {"degraded", p.supercap_degraded},
            {"energy_joules", std::round(p.energy_joules)},
            {"capacity_joules", std::round(p.capacity_joules)},
            {"vault_energy_joules", std::round(p.vault_energy_joules)},
            {"charging", p.charging},
            {"holdup_seconds", std::floor(p.holdup_seconds * 10) / 10}}}};
}

json datapac_view(const Array& array, const DataPacInfo& d) {
  json drives = json::array();
  for (Id id : d.drive_ids) {
    const DriveInfo* drive = array.drive(id);
    drives.push_back({{"id", drive->id},
                      {"slot", drive->slot},
                      {"model", drive->model},
                      {"state", std::string(to_string(drive->state))},
                      // drive_slow's factor, kept across restarts: a slowed drive is healthy
                      // (a failed or pulled one serves nothing: 1).
                      {"latency_multiplier",
                       drive->state == DriveState::kHealthy
                           ? array.data_path().ssd(static_cast<int>(drive->id - 1)).latency_multiplier()
                           : 1.0},
                      {"capacity_bytes", drive->capacity_bytes},
                      {"wear", drive_wear_view(array.wear().drive_wear(static_cast<int>(drive->id - 1)))}});
  }
  const auto pool = array.pool_of_datapac(d.id);
  return {{"id", d.id},
          {"name", d.name},
          {"pool_id", pool ? json(*pool) : json(nullptr)},
          {"drive_count", d.drive_ids.size()},
          {"drives", drives}};
}

json pool_view(const Array& array, const Pool& p) {
  json raid_types = json::array();
  for (raid::RaidType t : array.raid_types_offered(p))
    raid_types.push_back(std::string(raid::raid_type_name(t)));
  std::int64_t volumes = 0;
  for (const auto& [id, v] : array.volumes()) volumes += v.pool_id == p.id;
  return {{"id", p.id},
          {"name", p.name},
          {"datapac_ids", p.datapac_ids},
          {"raid_types", raid_types},
          {"space_thresholds_percent", p.space_thresholds_percent},
          {"volume_count", volumes},
          {"capacity", capacity_view(array.pool_capacity(p.id))},
          {"revision", p.revision}};
}

// What the QoS scheduler shows of a volume now (docs/qos.md "Observability").
json qos_status_view(const Array& array, Id volume_id) {
  const qos::VolumeStatus st = array.qos_status(volume_id).value_or(qos::VolumeStatus{});
  return {{"current_iops", st.current_iops},
          {"throttled_time_ns", st.throttled_ns},
          {"burst_credit_seconds", st.burst_credit_seconds()},
          {"queued_ios", st.queued_ios},
          {"min_iops_held", optional_int(st.min_iops_held)}};
}

json volume_view(const Array& array, const Volume& v) {
  return {{"id", v.id},
          {"name", v.name},
          {"pool_id", v.pool_id},
          {"capacity_bytes", v.capacity_bytes},
          {"raid_type", std::string(raid::raid_type_name(v.raid_type))},
          {"provisioning", std::string(to_string(v.provisioning))},
          {"preferred_controller", v.preferred_controller},
          {"owner_controller", array.data_path().owner(v.id) != 0 ? json(array.data_path().owner(v.id)) : json(nullptr)},
          {"min_iops", optional_int(v.qos.min_iops)},
          {"max_iops", optional_int(v.qos.max_iops)},
          {"burst_iops", optional_int(v.qos.burst_iops)},
          {"qos_policy_id", v.qos_policy_id ? json(*v.qos_policy_id) : json(nullptr)},
          {"effective_qos", qos_view(array.effective_qos(v))},
          {"allocated_bytes",
           array.data_path().allocated_extents(v.id) * array.extent_bytes(v.raid_type)},
          // Acknowledged writes lost with a controller's cache (controller/lost_blocks.h): reads
          // of those blocks fail until written again.
          {"lost_bytes", array.data_path().lost_bytes(v.id)},
          // While no controller serves I/O (mains off, booting) no volume is online; nor is one
          // no controller owns (its preferred controller booting, a takeover not yet done):
          // its I/O waits for an owner (hostile round 27 read "online" while NBD reads hung).
          {"state", system_state(array) == "offline" || array.data_path().owner(v.id) == 0
                        ? std::string("offline")
                        : std::string(to_string(array.volume_state(v.id)))},
          {"qos_status", qos_status_view(array, v.id)},
          {"created_time_ns", v.created_time_ns},
          {"revision", v.revision}};
}

json host_view(const Array& array, const Host& h) {
  json initiators = json::array();
  for (const auto& i : h.initiators)
    initiators.push_back({{"type", std::string(to_string(i.type))}, {"address", i.address}});
  std::int64_t mappings = 0;
  for (const auto& [id, m] : array.mappings()) mappings += m.host_id == h.id;
  return {{"id", h.id},
          {"name", h.name},
          {"description", h.description},
          {"initiators", initiators},
          {"mapping_count", mappings},
          {"revision", h.revision}};
}

json mapping_view(const Mapping& m) {
  return {{"id", m.id},
          {"volume_id", m.volume_id},
          {"host_id", m.host_id},
          {"lun", m.lun},
          {"access", std::string(to_string(m.access))},
          {"revision", m.revision}};
}

json qos_policy_view(const Array& array, const QosPolicy& q) {
  std::int64_t volumes = 0;
  for (const auto& [id, v] : array.volumes()) volumes += v.qos_policy_id == q.id;
  return {{"id", q.id},
          {"name", q.name},
          {"min_iops", optional_int(q.qos.min_iops)},
          {"max_iops", optional_int(q.qos.max_iops)},
          {"burst_iops", optional_int(q.qos.burst_iops)},
          {"volume_count", volumes},
          {"revision", q.revision}};
}

json event_view(const Event& e) {
  return {{"id", e.id},
          {"time_ns", e.time_ns},
          {"severity", std::string(to_string(e.severity))},
          {"category", e.category},
          {"object", e.object},
          {"message", e.message},
          {"actor", e.actor.empty() ? json(nullptr) : json(e.actor)}};
}

json fault_view(const FaultRecord& f) {
  json j = {{"id", f.id}, {"time_ns", f.time_ns}, {"type", f.type}};
  if (f.drive != 0) j["drive"] = f.drive;
  if (f.type == "drive_slow") j["latency_multiplier"] = f.latency_multiplier;
  if (f.controller != 0) j["controller"] = f.controller;
  j["result"] = f.result;
  return j;
}

json scrub_view(const controller::DataPath& dp) {
  const raid::ScrubOptions& o = dp.scrub_options();
  const raid::ScrubStatus& s = dp.scrub_status();
  return {{"enabled", o.enabled},
          {"bytes_per_second", o.bytes_per_second},
          {"pass_interval_s", sim::to_seconds(o.pass_interval_ns)},
          {"running", s.running},
          {"passes_completed", s.passes_completed},
          {"rows_checked", s.rows_checked},
          {"rows_total", s.rows_total},
          {"bytes_read", s.bytes_read},
          {"media_errors", s.media_errors},
          {"repaired", s.repaired},
          {"unrecoverable", s.unrecoverable},
          {"mismatches", s.mismatches},
          {"read_repairs", dp.raid_stats().read_repairs},
          {"unrecoverable_reads", dp.raid_stats().unrecoverable_reads}};
}

json rebuild_view(const controller::RebuildStatus& r) {
  if (!r.active) return {{"active", false}};
  return {{"active", true},
          {"drive", r.drive + 1},
          {"total_bytes", r.total_bytes},
          {"done_bytes", r.done_bytes},
          {"stalled_bytes", r.stalled_bytes},
          {"percent", std::floor(r.percent() * 10) / 10},
          {"started_time_ns", r.started_ns}};
}

}  // namespace afasim::api
