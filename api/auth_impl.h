// api::Auth's state (api/auth.h), shared by auth.cpp (authentication: the guard, password
// checks, credential checks) and auth_users.cpp (users and sessions). Private to api/.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/auth.h"
#include "api/auth_internal.h"
#include "api/hash_slots.h"
#include "config/json_text.h"

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

inline std::int64_t now_unix_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

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
  // Passwords verified before (Basic's, and login bodies'): user -> the HMAC of
  // "user:password" and the client addresses that presented it (at most kVerifiedAddressesMax;
  // past that the set starts again).
  struct Verified {
    std::string mac;
    std::set<std::string> from;
  };
  static constexpr std::size_t kVerifiedAddressesMax = 256;
  std::unordered_map<std::string, Verified> verified;
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

  // What a password check proves: `s`'s password as it is now (the hash has a salt of its own
  // for every password set, so a new password, even the same one again, proves another).
  std::string proof_of(const Stored& s) const { return hmac(mac_key, s.hash); }
  // Whether `proof` is of `user`'s password now. REQUIRES: mu held.
  bool proves(const std::string& user, const std::string& proof) {
    const Stored* s = find(std::string_view(user));
    return s != nullptr && !proof.empty() && equal_constant_time(proof_of(*s), proof);
  }

  // The seconds until `address` may try another unverified password (Auth::login_wait_s).
  // REQUIRES: mu held.
  std::int64_t wait_s(const std::string& address) const {
    auto it = failures.find(address);
    if (it == failures.end() || it->second.count < options.failed_logins_per_minute) return 0;
    const auto left = std::chrono::minutes(1) - (std::chrono::steady_clock::now() - it->second.since);
    return std::max<std::int64_t>(0, std::chrono::ceil<std::chrono::seconds>(left).count());
  }
  // Whether `mac` is `user`'s verified password and `address` may pass with it without a hash:
  // one that presented it before, or any while it is not past its failed logins. An address
  // past its failed logins that could pass with any verified password was an oracle at HMAC
  // speed: its wrong guesses 429 unhashed, the right one 200 (review of hostile round 28).
  // REQUIRES: mu held.
  bool verified_for(const std::string& user, const std::string& mac, const std::string& address) const {
    const auto it = verified.find(user);
    if (it == verified.end() || !equal_constant_time(it->second.mac, mac)) return false;
    return it->second.from.count(address) != 0 || wait_s(address) == 0;
  }
  // Remembers `mac` as `user`'s verified password, presented from `address`. REQUIRES: mu held.
  void remember_verified(const std::string& user, const std::string& mac, const std::string& address) {
    Verified& v = verified[user];
    if (v.mac != mac) v = Verified{mac, {}};
    if (v.from.size() >= kVerifiedAddressesMax) v.from.clear();
    v.from.insert(address);
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
    // The host's disk refusing the file (full, read-only) is the store's "cannot commit", 503 as
    // a volume's change gets, not a 500 (hostile round 28).
    const sim::Status st = write_private_file(options.users_file, config::dump_json(doc, 2) + "\n");
    if (st.code() == sim::Code::kIoError) return sim::unavailable(st.message() + "; nothing was changed");
    return st;
  }

  sim::Status load(const std::string& text) {
    auto parsed = config::parse_json_strict(text);  // a NUL byte is no end of the file
    json doc = parsed.is_ok() ? std::move(parsed).value() : json();
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

}  // namespace afasim::api
