// The endpoints that show the array's hardware, its events and its faults, and the API's own
// description (api/endpoints.h).
#include <algorithm>

#include "api/endpoints.h"
#include "api/fields.h"
#include "api/observe.h"
#include "api/problem.h"
#include "api/rest_server.h"

namespace afasim::api {

using nlohmann::json;
using namespace afasim::controller;

// ---------------------------------------------------------------------------------------
// System and hardware

// From the view snapshot (api/view_cache.h): a burst of these never waits for the model.
Reply Endpoints::get_system(const Call& c) {
  no_query(c.http);
  Reply r(200, nullptr);
  r.raw_body = snapshot(c)->system_body;
  return r;
}

Reply Endpoints::list_controllers(const Call& c) {
  const ListQuery q = parse_list_query(c.http);
  return on_model(c, [&] {
    Pager page(q);
    for (const auto& ctl : array_.controllers()) page.offer([&] { return controller_view(ctl); });
    return page.reply();
  });
}

Reply Endpoints::get_controller(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "controller");
  return on_model(c, [&] {
    const ControllerInfo* ctl = array_.controller(id);
    if (ctl == nullptr) throw not_found("no controller " + std::to_string(id));
    return Reply(200, controller_view(*ctl));
  });
}

Reply Endpoints::list_datapacs(const Call& c) {
  const ListQuery q = parse_list_query(c.http);
  return on_model(c, [&] {
    Pager page(q);
    for (const auto& d : array_.datapacs()) page.offer([&] { return datapac_view(array_, d); });
    return page.reply();
  });
}

Reply Endpoints::get_datapac(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "DataPac");
  return on_model(c, [&] {
    const DataPacInfo* d = array_.datapac(id);
    if (d == nullptr) throw not_found("no DataPac " + std::to_string(id));
    return Reply(200, datapac_view(array_, *d));
  });
}

// ---------------------------------------------------------------------------------------
// Events and the API's own description

namespace {
QueryParams query_params(const http::Request& r) { return QueryParams(r.params.begin(), r.params.end()); }
}  // namespace

Reply Endpoints::list_events(const Call& c) {
  const EventQuery q = parse_event_query(query_params(c.http));
  const bool filtered = q.since_ns || q.min_severity || !q.kinds.empty() || q.object || q.after || q.before;
  return on_model(c, [&] {
    json page = event_page(array_.recent_events(), q);
    // Unfiltered, `total` counts every event ever logged, those no longer in memory too.
    if (!filtered) page["total"] = array_.events(0, 0).total;
    return Reply(200, std::move(page));
  });
}

Reply Endpoints::list_alerts(const Call& c) {
  const ListQuery q = parse_list_query(c.http);
  return on_model(c, [&] {
    Pager page(q);
    if (telemetry_)
      for (const auto& a : telemetry_->alerts()) page.offer([&] { return alert_view(a); });
    return page.reply();
  });
}

Reply Endpoints::performance(const Call& c, PerfHistory::Kind kind, const std::string& what) {
  const PerformanceQuery q = parse_performance_query(query_params(c.http));
  const Id id = kind == PerfHistory::Kind::kArray ? 0 : parse_id(c, what);
  if (telemetry_ == nullptr)
    throw ApiError(503, problem::kUnavailable, "this server keeps no performance history");
  return on_model(c, [&] {
    const std::string object = kind == PerfHistory::Kind::kArray ? "system" : what + "/" + std::to_string(id);
    bool exists = true;
    switch (kind) {
      case PerfHistory::Kind::kArray: break;
      case PerfHistory::Kind::kController: exists = array_.controller(id) != nullptr; break;
      case PerfHistory::Kind::kVolume: exists = array_.volume(id) != nullptr; break;
      case PerfHistory::Kind::kDrive: exists = array_.drive(id) != nullptr; break;
    }
    if (!exists) throw not_found("no " + what + " " + std::to_string(id));
    // Drives are kept by index (id - 1).
    const Id key = kind == PerfHistory::Kind::kDrive ? id - 1 : id;
    const PerfSeries series = telemetry_->history().series({kind, key}, q.since_ns, q.limit);
    const bool controller_fields = kind == PerfHistory::Kind::kArray || kind == PerfHistory::Kind::kController;
    return Reply(200, performance_view(object, series, controller_fields));
  });
}

// ---------------------------------------------------------------------------------------
// Faults

Reply Endpoints::list_faults(const Call& c) {
  const ListQuery q = parse_list_query(c.http);
  return on_model(c, [&] {
    Pager page(q);
    for (const auto& f : array_.faults()) page.offer([&] { return fault_view(f); });
    return page.reply();
  });
}

Reply Endpoints::create_fault(const Call& c) {
  no_query(c.http);
  const json body = json_body(c, false);
  FieldReader f(body, {"type", "drive", "latency_multiplier", "controller"}, {"id", "time_ns", "result"});
  controller::FaultSpec spec;
  spec.type = f.required_string("type");
  const controller::FaultTypeInfo* info = controller::find_fault_type(spec.type);
  if (info == nullptr) {
    throw ApiError(422, problem::kUnprocessable,
                   "type: unknown fault type " + excerpt(json(spec.type)) +
                       " (known: " + controller::fault_type_names() + ")");
  }
  // kFaultTypes says which fields the type takes: each of them is required and no other may
  // be given, as in a scenario's timeline (workload/scenario.cpp).
  auto takes = [&](unsigned field, const std::string& key, const std::string& what) {
    const bool wanted = (info->fields & field) != 0;
    if (wanted && (!f.has(key) || f.is_null(key)))
      throw bad_request("missing required field " + key + " (" + spec.type + " needs " + what +
                        ")");
    if (!wanted && f.has(key)) throw bad_request(key + " does not apply to " + spec.type);
    return wanted;
  };
  if (takes(controller::kFaultDrive, "drive", "the drive's id")) spec.drive = *f.integer("drive");
  if (takes(controller::kFaultLatencyMultiplier, "latency_multiplier", "a number from 1 to 1000")) {
    const json& m = *f.raw("latency_multiplier");
    if (!m.is_number()) throw bad_request("latency_multiplier must be a number, got " + excerpt(m));
    spec.latency_multiplier = m.get<double>();
  }
  if (takes(controller::kFaultController, "controller",
            "the controller: 1 or 2, or \"A\" or \"B\""))
    spec.controller = *f.controller_id("controller");
  // Faults are taken while the array is off, vaulting or booting too: a controller dying
  // mid-vault, a drive failing while off, the mains lost again during the boot are the
  // double faults docs/controller-states.md lists (tests/controller/double_fault_test.cpp).
  // The model refuses one that does not apply now with 409.
  return on_model(
      c,
      [&] {
        controller::FaultRecord r = unwrap(array_.inject_fault(spec));
        Reply reply(201, fault_view(r));
        reply.location = std::string(kApiPrefix) + "/faults/" + std::to_string(r.id);
        return reply;
      },
      /*even_offline=*/true);
}

Reply Endpoints::get_fault(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "fault");
  return on_model(c, [&] {
    for (const auto& f : array_.faults())
      if (f.id == id) return Reply(200, fault_view(f));
    // The list is per run (docs/api.md "Faults"): a fault of an earlier run is only in the
    // event log, and what it did is undone by injecting its recovery (a new user's tour:
    // `fault clear 4` after a restart said only "no fault 4").
    throw not_found("no fault " + std::to_string(id) +
                    " in this run: GET /faults lists the faults injected since the server started; an "
                    "earlier run's are in the event log, and what one did is undone by injecting its "
                    "recovery (drive_replace, controller_restore, ...)");
  });
}

Reply Endpoints::get_openapi(const Call& c) {
  no_query(c.http);
  static const json doc = json::parse(openapi_document());
  return Reply(200, doc);
}

}  // namespace afasim::api
