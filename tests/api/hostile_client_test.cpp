// The API under hostile and careless clients (issue 14 item 2): slowloris, idle
// keep-alive sockets, huge header sections, chunked bodies past the limit, Range on API
// answers, too many connections from one address, Nagle stalls, foreign Host names. Each
// case failed on main at 4676db3 (cpp-httplib 0.11 front end), as its comment says.
#include <doctest/doctest.h>
#include <netinet/tcp.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/api/api_fixture.h"
#include "tests/raw_socket.h"

namespace afasim::api::testing {
namespace {

using afasim::testing::RawSocket;
using afasim::testing::status_of;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// HTTP Basic for the fixture's admin ("admin:" + kAdminPassword, base64).
constexpr const char* kAdminAuthorization = "Authorization: Basic YWRtaW46dGVzdC1hZG1pbi1wYXNzd29yZA==\r\n";

std::string get_request(const std::string& path, const std::string& extra = "") {
  return "GET /api/v1" + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + kAdminAuthorization + extra +
         "\r\n";
}

// One GET /system on a new connection from 127.0.0.1: its status and how long it took.
std::pair<int, std::chrono::milliseconds> timed_get_system(int port) {
  const auto start = Clock::now();
  RawSocket s(port);
  if (!s.connected()) return {0, 0ms};
  s.send(get_request("/system", "Connection: close\r\n"));
  const std::string got = s.read_until("\"counts\"", 5000ms);
  return {status_of(got), std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start)};
}

TEST_CASE("64 slowloris and 64 idle keep-alive sockets: GET /system still answers within 1 s") {
  // main: 8 slowloris sockets held all 8 httplib workers; every GET timed out.
  ApiFixture fx(42, [](RestServerOptions& o) { o.http.max_connections_per_address = 256; });
  const int port = fx.server().port();
  std::vector<RawSocket> slow, idle;
  for (int i = 0; i < 64; ++i) {
    slow.emplace_back(port, "127.0.0.2");
    REQUIRE(slow.back().send(std::string("GET /api/v1/system HTTP/1.1\r\nHost: 127.0.0.1\r\n") +
                             kAdminAuthorization + "X-Slow: "));
  }
  for (int i = 0; i < 64; ++i) {
    idle.emplace_back(port, "127.0.0.2");
    REQUIRE(idle.back().send(get_request("/system")));
    REQUIRE(status_of(idle.back().read_until("\"counts\"", 5000ms)) == 200);
  }
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    while (!done) {
      for (auto& s : slow) s.send("a");
      std::this_thread::sleep_for(200ms);
    }
  });
  for (int i = 0; i < 20; ++i) {
    const auto [status, took] = timed_get_system(port);
    CHECK(status == 200);
    CHECK_MESSAGE(took < 1000ms, "GET " << i << " took " << took.count() << " ms");
  }
  done = true;
  trickle.join();
}

TEST_CASE("a request trickled byte by byte is cut off at the request deadline") {
  // main: httplib's 5 s timeout is per read, so a byte every 100 ms kept the socket forever.
  ApiFixture fx(42, [](RestServerOptions& o) { o.http.request_timeout = 500ms; });
  RawSocket s(fx.server().port(), "127.0.0.2");
  const std::string request = get_request("/system", std::string(200, 'x') + ": y\r\n");
  bool cut = false;
  for (std::size_t i = 0; i < 30 && !cut; ++i) {  // 3 s of trickling at most
    cut = !s.send(std::string(1, request[i])) || s.closed_within(100ms);
  }
  CHECK(cut);
  CHECK(fx.client().get("/system").status == 200);
}

TEST_CASE("an idle keep-alive connection is closed after the idle timeout") {
  // main: httplib kept an idle connection for 5 s whatever was asked.
  ApiFixture fx(42, [](RestServerOptions& o) { o.http.idle_timeout = 300ms; });
  RawSocket s(fx.server().port(), "127.0.0.2");
  REQUIRE(s.send(get_request("/system")));
  REQUIRE(status_of(s.read_until("\"counts\"", 5000ms)) == 200);
  CHECK(s.closed_within(2000ms));
}

TEST_CASE("a header section over the limit gets 431 and the memory is not taken") {
  // main: 100,000 headers of 4 KB were read into memory (RSS 218 -> 975 MB).
  ApiFixture fx;
  RawSocket s(fx.server().port());
  std::string request = std::string("GET /api/v1/system HTTP/1.1\r\nHost: 127.0.0.1\r\n") + kAdminAuthorization;
  for (int i = 0; i < 100; ++i) request += "X-Pad-" + std::to_string(i) + ": " + std::string(4000, 'p') + "\r\n";
  request += "\r\n";
  s.send(request);
  const std::string got = s.read_until("}", 5000ms);
  CHECK(status_of(got) == 431);
  CHECK(got.find("application/problem+json") != std::string::npos);
  CHECK(got.find("headers-too-large") != std::string::npos);
}

TEST_CASE("a chunked body over the body limit gets 413 like a Content-Length one") {
  // main: chunked bodies bypassed the 1 MiB limit (8 MiB parsed).
  ApiFixture fx;
  RawSocket s(fx.server().port());
  s.send(std::string("POST /api/v1/volumes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n") +
         kAdminAuthorization + "Transfer-Encoding: chunked\r\n\r\n");
  const std::string chunk(64 << 10, ' ');
  char size_line[32];
  std::snprintf(size_line, sizeof size_line, "%zx\r\n", chunk.size());
  bool sent_all = true;
  for (int i = 0; i < 32 && sent_all; ++i) sent_all = s.send(size_line + chunk + "\r\n");  // 2 MiB
  if (sent_all) s.send("0\r\n\r\n");
  const std::string got = s.read_until("}", 5000ms);
  CHECK(status_of(got) == 413);
  CHECK(got.find("payload-too-large") != std::string::npos);
  CHECK(fx.client().get("/volumes").body["total"] == 0);
}

TEST_CASE("Range is ignored on API answers: a 201 keeps its whole body") {
  // main: httplib applied Range to every response: a 201 Created came back as `{"allo`.
  ApiFixture fx;
  Http http = fx.client();
  const Response created = http.post("/volumes", {{"name", "v1"}, {"capacity_bytes", "1GiB"}},
                                     {{"Range", "bytes=0-5"}});
  CHECK(created.status == 201);
  CHECK(created.body["name"] == "v1");
  const Response got = http.get("/system", {{"Range", "bytes=0-5"}});
  CHECK(got.status == 200);
  CHECK(got.body.contains("counts"));
  CHECK(got.header("Content-Range").empty());
}

TEST_CASE("connections past the per-address cap are closed; other addresses are served") {
  // main: no per-address bound at all.
  ApiFixture fx(42, [](RestServerOptions& o) { o.http.max_connections_per_address = 4; });
  const int port = fx.server().port();
  std::vector<RawSocket> mine;
  for (int i = 0; i < 4; ++i) {
    mine.emplace_back(port, "127.0.0.2");
    REQUIRE(mine.back().send(get_request("/system")));
    REQUIRE(status_of(mine.back().read_until("\"counts\"", 5000ms)) == 200);
  }
  RawSocket fifth(port, "127.0.0.2");
  fifth.send(get_request("/system"));
  CHECK(fifth.read_until("\"counts\"", 2000ms).empty());
  CHECK(timed_get_system(port).first == 200);
  mine.pop_back();  // one closes: its slot is free again
  std::this_thread::sleep_for(200ms);
  RawSocket again(port, "127.0.0.2");
  again.send(get_request("/system"));
  CHECK(status_of(again.read_until("\"counts\"", 5000ms)) == 200);
}

// The server runs in this process: find its side of `client`'s connection among our fds.
int server_side_fd(const RawSocket& client, int server_port) {
  for (int fd = 3; fd < 4096; ++fd) {
    sockaddr_in self{}, peer{};
    socklen_t n1 = sizeof self, n2 = sizeof peer;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &n1) != 0) continue;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &n2) != 0) continue;
    if (self.sin_family == AF_INET && ntohs(self.sin_port) == server_port &&
        ntohs(peer.sin_port) == client.local_port())
      return fd;
  }
  return -1;
}

TEST_CASE("replies leave at once: the server's sockets have TCP_NODELAY") {
  // main: httplib 0.11 left Nagle on; every reply waited for a delayed ACK (44 ms POSTs).
  ApiFixture fx;
  RawSocket s(fx.server().port());
  REQUIRE(s.send(get_request("/system")));
  REQUIRE(status_of(s.read_until("\"counts\"", 5000ms)) == 200);
  const int fd = server_side_fd(s, fx.server().port());
  REQUIRE(fd >= 0);
  int on = 0;
  socklen_t len = sizeof on;
  REQUIRE(::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &len) == 0);
  CHECK(on == 1);
}

TEST_CASE("a Host the server does not answer for gets 421 (DNS rebinding)") {
  // main: Host was not checked.
  ApiFixture fx;
  Http http = fx.client();
  const Response evil = http.get("/system", {{"Host", "evil.example:8080"}});
  CHECK(evil.status == 421);
  CHECK(evil.is_problem());
  CHECK(http.get("/system", {{"Host", "localhost:8080"}}).status == 200);
  CHECK(http.get("/system", {{"Host", "[::1]:8080"}}).status == 200);
  // A line folded onto Host (obsolete line folding: the parser merges it into Host's value)
  // is not echoed: hostile round 28's 421 quoted an Authorization header folded there, the
  // caller's credentials with it.
  RawSocket s(fx.server().port());
  REQUIRE(s.send("GET /api/v1/system HTTP/1.1\r\nHost: evil.example\r\n Authorization: Basic c2VjcmV0LXBhc3M=\r\n"
                 "Connection: close\r\n\r\n"));
  const std::string folded = s.read_until("--allowed-hosts", 5000ms);
  INFO(folded);
  CHECK(status_of(folded) == 421);
  CHECK(folded.find("host \\\"evil.example\\\", cut at a character no host name has,") != std::string::npos);
  CHECK(folded.find("c2VjcmV0") == std::string::npos);
}

}  // namespace
}  // namespace afasim::api::testing
