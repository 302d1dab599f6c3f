// The client commands against a live `afasim serve`: every command once, the JSON output
// against the API's own answer, human and exact sizes, a refused request (exit code 3 and
// the problem's detail), an unreachable array (4) and bad usage (2). docs/cli.md.
#include <algorithm>
#include <doctest/doctest.h>
#include <httplib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "tests/integration/serve_process.h"

using nlohmann::json;
using afasim::testing::ServeProcess;
using afasim::testing::TempStateDir;

namespace {

struct Run {
  int code = -1;
  std::string out, err;
  json j() const { return json::parse(out); }
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// Runs `afasim ARGS` (a shell word list) with AFASIM_URL pointing at `port` and `env` (more
// VAR=value words: the credentials) before it.
Run run_afasim(int port, const std::string& args, const std::string& dir, const std::string& env = "") {
  const std::string err_file = dir + "/cli.err";
  const std::string cmd = "AFASIM_URL=http://127.0.0.1:" + std::to_string(port) + " " + env + " " +
                          quote(std::getenv("AFASIM_BINARY")) + " " + args + " 2>" + quote(err_file);
  Run r;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  return r;
}

struct Fixture {
  TempStateDir dir;
  ServeProcess serve{dir.path() + "/state", {"--payload", "memory"}};
  // The admin's password file, which the first start wrote (docs/cli.md "Credentials").
  std::string credentials() const { return "AFASIM_PASSWORD_FILE=" + quote(dir.path() + "/state/admin-password"); }
  Run operator()(const std::string& args) {
    Run r = run_afasim(serve.port(), args, dir.path(), credentials());
    INFO("afasim " << args << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
    return r;
  }
  // Runs and requires exit 0.
  Run ok(const std::string& args) {
    Run r = (*this)(args);
    INFO("afasim " << args << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
    REQUIRE(r.code == 0);
    return r;
  }
};

// A TCP listener on 127.0.0.1 at a port the kernel chose; closed with the object.
struct Listener {
  int fd = -1;
  int port = 0;
  ~Listener() { ::close(fd); }
};

Listener listen_loopback() {
  Listener l;
  l.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(l.fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(l.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(l.fd, 4) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(l.fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  l.port = ntohs(addr.sin_port);
  return l;
}

// A 200 status line, then header lines of 1,000 bytes until the client goes. A client that
// shut its socket can leave a send waiting on a closed window: each send gives up after 2 s.
void send_endless_headers(int c) {
  const timeval give_up{2, 0};
  ::setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &give_up, sizeof give_up);
  std::string out = "HTTP/1.1 200 OK\r\n";
  for (const std::string line = "X-A: " + std::string(1000, 'a') + "\r\n"; out.size() < (1 << 20);) out += line;
  if (::send(c, out.data(), 17, MSG_NOSIGNAL) > 0)
    while (::send(c, out.data() + 17, out.size() - 17, MSG_NOSIGNAL) > 0) {
    }
}

bool has_line(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex(pattern, std::regex::multiline));
}

}  // namespace

TEST_CASE("volume, qos-policy, host and mapping: create, list, show, update, delete") {
  Fixture cli;
  // QoS policy
  CHECK(cli.ok("qos-policy create gold --min-iops 2000 --max-iops 5000 --burst-iops 8000 -o json").j()["max_iops"] ==
        5000);
  CHECK(has_line(cli.ok("qos-policy list").out, "^ *1 +gold +2000 +5000 +8000 +0$"));
  CHECK(cli.ok("qos-policy update gold --max-iops 6000 -o json").j()["max_iops"] == 6000);
  CHECK(cli.ok("qos-policy show 1 -o json").j()["name"] == "gold");

  // Volumes: human sizes by default, exact with --bytes, JSON as the API gives it.
  const Run created = cli.ok("volume create db01 --size 2TiB --raid RAID10 --qos-policy gold");
  CHECK(has_line(created.out, "^created volume 1$"));
  CHECK(has_line(created.out, "^capacity_bytes +2 TiB$"));
  cli.ok("volume create logs --size 100GiB --raid raid5 --provisioning fixed --controller B");  // any case (new-user trial 17)
  // A controller by id as well as by name: "2" went to the array as a string, which it
  // refused for every volume (hostile review 42); anything else is exit 2, before a request.
  CHECK(cli.ok("volume create by-id --size 1GiB --controller 2 -o json").j()["preferred_controller"] == 2);
  CHECK(cli.ok("volume update by-id --controller a -o json").j()["preferred_controller"] == 1);
  // An empty value is a value: it let the array choose (hostile review 42).
  for (const char* empty : {"--controller ''", "--pool ''", "--qos-policy ''"}) {
    CAPTURE(empty);
    CHECK(cli("volume create e --size 1GiB " + std::string(empty)).code == 2);
  }
  const Run third = cli("volume create c3 --size 1GiB --controller 3");
  CHECK(third.code == 2);
  CHECK(third.err.find("--controller must be A, B, 1 or 2, got \"3\"") != std::string::npos);
  cli.ok("volume delete by-id");
  const std::string list = cli.ok("volume list").out;
  CHECK(has_line(list, "^ID +NAME +POOL +SIZE +RAID +PROV +ALLOCATED +STATE +OWNER +MIN +MAX +BURST +IOPS$"));
  CHECK(has_line(list, "^ *1 +db01 +1 +2 TiB +RAID10 +thin +0 B +online +1 +2000 +6000 +8000 +0$"));
  CHECK(has_line(list, "^ *2 +logs +1 +100 GiB +RAID5 +fixed +100 GiB +online +2 +- +- +- +0$"));
  CHECK(has_line(cli.ok("volume list --bytes").out, " 2199023255552 +RAID10 "));
  const json vols = cli.ok("volume list --output json").j();
  CHECK(vols["total"] == 2);
  CHECK(vols["items"][1]["capacity_bytes"] == 100LL << 30);
  CHECK(cli.ok("volume show logs -o json").j()["id"] == 2);
  CHECK(has_line(cli.ok("volume show 2").out, "^raid_type +RAID5$"));
  const json grown = cli.ok("volume update db01 --size 3TiB --max-iops 1000 --qos-policy none -o json").j();
  CHECK(grown["capacity_bytes"] == 3LL << 40);
  CHECK(grown["max_iops"] == 1000);
  CHECK(grown["qos_policy_id"].is_null());

  // Hosts and mappings, by name.
  CHECK(has_line(cli.ok("host create esx01 --initiator fc:21:00:00:24:ff:4b:8a:10 --description rack-3").out,
                 "^created host 1$"));
  CHECK(has_line(cli.ok("host list").out, "^ *1 +esx01 +fc:21:00:00:24:ff:4b:8a:10 +0 +rack-3$"));
  CHECK(cli.ok("host update esx01 --initiator nbd:127.0.0.1 -o json").j()["initiators"][0]["type"] == "nbd");
  CHECK(cli.ok("host update esx01 --no-initiators -o json").j()["initiators"].empty());  // hostile review 42
  CHECK(cli.ok("host update esx01 --initiator nbd:127.0.0.1 -o json").j()["initiators"].size() == 1);
  CHECK(cli.ok("host show esx01 -o json").j()["description"] == "rack-3");
  CHECK(has_line(cli.ok("mapping create --volume db01 --host esx01 --lun 3").out, "^lun +3$"));
  CHECK(has_line(cli.ok("mapping list").out, "^ *1 +1 +1 +3 +read_write$"));
  CHECK(cli.ok("mapping show 1 -o json").j()["volume_id"] == 1);

  // Refused: a mapped volume cannot be deleted (409); the problem's detail is printed.
  const Run refused = cli("volume delete db01");
  CHECK(refused.code == 3);
  CHECK(refused.err.find("refused (409 Conflict): volume 1 is mapped to host 1 as LUN 3") != std::string::npos);
  CHECK(refused.out.empty());
  // Refused: min above max (422), nothing created.
  const Run bad = cli("volume create bad --size 1GiB --min-iops 9000 --max-iops 10");
  CHECK(bad.code == 3);
  CHECK(bad.err.find("min_iops (9000) must not exceed max_iops (10)") != std::string::npos);
  CHECK(cli("volume show bad").code == 3);

  CHECK(has_line(cli.ok("mapping delete 1").out, "^deleted mapping 1$"));
  CHECK(has_line(cli.ok("volume delete db01").out, "^deleted volume 1$"));
  CHECK(has_line(cli.ok("host delete esx01").out, "^deleted host 1$"));
  CHECK(has_line(cli.ok("qos-policy delete gold").out, "^deleted QoS policy 1$"));
  CHECK(cli.ok("volume list -o json").j()["total"] == 1);
}

TEST_CASE("pool, system, controller, fault, alert, event and metrics") {
  Fixture cli;
  CHECK(has_line(cli.ok("pool list").out, "^ *1 +Pool 1 +1,2 +RAID10,RAID5 +0 +0 B +0 B +[0-9.]+ TiB +[0-9.]+ TiB$"));
  CHECK(cli.ok("pool show 1 -o json").j()["datapac_ids"] == json::array({1, 2}));
  CHECK(cli.ok("pool update 1 --thresholds 70,85 -o json").j()["space_thresholds_percent"] == json::array({70, 85}));
  CHECK(cli.ok("pool delete 1").out == "deleted pool 1\n");
  CHECK(cli.ok("pool create flash --datapacs 1,2 -o json").j()["id"] == 2);

  const std::string system = cli.ok("system show").out;
  CHECK(has_line(system, "^model +ISE 860 G3$"));
  CHECK(has_line(system, "^power.mains +on$"));
  CHECK(cli.ok("system show -o json").j()["counts"]["pools"] == 1);
  CHECK(has_line(cli.ok("controller list").out, "^ *1 +A +active +write-back "));
  CHECK(cli.ok("controller show B -o json").j()["name"] == "B");

  cli.ok("volume create v --size 10GiB --provisioning fixed");
  CHECK(has_line(cli.ok("fault inject drive_fail --drive 7").out, "^created fault 1$"));
  CHECK(has_line(cli.ok("fault list").out, "^ *1 +[0-9.]+ s +drive_fail +7 +- +"));
  CHECK(cli.ok("fault show 1 -o json").j()["type"] == "drive_fail");
  // A *_ns field shows its nanoseconds, seconds beside them (it showed seconds under the _ns name).
  const std::int64_t fault_ns = cli.ok("fault show 1 -o json").j()["time_ns"].get<std::int64_t>();
  char seconds[40];
  std::snprintf(seconds, sizeof seconds, "%.3f s", static_cast<double>(fault_ns) / 1e9);
  CHECK(has_line(cli.ok("fault show 1").out, "^time_ns +" + std::to_string(fault_ns) + " \\(" + seconds + "\\)$"));
  // Refused: the drive is failed already (409).
  const Run again = cli("fault inject drive_fail --drive 7");
  CHECK(again.code == 3);
  CHECK(again.err.find("refused (409") != std::string::npos);
  CHECK(cli.ok("fault clear 1 -o json").j()["type"] == "drive_replace");
  CHECK(cli("fault clear 2").code == 3);  // a replace undoes nothing
  // A corrupted block has no opposite fault; it is not "a recovery" (hostile review 42).
  const json corrupt = cli.ok("fault inject corrupt_block --drive 3 -o json").j();
  const Run undo = cli("fault clear " + std::to_string(corrupt["id"].get<int>()));
  CHECK(undo.code == 3);
  CHECK(undo.err.find("(corrupt_block) has no opposite fault: a write over the block") != std::string::npos);

  cli.ok("fault inject supercap_degrade");
  CHECK(has_line(cli.ok("alert list").out, "^supercap_degraded +- +warning +"));
  CHECK(has_line(cli.ok("event list --kind drive").out, "drive +drive/7 +drive 7 .*failed"));
  const json alerts = cli.ok("event list --kind alert -o json").j();
  // Other alerts (the volume degraded by drive 7, cleared when its rebuild ends) may come
  // and go in between on a slow machine, so the raise is looked for among them.
  CHECK(std::any_of(alerts["items"].begin(), alerts["items"].end(), [](const json& e) {
    return e["message"].get<std::string>().rfind("alert raised: supercap_degraded", 0) == 0;
  }));
  CHECK(cli.ok("event list --severity critical -o json").j()["items"].empty());

  const std::string metrics = cli.ok("metrics").out;
  CHECK(has_line(metrics, "^afasim_supercap_degraded 1$"));
  CHECK(has_line(metrics, "^afasim_drive_state\\{drive=\"7\",datapac=\"1\",slot=\"7\",state=\"healthy\"\\} 1$"));

  // A controller fault by id (it was refused: "2" went as a string, hostile review 42).
  CHECK(cli.ok("fault inject controller_fail --controller 2 -o json").j()["controller"] == 2);
  CHECK(cli.ok("controller show 2 -o json").j()["state"] == "failed");
}

TEST_CASE("event list --follow prints new events as they happen") {
  Fixture cli;
  const std::string out_file = cli.dir.path() + "/follow.out";
  const std::string cmd = "AFASIM_URL=http://127.0.0.1:" + std::to_string(cli.serve.port()) + " " +
                          cli.credentials() + " timeout 8 " +
                          quote(std::getenv("AFASIM_BINARY")) + " event list --follow --kind power > " +
                          quote(out_file) + " 2>&1 &";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  cli.ok("fault inject supercap_degrade");
  std::string text;
  for (int i = 0; i < 60 && text.find("supercap pack degraded") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream in(out_file);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  // A header, then fixed columns (a new user's tour: no header, columns wandering).
  CHECK(has_line(text, "^ID +TIME  SEVERITY  KIND +OBJECT +MESSAGE$"));
  CHECK(has_line(text, "^[0-9]+ +[0-9.]+ s  error     power       -               supercap pack degraded"));
}

namespace {

// Runs the client command `args` against `web` (its routes set) on a loopback port, which
// `port` receives; the server is stopped before this returns.
Run run_against(httplib::Server& web, const std::string& args, int* port) {
  *port = web.bind_to_any_port("127.0.0.1");
  REQUIRE(*port > 0);
  std::thread server([&] { web.listen_after_bind(); });
  TempStateDir dir;
  const Run r = run_afasim(*port, args, dir.path());
  web.stop();
  server.join();
  return r;
}

}  // namespace

TEST_CASE("an error answer that is not afasim's is exit 1, naming the URL (hostile round 15)") {
  // A web server's 404 page at --url was exit 3, "refused (404): not found" (docs/cli.md: exit 1
  // for an answer the client did not expect).
  httplib::Server web;
  web.Get(".*", [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content("<html><body>Not Found</body></html>", "text/html");
  });
  int port = 0;
  const Run r = run_against(web, "volume list", &port);
  CHECK(r.code == 1);
  CHECK(r.err.find("HTTP 404: the answer is not an afasim problem document (is http://127.0.0.1:" +
                   std::to_string(port) + " an afasim array?)") != std::string::npos);
}

TEST_CASE("metrics: an answer that is not Prometheus text is exit 1; -o json is bad usage (hostile review 42)") {
  httplib::Server web;
  web.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html>a router's page</html>", "text/html");
  });
  int port = 0;
  const Run page = run_against(web, "metrics", &port);
  CHECK(page.code == 1);
  CHECK(page.out.empty());
  CHECK(page.err.find("GET /metrics: the answer is text/html, not text/plain (is http://127.0.0.1:") != std::string::npos);
  httplib::Server other;
  const Run json_output = run_against(other, "metrics -o json", &port);
  CHECK(json_output.code == 2);
  CHECK(json_output.err.find("-o json: the metrics are Prometheus text") != std::string::npos);
}

TEST_CASE("a change whose answer is cut off says the array may have applied it (hostile review 42)") {
  // A server killed during a create gave "closed without an answer (an HTTPS server? ...)" only.
  httplib::Server web;
  web.Post("/api/v1/volumes", [](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(100, "application/json", [](std::size_t, std::size_t, httplib::DataSink&) { return false; });
  });
  int port = 0;
  const Run r = run_against(web, "volume create v --size 1GiB", &port);
  CHECK(r.code == 4);
  INFO(r.err);
  CHECK(r.err.find("the request was sent, so the array may have applied it: check before retrying") != std::string::npos);
}

TEST_CASE("an endless answer is cut at 64 MiB (exit 1), a trickled one at --timeout (exit 4) (hostile round 16)") {
  // The client read an endless body into memory (8 GB in 60 s) and waited without end for a
  // server that sent a byte a second: --timeout bounded each read, not the answer.
  httplib::Server web;
  web.Get("/api/v1/volumes", [](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(std::size_t{100} << 30, "application/json",
                             [](std::size_t, std::size_t, httplib::DataSink& sink) {
                               const std::string mib(std::size_t{1} << 20, ' ');
                               return sink.write(mib.data(), mib.size());
                             });
  });
  web.Get("/api/v1/system", [](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(1000, "application/json", [](std::size_t, std::size_t, httplib::DataSink& sink) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      return sink.write(" ", 1);
    });
  });
  const int port = web.bind_to_any_port("127.0.0.1");
  REQUIRE(port > 0);
  std::thread server([&] { web.listen_after_bind(); });
  TempStateDir dir;
  const Run endless = run_afasim(port, "volume list", dir.path());
  const auto start = std::chrono::steady_clock::now();
  const Run trickle = run_afasim(port, "system show --timeout 2", dir.path());
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  web.stop();
  server.join();
  CHECK(endless.code == 1);
  CHECK(endless.err.find("the answer is larger than 64 MiB") != std::string::npos);
  CHECK(trickle.code == 4);
  CHECK(trickle.err.find("no whole answer within 2 s (--timeout)") != std::string::npos);
  CHECK(waited < 60);  // --timeout 2 and the process's start; the whole trickle takes 500 s
}

TEST_CASE("a server that streams header lines without end is cut off by memory, not after --timeout (review of round 16)") {
  // cpp-httplib 0.11 caps a header line, not their number: the client grew ~150 MB a second
  // until --timeout. A one-connection server that answers with header lines until the client goes.
  const Listener listener = listen_loopback();
  std::thread server([&listener] {
    const int c = ::accept(listener.fd, nullptr, nullptr);
    if (c < 0) return;
    char request[4096];
    (void)::recv(c, request, sizeof request, 0);
    send_endless_headers(c);
    ::close(c);
  });
  TempStateDir dir;
  const auto start = std::chrono::steady_clock::now();
  const Run r = run_afasim(listener.port, "volume list --timeout 600", dir.path());
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  server.join();
  CHECK(r.code == 1);
  CHECK(r.err.find("the answer is larger than 64 MiB") != std::string::npos);
  CHECK(waited < 300);  // --timeout is 600 s: it was the memory bound that stopped it
}

TEST_CASE("event list --follow: a stream whose header lines never end is cut off by memory too (hostile round 24)") {
  // The stream had no watchdog: it grew to 3.9 GB and --timeout did nothing. A server that
  // answers GET /api/v1/events with an empty page and the stream with header lines for ever.
  const Listener listener = listen_loopback();
  std::thread server([&listener] {
    for (bool streamed = false; !streamed;) {
      const int c = ::accept(listener.fd, nullptr, nullptr);
      if (c < 0) return;
      const timeval give_up{2, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &give_up, sizeof give_up);
      for (std::string in;;) {  // the requests of one kept-alive connection
        char buf[4096];
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<std::size_t>(n));
        if (in.find("\r\n\r\n") == std::string::npos) continue;
        if (in.find("/events/stream") != std::string::npos) {
          streamed = true;
          send_endless_headers(c);
          break;
        }
        const std::string page = R"({"items": [], "total": 0, "offset": 0, "limit": 50, "next_after": 0})";
        const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                   std::to_string(page.size()) + "\r\n\r\n" + page;
        (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
        in.clear();
      }
      ::close(c);
    }
  });
  TempStateDir dir;
  const Run r = run_afasim(listener.port, "event list --follow --after 0 --timeout 600", dir.path());
  server.join();
  CHECK(r.code == 1);
  CHECK(r.err.find("GET /api/v1/events/stream: the answer is larger than 64 MiB") != std::string::npos);
}

TEST_CASE("exit codes: unreachable 4, usage 2") {
  TempStateDir dir;
  // A port nothing listens on (bound and closed by the kernel's choice would race; port 1
  // is privileged and unused here).
  const Run down = run_afasim(1, "volume list", dir.path());
  CHECK(down.code == 4);
  CHECK(down.err.find("cannot reach the array at http://127.0.0.1:1") != std::string::npos);
  CHECK(run_afasim(1, "volume", dir.path()).code == 2);
  const Run verb = run_afasim(1, "volume lst", dir.path());
  CHECK(verb.code == 2);
  CHECK(verb.err == "afasim volume: unknown command \"lst\" (volume commands: list, show, delete, create, update)\n");
  // An option before a word: CLI11's get_subcommand threw and the process aborted (make fuzz).
  const Run option_first = run_afasim(1, "-x volume", dir.path());
  CHECK(option_first.code == 2);
  CHECK(option_first.err == "afasim: option \"-x\" before the command; a command's options follow it "
                            "(afasim volume list --url URL; afasim --help)\n");
  CHECK(run_afasim(1, "--version", dir.path()).code == 0);
  CHECK(run_afasim(1, "volume list --output yaml", dir.path()).code == 2);
  CHECK(run_afasim(1, "volume create x", dir.path()).code == 2);  // --size is required
  const Run url = run_afasim(1, "volume list --url ftp://x", dir.path());
  CHECK(url.code == 2);
  CHECK(url.err.find("--url must be http[s]://HOST:PORT") != std::string::npos);
  // A URL of 120,000 characters overflowed std::regex's recursion (SIGSEGV, exit 139); a port
  // out of range, an unclosed [ and user:password@ were exit 4, "cannot reach the array".
  const Run long_url =
      run_afasim(1, "volume list --url http://" + std::string(120000, 'a'), dir.path());
  CHECK(long_url.code == 2);
  CHECK(long_url.err.find("--url must be http[s]://HOST:PORT[/PATH] (a port of 1 to 65535") !=
        std::string::npos);
  for (const char* bad : {"http://127.0.0.1:99999", "http://127.0.0.1:0", "'http://[::1'",
                          "http://user:pw@127.0.0.1:1", "'http://127.0.0.1 :1'"}) {
    CAPTURE(bad);
    CHECK(run_afasim(1, std::string("volume list --url ") + bad, dir.path()).code == 2);
  }
  // Hostile round 15: a line break in the token went into the request as headers; a report
  // that could not be written to standard output exited 0.
  const Run token = run_afasim(1, "volume list --token \"$(printf 'a\\r\\nX-Evil: 1')\"", dir.path());
  CHECK(token.code == 2);
  CHECK(token.err.find("--token (or AFASIM_TOKEN) must be one word of visible ASCII") != std::string::npos);
  const Run full = run_afasim(1, "capacity >/dev/full", dir.path());
  CHECK(full.code == 1);
  CHECK(full.err.find("afasim: cannot write to standard output") != std::string::npos);
  CHECK(run_afasim(1, "volume list --url 'http://[::1]:1/'", dir.path()).code == 4);
  CHECK(run_afasim(1, "volume list --url http://localhost:1/array", dir.path()).code == 4);
  CHECK(run_afasim(1, "volume update 1 --min-iops lots", dir.path()).code == 2);
  // Digits beyond 64 bits: std::stoll threw out_of_range and the process aborted (exit 134).
  // An IOPS flag says what is wrong, naming the flag as it is spelled ...
  const Run iops =
      run_afasim(1, "volume create v --size 1GiB --max-iops 99999999999999999999", dir.path());
  CHECK(iops.code == 2);
  CHECK(iops.err ==
        "afasim volume: --max-iops must be a whole number or none, got 99999999999999999999\n");
  CHECK(run_afasim(1, "qos-policy create q --min-iops 99999999999999999999", dir.path()).code == 2);
  // ... and a REF or a size goes to the array as written (no array here: unreachable, 4).
  CHECK(run_afasim(1, "volume show 99999999999999999999", dir.path()).code == 4);
  CHECK(run_afasim(1, "volume create v --size 99999999999999999999", dir.path()).code == 4);
  // Numbers JSON cannot carry, or that overflow the API's nanoseconds, are bad usage here: NaN
  // reached the array as null ("missing required field latency_multiplier") and --since nan
  // as since=-9223372036854775808.
  const Run nan = run_afasim(1, "fault inject drive_slow --drive 3 --multiplier nan", dir.path());
  CHECK(nan.code == 2);
  CHECK(nan.err.find("--multiplier: must be a number from 1 to 1000, got nan") !=
        std::string::npos);
  CHECK(run_afasim(1, "fault inject drive_slow --drive 3 --multiplier 1e400", dir.path()).code ==
        2);
  // Whole numbers beyond their range, or empty, are bad usage, echoed as typed: CLI11 folded
  // 2^64 to 2^63-1 and '' to 0 (a mapping made at LUN 1 for --lun '', hostile review 42).
  for (const char* args : {"mapping create --volume v --host h --lun 18446744073709551616",
                           "mapping create --volume v --host h --lun ''", "mapping create --volume v --host h --lun 16384",
                           "fault inject drive_slow --drive 18446744073709551616 --multiplier 2",
                           "fault inject drive_fail --drive ''", "fault clear 18446744073709551616", "fault clear ''",
                           "event list --after 18446744073709551616", "event list --after -1"}) {
    CAPTURE(args);
    const Run r = run_afasim(1, args, dir.path());
    CHECK(r.code == 2);
    CHECK(r.err.find("must be") != std::string::npos);
  }
  CHECK(run_afasim(1, "fault clear 18446744073709551616", dir.path()).err.find("got 18446744073709551616") !=
        std::string::npos);
  // An id too large to be one is said to be that, not a name (hostile review 42).
  const Run huge_id = run_afasim(1, "fault show 18446744073709551616", dir.path());
  CHECK(huge_id.code == 2);
  CHECK(huge_id.err.find("\"18446744073709551616\" is not a fault id: ids are whole numbers from 1 to") != std::string::npos);
  for (const char* since : {"nan", "inf", "-1", "1e300"}) {
    CAPTURE(since);
    const Run r = run_afasim(1, std::string("event list --since ") + since, dir.path());
    CHECK(r.code == 2);
    CHECK(r.err.find("--since: must be a number from 0 to") != std::string::npos);
  }
}

TEST_CASE("digits beyond 64 bits: a REF is looked up as a name, a size is the array's to refuse") {
  Fixture cli;
  const Run ref = cli("volume show 99999999999999999999");
  CHECK(ref.code == 3);
  CHECK(ref.err == "afasim volume: refused: no volume named \"99999999999999999999\"\n");
  const Run size = cli("volume create v --size 99999999999999999999");
  CHECK(size.code == 3);
  CHECK(size.err.find("refused (422 Unprocessable Content): capacity_bytes") != std::string::npos);
  CHECK(cli.ok("volume list -o json").j()["total"] == 0);
}

TEST_CASE("an all-digit REF: a name first, an id when no object has that name, refused when it is both (hostile round 21)") {
  // `volume delete 1` deleted volume id 1 when the volume the user meant was named "1".
  Fixture cli;
  cli.ok("volume create alpha --size 1GiB");  // id 1
  cli.ok("volume create 1 --size 1GiB");      // id 2, named "1"
  cli.ok("volume create 007 --size 1GiB");    // id 3, named "007"
  CHECK(cli.ok("volume show 007 -o json").j()["id"] == 3);  // was "no volume 7"
  CHECK(cli.ok("volume show 3 -o json").j()["name"] == "007");  // digits no object has as a name: an id
  const Run both = cli("volume delete 1");
  CHECK(both.code == 3);
  CHECK(both.err == "afasim volume: refused: \"1\" is ambiguous: volume 1 has that id and volume 2 that name; "
                    "give id:1 or id:2\n");
  CHECK(cli.ok("volume list -o json").j()["total"] == 3);  // nothing deleted
  CHECK(cli.ok("volume show id:1 -o json").j()["name"] == "alpha");  // id: forces the id
  cli.ok("volume create 7 --size 1GiB");  // id 4, named "7": "007" is a name, never id 7
  CHECK(cli.ok("volume show 007 -o json").j()["id"] == 3);
  CHECK(cli("volume show id:x").code == 2);
  CHECK(has_line(cli.ok("volume delete 2").out, "^deleted volume 2$"));
  CHECK(cli.ok("volume show 1 -o json").j()["name"] == "alpha");  // "1" now names nothing: the id
  const Run mapping = cli("mapping show first");  // mappings have ids only
  CHECK(mapping.code == 2);
  CHECK(mapping.err == "afasim mapping: a mapping has no name: give its id, not \"first\"\n");
}

TEST_CASE("credentials: none is 401 (exit 3), a monitor is 403 on changes, from a file, a token, or over HTTPS") {
  Fixture cli;
  const std::string d = cli.dir.path();
  // No credentials at all: refused with 401, nothing created.
  const Run anonymous = run_afasim(cli.serve.port(), "volume create v --size 1GiB", d);
  CHECK(anonymous.code == 3);
  CHECK(anonymous.err.find("refused (401") != std::string::npos);
  // and says where a password comes from (new-user trial 17).
  CHECK(anonymous.err.find("admin-password file (var/afasim/admin-password under make run): give it with --password-file") != std::string::npos);
  CHECK(cli.ok("volume list -o json").j()["total"] == 0);
  // A monitor reads, and is refused (403) a change.
  cli.ok("volume create v --size 1GiB");
  REQUIRE(run_afasim(cli.serve.port(), "volume list", d, "AFASIM_USER=nobody AFASIM_PASSWORD=wrong-password").code == 3);
  // (users are made through the API: the client has no user commands)
  const std::string create_user =
      "curl -sf -u admin:$(cat " + quote(d + "/state/admin-password") + ") -H 'Content-Type: application/json' "
      "-d '{\"name\": \"watcher\", \"role\": \"monitor\", \"password\": \"watch-only-1\"}' "
      "http://127.0.0.1:" + std::to_string(cli.serve.port()) + "/api/v1/users >/dev/null";
  REQUIRE(std::system(create_user.c_str()) == 0);
  const std::string monitor = "AFASIM_USER=watcher AFASIM_PASSWORD=watch-only-1";
  CHECK(run_afasim(cli.serve.port(), "volume list -o json", d, monitor).code == 0);
  const Run refused = run_afasim(cli.serve.port(), "volume delete v", d, monitor);
  CHECK(refused.code == 3);
  CHECK(refused.err.find("refused (403") != std::string::npos);
  // A password file that cannot be read is bad usage, said at once.
  const Run missing = run_afasim(cli.serve.port(), "volume list --password-file /nonexistent", d);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("--password-file /nonexistent: cannot read a password") != std::string::npos);
  // A file without a line end: std::getline read /dev/zero until memory ran out (2 GB in
  // 10 s, never an answer). A bounded read refuses it at once (timeout(1) turns a hang into 124).
  const Run endless =
      run_afasim(cli.serve.port(), "volume list --password-file /dev/zero", d, "timeout 20");
  CHECK(endless.code == 2);
  CHECK(endless.err ==
        "afasim volume: --password-file /dev/zero: its first line is longer than 1024 bytes, the "
        "longest password\n");
  // Two credentials on the command line, or a name Basic cannot carry: bad usage, said before
  // a request (hostile review 42: the token won silently; "a:b" was sent as user a).
  const Run both = run_afasim(cli.serve.port(), "volume list --token afs_x --password pw", d);
  CHECK(both.code == 2);
  CHECK(both.err.find("--token and --password (or --password-file) both given") != std::string::npos);
  // A password flag wins over a token in the environment (it was the token, a 401).
  CHECK(run_afasim(cli.serve.port(), "volume list --password-file " + quote(d + "/state/admin-password"), d,
                   "AFASIM_TOKEN=afs_stale")
            .code == 0);
  const Run colon = run_afasim(cli.serve.port(), "volume list --user a:b --password pw", d);
  CHECK(colon.code == 2);
  CHECK(colon.err.find("--user (or AFASIM_USER) cannot hold ':'") != std::string::npos);
}

TEST_CASE("the client over HTTPS: --cacert with the certificate --tls self-signed made") {
  TempStateDir dir;
  ServeProcess serve{dir.path() + "/state", {"--payload", "none", "--tls", "self-signed"}};
  const std::string state = dir.path() + "/state";
  const std::string url = "https://127.0.0.1:" + std::to_string(serve.port());
  const std::string creds = "AFASIM_PASSWORD_FILE=" + quote(state + "/admin-password");
  const Run ok = run_afasim(serve.port(), "system show -o json --url " + url + " --cacert " + quote(state + "/tls/afasim.crt"),
                            dir.path(), creds);
  INFO(ok.err);
  CHECK(ok.code == 0);
  CHECK(ok.j()["state"] == "online");
  // Without the CA the certificate is not trusted: unreachable (4), saying why.
  const Run untrusted = run_afasim(serve.port(), "system show --url " + url, dir.path(), creds);
  CHECK(untrusted.code == 4);
  CHECK(untrusted.err.find("not trusted") != std::string::npos);
  // Plain HTTP to the HTTPS port: the server answers a plain 400 saying so (it hung up at once
  // before hostile round 31); the client says so, with the way out.
  const Run plain = run_afasim(serve.port(), "system show --url http://127.0.0.1:" + std::to_string(serve.port()),
                               dir.path(), creds);
  CHECK(plain.code == 4);
  INFO(plain.err);
  CHECK(plain.err.find("it is an HTTPS server (use https://... with --cacert") != std::string::npos);
  // A --cacert that is not a certificate is the caller's mistake: exit 2, saying so (hostile
  // round 24: exit 4, "SSLLoadingCerts").
  const Run key = run_afasim(serve.port(), "system show --url " + url + " --cacert " + quote(state + "/tls/afasim.key"),
                             dir.path(), creds);
  CHECK(key.code == 2);
  CHECK(key.err.find("/tls/afasim.key: holds no PEM certificate OpenSSL can read") != std::string::npos);
  // A certificate's marker around a body that is not one (review, round 24: exit 4).
  const std::string broken = dir.path() + "/broken.crt";
  std::ofstream(broken) << "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n";
  CHECK(run_afasim(serve.port(), "system show --url " + url + " --cacert " + quote(broken), dir.path(), creds).code == 2);
  // An http:// URL does not read it: a stale AFASIM_CACERT stops nothing.
  CHECK(run_afasim(serve.port(), "system show --url http://127.0.0.1:1 --cacert /nonexistent", dir.path(), creds).code == 4);
  const Run missing = run_afasim(serve.port(), "system show --url " + url + " --cacert /nonexistent", dir.path(), creds);
  CHECK(missing.code == 2);
  CHECK(missing.err == "afasim system: --cacert (or AFASIM_CACERT): cannot read /nonexistent: No such file or directory\n");
}

TEST_CASE("list commands read every page; event list --follow --after is oldest first and --timeout spares quiet gaps") {
  // Hostile round 24: `qos-policy list` showed the first 1,000 without a word; --follow --after
  // printed its first page newest first; --follow --timeout 1 gave up on an idle array.
  Fixture cli;
  httplib::Client api("127.0.0.1", cli.serve.port());
  std::ifstream pw(cli.dir.path() + "/state/admin-password");
  std::string password;
  std::getline(pw, password);
  api.set_basic_auth("admin", password);
  for (int i = 0; i < 1001; ++i) {
    const auto r = api.Post("/api/v1/qos-policies", "{\"name\": \"q" + std::to_string(i) + "\", \"max_iops\": 1000}",
                            "application/json");
    REQUIRE(r);
    REQUIRE(r->status == 201);
  }
  const Run table = cli.ok("qos-policy list");
  CHECK(std::count(table.out.begin(), table.out.end(), '\n') == 1002);  // the header and 1,001
  CHECK(has_line(table.out, "^ *1001 +q1000 "));
  const json all = cli.ok("qos-policy list -o json").j();
  CHECK(all["total"] == 1001);
  CHECK(all["items"].size() == 1001);
  // --follow --after 0 --limit 2: events 1 and 2 in that order, then the stream from 3 on.
  const std::string out_file = cli.dir.path() + "/follow.out";
  const std::string cmd = "AFASIM_URL=http://127.0.0.1:" + std::to_string(cli.serve.port()) + " " + cli.credentials() +
                          " timeout 4 " + quote(std::getenv("AFASIM_BINARY")) +
                          " event list --follow --after 0 --limit 2 --timeout 1 > " + quote(out_file) + " 2>&1";
  const int status = std::system(cmd.c_str());
  CHECK(WEXITSTATUS(status) == 124);  // still following when timeout(1) stopped it, at 4 s
  std::ifstream in(out_file);
  std::vector<long> ids;
  std::string header;
  std::getline(in, header);
  CHECK(header.starts_with("ID "));
  for (std::string line; std::getline(in, line);) ids.push_back(std::strtol(line.c_str(), nullptr, 10));
  REQUIRE(ids.size() >= 3);
  CHECK(ids[0] == 1);
  CHECK(ids[1] == 2);
  CHECK(ids[2] == 3);
}

TEST_CASE("a redirect is not followed: exit 1, saying where it pointed (hostile round 24)") {
  httplib::Server web;
  web.Get(".*", [](const httplib::Request&, httplib::Response& res) { res.set_redirect("https://elsewhere.example/api"); });
  int port = 0;
  const Run r = run_against(web, "system show", &port);
  CHECK(r.code == 1);
  CHECK(r.err == "afasim system: the server at http://127.0.0.1:" + std::to_string(port) +
                     " answered HTTP 302 (a redirect to https://elsewhere.example/api): afasim does not follow "
                     "redirects; give --url the array's own address\n");
}

TEST_CASE("a run beyond its memory ends with a message and exit code 1, not an abort") {
  // verify= keeps every written byte in the array's payload: 900 MiB under a 1 GB address-space
  // limit runs out (std::bad_alloc terminated the process with SIGABRT before). 900 MiB, not
  // 1 GiB: a region larger than the limit is refused before the run (review 34, exit 2).
  TempStateDir dir;
  const std::string err_file = dir.path() + "/oom.err";
  const std::string cmd = "(ulimit -v 1000000; exec " + quote(std::getenv("AFASIM_BINARY")) +
                          " fio --quiet --name=x --filename=v --size=900m --rw=write --bs=1m --verify=md5) >/dev/null 2>" +
                          quote(err_file);
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  CHECK(ss.str().rfind("afasim: out of memory:", 0) == 0);
}

TEST_CASE("serve: a start-up failure is on stderr as well as in the log on stdout (it was in the log only)") {
  TempStateDir dir;
  const Run r = run_afasim(0, "serve --state " + quote(dir.path() + "/state") + " --listen 127.0.0.1:99999", dir.path());
  CHECK(r.code == 2);
  const std::string message = "--listen must be HOST:PORT with a port of 0 to 65535, got \"127.0.0.1:99999\"";
  CHECK(r.err == "afasim serve: " + message + "\n");
  CHECK(r.out.find("[error] afasim serve: " + message) != std::string::npos);
}
