// api::Auth — users, roles and sessions of the management plane, and the guard that checks
// every request before its handler runs (docs/api.md "Authentication").
//
// Roles, each including the ones below it:
//   monitor   reads everything (GET), manages its own sessions and password;
//   operator  provisions: volumes, hosts, mappings, QoS policies;
//   admin     everything: pools, faults, users.
// Credentials: HTTP Basic (RFC 7617) with a user's password, or a bearer token (RFC 6750)
// from POST /api/v1/sessions, which expires and can be revoked. Passwords are stored as
// argon2id hashes (libargon2, RFC 9106) and never logged. No or bad credentials: 401 with
// WWW-Authenticate; good credentials without the role: 403 (RFC 9110 15.5.2, 15.5.4).
//
// Users live in `users_file` (JSON, mode 0600, written whole and renamed into place); on a
// first start (no file) the array creates "admin" with a random password and writes it to
// `admin_password_file` (0600). Sessions live in memory: a restart ends them.
//
// Thread-safe: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/hash_slots.h"
#include "http/message.h"
#include "http/server.h"
#include "sim/status.h"

namespace afasim::api {

enum class Role { kMonitor = 1, kOperator = 2, kAdmin = 3 };
const char* role_name(Role r);  // these two: users_check.cpp
std::optional<Role> parse_role(std::string_view name);

// A route's `access` (http/router.h): "public", or the least role that may call it.
inline constexpr const char* kPublic = "public";
inline constexpr const char* kMonitor = "monitor";
inline constexpr const char* kOperator = "operator";
inline constexpr const char* kAdmin = "admin";

struct User {
  std::int64_t id = 0;
  std::string name;
  Role role = Role::kMonitor;
  std::int64_t created_unix_s = 0;
};

struct Session {
  std::int64_t id = 0;
  std::string user;
  Role role = Role::kMonitor;
  std::int64_t created_unix_s = 0;
  std::int64_t expires_unix_s = 0;
};

struct AuthOptions {
  // Where users are kept; empty: in memory only (tests).
  std::string users_file;
  // Where a first start writes the admin's password; empty: not written.
  std::string admin_password_file;
  // The admin's password on a first start; empty: 24 random characters.
  std::string initial_admin_password;
  // Lifetime of a session token, 1 min..30 days.
  std::chrono::seconds session_ttl{8 * 3600};
  // Sessions alive at once, all users, 1..65536; one more is 409 until one ends.
  int max_sessions = 4096;
  // Sessions alive at once for one user, 1..max_sessions; one more is 409 for that user only.
  // Without it one user, a read-only monitor included, could hold every session and lock
  // every other user (the manager page, Redfish clients) out of logging in for 8 hours. 64: a
  // script that logs in and never logs out still gets 64 logins per session lifetime.
  int max_sessions_per_user = 64;
  // argon2id cost: passes and memory (KiB). RFC 9106 section 4's second recommended option
  // is t=3, m=64 MiB; OWASP's minimum is t=2, m=19 MiB, which this uses: a check costs
  // ~20–40 ms of one core here, and a verified password is remembered (HMAC) so that only
  // the first request of a Basic client pays it.
  std::uint32_t argon2_passes = 2;
  std::uint32_t argon2_memory_kib = 19 * 1024;
  // Failed password checks one client address may cause per minute; past it, a password
  // not yet verified from that address is 429 at once, without the hash, until the minute
  // since its first failure is over. Without it a flood of wrong Basic passwords (~20–40 ms of
  // a core each) queued ahead of every client's requests: one holding a valid token waited
  // 3.6 s behind 64 such connections and 16.9 s behind 200 (hostile round 14). 10: a person
  // mistyping gets ten tries a minute. 1..100000.
  int failed_logins_per_minute = 10;
  // Password hashes in progress at once, from every address and user together, 1..256: a
  // password not yet verified (Basic credentials, the body of POST /api/v1/sessions or of
  // Redfish's login) that finds them all running is refused at once with 503 and Retry-After
  // (kPasswordBusyRetryAfterS), without a hash and without counting as a failed login.
  // Requests with a session token or a Basic password verified before never take one and
  // never wait for one. Without it wrong passwords spread over 100 addresses, each under
  // failed_logins_per_minute, kept every HTTP worker hashing, and a valid token's
  // GET /system waited 2.8 s at the median (5.6 s with 200 addresses; hostile round 19).
  // 2 is an assumption, not a measurement: it leaves 6 of the front end's 8 workers
  // (http::ServerOptions::worker_threads) to everyone else and lets 50–100 logins a second
  // through at ~20–40 ms a hash, more than people logging in need; the price is that while a
  // flood holds both slots a person's login is 503 too, until a retry finds one free.
  // So the last slot is reserved (HashSlots::reserved()): a client address with a failed
  // login in its current minute (the failed_logins_per_minute window) may take a slot only
  // while another stays free; an address without one may take any. A flood from addresses
  // that have failed then leaves the last slot to people logging in from clean addresses
  // (100 addresses retrying every 503 at once: a person's login took 0.2 s at the median,
  // from 73 s; 8.7 s at most, when the flood began and once a minute after, while its
  // addresses were clean). To hold that slot too an attacker needs a clean address for
  // every hash it runs there: a hash took 20 ms (argon2id at this cost, median of 40 alone
  // on the 2-core test machine, 2026-12-05; 40 ms on a loaded one), so ~50
  // addresses a second. An address is clean again a minute after its first failure, so a
  // pool of ~3,000 addresses, each used once a minute, is enough (an IPv6 /64 holds far
  // more); the shared slot alone takes ~5 a second (10 wrong passwords each). A person who
  // mistyped within the minute, or who shares an address with an attacker (NAT), has the
  // shared slots only. With 1 there is no reserved slot: every address may take the one.
  int password_hashes_in_progress_max = 2;
};

// Retry-After of the 503 at password_hashes_in_progress_max, in seconds: a slot frees
// within a hash (~20–40 ms), and Retry-After counts whole seconds (RFC 9110 10.2.3): 1 is the
// least that is not "at once".
inline constexpr std::int64_t kPasswordBusyRetryAfterS = 1;

// What a password check (Auth::check_password) found.
enum class PasswordCheck {
  kMatch,  // the user exists and the password is theirs
  kWrong,  // no such user, or another password
  kBusy,   // not checked: every hash slot the address may take was taken
           // (AuthOptions::password_hashes_in_progress_max)
  kLimited,  // not checked: the address is past its failed logins (login_wait_s > 0)
};

// Password rules: 8..1024 bytes (a passphrase may be long; the hash reads all of it).
inline constexpr std::size_t kPasswordMinBytes = 8;
inline constexpr std::size_t kPasswordMaxBytes = 1024;

class Auth {
 public:
  // Loads the users, or creates the admin on a first start. kIoError when the users file
  // cannot be read or written; kInvalidArgument when it is not what this writes.
  static sim::Result<std::unique_ptr<Auth>> open(AuthOptions options);
  ~Auth();

  // True when open() created the admin (its password is in admin_password_file).
  bool created_admin() const;
  const AuthOptions& options() const;

  // The server's guard (http::Guard): authenticates r (filling r.principal) and checks the
  // route's access. A Basic password not yet verified needs a worker (kNeedsWorker).
  http::Verdict guard(http::Request& r, const http::Route& route, bool may_block,
                      http::Response& deny);

  // A check of the credentials `r` was let in with (by guard()), for a response that outlives
  // its request (an event stream): true while they hold; false, for good, once the token's
  // session is revoked or expired, or the user is deleted or given a new password (Basic).
  // Cheap while nothing changed (an atomic load and a clock read): it takes the lock only
  // after such a change. Callable from any thread, also after this Auth is destroyed.
  std::function<bool()> credential_check(const http::Request& r) const;

  // Users. Errors: kInvalidArgument (name, role or password rules), kConflict (name taken;
  // deleting or demoting the last admin), kNotFound, kIoError (the file).
  std::vector<User> users() const;
  sim::Result<User> user(std::int64_t id) const;
  sim::Result<User> create_user(const std::string& name, Role role, const std::string& password);
  // `proof` (check_password's, or the guard's for Basic): the caller showed the user's
  // current password; kConflict when it changed after that check (hostile round 24: a change
  // checked against the old password was applied after an admin's reset and undid it).
  sim::Result<User> update_user(std::int64_t id, std::optional<Role> role,
                                const std::optional<std::string>& password, const std::string* proof = nullptr);
  sim::Status delete_user(std::int64_t id);

  // Sessions. create_session: a new token for `user` (who has just authenticated); the
  // token is returned once and only its SHA-256 is kept. kConflict at max_sessions, or at
  // max_sessions_per_user of this user's. `proof`: what the password check gave
  // (check_password, or Principal::proof for Basic); kPreconditionFailed when the user's
  // password changed since that check, which ended the user's sessions (hostile round 24: a
  // login in flight during the change got a token that outlived it): answer 401.
  sim::Result<std::pair<Session, std::string>> create_session(const std::string& user, const std::string& proof);
  // Checks a user name and password for a login (a POST /sessions body, Redfish's login
  // body, a current_password; the guard's Basic credentials not yet verified) from client
  // address `address`: kLimited at once, without hashing, while the address is past its
  // failed logins (answer 429 with login_wait_s); else
  // blocks for the hash (~20–40 ms; an unknown user costs the same) in one of the
  // password_hashes_in_progress_max slots that address may take (hash_slot_access), or is
  // kBusy at once, without hashing, when every such slot is taken or `address` has a check in
  // progress already (one at a time from one address): answer 503 with
  // Retry-After kPasswordBusyRetryAfterS and password_checks_busy(address). kWrong is
  // counted as a failed login from `address` (login_failed) before the slot is given back,
  // so that the address's next request is already limited to the shared slots. The slot is
  // given back on every way out, an exception (argon2 out of memory) included.
  // On kMatch `*proof`, when given, is set to the proof of the password matched, for
  // create_session / update_user (refused once the password changes); a password that changed
  // during the check is kWrong (not counted as a failure).
  PasswordCheck check_password(const std::string& user, const std::string& password,
                               const std::string& address, std::string* proof = nullptr);
  // check_password for a login body (POST /sessions): a password verified before passes
  // without a hash, as Basic credentials do in the guard, from any address while it is not
  // past its failed logins, else only from an address that presented it before; a match is
  // remembered so. (Hostile round 28: a body was 429 where the same password as Basic passed.)
  PasswordCheck check_login(const std::string& user, const std::string& password, const std::string& address,
                            std::string* proof = nullptr);
  // The hash alone, without a slot or a failed login counted: for an admin's own checks. A
  // user's current_password goes through check_password like a login (hostile round 20: a
  // stolen token guessed its owner's password 67 times a second through it, never limited).
  // `verified_hash`, when given, gets the stored hash the password matched.
  bool check_current_password(const std::string& user, const std::string& password,
                              std::string* verified_hash = nullptr);
  // The hash slots a password from `address` may take: kShared when the address has a failed
  // login in its current minute (the reserved last slot is not for it), else kAll.
  HashSlots::Access hash_slot_access(const std::string& address) const;
  // A hash slot, held until the Slot is destroyed; nullopt at once when every slot `access`
  // may have is taken, or `address` (when not "") holds one. check_password takes one for each
  // hash; tests hold them to fill the bound.
  std::optional<HashSlots::Slot> try_hash_slot(HashSlots::Access access = HashSlots::Access::kAll,
                                               const std::string& address = "");
  // The detail of that 503 for a password from `address`: the bound (the shared slots for
  // an address with a failed login in its minute), when to retry, and who is not held up.
  std::string password_checks_busy(const std::string& address) const;
  // Failed-login throttling (AuthOptions::failed_logins_per_minute): the seconds until
  // `address` may try another unverified password (0: now); a failed check from it
  // (check_password records its own). The guard applies them to Basic credentials; the
  // login endpoints to their bodies.
  std::int64_t login_wait_s(const std::string& address) const;
  void login_failed(const std::string& address);
  std::string too_many_failed_logins(const std::string& address, std::int64_t wait_s) const;
  std::vector<Session> sessions() const;
  sim::Status delete_session(std::int64_t id);

 private:
  struct Impl;
  explicit Auth(std::shared_ptr<Impl> impl);
  // Why Basic credentials were refused: 401 (wrong or malformed), 429 (the address's failed
  // logins) or 503 (every hash slot taken), with the seconds to wait for the last two.
  struct Refusal {
    int status = 401;
    std::string why;
    std::int64_t retry_after_s = 0;
  };
  // Checks Basic credentials (base64 "user:password"): kAllow with user and role set,
  // kDeny with the refusal, or kNeedsWorker when the password is not yet verified, a hash
  // slot the address may take is free and !may_block. An unverified password from an address
  // past its failed logins is a 429; one that finds every hash slot it may take taken a 503
  // (both without a hash, on the I/O thread when they are known there).
  http::Verdict authenticate_basic(const std::string& value, const std::string& address,
                                   bool may_block, std::string& user, Role& role, std::string& proof,
                                   Refusal& refusal);

  std::shared_ptr<Impl> impl_;  // shared with the checks credential_check() hands out
};

// Why a login (POST /api/v1/sessions, POST /redfish/v1/SessionService/Sessions) whose
// credential is a session token is refused with 401.
inline constexpr const char* kLoginNeedsPassword =
    "log in with a password (HTTP Basic or the body's user name and password): a session token "
    "cannot make another session";

// Why a login with HTTP Basic credentials and a body too is refused with 400: two sets of
// credentials are ambiguous (hostile round 31: the body was ignored, whatever it said).
inline constexpr const char* kLoginCredentialsTwice =
    "send the credentials once: HTTP Basic or the body's user name and password, not both";
// Whether a login request with Basic credentials may go on: its body says nothing (empty,
// white space, {}) or only repeats them, a JSON object of exactly {user_key: the same user,
// password_key: the same password} (a client that keeps Basic configured for its login; review
// 31). Anything else is two logins: kLoginCredentialsTwice.
bool login_body_repeats_basic(const http::Request& r, std::string_view user_key, std::string_view password_key);

// The 401 answer: problem+json with WWW-Authenticate for Basic and Bearer.
http::Response unauthorized(const std::string& detail, const std::string& instance);

// What is wrong with the users a users file holds, "" when nothing: ids from 1, each id and
// name once, `next_id` above every id, and at least one admin (else no one could administer the
// API, and the API itself refuses to delete or demote the last admin). users_check.cpp.
std::string users_file_problem(const std::vector<User>& users, std::int64_t next_id);

}  // namespace afasim::api
