#include "api/auth.h"

#include "api/auth_impl.h"
#include "api/auth_internal.h"
#include "api/problem.h"
#include "config/file_text.h"
#include "config/json_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

namespace afasim::api {

http::Response unauthorized(const std::string& detail, const std::string& instance) {
  http::Response res =
      http::problem_response(401, problem::kUnauthorized, detail, instance);
  res.headers.set("WWW-Authenticate", "Basic realm=\"afasim\", charset=\"UTF-8\", Bearer realm=\"afasim\"");
  return res;
}

Auth::Auth(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Auth::~Auth() = default;

namespace {

// A users file holds 4,096 users at most, each a few hundred bytes.
constexpr std::size_t kMaxUsersFileBytes = 16 << 20;

// The users file's text; nullopt when there is none (a first start). Only a name that is not
// there at all is a first start: anything else that cannot be read is an error, since a first
// start writes a new admin over the file (hostile round 25b: a dangling symlink lost every
// user; a FIFO hung the start, /dev/zero filled memory).
sim::Result<std::optional<std::string>> read_users_file(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return sim::io_error("cannot read " + path + ": " + std::strerror(errno));
  }
  if (::stat(path.c_str(), &st) != 0)
    return sim::io_error("cannot read " + path + ": " + std::strerror(errno) +
                         " (a symbolic link to nothing? it is not taken for a first start)");
  if (!S_ISREG(st.st_mode)) return sim::invalid_argument(path + ": not a regular file, not an afasim users file");
  if (static_cast<std::uint64_t>(st.st_size) > kMaxUsersFileBytes)
    return sim::invalid_argument(path + ": " + std::to_string(st.st_size) + " bytes, more than a users file holds (" +
                                 std::to_string(kMaxUsersFileBytes) + ")");
  auto text = config::read_file_text(path, kMaxUsersFileBytes);
  if (!text.is_ok()) return sim::io_error(text.status().message());
  return std::optional<std::string>(std::move(text).value());
}

}  // namespace

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
    auto text = read_users_file(o.users_file);
    if (!text.is_ok()) return text.status();
    if (*text) {
      AFASIM_RETURN_IF_ERROR(impl->load(**text));
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
  std::string user, proof;
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
    // A public resource (the Redfish service root and $metadata, a login) is read as if no
    // token came: a client whose token expired must still reach it, to log in again
    // (DSP0266 13.3.3; hostile round 31: the service root was 401).
    if (s == nullptr && is_public) return http::Verdict::kAllow;
    if (s == nullptr) {
      deny = unauthorized("the bearer token is unknown, expired or revoked", r.path);
      return http::Verdict::kDeny;
    }
    user = s->user.name;
    role = s->user.role;
  } else if (http::iequals(scheme, "Basic")) {
    Refusal refusal;
    const http::Verdict v =
        authenticate_basic(value, r.remote_address, may_block, user, role, proof, refusal);
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
  r.principal = {user, role_name(role), http::iequals(scheme, "Bearer") ? "bearer" : "basic", proof};
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

bool login_body_repeats_basic(const http::Request& r, std::string_view user_key, std::string_view password_key) {
  if (r.body.find_first_not_of(" \t\r\n") == std::string::npos) return true;
  const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
  if (!body.is_object() || body.empty()) return body.is_object();
  const std::string& header = r.header("Authorization");
  const auto decoded = header.rfind("Basic ", 0) == 0 ? base64_decode(std::string_view(header).substr(6)) : std::nullopt;
  const std::size_t colon = decoded ? decoded->find(':') : std::string::npos;
  if (colon == std::string::npos || body.size() != 2) return false;
  const auto same = [&](std::string_view key, const std::string& value) {
    const auto it = body.find(key);
    return it != body.end() && it->is_string() && it->get<std::string>() == value;
  };
  return same(user_key, decoded->substr(0, colon)) && same(password_key, decoded->substr(colon + 1));
}

http::Verdict Auth::authenticate_basic(const std::string& value, const std::string& address,
                                       bool may_block, std::string& user, Role& role,
                                       std::string& proof, Refusal& refusal) {
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
    // base64_decode takes at most 4,096 characters (3,072 bytes of USER:PASSWORD): longer ones
    // are too long, not "not base64" (hostile round 36).
    why = std::string("malformed Basic credentials: ") +
          (decoded           ? "the decoded text has no ':' between user and password"
           : value.size() > 4096 ? "longer than 4096 base64 characters (3072 bytes of USER:PASSWORD)"
                                 : "not base64 (RFC 4648, with '=' padding)") +
          "; expected \"Basic \" then the base64 of USER:PASSWORD (RFC 7617)";
    return http::Verdict::kDeny;
  }
  user = decoded->substr(0, colon);
  const std::string mac = hmac(impl_->mac_key, *decoded);
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    known = impl_->verified_for(user, mac, address);
  }
  if (!known) {
    // An address past its failed logins, or that no hash slot is open to, is answered at once
    // (on the I/O thread): its unverified passwords neither wait for a worker nor cost a hash.
    // check_password refuses the same on the worker if either changed meanwhile. Passwords it
    // had verified before from this address still pass.
    PasswordCheck check = login_wait_s(address) > 0 ? PasswordCheck::kLimited : PasswordCheck::kBusy;
    if (check == PasswordCheck::kBusy && !may_block && !impl_->hash_slots->full(hash_slot_access(address)))
      return http::Verdict::kNeedsWorker;  // the hash takes ~20-40 ms
    std::string checked;  // the proof of the password check_password matched
    if (check == PasswordCheck::kBusy && may_block)
      check = check_password(user, decoded->substr(colon + 1), address, &checked);
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
    // Remembered only if the password is still the one checked (hostile round 24: a change
    // that landed during the hash was undone by its result).
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->proves(user, checked)) impl_->remember_verified(user, mac, address);
  }
  // Still verified (a new password forgets it), under the lock the proof is read with.
  std::lock_guard<std::mutex> lock(impl_->mu);
  const auto it = impl_->verified.find(user);
  const Impl::Stored* s = impl_->find(std::string_view(user));
  if (s == nullptr || it == impl_->verified.end() || !equal_constant_time(it->second.mac, mac)) {
    why = "wrong user name or password";  // deleted or given a new password since the check
    return http::Verdict::kDeny;
  }
  impl_->remember_verified(user, mac, address);
  role = s->user.role;
  proof = impl_->proof_of(*s);
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
    if (it == impl->verified.end() || !equal_constant_time(it->second.mac, mac) || s == nullptr) return refused;
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
      ok = it != impl->verified.end() && equal_constant_time(it->second.mac, mac) && s != nullptr && s->user.id == user_id;
    }
    if (ok) seen->generation = now_generation;
    else seen->ended = true;
    return ok;
  };
}

std::int64_t Auth::login_wait_s(const std::string& address) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->wait_s(address);
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
                                   const std::string& address, std::string* proof) {
  if (login_wait_s(address) > 0) return PasswordCheck::kLimited;
  const std::optional<HashSlots::Slot> slot =
      impl_->hash_slots->try_take(hash_slot_access(address), address);
  if (!slot) return PasswordCheck::kBusy;
  std::string hash;
  if (check_current_password(user, password, &hash)) {
    // A match with a password changed during the hash is no match (hostile round 24).
    std::lock_guard<std::mutex> lock(impl_->mu);
    const Impl::Stored* s = impl_->find(std::string_view(user));
    if (s == nullptr || s->hash != hash) return PasswordCheck::kWrong;
    if (proof != nullptr) *proof = impl_->proof_of(*s);
    return PasswordCheck::kMatch;
  }
  // Counted while the slot is still held: were it given back first, another password from
  // this address could take the reserved slot in between, as if it had not failed.
  login_failed(address);
  return PasswordCheck::kWrong;
}

PasswordCheck Auth::check_login(const std::string& user, const std::string& password, const std::string& address,
                                std::string* proof) {
  const std::string mac = hmac(impl_->mac_key, user + ":" + password);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    const Impl::Stored* s = impl_->find(std::string_view(user));
    if (s != nullptr && impl_->verified_for(user, mac, address)) {
      impl_->remember_verified(user, mac, address);
      if (proof != nullptr) *proof = impl_->proof_of(*s);
      return PasswordCheck::kMatch;
    }
  }
  std::string checked;
  const PasswordCheck check = check_password(user, password, address, &checked);
  if (check == PasswordCheck::kMatch) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->proves(user, checked)) impl_->remember_verified(user, mac, address);
  }
  if (proof != nullptr) *proof = std::move(checked);
  return check;
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

bool Auth::check_current_password(const std::string& user, const std::string& password,
                                  std::string* verified_hash) {
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
  if (!argon2id_matches(hash, password)) return false;
  if (verified_hash != nullptr) *verified_hash = std::move(hash);
  return true;
}

}  // namespace afasim::api
