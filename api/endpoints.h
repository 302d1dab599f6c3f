// The endpoints of the ReST API v1: one handler per (method, path), and what they share.
//
// Internal to api/. A handler runs on an HTTP worker thread: it parses the request there,
// then does everything that reads or changes the Array inside ModelThread::call(). It
// returns a Reply or throws ApiError; RestServer writes either one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/problem.h"
#include "api/request.h"
#include "api/rest_record.h"
#include "api/view_cache.h"
#include "api/views.h"
#include "controller/array.h"
#include "controller/telemetry.h"
#include "http/message.h"
#include "serve/model_thread.h"


namespace afasim::api {

using Handler = std::function<Reply(const Call&)>;

struct Route {
  std::string method;
  std::string path;  // relative to kApiPrefix, "{id}" for an id segment
  Handler handler;
  // The least role that may call it (api/auth.h), or "public".
  std::string access;
  // Answers from a snapshot without blocking while it can (http/router.h never_blocks).
  bool never_blocks = false;
};

class Endpoints {
 public:
  // `telemetry` (may be null: no performance history, no alerts) is read on the model thread.
  Endpoints(controller::Array& array, serve::ModelThread& model, SystemIdentity identity,
            const controller::Telemetry* telemetry = nullptr);
  // Every route, in the order docs/api.md lists them.
  std::vector<Route> routes();

 private:
  // The view snapshot: get() on a worker, peek() on an I/O thread (NeedsWorker when a new
  // one must be taken).
  std::shared_ptr<const ViewSnapshot> snapshot(const Call& c) {
    if (c.http.may_block) return views_.get();
    if (auto s = views_.peek()) return s;
    throw http::NeedsWorker();
  }

  // Runs `fn` on the model thread on behalf of the caller (the events it causes name the
  // caller's user); rethrows its ApiError. Records the call when a session is recorded
  // (api/rest_record.h).
  // A change (any method but GET and HEAD) is refused with 503 while the array cannot take
  // it (mains off, booting: views.h management_unavailable) unless `even_offline`.
  template <typename F>
  auto on_model(const Call& c, F&& fn, bool even_offline = false) {
    const CallScope* scope = CallScope::current();
    return model_.call([this, &c, &fn, even_offline, scope] {
      const bool change = c.http.method != "GET" && c.http.method != "HEAD";
      if (change && !even_offline) {
        if (std::string why = management_unavailable(array_); !why.empty())
          throw ApiError(503, problem::kUnavailable, why);
      }
      // Before the answer leaves: the client's next GET must see its change.
      struct Invalidate {
        ViewCache& views;
        bool change;
        ~Invalidate() {
          if (change) views.invalidate();
        }
      } invalidate{views_, change};
      struct Actor {
        controller::Array& array;
        ~Actor() { array.set_actor(""); }
      } actor{array_};
      array_.set_actor(c.user());
      return recorded(scope, fn);
    });
  }

  Reply get_system(const Call& c);
  Reply get_scrub(const Call& c);
  Reply update_scrub(const Call& c);
  Reply list_controllers(const Call& c);
  Reply get_controller(const Call& c);
  Reply list_datapacs(const Call& c);
  Reply get_datapac(const Call& c);

  Reply list_pools(const Call& c);
  Reply create_pool(const Call& c);
  Reply get_pool(const Call& c);
  Reply update_pool(const Call& c);
  Reply delete_pool(const Call& c);

  Reply list_volumes(const Call& c);
  Reply create_volume(const Call& c);
  Reply get_volume(const Call& c);
  Reply update_volume(const Call& c);
  Reply delete_volume(const Call& c);

  Reply list_hosts(const Call& c);
  Reply create_host(const Call& c);
  Reply get_host(const Call& c);
  Reply update_host(const Call& c);
  Reply delete_host(const Call& c);

  Reply list_mappings(const Call& c);
  Reply create_mapping(const Call& c);
  Reply get_mapping(const Call& c);
  Reply delete_mapping(const Call& c);

  Reply list_qos_policies(const Call& c);
  Reply create_qos_policy(const Call& c);
  Reply get_qos_policy(const Call& c);
  Reply update_qos_policy(const Call& c);
  Reply delete_qos_policy(const Call& c);

  Reply list_events(const Call& c);
  Reply list_alerts(const Call& c);
  Reply performance(const Call& c, controller::PerfHistory::Kind kind, const std::string& what);
  Reply list_faults(const Call& c);
  Reply create_fault(const Call& c);
  Reply get_fault(const Call& c);
  Reply get_openapi(const Call& c);

  controller::Array& array_;
  serve::ModelThread& model_;
  SystemIdentity identity_;
  ViewCache views_;
  const controller::Telemetry* telemetry_;
};

}  // namespace afasim::api
