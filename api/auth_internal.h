// api::auth_internal — helpers of api::Auth (api/auth.h): OpenSSL's CSPRNG, base64
// (RFC 4648), SHA-256, HMAC-SHA-256, a constant-time comparison, and the private (0600)
// file write of the users and admin-password files. Internal to api/. Thread-safe (no state).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

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

// Writes `text` to `path` with mode 0600: a temporary file, fsync, rename. kIoError with the
// system's reason.
sim::Status write_private_file(const std::string& path, const std::string& text);

}  // namespace afasim::api::auth_internal
