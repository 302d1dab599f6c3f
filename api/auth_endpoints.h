// The endpoints of users and sessions (docs/api.md "Authentication"): POST/GET/DELETE
// /sessions, and /users for admins (a user may read itself and change its own password).
// Internal to api/. Their changes go to the event log like any other, naming who made them.
#pragma once

#include <vector>

#include "api/auth.h"
#include "api/endpoints.h"

namespace afasim::api {

class AuthEndpoints {
 public:
  // REQUIRES: auth, array and model outlive this object.
  AuthEndpoints(Auth& auth, controller::Array& array, serve::ModelThread& model);
  std::vector<Route> routes();

 private:
  Reply create_session(const Call& c);
  Reply list_sessions(const Call& c);
  Reply delete_session(const Call& c);
  Reply list_users(const Call& c);
  Reply create_user(const Call& c);
  Reply get_user(const Call& c);
  Reply update_user(const Call& c);
  Reply delete_user(const Call& c);

  // Adds an event (category "user") on the model thread, made by the caller.
  void log(const Call& c, const std::string& object, const std::string& message);

  Auth& auth_;
  controller::Array& array_;
  serve::ModelThread& model_;
};

}  // namespace afasim::api
