// HTTPS with a self-signed certificate (issue 14 item 5): a client that trusts the
// certificate gets answers; one that does not, or that speaks plain HTTP, gets none.
#include "serve/tls.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/api/api_fixture.h"

namespace afasim::api::testing {
namespace {

struct TlsDir {
  static inline int next = 0;
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("afasim-tls-" + std::to_string(::getpid()) + "-" + std::to_string(next++));
  TlsDir() { std::filesystem::create_directories(path); }
  ~TlsDir() { std::filesystem::remove_all(path); }
};

TEST_CASE("HTTPS with --tls self-signed: trusted clients are served, others are not") {
  TlsDir dir;
  auto files = serve::ensure_self_signed(dir.path.string(), {"127.0.0.1"});
  REQUIRE(files);
  auto ctx = serve::server_tls_context(*files);
  REQUIRE(ctx);
  ApiFixture fx(42, [&](RestServerOptions& o) { o.http.tls = *ctx; });
  CHECK(fx.server().base_url().rfind("https://", 0) == 0);

  httplib::SSLClient trusting("127.0.0.1", fx.server().port());
  trusting.set_ca_cert_path(files->cert_file.c_str());
  trusting.enable_server_certificate_verification(true);
  trusting.set_basic_auth("admin", kAdminPassword);
  auto ok = trusting.Get("/api/v1/system");
  REQUIRE(ok);
  CHECK(ok->status == 200);

  httplib::SSLClient doubting("127.0.0.1", fx.server().port());
  doubting.enable_server_certificate_verification(true);  // the system's CAs only
  CHECK(!doubting.Get("/api/v1/system"));

  // Plain HTTP to the HTTPS port: a plain 400 that says what to do (hostile round 31: no answer
  // at all, curl's "Empty reply from server").
  httplib::Client plain("127.0.0.1", fx.server().port());
  plain.set_read_timeout(2, 0);
  auto refused = plain.Get("/api/v1/system");
  REQUIRE(refused);
  CHECK(refused->status == 400);
  CHECK(refused->body == "This port speaks HTTPS: use https:// (afasim serve was started with --tls).\n");
  // And HTTPS still works after it.
  CHECK(trusting.Get("/api/v1/system")->status == 200);

  // The certificate is kept: a second call finds the same files.
  auto again = serve::ensure_self_signed(dir.path.string(), {"127.0.0.1"});
  REQUIRE(again);
  CHECK(again->cert_file == files->cert_file);
  CHECK((std::filesystem::status(files->key_file).permissions() & std::filesystem::perms::others_read) ==
        std::filesystem::perms::none);
}

TEST_CASE("a TLS key that does not match its certificate is refused with the reason") {
  TlsDir a, b;
  auto fa = serve::ensure_self_signed(a.path.string(), {});
  auto fb = serve::ensure_self_signed(b.path.string(), {});
  REQUIRE(fa);
  REQUIRE(fb);
  auto mixed = serve::server_tls_context({fa->cert_file, fb->key_file});
  CHECK(!mixed);
  CHECK(mixed.status().message().find("cannot be used with the certificate") != std::string::npos);
  CHECK(!serve::server_tls_context({"/nonexistent.crt", fa->key_file}));
}

TEST_CASE("TLS files that are not PEM are refused at once, saying what is wrong") {
  // Before: /dev/zero was 'no start line' (OpenSSL's words), and a FIFO no one wrote blocked
  // `afasim serve` forever in OpenSSL's read.
  TlsDir dir;
  auto good = serve::ensure_self_signed(dir.path.string(), {});
  REQUIRE(good);
  const std::string fifo = (dir.path / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string empty = (dir.path / "empty.pem").string();
  std::ofstream(empty).flush();
  const std::string text = (dir.path / "text.pem").string();
  std::ofstream(text) << "hello\n";
  const auto refusal = [&](const std::string& cert, const std::string& key) {
    auto ctx = serve::server_tls_context({cert, key});
    REQUIRE(!ctx);
    CHECK(ctx.status().code() == sim::Code::kInvalidArgument);
    return ctx.status().message();
  };
  CHECK(refusal("/dev/zero", good->key_file) ==
        "TLS certificate /dev/zero: more than 1 MiB: not a PEM file (a certificate or key is a few "
        "KiB)");
  CHECK(refusal(fifo, good->key_file) ==
        "TLS certificate " + fifo + ": empty: expected a PEM file");
  CHECK(refusal(empty, good->key_file) ==
        "TLS certificate " + empty + ": empty: expected a PEM file");
  CHECK(refusal(text, good->key_file) ==
        "TLS certificate " + text + ": not a PEM file (no \"-----BEGIN CERTIFICATE-----\" line)");
  CHECK(refusal(dir.path.string(), good->key_file) ==
        "TLS certificate " + dir.path.string() + ": a folder, not a PEM file");
  CHECK(refusal(good->cert_file, text) ==
        "TLS key " + text + ": not a PEM file (no \"-----BEGIN PRIVATE KEY-----\" line)");
  CHECK(refusal(good->cert_file, "/nonexistent.key") ==
        "TLS key /nonexistent.key: No such file or directory");
  CHECK(serve::server_tls_context(*good).is_ok());
}

}  // namespace
}  // namespace afasim::api::testing
