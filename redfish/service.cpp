#include "redfish/service.h"

#include <cstdio>
#include <functional>

#include "api/views.h"
#include "config/file_text.h"
#include "redfish/accounts.h"
#include "redfish/internal.h"
#include "redfish/query.h"
#include "redfish/record.h"

namespace afasim::redfish {

// ---- the service -------------------------------------------------------------------------

namespace {

// Every type the service serves, with its namespace's version and where DMTF publishes its
// CSDL (Swordfish's types live under /schemas/swordfish/v1/).
struct ServedType {
  const char* name;
  const char* version;  // "" for a collection (unversioned namespace)
  bool swordfish;
};
constexpr ServedType kServedTypes[] = {
    {"ServiceRoot", "v1_20_0", false}, {"ComputerSystemCollection", "", false}, {"ComputerSystem", "v1_27_0", false},
    {"StorageCollection", "", false}, {"Storage", "v1_21_0", false}, {"SimpleStorageCollection", "", false},
    {"SimpleStorage", "v1_3_2", false}, {"ChassisCollection", "", false},
    {"Chassis", "v1_28_0", false}, {"DriveCollection", "", false}, {"Drive", "v1_22_0", false},
    {"PowerSubsystem", "v1_1_3", false}, {"BatteryCollection", "", false}, {"Battery", "v1_5_0", false},
    {"ManagerCollection", "", false}, {"Manager", "v1_24_0", false}, {"StoragePoolCollection", "", true},
    {"StoragePool", "v1_7_0", true}, {"Capacity", "v1_2_0", true}, {"VolumeCollection", "", true},
    {"Volume", "v1_10_2", true}, {"EndpointGroupCollection", "", false}, {"EndpointGroup", "v1_3_4", false},
    {"EndpointCollection", "", false}, {"Endpoint", "v1_8_2", false}, {"ConnectionCollection", "", false},
    {"Connection", "v1_4_0", false}, {"SessionService", "v1_2_0", false}, {"SessionCollection", "", false},
    {"Session", "v1_8_0", false}, {"AccountService", "v1_18_1", false}, {"ManagerAccountCollection", "", false},
    {"ManagerAccount", "v1_14_1", false}, {"RoleCollection", "", false}, {"Role", "v1_3_3", false},
    {"Message", "v1_3_0", false}, {"Resource", "v1_23_0", false}, {"EventService", "v1_12_0", false},
    {"EventDestinationCollection", "", false}, {"EventDestination", "v1_16_0", false}, {"Event", "v1_13_0", false},
    {"TaskService", "v1_3_0", false}, {"TaskCollection", "", false}, {"Task", "v1_7_4", false},
};

std::string metadata_document() {
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<edmx:Edmx xmlns:edmx=\"http://docs.oasis-open.org/odata/ns/edmx\" Version=\"4.0\">\n";
  for (const ServedType& t : kServedTypes) {
    x += std::string("  <edmx:Reference Uri=\"http://redfish.dmtf.org/schemas/") + (t.swordfish ? "swordfish/" : "") + "v1/" +
         t.name + (t.version[0] ? "_v1" : "") + ".xml\">\n    <edmx:Include Namespace=\"" + t.name + "\"/>\n";
    if (t.version[0]) x += std::string("    <edmx:Include Namespace=\"") + t.name + "." + t.version + "\"/>\n";
    x += "  </edmx:Reference>\n";
  }
  x += "  <edmx:DataServices>\n"
       "    <Schema xmlns=\"http://docs.oasis-open.org/odata/ns/edm\" Namespace=\"Service\">\n"
       "      <EntityContainer Name=\"Service\" Extends=\"ServiceRoot.v1_20_0.ServiceContainer\"/>\n"
       "    </Schema>\n  </edmx:DataServices>\n</edmx:Edmx>\n";
  return x;
}

json odata_document(bool sessions, bool events) {
  json value = json::array();
  auto add = [&](const char* name, const std::string& url) {
    value.push_back({{"name", name}, {"kind", "Singleton"}, {"url", url}});
  };
  add("Service", uri("/"));
  add("Systems", uri("/Systems"));
  add("Chassis", uri("/Chassis"));
  add("Managers", uri("/Managers"));
  add("Storage", uri("/Storage"));
  if (events) add("EventService", uri("/EventService"));
  if (events) add("TaskService", uri("/TaskService"));
  if (sessions) {
    add("SessionService", uri("/SessionService"));
    add("AccountService", uri("/AccountService"));
    add("Sessions", uri("/SessionService/Sessions"));
  }
  return {{"@odata.context", uri("/$metadata")}, {"value", value}};
}

}  // namespace

struct Service::Impl {
  controller::Array& array;
  serve::ModelThread& model;
  ServiceOptions options;
  Identity identity;
  std::unique_ptr<Accounts> accounts;

  // Runs a handler, turning what it throws into Redfish's error shape.
  template <typename F>
  http::Response guarded(F&& fn) {
    try {
      return fn();
    } catch (const RedfishError& e) {
      http::Response res = json_response(e.status, error_body(e));
      if (e.retry_after_s || e.status == 503)
        res.headers.set("Retry-After", std::to_string(e.retry_after_s.value_or(5)));
      return res;
    } catch (const serve::ModelStopped&) {
      return json_response(503, error_body(RedfishError(503, "ServiceTemporarilyUnavailable",
                                                        "The array model is stopped; the service cannot reach it.")));
    } catch (const std::exception& e) {
      return json_response(500, error_body(RedfishError(500, "InternalError", std::string("Internal error: ") + e.what())));
    }
  }

  static void no_query(const http::Request& r) {
    if (!r.query.empty())
      throw RedfishError(400, "QueryNotSupported",
                         "Querying is not supported by the implementation (" + r.query.substr(0, 80) +
                             "); see ProtocolFeaturesSupported in the service root.");
  }

  using Builder = std::function<json(const controller::Array&, const http::Request&)>;

  http::Route get(const std::string& pattern, const char* access, Builder build) {
    return {"GET", std::string(kRedfishRoot) + pattern,
            [this, build](http::Request& r) {
              return guarded([&] {
                no_query(r);
                json body = model.call([&] { return build(array, r); });
                return json_response(200, body);
              });
            },
            access};
  }

  // A change on the model thread on behalf of the caller: refused with 503 while the array
  // takes no management changes (api/views.h), its events name the caller. `fn` returns the
  // answer's body (null for none), sent with `status`. Recorded, with its answer, when a
  // session is recorded (redfish/record.h); a 503 never reached the model and is not.
  template <typename F>
  json change(const http::Request& r, int status, F&& fn) {
    return model.call([&] {
      if (std::string why = api::management_unavailable(array); !why.empty())
        throw RedfishError(503, "ServiceTemporarilyUnavailable", why);
      struct Actor {
        controller::Array& a;
        ~Actor() { a.set_actor(""); }
      } actor{array};
      array.set_actor(r.principal.user);
      return recorded_change(r, status, [&] { return fn(array); });
    });
  }

  using Creator = std::function<json(controller::Array&, const json&)>;
  using Deleter = std::function<void(controller::Array&, const std::string&, const std::optional<IfMatch>&)>;

  http::Route post(const std::string& pattern, Creator create) {
    return {"POST", std::string(kRedfishRoot) + pattern,
            [this, create](http::Request& r) {
              return guarded([&] {
                no_query(r);
                const json body = parse_body(r);
                json made = change(r, 201, [&](controller::Array& a) { return create(a, body); });
                http::Response res = json_response(201, made);
                res.headers.set("Location", made["@odata.id"].get<std::string>());
                return res;
              });
            },
            api::kOperator};
  }

  http::Route remove(const std::string& pattern, Deleter del) {
    return {"DELETE", std::string(kRedfishRoot) + pattern,
            [this, del](http::Request& r) {
              return guarded([&] {
                no_query(r);
                const auto precondition = parse_if_match(r);
                change(r, 204, [&](controller::Array& a) {
                  del(a, r.path_param("id"), precondition);
                  return json();
                });
                return http::Response(204, "", "");
              });
            },
            api::kOperator};
  }

  http::Route patch_volume_route() {
    return {"PATCH", storage_uri() + "/Volumes/{id}",
            [this](http::Request& r) {
              return guarded([&] {
                no_query(r);
                const auto precondition = parse_if_match(r);
                const json body = parse_body(r);
                json changed = change(r, 200, [&](controller::Array& a) {
                  return patch_volume(a, r.path_param("id"), body, precondition);
                });
                return json_response(200, changed);
              });
            },
            api::kOperator};
  }

  std::vector<http::Route> read_routes();
  std::vector<http::Route> change_routes();
  std::vector<http::Route> event_routes();  // EventService, its subscriptions, SSE; tasks
  std::vector<http::Route> subscription_routes();  // EventService/Subscriptions
  std::vector<http::Route> task_routes();   // TaskService: the rebuilds, seen by the events
  // A route under /redfish/v1 that refuses query parameters and answers in Redfish's shape.
  http::Route route(const char* method, const std::string& path, const char* access,
                    std::function<http::Response(http::Request&)> fn);

  // Every GET route as its handler answers without a query: what $expand resolves a link by.
  http::Router getters;

  static int rank(const std::string& role) {
    if (role == api::kPublic) return 0;
    if (role == api::kMonitor) return 1;
    if (role == api::kOperator) return 2;
    return role == api::kAdmin ? 3 : 4;
  }

  // The resource at `target` as `outer`'s caller may read it, else nullopt (no such GET
  // route, a role the caller lacks, an error, a streamed or non-JSON answer).
  std::optional<json> resolve(const std::string& target, const http::Request& outer) const {
    http::Request r;
    r.method = "GET";
    r.target = r.path = target;
    r.principal = outer.principal;
    r.remote_address = outer.remote_address;
    r.tls = outer.tls;
    const http::Router::Match m = getters.match(r);
    if (!m.route) return std::nullopt;
    // Without authentication (no options.auth) the guard lets every request through.
    const std::string caller = outer.principal.role.empty() ? api::kPublic : outer.principal.role;
    if (options.auth && rank(m.route->access) > rank(caller)) return std::nullopt;
    http::Response res = m.route->handler(r);
    if (res.status != 200 || res.stream) return std::nullopt;
    json j = json::parse(res.body, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  }

  // `route` with the query parameters handled (redfish/query.h): the handler itself sees none.
  http::Route with_query(http::Route route) {
    route.handler = [this, inner = route.handler](http::Request& r) -> http::Response {
      // DSP0266 8.1 (request headers): a service answers 412 to an OData-Version it does not
      // support; this one speaks 4.0 (hostile round 24: 5.0 was served).
      if (r.has_header("OData-Version") && r.header("OData-Version") != "4.0")
        return json_response(412, error_body(RedfishError(412, "PreconditionFailed",
                                                          "OData-Version " + config::printable(r.header("OData-Version").substr(0, 40)) +
                                                              " is not supported: this service speaks OData 4.0.")));
      Query q;
      try {
        q = parse_query(r.method == "HEAD" ? "GET" : r.method, r.params);
      } catch (const RedfishError& e) {
        return json_response(e.status, error_body(e));
      }
      if (q.expand != Query::Expand::kNone && !r.may_block) throw http::NeedsWorker{};
      r.query.clear();
      r.params.clear();
      // The event stream has no document to select from or expand: refused before it opens,
      // as $filter is there, not ignored (hostile round 31: $select was silently dropped).
      if (!q.empty() && r.path == uri("/EventService/SSE"))
        return json_response(501, error_body(RedfishError(501, "QueryNotSupportedOnResource",
                                                          "Querying is not supported on the event stream.")));
      http::Response res = inner(r);
      if (q.empty() || res.status != 200 || res.stream) return res;
      json body = json::parse(res.body, nullptr, false);
      if (body.is_discarded()) return res;
      body = apply_expand(apply_select(body, q.select), q,
                          [this, &r](const std::string& target) { return resolve(target, r); });
      res.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
      return res;
    };
    return route;
  }
};

namespace {

json subscription_view(const Subscription& s) {
  return {{"@odata.id", uri("/EventService/Subscriptions/" + std::to_string(s.id))},
          {"@odata.type", "#EventDestination.v1_16_0.EventDestination"},
          {"Id", std::to_string(s.id)},
          {"Name", "Event subscription " + std::to_string(s.id)},
          {"Destination", s.destination},
          {"Context", s.context},
          {"Protocol", "Redfish"},
          {"EventFormatType", "Event"},
          {"SubscriptionType", "RedfishEvent"},
          {"Oem", {{"Afasim", {{"Delivered", s.delivered}, {"Failed", s.failed}, {"Retries", s.retries}, {"Owner", s.owner}}}}}};
}

}  // namespace

http::Route Service::Impl::route(const char* method, const std::string& path, const char* access,
                                 std::function<http::Response(http::Request&)> fn) {
  return http::Route{method, uri(path), [this, fn](http::Request& r) {
                       return guarded([&] {
                         no_query(r);
                         return fn(r);
                       });
                     },
                     access};
}

std::vector<http::Route> Service::Impl::event_routes() {
  Events& ev = *options.events;
  std::vector<http::Route> out;
  out.push_back(route("GET", "/EventService", api::kMonitor, [&ev](http::Request&) {
    return json_response(200, {{"@odata.id", uri("/EventService")},
                               {"@odata.type", "#EventService.v1_12_0.EventService"},
                               {"Id", "EventService"},
                               {"Name", "Event Service"},
                               {"ServiceEnabled", true},
                               {"DeliveryRetryAttempts", ev.options().delivery_retry_attempts},
                               {"DeliveryRetryIntervalSeconds", ev.options().delivery_retry_interval_seconds},
                               {"EventFormatTypes", json::array({"Event"})},
                               {"ServerSentEventUri", uri("/EventService/SSE")},
                               {"Subscriptions", link(uri("/EventService/Subscriptions"))},
                               {"Status", {{"State", "Enabled"}, {"Health", "OK"}}},
                               {"Oem", {{"Afasim", {{"DroppedDeliveries", ev.dropped()}}}}}});
  }));
  for (http::Route& r : subscription_routes()) out.push_back(std::move(r));
  out.push_back(route("GET", "/EventService/SSE", api::kMonitor, [this, &ev](http::Request& r) {
    // A bad Last-Event-ID is a 400 first; then 503 and Retry-After, as /api/v1/events/stream (a
    // stream that lost the race for the last slot since gets the reason as a comment and ends).
    const std::optional<std::int64_t> last = parse_last_event_id(r);
    if (const std::string why = ev.stream_refusal(r.remote_address, r.principal.user); !why.empty())
      throw RedfishError(503, "ServiceTemporarilyUnavailable", "The event stream was not opened: " + why + ".");
    http::Response res(200, "", "text/event-stream");
    res.headers.set("Cache-Control", "no-cache");
    // The stream lasts while the credentials it was opened with hold (api::Auth::credential_check).
    std::function<bool()> authorized = options.auth ? options.auth->credential_check(r) : std::function<bool()>();
    // The stream starts from the events as they stand now, not when the front end gets round to
    // it after the headers (a drive event between the two was lost on a loaded machine); an
    // EventSource reconnecting sends the id of the last event it got (Last-Event-ID, the "id:"
    // lines), and the stream goes on after it from the last events kept.
    const std::int64_t after = last ? std::min(ev.stream_position(), *last) : ev.stream_position();
    res.stream = [&ev, address = r.remote_address, user = r.principal.user, authorized,
                  after](std::shared_ptr<http::StreamSink> sink) {
      // retry: how long an EventSource waits before reconnecting, ms.
      if (!sink->write("retry: 2000\n\n")) return;
      if (!ev.attach_stream(sink, address, authorized, user, after)) {
        const std::string why = ev.stream_refusal(address, user);
        sink->write(": " + (why.empty() ? std::string("too many event streams are open; try again later") : why) + "\n\n");
        sink->close();
      }
    };
    return res;
  }));
  for (http::Route& r : task_routes()) out.push_back(std::move(r));
  return out;
}

std::vector<http::Route> Service::Impl::subscription_routes() {
  Events& ev = *options.events;
  std::vector<http::Route> out;
  out.push_back(route("GET", "/EventService/Subscriptions", api::kMonitor, [&ev](http::Request&) {
    json members = json::array();
    for (const Subscription& s : ev.subscriptions()) members.push_back(link(uri("/EventService/Subscriptions/" + std::to_string(s.id))));
    const std::size_t n = members.size();
    return json_response(200, {{"@odata.id", uri("/EventService/Subscriptions")},
                               {"@odata.type", "#EventDestinationCollection.EventDestinationCollection"},
                               {"Name", "Event subscriptions"},
                               {"Members", members},
                               {"Members@odata.count", n}});
  }));
  out.push_back(route("GET", "/EventService/Subscriptions/{id}", api::kMonitor, [&ev](http::Request& r) {
    const controller::Id id = parse_segment(r.path_param("id"), "event subscription");
    for (const Subscription& s : ev.subscriptions())
      if (s.id == id) return json_response(200, subscription_view(s));
    throw not_found("event subscription " + r.path_param("id"));
  }));
  out.push_back(route("POST", "/EventService/Subscriptions", api::kOperator, [&ev](http::Request& r) {
    const json body = parse_body(r);
    for (const auto& [key, value] : body.items()) {
      static const char* const kAllowed[] = {"Destination", "Context", "Protocol", "EventFormatType", "SubscriptionType"};
      bool ok = key.rfind("@odata.", 0) == 0;
      for (const char* a : kAllowed) ok = ok || key == a;
      if (!ok) throw unknown_property("", key);
      if (!value.is_string())
        throw RedfishError(400, "PropertyValueTypeError", "The value of the property " + key + " must be a string.", {"#/" + key});
    }
    require_members(body, {"Destination"});
    for (const auto& [key, only] : {std::pair<const char*, const char*>{"Protocol", "Redfish"}, {"EventFormatType", "Event"},
                                    {"SubscriptionType", "RedfishEvent"}})
      if (body.contains(key) && body[key] != only)
        throw RedfishError(400, "PropertyValueNotInList",
                           std::string("afasim delivers ") + key + " " + only + " only.", {std::string("#/") + key});
    auto made = ev.subscribe(body["Destination"].get<std::string>(), body.value("Context", std::string()), r.principal.user);
    if (!made.is_ok()) throw from_status(made.status(), {"#/Destination"});
    http::Response res = json_response(201, subscription_view(*made));
    res.headers.set("Location", uri("/EventService/Subscriptions/" + std::to_string(made->id)));
    return res;
  }));
  out.push_back(route("DELETE", "/EventService/Subscriptions/{id}", api::kOperator, [&ev](http::Request& r) {
    const controller::Id id = parse_segment(r.path_param("id"), "event subscription");
    // An operator ends its own subscriptions; an Administrator any (hostile round 24: any
    // operator deleted every one). Ids are never reused, so the owner read here is the one deleted.
    for (const Subscription& s : ev.subscriptions())
      if (s.id == id && !r.principal.user.empty() && r.principal.role != api::kAdmin && s.owner != r.principal.user)
        throw RedfishError(403, "InsufficientPrivilege",
                           "Event subscription " + std::to_string(id) + " belongs to user " + s.owner +
                               "; only that user or an Administrator may delete it.");
    if (sim::Status s = ev.unsubscribe(id); !s.is_ok()) throw from_status(s);
    return http::Response(204, "", "");
  }));
  return out;
}

std::vector<http::Route> Service::Impl::task_routes() {
  Events& ev = *options.events;
  std::vector<http::Route> out;
  // TaskService: the rebuilds (the one long operation afasim has), seen by the events.
  auto tasks = [this, &ev] {
    return model.call([&] {
      ev.observe_tasks(array);
      return ev.tasks();
    });
  };
  out.push_back(route("GET", "/TaskService", api::kMonitor, [](http::Request&) {
    return json_response(200, {{"@odata.id", uri("/TaskService")},
                               {"@odata.type", "#TaskService.v1_3_0.TaskService"},
                               {"Id", "TaskService"},
                               {"Name", "Task Service"},
                               {"ServiceEnabled", true},
                               {"CompletedTaskOverWritePolicy", "Oldest"},
                               {"LifeCycleEventOnTaskStateChange", false},
                               {"Tasks", link(uri("/TaskService/Tasks"))},
                               {"Status", {{"State", "Enabled"}, {"Health", "OK"}}}});
  }));
  out.push_back(route("GET", "/TaskService/Tasks", api::kMonitor, [tasks](http::Request&) {
    json members = json::array();
    for (const RebuildTask& t : tasks()) members.push_back(link(uri("/TaskService/Tasks/" + std::to_string(t.id))));
    const std::size_t n = members.size();
    return json_response(200, {{"@odata.id", uri("/TaskService/Tasks")},
                               {"@odata.type", "#TaskCollection.TaskCollection"},
                               {"Name", "Tasks"},
                               {"Members", members},
                               {"Members@odata.count", n}});
  }));
  out.push_back(route("GET", "/TaskService/Tasks/{id}", api::kMonitor, [this, tasks](http::Request& r) {
    const controller::Id id = parse_segment(r.path_param("id"), "task");
    for (const RebuildTask& t : tasks()) {
      if (t.id != id) continue;
      const std::string drive = model.call([&] {
        const controller::DriveInfo* d = array.drive(t.drive_index + 1);
        return d ? drive_uri(*d) : uri("");
      });
      json j = {{"@odata.id", uri("/TaskService/Tasks/" + std::to_string(t.id))},
                {"@odata.type", "#Task.v1_7_4.Task"},
                {"Id", std::to_string(t.id)},
                {"Name", "Rebuild of drive " + std::to_string(t.drive_index + 1)},
                {"TaskState", t.ended_ns < 0 ? "Running" : "Completed"},
                {"TaskStatus", "OK"},
                {"PercentComplete", t.percent},
                {"StartTime", t.start_time},
                {"Oem", {{"Afasim", {{"Drive", link(drive)},
                                     {"StartedSimulatedNs", t.started_ns},
                                     {"EndedSimulatedNs", t.ended_ns < 0 ? json(nullptr) : json(t.ended_ns)}}}}}};
      if (t.ended_ns >= 0) j["EndTime"] = t.end_time;
      return json_response(200, j);
    }
    throw not_found("task " + r.path_param("id"));
  }));
  return out;
}

std::vector<http::Route> Service::Impl::read_routes() {
  using A = const controller::Array&;
  using R = const http::Request&;
  const std::string st = std::string("/Storage/") + kStorageId;
  const bool sessions = options.auth != nullptr;
  std::vector<http::Route> out;
  // The version document, the service root, $metadata and the OData service document are
  // public (DSP0266 13.3.3: a client needs them before it logs in).
  out.push_back({"GET", "/redfish", [this](http::Request& r) {
                   return guarded([&] { no_query(r); return json_response(200, {{"v1", "/redfish/v1/"}}); });
                 }, api::kPublic});
  out.push_back({"GET", kRedfishRoot, [this](http::Request& r) {
                   return guarded([&] {
                     no_query(r);
                     return json_response(200, model.call([&] { return service_root(array, identity); }));
                   });
                 }, api::kPublic});
  out.push_back({"GET", uri("/$metadata"), [](http::Request&) {
                   http::Response res(200, metadata_document(), "application/xml");
                   res.headers.set("OData-Version", "4.0");
                   return res;
                 }, api::kPublic, true});
  const bool events = options.events != nullptr;
  out.push_back({"GET", uri("/odata"), [sessions, events](http::Request&) { return json_response(200, odata_document(sessions, events)); },
                 api::kPublic, true});
  const char* m = api::kMonitor;
  out.push_back(get("/Systems", m, [](A a, R) { return systems(a); }));
  out.push_back(get(std::string("/Systems/") + kSystemId, m, [this](A a, R) { return system(a, identity); }));
  out.push_back(get(std::string("/Systems/") + kSystemId + "/Storage", m,
                    [](A, R r) { return storage_collection(r.path.back() == '/' ? r.path.substr(0, r.path.size() - 1) : r.path); }));
  out.push_back(get(std::string("/Systems/") + kSystemId + "/SimpleStorage", m, [](A a, R) { return simple_storages(a); }));
  out.push_back(get(std::string("/Systems/") + kSystemId + "/SimpleStorage/{id}", m,
                    [](A a, R r) { return simple_storage(a, r.path_param("id")); }));
  out.push_back(get("/Storage", m, [](A, R) { return storage_collection(uri("/Storage")); }));
  out.push_back(get(st, m, [](A a, R) { return storage(a); }));
  out.push_back(get("/Chassis", m, [](A a, R) { return chassis_collection(a); }));
  out.push_back(get("/Chassis/{c}", m, [](A a, R r) { return chassis(a, r.path_param("c")); }));
  out.push_back(get("/Chassis/{c}/Drives", m, [](A a, R r) { return chassis_drives(a, r.path_param("c")); }));
  out.push_back(get("/Chassis/{c}/Drives/{id}", m, [](A a, R r) { return drive(a, r.path_param("c"), r.path_param("id")); }));
  out.push_back(get("/Chassis/{c}/PowerSubsystem", m, [](A a, R r) { return power_subsystem(a, r.path_param("c")); }));
  out.push_back(get("/Chassis/{c}/PowerSubsystem/Batteries", m, [](A a, R r) { return batteries(a, r.path_param("c")); }));
  out.push_back(get("/Chassis/{c}/PowerSubsystem/Batteries/{id}", m,
                    [](A a, R r) { return battery(a, r.path_param("c"), r.path_param("id")); }));
  out.push_back(get("/Managers", m, [](A a, R) { return managers(a); }));
  out.push_back(get("/Managers/{id}", m, [this](A a, R r) { return manager(a, identity, r.path_param("id")); }));
  out.push_back(get(st + "/StoragePools", m, [](A a, R) { return storage_pools(a); }));
  out.push_back(get(st + "/StoragePools/{id}", m, [](A a, R r) { return storage_pool(a, r.path_param("id")); }));
  out.push_back(get(st + "/StoragePools/{id}/AllocatedVolumes", m, [](A a, R r) { return pool_volumes(a, r.path_param("id")); }));
  out.push_back(get(st + "/Volumes", m, [](A a, R) { return volumes(a); }));
  out.push_back(get(st + "/Volumes/{id}", m, [](A a, R r) { return volume(a, r.path_param("id")); }));
  out.push_back(get(st + "/EndpointGroups", m, [](A a, R) { return endpoint_groups(a); }));
  out.push_back(get(st + "/EndpointGroups/{id}", m, [](A a, R r) { return endpoint_group(a, r.path_param("id")); }));
  out.push_back(get(st + "/Endpoints", m, [](A a, R) { return endpoints(a); }));
  out.push_back(get(st + "/Endpoints/{id}", m, [](A a, R r) { return endpoint(a, r.path_param("id")); }));
  out.push_back(get(st + "/Connections", m, [](A a, R) { return connections(a); }));
  out.push_back(get(st + "/Connections/{id}", m, [](A a, R r) { return connection(a, r.path_param("id")); }));
  return out;
}

std::vector<http::Route> Service::Impl::change_routes() {
  const std::string st = std::string("/Storage/") + kStorageId;
  std::vector<http::Route> out;
  out.push_back(post(st + "/Volumes", create_volume));
  out.push_back(patch_volume_route());
  out.push_back(remove(st + "/Volumes/{id}", delete_volume));
  out.push_back(post(st + "/EndpointGroups", create_endpoint_group));
  out.push_back(remove(st + "/EndpointGroups/{id}", delete_endpoint_group));
  out.push_back(post(st + "/Connections", create_connection));
  out.push_back(remove(st + "/Connections/{id}", delete_connection));
  return out;
}

Service::Service(controller::Array& array, serve::ModelThread& model, ServiceOptions options)
    : impl_(std::make_unique<Impl>(Impl{array, model, std::move(options), {}, nullptr, {}})) {
  impl_->identity = {impl_->options.system_name, impl_->options.afasim_version, impl_->options.auth != nullptr,
                     impl_->options.events != nullptr};
  if (impl_->options.auth) impl_->accounts = std::make_unique<Accounts>(*impl_->options.auth, array, model);
}

Service::~Service() = default;

void Service::reshape_error(const http::Request& r, http::Response& deny) {
  if (r.path != "/redfish" && r.path.rfind("/redfish/", 0) != 0) return;
  if (deny.headers.get("Content-Type").rfind(http::kProblemJson, 0) != 0) return;  // Redfish's already
  const json problem = json::parse(deny.body, nullptr, false);
  const std::string detail =
      problem.is_object() && problem.contains("detail") && problem["detail"].is_string()
          ? problem["detail"].get<std::string>()
          : "";
  const std::string why = detail.empty() ? "" : " (" + detail + ")";
  if (deny.status == 503 || deny.status == 429) {
    // Basic credentials not yet verified: every hash slot taken (503), or from an address past
    // its failed logins (429; it came as /api/v1's problem+json before).
    const std::string retry_after = deny.headers.get("Retry-After");
    const RedfishError e = deny.status == 503 ? password_checks_busy(detail) : too_many_failed_logins(detail, 0);
    deny = json_response(deny.status, error_body(e));
    deny.headers.set("Retry-After", retry_after);
    return;
  }
  if (deny.status != 401 && deny.status != 403) {
    const std::string allow = deny.headers.get("Allow");
    const RedfishError e =
        deny.status == 404   ? RedfishError(404, "ResourceMissingAtURI", "The resource at the URI '" + r.path + "' was not found.")
        : deny.status == 405 ? RedfishError(405, "OperationNotAllowed", "The HTTP method is not allowed on this resource" + why + ".")
                             : RedfishError(deny.status, "GeneralError", detail.empty() ? "A general error has occurred." : detail);
    deny = json_response(deny.status, error_body(e));
    if (!allow.empty()) deny.headers.set("Allow", allow);
    return;
  }
  const RedfishError e =
      deny.status == 401
          ? RedfishError(401, "NoValidSession", "There is no valid session established with the implementation" + why + ".", {},
                         "Establish a session (POST /redfish/v1/SessionService/Sessions) or send valid HTTP Basic credentials.")
          : RedfishError(403, "InsufficientPrivilege",
                         "There are insufficient privileges for the account or credentials associated with the current session to "
                         "perform the requested operation" + why + ".",
                         {}, "Either abandon the operation or change the associated access rights and resubmit the request.");
  http::Response res = json_response(e.status, error_body(e));
  // DSP0266 "HTTP status codes", 401: the WWW-Authenticate header for Basic authentication.
  if (e.status == 401) res.headers.set("WWW-Authenticate", "Basic realm=\"afasim\", charset=\"UTF-8\"");
  deny = std::move(res);
}

std::vector<http::Route> Service::routes() {
  std::vector<http::Route> out = impl_->read_routes();
  for (http::Route& r : impl_->change_routes()) out.push_back(std::move(r));
  if (impl_->options.events)
    for (http::Route& r : impl_->event_routes()) out.push_back(std::move(r));
  if (impl_->accounts)
    for (http::Route& r : impl_->accounts->routes([this](const std::function<http::Response()>& fn) { return impl_->guarded(fn); })) out.push_back(std::move(r));
  for (http::Route& r : out) {
    if (r.method == "GET") impl_->getters.add(r);
    r = impl_->with_query(std::move(r));
  }
  return out;
}

}  // namespace afasim::redfish
