// `afasim serve`: the array on a model thread, its ReST API and NBD target, its state in SQLite.
#include <signal.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

// clang-format off
#include <utility>  // before Boost.Asio 1.74's headers, which use std::exchange
#include <boost/asio/ssl/context.hpp>
// clang-format on

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/auth.h"
#include "serve/tls.h"
#include "api/rest_server.h"
#include "app/commands.h"
#include "config/preset.h"
#include "perf/calibration.h"
#include "controller/array.h"
#include "controller/telemetry.h"
#include "serve/model_thread.h"
#include "app/session.h"
#include "nbd/nbd_server.h"
#include "redfish/service.h"
#include "serve/session_record.h"
#include "sim/units.h"
#include "store/sqlite_store.h"

#ifndef AFASIM_VERSION
#define AFASIM_VERSION "unknown"
#endif

namespace afasim::app {
namespace {

struct ServeOptions {
  std::string system = config::Catalog::kDefaultSystem;
  std::string listen = "127.0.0.1:8080";
  std::string nbd_listen = "127.0.0.1:10809";  // "none": no TCP listener
  std::string nbd_socket;                      // Unix socket path, "" for none
  std::string state = "./var/afasim";
  std::string pace = "realtime";
  std::optional<double> speed;  // --pace realtime only; 1.0 when not given
  double destage_age_s = sim::to_seconds(controller::CacheOptions{}.destage_age_ns);
  std::uint64_t seed = 1;
  std::string config_dir;
  std::string payload = "file";
  std::string log_level = "info";
  std::vector<std::string> allowed_hosts;  // Host names served besides IP literals and localhost
  double nbd_idle_timeout_s = 300;
  double nbd_handshake_timeout_s = 10;
  double nbd_io_timeout_s = 30;
  int nbd_max_connections_per_address = 16;
  std::string tls;       // "" or "self-signed"
  std::string tls_cert;  // PEM files for HTTPS and NBD TLS
  std::string tls_key;
  std::string nbd_tls = "on";  // with TLS: on (offered), require, off
  std::string record;  // --record FILE, "" for none
};

// A positive age under half a nanosecond is 1 ns, not 0 (never).
sim::Time destage_age_ns(const ServeOptions& o) {
  const auto ns = static_cast<sim::Time>(std::llround(o.destage_age_s * 1e9));
  return o.destage_age_s > 0 ? std::max<sim::Time>(ns, 1) : 0;
}

// The TLS context --tls / --tls-cert / --tls-key ask for; null for none; an error message.
sim::Result<std::shared_ptr<boost::asio::ssl::context>> tls_context(const ServeOptions& o,
                                                                    const std::string& http_host,
                                                                    const std::string& nbd_host) {
  if (o.tls.empty() && o.tls_cert.empty() && o.tls_key.empty())
    return std::shared_ptr<boost::asio::ssl::context>();
  if (!o.tls.empty() && !(o.tls_cert.empty() && o.tls_key.empty()))
    return sim::invalid_argument("--tls self-signed and --tls-cert/--tls-key exclude each other");
  if (o.tls.empty() && (o.tls_cert.empty() || o.tls_key.empty()))
    return sim::invalid_argument("--tls-cert and --tls-key go together");
  serve::TlsFiles files{o.tls_cert, o.tls_key};
  if (!o.tls.empty()) {
    auto made = serve::ensure_self_signed(o.state, {http_host, nbd_host});
    if (!made.is_ok()) return made.status();
    files = *made;
    spdlog::info("afasim serve: TLS with the self-signed certificate {} (clients: curl --cacert {})",
                 files.cert_file, files.cert_file);
  }
  return serve::server_tls_context(files);
}

// A failure that ends serve: in the log (stdout), and on stderr too when stderr goes elsewhere
// (a service manager or script that reads errors there saw nothing; the log line is kept
// for the log's readers).
int log_failure(const std::string& message, int code = 1) {
  spdlog::error("afasim serve: {}", message);
  spdlog::default_logger()->flush();
  struct stat out {}, err {};
  const bool same = ::fstat(STDOUT_FILENO, &out) == 0 && ::fstat(STDERR_FILENO, &err) == 0 &&
                    out.st_dev == err.st_dev && out.st_ino == err.st_ino;
  if (!same) std::fprintf(stderr, "afasim serve: %s\n", message.c_str());
  return code;
}

// The address a listener on `host` binds, as IPv6 (an IPv4 one mapped): the first that
// getaddrinfo gives for a passive socket, as the NBD listener resolves it; nullopt when none.
std::optional<in6_addr> bound_address(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "1", &hints, &found) != 0 || found == nullptr) return std::nullopt;
  in6_addr a{};
  if (found->ai_family == AF_INET6) {
    a = reinterpret_cast<const sockaddr_in6*>(found->ai_addr)->sin6_addr;
  } else {
    a.s6_addr[10] = a.s6_addr[11] = 0xff;
    std::memcpy(&a.s6_addr[12], &reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr, 4);
  }
  ::freeaddrinfo(found);
  return a;
}

// Whether a socket bound to `a` and one bound to `b`, on one port, would collide: one address
// (::ffff:127.0.0.1 is 127.0.0.1, 0:0::0 is ::), or either every address of the machine
// (re-test of hostile review 43: those spellings passed the check and failed at the bind).
bool hosts_overlap(const std::string& a, const std::string& b) {
  const auto x = bound_address(a), y = bound_address(b);
  if (!x || !y) return a == b;
  const auto any = [](const in6_addr& v) {  // :: or 0.0.0.0 (mapped)
    return IN6_IS_ADDR_UNSPECIFIED(&v) || (IN6_IS_ADDR_V4MAPPED(&v) && v.s6_addr32[3] == 0);
  };
  return std::memcmp(&*x, &*y, sizeof *x) == 0 || any(*x) || any(*y);
}

// Checks the flags that CLI11 cannot; "" when they are fine.
std::string check_flags(const ServeOptions& o, std::optional<HostPort>& listen, std::optional<HostPort>& nbd_listen) {
  listen = parse_host_port(o.listen);
  if (!listen) return "--listen must be HOST:PORT with a port of 0 to 65535, got \"" + o.listen + "\"";
  // The ReST listener takes an IP address only: "0:P" failed at the bind, after the state
  // folder and the admin were made (re-test of hostile review 43).
  if (in6_addr v6{}; ::inet_pton(AF_INET, listen->host.c_str(), &v6) != 1 && ::inet_pton(AF_INET6, listen->host.c_str(), &v6) != 1)
    return "--listen " + o.listen + ": the host must be an IP address (127.0.0.1, ::1, 0.0.0.0)";
  if (o.nbd_listen != "none") {
    nbd_listen = parse_host_port(o.nbd_listen);
    if (!nbd_listen)
      return "--nbd-listen must be HOST:PORT with a port of 0 to 65535, or none, got \"" + o.nbd_listen + "\"";
    if (!bound_address(nbd_listen->host)) return "--nbd-listen " + o.nbd_listen + ": cannot resolve its host";
  }
  if (!nbd_listen && o.nbd_socket.empty()) return "--nbd-listen none needs --nbd-socket PATH";
  // One port for both: the second bind failed as "another program holds the port" (hostile
  // review 42), when the holder was this server; a wildcard host holds the port on every
  // address (its re-test: 0.0.0.0:P beside 127.0.0.1:P). Port 0 (any free one) may be given to both.
  if (nbd_listen && listen->port != 0 && nbd_listen->port == listen->port && hosts_overlap(nbd_listen->host, listen->host))
    return "--listen " + o.listen + " and --nbd-listen " + o.nbd_listen +
           " take the same port on one address: ReST and NBD each need their own port";
  if (o.speed && o.pace == "none") return "--speed applies to --pace realtime only";
  // It served plain NBD without a word (hostile round 25b): a refusal asked for is not dropped.
  if (o.nbd_tls == "require" && o.tls.empty() && o.tls_cert.empty())
    return "--nbd-tls require needs TLS: --tls self-signed, or --tls-cert and --tls-key";
  return "";
}

void log_event(const controller::Event& e) {
  const auto level = e.severity == controller::Severity::kInfo      ? spdlog::level::info
                     : e.severity == controller::Severity::kWarning ? spdlog::level::warn
                                                                    : spdlog::level::err;
  spdlog::log(level, "event {} t={:.3f}s {} {}: {}", e.id, sim::to_seconds(e.time_ns), e.category,
              e.object.empty() ? "array" : e.object, e.message);
}

// The session record of --record: its file and the recorder the hooks reach.
struct Recording {
  std::unique_ptr<serve::SessionFileWriter> file;
  std::unique_ptr<serve::Recorder> recorder;
};

// Opens --record's file for a session on `s`; "" and nothing to do without --record.
std::string start_recording(const ServeOptions& o, const config::SystemPreset& preset, SessionArray& s,
                            Recording& rec) {
  if (o.record.empty()) return "";
  serve::SessionHeader header{AFASIM_VERSION, preset.name, o.seed, o.payload, s.sim->now(), o.pace,
                              destage_age_ns(o)};
  auto file = serve::SessionFileWriter::open(o.record, header);
  if (!file)  // the state directory is new, and a record needs a new one: say so
    return "--record: " + file.status().message() + " (the state directory " + o.state +
           " was made: start again with another new --state)";
  rec.file = std::move(file).value();
  serve::SessionFileWriter* writer = rec.file.get();
  rec.recorder = std::make_unique<serve::Recorder>(*s.sim, [writer](const serve::Record& r) {
    const bool was_ok = writer->status().is_ok();
    writer->append(r);
    if (was_ok && !writer->status().is_ok())  // said now, not only when the session stops
      spdlog::error("afasim serve: --record: {}; the session goes on, no longer recorded",
                    writer->status().message());
  });
  rec.recorder->start();
  return "";
}

// After the model thread has stopped: closes the record file and the array.
int finish(SessionArray& s, Recording& rec) {
  int code = 0;
  if (rec.file) {
    rec.recorder->stop();
    if (const sim::Status st = rec.file->finish(); !st.is_ok()) code = log_failure(st.message());
    else spdlog::info("afasim serve: session recorded ({} records)", rec.file->records());
  }
  s.array.reset();
  spdlog::info("afasim serve: stopped cleanly");
  return code;
}

// Waits for SIGINT, SIGTERM or SIGHUP, then stops the front ends and the model cleanly.
void serve_until_signal(const sigset_t& signals, SessionArray& s, serve::ModelThread& model, api::RestServer& rest,
                        nbd::NbdServer& nbd, const std::string& system_name) {
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("afasim serve: {} received, shutting down", stop_signal_name(signal_number));
  // A second stop signal (a second Ctrl-C, a supervisor repeating SIGTERM) must not cut the
  // destage short: it stays blocked, and is answered with a line.
  std::atomic<bool> stopped{false};
  std::thread repeat([&] {
    const timespec tick{0, 100'000'000};
    while (!stopped.load()) {
      const int again = sigtimedwait(&signals, nullptr, &tick);
      if (again == SIGINT || again == SIGTERM || again == SIGHUP)
        spdlog::warn("afasim serve: {} received while stopping: the write cache is being destaged first (SIGKILL "
                     "abandons what is not yet on the SSDs)",
                     stop_signal_name(again));
    }
  });
  nbd.stop();
  rest.stop();
  try {
    const sim::Status saved = model.call([&] { return stop_session(*s.array, system_name); });
    if (!saved.is_ok()) spdlog::warn("afasim serve: could not save the clock: {}", saved.message());
  } catch (const serve::ModelStopped&) {
  }
  model.stop();
  stopped.store(true);
  repeat.join();
}

// The log (one info line per HTTP request among others) to stdout. On a terminal, spdlog's
// default colour sink, which flushes every line. Redirected (a service, a pipe, a file), a
// buffered sink flushed once a second and at every warning: a write(2) per request cost GET
// /system ~8 % of its rate under wrk (bench_http, 20.2k req/s, 0.46x the baseline).
void use_buffered_log_unless_terminal() {
  if (::isatty(STDOUT_FILENO)) return;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(std::cout, /*force_flush=*/false);
  auto logger = std::make_shared<spdlog::logger>("", std::move(sink));
  spdlog::set_default_logger(logger);
  spdlog::flush_on(spdlog::level::warn);
  spdlog::flush_every(std::chrono::seconds(1));
}

// Opens the array of `afasim serve`. With --record, the file must be creatable and the state
// directory new before the array is opened (its first boot writes to the directory); a
// refused start removes the file it created, so a second try with a good flag is not refused
// in turn. On failure `*exit_code` is 2 for a flag's fault, 1 otherwise.
sim::Result<SessionArray> open_serve_session(const ServeOptions& o, const config::Catalog& catalog,
                                             const config::SystemPreset& preset, datapac::PayloadKind payload,
                                             int* exit_code) {
  *exit_code = 2;
  bool created_record = false;
  if (!o.record.empty()) {
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(o.record, ec);
    if (std::filesystem::is_directory(st))
      return sim::invalid_argument("--record: " + o.record + " is a folder, not a file");
    // /dev/full would take the header and fail at the first flush, minutes into the session.
    if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
      return sim::invalid_argument(
          "--record: " + o.record +
          " is not a regular file: a session record is a file that afasim replay reads");
    created_record = !std::filesystem::exists(st);
    if (std::FILE* f = std::fopen(o.record.c_str(), "ab")) std::fclose(f);
    else return sim::invalid_argument("--record: cannot create " + o.record + ": " + std::strerror(errno));
  }
  auto session = open_session_array(catalog, preset, o.state, payload, o.seed, !o.record.empty(), destage_age_ns(o));
  if (!session.is_ok() && created_record) {
    std::error_code ec;
    std::filesystem::remove(o.record, ec);
  }
  if (!session.is_ok() && !o.record.empty() && session.status().code() == sim::Code::kPreconditionFailed &&
      session.status().message().find("already holds an array") != std::string::npos)
    return sim::invalid_argument("--record needs a new state directory (a replay starts from a new array): " +
                                 session.status().message());
  *exit_code = 1;
  return session;
}

// The ReST front end's options; `nbd_for_metrics` is read by /metrics once the NBD target
// exists (it starts after the API).
api::RestServerOptions rest_server_options(const ServeOptions& o, const HostPort& listen,
                                           const std::shared_ptr<boost::asio::ssl::context>& tls,
                                           const std::string& system_name, const controller::Telemetry* telemetry,
                                           api::EventBus* events,
                                           const std::atomic<nbd::NbdServer*>* nbd_for_metrics) {
  api::RestServerOptions options;
  options.http.tls = tls;
  options.http.host = listen.host;
  options.http.port = listen.port;
  options.http.allowed_hosts = o.allowed_hosts;
  options.system_name = system_name;
  options.telemetry = telemetry;
  options.events = events;
  options.nbd_metrics = [nbd_for_metrics]() -> std::optional<api::NbdMetrics> {
    const nbd::NbdServer* n = nbd_for_metrics->load();
    if (n == nullptr) return std::nullopt;
    const nbd::NbdServerStats st = n->stats();
    return api::NbdMetrics{st.connections_active, st.connections_accepted, st.connections_refused,
                           st.connections_evicted, st.requests, st.requests_refused, st.protocol_errors};
  };
  return options;
}

nbd::NbdServerOptions nbd_server_options(const ServeOptions& o, const std::optional<HostPort>& nbd_listen,
                                         const std::shared_ptr<boost::asio::ssl::context>& tls) {
  nbd::NbdServerOptions options;
  options.host = nbd_listen ? nbd_listen->host : "";
  options.port = nbd_listen ? nbd_listen->port : 0;
  options.unix_socket_path = o.nbd_socket;
  options.idle_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.nbd_idle_timeout_s * 1000));
  options.handshake_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(o.nbd_handshake_timeout_s * 1000));
  options.io_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(o.nbd_io_timeout_s * 1000));
  options.max_connections_per_address = o.nbd_max_connections_per_address;
  if (tls && o.nbd_tls != "off") {
    options.tls = tls;
    options.tls_required = o.nbd_tls == "require";
  }
  return options;
}

// Signals are waited for by the main thread only: block them before any thread starts.
// Blocked in every thread (each inherits the mask), a stop signal reaches only
// serve_until_signal's sigwait; one during start-up waits, and the start ends in a clean stop.
// SIGHUP (the terminal or ssh session of `make run` closed) stops cleanly as SIGTERM does: it
// ended the process at once, the write cache with it (hostile round 25b: 20,162 acknowledged
// writes lost). SIGPIPE is ignored: a log piped to a reader that went away (`| tee` killed)
// killed the server at its next line, as kill -9 would; the log's writes then fail unseen.
sigset_t block_stop_signals() {
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// The users of <state>/users.json; on the first start, creates the admin and says where its
// password is.
sim::Result<std::shared_ptr<api::Auth>> open_users(const std::string& state) {
  api::AuthOptions options;
  options.users_file = state + "/users.json";
  options.admin_password_file = state + "/admin-password";
  auto auth = api::Auth::open(options);
  if (!auth.is_ok()) return auth.status();
  if ((*auth)->created_admin())
    spdlog::info("afasim serve: first start: created user admin; its password is in {} (mode 0600)",
                 options.admin_password_file);
  return std::shared_ptr<api::Auth>(std::move(auth).value());
}

// What the machine lets this process use, bytes: the least of the RAM, the address-space limit
// (ulimit -v) and the cgroup's memory.max.
std::int64_t memory_available_bytes() {
  std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  struct sysinfo si {};
  if (::sysinfo(&si) == 0) limit = std::min(limit, static_cast<std::int64_t>(si.totalram) * si.mem_unit);
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    limit = std::min(limit, static_cast<std::int64_t>(rl.rlim_cur));
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  std::string text;
  if (cgroup >> text && !text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 19)
    limit = std::min(limit, static_cast<std::int64_t>(std::stoll(text)));
  return limit;
}

// With a payload the write caches hold their dirty data's bytes in this process's memory, up to
// their size (hostile round 31: on a 4 GB machine a 4 GiB nbdcopy ended the server): said at
// the start when the machine gives less than that plus ~0.5 GiB for the rest.
void warn_if_memory_short(datapac::PayloadKind payload, const SessionArray& s, int controllers) {
  if (payload == datapac::PayloadKind::kNone) return;
  const std::int64_t caches = s.array->data_path().write_cache_bytes() * controllers;
  const std::int64_t available = memory_available_bytes();
  if (caches + (std::int64_t{1} << 29) <= available) return;
  spdlog::warn("afasim serve: with a payload the write caches may hold {:.1f} GiB of dirty data in this process's memory "
               "({} controllers x {:.1f} GiB){}, but the machine (or its limit) gives {:.1f} GiB: writes that outrun the "
               "destage can fill it, and the server stops when memory runs out. Give it more memory, or use --payload "
               "none (timing only) (docs/write-cache.md)",
               static_cast<double>(caches) / sim::kGiB, controllers,
               static_cast<double>(s.array->data_path().write_cache_bytes()) / sim::kGiB,
               payload == datapac::PayloadKind::kMemory ? ", and --payload memory keeps every byte written as well" : "",
               static_cast<double>(available) / sim::kGiB);
}

// The listening lines, flushed at once: scripts wait for them.
void log_listening(const ServeOptions& o, const config::SystemPreset& preset, const api::RestServer& rest,
                   const nbd::NbdServer& nbd, const std::optional<HostPort>& nbd_listen) {
  spdlog::info("afasim serve: {} ({}) on {}, NBD on {}{}{}, state in {}, payload {}, pace {}{}", preset.model,
               preset.name, rest.base_url(), nbd_listen ? nbd_listen->host + ":" + std::to_string(nbd.port()) : "",
               nbd_listen && !o.nbd_socket.empty() ? " and " : "", o.nbd_socket, o.state, o.payload, o.pace,
               o.record.empty() ? "" : ", recording to " + o.record);
  spdlog::default_logger()->flush();
}

// Every event of the array goes to the ReST event streams, the Redfish EventService, the log
// and the recording.
void publish_events(controller::Array& array, api::EventBus& event_bus, redfish::Events& redfish_events) {
  array.set_event_listener([&event_bus, &redfish_events, &array](const controller::Event& e) {
    event_bus.publish(e);
    redfish_events.publish(e, array);
    log_event(e);
    record_event(e);
  });
}

// The --system preset, and its calibration checked against it: before the state directory is
// touched, so a calibration that disagrees is exit 2 naming the files (hostile review 42: exit
// 1, the message under "state directory ...", and a state folder left behind).
sim::Result<config::SystemPreset> serve_preset(const ServeOptions& o, const config::Catalog& catalog) {
  auto preset = catalog.system(o.system);
  if (!preset.is_ok()) return sim::Status(preset.status().code(), "--system: " + preset.status().message());
  if (auto cal = perf::calibration_for(*preset, catalog.directory()); !cal.is_ok()) return cal.status();
  return preset;
}

int run_serve(const ServeOptions& o) {
  // Before any thread (spdlog's flusher took a second SIGTERM mid-destage: hostile round 17).
  const sigset_t signals = block_stop_signals();
  use_buffered_log_unless_terminal();
  spdlog::set_level(spdlog::level::from_str(o.log_level));
  std::optional<HostPort> listen, nbd_listen;
  if (const std::string bad = check_flags(o, listen, nbd_listen); !bad.empty()) return log_failure(bad, 2);
  auto payload = datapac::parse_payload_kind(o.payload);
  if (!payload.is_ok()) return log_failure("--payload: " + payload.status().message(), 2);
  auto catalog = o.config_dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(o.config_dir);
  if (!catalog.is_ok()) return log_failure(catalog.status().message(), 2);
  auto preset = serve_preset(o, *catalog);
  if (!preset.is_ok()) return log_failure(preset.status().message(), 2);

  // TLS before the state: a bad certificate or key is refused before the state directory,
  // its array and its admin user are made (--tls self-signed makes only STATE/tls).
  auto tls = tls_context(o, listen->host, nbd_listen ? nbd_listen->host : "");
  if (!tls.is_ok()) return log_failure(tls.status().message(), 2);

  int exit_code = 1;
  auto session = open_serve_session(o, *catalog, *preset, *payload, &exit_code);
  if (!session.is_ok()) return log_failure(session.status().message(), exit_code);
  SessionArray& s = *session;
  warn_if_memory_short(*payload, s, preset->controllers.count);
  Recording recording;
  if (const std::string bad = start_recording(o, *preset, s, recording); !bad.empty()) return log_failure(bad, 2);
  auto telemetry = start_telemetry(*s.array, o.pace);
  if (!telemetry.is_ok()) return log_failure(telemetry.status().message());
  // Event streams: 16 at once, 4 per client address, each at most an hour (api/event_bus.h).
  api::EventBus event_bus(api::EventBusOptions{});
  // The Redfish EventService's subscriptions and streams (redfish/events.h).
  redfish::Events redfish_events;
  publish_events(*s.array, event_bus, redfish_events);

  serve::ModelThread model(*s.sim, sim::Pacer(o.pace == "none" ? sim::Pacer::Mode::kNone : sim::Pacer::Mode::kRealtime,
                                              o.speed.value_or(1.0)));
  model.start();

  auto auth = open_users(o.state);
  if (!auth.is_ok()) {
    model.stop();
    return log_failure("users: " + auth.status().message());
  }
  std::atomic<nbd::NbdServer*> nbd_for_metrics{nullptr};
  api::RestServerOptions api_options = rest_server_options(o, *listen, *tls, preset->name, telemetry->get(),
                                                           &event_bus, &nbd_for_metrics);
  api_options.auth = *auth;
  // Redfish / Swordfish at /redfish/v1 (docs/swordfish.md): the same front end, users and model.
  redfish::Service redfish_service(*s.array, model,
                                   redfish::ServiceOptions{preset->name, AFASIM_VERSION, api_options.auth, &redfish_events});
  api_options.extra_routes = redfish_service.routes();
  api_options.reshape_error = &redfish::Service::reshape_error;
  api::RestServer rest(*s.array, model, api_options);
  if (sim::Status st = rest.start(); !st.is_ok()) {
    model.stop();
    return log_failure("--listen " + o.listen + ": " + st.message());
  }
  nbd::NbdServer nbd(*s.array, model, nbd_server_options(o, nbd_listen, *tls));
  nbd_for_metrics = &nbd;
  if (sim::Status st = nbd.start(); !st.is_ok()) {
    rest.stop();
    model.stop();
    return log_failure(st.message());
  }
  log_listening(o, *preset, rest, nbd, nbd_listen);
  serve_until_signal(signals, s, model, rest, nbd, preset->name);
  s.array->set_event_listener(nullptr);
  telemetry->reset();
  return finish(s, recording);
}

}  // namespace

Runner add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "Run the array: ReST API (and NBD), state kept in SQLite");
  cmd->add_option("--system", o->system, "System preset")->capture_default_str();
  cmd->add_option("--listen", o->listen, "ReST API address HOST:PORT")->capture_default_str();
  cmd->add_option("--nbd-listen", o->nbd_listen, "NBD target address HOST:PORT, or none (then --nbd-socket is needed)")
      ->capture_default_str();
  cmd->add_option("--nbd-socket", o->nbd_socket, "Also serve NBD on this Unix socket");
  cmd->add_option("--state", o->state, "State directory (created if missing)")->capture_default_str();
  cmd->add_option("--pace", o->pace, "realtime: virtual time follows the wall clock; none: as fast as possible")
      ->check(CLI::IsMember({"realtime", "none"}))
      ->capture_default_str();
  cmd->add_option("--speed", o->speed, "Virtual seconds per wall second with --pace realtime (default 1)")
      ->check(finite_range_check(0.001, 1000.0));
  cmd->add_option("--destage-age", o->destage_age_s,
                  "Seconds dirty data may stay in the write cache below its low watermark before it is destaged; "
                  "0: until a FLUSH, a stop or more writes. With --pace none an idle spell runs the clock on, so "
                  "only 0 keeps dirty data for a power_loss (docs/write-cache.md)")
      ->check(finite_range_check(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Root seed of the model's random streams")
      ->check(seed_check())
      ->capture_default_str();
  cmd->add_option("--payload", o->payload, "Where volume data lives: file (in the state directory), memory, none")
      ->check(CLI::IsMember({"file", "memory", "none"}))
      ->capture_default_str();
  cmd->add_option("--config-dir", o->config_dir, "Read presets from this folder instead of the built-in ones");
  cmd->add_option("--allowed-hosts", o->allowed_hosts,
                  "Host names the API answers for besides IP addresses and localhost "
                  "(comma-separated; * for any). Others get 421: DNS rebinding")
      ->delimiter(',');
  cmd->add_option("--nbd-idle-timeout", o->nbd_idle_timeout_s,
                  "Seconds an NBD connection may sit with nothing in flight before it is closed")
      ->check(finite_range_check(1, 86400))
      ->capture_default_str();
  cmd->add_option("--nbd-handshake-timeout", o->nbd_handshake_timeout_s,
                  "Seconds an NBD client has to finish its handshake")
      ->check(finite_range_check(0.1, 3600))
      ->capture_default_str();
  cmd->add_option("--nbd-io-timeout", o->nbd_io_timeout_s,
                  "Seconds an NBD client has to send a WRITE's payload, and to take a batch of "
                  "replies, before its connection is closed")
      ->check(finite_range_check(0.1, 3600))
      ->capture_default_str();
  cmd->add_option("--nbd-max-connections-per-address", o->nbd_max_connections_per_address,
                  "NBD connections one client address may hold at once (of 64)")
      ->check(count_check(1, 64))
      ->capture_default_str();
  cmd->add_option("--tls", o->tls,
                  "self-signed: HTTPS and NBD TLS with a certificate made in the state directory")
      ->check(CLI::IsMember({"self-signed"}));
  cmd->add_option("--tls-cert", o->tls_cert, "HTTPS and NBD TLS certificate (PEM)")->check(CLI::ExistingFile);
  cmd->add_option("--tls-key", o->tls_key, "Its private key (PEM)")->check(CLI::ExistingFile);
  cmd->add_option("--nbd-tls", o->nbd_tls,
                  "With TLS: on (STARTTLS offered), require (plain clients refused), off")
      ->check(CLI::IsMember({"on", "require", "off"}))
      ->capture_default_str();
  cmd->add_option("--record", o->record,
                  "Record every request that enters the model to this file, for `afasim replay` "
                  "(needs a new --state directory)");
  cmd->add_option("--log-level", o->log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  return [o] { return run_serve(*o); };
}

}  // namespace afasim::app
