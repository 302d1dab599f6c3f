#include "tests/store/store_test_util.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace afasim::store::testing {

TempDir::TempDir() {
  const std::string tmpl =
      (std::filesystem::temp_directory_path() / "afasim-store-test-XXXXXX").string();
  std::string buf = tmpl;
  REQUIRE(::mkdtemp(buf.data()) != nullptr);
  path_ = buf;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {
std::string opt(const std::optional<std::int64_t>& v) {
  return v ? std::to_string(*v) : "null";
}

std::string qos(const controller::QosSettings& q) {
  return "min=" + opt(q.min_iops) + " max=" + opt(q.max_iops) + " burst=" + opt(q.burst_iops);
}

template <typename T>
std::string list(const std::vector<T>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}
}  // namespace

std::string dump(const controller::Snapshot& s) {
  std::ostringstream o;
  for (const auto& p : s.pools)
    o << "pool " << p.id << " name=" << p.name << " datapacs=" << list(p.datapac_ids)
      << " thresholds=" << list(p.space_thresholds_percent) << " rev=" << p.revision << "\n";
  for (const auto& q : s.qos_policies)
    o << "qos_policy " << q.id << " name=" << q.name << " " << qos(q.qos) << " rev=" << q.revision
      << "\n";
  for (const auto& v : s.volumes)
    o << "volume " << v.id << " name=" << v.name << " pool=" << v.pool_id
      << " capacity_bytes=" << v.capacity_bytes << " raid=" << raid::raid_type_name(v.raid_type)
      << " prov=" << controller::to_string(v.provisioning) << " pref=" << v.preferred_controller
      << " " << qos(v.qos) << " policy=" << opt(v.qos_policy_id)
      << " state=" << controller::to_string(v.state)
      << " created=" << v.created_time_ns << " rev=" << v.revision << "\n";
  for (const auto& h : s.hosts) {
    o << "host " << h.id << " name=" << h.name << " desc=" << h.description << " initiators=";
    for (const auto& i : h.initiators)
      o << controller::to_string(i.type) << ":" << i.address << ",";
    o << " rev=" << h.revision << "\n";
  }
  for (const auto& m : s.mappings)
    o << "mapping " << m.id << " volume=" << m.volume_id << " host=" << m.host_id
      << " lun=" << m.lun << " access=" << controller::to_string(m.access) << " rev=" << m.revision
      << "\n";
  for (const auto& x : s.extents) {
    o << "extent " << x.volume_id << "/" << x.extent_index << " raid=" << raid::raid_type_name(x.raid_type)
      << " missing=" << x.missing << " members=";
    for (const auto& m : x.members) o << m.drive << ":" << m.chunk << ",";
    o << "\n";
  }
  for (const auto& e : s.events)
    o << "event " << e.id << " t=" << e.time_ns << " sev=" << controller::to_string(e.severity)
      << " cat=" << e.category << " obj=" << e.object << " msg=" << e.message << "\n";
  for (const auto& [k, v] : s.meta) o << "meta " << k << "=" << v << "\n";
  return o.str();
}

std::string dump(const controller::Array& a) {
  controller::Snapshot s;
  for (const auto& [id, p] : a.pools()) s.pools.push_back(p);
  for (const auto& [id, q] : a.qos_policies()) s.qos_policies.push_back(q);
  for (const auto& [id, v] : a.volumes()) {
    s.volumes.push_back(v);
    for (auto& x : a.data_path().extent_records(id)) s.extents.push_back(std::move(x));
  }
  for (const auto& [id, h] : a.hosts()) s.hosts.push_back(h);
  for (const auto& [id, m] : a.mappings()) s.mappings.push_back(m);
  auto page = a.events(0, a.event_count());
  s.events.assign(page.items.rbegin(), page.items.rend());
  return dump(s);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  REQUIRE(f.good());
  f << bytes;
  f.close();
  REQUIRE(f.good());
}

}  // namespace afasim::store::testing
