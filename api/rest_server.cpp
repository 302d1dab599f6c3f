#include "api/rest_server.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "api/auth.h"
#include "api/auth_endpoints.h"
#include "api/endpoints.h"
#include "api/fields.h"
#include "api/observe.h"
#include "api/problem.h"
#include "api/web.h"
#include "http/server.h"

#ifndef AFASIM_VERSION
#define AFASIM_VERSION "unknown"
#endif

namespace afasim::api {
namespace {

using nlohmann::json;

// FNV-1a, 64 bits: a digest of a representation for its ETag (not a security property).
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string etag_for(std::uint64_t revision, const std::string& body) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "\"%llu-%016llx\"", static_cast<unsigned long long>(revision),
                static_cast<unsigned long long>(fnv1a(body)));
  return buf;
}

// If-None-Match: "*" or a list of entity tags, compared weakly (RFC 9110 13.1.2).
bool none_match_hits(const std::string& header, const std::string& etag) {
  if (header.find('*') != std::string::npos) return true;
  std::size_t i = 0;
  while ((i = header.find('"', i)) != std::string::npos) {
    const std::size_t close = header.find('"', i + 1);
    if (close == std::string::npos) break;
    if (header.compare(i, close - i + 1, etag) == 0) return true;
    i = close + 1;
  }
  return false;
}

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The event stream's path under kApiPrefix.
constexpr const char* kEventStreamPath = "/events/stream";

}  // namespace

class RestServer::Impl {
 public:
  Impl(controller::Array& array, serve::ModelThread& model, RestServerOptions options)
      : options_(std::move(options)),
        array_(array),
        model_(model),
        endpoints_(array, model, SystemIdentity{options_.system_name, AFASIM_VERSION}, options_.telemetry),
        routes_(endpoints_.routes()),
        logger_(options_.http.logger ? options_.http.logger : spdlog::default_logger()) {
    if (options_.auth) {
      auth_endpoints_ = std::make_unique<AuthEndpoints>(*options_.auth, array, model);
      for (Route& r : auth_endpoints_->routes()) routes_.push_back(std::move(r));
    }
    http::Router router;
    for (const Route& r : routes_) {
      router.add({r.method, std::string(kApiPrefix) + r.path,
                  [this, &r](http::Request& req) { return serve(r, req); }, r.access,
                  r.never_blocks});
    }
    add_observe_routes(router);
    for (const http::Route& r : options_.extra_routes) router.add(r);
    server_ = std::make_unique<http::Server>(http_options(), std::move(router));
    if (options_.auth) {
      server_->set_guard([auth = options_.auth](
                             http::Request& r, const http::Route& route, bool may_block, http::Response& deny) {
        const http::Verdict v = auth->guard(r, route, may_block, deny);
        // A script's request (the manager page sends X-Requested-With) gets only the Bearer
        // challenge: a Basic one would make the browser open its own login dialog over the
        // page's form.
        if (v == http::Verdict::kDeny && deny.status == 401 && r.has_header("X-Requested-With"))
          deny.headers.set("WWW-Authenticate", "Bearer realm=\"afasim\"");
        return v;
      });
    } else {
      logger_->warn("ReST API: authentication is off (no users); anyone who reaches the port "
                    "may change the array");
    }
  }

  sim::Status start(std::atomic<int>& port_out) {
    if (sim::Status st = server_->start(); !st.is_ok()) return st;
    port_out = server_->port();
    if (options_.events) start_keep_alive();
    logger_->info("ReST API v1 listening on {}{}", server_->base_url(), kApiPrefix);
    return sim::Status::ok();
  }

  void stop() {
    stop_keep_alive();
    // Streams end with their last chunk before the server closes the connections.
    if (options_.events) options_.events->close_all();
    server_->stop();
  }

  std::vector<RouteInfo> route_infos() const {
    std::vector<RouteInfo> out;
    for (const auto& r : routes_) out.push_back({r.method, r.path, r.access});
    out.push_back({"GET", kEventStreamPath, kMonitor});
    return out;
  }

  std::string base_url() const { return server_->base_url(); }

 private:
  http::ServerOptions http_options() const {
    http::ServerOptions o = options_.http;
    o.reshape_error = options_.reshape_error;
    o.logger = logger_;
    return o;
  }

  static http::Response problem(const ApiError& e, const std::string& path) {
    http::Response res = http::problem_response(e.status(), e.type(), e.detail(), path, e.extra());
    if (e.retry_after_s() > 0) res.headers.set("Retry-After", std::to_string(e.retry_after_s()));
    return res;
  }

  // One API request: the handler's Reply, or the problem document for what it threw.
  http::Response serve(const Route& route, http::Request& req) {
    try {
      const Call call{req, req.path_param("id")};
      const CallScope scope(route, call);  // recorded by on_model in a recorded session
      return to_response(req, route.handler(call));
    } catch (const ApiError& e) {
      return problem(e, req.path);
    } catch (const serve::ModelStopped&) {
      return problem(ApiError(503, problem::kUnavailable,
                              "the array model is stopped; the API cannot reach it"),
                     req.path);
    } catch (const std::exception& e) {
      logger_->error("{} {}: unexpected exception: {}", req.method, req.path, e.what());
      return problem(ApiError(500, problem::kInternal, "internal error"), req.path);
    }
  }

  // /metrics, the event stream and the manager page's files: the same front end, the same
  // guard. Reading metrics and events is a monitor's right; the page itself is public (it
  // holds no data and logs in before it reads any).
  void add_observe_routes(http::Router& router) {
    router.add({"GET", "/metrics", [this](http::Request& r) { return guarded(r, [&] { return serve_metrics(r); }); },
                kMonitor});
    router.add({"GET", std::string(kApiPrefix) + kEventStreamPath,
                [this](http::Request& r) { return guarded(r, [&] { return serve_event_stream(r); }); }, kMonitor});
    if (!options_.web) return;
    for (const auto& [path, body] : web_files()) {
      const auto file = find_web_file(path);
      const std::string url = path == "/index.html" ? "/" : path;
      router.add({"GET", url,
                  [file](http::Request&) {
                    http::Response res(200, std::string(file->body), file->content_type);
                    res.headers.set("Cache-Control", "no-cache");
                    return res;
                  },
                  kPublic, true});
    }
  }

  // Runs a handler outside the JSON routes, turning what it throws into a problem document.
  template <typename F>
  http::Response guarded(const http::Request& req, F&& fn) {
    try {
      return fn();
    } catch (const ApiError& e) {
      return problem(e, req.path);
    } catch (const serve::ModelStopped&) {
      return problem(ApiError(503, problem::kUnavailable, "the array model is stopped; the API cannot reach it"),
                     req.path);
    }
  }

  http::Response serve_metrics(const http::Request& req) {
    if (!req.params.empty() || !req.query.empty()) throw bad_request("/metrics takes no query parameters");
    MetricsContext context{options_.system_name, AFASIM_VERSION, std::nullopt};
    if (options_.nbd_metrics) context.nbd = options_.nbd_metrics();
    auto families = model_.call([&] { return collect_metrics(array_, options_.telemetry, context); });
    return http::Response(200, metrics_text(families), kMetricsContentType);
  }

  // GET /events/stream: the backlog after the cursor (Last-Event-ID or after=), then every
  // new event, as Server-Sent Events. Bounded by the EventBus (streams in all and per
  // address, a stream's age) and the front end (bytes waiting for a slow reader).
  http::Response serve_event_stream(const http::Request& req) {
    EventQuery q = parse_event_query(QueryParams(req.params.begin(), req.params.end()), true);
    // A reconnecting EventSource sends the id of the last event it saw.
    if (req.has_header("Last-Event-ID")) q.after = last_event_id(req.header("Last-Event-ID"));
    if (options_.events == nullptr) throw ApiError(503, problem::kUnavailable, "this server has no event stream");
    // The stream lasts while the credentials it was opened with hold (api::Auth::credential_check).
    std::function<bool()> authorized = options_.auth ? options_.auth->credential_check(req) : std::function<bool()>();
    // Subscribing and reading the backlog in one model-thread call: every event is in
    // exactly one of them (events are published on the model thread).
    std::shared_ptr<EventBus::Subscription> sub;
    std::vector<controller::Event> backlog;
    model_.call([&] {
      // A cursor past the newest event (another array's, or made up) hid every new event until
      // the ids caught up, with a 200 (hostile round 36): it stands for the newest.
      if (q.after) {
        const auto& recent = array_.recent_events();
        q.after = std::min<std::int64_t>(*q.after, recent.empty() ? 0 : recent.back().id);
      }
      sub = options_.events->subscribe(q, req.remote_address, std::move(authorized), req.principal.user);
      if (!sub || !q.after) return;
      for (const auto& e : array_.recent_events())
        if (e.id > *q.after && q.matches(e)) backlog.push_back(e);
    });
    if (!sub) {
      const EventBusOptions& o = options_.events->options();
      http::Response busy = problem(
          ApiError(503, problem::kUnavailable,
                   "too many event streams are open (" + std::to_string(o.max_subscribers) + " in all, " +
                       std::to_string(o.max_per_address) + " per client address, " + std::to_string(o.max_per_user) +
                       " per user); try again later"),
          req.path);
      busy.headers.set("Retry-After", "5");
      return busy;
    }
    http::Response res(200, "", "text/event-stream");
    res.headers.set("Cache-Control", "no-cache");
    res.headers.set("X-Accel-Buffering", "no");
    const std::int64_t after = q.after.value_or(0);
    // A quarter of the bytes a slow reader may leave waiting (1 MiB by default).
    const std::size_t backlog_max = options_.http.stream_buffer_max_bytes / 4;
    res.stream = [sub, backlog = std::move(backlog), after, backlog_max](std::shared_ptr<http::StreamSink> sink) {
      // retry: how long an EventSource waits before reconnecting, ms.
      std::string head = "retry: 2000\n\n";
      std::int64_t last = after;
      for (const auto& e : backlog) {
        // A backlog past the bound goes in pieces: this one, then the stream ends and the
        // client reconnects after its last id for the next. Whole, it was over the front end's
        // bound for a slow reader and refused before a byte went, on every reconnect
        // (hostile round 24: a cursor 17,000 events behind never caught up).
        if (head.size() >= backlog_max) {
          head += ": the backlog goes on: reconnect with Last-Event-ID " + std::to_string(last) + "\n\n";
          const bool written = sink->write(std::move(head));
          sub->close();  // the stream's slot first, then the connection
          if (written) sink->close();
          return;
        }
        head += sse_message(e);
        last = e.id;
      }
      if (!sink->write(std::move(head))) return sub->close();
      sub->attach(std::move(sink), last);
    };
    return res;
  }

  void start_keep_alive() {
    keep_alive_stop_ = false;
    keep_alive_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(keep_alive_mu_);
      while (!keep_alive_cv_.wait_for(lock, options_.event_stream_keep_alive, [this] { return keep_alive_stop_; }))
        options_.events->keep_alive();
    });
  }

  void stop_keep_alive() {
    if (!keep_alive_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(keep_alive_mu_);
      keep_alive_stop_ = true;
    }
    keep_alive_cv_.notify_all();
    keep_alive_.join();
  }

  // JSON bodies end with a newline: after `curl` the shell's prompt starts on its own line.
  static http::Response to_response(const http::Request& req, const Reply& r) {
    http::Response res;
    res.status = r.status;
    if (!r.location.empty()) res.headers.set("Location", r.location);
    if (!r.raw_body.empty()) {
      res.headers.set("Content-Type", http::kJson);
      res.body = r.raw_body;
      res.body += '\n';
      return res;
    }
    if (r.body.is_null()) return res;
    std::string body = dump(r.body);
    if (r.revision) {
      const std::string etag = etag_for(*r.revision, body);
      res.headers.set("ETag", etag);
      if (r.status == 200 && (req.method == "GET" || req.method == "HEAD") &&
          req.has_header("If-None-Match") &&
          none_match_hits(req.header("If-None-Match"), etag)) {
        res.status = 304;
        return res;
      }
    }
    res.headers.set("Content-Type", http::kJson);
    res.body = std::move(body);
    res.body += '\n';
    return res;
  }

  RestServerOptions options_;
  controller::Array& array_;
  serve::ModelThread& model_;
  Endpoints endpoints_;
  std::unique_ptr<AuthEndpoints> auth_endpoints_;
  std::vector<Route> routes_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<http::Server> server_;
  std::thread keep_alive_;  // EventBus::keep_alive every event_stream_keep_alive
  std::mutex keep_alive_mu_;
  std::condition_variable keep_alive_cv_;
  bool keep_alive_stop_ = false;
};

RestServer::RestServer(controller::Array& array, serve::ModelThread& model,
                       RestServerOptions options) {
  const auto period = options.event_stream_keep_alive;
  if (period < std::chrono::milliseconds(10) || period > std::chrono::minutes(10))
    throw std::invalid_argument("RestServerOptions: event_stream_keep_alive must be 10 ms..10 min");
  impl_ = std::make_unique<Impl>(array, model, std::move(options));
}

RestServer::~RestServer() {
  stop();
}

sim::Status RestServer::start() {
  return impl_->start(port_);
}

void RestServer::stop() {
  impl_->stop();
}

std::string RestServer::base_url() const {
  return impl_->base_url();
}

std::vector<RouteInfo> RestServer::routes() const {
  return impl_->route_infos();
}

}  // namespace afasim::api
