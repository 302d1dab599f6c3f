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

#include "api/rest_record.h"
#include "api/views.h"
#include "controller/array.h"
#include "controller/telemetry.h"
#include "serve/model_thread.h"

namespace httplib {
struct Request;
}

namespace afasim::api {

// If-Match, parsed: absent, "*", or the revisions the listed ETags name.
struct Precondition {
  bool present = false;
  bool any = false;
  std::vector<std::uint64_t> revisions;
};

struct Call {
  const httplib::Request& http;
  std::string id_segment;  // the "{id}" part of the path, unparsed ("" when none)
};

struct Reply {
  Reply(int status_in, nlohmann::json body_in, std::optional<std::uint64_t> revision_in = {})
      : status(status_in), body(std::move(body_in)), revision(revision_in) {}
  int status = 200;
  nlohmann::json body;                    // null: no body (204)
  std::optional<std::uint64_t> revision;  // sets the ETag
  std::string location;                   // for 201
};

using Handler = std::function<Reply(const Call&)>;

struct Route {
  std::string method;
  std::string path;  // relative to kApiPrefix, "{id}" for an id segment
  Handler handler;
};

class Endpoints {
 public:
  // `telemetry` (may be null: no performance history, no alerts) is read on the model thread.
  Endpoints(controller::Array& array, serve::ModelThread& model, SystemIdentity identity,
            const controller::Telemetry* telemetry = nullptr);
  // Every route, in the order docs/api.md lists them.
  std::vector<Route> routes();

 private:
  // Runs `fn` on the model thread; rethrows its ApiError. Records the call when a session
  // is recorded (api/rest_record.h).
  template <typename F>
  auto on_model(F&& fn) {
    const CallScope* scope = CallScope::current();
    return model_.call([&fn, scope] { return recorded(scope, fn); });
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
  const controller::Telemetry* telemetry_;
};

}  // namespace afasim::api
