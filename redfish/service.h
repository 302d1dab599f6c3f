// redfish::Service — a DMTF Redfish / SNIA Swordfish service at /redfish/v1 over the same
// array the ReST API v1 serves (docs/swordfish.md): no second state, no second user store.
//
// It maps afasim's objects to Redfish resources (the array → ComputerSystem and Storage,
// the ISE chassis and its DataPacs → Chassis, the controllers → Managers, SSDs → Drives,
// pools → StoragePools, volumes → Volumes, hosts → EndpointGroups of initiator Endpoints,
// mappings → Connections), and its SessionService and AccountService are views of
// api::Auth's sessions and users. Its routes are registered on the same http::Server as
// /api/v1 (api::RestServerOptions::extra_routes), behind the same guard: HTTP Basic, a
// bearer token, or Redfish's X-Auth-Token (api/auth.h).
//
// Every handler reads or changes the Array inside ModelThread::call(); errors are Redfish's
// error shape ({"error": {"code", "message", "@Message.ExtendedInfo": [...]}}, DSP0266
// 9.6 "Error responses") with Base.1.22 message ids.
//
// Thread-safety: build the routes before the server starts; handlers run on server threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/auth.h"
#include "controller/array.h"
#include "http/router.h"
#include "redfish/events.h"
#include "serve/model_thread.h"

namespace afasim::redfish {

struct ServiceOptions {
  // The array's name (ComputerSystem.Name) and afasim's version (Manager.FirmwareVersion).
  std::string system_name = "afasim";
  std::string afasim_version = "unknown";
  // Users and sessions (SessionService, AccountService). Null: no SessionService and no
  // AccountService routes (a server without authentication).
  std::shared_ptr<api::Auth> auth;
  // The EventService (redfish/events.h); null: none. REQUIRES: outlives the routes.
  Events* events = nullptr;
};

inline constexpr const char* kRedfishRoot = "/redfish/v1";

class Service {
 public:
  // REQUIRES: array, model and options.auth outlive this object and the routes it returns.
  Service(controller::Array& array, serve::ModelThread& model, ServiceOptions options);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Every route of the service (full paths under /redfish), each with its `access`.
  std::vector<http::Route> routes();

  // For api::RestServerOptions::reshape_error: a problem+json answer of a /redfish path in
  // Redfish's error shape, the problem's detail as the message: a 401 or 403 as Base.1.22
  // NoValidSession / InsufficientPrivilege (a 401 with the Basic challenge DSP0266 asks for),
  // 429 and 503 as a login's, 404 ResourceMissingAtURI, 405 OperationNotAllowed (its Allow
  // kept), any other GeneralError (hostile round 31: the router's 404 and 405, a precheck's
  // 400 and 421 came as problem+json). Other paths, and answers already Redfish's: unchanged.
  static void reshape_error(const http::Request& r, http::Response& res);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace afasim::redfish
