// The Redfish / Swordfish representation of the array's objects (docs/swordfish.md). Each
// function reads the Array: model thread only. Schema versions are the ones named in
// redfish/schemas/ (the project's trimmed copies, which the tests validate against).
#include <cstdio>
#include <string>

#include "raid/raid_type.h"
#include "redfish/internal.h"
#include "redfish/query.h"
#include "redfish/service.h"

namespace afasim::redfish {
namespace {

using controller::Array;
using controller::Id;

json status(const char* state, const char* health) {
  json s = {{"State", state}};
  if (health != nullptr) s["Health"] = health;
  return s;
}

json collection(const std::string& type, const std::string& self, const std::string& name, json members) {
  const std::size_t count = members.size();
  return {{"@odata.id", self},
          {"@odata.type", "#" + type + "." + type},
          {"Name", name},
          {"Members", std::move(members)},
          {"Members@odata.count", count}};
}

json resource(const std::string& type, const std::string& self, const std::string& id, const std::string& name) {
  return {{"@odata.id", self}, {"@odata.type", "#" + type}, {"Id", id}, {"Name", name}};
}

// The array takes management changes and serves I/O (views.h system_state's "offline").
bool array_online(const Array& array) {
  for (const auto& c : array.controllers())
    if (c.state == controller::ControllerState::kActive) return true;
  return false;
}

const controller::DataPacInfo* datapac_of_chassis(const Array& array, const std::string& chassis_id) {
  for (const auto& d : array.datapacs())
    if (datapac_chassis_id(d.id) == chassis_id) return &d;
  return nullptr;
}

bool any_drive_lost(const Array& array) {
  for (const auto& d : array.drives())
    if (d.state != controller::DriveState::kHealthy) return true;
  return false;
}

// Worst health of the volumes and drives: what Storage and the system roll up.
const char* storage_health(const Array& array) {
  bool warning = any_drive_lost(array);
  for (const auto& [id, v] : array.volumes()) {
    const controller::VolumeState s = array.volume_state(id);
    if (s == controller::VolumeState::kFailed) return "Critical";
    warning = warning || s == controller::VolumeState::kDegraded;
  }
  return warning ? "Warning" : "OK";
}

json drive_status(const controller::DriveInfo& d) {
  switch (d.state) {
    case controller::DriveState::kHealthy: return status("Enabled", "OK");
    case controller::DriveState::kFailed: return status("UnavailableOffline", "Critical");
    case controller::DriveState::kRemoved: return status("Absent", "Critical");
  }
  return status("Enabled", "OK");
}

json volume_status(const Array& array, Id volume_id) {
  if (!array_online(array)) return status("StandbyOffline", "Warning");
  switch (array.volume_state(volume_id)) {
    case controller::VolumeState::kOnline: return status("Enabled", "OK");
    case controller::VolumeState::kDegraded: return status("Degraded", "Warning");
    case controller::VolumeState::kFailed: return status("UnavailableOffline", "Critical");
  }
  return status("Enabled", "OK");
}

json controller_status(const controller::ControllerInfo& c) {
  switch (c.state) {
    case controller::ControllerState::kActive: return status("Enabled", "OK");
    case controller::ControllerState::kBooting:
    case controller::ControllerState::kSyncing: return status("Starting", "OK");
    case controller::ControllerState::kVaulting: return status("Quiesced", "Warning");
    case controller::ControllerState::kOff: return status("StandbyOffline", "Warning");
    case controller::ControllerState::kFailed: return status("UnavailableOffline", "Critical");
  }
  return status("Enabled", "OK");
}

json manager_links(const Array& array) {
  json out = json::array();
  for (const auto& c : array.controllers()) out.push_back(link(uri("/Managers/" + c.name)));
  return out;
}

std::string endpoint_id(Id host_id, std::size_t index) {
  return std::to_string(host_id) + "-" + std::to_string(index + 1);
}

const char* endpoint_protocol(controller::InitiatorType t) {
  switch (t) {
    case controller::InitiatorType::kFc: return "FC";
    case controller::InitiatorType::kIscsi: return "iSCSI";
    case controller::InitiatorType::kNbd: return "TCP";
  }
  return "TCP";
}

json oem_qos(const controller::QosSettings& q) {
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
  return {{"MinIOPS", opt(q.min_iops)}, {"MaxIOPS", opt(q.max_iops)}, {"BurstIOPS", opt(q.burst_iops)}};
}

}  // namespace

controller::Id parse_segment(const std::string& segment, const std::string& what) {
  const std::optional<Id> id = controller::parse_object_id(segment);
  if (!id) throw not_found(what + " " + segment);
  return *id;
}

std::string uri(const std::string& tail) { return std::string(kRedfishRoot) + tail; }
json link(const std::string& target) { return {{"@odata.id", target}}; }
std::string storage_uri() { return uri(std::string("/Storage/") + kStorageId); }
std::string volume_uri(controller::Id id) { return storage_uri() + "/Volumes/" + std::to_string(id); }
std::string datapac_chassis_id(controller::Id datapac_id) { return "DataPac" + std::to_string(datapac_id); }
std::string drive_uri(const controller::DriveInfo& d) {
  return uri("/Chassis/" + datapac_chassis_id(d.datapac_id) + "/Drives/" + std::to_string(d.id));
}

json service_root(const Array& array, const Identity& id) {
  json root = resource("ServiceRoot.v1_20_0.ServiceRoot", uri(""), "RootService", "afasim Redfish service");
  root["RedfishVersion"] = "1.22.0";
  // A name-based UUID would need the state directory; the preset name and array name are
  // stable across restarts, which is what a client keys on (docs/swordfish.md).
  root["UUID"] = "00000000-0000-4000-8000-" + [&] {
    std::uint64_t h = 14695981039346656037ULL;
    for (unsigned char ch : array.preset().name + "/" + id.system_name) h = (h ^ ch) * 1099511628211ULL;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%012llx", static_cast<unsigned long long>(h & 0xffffffffffffULL));
    return std::string(buf);
  }();
  root["Product"] = "afasim (" + array.preset().model + ")";
  root["Vendor"] = "afasim";
  root["Systems"] = link(uri("/Systems"));
  root["Chassis"] = link(uri("/Chassis"));
  root["Managers"] = link(uri("/Managers"));
  root["Storage"] = link(uri("/Storage"));
  if (id.sessions) {
    root["SessionService"] = link(uri("/SessionService"));
    root["AccountService"] = link(uri("/AccountService"));
    root["Links"] = {{"Sessions", link(uri("/SessionService/Sessions"))}};
  } else {
    root["Links"] = json::object();
  }
  if (id.events) {
    root["EventService"] = link(uri("/EventService"));
    root["Tasks"] = link(uri("/TaskService"));
  }
  root["ProtocolFeaturesSupported"] = {{"ExpandQuery", {{"ExpandAll", true}, {"Levels", true}, {"MaxLevels", kMaxExpandLevels}, {"Links", true}, {"NoLinks", true}}},
                                       {"SelectQuery", true},
                                       {"FilterQuery", false},
                                       {"OnlyMemberQuery", false},
                                       {"ExcerptQuery", false}};
  return root;
}

json systems(const Array& /*array*/) {
  return collection("ComputerSystemCollection", uri("/Systems"), "Computer System Collection",
                    json::array({link(uri(std::string("/Systems/") + kSystemId))}));
}

json system(const Array& array, const Identity& id) {
  const auto power = array.data_path().power_status();
  json s = resource("ComputerSystem.v1_27_0.ComputerSystem", uri(std::string("/Systems/") + kSystemId), kSystemId,
                    id.system_name);
  s["SystemType"] = "Physical";
  s["Manufacturer"] = array.preset().vendor;
  s["Model"] = array.preset().model;
  s["Description"] = array.preset().description;
  s["PowerState"] = power.mains_on || power.state == "holdup" ? "On" : "Off";
  s["Status"] = array_online(array) ? status("Enabled", storage_health(array)) : status("StandbyOffline", "Warning");
  s["Storage"] = link(uri(std::string("/Systems/") + kSystemId + "/Storage"));
  s["SimpleStorage"] = link(uri(std::string("/Systems/") + kSystemId + "/SimpleStorage"));
  // An array boots its own firmware: no boot override, and no actions (a reset is refused:
  // power is a fault of the model, POST /api/v1/faults). Clients such as sushy require both.
  s["Boot"] = {{"BootSourceOverrideEnabled", "Disabled"}, {"BootSourceOverrideTarget", "None"}};
  s["Actions"] = json::object();
  s["Links"] = {{"Chassis", json::array({link(uri(std::string("/Chassis/") + kChassisId))})},
                {"ManagedBy", manager_links(array)}};
  return s;
}

json simple_storages(const Array& array) {
  json members = json::array();
  for (const auto& d : array.datapacs())
    members.push_back(link(uri(std::string("/Systems/") + kSystemId + "/SimpleStorage/" + datapac_chassis_id(d.id))));
  return collection("SimpleStorageCollection", uri(std::string("/Systems/") + kSystemId + "/SimpleStorage"),
                    "Simple storage (one per DataPac)", members);
}

// SimpleStorage (deprecated in favour of Storage, but the one storage command redfishtool
// has): a DataPac and its SSDs as Devices.
json simple_storage(const Array& array, const std::string& id) {
  const controller::DataPacInfo* d = datapac_of_chassis(array, id);
  if (d == nullptr) throw not_found("simple storage " + id);
  json j = resource("SimpleStorage.v1_3_2.SimpleStorage", uri(std::string("/Systems/") + kSystemId + "/SimpleStorage/" + id), id,
                    d->name);
  json devices = json::array();
  bool lost = false;
  for (Id drive_id : d->drive_ids) {
    const controller::DriveInfo* drive = array.drive(drive_id);
    lost = lost || drive->state != controller::DriveState::kHealthy;
    devices.push_back({{"Name", "SSD " + std::to_string(drive->slot)},
                       {"Model", drive->model},
                       {"CapacityBytes", drive->capacity_bytes},
                       {"Status", drive_status(*drive)}});
  }
  j["Devices"] = devices;
  j["Status"] = status("Enabled", lost ? "Warning" : "OK");
  j["Links"] = {{"Chassis", link(uri("/Chassis/" + id))}};
  return j;
}

json storage_collection(const std::string& self) {
  return collection("StorageCollection", self, "Storage Collection", json::array({link(storage_uri())}));
}

json storage(const Array& array) {
  json s = resource("Storage.v1_21_0.Storage", storage_uri(), kStorageId, array.preset().model + " storage");
  json drives = json::array();
  for (const auto& d : array.drives()) drives.push_back(link(drive_uri(d)));
  s["Drives@odata.count"] = drives.size();
  s["Drives"] = std::move(drives);
  s["Volumes"] = link(storage_uri() + "/Volumes");
  s["StoragePools"] = link(storage_uri() + "/StoragePools");
  s["EndpointGroups"] = link(storage_uri() + "/EndpointGroups");
  s["Connections"] = link(storage_uri() + "/Connections");
  s["Status"] = array_online(array) ? status("Enabled", storage_health(array)) : status("StandbyOffline", "Warning");
  json enclosures = json::array({link(uri(std::string("/Chassis/") + kChassisId))});
  for (const auto& d : array.datapacs()) enclosures.push_back(link(uri("/Chassis/" + datapac_chassis_id(d.id))));
  s["Links"] = {{"Enclosures", enclosures}};
  return s;
}

json chassis_collection(const Array& array) {
  json members = json::array({link(uri(std::string("/Chassis/") + kChassisId))});
  for (const auto& d : array.datapacs()) members.push_back(link(uri("/Chassis/" + datapac_chassis_id(d.id))));
  return collection("ChassisCollection", uri("/Chassis"), "Chassis Collection", members);
}

json chassis(const Array& array, const std::string& chassis_id) {
  const std::string self = uri("/Chassis/" + chassis_id);
  if (chassis_id == kChassisId) {
    json c = resource("Chassis.v1_28_0.Chassis", self, chassis_id, array.preset().model);
    c["ChassisType"] = "Enclosure";
    c["Manufacturer"] = array.preset().vendor;
    c["Model"] = array.preset().model;
    c["Status"] = status("Enabled", storage_health(array));
    c["PowerSubsystem"] = link(self + "/PowerSubsystem");
    json contains = json::array();
    for (const auto& d : array.datapacs()) contains.push_back(link(uri("/Chassis/" + datapac_chassis_id(d.id))));
    c["Links"] = {{"Contains", contains}, {"ManagedBy", manager_links(array)}};
    return c;
  }
  const controller::DataPacInfo* d = datapac_of_chassis(array, chassis_id);
  if (d == nullptr) throw not_found("chassis " + chassis_id);
  json c = resource("Chassis.v1_28_0.Chassis", self, chassis_id, d->name);
  c["ChassisType"] = "StorageEnclosure";
  bool lost = false;
  for (Id id : d->drive_ids) lost = lost || array.drive(id)->state != controller::DriveState::kHealthy;
  c["Status"] = status("Enabled", lost ? "Warning" : "OK");
  c["Drives"] = link(self + "/Drives");
  c["Links"] = {{"ContainedBy", link(uri(std::string("/Chassis/") + kChassisId))},
                {"Storage", json::array({link(storage_uri())})}};
  return c;
}

json chassis_drives(const Array& array, const std::string& chassis_id) {
  const controller::DataPacInfo* d = datapac_of_chassis(array, chassis_id);
  if (d == nullptr) throw not_found("chassis " + chassis_id + "'s drives");
  json members = json::array();
  for (Id id : d->drive_ids) members.push_back(link(drive_uri(*array.drive(id))));
  return collection("DriveCollection", uri("/Chassis/" + chassis_id + "/Drives"), d->name + " drives", members);
}

json drive(const Array& array, const std::string& chassis_id, const std::string& drive_id) {
  const controller::DataPacInfo* dp = datapac_of_chassis(array, chassis_id);
  const controller::DriveInfo* d = array.drive(parse_segment(drive_id, "drive"));
  if (dp == nullptr || d == nullptr || d->datapac_id != dp->id) throw not_found("drive " + chassis_id + "/" + drive_id);
  json j = resource("Drive.v1_22_0.Drive", drive_uri(*d), drive_id, "SSD " + std::to_string(d->slot) + " of " + dp->name);
  j["Model"] = d->model;
  j["MediaType"] = "SSD";
  j["CapacityBytes"] = d->capacity_bytes;
  j["Status"] = drive_status(*d);
  const auto wear = array.wear().drive_wear(static_cast<int>(d->id - 1));
  j["PredictedMediaLifeLeftPercent"] = std::max(0.0, 100.0 - wear.percent_endurance_used);
  j["PhysicalLocation"] = {{"PartLocation", {{"LocationOrdinalValue", d->slot}, {"LocationType", "Bay"}}}};
  const auto& rebuild = array.data_path().rebuild_status();
  if (rebuild.active && rebuild.drive == static_cast<int>(d->id - 1))
    j["Operations"] = json::array({{{"Operation", "Rebuild"}, {"PercentageComplete", static_cast<int>(rebuild.percent())}}});
  j["Links"] = {{"Chassis", link(uri("/Chassis/" + chassis_id))}, {"Storage", link(storage_uri())}};
  return j;
}

json power_subsystem(const Array& array, const std::string& chassis_id) {
  if (chassis_id != kChassisId) throw not_found("power subsystem of chassis " + chassis_id);
  const auto p = array.data_path().power_status();
  const std::string self = uri("/Chassis/" + chassis_id + "/PowerSubsystem");
  json j = resource("PowerSubsystem.v1_1_3.PowerSubsystem", self, "PowerSubsystem", "Power and supercapacitors");
  j["Status"] = status(p.mains_on ? "Enabled" : "StandbyOffline", p.mains_on && !p.supercap_degraded ? "OK" : "Warning");
  j["Batteries"] = link(self + "/Batteries");
  j["Oem"] = {{"Afasim", {
                          {"MainsState", p.state},
                          {"HoldUpSeconds", p.holdup_seconds},
                          {"InterControllerLinkUp", p.link_up}}}};
  return j;
}

json batteries(const Array& array, const std::string& chassis_id) {
  if (chassis_id != kChassisId) throw not_found("batteries of chassis " + chassis_id);
  const auto p = array.data_path().power_status();
  json members = json::array();
  for (int i = 1; i <= p.supercap_packs; ++i)
    members.push_back(link(uri("/Chassis/" + chassis_id + "/PowerSubsystem/Batteries/" + std::to_string(i))));
  return collection("BatteryCollection", uri("/Chassis/" + chassis_id + "/PowerSubsystem/Batteries"),
                    "Supercapacitor packs", members);
}

json battery(const Array& array, const std::string& chassis_id, const std::string& id) {
  const auto p = array.data_path().power_status();
  const Id n = parse_segment(id, "battery");
  if (chassis_id != kChassisId || n > p.supercap_packs) throw not_found("battery " + id);
  json j = resource("Battery.v1_5_0.Battery", uri("/Chassis/" + chassis_id + "/PowerSubsystem/Batteries/" + id), id,
                    "Supercapacitor pack " + id);
  j["Status"] = status("Enabled", p.supercap_degraded ? "Warning" : "OK");
  j["ChargeState"] = p.state == "holdup" ? "Discharging" : p.charging ? "Charging" : "Idle";
  const double packs = p.supercap_packs > 0 ? p.supercap_packs : 1;
  j["Oem"] = {{"Afasim", {
                          {"EnergyJoules", p.energy_joules / packs},
                          {"CapacityJoules", p.capacity_joules / packs}}}};
  return j;
}

json managers(const Array& array) {
  return collection("ManagerCollection", uri("/Managers"), "Manager Collection", manager_links(array));
}

json manager(const Array& array, const Identity& id, const std::string& manager_id) {
  for (const auto& c : array.controllers()) {
    if (c.name != manager_id) continue;
    json m = resource("Manager.v1_24_0.Manager", uri("/Managers/" + c.name), c.name, "Controller " + c.name);
    m["ManagerType"] = "ManagementController";
    m["FirmwareVersion"] = id.afasim_version;
    m["Status"] = controller_status(c);
    m["Links"] = {{"ManagerForChassis", json::array({link(uri(std::string("/Chassis/") + kChassisId))})},
                  {"ManagerForServers", json::array({link(uri(std::string("/Systems/") + kSystemId))})}};
    m["Oem"] = {{"Afasim", {
                            {"ControllerState", std::string(controller::to_string(c.state))},
                            {"CacheMode", std::string(controller::to_string(c.cache_mode))},
                            {"DirtyBytes", c.dirty_bytes},
                            {"OwnedVolumes", c.owned_volumes}}}};
    return m;
  }
  throw not_found("manager " + manager_id);
}

json storage_pools(const Array& array) {
  json members = json::array();
  for (const auto& [id, p] : array.pools()) members.push_back(link(storage_uri() + "/StoragePools/" + std::to_string(id)));
  return collection("StoragePoolCollection", storage_uri() + "/StoragePools", "Storage pools", members);
}

json storage_pool(const Array& array, const std::string& pool_id) {
  const controller::Pool* p = array.pool(parse_segment(pool_id, "storage pool"));
  if (p == nullptr) throw not_found("storage pool " + pool_id);
  const controller::PoolCapacity cap = array.pool_capacity(p->id);
  const std::string self = storage_uri() + "/StoragePools/" + pool_id;
  json j = resource("StoragePool.v1_7_0.StoragePool", self, pool_id, p->name);
  // Raw SSD bytes for Allocated (the pool's space) and Consumed (held by extents, RAID
  // included); Provisioned is what the pool's volumes promise their hosts.
  j["Capacity"] = {{"Data", {{"AllocatedBytes", cap.raw_usable_bytes},
                             {"ConsumedBytes", cap.raw_allocated_bytes},
                             {"ProvisionedBytes", cap.provisioned_bytes}}}};
  j["RemainingCapacityPercent"] =
      cap.raw_usable_bytes > 0 ? static_cast<int>(100 * cap.raw_free_bytes / cap.raw_usable_bytes) : 0;
  json raid = json::array();
  for (raid::RaidType t : array.raid_types_offered(*p))
    raid.push_back({{"SupportedRAIDType", std::string(raid::raid_type_name(t))}});
  j["SupportedRAIDTypes"] = raid;
  j["AllocatedVolumes"] = link(self + "/AllocatedVolumes");
  // Critical while a volume of the pool has lost data (it read OK once its drives were
  // replaced, hostile review 42); Warning while a drive is out or a volume is degraded.
  bool lost = false, failed = false;
  for (int d : array.pool_drives(*p)) lost = lost || array.drives()[d].state != controller::DriveState::kHealthy;
  for (const auto& [vid, v] : array.volumes()) {
    if (v.pool_id != p->id) continue;
    const controller::VolumeState state = array.volume_state(vid);
    failed = failed || state == controller::VolumeState::kFailed;
    lost = lost || state == controller::VolumeState::kDegraded;
  }
  j["Status"] = status("Enabled", failed ? "Critical" : lost ? "Warning" : "OK");
  json datapacs = json::array();
  for (Id d : p->datapac_ids) datapacs.push_back(d);
  j["Oem"] = {{"Afasim", {
                          {"DataPacs", datapacs},
                          {"AllocatedBytes", cap.allocated_bytes},
                          {"Revision", p->revision}}}};
  j["@odata.etag"] = etag_for(p->revision, j);
  return j;
}

json pool_volumes(const Array& array, const std::string& pool_id) {
  const Id id = parse_segment(pool_id, "storage pool");
  if (array.pool(id) == nullptr) throw not_found("storage pool " + pool_id);
  json members = json::array();
  for (const auto& [vid, v] : array.volumes())
    if (v.pool_id == id) members.push_back(link(volume_uri(vid)));
  return collection("VolumeCollection", storage_uri() + "/StoragePools/" + pool_id + "/AllocatedVolumes",
                    "Volumes of pool " + pool_id, members);
}

json volumes(const Array& array) {
  json members = json::array();
  for (const auto& [id, v] : array.volumes()) members.push_back(link(volume_uri(id)));
  return collection("VolumeCollection", storage_uri() + "/Volumes", "Volumes", members);
}

json volume_view(const Array& array, const controller::Volume& v) {
  json j = resource("Volume.v1_10_2.Volume", volume_uri(v.id), std::to_string(v.id), v.name);
  const std::int64_t allocated = array.data_path().allocated_extents(v.id) * array.extent_bytes(v.raid_type);
  j["CapacityBytes"] = v.capacity_bytes;
  // afasim tracks allocation by extent: an allocated extent counts as consumed.
  j["Capacity"] = {{"Data", {{"AllocatedBytes", allocated}, {"ConsumedBytes", allocated},
                             {"ProvisionedBytes", v.capacity_bytes}}}};
  j["ProvisioningPolicy"] = v.provisioning == controller::Provisioning::kThin ? "Thin" : "Fixed";
  j["RAIDType"] = std::string(raid::raid_type_name(v.raid_type));
  j["BlockSizeBytes"] = 512;
  j["Status"] = volume_status(array, v.id);
  const auto& rebuild = array.data_path().rebuild_status();
  if (rebuild.active && array.volume_state(v.id) == controller::VolumeState::kDegraded)
    j["Operations"] = json::array({{{"Operation", "Rebuild"}, {"PercentageComplete", static_cast<int>(rebuild.percent())}}});
  json conns = json::array();
  for (const auto& [mid, m] : array.mappings())
    if (m.volume_id == v.id) conns.push_back(link(storage_uri() + "/Connections/" + std::to_string(mid)));
  j["Links"] = {{"OwningStorageResource", link(storage_uri())},
                {"ProvidingStoragePool", link(storage_uri() + "/StoragePools/" + std::to_string(v.pool_id))}};
  j["Connections@odata.count"] = conns.size();
  j["Connections"] = std::move(conns);
  const controller::Id owner = array.data_path().owner(v.id);
  const controller::QosSettings effective = array.effective_qos(v);
  j["Oem"] = {{"Afasim", {
                          {"QoS", oem_qos(v.qos)},
                          {"EffectiveQoS", oem_qos(effective)},
                          {"QosPolicyId", v.qos_policy_id ? json(*v.qos_policy_id) : json(nullptr)},
                          {"PreferredController", v.preferred_controller},
                          {"OwnerController", owner != 0 ? json(owner) : json(nullptr)},
                          {"Revision", v.revision}}}};
  j["@odata.etag"] = etag_for(v.revision, j);
  return j;
}

json volume(const Array& array, const std::string& volume_id) {
  const controller::Volume* v = array.volume(parse_segment(volume_id, "volume"));
  if (v == nullptr) throw not_found("volume " + volume_id);
  return volume_view(array, *v);
}

json endpoint_groups(const Array& array) {
  json members = json::array();
  for (const auto& [id, h] : array.hosts()) members.push_back(link(storage_uri() + "/EndpointGroups/" + std::to_string(id)));
  return collection("EndpointGroupCollection", storage_uri() + "/EndpointGroups", "Hosts", members);
}

json endpoint_group_view(const Array& /*array*/, const controller::Host& h) {
  json j = resource("EndpointGroup.v1_3_4.EndpointGroup", storage_uri() + "/EndpointGroups/" + std::to_string(h.id),
                    std::to_string(h.id), h.name);
  j["Description"] = h.description;
  j["GroupType"] = "Initiator";
  json eps = json::array();
  for (std::size_t i = 0; i < h.initiators.size(); ++i) eps.push_back(link(storage_uri() + "/Endpoints/" + endpoint_id(h.id, i)));
  j["Endpoints@odata.count"] = eps.size();
  j["Endpoints"] = std::move(eps);
  json initiators = json::array();
  for (const auto& i : h.initiators)
    initiators.push_back({{"Type", std::string(controller::to_string(i.type))}, {"Address", i.address}});
  j["Oem"] = {{"Afasim", { {"Initiators", initiators},
                          {"Revision", h.revision}}}};
  j["@odata.etag"] = etag_for(h.revision, j);
  return j;
}

json endpoint_group(const Array& array, const std::string& host_id) {
  const controller::Host* h = array.host(parse_segment(host_id, "endpoint group"));
  if (h == nullptr) throw not_found("endpoint group " + host_id);
  return endpoint_group_view(array, *h);
}

json endpoints(const Array& array) {
  json members = json::array();
  for (const auto& [id, h] : array.hosts())
    for (std::size_t i = 0; i < h.initiators.size(); ++i) members.push_back(link(storage_uri() + "/Endpoints/" + endpoint_id(id, i)));
  return collection("EndpointCollection", storage_uri() + "/Endpoints", "Initiator endpoints", members);
}

json endpoint(const Array& array, const std::string& endpoint_id_segment) {
  const std::size_t dash = endpoint_id_segment.find('-');
  if (dash == std::string::npos) throw not_found("endpoint " + endpoint_id_segment);
  const controller::Host* h = array.host(parse_segment(endpoint_id_segment.substr(0, dash), "endpoint"));
  const Id index = parse_segment(endpoint_id_segment.substr(dash + 1), "endpoint");
  if (h == nullptr || index > static_cast<Id>(h->initiators.size())) throw not_found("endpoint " + endpoint_id_segment);
  const controller::Initiator& i = h->initiators[index - 1];
  json j = resource("Endpoint.v1_8_2.Endpoint", storage_uri() + "/Endpoints/" + endpoint_id_segment, endpoint_id_segment,
                    h->name + " " + std::string(controller::to_string(i.type)) + " initiator");
  j["EndpointProtocol"] = endpoint_protocol(i.type);
  json identifier = {{"DurableName", i.address}};
  if (i.type == controller::InitiatorType::kFc) identifier["DurableNameFormat"] = "FC_WWN";
  if (i.type == controller::InitiatorType::kIscsi) identifier["DurableNameFormat"] = "iQN";
  j["Identifiers"] = json::array({identifier});
  j["ConnectedEntities"] = json::array({{{"EntityRole", "Initiator"}}});
  j["Status"] = status("Enabled", "OK");
  return j;
}

json connections(const Array& array) {
  json members = json::array();
  for (const auto& [id, m] : array.mappings()) members.push_back(link(storage_uri() + "/Connections/" + std::to_string(id)));
  return collection("ConnectionCollection", storage_uri() + "/Connections", "Mappings", members);
}

json connection_view(const controller::Mapping& m) {
  json j = resource("Connection.v1_4_0.Connection", storage_uri() + "/Connections/" + std::to_string(m.id),
                    std::to_string(m.id), "Mapping " + std::to_string(m.id));
  j["ConnectionType"] = "Storage";
  json access = json::array({"Read"});
  if (m.access == controller::MappingAccess::kReadWrite) access.push_back("Write");
  j["VolumeInfo"] = json::array({{{"Volume", link(volume_uri(m.volume_id))}, {"LUN", m.lun}, {"AccessCapabilities", access}}});
  j["Links"] = {{"InitiatorEndpointGroups", json::array({link(storage_uri() + "/EndpointGroups/" + std::to_string(m.host_id))})}};
  j["Status"] = status("Enabled", "OK");
  j["@odata.etag"] = etag_for(m.revision, j);
  return j;
}

json connection(const Array& array, const std::string& mapping_id) {
  const controller::Mapping* m = array.mapping(parse_segment(mapping_id, "connection"));
  if (m == nullptr) throw not_found("connection " + mapping_id);
  return connection_view(*m);
}

}  // namespace afasim::redfish
