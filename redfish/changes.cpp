// Creating, changing and deleting through Redfish (docs/swordfish.md "Changes"): volumes,
// hosts (EndpointGroups) and mappings (Connections). Each reads the request body's
// properties, refuses what it does not know (PropertyUnknown) or may not change
// (PropertyNotWritable), and calls the same Array methods the ReST API v1 calls.
// Model thread only.
#include <set>
#include <string>

#include "raid/raid_type.h"
#include "redfish/internal.h"

namespace afasim::redfish {
namespace {

using controller::Array;
using controller::Id;

RedfishError bad_value(const std::string& property, const std::string& message) {
  return RedfishError(400, "PropertyValueError", message, {"#/" + property});
}

RedfishError type_error(const std::string& property, const std::string& expected) {
  return RedfishError(400, "PropertyValueTypeError",
                      "The value of the property " + property + " must be " + expected + ".", {"#/" + property});
}

// Refuses every member of `body` not in `writable`: known read-only properties get
// PropertyNotWritable, anything else PropertyUnknown. "@odata.*" annotations are ignored.
void check_members(const json& body, const std::set<std::string>& writable, const std::set<std::string>& read_only,
                   const std::string& prefix = "") {
  for (const auto& [key, value] : body.items()) {
    if (key.rfind("@odata.", 0) == 0 || writable.count(key)) continue;
    if (read_only.count(key))
      throw RedfishError(400, "PropertyNotWritable", "The property " + prefix + key + " is a read-only property and cannot be assigned a value.",
                         {"#/" + prefix + key});
    throw unknown_property(prefix, key);
  }
}

std::string read_string(const json& body, const std::string& key) {
  if (!body[key].is_string()) throw type_error(key, "a string");
  return body[key].get<std::string>();
}

std::int64_t read_integer(const json& body, const std::string& key, const std::string& path) {
  const json& v = body[key];
  if (!v.is_number_integer() && !v.is_number_unsigned()) throw type_error(path, "an integer");
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    throw RedfishError(400, "PropertyValueOutOfRange", "The value of " + path + " is out of range.", {"#/" + path});
  return v.get<std::int64_t>();
}

// The id at the end of a link {"@odata.id": "<prefix>/<id>"}; 400 when it names another kind.
Id linked_id(const json& ref, const std::string& prefix, const std::string& path) {
  if (!ref.is_object() || !ref.contains("@odata.id") || !ref["@odata.id"].is_string() || ref.size() != 1)
    throw type_error(path, "a link {\"@odata.id\": \"" + prefix + "/{id}\"}");
  const std::string target = ref["@odata.id"].get<std::string>();
  if (target.rfind(prefix + "/", 0) != 0)
    throw RedfishError(400, "PropertyValueIncorrect", "The link " + path + " must name a resource under " + prefix + ".",
                       {"#/" + path});
  try {
    return parse_segment(target.substr(prefix.size() + 1), "resource");
  } catch (const RedfishError&) {
    throw RedfishError(400, "ResourceMissingAtURI", "The resource at the URI " + target + " was not found.", {"#/" + path});
  }
}

// One optional IOPS figure of Oem.Afasim.QoS: absent → unchanged, null → cleared.
std::optional<std::optional<std::int64_t>> qos_field(const json& qos, const char* key) {
  if (!qos.contains(key)) return std::nullopt;
  if (qos[key].is_null()) return std::optional<std::int64_t>();
  return read_integer(qos, key, std::string("Oem/Afasim/QoS/") + key);
}

struct OemVolume {
  std::optional<std::optional<std::int64_t>> min_iops, max_iops, burst_iops;
  std::optional<std::optional<Id>> qos_policy_id;
  std::optional<Id> preferred_controller;
};

OemVolume read_oem_volume(const json& body) {
  OemVolume out;
  if (!body.contains("Oem")) return out;
  const json& oem = body["Oem"];
  if (!oem.is_object()) throw type_error("Oem", "an object");
  check_members(oem, {"Afasim"}, {}, "Oem/");
  if (!oem.contains("Afasim")) return out;
  const json& a = oem["Afasim"];
  if (!a.is_object()) throw type_error("Oem/Afasim", "an object");
  check_members(a, {"QoS", "QosPolicyId", "PreferredController"},
                {"EffectiveQoS", "OwnerController", "Revision"}, "Oem/Afasim/");
  if (a.contains("QoS")) {
    const json& q = a["QoS"];
    if (!q.is_object()) throw type_error("Oem/Afasim/QoS", "an object");
    check_members(q, {"MinIOPS", "MaxIOPS", "BurstIOPS"}, {}, "Oem/Afasim/QoS/");
    out.min_iops = qos_field(q, "MinIOPS");
    out.max_iops = qos_field(q, "MaxIOPS");
    out.burst_iops = qos_field(q, "BurstIOPS");
  }
  if (a.contains("QosPolicyId"))
    out.qos_policy_id = a["QosPolicyId"].is_null() ? std::optional<Id>()
                                                   : std::optional<Id>(read_integer(a, "QosPolicyId", "Oem/Afasim/QosPolicyId"));
  if (a.contains("PreferredController"))
    out.preferred_controller = read_integer(a, "PreferredController", "Oem/Afasim/PreferredController");
  return out;
}

const std::set<std::string> kVolumeReadOnly = {"Id", "Capacity", "Status", "BlockSizeBytes", "Operations",
                                               "Connections", "Connections@odata.count", "RAIDType", "ProvisioningPolicy",
                                               "Links"};  // Links: served; set only at creation (review 42)

raid::RaidType read_raid_type(const json& body) {
  const std::string s = read_string(body, "RAIDType");
  const auto t = raid::parse_raid_type(s);
  if (!t || (*t != raid::RaidType::kRaid10 && *t != raid::RaidType::kRaid5))
    throw RedfishError(400, "PropertyValueNotInList",
                       "The value " + s + " for the property RAIDType is not in the list of acceptable values (RAID10, RAID5).",
                       {"#/RAIDType"});
  return *t;
}

controller::Provisioning read_provisioning(const json& body) {
  const std::string s = read_string(body, "ProvisioningPolicy");
  if (s == "Thin") return controller::Provisioning::kThin;
  if (s == "Fixed") return controller::Provisioning::kFixed;
  throw RedfishError(400, "PropertyValueNotInList",
                     "The value " + s + " for the property ProvisioningPolicy is not in the list of acceptable values (Thin, Fixed).",
                     {"#/ProvisioningPolicy"});
}

// A link or Oem id in the body that names nothing: 400 ResourceMissingAtURI naming the
// property, as a malformed link is. The array's own refusal was 404 ResourceNotFound, which
// reads as the collection posted to being gone (hostile review 42).
void check_references(const Array& array, std::optional<Id> pool_id, std::optional<std::optional<Id>> qos_policy_id) {
  if (pool_id && array.pool(*pool_id) == nullptr)
    throw RedfishError(400, "ResourceMissingAtURI",
                       "The resource at the URI " + storage_uri() + "/StoragePools/" + std::to_string(*pool_id) +
                           " was not found.",
                       {"#/Links/ProvidingStoragePool"});
  if (qos_policy_id && *qos_policy_id && array.qos_policy(**qos_policy_id) == nullptr)
    throw RedfishError(400, "ResourceMissingAtURI",
                       "There is no QoS policy " + std::to_string(**qos_policy_id) + " (Oem/Afasim/QosPolicyId).",
                       {"#/Oem/Afasim/QosPolicyId"});
}

void check_revision(const std::optional<IfMatch>& if_match, std::uint64_t current) {
  if (if_match && !if_match->matches(current))
    throw RedfishError(412, "PreconditionFailed",
                       "The ETag supplied did not match the ETag required to change this resource.", {},
                       "Read the resource again (GET) and retry with its @odata.etag.");
}

}  // namespace

json create_volume(Array& array, const json& body) {
  check_members(body, {"Name", "CapacityBytes", "RAIDType", "ProvisioningPolicy", "Links", "Oem"}, kVolumeReadOnly);
  require_members(body, {"Name", "CapacityBytes"});
  controller::VolumeSpec spec;
  spec.name = read_string(body, "Name");
  spec.capacity_bytes = read_integer(body, "CapacityBytes", "CapacityBytes");
  if (body.contains("RAIDType")) spec.raid_type = read_raid_type(body);
  if (body.contains("ProvisioningPolicy")) spec.provisioning = read_provisioning(body);
  if (body.contains("Links")) {
    const json& links = body["Links"];
    if (!links.is_object()) throw type_error("Links", "an object");
    check_members(links, {"ProvidingStoragePool"}, {"OwningStorageResource"}, "Links/");
    if (links.contains("ProvidingStoragePool"))
      spec.pool_id = linked_id(links["ProvidingStoragePool"], storage_uri() + "/StoragePools", "Links/ProvidingStoragePool");
  }
  const OemVolume oem = read_oem_volume(body);
  if (oem.min_iops) spec.qos.min_iops = *oem.min_iops;
  if (oem.max_iops) spec.qos.max_iops = *oem.max_iops;
  if (oem.burst_iops) spec.qos.burst_iops = *oem.burst_iops;
  if (oem.qos_policy_id) spec.qos_policy_id = *oem.qos_policy_id;
  if (oem.preferred_controller) spec.preferred_controller = *oem.preferred_controller;
  check_references(array, spec.pool_id, oem.qos_policy_id);
  auto made = array.create_volume(spec);
  if (!made.is_ok()) throw from_status(made.status());
  return volume_view(array, *made);
}

json patch_volume(Array& array, const std::string& volume_id, const json& body, const std::optional<IfMatch>& if_match) {
  const controller::Volume* v = array.volume(parse_segment(volume_id, "volume"));
  if (v == nullptr) throw not_found("volume " + volume_id);
  check_members(body, {"Name", "CapacityBytes", "Oem"}, kVolumeReadOnly);
  check_revision(if_match, v->revision);
  controller::VolumePatch patch;
  if (body.contains("Name")) patch.name = read_string(body, "Name");
  if (body.contains("CapacityBytes")) patch.capacity_bytes = read_integer(body, "CapacityBytes", "CapacityBytes");
  const OemVolume oem = read_oem_volume(body);
  patch.min_iops = oem.min_iops;
  patch.max_iops = oem.max_iops;
  patch.burst_iops = oem.burst_iops;
  patch.qos_policy_id = oem.qos_policy_id;
  patch.preferred_controller = oem.preferred_controller;
  check_references(array, std::nullopt, oem.qos_policy_id);
  auto changed = array.update_volume(v->id, patch, v->revision);
  if (!changed.is_ok()) throw from_status(changed.status());
  return volume_view(array, *changed);
}

void delete_volume(Array& array, const std::string& volume_id, const std::optional<IfMatch>& if_match) {
  const controller::Volume* v = array.volume(parse_segment(volume_id, "volume"));
  if (v == nullptr) throw not_found("volume " + volume_id);
  check_revision(if_match, v->revision);
  if (sim::Status s = array.delete_volume(v->id, v->revision); !s.is_ok()) throw from_status(s);
}

json create_endpoint_group(Array& array, const json& body) {
  check_members(body, {"Name", "Description", "GroupType", "Oem"}, {"Id", "Endpoints", "Endpoints@odata.count"});
  require_members(body, {"Name"});
  controller::HostSpec spec;
  spec.name = read_string(body, "Name");
  if (body.contains("Description")) spec.description = read_string(body, "Description");
  if (body.contains("GroupType") && read_string(body, "GroupType") != "Initiator")
    throw RedfishError(400, "PropertyValueNotInList",
                       "afasim's endpoint groups are hosts: GroupType must be Initiator.", {"#/GroupType"});
  if (body.contains("Oem")) {
    const json& oem = body["Oem"];
    if (!oem.is_object()) throw type_error("Oem", "an object");
    check_members(oem, {"Afasim"}, {}, "Oem/");
    const json& a = oem.value("Afasim", json::object());
    if (!a.is_object()) throw type_error("Oem/Afasim", "an object");
    check_members(a, {"Initiators"}, {"Revision"}, "Oem/Afasim/");
    if (a.contains("Initiators")) {
      if (!a["Initiators"].is_array()) throw type_error("Oem/Afasim/Initiators", "an array");
      for (const json& i : a["Initiators"]) {
        if (!i.is_object()) throw type_error("Oem/Afasim/Initiators", "an array of {Type, Address}");
        check_members(i, {"Type", "Address"}, {}, "Oem/Afasim/Initiators/");
        if (!i.contains("Type") || !i.contains("Address"))
          throw bad_value("Oem/Afasim/Initiators", "Each initiator needs Type (fc, iscsi, nbd) and Address.");
        const std::string type = read_string(i, "Type");
        const auto t = controller::parse_initiator_type(type);
        if (!t)
          throw RedfishError(400, "PropertyValueNotInList",
                             "The initiator type " + type + " is not one of fc, iscsi, nbd.", {"#/Oem/Afasim/Initiators"});
        spec.initiators.push_back({*t, read_string(i, "Address")});
      }
    }
  }
  auto made = array.create_host(spec);
  if (!made.is_ok()) throw from_status(made.status());
  return endpoint_group_view(array, *made);
}

void delete_endpoint_group(Array& array, const std::string& host_id, const std::optional<IfMatch>& if_match) {
  const controller::Host* h = array.host(parse_segment(host_id, "endpoint group"));
  if (h == nullptr) throw not_found("endpoint group " + host_id);
  check_revision(if_match, h->revision);
  if (sim::Status s = array.delete_host(h->id, h->revision); !s.is_ok()) throw from_status(s);
}

json create_connection(Array& array, const json& body) {
  check_members(body, {"Name", "ConnectionType", "VolumeInfo", "Links"}, {"Id", "Status"});
  if (body.contains("ConnectionType") && read_string(body, "ConnectionType") != "Storage")
    throw RedfishError(400, "PropertyValueNotInList", "afasim's connections are mappings: ConnectionType must be Storage.",
                       {"#/ConnectionType"});
  require_members(body, {"VolumeInfo", "Links"});
  const json& info = body["VolumeInfo"];
  if (!info.is_array() || info.size() != 1 || !info[0].is_object())
    throw bad_value("VolumeInfo", "An afasim mapping joins one volume to one host: VolumeInfo must hold exactly one entry.");
  check_members(info[0], {"Volume", "LUN", "AccessCapabilities"}, {"AccessState"}, "VolumeInfo/0/");
  if (!info[0].contains("Volume")) throw bad_value("VolumeInfo/0/Volume", "VolumeInfo needs the Volume link.");
  controller::MappingSpec spec;
  spec.volume_id = linked_id(info[0]["Volume"], storage_uri() + "/Volumes", "VolumeInfo/0/Volume");
  if (info[0].contains("LUN")) spec.lun = read_integer(info[0], "LUN", "VolumeInfo/0/LUN");
  if (info[0].contains("AccessCapabilities")) {
    const json& a = info[0]["AccessCapabilities"];
    if (a == json::array({"Read"})) spec.access = controller::MappingAccess::kReadOnly;
    else if (a == json::array({"Read", "Write"}) || a == json::array({"Write", "Read"})) spec.access = controller::MappingAccess::kReadWrite;
    else throw bad_value("VolumeInfo/0/AccessCapabilities", "AccessCapabilities must be [\"Read\"] or [\"Read\", \"Write\"].");
  }
  const json& links = body["Links"];
  if (!links.is_object()) throw type_error("Links", "an object");
  check_members(links, {"InitiatorEndpointGroups"}, {}, "Links/");
  const json& groups = links.value("InitiatorEndpointGroups", json());
  if (!groups.is_array() || groups.size() != 1)
    throw bad_value("Links/InitiatorEndpointGroups", "An afasim mapping names exactly one host: one InitiatorEndpointGroups link.");
  spec.host_id = linked_id(groups[0], storage_uri() + "/EndpointGroups", "Links/InitiatorEndpointGroups/0");
  auto made = array.create_mapping(spec);
  if (!made.is_ok()) throw from_status(made.status());
  return connection_view(*made);
}

void delete_connection(Array& array, const std::string& mapping_id, const std::optional<IfMatch>& if_match) {
  const controller::Mapping* m = array.mapping(parse_segment(mapping_id, "connection"));
  if (m == nullptr) throw not_found("connection " + mapping_id);
  check_revision(if_match, m->revision);
  if (sim::Status s = array.delete_mapping(m->id, m->revision); !s.is_ok()) throw from_status(s);
}

}  // namespace afasim::redfish
