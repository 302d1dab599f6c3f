// api::RestServer — the ReST management API v1 of the simulated array (docs/api.md).
//
// Serves /api/v1/... through the HTTP front end (http/server.h: Boost.Beast on Asio, with
// its bounds against hostile clients); beside it GET /metrics (Prometheus text format,
// api/metrics.h), the event stream GET /api/v1/events/stream (Server-Sent Events,
// api/event_bus.h) and the manager page at /, all behind the same authentication. Handlers
// parse and check requests on a worker thread, then reach the Array only through
// serve::ModelThread::call(): nothing here touches the Array from a worker. Errors are
// application/problem+json (api/problem.h); one spdlog line per request.
//
// Thread-safety: construct, start(), stop() and destroy from one owning thread; port(),
// base_url() and routes() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/event_bus.h"
#include "api/metrics.h"
#include "controller/array.h"
#include "controller/telemetry.h"
#include "http/server.h"
#include "serve/model_thread.h"
#include "sim/status.h"


namespace afasim::api {

class Auth;

struct RestServerOptions {
  // The array's name in GET /system.
  std::string system_name = "afasim";
  // Users, roles and sessions (api/auth.h): every route but POST /sessions and the OpenAPI
  // document needs credentials. Null: no authentication at all (a warning is logged).
  std::shared_ptr<Auth> auth;
  // The HTTP front end: address, threads, limits and timeouts, TLS, allowed Host names, the
  // request log (http/server.h). Its logger, when null, is spdlog's default.
  http::ServerOptions http;
  // More routes on the same front end, behind the same authentication (each with its own
  // `access`): the Redfish service (redfish/service.h). Full paths.
  std::vector<http::Route> extra_routes;
  // Rewrites an error answer (400 or more: the guard's 401 and 403, the router's 404 and 405,
  // a route's) before it is sent (http::ServerOptions::reshape_error): another dialect on the
  // same port answers in its own error shape (the Redfish service:
  // redfish::Service::reshape_error). Null: problem+json for every path.
  std::function<void(const http::Request&, http::Response&)> reshape_error;
  // Performance history and alerts (GET .../performance, /alerts, the I/O families of
  // /metrics); read on the model thread. Null: none.
  const controller::Telemetry* telemetry = nullptr;
  // The events for GET /events/stream (the owner publishes the Array's events into it);
  // null: the stream answers 503. stop() closes its subscriptions. While the server runs, a
  // thread of its own calls its keep_alive() every `event_stream_keep_alive`.
  EventBus* events = nullptr;
  std::chrono::milliseconds event_stream_keep_alive{15'000};  // 10 ms..10 min
  // The NBD target's counters for /metrics, called on an HTTP worker; null: no NBD families.
  std::function<std::optional<NbdMetrics>()> nbd_metrics;
  // Serve the manager page (api/web/) at / (public: the page holds no data; it logs in
  // through POST /sessions before it reads anything).
  bool web = true;
};

// One route the server registers: `path` is relative to kApiPrefix, with "{id}" for an id
// segment, exactly as in the OpenAPI document's `paths`.
struct RouteInfo {
  std::string method;  // "GET", "POST", "PATCH", "DELETE"
  std::string path;    // "/volumes/{id}"
  std::string access;  // the least role that may call it, or "public" (api/auth.h)
};

inline constexpr const char* kApiPrefix = "/api/v1";

class RestServer {
 public:
  // REQUIRES: array and model outlive this object; array belongs to model's thread.
  // Throws std::invalid_argument if an option is out of its range (http::Server).
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
