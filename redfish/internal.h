// What the Redfish service's files share: URIs, the error type and its Base message ids,
// and the resource builders (redfish/resources.cpp) and changes (redfish/changes.cpp).
// Internal to redfish/. Builders and changes read or change the Array: model thread only.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/array.h"
#include "http/message.h"
#include "sim/status.h"

namespace afasim::redfish {

using nlohmann::json;

// The ids of the objects under the root (docs/swordfish.md "URIs").
inline constexpr const char* kSystemId = "1";      // the array as a ComputerSystem
inline constexpr const char* kStorageId = "1";     // the array as a Storage
inline constexpr const char* kChassisId = "ISE";   // the enclosure; DataPacs are "DataPac1", "DataPac2"

std::string uri(const std::string& tail);  // kRedfishRoot + tail
json link(const std::string& target);      // {"@odata.id": target}
std::string storage_uri();                 // /redfish/v1/Storage/1
std::string volume_uri(controller::Id id);
std::string drive_uri(const controller::DriveInfo& d);
std::string datapac_chassis_id(controller::Id datapac_id);

// A Redfish error: HTTP status and one @Message.ExtendedInfo entry. `message_id` is the
// Base registry's key ("PropertyUnknown"); the body names it "Base.1.22.<key>".
struct RedfishError : std::runtime_error {
  RedfishError(int status_in, std::string message_id_in, std::string message_in,
               std::vector<std::string> related_in = {}, std::string resolution_in = "")
      : std::runtime_error(message_in), status(status_in), message_id(std::move(message_id_in)),
        message(std::move(message_in)), related(std::move(related_in)), resolution(std::move(resolution_in)) {}
  int status;
  std::string message_id;
  // The whole message: what() stops at a NUL a client's value may hold (hostile round 31).
  std::string message;
  std::vector<std::string> related;  // JSON pointers of the properties at fault: "#/CapacityBytes"
  std::string resolution;
  // Retry-After in seconds, sent by Service's handlers when set, and as 5 with any 503
  // without it (a 429 sets it: the seconds until the client may try again).
  std::optional<int> retry_after_s;
};

inline constexpr const char* kBaseRegistry = "Base.1.22";

RedfishError not_found(const std::string& what);
// 400 PropertyUnknown for the member `key` of the object at `prefix` ("" for the body,
// "Oem/Afasim/" under it). The message shows a key that is not a plain property name
// (letters, digits, '_', '@', '.', '#') as a JSON string, so {"/": 1} reads
// 'The property "/" is not ...', and RelatedProperties holds its JSON pointer with '~' and
// '/' escaped (RFC 6901): "#/~1".
RedfishError unknown_property(const std::string& prefix, const std::string& key);
// 400 CreateFailedMissingReqProperties naming the members of `required` that `body` lacks
// (only those: "the required property Password was missing"); nothing when none is.
void require_members(const json& body, std::initializer_list<const char*> required);
// 503 ServiceTemporarilyUnavailable for a login refused at api::AuthOptions::
// password_hashes_in_progress_max (`detail`: api::Auth::password_checks_busy(address)), with
// its Retry-After (api::kPasswordBusyRetryAfterS).
RedfishError password_checks_busy(const std::string& detail);
// 429 GeneralError for a login from an address past api::AuthOptions::
// failed_logins_per_minute (`detail`: api::Auth::too_many_failed_logins), with Retry-After
// `wait_s` (api::Auth::login_wait_s).
RedfishError too_many_failed_logins(const std::string& detail, std::int64_t wait_s);
// The RedfishError for a model error. REQUIRES: !s.is_ok().
RedfishError from_status(const sim::Status& s, std::vector<std::string> related = {});
// {"error": {...}} for e (DSP0266 "Error responses").
json error_body(const RedfishError& e);
// A JSON response with OData-Version 4.0; an "@odata.etag" in the body becomes the ETag.
http::Response json_response(int status, const json& body);
// A strong ETag naming `revision` and a digest of the body: "\"<revision>-<fnv1a hex>\"".
std::string etag_for(std::uint64_t revision, const json& body);
// What an If-Match header asks for: the revisions of its strong ETags that afasim could have
// made (etag_for; a weak tag, W/"...", or another's tag names none).
struct IfMatch {
  std::vector<std::uint64_t> revisions;
  // Whether the resource at `current` may be changed (any tag of the list names it).
  bool matches(std::uint64_t current) const;
};
// The request's If-Match (RFC 9110 13.1.1), nullopt when absent or "*"; 400 HeaderInvalid
// when it is neither "*" nor a list of quoted tags.
std::optional<IfMatch> parse_if_match(const http::Request& r);
// The request's Last-Event-ID (an SSE client reconnecting: the id of the last event it got),
// nullopt when absent; 400 HeaderInvalid when it is not a whole number.
std::optional<std::int64_t> parse_last_event_id(const http::Request& r);

// ---- resources (redfish/resources.cpp) --------------------------------------------------

struct Identity {
  std::string system_name;
  std::string afasim_version;
  bool sessions = false;  // SessionService and AccountService are served
  bool events = false;    // EventService is served
};

json service_root(const controller::Array& array, const Identity& id);
json systems(const controller::Array& array);
json system(const controller::Array& array, const Identity& id);
json storage_collection(const std::string& self);
json simple_storages(const controller::Array& array);
json simple_storage(const controller::Array& array, const std::string& id);
json storage(const controller::Array& array);
json chassis_collection(const controller::Array& array);
json chassis(const controller::Array& array, const std::string& chassis_id);
json chassis_drives(const controller::Array& array, const std::string& chassis_id);
json drive(const controller::Array& array, const std::string& chassis_id, const std::string& drive_id);
json power_subsystem(const controller::Array& array, const std::string& chassis_id);
json batteries(const controller::Array& array, const std::string& chassis_id);
json battery(const controller::Array& array, const std::string& chassis_id, const std::string& id);
json managers(const controller::Array& array);
json manager(const controller::Array& array, const Identity& id, const std::string& manager_id);
json storage_pools(const controller::Array& array);
json storage_pool(const controller::Array& array, const std::string& pool_id);
json pool_volumes(const controller::Array& array, const std::string& pool_id);
json volumes(const controller::Array& array);
json volume(const controller::Array& array, const std::string& volume_id);
json volume_view(const controller::Array& array, const controller::Volume& v);
json endpoint_groups(const controller::Array& array);
json endpoint_group(const controller::Array& array, const std::string& host_id);
json endpoints(const controller::Array& array);
json endpoint(const controller::Array& array, const std::string& endpoint_id);
json connections(const controller::Array& array);
json connection(const controller::Array& array, const std::string& mapping_id);
json connection_view(const controller::Mapping& m);
json endpoint_group_view(const controller::Array& array, const controller::Host& h);

// The id of a path segment: a positive decimal integer, else 404 naming `what`.
controller::Id parse_segment(const std::string& segment, const std::string& what);

// ---- changes (redfish/changes.cpp) -------------------------------------------------------

// POST .../Volumes, PATCH and DELETE .../Volumes/{id}: the new or changed resource.
json create_volume(controller::Array& array, const json& body);
json patch_volume(controller::Array& array, const std::string& volume_id, const json& body,
                  const std::optional<IfMatch>& if_match);
void delete_volume(controller::Array& array, const std::string& volume_id,
                   const std::optional<IfMatch>& if_match);
// POST .../EndpointGroups (a host), DELETE .../EndpointGroups/{id}.
json create_endpoint_group(controller::Array& array, const json& body);
void delete_endpoint_group(controller::Array& array, const std::string& host_id,
                           const std::optional<IfMatch>& if_match);
// POST .../Connections (a mapping), DELETE .../Connections/{id}.
json create_connection(controller::Array& array, const json& body);
void delete_connection(controller::Array& array, const std::string& mapping_id,
                       const std::optional<IfMatch>& if_match);

// The body of a POST or PATCH as one JSON object, else 400 MalformedJSON / 415.
json parse_body(const http::Request& r);

}  // namespace afasim::redfish
