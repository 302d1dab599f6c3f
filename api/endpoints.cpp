#include "api/endpoints.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

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

constexpr std::int64_t kDefaultLimit = 100;
constexpr std::int64_t kMaxLimit = 1000;
constexpr std::int64_t kIdMax = INT64_MAX;

std::string quote_json(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

// The {id} of the path: a positive decimal integer, else no such object (404).
Id parse_id(const Call& c, const std::string& kind) {
  const std::string& s = c.id_segment;
  Id id = 0;
  bool digits = !s.empty();
  for (char ch : s) digits = digits && ch >= '0' && ch <= '9';
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  if (!digits || ec != std::errc() || end != s.data() + s.size() || id <= 0) {
    std::string shown = s.size() > 40 ? s.substr(0, 40) + "..." : s;
    throw not_found("no " + kind + " " + quote_json(shown) + " (ids are positive integers)");
  }
  return id;
}

std::string lower_trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  s = s.substr(b);
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The body of a POST or PATCH: a JSON object sent as application/json (or, for PATCH,
// application/merge-patch+json, whose semantics the PATCH handlers follow).
json json_body(const Call& c, bool patch) {
  const auto& r = c.http;
  if (r.has_header("Content-Type")) {
    std::string type = r.get_header_value("Content-Type");
    type = lower_trim(type.substr(0, type.find(';')));
    const bool ok = type == "application/json" || (patch && type == "application/merge-patch+json");
    if (!ok) {
      throw ApiError(415, problem::kUnsupportedMediaType,
                     "Content-Type " + quote_json(type) +
                         " is not accepted; send application/json" +
                         (patch ? " or application/merge-patch+json" : ""));
    }
  } else if (!r.body.empty()) {
    throw ApiError(415, problem::kUnsupportedMediaType,
                   "the request has a body but no Content-Type; send application/json");
  }
  return parse_body_object(r.body);
}

Precondition parse_if_match(const httplib::Request& r) {
  Precondition p;
  if (!r.has_header("If-Match")) return p;
  p.present = true;
  const std::string v = r.get_header_value("If-Match");
  std::size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && (v[i] == ' ' || v[i] == ',' || v[i] == '\t')) ++i;
    if (i >= v.size()) break;
    if (v[i] == '*') {
      p.any = true;
      ++i;
      continue;
    }
    const bool weak = v.compare(i, 2, "W/") == 0;
    if (weak) i += 2;
    if (i >= v.size() || v[i] != '"') break;  // malformed: what was read so far stands
    const std::size_t close = v.find('"', i + 1);
    if (close == std::string::npos) break;
    const std::string tag = v.substr(i + 1, close - i - 1);
    i = close + 1;
    if (weak) continue;  // If-Match compares strongly: a weak tag never matches
    // Our ETags are "<revision>-<digest>"; If-Match compares the revision (docs/api.md).
    std::uint64_t rev = 0;
    const auto [end, ec] = std::from_chars(tag.data(), tag.data() + tag.size(), rev);
    if (ec == std::errc() && end != tag.data() && (end == tag.data() + tag.size() || *end == '-'))
      p.revisions.push_back(rev);
  }
  return p;
}

// The revision to hand the model for `pre`, or 412 when `pre` does not match `current`.
std::optional<std::uint64_t> expected_revision(const Precondition& pre, std::uint64_t current,
                                               const std::string& what) {
  if (!pre.present) return std::nullopt;
  if (pre.any) return current;
  if (std::find(pre.revisions.begin(), pre.revisions.end(), current) != pre.revisions.end())
    return current;
  throw ApiError(412, problem::kPreconditionFailed,
                 what + " is at revision " + std::to_string(current) +
                     "; If-Match does not name it (GET it again for its current ETag)");
}

// limit, offset and the filters a list accepts; anything else is 400.
struct ListQuery {
  std::int64_t offset = 0;
  std::int64_t limit = kDefaultLimit;
  std::map<std::string, std::int64_t> ids;     // integer filters
  std::map<std::string, std::string> strings;  // string filters
};

ListQuery parse_list_query(const httplib::Request& r, std::vector<std::string> id_filters = {},
                           std::vector<std::string> string_filters = {}) {
  ListQuery q;
  std::set<std::string> seen;
  for (const auto& [name, value] : r.params) {
    if (!seen.insert(name).second) throw bad_request("query parameter " + name + " is given twice");
    if (name == "limit") {
      q.limit = parse_query_integer(name, value, 0, kMaxLimit);
    } else if (name == "offset") {
      q.offset = parse_query_integer(name, value, 0, INT64_MAX);
    } else if (std::find(id_filters.begin(), id_filters.end(), name) != id_filters.end()) {
      q.ids[name] = parse_query_integer(name, value, 1, kIdMax);
    } else if (std::find(string_filters.begin(), string_filters.end(), name) !=
               string_filters.end()) {
      q.strings[name] = value;
    } else {
      std::string accepted = "limit, offset";
      for (const auto& f : id_filters) accepted += ", " + f;
      for (const auto& f : string_filters) accepted += ", " + f;
      throw ApiError(
          400, problem::kBadRequest,
          "unknown query parameter " + quote_json(name) + "; accepted here: " + accepted);
    }
  }
  return q;
}

// Query strings on a path that takes none are refused too, so that a typo is never ignored.
// (r.params would also hold the fields of a form-encoded body: read the target instead.)
void no_query(const httplib::Request& r) {
  const std::size_t q = r.target.find('?');
  if (q != std::string::npos && q + 1 < r.target.size()) {
    std::string query = r.target.substr(q + 1, 40);
    throw bad_request("this resource takes no query parameters, got " + quote_json(query));
  }
}

// Collects one page of a list as items are offered in order.
class Pager {
 public:
  explicit Pager(const ListQuery& q) : q_(q) {}
  template <typename Make>
  void offer(Make&& make) {
    if (total_ >= q_.offset && total_ - q_.offset < q_.limit) items_.push_back(make());
    ++total_;
  }
  Reply reply() {
    return Reply(200, json{{"items", std::move(items_)},
                           {"total", total_},
                           {"offset", q_.offset},
                           {"limit", q_.limit}});
  }

 private:
  const ListQuery& q_;
  json items_ = json::array();
  std::int64_t total_ = 0;
};

bool matches(const ListQuery& q, const char* filter, std::int64_t value) {
  auto it = q.ids.find(filter);
  return it == q.ids.end() || it->second == value;
}
bool matches(const ListQuery& q, const char* filter, const std::optional<std::int64_t>& value) {
  auto it = q.ids.find(filter);
  return it == q.ids.end() || (value && it->second == *value);
}
bool matches(const ListQuery& q, const char* filter, const std::string& value) {
  auto it = q.strings.find(filter);
  return it == q.strings.end() || it->second == value;
}

template <typename T>
T unwrap(sim::Result<T> r) {
  if (!r) throw from_status(r.status());
  return std::move(r).value();
}
void check(const sim::Status& s) {
  if (!s) throw from_status(s);
}

Reply created(const std::string& collection, Id id, std::uint64_t revision, json body) {
  Reply r(201, std::move(body), revision);
  r.location = std::string(kApiPrefix) + "/" + collection + "/" + std::to_string(id);
  return r;
}

Reply no_content() {
  return Reply(204, nullptr);
}

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
    "id", "effective_qos", "allocated_bytes", "state", "created_time_ns", "revision"};
const std::initializer_list<std::string_view> kPoolReadOnly = {"id", "raid_types", "volume_count",
                                                               "capacity", "revision"};
const std::initializer_list<std::string_view> kHostReadOnly = {"id", "mapping_count", "revision"};
const std::initializer_list<std::string_view> kMappingReadOnly = {"id", "revision"};
const std::initializer_list<std::string_view> kQosReadOnly = {"id", "volume_count", "revision"};

}  // namespace

Endpoints::Endpoints(Array& array, serve::ModelThread& model, SystemIdentity identity,
                     const controller::Telemetry* telemetry)
    : array_(array), model_(model), identity_(std::move(identity)), telemetry_(telemetry) {}

std::vector<Route> Endpoints::routes() {
  auto perf = [this](PerfHistory::Kind kind, std::string what) {
    return [this, kind, what](const Call& c) { return performance(c, kind, what); };
  };
  auto bind = [this](Reply (Endpoints::*fn)(const Call&)) {
    return [this, fn](const Call& c) { return (this->*fn)(c); };
  };
  return {
      {"GET", "/system", bind(&Endpoints::get_system)},
      {"GET", "/scrub", bind(&Endpoints::get_scrub)},
      {"PATCH", "/scrub", bind(&Endpoints::update_scrub)},
      {"GET", "/controllers", bind(&Endpoints::list_controllers)},
      {"GET", "/controllers/{id}", bind(&Endpoints::get_controller)},
      {"GET", "/datapacs", bind(&Endpoints::list_datapacs)},
      {"GET", "/datapacs/{id}", bind(&Endpoints::get_datapac)},
      {"GET", "/pools", bind(&Endpoints::list_pools)},
      {"POST", "/pools", bind(&Endpoints::create_pool)},
      {"GET", "/pools/{id}", bind(&Endpoints::get_pool)},
      {"PATCH", "/pools/{id}", bind(&Endpoints::update_pool)},
      {"DELETE", "/pools/{id}", bind(&Endpoints::delete_pool)},
      {"GET", "/volumes", bind(&Endpoints::list_volumes)},
      {"POST", "/volumes", bind(&Endpoints::create_volume)},
      {"GET", "/volumes/{id}", bind(&Endpoints::get_volume)},
      {"PATCH", "/volumes/{id}", bind(&Endpoints::update_volume)},
      {"DELETE", "/volumes/{id}", bind(&Endpoints::delete_volume)},
      {"GET", "/hosts", bind(&Endpoints::list_hosts)},
      {"POST", "/hosts", bind(&Endpoints::create_host)},
      {"GET", "/hosts/{id}", bind(&Endpoints::get_host)},
      {"PATCH", "/hosts/{id}", bind(&Endpoints::update_host)},
      {"DELETE", "/hosts/{id}", bind(&Endpoints::delete_host)},
      {"GET", "/mappings", bind(&Endpoints::list_mappings)},
      {"POST", "/mappings", bind(&Endpoints::create_mapping)},
      {"GET", "/mappings/{id}", bind(&Endpoints::get_mapping)},
      {"DELETE", "/mappings/{id}", bind(&Endpoints::delete_mapping)},
      {"GET", "/qos-policies", bind(&Endpoints::list_qos_policies)},
      {"POST", "/qos-policies", bind(&Endpoints::create_qos_policy)},
      {"GET", "/qos-policies/{id}", bind(&Endpoints::get_qos_policy)},
      {"PATCH", "/qos-policies/{id}", bind(&Endpoints::update_qos_policy)},
      {"DELETE", "/qos-policies/{id}", bind(&Endpoints::delete_qos_policy)},
      {"GET", "/events", bind(&Endpoints::list_events)},
      {"GET", "/alerts", bind(&Endpoints::list_alerts)},
      {"GET", "/system/performance", perf(PerfHistory::Kind::kArray, "system")},
      {"GET", "/controllers/{id}/performance", perf(PerfHistory::Kind::kController, "controller")},
      {"GET", "/volumes/{id}/performance", perf(PerfHistory::Kind::kVolume, "volume")},
      {"GET", "/drives/{id}/performance", perf(PerfHistory::Kind::kDrive, "drive")},
      {"GET", "/faults", bind(&Endpoints::list_faults)},
      {"POST", "/faults", bind(&Endpoints::create_fault)},
      {"GET", "/faults/{id}", bind(&Endpoints::get_fault)},
      {"GET", "/openapi.json", bind(&Endpoints::get_openapi)},
  };
}

// ---------------------------------------------------------------------------------------
// System and hardware

Reply Endpoints::get_system(const Call& c) {
  no_query(c.http);
  return on_model([&] { return Reply(200, system_view(array_, identity_)); });
}

Reply Endpoints::get_scrub(const Call& c) {
  no_query(c.http);
  return on_model([&] { return Reply(200, scrub_view(array_.data_path())); });
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
  return on_model([&] {
    raid::ScrubOptions o = array_.data_path().scrub_options();
    if (enabled) o.enabled = *enabled;
    if (rate) o.bytes_per_second = *rate;
    check(array_.set_scrub_options(o));
    return Reply(200, scrub_view(array_.data_path()));
  });
}

Reply Endpoints::list_controllers(const Call& c) {
  const ListQuery q = parse_list_query(c.http);
  return on_model([&] {
    Pager page(q);
    for (const auto& ctl : array_.controllers()) page.offer([&] { return controller_view(ctl); });
    return page.reply();
  });
}

Reply Endpoints::get_controller(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "controller");
  return on_model([&] {
    const ControllerInfo* ctl = array_.controller(id);
    if (ctl == nullptr) throw not_found("no controller " + std::to_string(id));
    return Reply(200, controller_view(*ctl));
  });
}

Reply Endpoints::list_datapacs(const Call& c) {
  const ListQuery q = parse_list_query(c.http);
  return on_model([&] {
    Pager page(q);
    for (const auto& d : array_.datapacs()) page.offer([&] { return datapac_view(array_, d); });
    return page.reply();
  });
}

Reply Endpoints::get_datapac(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "DataPac");
  return on_model([&] {
    const DataPacInfo* d = array_.datapac(id);
    if (d == nullptr) throw not_found("no DataPac " + std::to_string(id));
    return Reply(200, datapac_view(array_, *d));
  });
}

// ---------------------------------------------------------------------------------------
// Pools

Reply Endpoints::list_pools(const Call& c) {
  const ListQuery q = parse_list_query(c.http, {}, {"name"});
  return on_model([&] {
    Pager page(q);
    for (const auto& [id, p] : array_.pools()) {
      if (matches(q, "name", p.name)) page.offer([&] { return pool_view(array_, p); });
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
  return on_model([&] {
    Pool p = unwrap(array_.create_pool(spec));
    return created("pools", p.id, p.revision, pool_view(array_, p));
  });
}

Reply Endpoints::get_pool(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "pool");
  return on_model([&] {
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
  return on_model([&] {
    const Pool* p = array_.pool(id);
    if (p == nullptr) throw not_found("no pool " + std::to_string(id));
    auto expected = expected_revision(pre, p->revision, "pool " + std::to_string(id));
    if (dps && *dps != p->datapac_ids) {
      immutable("datapac_ids", "pool", json(p->datapac_ids).dump(), json(*dps).dump());
    }
    Pool updated = unwrap(array_.update_pool(id, patch, expected));
    return Reply(200, pool_view(array_, updated), updated.revision);
  });
}

Reply Endpoints::delete_pool(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "pool");
  const Precondition pre = parse_if_match(c.http);
  return on_model([&] {
    const Pool* p = array_.pool(id);
    if (p == nullptr) throw not_found("no pool " + std::to_string(id));
    check(
        array_.delete_pool(id, expected_revision(pre, p->revision, "pool " + std::to_string(id))));
    return no_content();
  });
}

// ---------------------------------------------------------------------------------------
// Volumes

Reply Endpoints::list_volumes(const Call& c) {
  const ListQuery q = parse_list_query(c.http, {"pool_id", "qos_policy_id"}, {"name"});
  return on_model([&] {
    Pager page(q);
    for (const auto& [id, v] : array_.volumes()) {
      if (matches(q, "pool_id", v.pool_id) && matches(q, "qos_policy_id", v.qos_policy_id) &&
          matches(q, "name", v.name)) {
        page.offer([&] { return volume_view(array_, v); });
      }
    }
    return page.reply();
  });
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
  return on_model([&] {
    if (raid_type) {
      spec.raid_type = *raid_type;
    } else {
      // Default: RAID10 where the pool offers it, else the pool's other type. When the pool
      // is unknown or ambiguous, create_volume says so.
      const Pool* p = spec.pool_id                 ? array_.pool(*spec.pool_id)
                      : array_.pools().size() == 1 ? &array_.pools().begin()->second
                                                   : nullptr;
      if (p != nullptr) spec.raid_type = array_.raid_types_offered(*p).front();
    }
    Volume v = unwrap(array_.create_volume(spec));
    return created("volumes", v.id, v.revision, volume_view(array_, v));
  });
}

Reply Endpoints::get_volume(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "volume");
  return on_model([&] {
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
  return on_model([&] {
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
  return on_model([&] {
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
  return on_model([&] {
    Pager page(q);
    for (const auto& [id, h] : array_.hosts()) {
      if (matches(q, "name", h.name)) page.offer([&] { return host_view(array_, h); });
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
  return on_model([&] {
    Host h = unwrap(array_.create_host(spec));
    return created("hosts", h.id, h.revision, host_view(array_, h));
  });
}

Reply Endpoints::get_host(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "host");
  return on_model([&] {
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
  return on_model([&] {
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
  return on_model([&] {
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
  return on_model([&] {
    Pager page(q);
    for (const auto& [id, m] : array_.mappings()) {
      if (matches(q, "volume_id", m.volume_id) && matches(q, "host_id", m.host_id))
        page.offer([&] { return mapping_view(m); });
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
  return on_model([&] {
    Mapping m = unwrap(array_.create_mapping(spec));
    return created("mappings", m.id, m.revision, mapping_view(m));
  });
}

Reply Endpoints::get_mapping(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "mapping");
  return on_model([&] {
    const Mapping* m = array_.mapping(id);
    if (m == nullptr) throw not_found("no mapping " + std::to_string(id));
    return Reply(200, mapping_view(*m), m->revision);
  });
}

Reply Endpoints::delete_mapping(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "mapping");
  const Precondition pre = parse_if_match(c.http);
  return on_model([&] {
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
  return on_model([&] {
    Pager page(q);
    for (const auto& [id, p] : array_.qos_policies()) {
      if (matches(q, "name", p.name)) page.offer([&] { return qos_policy_view(array_, p); });
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
  return on_model([&] {
    QosPolicy q = unwrap(array_.create_qos_policy(spec));
    return created("qos-policies", q.id, q.revision, qos_policy_view(array_, q));
  });
}

Reply Endpoints::get_qos_policy(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "QoS policy");
  return on_model([&] {
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
  return on_model([&] {
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
  return on_model([&] {
    const QosPolicy* q = array_.qos_policy(id);
    if (q == nullptr) throw not_found("no QoS policy " + std::to_string(id));
    check(array_.delete_qos_policy(
        id, expected_revision(pre, q->revision, "QoS policy " + std::to_string(id))));
    return no_content();
  });
}

// ---------------------------------------------------------------------------------------
// Events and the API's own description

static QueryParams query_params(const httplib::Request& r) {
  return QueryParams(r.params.begin(), r.params.end());
}

Reply Endpoints::list_events(const Call& c) {
  const EventQuery q = parse_event_query(query_params(c.http));
  const bool filtered = q.since_ns || q.min_severity || !q.kinds.empty() || q.object || q.after || q.before;
  return on_model([&] {
    json page = event_page(array_.recent_events(), q);
    // Unfiltered, `total` counts every event ever logged, those no longer in memory too.
    if (!filtered) page["total"] = array_.events(0, 0).total;
    return Reply(200, std::move(page));
  });
}

Reply Endpoints::list_alerts(const Call& c) {
  const ListQuery q = parse_list_query(c.http);
  return on_model([&] {
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
  return on_model([&] {
    const std::string object = kind == PerfHistory::Kind::kArray ? "system" : what + "/" + std::to_string(id);
    bool exists = true;
    switch (kind) {
      case PerfHistory::Kind::kArray: break;
      case PerfHistory::Kind::kController: exists = array_.controller(id) != nullptr; break;
      case PerfHistory::Kind::kVolume: exists = array_.volume(id) != nullptr; break;
      case PerfHistory::Kind::kDrive: exists = array_.drive(id) != nullptr; break;
    }
    if (!exists) throw not_found("no " + what + " " + std::to_string(id));
    // Drives are kept by index (id − 1).
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
  return on_model([&] {
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
  return on_model([&] {
    controller::FaultRecord r = unwrap(array_.inject_fault(spec));
    Reply reply(201, fault_view(r));
    reply.location = std::string(kApiPrefix) + "/faults/" + std::to_string(r.id);
    return reply;
  });
}

Reply Endpoints::get_fault(const Call& c) {
  no_query(c.http);
  const Id id = parse_id(c, "fault");
  return on_model([&] {
    for (const auto& f : array_.faults())
      if (f.id == id) return Reply(200, fault_view(f));
    throw not_found("no fault " + std::to_string(id));
  });
}

Reply Endpoints::get_openapi(const Call& c) {
  no_query(c.http);
  static const json doc = json::parse(openapi_document());
  return Reply(200, doc);
}

}  // namespace afasim::api
