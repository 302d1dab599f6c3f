#include "store/tables.h"

#include <optional>
#include <vector>

namespace afasim::store {

using controller::Id;

namespace {

// The leading "id" column of an object table, and its revision column.
template <typename T>
Column<T> id_column() {
  return field<T>("id", [](auto& t) -> auto& { return t.id; });
}
template <typename T>
Column<T> revision_column() {
  return field<T>("revision", [](auto& t) -> auto& { return t.revision; });
}
template <typename T>
Column<T> name_column() {
  return field<T>("name", [](auto& t) -> auto& { return t.name; });
}
// min_iops, max_iops, burst_iops of T::qos (NULL when unset).
template <typename T>
std::vector<Column<T>> qos_columns() {
  return {field<T>("min_iops", [](auto& t) -> auto& { return t.qos.min_iops; }),
          field<T>("max_iops", [](auto& t) -> auto& { return t.qos.max_iops; }),
          field<T>("burst_iops", [](auto& t) -> auto& { return t.qos.burst_iops; })};
}
template <typename T>
std::string named(const char* kind, const T& t) {
  return std::string(kind) + " " + std::to_string(t.id) + " \"" + t.name + "\"";
}

// "3:120 23:4071 ..." — drive index and chunk index of each member.
std::string members_text(const std::vector<pool::ChunkAddr>& members) {
  std::string out;
  for (const auto& m : members) {
    if (!out.empty()) out += ' ';
    out += std::to_string(m.drive) + ':' + std::to_string(m.chunk);
  }
  return out;
}

// A decimal in [0, INT32_MAX] filling all of `s`.
std::optional<std::int32_t> parse_index(const std::string& s) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const long long v = std::stoll(s);
  if (v > INT32_MAX) return std::nullopt;
  return static_cast<std::int32_t>(v);
}

std::optional<std::vector<pool::ChunkAddr>> parse_members(const std::string& text) {
  std::vector<pool::ChunkAddr> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) return std::nullopt;
    const auto drive = parse_index(item.substr(0, colon));
    const auto chunk = parse_index(item.substr(colon + 1));
    if (!drive || !chunk) return std::nullopt;
    out.push_back({*drive, *chunk});
    pos = end + 1;
  }
  if (out.empty() || out.size() > static_cast<std::size_t>(pool::kMaxMembers)) return std::nullopt;
  return out;
}

Column<controller::ExtentRecord> members_column() {
  return {"members", [](const controller::ExtentRecord& e) { return Value(members_text(e.members)); },
          [](controller::ExtentRecord& e, const Value& v) {
            const auto* text = std::get_if<std::string>(&v);
            auto members = text ? parse_members(*text) : std::nullopt;
            if (members) e.members = std::move(*members);
            return members.has_value();
          }};
}

// The bit mask of lost members: one bit per member (the members column comes first).
Column<controller::ExtentRecord> missing_column() {
  return {"missing", [](const controller::ExtentRecord& e) { return Value(std::int64_t{e.missing}); },
          [](controller::ExtentRecord& e, const Value& v) {
            const auto* mask = std::get_if<std::int64_t>(&v);
            if (mask == nullptr || *mask < 0 || *mask >= (std::int64_t{1} << e.members.size())) return false;
            e.missing = static_cast<std::uint16_t>(*mask);
            return true;
          }};
}

}  // namespace

const Table<controller::Pool>& pools_table() {
  using T = controller::Pool;
  static const Table<T> t{"pools", "pool", 1, false, {id_column<T>(), name_column<T>(), revision_column<T>()},
                          [](const T& p) { return named("pool", p); }};
  return t;
}

const ChildTable<controller::Pool, Id>& pool_datapacs_table() {
  static const ChildTable<controller::Pool, Id> t{
      "pool_datapacs", "pool_id", nullptr, {field<Id>("datapac_id", [](auto& x) -> auto& { return x; })},
      [](controller::Pool& p) -> std::vector<Id>& { return p.datapac_ids; },
      [](const controller::Pool& p) -> const std::vector<Id>& { return p.datapac_ids; }, "DataPac"};
  return t;
}

const ChildTable<controller::Pool, int>& pool_thresholds_table() {
  static const ChildTable<controller::Pool, int> t{
      "pool_space_thresholds", "pool_id", "position", {field<int>("percent", [](auto& x) -> auto& { return x; })},
      [](controller::Pool& p) -> std::vector<int>& { return p.space_thresholds_percent; },
      [](const controller::Pool& p) -> const std::vector<int>& { return p.space_thresholds_percent; },
      "space threshold"};
  return t;
}

const Table<controller::QosPolicy>& qos_policies_table() {
  using T = controller::QosPolicy;
  static const Table<T> t = [] {
    Table<T> q{"qos_policies", "QoS policy", 1, false, {id_column<T>(), name_column<T>()}, [](const T& p) { return named("QoS policy", p); }};
    for (auto& c : qos_columns<T>()) q.columns.push_back(c);
    q.columns.push_back(revision_column<T>());
    return q;
  }();
  return t;
}

const Table<controller::Volume>& volumes_table() {
  using T = controller::Volume;
  static const Table<T> t = [] {
    Table<T> v{"volumes", "volume", 1, false,
               {id_column<T>(), name_column<T>(), field<T>("pool_id", [](auto& x) -> auto& { return x.pool_id; }),
                field<T>("capacity_bytes", [](auto& x) -> auto& { return x.capacity_bytes; }),
                field<T>("raid_type", [](auto& x) -> auto& { return x.raid_type; }),
                field<T>("provisioning", [](auto& x) -> auto& { return x.provisioning; }),
                field<T>("preferred_controller", [](auto& x) -> auto& { return x.preferred_controller; })},
               [](const T& x) { return named("volume", x); }};
    for (auto& c : qos_columns<T>()) v.columns.push_back(c);
    v.columns.push_back(field<T>("qos_policy_id", [](auto& x) -> auto& { return x.qos_policy_id; }));
    v.columns.push_back(field<T>("state", [](auto& x) -> auto& { return x.state; }));
    v.columns.push_back(field<T>("created_time_ns", [](auto& x) -> auto& { return x.created_time_ns; }));
    v.columns.push_back(revision_column<T>());
    return v;
  }();
  return t;
}

const Table<controller::Host>& hosts_table() {
  using T = controller::Host;
  static const Table<T> t{
      "hosts", "host", 1, false,
      {id_column<T>(), name_column<T>(), field<T>("description", [](auto& x) -> auto& { return x.description; }),
       revision_column<T>()},
      [](const T& h) { return named("host", h); }};
  return t;
}

const ChildTable<controller::Host, controller::Initiator>& host_initiators_table() {
  using C = controller::Initiator;
  static const ChildTable<controller::Host, C> t{
      "host_initiators", "host_id", "position",
      {field<C>("type", [](auto& i) -> auto& { return i.type; }),
       field<C>("address", [](auto& i) -> auto& { return i.address; })},
      [](controller::Host& h) -> std::vector<C>& { return h.initiators; },
      [](const controller::Host& h) -> const std::vector<C>& { return h.initiators; }, "initiator"};
  return t;
}

const Table<controller::Mapping>& mappings_table() {
  using T = controller::Mapping;
  static const Table<T> t{"mappings", "mapping", 1, false,
                          {id_column<T>(), field<T>("volume_id", [](auto& m) -> auto& { return m.volume_id; }),
                           field<T>("host_id", [](auto& m) -> auto& { return m.host_id; }),
                           field<T>("lun", [](auto& m) -> auto& { return m.lun; }),
                           field<T>("access", [](auto& m) -> auto& { return m.access; }), revision_column<T>()},
                          [](const T& m) {
                            return "mapping " + std::to_string(m.id) + " (volume " + std::to_string(m.volume_id) +
                                   " to host " + std::to_string(m.host_id) + " as LUN " + std::to_string(m.lun) + ")";
                          }};
  return t;
}

const Table<controller::ExtentRecord>& extents_table() {
  using T = controller::ExtentRecord;
  static const Table<T> t{"extents", "extent of volume", 2, false,
                          {field<T>("volume_id", [](auto& e) -> auto& { return e.volume_id; }),
                           field<T>("extent_index", [](auto& e) -> auto& { return e.extent_index; }),
                           field<T>("raid_type", [](auto& e) -> auto& { return e.raid_type; }), members_column(),
                           missing_column()},
                          [](const T& e) {
                            return "extent " + std::to_string(e.extent_index) + " of volume " + std::to_string(e.volume_id);
                          }};
  return t;
}

const Table<controller::Event>& events_table() {
  using T = controller::Event;
  static const Table<T> t{"events", "event", 1, true,
                          {id_column<T>(), field<T>("time_ns", [](auto& e) -> auto& { return e.time_ns; }),
                           field<T>("severity", [](auto& e) -> auto& { return e.severity; }),
                           field<T>("category", [](auto& e) -> auto& { return e.category; }),
                           field<T>("object", [](auto& e) -> auto& { return e.object; }),
                           field<T>("message", [](auto& e) -> auto& { return e.message; }),
                           // schema version 3 (issue 14): the user whose request made it
                           field<T>("actor", [](auto& e) -> auto& { return e.actor; })},
                          [](const T& e) { return "event " + std::to_string(e.id); }};
  return t;
}

const Table<MetaPair>& meta_table() {
  static const Table<MetaPair> t{"meta", "meta", 1, false,
                                 {field<MetaPair>("key", [](auto& m) -> auto& { return m.first; }),
                                  field<MetaPair>("value", [](auto& m) -> auto& { return m.second; })},
                                 [](const MetaPair& m) { return "meta \"" + m.first + "\""; }};
  return t;
}

}  // namespace afasim::store
