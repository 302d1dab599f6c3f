#include "controller/journal.h"

namespace afasim::controller {

bool ChangeSet::empty() const {
  return put_pools.empty() && delete_pools.empty() && put_volumes.empty() &&
         delete_volumes.empty() && put_hosts.empty() && delete_hosts.empty() &&
         put_mappings.empty() && delete_mappings.empty() && put_qos_policies.empty() &&
         delete_qos_policies.empty() && put_extents.empty() && delete_extents.empty() && events.empty() &&
         meta.empty();
}

namespace {
template <typename T>
void put_all(std::map<Id, T>& into, const std::vector<T>& items, const std::vector<Id>& deleted) {
  for (const T& item : items) into[item.id] = item;
  for (Id id : deleted) into.erase(id);
}
template <typename T>
std::vector<T> values(const std::map<Id, T>& m) {
  std::vector<T> v;
  v.reserve(m.size());
  for (const auto& [id, item] : m) v.push_back(item);
  return v;
}
}  // namespace

sim::Status MemoryJournal::commit(const ChangeSet& c) {
  if (fail_next_ > 0) {
    --fail_next_;
    return sim::unavailable("journal: injected commit failure");
  }
  put_all(pools_, c.put_pools, c.delete_pools);
  put_all(volumes_, c.put_volumes, c.delete_volumes);
  put_all(hosts_, c.put_hosts, c.delete_hosts);
  put_all(mappings_, c.put_mappings, c.delete_mappings);
  put_all(qos_policies_, c.put_qos_policies, c.delete_qos_policies);
  for (const auto& e : c.put_extents) extents_[{e.volume_id, e.extent_index}] = e;
  for (const auto& key : c.delete_extents) extents_.erase(key);
  for (Id v : c.delete_volumes)
    for (auto it = extents_.lower_bound({v, 0}); it != extents_.end() && it->first.first == v;)
      it = extents_.erase(it);
  events_.insert(events_.end(), c.events.begin(), c.events.end());
  for (const auto& [k, v] : c.meta) meta_[k] = v;
  ++commits_;
  return sim::Status::ok();
}

Snapshot MemoryJournal::snapshot() const {
  Snapshot s;
  s.pools = values(pools_);
  s.volumes = values(volumes_);
  s.hosts = values(hosts_);
  s.mappings = values(mappings_);
  s.qos_policies = values(qos_policies_);
  for (const auto& [k, e] : extents_) s.extents.push_back(e);
  s.events = events_;
  s.meta = meta_;
  return s;
}

}  // namespace afasim::controller
