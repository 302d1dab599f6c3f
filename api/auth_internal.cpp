#include "api/auth_internal.h"

#include <argon2.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace afasim::api::auth_internal {

// Bytes from OpenSSL's CSPRNG: credentials must not follow the simulation's seed (anyone
// with the seed would know the admin's password), so this is the one place that does not.
std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("OpenSSL RAND_bytes failed");
  return out;
}

std::string base64url(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  unsigned bits = 0, value = 0;
  for (unsigned char ch : bytes) {
    value = (value << 8) | ch;
    bits += 8;
    while (bits >= 6) {
      out.push_back(kAlphabet[(value >> (bits - 6)) & 63]);
      bits -= 6;
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(value << (6 - bits)) & 63]);
  return out;
}

// Standard base64 (RFC 4648 section 4) as Basic credentials use it; nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0 || text.size() > 4096) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  std::size_t pad = 0;
  if (text.back() == '=') ++pad;
  if (text.size() > 1 && text[text.size() - 2] == '=') ++pad;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

std::string sha256(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(md), len);
}

std::string hmac(const std::string& key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len);
  return std::string(reinterpret_cast<char*>(md), len);
}

bool equal_constant_time(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string argon2id_hash(const std::string& password, std::uint32_t passes,
                          std::uint32_t memory_kib) {
  const std::string salt = random_bytes(16);
  std::string encoded(argon2_encodedlen(passes, memory_kib, 1, 16, 32, Argon2_id), '\0');
  const int rc =
      argon2id_hash_encoded(passes, memory_kib, 1, password.data(), password.size(), salt.data(),
                            salt.size(), 32, encoded.data(), encoded.size());
  if (rc != ARGON2_OK) throw std::runtime_error(std::string("argon2: ") + argon2_error_message(rc));
  encoded.resize(std::strlen(encoded.c_str()));
  return encoded;
}

bool argon2id_matches(const std::string& encoded, const std::string& password) {
  return argon2id_verify(encoded.c_str(), password.data(), password.size()) == ARGON2_OK;
}

std::string argon2_cost_problem(const std::string& encoded) {
  unsigned version = 0, memory_kib = 0, passes = 0, lanes = 0;
  int used = 0;
  if (std::sscanf(encoded.c_str(), "$argon2id$v=%u$m=%u,t=%u,p=%u$%n", &version, &memory_kib,
                  &passes, &lanes, &used) != 4 ||
      used == 0)
    return "is not an argon2id hash ($argon2id$v=19$m=...,t=...,p=...$salt$hash)";
  if (memory_kib > 64 * 1024 || passes > 10 || lanes > 8)
    return "asks m=" + std::to_string(memory_kib) + " KiB, t=" + std::to_string(passes) +
           ", p=" + std::to_string(lanes) +
           ": above afasim's ceiling (m <= 65536, t <= 10, p <= 8); restore the file from a backup "
           "or remove the user";
  return "";
}

std::string credentials_header(const http::Request& r) {
  return r.has_header("Authorization") || !r.has_header("X-Auth-Token")
             ? r.header("Authorization")
             : "Bearer " + r.header("X-Auth-Token");
}

std::pair<std::string, std::string> split_credentials(const std::string& header) {
  const std::size_t space = header.find_first_of(" \t");
  const std::size_t start = header.find_first_not_of(" \t", space);
  return {header.substr(0, space), start == std::string::npos ? "" : header.substr(start)};
}

// Writes `text` to `path` with mode 0600: a temporary file, fsync, rename.
sim::Status write_private_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return sim::io_error("cannot write " + tmp + ": " + std::strerror(errno));
  ::fchmod(fd, 0600);  // an older file of that name may have had another mode
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return sim::io_error("cannot write " + path + ": " + std::strerror(errno));
  }
  return sim::Status::ok();
}

}  // namespace afasim::api::auth_internal
