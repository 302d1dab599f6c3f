#include "api/auth_endpoints.h"

#include "api/fields.h"
#include "api/problem.h"
#include "api/rest_server.h"

namespace afasim::api {
namespace {

using nlohmann::json;

json user_view(const User& u) {
  return {{"id", u.id}, {"name", u.name}, {"role", role_name(u.role)}, {"created_unix_s", u.created_unix_s}};
}

json session_view(const Session& s) {
  return {{"id", s.id},
          {"user", s.user},
          {"role", role_name(s.role)},
          {"created_unix_s", s.created_unix_s},
          {"expires_unix_s", s.expires_unix_s}};
}

bool is_admin(const Call& c) {
  return c.http.principal.role == kAdmin;
}

ApiError forbidden(const Call& c, const std::string& what) {
  return ApiError(403, problem::kForbidden,
                  "user \"" + c.user() + "\" has role " + c.http.principal.role + "; " + what +
                      " needs admin");
}

Role read_role(const FieldReader& f, const std::string& key) {
  const std::string name = f.required_string(key);
  const auto role = parse_role(name);
  if (!role)
    throw ApiError(422, problem::kUnprocessable,
                   key + ": unknown role " + quote_json(name) + " (monitor, operator or admin)");
  return *role;
}

// Checks `user`'s `password` from the caller's address as a login does: 429 while the address
// is past its failed logins, 503 when no hash slot is open to it; false (and counted as a
// failed login from the address) when it does not match. `proof`: Auth::check_password's.
// `login`: a login body, which a password verified before passes as Basic's does
// (Auth::check_login); a current_password is always hashed.
bool password_matches(Auth& auth, const Call& c, const std::string& user, const std::string& password,
                      std::string* proof, bool login) {
  const std::string& address = c.http.remote_address;
  const PasswordCheck check = login ? auth.check_login(user, password, address, proof)
                                    : auth.check_password(user, password, address, proof);
  if (check == PasswordCheck::kLimited) {
    const std::int64_t wait_s = auth.login_wait_s(address);
    throw ApiError(429, problem::kTooManyFailedLogins, auth.too_many_failed_logins(address, wait_s))
        .with_retry_after_s(wait_s);
  }
  if (check == PasswordCheck::kBusy)
    throw ApiError(503, problem::kPasswordChecksBusy, auth.password_checks_busy(address))
        .with_retry_after_s(kPasswordBusyRetryAfterS);
  return check == PasswordCheck::kMatch;
}

}  // namespace

AuthEndpoints::AuthEndpoints(Auth& auth, controller::Array& array, serve::ModelThread& model)
    : auth_(auth), array_(array), model_(model) {}

std::vector<Route> AuthEndpoints::routes() {
  auto bind = [this](Reply (AuthEndpoints::*fn)(const Call&)) {
    return [this, fn](const Call& c) { return (this->*fn)(c); };
  };
  return {
      {"POST", "/sessions", bind(&AuthEndpoints::create_session), kPublic},
      {"GET", "/sessions", bind(&AuthEndpoints::list_sessions), kMonitor},
      {"DELETE", "/sessions/{id}", bind(&AuthEndpoints::delete_session), kMonitor},
      {"GET", "/users", bind(&AuthEndpoints::list_users), kAdmin},
      {"POST", "/users", bind(&AuthEndpoints::create_user), kAdmin},
      {"GET", "/users/{id}", bind(&AuthEndpoints::get_user), kMonitor},
      {"PATCH", "/users/{id}", bind(&AuthEndpoints::update_user), kMonitor},
      {"DELETE", "/users/{id}", bind(&AuthEndpoints::delete_user), kAdmin},
  };
}

void AuthEndpoints::log(const Call& c, const std::string& object, const std::string& message) {
  const std::string actor = c.user();
  // Recorded as a "user.event" (api/rest_record.h): the call itself changes api::Auth, not the
  // model, and its body may hold a password.
  model_.post([this, actor, object, message] { log_user_event(array_, actor, object, message); });
}

// POST /sessions: credentials from the Authorization header (checked by the guard) or from
// a body {"username", "password"}. Not a bearer token: a token that could mint tokens would
// renew itself for ever (each child a fresh 8 hours, and alive after its parent is revoked),
// so a stolen one would outlive its expiry (hostile round 18).
Reply AuthEndpoints::create_session(const Call& c) {
  no_query(c.http);
  if (c.http.principal.via == "bearer") throw ApiError(401, problem::kUnauthorized, kLoginNeedsPassword);
  std::string user = c.user();
  std::string proof = c.http.principal.proof;  // Basic, checked by the guard
  if (!user.empty() && !login_body_repeats_basic(c.http, "username", "password"))
    throw ApiError(400, problem::kBadRequest, kLoginCredentialsTwice);
  if (user.empty()) {
    if (c.http.body.empty())
      throw ApiError(401, problem::kUnauthorized,
                     "send HTTP Basic credentials or a body {\"username\", \"password\"}");
    const json body = json_body(c, false);
    FieldReader f(body, {"username", "password"});
    const std::string name = f.required_string("username");
    const std::string password = f.required_string("password");
    if (!password_matches(auth_, c, name, password, &proof, true))  // counted as a failed login
      throw ApiError(401, problem::kUnauthorized, "wrong user name or password");
    user = name;
  }
  auto made = auth_.create_session(user, proof);
  if (!made && made.status().code() == sim::Code::kPreconditionFailed)
    throw ApiError(401, problem::kUnauthorized, made.status().message());
  if (!made) throw from_status(made.status());
  json view = session_view(made->first);
  view["token"] = made->second;
  Reply r(201, std::move(view));
  r.location = std::string(kApiPrefix) + "/sessions/" + std::to_string(made->first.id);
  return r;
}

Reply AuthEndpoints::list_sessions(const Call& c) {
  const ListQuery q = parse_list_query(c.http);
  Pager page(q);
  for (const Session& s : auth_.sessions())
    if (is_admin(c) || s.user == c.user()) page.offer([&] { return session_view(s); });
  return page.reply();
}

Reply AuthEndpoints::delete_session(const Call& c) {
  no_query(c.http);
  const controller::Id id = parse_id(c, "session");
  bool mine = false;
  for (const Session& s : auth_.sessions()) mine = mine || (s.id == id && s.user == c.user());
  if (!mine && !is_admin(c)) throw not_found("no session " + std::to_string(id) + " of yours");
  check(auth_.delete_session(id));
  return no_content();
}

Reply AuthEndpoints::list_users(const Call& c) {
  const ListQuery q = parse_list_query(c.http);
  Pager page(q);
  for (const User& u : auth_.users()) page.offer([&] { return user_view(u); });
  return page.reply();
}

Reply AuthEndpoints::create_user(const Call& c) {
  no_query(c.http);
  const json body = json_body(c, false);
  FieldReader f(body, {"name", "role", "password"}, {"id", "created_unix_s"});
  const std::string name = f.required_string("name");
  const Role role = read_role(f, "role");
  const std::string password = f.required_string("password");
  User u = unwrap(auth_.create_user(name, role, password));
  log(c, "user/" + std::to_string(u.id), "user \"" + u.name + "\" created with role " + role_name(u.role));
  Reply r(201, user_view(u));
  r.location = std::string(kApiPrefix) + "/users/" + std::to_string(u.id);
  return r;
}

Reply AuthEndpoints::get_user(const Call& c) {
  no_query(c.http);
  const controller::Id id = parse_id(c, "user");
  auto u = auth_.user(id);
  if (!u) throw from_status(u.status());
  if (!is_admin(c) && u->name != c.user()) throw forbidden(c, "reading another user");
  return Reply(200, user_view(*u));
}

Reply AuthEndpoints::update_user(const Call& c) {
  no_query(c.http);
  const controller::Id id = parse_id(c, "user");
  const json body = json_body(c, true);
  FieldReader f(body, {"role", "password", "current_password"}, {"id", "name", "created_unix_s"});
  std::optional<Role> role;
  if (f.has("role")) role = read_role(f, "role");
  const std::optional<std::string> password = f.string("password");
  const std::optional<std::string> current_password = f.string("current_password");
  auto current = auth_.user(id);
  if (!current) throw from_status(current.status());
  if (!is_admin(c) && (current->name != c.user() || role))
    throw forbidden(c, "changing another user, or a role,");
  // One's own password only with the current one: a token alone (a shell history, a proxy
  // log) must not take the account over for good (hostile round 17). An admin resets
  // another user's without it.
  // Review 41: a current_password beside a role change only was never checked, right or wrong.
  if (current_password && !password)
    throw bad_request("current_password goes with password (it proves the one who changes their own password "
                      "knows it); without a new password there is nothing for it to prove");
  if (current_password && current->name != c.user())
    throw bad_request("current_password is for changing your own password; an admin sets another user's "
                      "without it");
  std::string proof;
  if (password && current->name == c.user()) {
    if (!current_password) throw bad_request("changing your own password needs current_password (your password now)");
    if (!password_matches(auth_, c, current->name, *current_password, &proof, false))  // a failed login too
      throw ApiError(403, problem::kForbidden, "current_password does not match: your password is unchanged");
  }
  if (!role && !password) return Reply(200, user_view(*current));  // nothing to change
  User u = unwrap(auth_.update_user(id, role, password, proof.empty() ? nullptr : &proof));
  std::string what = role ? std::string("role ") + role_name(u.role) : "";
  if (password) what += std::string(what.empty() ? "" : " and ") + "password";
  log(c, "user/" + std::to_string(u.id), "user \"" + u.name + "\" changed: " + what);
  return Reply(200, user_view(u));
}

Reply AuthEndpoints::delete_user(const Call& c) {
  no_query(c.http);
  const controller::Id id = parse_id(c, "user");
  auto u = auth_.user(id);
  if (!u) throw from_status(u.status());
  check(auth_.delete_user(id));
  log(c, "user/" + std::to_string(id), "user \"" + u->name + "\" deleted");
  return no_content();
}

}  // namespace afasim::api
