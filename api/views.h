// JSON representations of the array's objects, as the ReST API v1 shows them (docs/api.md,
// api/openapi.json). Each function reads the Array, so it runs on the model thread only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "controller/array.h"

namespace afasim::api {

// What the array does not know about itself and the server does.
struct SystemIdentity {
  std::string name;            // the array's name
  std::string afasim_version;  // e.g. "0.1.0"
};

nlohmann::json system_view(controller::Array& array, const SystemIdentity& identity);
// "online", "degraded" (a controller is not active) or "offline" (none is).
std::string system_state(const controller::Array& array);
// Why the array refuses management changes now (mains off or on hold-up, no controller
// active: booting, failed); "" when it takes them (issue 14 item 6).
std::string management_unavailable(const controller::Array& array);
nlohmann::json controller_view(const controller::ControllerInfo& c);
// Mains, supercaps and the inter-controller link (GET /system's "power").
nlohmann::json power_view(const controller::PowerStatus& p);
nlohmann::json datapac_view(const controller::Array& array, const controller::DataPacInfo& d);
nlohmann::json pool_view(const controller::Array& array, const controller::Pool& p);
nlohmann::json volume_view(const controller::Array& array, const controller::Volume& v);
nlohmann::json host_view(const controller::Array& array, const controller::Host& h);
nlohmann::json mapping_view(const controller::Mapping& m);
nlohmann::json qos_policy_view(const controller::Array& array, const controller::QosPolicy& q);
nlohmann::json event_view(const controller::Event& e);
nlohmann::json fault_view(const controller::FaultRecord& f);
nlohmann::json rebuild_view(const controller::RebuildStatus& r);
// The background scrub: its options, what it found, and the RAID engine's read repairs.
nlohmann::json scrub_view(const controller::DataPath& data_path);
// The array's wear summary, projected life and the leveler's traffic (docs/wear-leveling.md).
nlohmann::json wear_view(const controller::WearLeveler& wear);

// {min_iops, max_iops, burst_iops} with null for unset.
nlohmann::json qos_view(const controller::QosSettings& q);

}  // namespace afasim::api
