#include "api/rest_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <stdexcept>

#include "api/endpoints.h"
#include "api/fields.h"
#include "api/observe.h"
#include "api/problem.h"
#include "api/web.h"

#ifndef AFASIM_VERSION
#define AFASIM_VERSION "unknown"
#endif

namespace afasim::api {
namespace {

using nlohmann::json;

// httplib's own pool has an unbounded queue; this one holds at most `max_queued` accepted
// connections. At the bound, enqueue() (called by the listener thread) waits, so the
// listener stops accepting and new connections wait in the kernel's backlog.
class BoundedThreadPool : public httplib::TaskQueue {
 public:
  BoundedThreadPool(std::size_t threads, std::size_t max_queued) : max_queued_(max_queued) {
    for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~BoundedThreadPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    space_.wait(lock, [this] { return jobs_.size() < max_queued_ || shutdown_; });
    // After shutdown the job still runs: it owns an accepted socket that it must close.
    jobs_.push_back(std::move(fn));
    lock.unlock();
    ready_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (shutdown_ && workers_.empty()) return;
      shutdown_ = true;
    }
    ready_.notify_all();
    space_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // shut down and drained
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      space_.notify_one();
      fn();
    }
  }

  const std::size_t max_queued_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::condition_variable space_;
  std::deque<std::function<void()>> jobs_;
  bool shutdown_ = false;
  std::vector<std::thread> workers_;
};

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    const std::size_t j = path.find('/', i);
    out.push_back(path.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j;
  }
  return out;
}

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

// The start of the request this worker thread is serving, for the log line. Set by the
// pre-routing handler; requests httplib refuses before routing log no duration.
thread_local std::optional<std::chrono::steady_clock::time_point> request_start;

}  // namespace

class RestServer::Impl {
 public:
  Impl(controller::Array& array, serve::ModelThread& model, RestServerOptions options)
      : options_(std::move(options)),
        array_(array),
        model_(model),
        endpoints_(array, model, SystemIdentity{options_.system_name, AFASIM_VERSION}, options_.telemetry),
        routes_(endpoints_.routes()),
        logger_(options_.logger ? options_.logger : spdlog::default_logger()) {
    for (auto& r : routes_) segments_.push_back(split_path(r.path));
    configure();
  }

  sim::Status start(std::atomic<int>& port_out) {
    if (listener_.joinable()) return sim::conflict("the ReST server is already started");
    int port = options_.port;
    if (port == 0) {
      port = server_.bind_to_any_port(options_.host);
      if (port <= 0) port = -1;
    } else if (!server_.bind_to_port(options_.host, port)) {
      port = -1;
    }
    if (port < 0) {
      return sim::unavailable("cannot listen on " + options_.host + ":" +
                              std::to_string(options_.port) +
                              " (address in use, or not an address of this machine)");
    }
    port_out = port;
    listen_returned_ = false;
    listener_ = std::thread([this] {
      server_.listen_after_bind();
      listen_returned_ = true;
    });
    // stop() only reaches a server that is running: wait for the listener to get there.
    while (!server_.is_running() && !listen_returned_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    logger_->info("ReST API v1 listening on http://{}:{}{}", options_.host, port, kApiPrefix);
    return sim::Status::ok();
  }

  void stop() {
    if (!listener_.joinable()) return;
    // Event streams hold workers until their subscription ends.
    if (options_.events) options_.events->close_all();
    server_.stop();
    listener_.join();
  }

  std::vector<RouteInfo> route_infos() const {
    std::vector<RouteInfo> out;
    for (const auto& r : routes_) out.push_back({r.method, r.path});
    out.push_back({"GET", kEventStreamPath});
    return out;
  }

  const RestServerOptions& options() const { return options_; }

 private:
  void configure() {
    const std::size_t threads = options_.worker_threads;
    const std::size_t queued = options_.max_queued_connections;
    server_.new_task_queue = [threads, queued] { return new BoundedThreadPool(threads, queued); };
    server_.set_payload_max_length(options_.payload_max_bytes);
    // httplib's default also sets SO_REUSEPORT, which lets a second server bind the same
    // port and silently share its connections. SO_REUSEADDR alone: restart without waiting
    // out TIME_WAIT, but a port in use is an error.
    server_.set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    // A client that asks before sending (Expect: 100-continue) learns at once that its
    // body is too large, instead of after uploading it.
    const std::size_t max_bytes = options_.payload_max_bytes;
    server_.set_expect_100_continue_handler(
        [max_bytes](const httplib::Request& req, httplib::Response& res) {
          const std::string length = req.get_header_value("Content-Length");
          if (!length.empty() && std::strtoull(length.c_str(), nullptr, 10) > max_bytes) {
            res.status = 413;
            return 413;
          }
          return 100;
        });
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      dispatch(req, res);
    };
    // One catch-all per method: routing, 404 and 405 are ours, so that every answer is a
    // problem document and 405 carries Allow.
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    server_.Put(".*", handler);
    server_.Patch(".*", handler);
    server_.Delete(".*", handler);
    server_.Options(".*", handler);
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      request_start = std::chrono::steady_clock::now();
      // A request with neither Content-Length nor chunked Transfer-Encoding has no body
      // (RFC 9112 6.3), but httplib 0.11 reads a POST/PUT/PATCH body until the connection
      // closes, stalling `curl -X POST` for the read timeout. Serve those here, bodiless.
      const bool body_expected =
          req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
      if (body_expected && !req.has_header("Content-Length") &&
          !req.has_header("Transfer-Encoding")) {
        dispatch(req, res);
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // httplib's own refusals (413 body too large, 400 unparseable request, 414 URI too
    // long) arrive here with no body: give them a problem document too.
    server_.set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          const char* type = res.status == 413   ? problem::kPayloadTooLarge
                             : res.status >= 500 ? problem::kInternal
                                                 : problem::kBadRequest;
          std::string detail;
          switch (res.status) {
            case 413:
              detail = "the request body is too large";
              break;
            case 414:
              detail = "the request target is too long";
              break;
            case 431:
              detail = "the request headers are too large";
              break;
            default:
              detail = "the request could not be processed as HTTP/1.1";
              break;
          }
          write_problem(res, ApiError(res.status, type, detail), req.path);
          return httplib::Server::HandlerResponse::Handled;
        }));
    server_.set_exception_handler(
        [this](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
          // dispatch() catches everything; this is the backstop.
          write_problem(res, ApiError(500, problem::kInternal, "internal error"), req.path);
        });
    server_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      if (request_start) {
        const double ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - *request_start)
                              .count();
        logger_->info("{} {} {} {:.3f} ms", req.method, req.path, res.status, ms);
        request_start.reset();
      } else {
        logger_->info("{} {} {} - ms", req.method, req.path, res.status);
      }
    });
  }

  static void write_problem(httplib::Response& res, const ApiError& e, const std::string& path) {
    res.status = e.status();
    res.set_content(dump(e.to_json(path)), "application/problem+json");
  }

  void dispatch(const httplib::Request& req, httplib::Response& res) {
    try {
      route(req, res);
    } catch (const ApiError& e) {
      write_problem(res, e, req.path);
    } catch (const serve::ModelStopped&) {
      write_problem(res,
                    ApiError(503, problem::kUnavailable,
                             "the array model is stopped; the API cannot reach it"),
                    req.path);
    } catch (const std::exception& e) {
      logger_->error("{} {}: unexpected exception: {}", req.method, req.path, e.what());
      write_problem(res, ApiError(500, problem::kInternal, "internal error"), req.path);
    }
  }

  // The routes outside the JSON handlers: /metrics, the event stream, the manager page.
  // True when `req` was one of them.
  bool route_special(const httplib::Request& req, httplib::Response& res, const std::string& path) {
    const bool get = req.method == "GET" || req.method == "HEAD";
    const bool metrics = path == "/metrics";
    const bool stream = path == std::string(kApiPrefix) + kEventStreamPath;
    const auto web = options_.web && path.compare(0, 4, "/api") != 0 ? find_web_file(req.path) : std::nullopt;
    if (!metrics && !stream && !web) return false;
    if (!get) {
      res.set_header("Allow", "GET, HEAD");
      throw ApiError(405, problem::kMethodNotAllowed, req.method + " is not allowed on " + path + "; allowed: GET, HEAD");
    }
    if (metrics) serve_metrics(req, res);
    else if (stream) serve_event_stream(req, res);
    else {
      // The page is the same whatever the query (a query is ignored).
      res.set_header("Cache-Control", "no-cache");
      res.set_content(std::string(web->body), web->content_type);
    }
    return true;
  }

  void serve_metrics(const httplib::Request& req, httplib::Response& res) {
    if (!req.params.empty()) throw bad_request("/metrics takes no query parameters");
    MetricsContext context{options_.system_name, AFASIM_VERSION, std::nullopt};
    if (options_.nbd_metrics) context.nbd = options_.nbd_metrics();
    auto families = model_.call([&] { return collect_metrics(array_, options_.telemetry, context); });
    res.set_content(metrics_text(families), kMetricsContentType);
  }

  void serve_event_stream(const httplib::Request& req, httplib::Response& res) {
    EventQuery q = parse_event_query(QueryParams(req.params.begin(), req.params.end()), true);
    // A reconnecting EventSource sends the id of the last event it saw.
    if (req.has_header("Last-Event-ID")) {
      const std::string v = req.get_header_value("Last-Event-ID");
      q.after = parse_query_integer("Last-Event-ID", v, 0, INT64_MAX);
    }
    if (options_.events == nullptr) throw ApiError(503, problem::kUnavailable, "this server has no event stream");
    auto sub = options_.events->subscribe(q);
    if (!sub) throw ApiError(503, problem::kUnavailable, "too many event streams are open; try again later");
    // Subscribed first, then the backlog read: an event committed in between is in both and
    // is sent once (ids only grow).
    std::vector<controller::Event> backlog;
    if (q.after) {
      backlog = model_.call([&] {
        std::vector<controller::Event> out;
        for (const auto& e : array_.recent_events())
          if (q.matches(e)) out.push_back(e);
        return out;
      });
    }
    auto last_id = std::make_shared<std::int64_t>(q.after.value_or(0));
    auto pending = std::make_shared<std::vector<controller::Event>>(std::move(backlog));
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream",
        [sub, last_id, pending](std::size_t, httplib::DataSink& sink) {
          auto send = [&](const std::string& text) { return sink.write(text.data(), text.size()); };
          if (!pending->empty()) {
            // retry: how long an EventSource waits before reconnecting, ms.
            if (!send("retry: 2000\n\n")) return false;
            for (const auto& e : *pending) {
              if (!send(sse_message(e))) return false;
              *last_id = e.id;
            }
            pending->clear();
            return true;
          }
          const auto e = sub->next(std::chrono::seconds(15));
          if (e) {
            if (e->id <= *last_id) return true;
            *last_id = e->id;
            return send(sse_message(*e));
          }
          if (sub->closed()) {
            sink.done();
            return true;
          }
          return send(": keep-alive\n\n");  // a comment: lets a gone client be noticed
        },
        [sub](bool) { sub->close(); });
  }

  void route(const httplib::Request& req, httplib::Response& res) {
    const std::string prefix = kApiPrefix;
    std::string path = req.path;
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    if (route_special(req, res, path)) return;
    if (path.compare(0, prefix.size(), prefix) != 0 ||
        (path.size() > prefix.size() && path[prefix.size()] != '/')) {
      throw not_found("no resource at " + path + "; the API lives under " + prefix);
    }
    const std::vector<std::string> segs = split_path(path.substr(prefix.size()));
    const std::string method = req.method == "HEAD" ? "GET" : req.method;
    std::vector<std::string> allowed;
    for (std::size_t i = 0; i < routes_.size(); ++i) {
      std::string id;
      if (!match(segments_[i], segs, id)) continue;
      if (routes_[i].method == method) {
        const Call call{req, id};
        const CallScope scope(routes_[i], call);  // recorded by on_model in a recorded session
        write_reply(req, res, routes_[i].handler(call));
        return;
      }
      allowed.push_back(routes_[i].method);
    }
    if (allowed.empty()) throw not_found("no resource at " + path);
    std::string allow;
    for (const auto& m : allowed) {
      allow += (allow.empty() ? "" : ", ") + m;
      if (m == "GET") allow += ", HEAD";
    }
    allow += ", OPTIONS";
    res.set_header("Allow", allow);
    if (req.method == "OPTIONS") {
      res.status = 204;
      return;
    }
    throw ApiError(405, problem::kMethodNotAllowed,
                   req.method + " is not allowed on " + path + "; allowed: " + allow);
  }

  static bool match(const std::vector<std::string>& pattern, const std::vector<std::string>& segs,
                    std::string& id) {
    if (pattern.size() != segs.size()) return false;
    for (std::size_t i = 0; i < segs.size(); ++i) {
      if (pattern[i] == "{id}") {
        id = segs[i];
      } else if (pattern[i] != segs[i]) {
        return false;
      }
    }
    return true;
  }

  static void write_reply(const httplib::Request& req, httplib::Response& res, const Reply& r) {
    res.status = r.status;
    if (!r.location.empty()) res.set_header("Location", r.location);
    if (r.body.is_null()) return;
    std::string body = dump(r.body);
    if (r.revision) {
      const std::string etag = etag_for(*r.revision, body);
      res.set_header("ETag", etag);
      if (r.status == 200 && (req.method == "GET" || req.method == "HEAD") &&
          req.has_header("If-None-Match") &&
          none_match_hits(req.get_header_value("If-None-Match"), etag)) {
        res.status = 304;
        return;
      }
    }
    res.set_content(body, "application/json");
  }

  RestServerOptions options_;
  controller::Array& array_;
  serve::ModelThread& model_;
  Endpoints endpoints_;
  std::vector<Route> routes_;
  std::vector<std::vector<std::string>> segments_;
  std::shared_ptr<spdlog::logger> logger_;
  httplib::Server server_;
  std::thread listener_;
  std::atomic<bool> listen_returned_{false};
};

namespace {
void check_options(const RestServerOptions& o) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("RestServerOptions: " + m); };
  if (o.port < 0 || o.port > 65535) fail("port must be 0..65535, got " + std::to_string(o.port));
  if (o.host.empty()) fail("host is empty");
  if (o.worker_threads < 1 || o.worker_threads > 256) fail("worker_threads must be 1..256");
  if (o.max_queued_connections < 1 || o.max_queued_connections > 65536)
    fail("max_queued_connections must be 1..65536");
  if (o.payload_max_bytes < 1024 || o.payload_max_bytes > (64u << 20))
    fail("payload_max_bytes must be 1 KiB..64 MiB");
}
}  // namespace

RestServer::RestServer(controller::Array& array, serve::ModelThread& model,
                       RestServerOptions options) {
  check_options(options);
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
  return "http://" + impl_->options().host + ":" + std::to_string(port());
}

std::vector<RouteInfo> RestServer::routes() const {
  return impl_->route_infos();
}

}  // namespace afasim::api
