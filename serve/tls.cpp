#include "serve/tls.h"

// clang-format off
#include <utility>  // before Boost.Asio 1.74's headers, which use std::exchange
#include <boost/asio/ssl.hpp>
// clang-format on

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "config/file_text.h"

namespace afasim::serve {
namespace {

std::string openssl_reason() {
  const unsigned long e = ERR_get_error();
  char buf[256] = "unknown error";
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

bool is_ip(const std::string& s) {
  in6_addr a6{};
  in_addr a4{};
  return inet_pton(AF_INET, s.c_str(), &a4) == 1 || inet_pton(AF_INET6, s.c_str(), &a6) == 1;
}

// "DNS:localhost,IP:127.0.0.1,..." for the certificate's subjectAltName.
std::string alt_names(std::vector<std::string> names) {
  for (const char* n : {"localhost", "127.0.0.1", "::1"}) names.emplace_back(n);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string out;
  for (const auto& n : names) {
    if (n.empty() || n == "0.0.0.0" || n == "::") continue;
    out += (out.empty() ? "" : ",") + std::string(is_ip(n) ? "IP:" : "DNS:") + n;
  }
  return out;
}

bool add_extension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A self-signed certificate for `key`, or null.
X509* make_certificate(EVP_PKEY* key, const std::vector<std::string>& names) {
  X509* cert = X509_new();
  if (cert == nullptr) return nullptr;
  unsigned char serial[16];
  bool ok = RAND_bytes(serial, sizeof serial) == 1;
  serial[0] &= 0x7f;  // a positive serial number
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  ok = ok && bn != nullptr && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != nullptr;
  BN_free(bn);
  ok = ok && X509_set_version(cert, 2) == 1;
  ok = ok && X509_gmtime_adj(X509_getm_notBefore(cert), -3600) != nullptr;
  ok = ok && X509_gmtime_adj(X509_getm_notAfter(cert), 825L * 24 * 3600) != nullptr;
  ok = ok && X509_set_pubkey(cert, key) == 1;
  X509_NAME* subject = X509_get_subject_name(cert);
  ok = ok && X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                        reinterpret_cast<const unsigned char*>("afasim"), -1, -1,
                                        0) == 1;
  ok = ok && X509_set_issuer_name(cert, subject) == 1;
  ok = ok && add_extension(cert, NID_subject_alt_name, alt_names(names));
  ok = ok && add_extension(cert, NID_basic_constraints, "critical,CA:TRUE");
  ok = ok && add_extension(cert, NID_key_usage, "critical,digitalSignature,keyCertSign");
  ok = ok && add_extension(cert, NID_ext_key_usage, "serverAuth");
  ok = ok && X509_sign(cert, key, EVP_sha256()) > 0;
  if (!ok) {
    X509_free(cert);
    return nullptr;
  }
  return cert;
}

// A certificate chain or a key is a few KiB in PEM; a file above this is not one.
constexpr std::size_t kMaxPemBytes = 1 << 20;

// The text of the PEM file `path` (`what`: "TLS certificate", "TLS key"), read by us, not by
// OpenSSL, so that a bad path fails at once and clearly: a FIFO nobody writes reads as empty
// instead of blocking the start, /dev/zero or /dev/urandom stop at kMaxPemBytes.
sim::Result<std::string> read_pem(const std::string& path, const std::string& what) {
  const auto bad = [&](const std::string& why) {
    return sim::invalid_argument(what + " " + path + ": " + why);
  };
  auto fd = config::open_for_reading(path);
  if (!fd.is_ok())
    return bad(fd.status().code() == sim::Code::kInvalidArgument ? "a folder, not a PEM file" : fd.status().message());
  auto read = config::read_descriptor(*fd, kMaxPemBytes);
  if (!read.is_ok()) return bad(read.status().message());
  const std::string& text = *read;
  if (text.size() > kMaxPemBytes)
    return bad("more than 1 MiB: not a PEM file (a certificate or key is a few KiB)");
  if (text.empty()) return bad("empty: expected a PEM file");
  return text;
}

// OpenSSL's reason, with what it means when the file holds no PEM block at all.
std::string pem_reason(const boost::system::error_code& ec, const std::string& text,
                       const char* block) {
  if (text.find("-----BEGIN ") == std::string::npos)
    return std::string("not a PEM file (no \"-----BEGIN ") + block + "-----\" line)";
  return ec.message();
}

sim::Status write_pem(const std::string& path, mode_t mode, const std::function<int(FILE*)>& put) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return sim::io_error("cannot write " + path);
  ::fchmod(fileno(f), mode);
  const bool ok = put(f) == 1;
  if (std::fclose(f) != 0 || !ok) return sim::io_error("cannot write " + path);
  return sim::Status::ok();
}

}  // namespace

sim::Result<std::shared_ptr<boost::asio::ssl::context>> server_tls_context(const TlsFiles& files) {
  namespace ssl = boost::asio::ssl;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::single_dh_use);
  auto cert = read_pem(files.cert_file, "TLS certificate");
  if (!cert.is_ok()) return cert.status();
  auto key = read_pem(files.key_file, "TLS key");
  if (!key.is_ok()) return key.status();
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(*cert), ec);
  if (ec)
    return sim::invalid_argument("TLS certificate " + files.cert_file + ": " +
                                 pem_reason(ec, *cert, "CERTIFICATE"));
  ctx->use_private_key(boost::asio::buffer(*key), ssl::context::pem, ec);
  if (ec && key->find("-----BEGIN ") == std::string::npos)
    return sim::invalid_argument("TLS key " + files.key_file + ": " +
                                 pem_reason(ec, *key, "PRIVATE KEY"));
  if (ec || SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    return sim::invalid_argument("TLS key " + files.key_file + " cannot be used with the certificate " +
                                 files.cert_file + ": " + (ec ? ec.message() : openssl_reason()));
  return ctx;
}

sim::Result<TlsFiles> ensure_self_signed(const std::string& dir, std::vector<std::string> names) {
  TlsFiles files{dir + "/tls/afasim.crt", dir + "/tls/afasim.key"};
  std::error_code fs_ec;
  if (std::filesystem::exists(files.cert_file, fs_ec) && std::filesystem::exists(files.key_file, fs_ec))
    return files;
  std::filesystem::create_directories(dir + "/tls", fs_ec);
  if (fs_ec) return sim::io_error("cannot create " + dir + "/tls: " + fs_ec.message());
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (key == nullptr) return sim::io_error("making a TLS key: " + openssl_reason());
  X509* cert = make_certificate(key, names);
  sim::Status st = cert == nullptr ? sim::io_error("making a TLS certificate: " + openssl_reason())
                                   : sim::Status::ok();
  if (st.is_ok())
    st = write_pem(files.key_file, 0600, [key](FILE* f) {
      return PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
    });
  if (st.is_ok())
    st = write_pem(files.cert_file, 0644, [cert](FILE* f) { return PEM_write_X509(f, cert); });
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!st.is_ok()) return st;
  return files;
}

}  // namespace afasim::serve
