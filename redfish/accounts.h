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

 private:
  // Adds an event (category "user") on the model thread, naming the caller.
  void log(const http::Request& r, const std::string& object, const std::string& message);

  api::Auth& auth_;
  controller::Array& array_;
  serve::ModelThread& model_;
};

}  // namespace afasim::redfish
