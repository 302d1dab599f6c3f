#include "api/auth.h"

#include "api/auth_internal.h"
#include "api/problem.h"
#include "config/json_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

namespace afasim::api {

using nlohmann::json;
using auth_internal::argon2_cost_problem;
using auth_internal::argon2id_hash;
using auth_internal::argon2id_matches;
using auth_internal::base64_decode;
using auth_internal::base64url;
using auth_internal::check_name;
using auth_internal::check_password_rules;
using auth_internal::credentials_header;
using auth_internal::equal_constant_time;
using auth_internal::hmac;
using auth_internal::random_bytes;
using auth_internal::split_credentials;
using auth_internal::sha256;
using auth_internal::write_private_file;

namespace {

std::int64_t now_unix_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

http::Response unauthorized(const std::string& detail, const std::string& instance) {
  http::Response res =
      http::problem_response(401, problem::kUnauthorized, detail, instance);
  res.headers.set("WWW-Authenticate", "Basic realm=\"afasim\", charset=\"UTF-8\", Bearer realm=\"afasim\"");
  return res;
}

struct Auth::Impl {
  struct Stored {
    User user;
    std::string hash;  // argon2id encoded
  };
  struct Live {
    Session session;
    std::string token_digest;  // SHA-256 of the token
  };

  AuthOptions options;
  mutable std::mutex mu;
  std::vector<Stored> users;
  std::int64_t next_user_id = 1;
  std::vector<Live> sessions;
  std::int64_t next_session_id = 1;
  const std::string mac_key = random_bytes(32);
  std::unordered_map<std::string, std::string> verified;  // user -> HMAC of "user:password"
  // Failed password checks by client address in the minute since the first of them
  // (AuthOptions::failed_logins_per_minute); an address whose minute is over is dropped.
  struct Failures {
    int count = 0;
    std::chrono::steady_clock::time_point since;
  };
  std::unordered_map<std::string, Failures> failures;
  // Made by open() once the options are checked (AuthOptions::password_hashes_in_progress_max).
  std::unique_ptr<HashSlots> hash_slots;
  bool created_admin = false;
  // Moves with every change that can end a credential (a password, a user or a session
  // deleted), under mu: a credential_check() looks again only when it moved.
  std::atomic<std::uint64_t> generation{0};

  std::string hash_password(const std::string& password) const {
    return argon2id_hash(password, options.argon2_passes, options.argon2_memory_kib);
  }

  Stored* find(std::string_view name) {
    for (auto& u : users)
      if (u.user.name == name) return &u;
    return nullptr;
  }
  Stored* find(std::int64_t id) {
    for (auto& u : users)
      if (u.user.id == id) return &u;
    return nullptr;
  }
  int admins() const {
    return static_cast<int>(std::count_if(users.begin(), users.end(), [](const Stored& s) {
      return s.user.role == Role::kAdmin;
    }));
  }

  // REQUIRES: mu held.
  sim::Status save() const {
    if (options.users_file.empty()) return sim::Status::ok();
    json doc{{"format", "afasim-users-1"}, {"next_id", next_user_id}, {"users", json::array()}};
    for (const auto& s : users) {
      doc["users"].push_back({{"id", s.user.id},
                              {"name", s.user.name},
                              {"role", role_name(s.user.role)},
                              {"created_unix_s", s.user.created_unix_s},
                              {"password_hash", s.hash}});
    }
    return write_private_file(options.users_file, config::dump_json(doc, 2) + "\n");
  }

  sim::Status load(const std::string& text) {
    json doc = json::parse(text, nullptr, false);
    auto bad = [&](const std::string& why) {
      return sim::invalid_argument(options.users_file + ": " + why);
    };
    if (!doc.is_object() || doc.value("format", "") != "afasim-users-1" ||
        !doc["users"].is_array() || !doc["next_id"].is_number_integer())
      return bad("not an afasim users file");
    next_user_id = doc["next_id"].get<std::int64_t>();
    for (const auto& u : doc["users"]) {
      if (!u.is_object() || !u["id"].is_number_integer() || !u["name"].is_string() ||
          !u["role"].is_string() || !u["password_hash"].is_string())
        return bad("a user entry lacks id, name, role or password_hash");
      Stored s;
      s.user.id = u["id"].get<std::int64_t>();
      s.user.name = u["name"].get<std::string>();
      const auto role = parse_role(u["role"].get<std::string>());
      if (!role) return bad("unknown role for user " + s.user.name);
      s.user.role = *role;
      s.user.created_unix_s = u.value("created_unix_s", std::int64_t{0});
      s.hash = u["password_hash"].get<std::string>();
      if (const std::string why = argon2_cost_problem(s.hash); !why.empty())
        return bad("the password hash of user " + s.user.name + " " + why);
      users.push_back(std::move(s));
    }
    std::vector<User> listed;
    for (const Stored& s : users) listed.push_back(s.user);
    if (const std::string why = users_file_problem(listed, next_user_id); !why.empty()) return bad(why);
    return sim::Status::ok();
  }

  // The user a bearer token names, with the role the user has now; nullptr if none.
  const Stored* bearer(const std::string& token) {
    const std::string digest = sha256(token);
    const std::int64_t now = now_unix_s();
    std::erase_if(sessions, [now](const Live& l) { return l.session.expires_unix_s <= now; });
    for (const auto& l : sessions)
      if (equal_constant_time(l.token_digest, digest)) return find(l.session.user);
    return nullptr;
  }
};

Auth::Auth(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Auth::~Auth() = default;

sim::Result<std::unique_ptr<Auth>> Auth::open(AuthOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  const AuthOptions& o = impl->options;
  if (o.password_hashes_in_progress_max < 1 || o.password_hashes_in_progress_max > 256)
    return sim::invalid_argument(
        "AuthOptions: password_hashes_in_progress_max must be 1..256, not " +
        std::to_string(o.password_hashes_in_progress_max));
  impl->hash_slots = std::make_unique<HashSlots>(o.password_hashes_in_progress_max);
  if (!o.users_file.empty()) {
    struct stat st {};
    if (::stat(o.users_file.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      return sim::invalid_argument(o.users_file + ": a directory, not an afasim users file");
    std::ifstream in(o.users_file);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      AFASIM_RETURN_IF_ERROR(impl->load(text.str()));
      return std::unique_ptr<Auth>(new Auth(std::shared_ptr<Impl>(std::move(impl))));
    }
  }
  const std::string password =
      o.initial_admin_password.empty() ? base64url(random_bytes(18)) : o.initial_admin_password;
  impl->users.push_back({User{impl->next_user_id++, "admin", Role::kAdmin, now_unix_s()},
                         impl->hash_password(password)});
  impl->created_admin = true;
  if (!o.admin_password_file.empty())
    AFASIM_RETURN_IF_ERROR(write_private_file(o.admin_password_file, password + "\n"));
  AFASIM_RETURN_IF_ERROR(impl->save());
  return std::unique_ptr<Auth>(new Auth(std::shared_ptr<Impl>(std::move(impl))));
}

bool Auth::created_admin() const {
  return impl_->created_admin;
}

const AuthOptions& Auth::options() const {
  return impl_->options;
}

// The answer to refused Basic credentials: 401 with the challenges, or a 429 or 503 that
// says when to come back.
static http::Response refusal_response(int status, const std::string& why,
                                       std::int64_t retry_after_s, const std::string& path) {
  if (status == 401) return unauthorized(why, path);
  http::Response res = http::problem_response(
      status, status == 429 ? problem::kTooManyFailedLogins : problem::kPasswordChecksBusy, why,
      path);
  res.headers.set("Retry-After", std::to_string(retry_after_s));
  return res;
}

http::Verdict Auth::guard(http::Request& r, const http::Route& route, bool may_block,
                          http::Response& deny) {
  const std::string header = credentials_header(r);
  const bool is_public = route.access == kPublic;
  if (header.empty()) {
    if (is_public) return http::Verdict::kAllow;
    deny = unauthorized("this request needs credentials: HTTP Basic, or a bearer token from "
                        "POST /api/v1/sessions",
                        r.path);
    return http::Verdict::kDeny;
  }
  const auto [scheme, value] = split_credentials(header);
  std::string user;
  Role role = Role::kMonitor;
  if (http::iequals(scheme, "Bearer")) {
    if (value.empty()) {
      deny = unauthorized(
          "the Bearer scheme needs a token after it: \"Bearer TOKEN\", the token "
          "from POST /api/v1/sessions",
          r.path);
      return http::Verdict::kDeny;
    }
    std::lock_guard<std::mutex> lock(impl_->mu);
    const Impl::Stored* s = impl_->bearer(value);
    if (s == nullptr) {
      deny = unauthorized("the bearer token is unknown, expired or revoked", r.path);
      return http::Verdict::kDeny;
    }
    user = s->user.name;
    role = s->user.role;
  } else if (http::iequals(scheme, "Basic")) {
    Refusal refusal;
    const http::Verdict v =
        authenticate_basic(value, r.remote_address, may_block, user, role, refusal);
    if (v == http::Verdict::kNeedsWorker) return v;
    if (v == http::Verdict::kDeny) {
      deny = refusal_response(refusal.status, refusal.why, refusal.retry_after_s, r.path);
      return v;
    }
  } else if (value.empty()) {  // one word: likely credentials without their scheme
    deny = unauthorized(
        "the Authorization header has no scheme: expected \"Basic CREDENTIALS\" "
        "or \"Bearer TOKEN\"",
        r.path);
    return http::Verdict::kDeny;
  } else {
    deny = unauthorized("unsupported authorization scheme \"" + scheme.substr(0, 20) +
                            "\"; use Basic or Bearer",
                        r.path);
    return http::Verdict::kDeny;
  }
  r.principal = {user, role_name(role), http::iequals(scheme, "Bearer") ? "bearer" : "basic"};
  const auto needed = parse_role(route.access);
  if (!is_public && needed && static_cast<int>(role) < static_cast<int>(*needed)) {
    deny = http::problem_response(
        403, problem::kForbidden,
        "user \"" + user + "\" has role " + role_name(role) + "; " + r.method + " " + r.path +
            " needs " + route.access,
        r.path);
    return http::Verdict::kDeny;
  }
  return http::Verdict::kAllow;
}

http::Verdict Auth::authenticate_basic(const std::string& value, const std::string& address,
                                       bool may_block, std::string& user, Role& role,
                                       Refusal& refusal) {
  std::string& why = refusal.why;
  if (value.empty()) {
    why =
        "the Basic scheme needs credentials after it: \"Basic \" then the base64 of "
        "USER:PASSWORD (RFC 7617)";
    return http::Verdict::kDeny;
  }
  const auto decoded = base64_decode(value);
  const std::size_t colon = decoded ? decoded->find(':') : std::string::npos;
  if (colon == std::string::npos) {
    why = std::string("malformed Basic credentials: ") +
          (decoded ? "the decoded text has no ':' between user and password"
                   : "not base64 (RFC 4648, with '=' padding)") +
          "; expected \"Basic \" then the base64 of USER:PASSWORD (RFC 7617)";
    return http::Verdict::kDeny;
  }
  user = decoded->substr(0, colon);
  const std::string mac = hmac(impl_->mac_key, *decoded);
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->verified.find(user);
    known = it != impl_->verified.end() && equal_constant_time(it->second, mac);
  }
  if (!known) {
    // An address past its failed logins, or that no hash slot is open to, is answered at once
    // (on the I/O thread): its unverified passwords neither wait for a worker nor cost a hash.
    // check_password refuses the same on the worker if either changed meanwhile. Passwords it
    // had verified before still pass.
    PasswordCheck check = login_wait_s(address) > 0 ? PasswordCheck::kLimited : PasswordCheck::kBusy;
    if (check == PasswordCheck::kBusy && !may_block && !impl_->hash_slots->full(hash_slot_access(address)))
      return http::Verdict::kNeedsWorker;  // the hash takes ~20-40 ms
    if (check == PasswordCheck::kBusy && may_block) check = check_password(user, decoded->substr(colon + 1), address);
    if (check == PasswordCheck::kLimited) {
      const std::int64_t wait_s = login_wait_s(address);  // 0 only if its minute just ended
      refusal = {429, too_many_failed_logins(address, wait_s), wait_s};
      return http::Verdict::kDeny;
    }
    if (check == PasswordCheck::kBusy) {
      refusal = {503, password_checks_busy(address), kPasswordBusyRetryAfterS};
      return http::Verdict::kDeny;
    }
    if (check == PasswordCheck::kWrong) {  // counted by check_password
      why = "wrong user name or password";
      return http::Verdict::kDeny;
    }
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->verified[user] = mac;
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  const Impl::Stored* s = impl_->find(std::string_view(user));
  if (s == nullptr) {  // deleted since its password was checked
    why = "wrong user name or password";
    return http::Verdict::kDeny;
  }
  role = s->user.role;
  return http::Verdict::kAllow;
}

std::function<bool()> Auth::credential_check(const http::Request& r) const {
  const auto [scheme, value] = split_credentials(credentials_header(r));
  const std::shared_ptr<Impl> impl = impl_;
  std::lock_guard<std::mutex> lock(impl->mu);
  const auto refused = [] { return false; };
  // What must still be there: the session (a token), or the user with the password that was
  // verified (Basic: a new password or a deletion forgets it; the id tells a user made again
  // under the same name from the one who opened the stream).
  std::int64_t session_id = 0, expires_unix_s = 0, user_id = 0;
  std::string user, mac;
  if (http::iequals(scheme, "Bearer")) {
    const std::string digest = sha256(value);
    for (const auto& l : impl->sessions)
      if (equal_constant_time(l.token_digest, digest) && l.session.expires_unix_s > now_unix_s()) {
        session_id = l.session.id;
        expires_unix_s = l.session.expires_unix_s;
      }
    if (session_id == 0) return refused;
  } else if (http::iequals(scheme, "Basic")) {
    const auto decoded = base64_decode(value);
    const std::size_t colon = decoded ? decoded->find(':') : std::string::npos;
    if (colon == std::string::npos) return refused;
    user = decoded->substr(0, colon);
    mac = hmac(impl->mac_key, *decoded);
    const auto it = impl->verified.find(user);
    const Impl::Stored* s = impl->find(std::string_view(user));
    if (it == impl->verified.end() || !equal_constant_time(it->second, mac) || s == nullptr) return refused;
    user_id = s->user.id;
  } else {
    return refused;
  }
  struct Seen {
    std::atomic<std::uint64_t> generation;
    std::atomic<bool> ended{false};
  };
  auto seen = std::make_shared<Seen>();
  seen->generation = impl->generation.load();
  return [impl, seen, session_id, expires_unix_s, user_id, user, mac] {
    if (seen->ended) return false;
    if (session_id != 0 && now_unix_s() >= expires_unix_s) return !(seen->ended = true);
    const std::uint64_t now_generation = impl->generation.load();
    if (now_generation == seen->generation) return true;  // nothing ended since the last look
    std::lock_guard<std::mutex> lock(impl->mu);
    bool ok = false;
    if (session_id != 0) {
      ok = std::any_of(impl->sessions.begin(), impl->sessions.end(), [&](const Impl::Live& l) { return l.session.id == session_id; });
    } else {
      const auto it = impl->verified.find(user);
      const Impl::Stored* s = impl->find(std::string_view(user));
      ok = it != impl->verified.end() && equal_constant_time(it->second, mac) && s != nullptr && s->user.id == user_id;
    }
    if (ok) seen->generation = now_generation;
    else seen->ended = true;
    return ok;
  };
}

std::int64_t Auth::login_wait_s(const std::string& address) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->failures.find(address);
  if (it == impl_->failures.end() || it->second.count < impl_->options.failed_logins_per_minute) return 0;
  const auto left = std::chrono::minutes(1) - (std::chrono::steady_clock::now() - it->second.since);
  return std::max<std::int64_t>(0, std::chrono::ceil<std::chrono::seconds>(left).count());
}

std::string Auth::too_many_failed_logins(const std::string& address, std::int64_t wait_s) const {
  return std::to_string(impl_->options.failed_logins_per_minute) + " failed logins from " + address +
         " within a minute; try again in " + std::to_string(wait_s) + " s";
}

void Auth::login_failed(const std::string& address) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(impl_->mu);
  // Addresses whose minute is over go, so the table holds at most the addresses that failed
  // in the last minute.
  std::erase_if(impl_->failures,
                [now](const auto& f) { return now - f.second.since >= std::chrono::minutes(1); });
  Impl::Failures& f = impl_->failures[address];
  if (f.count == 0) f.since = now;
  ++f.count;
}

PasswordCheck Auth::check_password(const std::string& user, const std::string& password,
                                   const std::string& address) {
  if (login_wait_s(address) > 0) return PasswordCheck::kLimited;
  const std::optional<HashSlots::Slot> slot =
      impl_->hash_slots->try_take(hash_slot_access(address), address);
  if (!slot) return PasswordCheck::kBusy;
  if (check_current_password(user, password)) return PasswordCheck::kMatch;
  // Counted while the slot is still held: were it given back first, another password from
  // this address could take the reserved slot in between, as if it had not failed.
  login_failed(address);
  return PasswordCheck::kWrong;
}

HashSlots::Access Auth::hash_slot_access(const std::string& address) const {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(impl_->mu);
  const auto it = impl_->failures.find(address);  // an entry holds at least one failure
  const bool failed =
      it != impl_->failures.end() && now - it->second.since < std::chrono::minutes(1);
  return failed ? HashSlots::Access::kShared : HashSlots::Access::kAll;
}

std::optional<HashSlots::Slot> Auth::try_hash_slot(HashSlots::Access access, const std::string& address) {
  return impl_->hash_slots->try_take(access, address);
}

std::string Auth::password_checks_busy(const std::string& address) const {
  const HashSlots& slots = *impl_->hash_slots;
  const std::string max = std::to_string(slots.max());
  const std::string retry = "; retry in " + std::to_string(kPasswordBusyRetryAfterS) +
                            " s (session tokens and passwords verified before are not held up)";
  if (slots.holds(address))
    return "a password check from " + address + " is in progress: one at a time from one client address" + retry;
  if (slots.reserved() > 0 && hash_slot_access(address) == HashSlots::Access::kShared)
    return "every password-check slot open to a client address with a failed login in the last "
           "minute, as " +
           address + " has, is in use (" + std::to_string(slots.max() - slots.reserved()) + " of " +
           max + ": the last is kept for addresses without one)" + retry;
  return max + (slots.max() == 1 ? " password check is" : " password checks are") +
         " in progress, the most at once for all clients" + retry;
}

bool Auth::check_current_password(const std::string& user, const std::string& password) {
  std::string hash;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    const Impl::Stored* s = impl_->find(std::string_view(user));
    if (s != nullptr) hash = s->hash;
  }
  if (hash.empty() || password.size() > kPasswordMaxBytes) {
    // Spend the same time on an unknown user, so that timing does not tell which names exist.
    (void)impl_->hash_password(password.substr(0, kPasswordMaxBytes));
    return false;
  }
  return argon2id_matches(hash, password);
}

std::vector<User> Auth::users() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<User> out;
  for (const auto& s : impl_->users) out.push_back(s.user);
  return out;
}

sim::Result<User> Auth::user(std::int64_t id) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const auto& s : impl_->users)
    if (s.user.id == id) return s.user;
  return sim::not_found("no user " + std::to_string(id));
}

sim::Result<User> Auth::create_user(const std::string& name, Role role, const std::string& password) {
  AFASIM_RETURN_IF_ERROR(check_name(name));
  AFASIM_RETURN_IF_ERROR(check_password_rules(password));
  const std::string hash = impl_->hash_password(password);  // outside the lock: it is slow
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->find(std::string_view(name)) != nullptr)
    return sim::conflict("a user named \"" + name + "\" exists");
  impl_->users.push_back({User{impl_->next_user_id++, name, role, now_unix_s()}, hash});
  if (sim::Status st = impl_->save(); !st.is_ok()) {
    impl_->users.pop_back();
    return st;
  }
  return impl_->users.back().user;
}

sim::Result<User> Auth::update_user(std::int64_t id, std::optional<Role> role,
                                    const std::optional<std::string>& password) {
  if (password) AFASIM_RETURN_IF_ERROR(check_password_rules(*password));
  const std::string hash = password ? impl_->hash_password(*password) : "";
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Stored* s = impl_->find(id);
  if (s == nullptr) return sim::not_found("no user " + std::to_string(id));
  if (role && *role != Role::kAdmin && s->user.role == Role::kAdmin && impl_->admins() == 1)
    return sim::conflict("user \"" + s->user.name + "\" is the last admin");
  const Impl::Stored before = *s;
  if (role) s->user.role = *role;
  if (password) {
    s->hash = hash;
    impl_->verified.erase(s->user.name);
  }
  if (sim::Status st = impl_->save(); !st.is_ok()) {
    *s = before;
    return st;
  }
  // A new password ends the user's sessions: resetting it is how a stolen token is shut out.
  if (password) std::erase_if(impl_->sessions, [&](const Impl::Live& l) { return l.session.user == s->user.name; });
  if (password) ++impl_->generation;
  return s->user;
}

sim::Status Auth::delete_user(std::int64_t id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Stored* s = impl_->find(id);
  if (s == nullptr) return sim::not_found("no user " + std::to_string(id));
  if (s->user.role == Role::kAdmin && impl_->admins() == 1)
    return sim::conflict("user \"" + s->user.name + "\" is the last admin");
  const auto before = impl_->users;
  const std::string name = s->user.name;
  std::erase_if(impl_->users, [id](const Impl::Stored& u) { return u.user.id == id; });
  if (sim::Status st = impl_->save(); !st.is_ok()) {
    impl_->users = before;
    return st;
  }
  impl_->verified.erase(name);
  std::erase_if(impl_->sessions, [&](const Impl::Live& l) { return l.session.user == name; });
  ++impl_->generation;
  return sim::Status::ok();
}

sim::Result<std::pair<Session, std::string>> Auth::create_session(const std::string& user) {
  const std::string token = "afs_" + base64url(random_bytes(32));
  std::lock_guard<std::mutex> lock(impl_->mu);
  const Impl::Stored* s = impl_->find(std::string_view(user));
  if (s == nullptr) return sim::not_found("no user \"" + user + "\"");
  const std::int64_t now = now_unix_s();
  std::erase_if(impl_->sessions, [now](const Impl::Live& l) { return l.session.expires_unix_s <= now; });
  const auto own = std::count_if(impl_->sessions.begin(), impl_->sessions.end(),
                                 [&user](const Impl::Live& l) { return l.session.user == user; });
  if (own >= impl_->options.max_sessions_per_user)
    return sim::conflict(
        "user \"" + user + "\" has " + std::to_string(own) +
        " sessions open, the most one user may; delete one (DELETE /api/v1/sessions/{id})");
  if (static_cast<int>(impl_->sessions.size()) >= impl_->options.max_sessions)
    return sim::conflict(std::to_string(impl_->options.max_sessions) +
                         " sessions are open; delete one (DELETE /api/v1/sessions/{id})");
  Session session{impl_->next_session_id++, user, s->user.role, now,
                  now + impl_->options.session_ttl.count()};
  impl_->sessions.push_back({session, sha256(token)});
  return std::make_pair(session, token);
}

std::vector<Session> Auth::sessions() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const std::int64_t now = now_unix_s();
  std::vector<Session> out;
  for (const auto& l : impl_->sessions)
    if (l.session.expires_unix_s > now) out.push_back(l.session);
  return out;
}

sim::Status Auth::delete_session(std::int64_t id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const auto n = std::erase_if(impl_->sessions, [id](const Impl::Live& l) { return l.session.id == id; });
  if (n == 0) return sim::not_found("no session " + std::to_string(id));
  ++impl_->generation;
  return sim::Status::ok();
}

}  // namespace afasim::api
