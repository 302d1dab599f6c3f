// http::Server — an HTTP/1.1 (and HTTPS) front end on Boost.Beast and the Asio event loop,
// built to stay up under hostile and careless clients (issue 14, docs/http-front-end.md).
//
// Threads. `io_threads` Asio threads accept connections and read and write every byte;
// a connection costs a coroutine and its buffers, never a thread, so slow or idle clients
// cannot starve the others. Handlers run on `worker_threads` threads (they may block on the
// model thread); routes marked never_blocks run on the I/O thread that read the request.
//
// Bounds (each says what happens at the bound):
// - connections: at most `max_connections` in all and `max_connections_per_address` from
//   one client address; one more is accepted and closed at once (counted, admitted
//   atomically under one lock), unless every slot is held and one that has made no
//   authenticated request, from an address that made none in the last day, can give its
//   slot: at once to a newcomer from an address that did, after `eviction_grace` and only
//   from a busier address to any other (serve/connection_slots.h).
// - a request, from its first byte to its last body byte: `request_timeout`; past it the
//   connection is closed. Between requests a kept-alive connection may be idle for
//   `idle_timeout`, then it is closed. A response must be taken by the client within
//   `write_timeout`.
// - header section: `header_max_bytes` (431, then close); body: `body_max_bytes`, for
//   Content-Length and chunked bodies alike (413, then close).
// - requests waiting for a worker: `worker_queue_max`; one more gets 503 with Retry-After.
// - a streamed response: `stream_buffer_max_bytes` waiting to be sent; past it the
//   connection is closed.
// Range headers are ignored (every response is whole); TCP_NODELAY is on, so a reply
// leaves at once. A Host header that names neither an IP literal, "localhost", nor one of
// `allowed_hosts` gets 421 (DNS rebinding). Every error is application/problem+json.
//
// Public methods are for the owning thread; port() and stats() are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "http/message.h"
#include "http/router.h"
#include "sim/status.h"

namespace boost::asio::ssl {
class context;
}
namespace spdlog {
class logger;
}

namespace afasim::http {

struct ServerOptions {
  // Address to listen on; "0.0.0.0" or "::" for every interface. Port 0 picks a free port.
  std::string host = "127.0.0.1";
  int port = 8080;
  int io_threads = 2;                                  // 1..64
  int worker_threads = 8;                              // 1..256
  int worker_queue_max = 1024;                         // 1..65536
  int max_connections = 1024;                          // 1..65536
  int max_connections_per_address = 64;                // 1..max_connections
  std::size_t header_max_bytes = 16 << 10;             // 1 KiB..1 MiB
  std::size_t body_max_bytes = 1 << 20;                // 1 KiB..64 MiB
  std::chrono::milliseconds request_timeout{10'000};   // 100 ms..10 min
  std::chrono::milliseconds idle_timeout{5'000};       // 100 ms..10 min
  std::chrono::milliseconds write_timeout{30'000};     // 100 ms..10 min
  // When every slot is held, a connection that has made no authenticated request may be
  // closed for a newcomer once it is this old, 0..1 h (serve/connection_slots.h).
  std::chrono::milliseconds eviction_grace{2'000};
  std::size_t stream_buffer_max_bytes = 4 << 20;       // 64 KiB..1 GiB
  // Host header values (a name, without port) accepted besides IP literals and
  // "localhost"; "*" accepts any.
  std::vector<std::string> allowed_hosts;
  // HTTPS when set (OpenSSL through Boost.Asio): every connection is TLS.
  std::shared_ptr<boost::asio::ssl::context> tls;
  // Request log lines go here (one per request, at info); null = spdlog's default.
  std::shared_ptr<spdlog::logger> logger;
  // Called with every answer of 400 or more to a request that was read (a route's, the
  // guard's, the router's 404 and 405, a precheck's 400 or 421), before it is written: a front
  // end with its own error format rewrites its paths' (redfish::Service::reshape_error). Null:
  // as they are. Must not throw.
  std::function<void(const Request&, Response&)> reshape_error;
};

// What the guard (authentication and authorization) decides before a handler runs.
enum class Verdict {
  kAllow,        // run the handler
  kDeny,         // send `deny` instead
  kNeedsWorker,  // cannot decide without blocking: ask again on a worker thread
};
// Called before every routed request with the route it matched; `may_block` is false on an
// I/O thread. May fill r.principal. Must not throw.
using Guard = std::function<Verdict(Request& r, const Route& route, bool may_block,
                                    Response& deny)>;

// Counters since start(); read from any thread.
struct ServerStats {
  std::int64_t connections_accepted = 0;
  std::int64_t connections_refused = 0;  // over max_connections or the per-address cap
  std::int64_t connections_evicted = 0;  // closed, never authenticated, for a newcomer
  std::int64_t connections_active = 0;    // open now; one evicted counts until it is closed
  std::int64_t requests = 0;
  std::int64_t requests_timed_out = 0;   // closed mid-request by request_timeout
  std::int64_t requests_refused = 0;     // 400, 413, 421, 431 and 503 busy
};

class Server {
 public:
  // Throws std::invalid_argument if an option is out of its range.
  Server(ServerOptions options, Router router);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // REQUIRES: before start().
  void set_guard(Guard guard);

  // Binds and starts the threads; returns once listening. kUnavailable when the address
  // cannot be bound; kConflict when already started.
  sim::Status start();
  // Stops accepting, closes every connection, waits for running handlers, joins the
  // threads. Idempotent.
  void stop();

  int port() const;
  // "http://HOST:PORT" or "https://HOST:PORT".
  std::string base_url() const;
  const Router& router() const;
  ServerStats stats() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// True when `host_header` (a Host field value: "name", "name:port", "[v6]:port") may be
// served: an IP literal, "localhost", or a name in `allowed` (case-insensitive; "*" = any).
bool host_allowed(std::string_view host_header, const std::vector<std::string>& allowed);

}  // namespace afasim::http
