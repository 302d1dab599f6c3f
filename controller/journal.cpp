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
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}
}  // namespace

ChangeSet merged(const ChangeSet& first, const ChangeSet& then) {
  ChangeSet c = first;
  append(c.put_pools, then.put_pools);
  append(c.delete_pools, then.delete_pools);
  append(c.put_volumes, then.put_volumes);
  append(c.delete_volumes, then.delete_volumes);
  append(c.put_hosts, then.put_hosts);
  append(c.delete_hosts, then.delete_hosts);
  append(c.put_mappings, then.put_mappings);
  append(c.delete_mappings, then.delete_mappings);
  append(c.put_qos_policies, then.put_qos_policies);
  append(c.delete_qos_policies, then.delete_qos_policies);
  append(c.put_extents, then.put_extents);
  append(c.delete_extents, then.delete_extents);
  append(c.events, then.events);
  for (const auto& [k, v] : then.meta) c.meta[k] = v;
  return c;
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
