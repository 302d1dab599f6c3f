// api::auth_internal — helpers of api::Auth (api/auth.h): OpenSSL's CSPRNG, base64
// (RFC 4648), SHA-256, HMAC-SHA-256, a constant-time comparison, argon2id password hashes
// (libargon2, RFC 9106), the reading of an Authorization header, and the private (0600) file
// write of the users and admin-password files. Internal to api/. Thread-safe (no state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "http/message.h"
#include "sim/status.h"

namespace afasim::api::auth_internal {

// `n` bytes from OpenSSL's CSPRNG (never the simulation's seed: anyone with the seed would
// know the admin's password). Throws std::runtime_error if OpenSSL fails.
std::string random_bytes(std::size_t n);
// base64url without padding (RFC 4648 section 5): tokens and generated passwords.
std::string base64url(const std::string& bytes);
// Standard base64 (RFC 4648 section 4) as Basic credentials use it; nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text);
// Raw digests (32 bytes).
std::string sha256(std::string_view data);
std::string hmac(const std::string& key, std::string_view data);
// a == b in a time that does not depend on where they differ.
bool equal_constant_time(const std::string& a, const std::string& b);

// An argon2id hash of `password` (one lane, a 16-byte salt from random_bytes, 32 bytes of
// output) in argon2's encoded form "$argon2id$v=19$m=...,t=...,p=1$salt$hash"; `passes` and
// `memory_kib` are AuthOptions'. Blocks for the hash (~20–40 ms at afasim's cost). Throws
// std::runtime_error with argon2's reason if it fails (out of memory).
std::string argon2id_hash(const std::string& password, std::uint32_t passes,
                          std::uint32_t memory_kib);
// True when `password` is the one `encoded` (argon2id_hash's form) was made from; false also
// when `encoded` is malformed. Blocks for the hash, at the cost `encoded` names.
bool argon2id_matches(const std::string& encoded, const std::string& password);
// Why an encoded hash is refused at load, or "": its argon2 cost is what a check of every
// request naming the user spends before the password is known. afasim writes
// m=19456,t=2,p=1 (AuthOptions); an edited file asking 4 GiB and 1,000 passes made each
// anonymous request for that user take 4 GiB and minutes (hostile round 15). The ceiling is
// RFC 9106's second recommended option's memory (64 MiB) and five times afasim's passes.
std::string argon2_cost_problem(const std::string& encoded);

// The credentials of `r`: its Authorization header. Redfish clients send a session token as
// X-Auth-Token (DSP0266 13.3.4); it is the same token as a bearer one, so it is read as
// "Bearer <token>" when Authorization is absent.
std::string credentials_header(const http::Request& r);
// credentials = auth-scheme [ 1*SP token68 ] (RFC 9110 11.4): the scheme ends at the first
// space (or tab, which some clients send); every space after it is skipped, so "Basic  x" is
// "Basic x", and a credential is never shown as part of the scheme's name. {scheme, value}.
std::pair<std::string, std::string> split_credentials(const std::string& header);

// The rules for a user's name (1 to 64 letters, digits, '-', '_' or '.') and password
// (kPasswordMinBytes..kPasswordMaxBytes, api/auth.h): ok, or kInvalidArgument naming the
// rule. users_check.cpp.
sim::Status check_name(const std::string& name);
sim::Status check_password_rules(const std::string& password);

// Writes `text` to `path` with mode 0600: a temporary file, fsync, rename. kIoError with the
// system's reason.
sim::Status write_private_file(const std::string& path, const std::string& text);

}  // namespace afasim::api::auth_internal
