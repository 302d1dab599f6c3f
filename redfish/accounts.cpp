#include "redfish/accounts.h"

#include <optional>
#include <set>
#include <string>

#include "api/rest_record.h"
#include "redfish/internal.h"
#include "redfish/service.h"

namespace afasim::redfish {
namespace {

using api::Role;

const char* redfish_role(Role r) {
  switch (r) {
    case Role::kAdmin: return "Administrator";
    case Role::kOperator: return "Operator";
    case Role::kMonitor: return "ReadOnly";
  }
  return "ReadOnly";
}

std::optional<Role> parse_redfish_role(const std::string& s) {
  if (s == "Administrator") return Role::kAdmin;
  if (s == "Operator") return Role::kOperator;
  if (s == "ReadOnly") return Role::kMonitor;
  return std::nullopt;
}

Role read_role(const json& body) {
  if (!body["RoleId"].is_string())
    throw RedfishError(400, "PropertyValueTypeError", "The value of the property RoleId must be a string.", {"#/RoleId"});
  const std::string s = body["RoleId"].get<std::string>();
  const auto role = parse_redfish_role(s);
  if (!role)
    throw RedfishError(400, "PropertyValueNotInList",
                       "The value " + s + " for the property RoleId is not in the list of acceptable values "
                       "(Administrator, Operator, ReadOnly).", {"#/RoleId"});
  return *role;
}

std::string read_string(const json& body, const char* key) {
  if (!body[key].is_string())
    throw RedfishError(400, "PropertyValueTypeError", std::string("The value of the property ") + key + " must be a string.",
                       {std::string("#/") + key});
  return body[key].get<std::string>();
}

// Refuses every member of `body` not in `allowed`: one account_view serves is read-only here
// (PropertyNotWritable, as a Volume's are; hostile review 42: it was PropertyUnknown), anything
// else PropertyUnknown.
void only(const json& body, std::initializer_list<const char*> allowed) {
  static const std::set<std::string> kServed = {"Id", "Name", "UserName", "RoleId", "Enabled", "Locked",
                                                "Password", "AccountTypes", "Links"};
  for (const auto& [key, value] : body.items()) {
    bool ok = key.rfind("@odata.", 0) == 0;
    for (const char* a : allowed) ok = ok || key == a;
    if (ok) continue;
    if (kServed.count(key))
      throw RedfishError(400, "PropertyNotWritable",
                         "The property " + key + " is a read-only property and cannot be assigned a value.", {"#/" + key});
    throw unknown_property("", key);
  }
}

std::string sessions_uri() { return uri("/SessionService/Sessions"); }
std::string accounts_uri() { return uri("/AccountService/Accounts"); }

json session_view(const api::Session& s) {
  return {{"@odata.id", sessions_uri() + "/" + std::to_string(s.id)},
          {"@odata.type", "#Session.v1_8_0.Session"},
          {"Id", std::to_string(s.id)},
          {"Name", "Session of " + s.user},
          {"UserName", s.user},
          {"SessionType", "Redfish"}};
}

json account_view(const api::User& u) {
  return {{"@odata.id", accounts_uri() + "/" + std::to_string(u.id)},
          {"@odata.type", "#ManagerAccount.v1_14_1.ManagerAccount"},
          {"Id", std::to_string(u.id)},
          {"Name", "User account " + u.name},
          {"UserName", u.name},
          {"RoleId", redfish_role(u.role)},
          {"Enabled", true},
          {"Locked", false},
          {"Password", nullptr},
          {"AccountTypes", json::array({"Redfish"})},
          {"Links", {{"Role", link(uri(std::string("/AccountService/Roles/") + redfish_role(u.role)))}}}};
}

json role_view(Role r) {
  json privileges = json::array({"Login", "ConfigureSelf"});
  if (r != Role::kMonitor) privileges.push_back("ConfigureComponents");
  if (r == Role::kAdmin) {
    privileges.push_back("ConfigureManager");
    privileges.push_back("ConfigureUsers");
  }
  const std::string id = redfish_role(r);
  return {{"@odata.id", uri("/AccountService/Roles/" + id)},
          {"@odata.type", "#Role.v1_3_3.Role"},
          {"Id", id},
          {"Name", id + " (afasim role " + api::role_name(r) + ")"},
          {"RoleId", id},
          {"IsPredefined", true},
          {"AssignedPrivileges", privileges}};
}

json members_of(const std::string& type, const std::string& self, const std::string& name, json members) {
  const std::size_t count = members.size();
  return {{"@odata.id", self}, {"@odata.type", "#" + type + "." + type}, {"Name", name}, {"Members", std::move(members)},
          {"Members@odata.count", count}};
}

bool is_admin(const http::Request& r) { return r.principal.role == api::kAdmin; }

controller::Id segment_id(const http::Request& r, const char* what) {
  return parse_segment(r.path_param("id"), what);
}

void check(const sim::Status& s) {
  if (!s.is_ok()) throw from_status(s);
}

}  // namespace

void Accounts::log(const http::Request& r, const std::string& object, const std::string& message) {
  const std::string actor = r.principal.user;
  // Recorded as a "user.event" (api/rest_record.h), as /api/v1/users records its events: the
  // request changes api::Auth, not the model, and its body may hold a password.
  model_.post([this, actor, object, message] { api::log_user_event(array_, actor, object, message); });
}

std::vector<http::Route> Accounts::routes(Guard guard) {
  const RouteMaker route = [guard](const char* method, const std::string& path, const char* access,
                                   std::function<http::Response(http::Request&)> fn) {
    return http::Route{method, uri(path), [guard, fn](http::Request& r) {
                         return guard([&] {
                           if (!r.query.empty())
                             throw RedfishError(400, "QueryNotSupported", "Querying is not supported by the implementation.");
                           return fn(r);
                         });
                       },
                       access};
  };
  std::vector<http::Route> out = session_routes(route);
  for (http::Route& r : account_routes(route)) out.push_back(std::move(r));
  return out;
}

// The login: Basic credentials (the guard checked them) or {"UserName", "Password"}; not a
// session token (X-Auth-Token or bearer), which would renew itself for ever.
http::Response Accounts::login(http::Request& r) {
  if (r.principal.via == "bearer")
    throw RedfishError(401, "ResourceAtUriUnauthorized", std::string(api::kLoginNeedsPassword) + ".");
  std::string user = r.principal.user;
  std::string proof = r.principal.proof;  // Basic, checked by the guard
  if (!user.empty() && !api::login_body_repeats_basic(r, "UserName", "Password"))
    throw RedfishError(400, "PropertyValueConflict", std::string(api::kLoginCredentialsTwice) + ".");
  if (user.empty()) {
    const json body = parse_body(r);
    only(body, {"UserName", "Password"});
    require_members(body, {"UserName", "Password"});
    const std::string name = read_string(body, "UserName");
    const api::PasswordCheck check =
        auth_.check_login(name, read_string(body, "Password"), r.remote_address, &proof);
    if (check == api::PasswordCheck::kLimited) {
      const std::int64_t wait_s = auth_.login_wait_s(r.remote_address);
      throw too_many_failed_logins(auth_.too_many_failed_logins(r.remote_address, wait_s), wait_s);
    }
    if (check == api::PasswordCheck::kBusy)
      throw password_checks_busy(auth_.password_checks_busy(r.remote_address));
    if (check == api::PasswordCheck::kWrong)  // counted as a failed login by check_login
      throw RedfishError(401, "ResourceAtUriUnauthorized", "Wrong user name or password.");
    user = name;
  }
  auto made = auth_.create_session(user, proof);
  if (!made.is_ok() && made.status().code() == sim::Code::kPreconditionFailed)
    throw RedfishError(401, "ResourceAtUriUnauthorized", made.status().message() + ".");
  if (!made.is_ok()) {
    // The bound is the user's (or all users'): another session must end first, and waiting
    // does not help (sessions last hours). 409 with the bound, as /api/v1 says it; it was 503
    // with a Retry-After inviting a retry loop (hostile round 31).
    if (made.status().code() == sim::Code::kConflict)
      throw RedfishError(409, "SessionLimitExceeded", "The session establishment failed: " + made.status().message() + ".",
                         {}, "Delete one of the user's sessions (DELETE /redfish/v1/SessionService/Sessions/{id}), then log in.");
    throw from_status(made.status());
  }
  http::Response res = json_response(201, session_view(made->first));
  res.headers.set("X-Auth-Token", made->second);
  res.headers.set("Location", sessions_uri() + "/" + std::to_string(made->first.id));
  return res;
}

std::vector<http::Route> Accounts::session_routes(const RouteMaker& route) {
  std::vector<http::Route> out;
  out.push_back(route("GET", "/SessionService", api::kMonitor, [this](http::Request&) {
    return json_response(200, {{"@odata.id", uri("/SessionService")},
                               {"@odata.type", "#SessionService.v1_2_0.SessionService"},
                               {"Id", "SessionService"},
                               {"Name", "Session Service"},
                               {"ServiceEnabled", true},
                               {"SessionTimeout", auth_.options().session_ttl.count()},
                               {"Sessions", link(sessions_uri())}});
  }));
  out.push_back(route("GET", "/SessionService/Sessions", api::kMonitor, [this](http::Request& r) {
    json members = json::array();
    for (const api::Session& s : auth_.sessions())
      if (is_admin(r) || s.user == r.principal.user) members.push_back(link(sessions_uri() + "/" + std::to_string(s.id)));
    return json_response(200, members_of("SessionCollection", sessions_uri(), "Sessions", members));
  }));
  out.push_back(route("POST", "/SessionService/Sessions", api::kPublic, [this](http::Request& r) { return login(r); }));
  out.push_back(route("GET", "/SessionService/Sessions/{id}", api::kMonitor, [this](http::Request& r) {
    const controller::Id id = segment_id(r, "session");
    for (const api::Session& s : auth_.sessions())
      if (s.id == id && (is_admin(r) || s.user == r.principal.user)) return json_response(200, session_view(s));
    throw not_found("session " + r.path_param("id"));
  }));
  out.push_back(route("DELETE", "/SessionService/Sessions/{id}", api::kMonitor, [this](http::Request& r) {
    const controller::Id id = segment_id(r, "session");
    bool visible = false;
    for (const api::Session& s : auth_.sessions()) visible = visible || (s.id == id && (is_admin(r) || s.user == r.principal.user));
    if (!visible) throw not_found("session " + r.path_param("id"));
    check(auth_.delete_session(id));
    return http::Response(204, "", "");
  }));
  return out;
}

std::vector<http::Route> Accounts::account_routes(const RouteMaker& route) {
  std::vector<http::Route> out;
  out.push_back(route("GET", "/AccountService", api::kMonitor, [](http::Request&) {
    return json_response(200, {{"@odata.id", uri("/AccountService")},
                               {"@odata.type", "#AccountService.v1_18_1.AccountService"},
                               {"Id", "AccountService"},
                               {"Name", "Account Service"},
                               {"ServiceEnabled", true},
                               {"MinPasswordLength", api::kPasswordMinBytes},
                               {"MaxPasswordLength", api::kPasswordMaxBytes},
                               {"Accounts", link(accounts_uri())},
                               {"Roles", link(uri("/AccountService/Roles"))}});
  }));
  out.push_back(route("GET", "/AccountService/Roles", api::kMonitor, [](http::Request&) {
    json members = json::array();
    for (Role r : {Role::kAdmin, Role::kOperator, Role::kMonitor})
      members.push_back(link(uri(std::string("/AccountService/Roles/") + redfish_role(r))));
    return json_response(200, members_of("RoleCollection", uri("/AccountService/Roles"), "Roles", members));
  }));
  out.push_back(route("GET", "/AccountService/Roles/{id}", api::kMonitor, [](http::Request& r) {
    const auto role = parse_redfish_role(r.path_param("id"));
    if (!role) throw not_found("role " + r.path_param("id"));
    return json_response(200, role_view(*role));
  }));
  for (http::Route& r : user_account_routes(route)) out.push_back(std::move(r));
  return out;
}

std::vector<http::Route> Accounts::user_account_routes(const RouteMaker& route) {
  std::vector<http::Route> out;
  out.push_back(route("GET", "/AccountService/Accounts", api::kMonitor, [this](http::Request& r) {
    json members = json::array();
    for (const api::User& u : auth_.users())
      if (is_admin(r) || u.name == r.principal.user) members.push_back(link(accounts_uri() + "/" + std::to_string(u.id)));
    return json_response(200, members_of("ManagerAccountCollection", accounts_uri(), "Accounts", members));
  }));
  out.push_back(route("GET", "/AccountService/Accounts/{id}", api::kMonitor, [this](http::Request& r) {
    auto u = auth_.user(segment_id(r, "account"));
    if (!u.is_ok() || (!is_admin(r) && u->name != r.principal.user)) throw not_found("account " + r.path_param("id"));
    return json_response(200, account_view(*u));
  }));
  out.push_back(route("POST", "/AccountService/Accounts", api::kAdmin, [this](http::Request& r) {
    const json body = parse_body(r);
    only(body, {"UserName", "Password", "RoleId", "Enabled"});
    require_members(body, {"UserName", "Password", "RoleId"});
    if (body.contains("Enabled") && body["Enabled"] != true)
      throw RedfishError(400, "PropertyValueNotInList", "afasim has no disabled accounts: Enabled must be true.", {"#/Enabled"});
    auto made = auth_.create_user(read_string(body, "UserName"), read_role(body), read_string(body, "Password"));
    if (!made.is_ok()) throw from_status(made.status());
    log(r, "user/" + std::to_string(made->id), "user " + made->name + " created (role " + api::role_name(made->role) + ") through Redfish");
    http::Response res = json_response(201, account_view(*made));
    res.headers.set("Location", accounts_uri() + "/" + std::to_string(made->id));
    return res;
  }));
  out.push_back(route("PATCH", "/AccountService/Accounts/{id}", api::kMonitor,
                      [this](http::Request& r) { return patch_account(r); }));
  out.push_back(route("DELETE", "/AccountService/Accounts/{id}", api::kAdmin, [this](http::Request& r) {
    const controller::Id id = segment_id(r, "account");
    check(auth_.delete_user(id));
    log(r, "user/" + std::to_string(id), "user " + std::to_string(id) + " deleted through Redfish");
    return http::Response(204, "", "");
  }));
  return out;
}

// PATCH /AccountService/Accounts/{id}: Password (one's own, or anyone's for an admin),
// RoleId (admin).
http::Response Accounts::patch_account(http::Request& r) {
  const controller::Id id = segment_id(r, "account");
  auto u = auth_.user(id);
  if (!u.is_ok() || (!is_admin(r) && u->name != r.principal.user)) throw not_found("account " + r.path_param("id"));
  const json body = parse_body(r);
  only(body, {"Password", "RoleId"});
  std::optional<Role> role;
  std::optional<std::string> password;
  if (body.contains("RoleId")) {
    if (!is_admin(r))
      throw RedfishError(403, "InsufficientPrivilege", "There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation (RoleId needs Administrator).");
    role = read_role(body);
  }
  if (body.contains("Password")) password = read_string(body, "Password");
  // One's own password only with proof of the current one, as PATCH /api/v1/users/{id} asks
  // current_password: HTTP Basic credentials are that proof, a session token is not (a
  // leaked token would take the account over for good; hostile round 18). An admin resets
  // another user's password with a token as before.
  if (password && u->name == r.principal.user && r.principal.via != "basic")
    throw RedfishError(403, "InsufficientPrivilege",
                       "Changing your own password needs your current password: send this request with HTTP Basic "
                       "credentials (user name and current password) instead of a session token, or use PATCH "
                       "/api/v1/users/" + std::to_string(id) + " with current_password. The password is unchanged.",
                       {"#/Password"},
                       "Resubmit the request with HTTP Basic credentials, or use the ReST API with current_password.");
  // Basic proves the current password (checked above): refused if it changed since.
  const bool own = password && u->name == r.principal.user;
  auto changed = auth_.update_user(id, role, password, own ? &r.principal.proof : nullptr);
  if (!changed.is_ok()) throw from_status(changed.status());
  log(r, "user/" + std::to_string(id), "user " + changed->name + " changed through Redfish");
  return json_response(200, account_view(*changed));
}

}  // namespace afasim::redfish
