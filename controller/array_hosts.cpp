// The Array's hosts, mappings and QoS policies, and QoS admission control.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>
#include <set>

#include "controller/array.h"
#include "controller/array_detail.h"
#include "pool/space.h"
#include "qos/cost.h"
#include "sim/assert.h"

namespace afasim::controller {

using namespace array_detail;
using sim::Status;

namespace {

// 422 at the bound of `what`: "delete one first", or as many as it takes when a state saved
// before the bound holds more (review, round 24).
sim::Status at_bound(std::size_t held, std::size_t most, const char* what) {
  const std::size_t excess = held - most + 1;
  return sim::unprocessable("the array holds at most " + std::to_string(most) + " " + what + "; delete " +
                            (excess == 1 ? std::string("one") : std::to_string(excess)) + " first");
}

// The initiators as the array stores and compares them: a WWPN lower case and
// colon-separated ("21:00:00:24:ff:4b:8a:10"), an iSCSI name lower case, however they were
// written. iSCSI names are case-insensitive (RFC 3720 3.2.6.1; RFC 3722's stringprep folds
// them to lower case), so eui.02004567A425678D and eui.02004567a425678d are one initiator.
// REQUIRES: they passed check_initiators, so every FC address is 16 hex digits, with or
// without colons.
std::vector<Initiator> canonical_initiators(std::vector<Initiator> initiators) {
  for (auto& i : initiators) {
    if (i.type == InitiatorType::kIscsi)
      for (char& ch : i.address)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (i.type != InitiatorType::kFc) continue;
    std::string hex;
    for (char ch : i.address)
      if (ch != ':') hex += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string canon;
    for (std::size_t k = 0; k < hex.size(); k += 2) canon += (k ? ":" : "") + hex.substr(k, 2);
    i.address = canon;
  }
  return initiators;
}

// A host's description: at most 1024 bytes of text, without control characters (U+0000 to
// U+001F, U+007F, and the C1 controls U+0080 to U+009F) or bidirectional overrides (U+202A to
// U+202E, U+2066 to U+2069): `afasim host list` prints it to a terminal, which acts on an ESC
// or its C1 form CSI (colours, cursor moves, a new window title), the NUL and line ends break
// the table, and an override shows text in another order than it is (hostile round 36).
Status check_description(const std::string& description) {
  if (description.size() > 1024)
    return sim::unprocessable("description must be at most 1024 bytes of UTF-8 (got " +
                              std::to_string(description.size()) + ")");
  const auto byte = [&](std::size_t k) { return k < description.size() ? static_cast<unsigned char>(description[k]) : 0u; };
  for (std::size_t k = 0; k < description.size(); ++k) {
    const unsigned ch = byte(k);
    unsigned code = 0;
    if (ch < 0x20 || ch == 0x7f) code = ch;
    else if (ch == 0xc2 && byte(k + 1) >= 0x80 && byte(k + 1) <= 0x9f) code = byte(k + 1);  // U+0080..U+009F
    else if (ch == 0xe2 && byte(k + 1) == 0x80 && byte(k + 2) >= 0xaa && byte(k + 2) <= 0xae) code = 0x2000 + byte(k + 2) - 0x80;
    else if (ch == 0xe2 && byte(k + 1) == 0x81 && byte(k + 2) >= 0xa6 && byte(k + 2) <= 0xa9) code = 0x2040 + byte(k + 2) - 0x80;
    else continue;
    char detail[200];
    std::snprintf(detail, sizeof detail,
                  "description must not hold control characters (U+0000 to U+001F, U+007F to U+009F) or "
                  "bidirectional overrides (U+202A to U+202E, U+2066 to U+2069): U+%04X at byte %zu",
                  code, k);
    return sim::unprocessable(detail);
  }
  return Status::ok();
}

}  // namespace

// ---------------------------------------------------------------------------------------
// QoS settings and admission control

QosSettings Array::effective_qos_with(const Volume& v, const QosPolicy* policy) const {
  QosSettings q;
  if (v.qos_policy_id) {
    if (policy != nullptr && policy->id == *v.qos_policy_id) q = policy->qos;
    else if (const QosPolicy* p = qos_policy(*v.qos_policy_id)) q = p->qos;
  }
  return overlay_qos(q, v.qos);
}

std::vector<qos::Reservation> Array::reservations(const Volume* changed, const QosPolicy* policy) const {
  std::vector<qos::Reservation> out;
  auto add = [&](const Volume& v) {
    const QosSettings q = effective_qos_with(v, policy);
    if (q.min_iops && *q.min_iops > 0)
      out.push_back({v.id, v.name, static_cast<int>(v.preferred_controller - 1), v.raid_type, *q.min_iops});
  };
  for (const auto& [id, v] : volumes_)
    if (changed == nullptr || id != changed->id) add(v);
  if (changed != nullptr) add(*changed);
  return out;
}

std::array<std::int64_t, 2> Array::served_reservation_ppm() const {
  std::vector<qos::Reservation> now = reservations(nullptr, nullptr);
  for (qos::Reservation& r : now)
    if (const Id o = data_->owner(r.volume_id); o != 0) r.resource = static_cast<int>(o - 1);
  const std::vector<std::int64_t> ppm = qos::reserved_ppm(now, reservable_);
  return {ppm[0], ppm.size() > 1 ? ppm[1] : 0};
}

void Array::warn_reservations_after_takeover(Id survivor, Id lost) {
  const std::int64_t ppm = served_reservation_ppm()[static_cast<std::size_t>(survivor - 1)];
  if (ppm <= qos::kPartsPerMillion) return;
  const std::string s = ArrayContext::controller_name(survivor), l = ArrayContext::controller_name(lost);
  (void)log_event(Severity::kWarning, "qos", "controller/" + s,
                  "controller " + s + " now serves reservations (min_iops) that need " + qos::share_percent(ppm) +
                      " of what it can guarantee, with controller " + l +
                      " down: until it is back each min_iops there is held at " +
                      qos::share_percent(qos::kPartsPerMillion * qos::kPartsPerMillion / ppm) +
                      " of its value or more (in proportion; docs/qos.md \"Admission control\")");
}

void Array::note_reservation_holds(const std::array<std::int64_t, 2>& before) {
  const std::array<std::int64_t, 2> after = served_reservation_ppm();
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (after[i] == before[i] || std::max(after[i], before[i]) <= qos::kPartsPerMillion) continue;
    const std::string s = ArrayContext::controller_name(static_cast<Id>(i + 1));
    const std::string need = "controller " + s + "'s reservations (min_iops) now need " +
                             qos::share_percent(after[i]) + " of what it can guarantee";
    if (after[i] > qos::kPartsPerMillion)
      (void)log_event(Severity::kWarning, "qos", "controller/" + s,
                      need + ": each min_iops there is now held at " +
                          qos::share_percent(qos::kPartsPerMillion * qos::kPartsPerMillion / after[i]) +
                          " of its value or more (in proportion; docs/qos.md \"Admission control\")");
    else
      (void)log_event(Severity::kInfo, "qos", "controller/" + s, need + ": each min_iops there is held in full again");
  }
}

std::int64_t Array::reservation_share(const Volume& v, const QosSettings& q) const {
  // Capped at what the scheduler takes: only a state restored over-committed (admission
  // refuses more than 100 %) can hold a min_iops 1,000 times what a controller guarantees.
  return q.min_iops ? std::min(qos::kShareMaxPpm, qos::share_ppm({v.id, v.name, 0, v.raid_type, *q.min_iops}, reservable_))
                    : 0;
}

void Array::sync_qos(const Volume& v) {
  const QosSettings q = effective_qos(v);
  const qos::Settings s{q.min_iops, q.max_iops, q.burst_iops};
  const std::int64_t share = reservation_share(v, q);
  const Id owner = data_->owner(v.id);
  const int resource = static_cast<int>((owner != 0 ? owner : v.preferred_controller) - 1);
  qos::Scheduler& scheduler = data_->io().scheduler();
  if (!scheduler.has_volume(v.id)) {
    Status st = scheduler.add_volume(v.id, resource, s, share);
    AFASIM_ASSERT(st.is_ok(), "QoS scheduler refused a volume the array accepted: " + st.to_string());
    return;
  }
  if (scheduler.settings(v.id) != s || scheduler.share_ppm(v.id) != share) {
    Status st = scheduler.update_volume(v.id, s, share);
    AFASIM_ASSERT(st.is_ok(), "QoS scheduler refused settings the array accepted: " + st.to_string());
  }
  if (scheduler.resource_of(v.id) != resource) {
    Status st = scheduler.move_volume(v.id, resource);
    AFASIM_ASSERT(st.is_ok(), "QoS scheduler refused a move: " + st.to_string());
  }
}

// ---------------------------------------------------------------------------------------
// Hosts

sim::Result<Host> Array::create_host(const HostSpec& spec) {
  if (hosts_.size() >= kMaxHosts) return at_bound(hosts_.size(), kMaxHosts, "hosts");
  AFASIM_RETURN_IF_ERROR(check_name("host", spec.name));
  for (const auto& [id, h] : hosts_)
    if (h.name == spec.name) return sim::conflict("a host named \"" + spec.name + "\" exists (id " + std::to_string(id) + ")");
  AFASIM_RETURN_IF_ERROR(check_description(spec.description));
  if (spec.initiators.size() > 64) return sim::unprocessable("a host may have at most 64 initiators");
  AFASIM_RETURN_IF_ERROR(check_initiators(spec.initiators, 0, false));
  Host h;
  ChangeSet c;
  h.id = next_id("host", c);
  h.name = spec.name;
  h.description = spec.description;
  h.initiators = canonical_initiators(spec.initiators);
  AFASIM_RETURN_IF_ERROR(check_initiators(h.initiators, 0, true));
  c.put_hosts.push_back(h);
  c.events.push_back(make_event(Severity::kInfo, "host", object_name("host", h.id),
                                "host \"" + h.name + "\" created with " + std::to_string(h.initiators.size()) +
                                    " initiator(s)"));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return h;
}

sim::Result<Host> Array::update_host(Id id, const HostPatch& patch,
                                     std::optional<std::uint64_t> expected_revision) {
  const Host* cur = host(id);
  if (cur == nullptr) return sim::not_found("no host " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(cur->revision, expected_revision, "host " + std::to_string(id)));
  HostSpec merged{patch.name.value_or(cur->name), patch.description.value_or(cur->description),
                  patch.initiators.value_or(cur->initiators)};
  AFASIM_RETURN_IF_ERROR(check_name("host", merged.name));
  for (const auto& [oid, o] : hosts_)
    if (oid != id && o.name == merged.name) return sim::conflict("a host named \"" + merged.name + "\" exists");
  // Only a new description: one stored before the rule grew (C1 controls, overrides) does not
  // block a rename.
  if (patch.description) AFASIM_RETURN_IF_ERROR(check_description(merged.description));
  if (merged.initiators.size() > 64) return sim::unprocessable("a host may have at most 64 initiators");
  AFASIM_RETURN_IF_ERROR(check_initiators(merged.initiators, id, false));
  // Compared and stored in canonical form, as create_host does: PATCHed as written, a WWPN
  // without colons or in upper case slipped past its twin on another host.
  merged.initiators = canonical_initiators(std::move(merged.initiators));
  AFASIM_RETURN_IF_ERROR(check_initiators(merged.initiators, id, true));
  Host h = *cur;
  h.name = merged.name;
  h.description = merged.description;
  h.initiators = merged.initiators;
  ++h.revision;
  ChangeSet c;
  c.put_hosts.push_back(h);
  c.events.push_back(make_event(Severity::kInfo, "host", object_name("host", id), "host \"" + h.name + "\" updated"));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return h;
}

Status Array::delete_host(Id id, std::optional<std::uint64_t> expected_revision) {
  const Host* h = host(id);
  if (h == nullptr) return sim::not_found("no host " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(h->revision, expected_revision, "host " + std::to_string(id)));
  for (const auto& [mid, m] : mappings_)
    if (m.host_id == id)
      return sim::conflict("host " + std::to_string(id) + " has mapping " + std::to_string(mid) +
                           " (volume " + std::to_string(m.volume_id) + " as LUN " + std::to_string(m.lun) +
                           "); unmap it first");
  ChangeSet c;
  c.delete_hosts.push_back(id);
  c.events.push_back(make_event(Severity::kInfo, "host", object_name("host", id), "host \"" + h->name + "\" deleted"));
  return commit(c);
}

// ---------------------------------------------------------------------------------------
// Mappings

sim::Result<Mapping> Array::create_mapping(const MappingSpec& spec) {
  if (mappings_.size() >= kMaxMappings) return at_bound(mappings_.size(), kMaxMappings, "mappings");
  const Volume* v = volume(spec.volume_id);
  if (v == nullptr) return sim::not_found("no volume " + std::to_string(spec.volume_id));
  const Host* h = host(spec.host_id);
  if (h == nullptr) return sim::not_found("no host " + std::to_string(spec.host_id));
  std::set<std::int64_t> used;
  for (const auto& [id, m] : mappings_) {
    if (m.host_id != spec.host_id) continue;
    if (m.volume_id == spec.volume_id)
      return sim::conflict("volume " + std::to_string(spec.volume_id) + " is already mapped to host " +
                           std::to_string(spec.host_id) + " as LUN " + std::to_string(m.lun) + " (mapping " +
                           std::to_string(id) + ")");
    used.insert(m.lun);
  }
  std::int64_t lun = 0;
  if (spec.lun) {
    lun = *spec.lun;
    if (lun < 0 || lun > kMaxLun)
      return sim::unprocessable("lun must be between 0 and " + std::to_string(kMaxLun) + ", got " + std::to_string(lun));
    if (used.count(lun))
      return sim::conflict("LUN " + std::to_string(lun) + " is already used on host " + std::to_string(spec.host_id));
  } else {
    while (used.count(lun)) ++lun;
    if (lun > kMaxLun) return sim::conflict("host " + std::to_string(spec.host_id) + " has no free LUN");
  }
  Mapping m;
  ChangeSet c;
  m.id = next_id("mapping", c);
  m.volume_id = spec.volume_id;
  m.host_id = spec.host_id;
  m.lun = lun;
  m.access = spec.access;
  c.put_mappings.push_back(m);
  c.events.push_back(make_event(Severity::kInfo, "mapping", object_name("mapping", m.id),
                                "volume \"" + v->name + "\" mapped to host \"" + h->name + "\" as LUN " +
                                    std::to_string(lun) + " (" + std::string(to_string(m.access)) + ")"));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return m;
}

Status Array::delete_mapping(Id id, std::optional<std::uint64_t> expected_revision) {
  const Mapping* m = mapping(id);
  if (m == nullptr) return sim::not_found("no mapping " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(m->revision, expected_revision, "mapping " + std::to_string(id)));
  ChangeSet c;
  c.delete_mappings.push_back(id);
  c.events.push_back(make_event(Severity::kInfo, "mapping", object_name("mapping", id),
                                "volume " + std::to_string(m->volume_id) + " unmapped from host " +
                                    std::to_string(m->host_id) + " (LUN " + std::to_string(m->lun) + ")"));
  return commit(c);
}

// ---------------------------------------------------------------------------------------
// QoS policies

sim::Result<QosPolicy> Array::create_qos_policy(const QosPolicySpec& spec) {
  if (qos_policies_.size() >= kMaxQosPolicies) return at_bound(qos_policies_.size(), kMaxQosPolicies, "QoS policies");
  AFASIM_RETURN_IF_ERROR(check_name("QoS policy", spec.name));
  for (const auto& [id, q] : qos_policies_)
    if (q.name == spec.name) return sim::conflict("a QoS policy named \"" + spec.name + "\" exists (id " + std::to_string(id) + ")");
  AFASIM_RETURN_IF_ERROR(check_qos(spec.qos, "QoS policy"));
  QosPolicy q;
  ChangeSet c;
  q.id = next_id("qos_policy", c);
  q.name = spec.name;
  q.qos = spec.qos;
  c.put_qos_policies.push_back(q);
  c.events.push_back(make_event(Severity::kInfo, "qos", object_name("qos-policy", q.id),
                                "QoS policy \"" + q.name + "\" created: " + qos_text(q.qos)));
  AFASIM_RETURN_IF_ERROR(commit(c));
  return q;
}

sim::Result<QosPolicy> Array::update_qos_policy(Id id, const QosPolicyPatch& patch,
                                                std::optional<std::uint64_t> expected_revision) {
  const QosPolicy* cur = qos_policy(id);
  if (cur == nullptr) return sim::not_found("no QoS policy " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(cur->revision, expected_revision, "QoS policy " + std::to_string(id)));
  QosPolicy q = *cur;
  if (patch.name) {
    AFASIM_RETURN_IF_ERROR(check_name("QoS policy", *patch.name));
    for (const auto& [oid, o] : qos_policies_)
      if (oid != id && o.name == *patch.name) return sim::conflict("a QoS policy named \"" + *patch.name + "\" exists");
    q.name = *patch.name;
  }
  apply_qos_patch(q.qos, patch);
  // A patch that changes nothing is not a change: no new revision (other clients' If-Match
  // stays valid), no event; as for volumes.
  if (q.name == cur->name && q.qos == cur->qos) return q;
  AFASIM_RETURN_IF_ERROR(check_qos(q.qos, "QoS policy"));
  // Every volume under this policy must still have a consistent effective QoS.
  for (const auto& [vid, v] : volumes_) {
    if (v.qos_policy_id != id) continue;
    AFASIM_RETURN_IF_ERROR(check_qos(overlay_qos(q.qos, v.qos), "volume " + std::to_string(vid) + " (\"" + v.name + "\") under this policy"));
  }
  AFASIM_RETURN_IF_ERROR(qos::check_admission(reservations(nullptr, nullptr), reservations(nullptr, &q), reservable_));
  ++q.revision;
  ChangeSet c;
  c.put_qos_policies.push_back(q);
  c.events.push_back(make_event(Severity::kInfo, "qos", object_name("qos-policy", id),
                                "QoS policy \"" + q.name + "\" set to " + qos_text(q.qos)));
  const std::array<std::int64_t, 2> held_before = served_reservation_ppm();
  AFASIM_RETURN_IF_ERROR(commit(c));
  // In force for every volume of the policy from the next decision on.
  for (const auto& [vid, v] : volumes_)
    if (v.qos_policy_id == id) sync_qos(v);
  note_reservation_holds(held_before);
  return q;
}

Status Array::delete_qos_policy(Id id, std::optional<std::uint64_t> expected_revision) {
  const QosPolicy* q = qos_policy(id);
  if (q == nullptr) return sim::not_found("no QoS policy " + std::to_string(id));
  AFASIM_RETURN_IF_ERROR(check_revision(q->revision, expected_revision, "QoS policy " + std::to_string(id)));
  std::int64_t n = 0;
  for (const auto& [vid, v] : volumes_) n += v.qos_policy_id == id;
  if (n > 0)
    return sim::conflict("QoS policy " + std::to_string(id) + " is attached to " + std::to_string(n) +
                         " volume(s); detach it first");
  ChangeSet c;
  c.delete_qos_policies.push_back(id);
  c.events.push_back(make_event(Severity::kInfo, "qos", object_name("qos-policy", id),
                                "QoS policy \"" + q->name + "\" deleted"));
  return commit(c);
}

}  // namespace afasim::controller
