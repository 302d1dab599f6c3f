// api::RestServer — the ReST management API v1 of the simulated array (docs/api.md).
//
// Serves /api/v1/... over HTTP (cpp-httplib) on its own listener thread and a bounded pool
// of worker threads; beside it GET /metrics (Prometheus text format, api/metrics.h), the
// event stream GET /api/v1/events/stream (Server-Sent Events) and the manager page at /. Handlers parse and check requests on the worker thread, then reach the
// Array only through serve::ModelThread::call(): nothing here touches the Array from a
// worker. Errors are application/problem+json (api/problem.h); one spdlog line per request.
//
// Thread-safety: construct, start(), stop() and destroy from one owning thread; port(),
// base_url() and routes() may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/event_bus.h"
#include "api/metrics.h"
#include "controller/array.h"
#include "controller/telemetry.h"
#include "serve/model_thread.h"
#include "sim/status.h"

namespace spdlog {
class logger;
}
namespace httplib {
class Server;
}

namespace afasim::api {

struct RestServerOptions {
  // Address to listen on. "127.0.0.1" keeps the API local; "0.0.0.0" for every interface.
  std::string host = "127.0.0.1";
  // TCP port; 0 = any free port (port() tells which). Range 0..65535.
  int port = 8080;
  // The array's name in GET /system.
  std::string system_name = "afasim";
  // Worker threads serving connections, 1..256.
  std::size_t worker_threads = 8;
  // Accepted connections waiting for a worker, 1..65536. At the bound the listener stops
  // accepting until a worker is free (the kernel's backlog then holds new connections).
  std::size_t max_queued_connections = 256;
  // Largest request body in bytes, 1 KiB..64 MiB; a larger one gets 413.
  std::size_t payload_max_bytes = 1 << 20;
  // Where the per-request lines go; null = spdlog's default logger.
  std::shared_ptr<spdlog::logger> logger;
  // Performance history and alerts (GET .../performance, /alerts, the I/O families of
  // /metrics); read on the model thread. Null: none.
  const controller::Telemetry* telemetry = nullptr;
  // The events for GET /events/stream (the owner publishes the Array's events into it);
  // null: the stream answers 503. stop() closes its subscriptions.
  EventBus* events = nullptr;
  // The NBD target's counters for /metrics, called on an HTTP worker; null: no NBD families.
  std::function<std::optional<NbdMetrics>()> nbd_metrics;
  // Serve the manager page (api/web/) at /.
  bool web = true;
};

// One route the server registers: `path` is relative to kApiPrefix, with "{id}" for an id
// segment, exactly as in the OpenAPI document's `paths`.
struct RouteInfo {
  std::string method;  // "GET", "POST", "PATCH", "DELETE"
  std::string path;    // "/volumes/{id}"
};

inline constexpr const char* kApiPrefix = "/api/v1";

class RestServer {
 public:
  // REQUIRES: array and model outlive this object; array belongs to model's thread.
  // Throws std::invalid_argument if an option is out of its range.
  RestServer(controller::Array& array, serve::ModelThread& model, RestServerOptions options = {});
  ~RestServer();  // stop()s
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  // Binds host:port and starts listening on a thread of its own; returns once bound.
  // kUnavailable if the address cannot be bound; kConflict if already started.
  sim::Status start();
  // Stops listening, finishes the requests in progress and joins the threads. Idempotent.
  void stop();

  // The bound port (meaningful after a successful start()).
  int port() const { return port_.load(); }
  // "http://HOST:PORT" (after start()).
  std::string base_url() const;
  // Every (method, path) this server serves, in registration order.
  std::vector<RouteInfo> routes() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<int> port_{0};
};

// The OpenAPI 3 document (api/openapi.json, embedded at build time), as served by
// GET /api/v1/openapi.json.
const std::string& openapi_document();

}  // namespace afasim::api
