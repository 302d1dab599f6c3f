#include "api/rest_server.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "api/auth.h"
#include "api/auth_endpoints.h"
#include "api/endpoints.h"
#include "api/problem.h"
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

}  // namespace

class RestServer::Impl {
 public:
  Impl(controller::Array& array, serve::ModelThread& model, RestServerOptions options)
      : options_(std::move(options)),
        endpoints_(array, model, SystemIdentity{options_.system_name, AFASIM_VERSION}),
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
    for (const http::Route& r : options_.extra_routes) router.add(r);
    server_ = std::make_unique<http::Server>(http_options(), std::move(router));
    if (options_.auth) {
      server_->set_guard([auth = options_.auth](http::Request& r, const http::Route& route,
                                                bool may_block, http::Response& deny) {
        return auth->guard(r, route, may_block, deny);
      });
    } else {
      logger_->warn("ReST API: authentication is off (no users); anyone who reaches the port "
                    "may change the array");
    }
  }

  sim::Status start(std::atomic<int>& port_out) {
    if (sim::Status st = server_->start(); !st.is_ok()) return st;
    port_out = server_->port();
    logger_->info("ReST API v1 listening on {}{}", server_->base_url(), kApiPrefix);
    return sim::Status::ok();
  }

  void stop() { server_->stop(); }

  std::vector<RouteInfo> route_infos() const {
    std::vector<RouteInfo> out;
    for (const auto& r : routes_) out.push_back({r.method, r.path, r.access});
    return out;
  }

  std::string base_url() const { return server_->base_url(); }

 private:
  http::ServerOptions http_options() const {
    http::ServerOptions o = options_.http;
    o.logger = logger_;
    return o;
  }

  static http::Response problem(const ApiError& e, const std::string& path) {
    return http::problem_response(e.status(), e.type(), e.detail(), path, e.extra());
  }

  // One API request: the handler's Reply, or the problem document for what it threw.
  http::Response serve(const Route& route, http::Request& req) {
    try {
      return to_response(req, route.handler(Call{req, req.path_param("id")}));
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

  static http::Response to_response(const http::Request& req, const Reply& r) {
    http::Response res;
    res.status = r.status;
    if (!r.location.empty()) res.headers.set("Location", r.location);
    if (!r.raw_body.empty()) {
      res.headers.set("Content-Type", http::kJson);
      res.body = r.raw_body;
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
    return res;
  }

  RestServerOptions options_;
  Endpoints endpoints_;
  std::unique_ptr<AuthEndpoints> auth_endpoints_;
  std::vector<Route> routes_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<http::Server> server_;
};

RestServer::RestServer(controller::Array& array, serve::ModelThread& model,
                       RestServerOptions options) {
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
