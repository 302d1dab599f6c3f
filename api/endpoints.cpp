#include "api/endpoints.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "api/auth.h"
#include "api/fields.h"
#include "api/observe.h"
#include "api/problem.h"
#include "api/rest_server.h"

namespace afasim::api {
namespace {

using nlohmann::json;
using namespace afasim::controller;

// ---------------------------------------------------------------------------------------
// Request pieces

// QoS fields as a PATCH gives them: absent (unchanged), null (clear) or a value.
template <typename Patch>
void read_qos_patch(const FieldReader& f, Patch& p) {
  p.min_iops = f.nullable_integer("min_iops");
  p.max_iops = f.nullable_integer("max_iops");
  p.burst_iops = f.nullable_integer("burst_iops");
}

QosSettings read_qos(const FieldReader& f) {
  return {f.integer("min_iops"), f.integer("max_iops"), f.integer("burst_iops")};
}

// PATCH fields that are not nullable: null is a client error, not "unchanged".
void no_nulls(const FieldReader& f, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (f.is_null(k)) throw bad_request(std::string(k) + " cannot be null");
  }
}

std::vector<int> to_percentages(const std::vector<std::int64_t>& v) {
  std::vector<int> out;
  for (std::int64_t x : v) {
    if (x < 0 || x > 100) {
      throw ApiError(422, problem::kUnprocessable,
                     "space_thresholds_percent values must be 1 to 100, got " + std::to_string(x));
    }
    out.push_back(static_cast<int>(x));
  }
  return out;
}

void immutable(const std::string& field, const std::string& kind, const std::string& now,
               const std::string& asked) {
  throw ApiError(422, problem::kImmutableField,
                 field + " of a " + kind + " cannot change after creation (it is " + now +
                     ", the request asks for " + asked + ")");
}

const std::initializer_list<std::string_view> kVolumeReadOnly = {
    "id", "owner_controller", "effective_qos", "allocated_bytes", "lost_bytes", "state", "qos_status",
    "created_time_ns", "revision"};
const std::initializer_list<std::string_view> kPoolReadOnly = {"id", "raid_types", "volume_count",
                                                               "capacity", "revision"};
const std::initializer_list<std::string_view> kHostReadOnly = {"id", "mapping_count", "revision"};
const std::initializer_list<std::string_view> kMappingReadOnly = {"id", "revision"};
const std::initializer_list<std::string_view> kQosReadOnly = {"id", "volume_count", "revision"};

}  // namespace

Endpoints::Endpoints(Array& array, serve::ModelThread& model, SystemIdentity identity,
                     const controller::Telemetry* telemetry)
    : array_(array), model_(model), identity_(identity), views_(array, model, std::move(identity)),
      telemetry_(telemetry) {}

std::vector<Route> Endpoints::routes() {
  auto perf = [this](PerfHistory::Kind kind, std::string what) {
    return [this, kind, what](const Call& c) { return performance(c, kind, what); };
  };
  auto bind = [this](Reply (Endpoints::*fn)(const Call&)) {
    return [this, fn](const Call& c) { return (this->*fn)(c); };
  };
  // Access (api/auth.h): reads are for monitors; provisioning (volumes, hosts, mappings,
  // QoS policies) for operators; pools and faults change the hardware's use: admins only.
  return {
      // From the view snapshot: on the I/O thread while it is fresh (api/view_cache.h).
      {"GET", "/system", bind(&Endpoints::get_system), kMonitor, true},
      {"GET", "/scrub", bind(&Endpoints::get_scrub), kMonitor},
      {"PATCH", "/scrub", bind(&Endpoints::update_scrub), kAdmin},
      {"GET", "/controllers", bind(&Endpoints::list_controllers), kMonitor},
      {"GET", "/controllers/{id}", bind(&Endpoints::get_controller), kMonitor},
      {"GET", "/datapacs", bind(&Endpoints::list_datapacs), kMonitor},
      {"GET", "/datapacs/{id}", bind(&Endpoints::get_datapac), kMonitor},
      {"GET", "/pools", bind(&Endpoints::list_pools), kMonitor},
      {"POST", "/pools", bind(&Endpoints::create_pool), kAdmin},
      {"GET", "/pools/{id}", bind(&Endpoints::get_pool), kMonitor},
      {"PATCH", "/pools/{id}", bind(&Endpoints::update_pool), kAdmin},
      {"DELETE", "/pools/{id}", bind(&Endpoints::delete_pool), kAdmin},
      {"GET", "/volumes", bind(&Endpoints::list_volumes), kMonitor, true},
      {"POST", "/volumes", bind(&Endpoints::create_volume), kOperator},
      {"GET", "/volumes/{id}", bind(&Endpoints::get_volume), kMonitor},
      {"PATCH", "/volumes/{id}", bind(&Endpoints::update_volume), kOperator},
      {"DELETE", "/volumes/{id}", bind(&Endpoints::delete_volume), kOperator},
      {"GET", "/hosts", bind(&Endpoints::list_hosts), kMonitor},
      {"POST", "/hosts", bind(&Endpoints::create_host), kOperator},
      {"GET", "/hosts/{id}", bind(&Endpoints::get_host), kMonitor},
      {"PATCH", "/hosts/{id}", bind(&Endpoints::update_host), kOperator},
      {"DELETE", "/hosts/{id}", bind(&Endpoints::delete_host), kOperator},
      {"GET", "/mappings", bind(&Endpoints::list_mappings), kMonitor},
      {"POST", "/mappings", bind(&Endpoints::create_mapping), kOperator},
      {"GET", "/mappings/{id}", bind(&Endpoints::get_mapping), kMonitor},
      {"DELETE", "/mappings/{id}", bind(&Endpoints::delete_mapping), kOperator},
      {"GET", "/qos-policies", bind(&Endpoints::list_qos_policies), kMonitor},
      {"POST", "/qos-policies", bind(&Endpoints::create_qos_policy), kOperator},
      {"GET", "/qos-policies/{id}", bind(&Endpoints::get_qos_policy), kMonitor},
      {"PATCH", "/qos-policies/{id}", bind(&Endpoints::update_qos_policy), kOperator},
      {"DELETE", "/qos-policies/{id}", bind(&Endpoints::delete_qos_policy), kOperator},
      {"GET", "/events", bind(&Endpoints::list_events), kMonitor},
      {"GET", "/alerts", bind(&Endpoints::list_alerts), kMonitor},
      {"GET", "/system/performance", perf(PerfHistory::Kind::kArray, "system"), kMonitor},
      {"GET", "/controllers/{id}/performance", perf(PerfHistory::Kind::kController, "controller"), kMonitor},
      {"GET", "/volumes/{id}/performance", perf(PerfHistory::Kind::kVolume, "volume"), kMonitor},
      {"GET", "/drives/{id}/performance", perf(PerfHistory::Kind::kDrive, "drive"), kMonitor},
      {"GET", "/faults", bind(&Endpoints::list_faults), kMonitor},
      {"POST", "/faults", bind(&Endpoints::create_fault), kAdmin},
      {"GET", "/faults/{id}", bind(&Endpoints::get_fault), kMonitor},
      {"GET", "/openapi.json", bind(&Endpoints::get_openapi), kPublic},
  };
}

// ---------------------------------------------------------------------------------------
// Scrub

Reply Endpoints::get_scrub(const Call& c) {
  no_query(c.http);
  return on_model(c, [&] { return Reply(200, scrub_view(array_.data_path())); });
}

Reply Endpoints::update_scrub(const Call& c) {
  no_query(c.http);
  const json body = json_body(c, true);
  FieldReader f(body, {"enabled", "bytes_per_second"},
                {"pass_interval_s", "running", "passes_completed", "rows_checked", "rows_total", "bytes_read",
                 "media_errors", "repaired", "unrecoverable", "mismatches", "read_repairs", "unrecoverable_reads"});
  no_nulls(f, {"enabled", "bytes_per_second"});
  std::optional<bool> enabled;
  if (const json* e = f.raw("enabled")) {
    if (!e->is_boolean()) throw bad_request("enabled must be true or false, got " + e->dump());
    enabled = e->get<bool>();
  }
  const std::optional<std::int64_t> rate = f.size("bytes_per_second");
  // Well-formed but impossible, as a zero or negative size is elsewhere: 422, not the model's 400.
  if (rate && *rate <= 0)
    throw ApiError(422, problem::kUnprocessable, "bytes_per_second must be positive, got " + std::to_string(*rate));
  return on_model(c, [&] {
    raid::ScrubOptions o = array_.data_path().scrub_options();
    if (enabled) o.enabled = *enabled;
    if (rate) o.bytes_per_second = *rate;
    check(array_.set_scrub_options(o));
    return Reply(200, scrub_view(array_.data_path()));
  });
}

// ---------------------------------------------------------------------------------------
// Pools

// The list lambdas capture a structured binding through an init-capture (`&p = p`): clang 14
// (make fuzz) cannot capture the binding itself.
Reply Endpoints::list_pools(const Call& c) {
  const ListQuery q = parse_list_query(c.http, {}, {"name"});
  return on_model(c, [&] {
    Pager page(q);
    for (const auto& [id, p] : array_.pools()) {
      if (matches(q, "name", p.name)) page.offer([this, &p = p] { return pool_view(array_, p); });
    }
    return page.reply();
  });
}

Reply Endpoints::create_pool(const Call& c) {
  no_query(c.http);
  const json body = json_body(c, false);
  FieldReader f(body, {"name", "datapac_ids", "space_thresholds_percent"}, kPoolReadOnly);
  PoolSpec spec;
  spec.name = f.required_string("name");
  auto dps = f.integer_array("datapac_ids");
  if (!dps) throw bad_request("missing required field datapac_ids (an array of DataPac ids)");
  spec.datapac_ids = *dps;
  if (auto t = f.integer_array("space_thresholds_percent")) {
    spec.space_thresholds_percent = to_percentages(*t);
  }
  return on_model(c, [&] {
    Pool p = unwrap(array_.create_pool(spec));
    return created("pools", p.id, p.revision, pool_view(array_, p));
  });
}

Reply Endpoints::get_pool(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "pool");
  return on_model(c, [&] {
    const Pool* p = array_.pool(id);
    if (p == nullptr) throw not_found("no pool " + std::to_string(id));
    return Reply(200, pool_view(array_, *p), p->revision);
  });
}

Reply Endpoints::update_pool(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "pool");
  const Precondition pre = parse_if_match(c.http);
  const json body = json_body(c, true);
  FieldReader f(body, {"name", "space_thresholds_percent", "datapac_ids"}, kPoolReadOnly);
  no_nulls(f, {"name", "space_thresholds_percent", "datapac_ids"});
  PoolPatch patch;
  patch.name = f.string("name");
  if (auto t = f.integer_array("space_thresholds_percent")) {
    patch.space_thresholds_percent = to_percentages(*t);
  }
  auto dps = f.integer_array("datapac_ids");
  if (dps) std::sort(dps->begin(), dps->end());
  return on_model(c, [&] {
    const Pool* p = array_.pool(id);
    if (p == nullptr) throw not_found("no pool " + std::to_string(id));
    auto expected = expected_revision(pre, p->revision, "pool " + std::to_string(id));
    if (dps && *dps != p->datapac_ids) {
      immutable("datapac_ids", "pool", json(p->datapac_ids).dump(), json(*dps).dump());
    }
    // The name echoed as it is changes nothing: not checked against the naming rule, which
    // the shipped pool's "Pool 1" predates.
    if (patch.name && *patch.name == p->name) patch.name.reset();
    Pool updated = unwrap(array_.update_pool(id, patch, expected));
    return Reply(200, pool_view(array_, updated), updated.revision);
  });
}

Reply Endpoints::delete_pool(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "pool");
  const Precondition pre = parse_if_match(c.http);
  return on_model(c, [&] {
    const Pool* p = array_.pool(id);
    if (p == nullptr) throw not_found("no pool " + std::to_string(id));
    check(
        array_.delete_pool(id, expected_revision(pre, p->revision, "pool " + std::to_string(id))));
    return no_content();
  });
}

// ---------------------------------------------------------------------------------------
// Volumes

// From the view snapshot (api/view_cache.h): a burst of these never waits for the model.
Reply Endpoints::list_volumes(const Call& c) {
  const ListQuery q = parse_list_query(c.http, {"pool_id", "qos_policy_id"}, {"name"});
  const auto snapshot = this->snapshot(c);
  if (c.http.params.empty()) {
    Reply r(200, nullptr);
    r.raw_body = snapshot->volumes_default_body;
    return r;
  }
  Pager page(q);
  for (const auto& v : snapshot->volumes) {
    if (matches(q, "pool_id", v.pool_id) && matches(q, "qos_policy_id", v.qos_policy_id) &&
        matches(q, "name", v.name))
      page.offer([&] { return v.view; });
  }
  return page.reply();
}

Reply Endpoints::create_volume(const Call& c) {
  no_query(c.http);
  const json body = json_body(c, false);
  FieldReader f(body,
                {"name", "pool_id", "capacity_bytes", "raid_type", "provisioning",
                 "preferred_controller", "min_iops", "max_iops", "burst_iops", "qos_policy_id"},
                kVolumeReadOnly);
  VolumeSpec spec;
  spec.name = f.required_string("name");
  spec.pool_id = f.integer("pool_id");
  spec.capacity_bytes = f.required_size("capacity_bytes");
  const std::optional<raid::RaidType> raid_type = f.raid_type("raid_type");
  spec.provisioning = f.provisioning("provisioning").value_or(Provisioning::kThin);
  spec.preferred_controller = f.controller_id("preferred_controller");
  spec.qos = read_qos(f);
  spec.qos_policy_id = f.integer("qos_policy_id");
  return on_model(c, [&] {
    if (raid_type) {
      spec.raid_type = *raid_type;
    } else {
      // Default: RAID10 where the pool offers it, else the pool's other type. When the pool
      // is unknown or ambiguous, create_volume says so.
      const Pool* p = spec.pool_id                 ? array_.pool(*spec.pool_id)
                      : array_.pools().size() == 1 ? &array_.pools().begin()->second
                                                   : nullptr;
      // A pool that offers none (one DataPac of fewer SSDs than a RAID 5 extent spans) keeps
      // the default, which create_volume refuses, naming it.
      if (p != nullptr) {
        const auto offered = array_.raid_types_offered(*p);
        if (!offered.empty()) spec.raid_type = offered.front();
      }
    }
    Volume v = unwrap(array_.create_volume(spec));
    return created("volumes", v.id, v.revision, volume_view(array_, v));
  });
}

Reply Endpoints::get_volume(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "volume");
  return on_model(c, [&] {
    const Volume* v = array_.volume(id);
    if (v == nullptr) throw not_found("no volume " + std::to_string(id));
    return Reply(200, volume_view(array_, *v), v->revision);
  });
}

Reply Endpoints::update_volume(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "volume");
  const Precondition pre = parse_if_match(c.http);
  const json body = json_body(c, true);
  FieldReader f(body,
                {"name", "capacity_bytes", "preferred_controller", "min_iops", "max_iops",
                 "burst_iops", "qos_policy_id", "pool_id", "raid_type", "provisioning"},
                kVolumeReadOnly);
  no_nulls(f, {"name", "capacity_bytes", "preferred_controller", "pool_id", "raid_type",
               "provisioning"});
  VolumePatch patch;
  patch.name = f.string("name");
  patch.capacity_bytes = f.size("capacity_bytes");
  patch.preferred_controller = f.controller_id("preferred_controller");
  read_qos_patch(f, patch);
  patch.qos_policy_id = f.nullable_integer("qos_policy_id");
  const auto pool_id = f.integer("pool_id");
  const auto raid_type = f.raid_type("raid_type");
  const auto provisioning = f.provisioning("provisioning");
  return on_model(c, [&] {
    const Volume* v = array_.volume(id);
    if (v == nullptr) throw not_found("no volume " + std::to_string(id));
    auto expected = expected_revision(pre, v->revision, "volume " + std::to_string(id));
    // Immutable fields may be echoed back unchanged (GET, edit, PATCH); a change is 422.
    if (pool_id && *pool_id != v->pool_id) {
      immutable("pool_id", "volume", std::to_string(v->pool_id), std::to_string(*pool_id));
    }
    if (raid_type && *raid_type != v->raid_type) {
      immutable("raid_type", "volume", std::string(raid::raid_type_name(v->raid_type)),
                std::string(raid::raid_type_name(*raid_type)));
    }
    if (provisioning && *provisioning != v->provisioning) {
      immutable("provisioning", "volume", std::string(to_string(v->provisioning)),
                std::string(to_string(*provisioning)));
    }
    Volume updated = unwrap(array_.update_volume(id, patch, expected));
    return Reply(200, volume_view(array_, updated), updated.revision);
  });
}

Reply Endpoints::delete_volume(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "volume");
  const Precondition pre = parse_if_match(c.http);
  return on_model(c, [&] {
    const Volume* v = array_.volume(id);
    if (v == nullptr) throw not_found("no volume " + std::to_string(id));
    check(array_.delete_volume(
        id, expected_revision(pre, v->revision, "volume " + std::to_string(id))));
    return no_content();
  });
}

// ---------------------------------------------------------------------------------------
// Hosts

Reply Endpoints::list_hosts(const Call& c) {
  const ListQuery q = parse_list_query(c.http, {}, {"name"});
  return on_model(c, [&] {
    Pager page(q);
    for (const auto& [id, h] : array_.hosts()) {
      if (matches(q, "name", h.name)) page.offer([this, &h = h] { return host_view(array_, h); });
    }
    return page.reply();
  });
}

Reply Endpoints::create_host(const Call& c) {
  no_query(c.http);
  const json body = json_body(c, false);
  FieldReader f(body, {"name", "description", "initiators"}, kHostReadOnly);
  HostSpec spec;
  spec.name = f.required_string("name");
  spec.description = f.string("description").value_or("");
  spec.initiators = f.initiators("initiators").value_or(std::vector<Initiator>{});
  return on_model(c, [&] {
    Host h = unwrap(array_.create_host(spec));
    return created("hosts", h.id, h.revision, host_view(array_, h));
  });
}

Reply Endpoints::get_host(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "host");
  return on_model(c, [&] {
    const Host* h = array_.host(id);
    if (h == nullptr) throw not_found("no host " + std::to_string(id));
    return Reply(200, host_view(array_, *h), h->revision);
  });
}

Reply Endpoints::update_host(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "host");
  const Precondition pre = parse_if_match(c.http);
  const json body = json_body(c, true);
  FieldReader f(body, {"name", "description", "initiators"}, kHostReadOnly);
  no_nulls(f, {"name", "description", "initiators"});
  HostPatch patch;
  patch.name = f.string("name");
  patch.description = f.string("description");
  patch.initiators = f.initiators("initiators");
  return on_model(c, [&] {
    const Host* h = array_.host(id);
    if (h == nullptr) throw not_found("no host " + std::to_string(id));
    auto expected = expected_revision(pre, h->revision, "host " + std::to_string(id));
    Host updated = unwrap(array_.update_host(id, patch, expected));
    return Reply(200, host_view(array_, updated), updated.revision);
  });
}

Reply Endpoints::delete_host(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "host");
  const Precondition pre = parse_if_match(c.http);
  return on_model(c, [&] {
    const Host* h = array_.host(id);
    if (h == nullptr) throw not_found("no host " + std::to_string(id));
    check(
        array_.delete_host(id, expected_revision(pre, h->revision, "host " + std::to_string(id))));
    return no_content();
  });
}

// ---------------------------------------------------------------------------------------
// Mappings

Reply Endpoints::list_mappings(const Call& c) {
  const ListQuery q = parse_list_query(c.http, {"volume_id", "host_id"});
  return on_model(c, [&] {
    Pager page(q);
    for (const auto& [id, m] : array_.mappings()) {
      if (matches(q, "volume_id", m.volume_id) && matches(q, "host_id", m.host_id))
        page.offer([&m = m] { return mapping_view(m); });
    }
    return page.reply();
  });
}

Reply Endpoints::create_mapping(const Call& c) {
  no_query(c.http);
  const json body = json_body(c, false);
  FieldReader f(body, {"volume_id", "host_id", "lun", "access"}, kMappingReadOnly);
  MappingSpec spec;
  spec.volume_id = f.required_integer("volume_id");
  spec.host_id = f.required_integer("host_id");
  spec.lun = f.integer("lun");
  spec.access = f.access("access").value_or(MappingAccess::kReadWrite);
  return on_model(c, [&] {
    Mapping m = unwrap(array_.create_mapping(spec));
    return created("mappings", m.id, m.revision, mapping_view(m));
  });
}

Reply Endpoints::get_mapping(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "mapping");
  return on_model(c, [&] {
    const Mapping* m = array_.mapping(id);
    if (m == nullptr) throw not_found("no mapping " + std::to_string(id));
    return Reply(200, mapping_view(*m), m->revision);
  });
}

Reply Endpoints::delete_mapping(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "mapping");
  const Precondition pre = parse_if_match(c.http);
  return on_model(c, [&] {
    const Mapping* m = array_.mapping(id);
    if (m == nullptr) throw not_found("no mapping " + std::to_string(id));
    check(array_.delete_mapping(
        id, expected_revision(pre, m->revision, "mapping " + std::to_string(id))));
    return no_content();
  });
}

// ---------------------------------------------------------------------------------------
// QoS policies

Reply Endpoints::list_qos_policies(const Call& c) {
  const ListQuery q = parse_list_query(c.http, {}, {"name"});
  return on_model(c, [&] {
    Pager page(q);
    for (const auto& [id, p] : array_.qos_policies()) {
      if (matches(q, "name", p.name)) page.offer([this, &p = p] { return qos_policy_view(array_, p); });
    }
    return page.reply();
  });
}

Reply Endpoints::create_qos_policy(const Call& c) {
  no_query(c.http);
  const json body = json_body(c, false);
  FieldReader f(body, {"name", "min_iops", "max_iops", "burst_iops"}, kQosReadOnly);
  QosPolicySpec spec;
  spec.name = f.required_string("name");
  spec.qos = read_qos(f);
  return on_model(c, [&] {
    QosPolicy q = unwrap(array_.create_qos_policy(spec));
    return created("qos-policies", q.id, q.revision, qos_policy_view(array_, q));
  });
}

Reply Endpoints::get_qos_policy(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "QoS policy");
  return on_model(c, [&] {
    const QosPolicy* q = array_.qos_policy(id);
    if (q == nullptr) throw not_found("no QoS policy " + std::to_string(id));
    return Reply(200, qos_policy_view(array_, *q), q->revision);
  });
}

Reply Endpoints::update_qos_policy(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "QoS policy");
  const Precondition pre = parse_if_match(c.http);
  const json body = json_body(c, true);
  FieldReader f(body, {"name", "min_iops", "max_iops", "burst_iops"}, kQosReadOnly);
  no_nulls(f, {"name"});
  QosPolicyPatch patch;
  patch.name = f.string("name");
  read_qos_patch(f, patch);
  return on_model(c, [&] {
    const QosPolicy* q = array_.qos_policy(id);
    if (q == nullptr) throw not_found("no QoS policy " + std::to_string(id));
    auto expected = expected_revision(pre, q->revision, "QoS policy " + std::to_string(id));
    QosPolicy updated = unwrap(array_.update_qos_policy(id, patch, expected));
    return Reply(200, qos_policy_view(array_, updated), updated.revision);
  });
}

Reply Endpoints::delete_qos_policy(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "QoS policy");
  const Precondition pre = parse_if_match(c.http);
  return on_model(c, [&] {
    const QosPolicy* q = array_.qos_policy(id);
    if (q == nullptr) throw not_found("no QoS policy " + std::to_string(id));
    check(array_.delete_qos_policy(
        id, expected_revision(pre, q->revision, "QoS policy " + std::to_string(id))));
    return no_content();
  });
}

}  // namespace afasim::api
