// The SessionService and AccountService of the Redfish service: views of api::Auth's
// sessions and users (docs/swordfish.md "Sessions and accounts"). A Redfish login
// (POST /redfish/v1/SessionService/Sessions {"UserName", "Password"}) makes the same kind
// of session as POST /api/v1/sessions; its token works as X-Auth-Token or as a bearer token
// on both APIs. Roles: Administrator = admin, Operator = operator, ReadOnly = monitor.
// Internal to redfish/. Thread-safe as api::Auth is.
#pragma once

#include <functional>
#include <vector>

#include "api/auth.h"
#include "controller/array.h"
#include "http/router.h"
#include "serve/model_thread.h"

namespace afasim::redfish {

class Accounts {
 public:
  // Runs a handler body and turns a RedfishError into Redfish's error shape.
  using Guard = std::function<http::Response(const std::function<http::Response()>&)>;

  // REQUIRES: auth, array and model outlive this object.
  Accounts(api::Auth& auth, controller::Array& array, serve::ModelThread& model)
      : auth_(auth), array_(array), model_(model) {}

  std::vector<http::Route> routes(Guard guard);

  // Builds one route under /redfish/v1: method, path below the root, access, handler.
  using RouteMaker = std::function<http::Route(const char*, const std::string&, const char*,
                                               std::function<http::Response(http::Request&)>)>;

 private:
  std::vector<http::Route> session_routes(const RouteMaker& route);  // SessionService
  http::Response login(http::Request& r);  // POST .../SessionService/Sessions
  std::vector<http::Route> account_routes(const RouteMaker& route);  // AccountService, Roles
  std::vector<http::Route> user_account_routes(const RouteMaker& route);  // its Accounts
  http::Response patch_account(http::Request& r);  // PATCH .../Accounts/{id}
  // Adds an event (category "user") on the model thread, naming the caller.
  void log(const http::Request& r, const std::string& object, const std::string& message);

  api::Auth& auth_;
  controller::Array& array_;
  serve::ModelThread& model_;
};

}  // namespace afasim::redfish
