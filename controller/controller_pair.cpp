// The controller pair (docs/controller-states.md): state machine, heartbeats and DataPac
// reservations, ALUA ownership, failover and failback, the link, the cache mode. Power and
// the vault: controller_power.cpp.
#include "controller/controller_pair.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "controller/io_orchestrator.h"
#include "sim/assert.h"

namespace afasim::controller {

using sim::Status;
using sim::Time;

namespace {
std::string seconds(Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", sim::to_seconds(t));
  return buf;
}
}  // namespace

ControllerPair::ControllerPair(ArrayContext& ctx, WriteCache& cache) : ctx_(ctx), cache_(cache) {
  // The array starts as it runs: both controllers active, mains on, supercaps charged.
  AFASIM_ASSERT(ctx.preset.controllers.count == 2, "the model is a dual-controller array");
  energy_joules_ = ctx.preset.supercaps.usable_energy_joules();
  energy_at_ns_ = ctx.sim.now();
  charging_ = true;
  // The cache mode holds from the start, not only after the first event that re-evaluates it:
  // write-back disabled, or a cache too large for the supercaps to vault, is write-through now.
  const double need = vault_energy_joules();
  for (Id c = 1; c <= 2; ++c) {
    auto [mode, reason] = cache_mode_of(c, need);
    ctl(c).mode = mode;
    ctl(c).mode_reason = std::move(reason);
  }
}

void ControllerPair::announce_cache_modes() {
  for (Id c = 1; c <= 2; ++c) {
    const Runtime& cr = ctl(c);
    if (cr.mode == CacheMode::kWriteThrough && ctx_.options.cache.write_back)
      ctx_.emit(Severity::kWarning, "cache", ArrayContext::controller_object(c),
                "controller " + name(c) + " cache write-through (" + cr.mode_reason + ")");
  }
}

// ---------------------------------------------------------------------------------------
// Views

ControllerInfo ControllerPair::info(Id c) const {
  ControllerInfo info;
  info.id = c;
  info.name = name(c);
  const Runtime& cr = ctl(c);
  info.state = cr.state;
  info.cache_mode = cr.mode;
  info.cache_mode_reason = cr.mode_reason;
  info.dirty_bytes = cache_.dirty_blocks(c) * WriteCache::kBlockBytes;
  info.cached_bytes = cache_.cached_blocks(c) * WriteCache::kBlockBytes;
  info.write_cache_bytes = cache_.capacity_bytes();
  const Id p = ArrayContext::peer_of(c);
  info.mirrored_bytes = serving(c) && mirror_reachable(p) ? cache_.dirty_blocks(p) * WriteCache::kBlockBytes : 0;
  ctx_.volumes.for_each([&](const VolumeRuntime& v) {
    if (owner(v.id) == c) ++info.owned_volumes;
  });
  return info;
}

bool ControllerPair::mirror_reachable(Id c) const {
  return c != 0 && link_up_ && serving(ArrayContext::peer_of(c)) && !ctx_.options.controllers.test_no_mirror;
}

Id ControllerPair::worker_for(Id volume_id) const {
  const Id c = owner(volume_id);
  return c != 0 ? c : serving(1) ? 1 : 2;
}

Time ControllerPair::takeover_bound_ns() const {
  const ControllerOptions& o = ctx_.options.controllers;
  return std::max<Time>(o.lease_ns, (o.heartbeat_misses + 1) * o.heartbeat_interval_ns) + o.takeover_ns;
}

bool ControllerPair::any_vaulting() const {
  for (const auto& x : ctl_)
    if (x.state == ControllerState::kVaulting) return true;
  return false;
}

// ---------------------------------------------------------------------------------------
// State machine and cache mode

void ControllerPair::transition(Id c, ControllerTrigger trigger, const std::string& why) {
  Runtime& cr = ctl(c);
  const ControllerState from = cr.state;
  const auto to = next_state(from, trigger);
  AFASIM_ASSERT(to.has_value(), "controller transition not in the table");
  cr.state = *to;
  if ((is_up(from) || from == ControllerState::kVaulting) && !is_up(*to)) {
    // In-flight work of this controller is void from now on (its completions check the epoch).
    ++cr.epoch;
    cache_.controller_stopped(c);
    cr.down_since_ns = ctx_.sim.now();
    ctx_.sim.cancel(cr.timer);
    cr.timer = {};
  }
  const Severity sev = *to == ControllerState::kFailed ? Severity::kCritical
                       : (*to == ControllerState::kVaulting || *to == ControllerState::kOff) ? Severity::kWarning
                                                                                             : Severity::kInfo;
  ctx_.emit(sev, "controller", ArrayContext::controller_object(c),
            "controller " + name(c) + ": " + std::string(to_string(from)) + " -> " + std::string(to_string(*to)) +
                " (" + std::string(to_string(trigger)) + (why.empty() ? "" : ": " + why) + ")");
}

std::string ControllerPair::cache_mode_blocker(Id c, double need) const {
  const Runtime& cr = ctl(c);
  const Runtime& peer = ctl(ArrayContext::peer_of(c));
  if (peer.state != ControllerState::kActive)
    return "peer controller " + name(ArrayContext::peer_of(c)) + " is " + std::string(to_string(peer.state));
  if (!link_up_) return "inter-controller link cut";
  if (cr.state == ControllerState::kSyncing) return "cache mirror resynchronizing";
  if (!ctx_.options.cache.write_back) return "write-back disabled by configuration";
  if (supercap_degraded_) return "supercap pack degraded";
  char buf[200];
  if (capacity_joules() < need) {
    // Not a matter of time: the packs, full, cannot cover a vault of this cache.
    std::snprintf(buf, sizeof buf,
                  "supercaps too small: a vault of the write cache needs %.0f J, the packs hold "
                  "%.0f J when full",
                  need, capacity_joules());
    return buf;
  }
  if (energy_joules_ < need) {
    std::snprintf(buf, sizeof buf, "supercaps charging: %.0f of the %.0f J a vault needs", energy_joules_, need);
    return buf;
  }
  return "";
}

std::pair<CacheMode, std::string> ControllerPair::cache_mode_of(Id c, double need) const {
  if (!serving(c)) return {CacheMode::kNone, "controller " + std::string(to_string(ctl(c).state))};
  std::string reason = cache_mode_blocker(c, need);
  if (reason.empty()) return {CacheMode::kWriteBack, ""};
  return {CacheMode::kWriteThrough, reason};
}

void ControllerPair::update_cache_modes(const std::string& why) {
  settle_energy();
  const double need = vault_energy_joules();
  for (Id c = 1; c <= 2; ++c) {
    Runtime& cr = ctl(c);
    const auto [mode, reason] = cache_mode_of(c, need);
    const bool changed = mode != cr.mode;
    cr.mode = mode;
    cr.mode_reason = reason;
    if (changed && mode != CacheMode::kNone)
      ctx_.emit(mode == CacheMode::kWriteBack ? Severity::kInfo : Severity::kWarning, "cache", ArrayContext::controller_object(c),
                "controller " + name(c) + " cache " + std::string(to_string(mode)) +
                    (reason.empty() ? "" : " (" + reason + ")") + (why.empty() ? "" : "; " + why));
    if (changed) cache_.pump_destage(c);
  }
  schedule_charged(need);
}

void ControllerPair::schedule_charged(double need) {
  // While the supercaps charge, come back when they hold enough for a vault.
  ctx_.sim.cancel(charge_event_);
  charge_event_ = {};
  if (charging_ && energy_joules_ < need && !supercap_degraded_ && need <= capacity_joules()) {
    const double secs = (need - energy_joules_) / ctx_.preset.supercaps.charge_power_w;
    const Time at = ctx_.sim.now() + static_cast<Time>(std::ceil(secs * 1e9)) + 1;
    charge_event_ = ctx_.sim.at(at, [this] {
      charge_event_ = {};
      update_cache_modes("supercaps charged");
    });
  }
}

// ---------------------------------------------------------------------------------------
// Ownership

void ControllerPair::attach(VolumeRuntime& v) {
  const Id preferred = v.preferred_controller;
  const Id other = preferred == 1 ? 2 : 1;
  if (serving(preferred)) v.claims = static_cast<std::uint8_t>(1u << (preferred - 1));
  else if (serving(other)) v.claims = static_cast<std::uint8_t>(1u << (other - 1));
}

void ControllerPair::claim(VolumeRuntime& v, Id c, const std::string& why) {
  const Id before = owner(v.id);
  if (ctx_.options.controllers.test_no_fencing) v.claims = static_cast<std::uint8_t>(v.claims | (1u << (c - 1)));
  else v.claims = static_cast<std::uint8_t>(1u << (c - 1));
  if (before != 0 && before != c) cache_.drop_clean(v);
  cache_.recount();
  if (io_ != nullptr) io_->follow_owner(v.id);
  ctx_.emit(Severity::kInfo, "controller", "volume/" + std::to_string(v.id),
            "volume " + std::to_string(v.id) + " owned by controller " + name(c) +
                (before != 0 && before != c ? " (was " + name(before) + ")" : "") + ": " + why);
  if (ctx_.invariants.enabled())
    if (std::string bad = check_one_writer(); !bad.empty()) ctx_.invariants.violation(ctx_.sim.now(), "one-writer", bad);
}

void ControllerPair::set_preferred_controller(VolumeRuntime& v, Id controller) {
  v.preferred_controller = controller;
  const Id o = owner(v.id);
  if (o == controller || ctl(controller).state != ControllerState::kActive) return;
  if (o == 0 || (link_up_ && serving(o))) claim(v, controller, "preferred controller changed");
  cache_.pump_destage(controller);
}

void ControllerPair::become_active(Id c) {
  ctx_.volumes.for_each([&](VolumeRuntime& v) {
    const Id o = owner(v.id);
    if (o == c) return;
    if (v.preferred_controller == c) {
      // Failback needs the mirror: the dirty data moves with the volume.
      if (o == 0) claim(v, c, "preferred controller up");
      else if (link_up_ && serving(o)) claim(v, c, "failback to the preferred controller");
    } else if (o == 0 && !is_up(ctl(v.preferred_controller).state)) {
      claim(v, c, "preferred controller " + name(v.preferred_controller) + " is " +
                      std::string(to_string(ctl(v.preferred_controller).state)));
    }
  });
  // (A vault left on a peer that is not up was replayed by this controller at its boot.)
  if (background_.resume) background_.resume();
}

std::string ControllerPair::check_one_writer() const {
  unsigned up = 0;
  for (Id c = 1; c <= 2; ++c)
    if (is_up(ctl(c).state)) up |= 1u << (c - 1);
  std::string bad;
  ctx_.volumes.for_each([&](const VolumeRuntime& v) {
    if (bad.empty() && std::popcount(static_cast<unsigned>(v.claims) & up) > 1)
      bad = "volume " + std::to_string(v.id) + " has two writers (controllers A and B both hold it)";
  });
  return bad;
}

void ControllerPair::check_writer(const VolumeRuntime& v, Id c) {
  if (!ctx_.invariants.enabled()) return;
  if (!((v.claims >> (c - 1)) & 1u))
    ctx_.invariants.violation(ctx_.sim.now(), "one-writer",
                              "controller " + name(c) + " writes volume " + std::to_string(v.id) +
                                  " without holding its reservation");
  if (std::string bad = check_one_writer(); !bad.empty()) ctx_.invariants.violation(ctx_.sim.now(), "one-writer", bad);
}

// ---------------------------------------------------------------------------------------
// Failure, detection, takeover

void ControllerPair::controller_down(Id c, const std::string& why) {
  const Id p = ArrayContext::peer_of(c);
  const std::int64_t lost = cache_.controller_lost(c, serving(p), [this](CacheWaiter& w) { io_->park_acknowledged(w); });
  ctx_.volumes.for_each([&](VolumeRuntime& v) { v.claims = static_cast<std::uint8_t>(v.claims & ~(1u << (c - 1))); });
  cache_.recount();
  if (lost > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(lost) / (1 << 20));
    ctx_.emit(Severity::kCritical, "cache", ArrayContext::controller_object(c),
              "controller " + name(c) + " went down (" + why + ") holding " + buf +
                  " of dirty data with no current copy on its peer: lost; reads of those blocks fail until "
                  "they are written again (GET /volumes shows lost_bytes)");
  }
  if (serving(p)) schedule_peer_lost(p, c, ctx_.sim.now());
}

void ControllerPair::schedule_peer_lost(Id survivor, Id lost, Time stopped_ns) {
  // The last heartbeat left at the last tick before `stopped_ns`; the survivor declares the
  // peer lost at the check `heartbeat_misses` ticks later.
  const ControllerOptions& o = ctx_.options.controllers;
  const Time hb = o.heartbeat_interval_ns;
  const Time last_sent = stopped_ns / hb * hb;
  const Time detect = std::max(ctx_.sim.now(), last_sent + (o.heartbeat_misses + 1) * hb);
  const std::uint64_t epoch = ctl(survivor).epoch;
  ctx_.sim.at(detect, [this, survivor, lost, epoch] {
    if (ctl(survivor).epoch != epoch) return;
    peer_lost(survivor, lost);
  });
}

void ControllerPair::peer_lost(Id s, Id lost) {
  if (!serving(s)) return;
  if (link_up_ && serving(lost)) return;  // the link came back before the survivor noticed
  const ControllerOptions& o = ctx_.options.controllers;
  const Runtime& pl = ctl(lost);
  if (!link_up_ && is_up(pl.state) && !o.test_no_fencing) {
    // Split brain: the link is cut, both are alive. The peer keeps renewing its reservation
    // on the DataPacs, so nothing is preempted: each keeps its own volumes, write-through.
    // With the link up, a peer that is up but not serving has restarted after a failure
    // (booting): it says so over the link and holds nothing, so the takeover goes on.
    ctx_.emit(Severity::kWarning, "controller", ArrayContext::controller_object(s),
              "controller " + name(s) + ": no heartbeat from " + name(lost) +
                  " over the link, but it holds its DataPac reservation: split brain avoided, each controller "
                  "keeps its own volumes");
    return;
  }
  if (pl.state == ControllerState::kVaulting) return;
  // The peer stopped renewing at its last renewal tick; its reservation lapses lease_ns later.
  const Time now = ctx_.sim.now();
  const Time expiry = serving(lost) ? now : pl.down_since_ns / o.lease_renew_ns * o.lease_renew_ns + o.lease_ns;
  const Time at = std::max(now, expiry) + o.takeover_ns;
  ctx_.emit(Severity::kWarning, "controller", ArrayContext::controller_object(s),
            "controller " + name(s) + ": no heartbeat from " + name(lost) + "; taking over its volumes at t=" +
                seconds(at) + " (its DataPac reservation lapses at t=" + seconds(std::max(now, expiry)) + ")");
  const std::uint64_t epoch = ctl(s).epoch;
  ctx_.sim.at(at, [this, s, lost, epoch] {
    if (ctl(s).epoch != epoch) return;
    takeover(s, lost);
  });
}

void ControllerPair::takeover(Id s, Id lost) {
  if (!serving(s)) return;
  const bool fencing = !ctx_.options.controllers.test_no_fencing;
  if (fencing && serving(lost)) return;
  ctx_.volumes.for_each([&](VolumeRuntime& v) {
    if ((v.claims >> (s - 1)) & 1u) return;
    if (fencing && v.claims != 0) return;
    claim(v, s, "takeover: controller " + name(lost) + " is " + std::string(to_string(ctl(lost).state)));
  });
  // The dead controller's copies are gone: nothing the survivor holds is mirrored now.
  cache_.forget_mirrors();
  cache_.recount();
  update_cache_modes("takeover");
  io_->release_parked();
  cache_.pump_destage(s);
  if (background_.after_takeover) background_.after_takeover(s, lost);
}

Status ControllerPair::fail_controller(Id c) {
  if (c != 1 && c != 2) return sim::not_found("no controller " + std::to_string(c) + " (controllers are 1 and 2)");
  if (ctl(c).state == ControllerState::kFailed) return sim::conflict("controller " + name(c) + " has already failed");
  const bool was_serving = serving(c);
  const bool was_vaulting = ctl(c).state == ControllerState::kVaulting;
  transition(c, ControllerTrigger::kControllerFail, "fault injected");  // (cancels its vault)
  if (was_serving) controller_down(c, "failed");
  update_cache_modes("controller " + name(c) + " failed");
  io_->release_parked();
  // The last vault to end ended here: its vault_done never comes, so the array goes off now
  // (review 27: an array whose last vaulting controller died stayed on hold-up for good,
  // its DRAM kept, and booted nothing when the mains came back).
  if (was_vaulting && !any_vaulting()) power_off_done();
  return Status::ok();
}

Status ControllerPair::restore_controller(Id c) {
  if (c != 1 && c != 2) return sim::not_found("no controller " + std::to_string(c) + " (controllers are 1 and 2)");
  if (ctl(c).state != ControllerState::kFailed)
    return sim::conflict("controller " + name(c) + " is " + std::string(to_string(ctl(c).state)) + ", not failed");
  if (!mains_on_) return sim::conflict("the array has no mains power; restore power first");
  // The mains are on (above), so a vault still running is the one of the power loss just
  // ended: the array boots when it finishes (hostile round 31b: "restore it once it is off"
  // sent the operator waiting for an off that would not come).
  if (any_vaulting())
    return sim::conflict("the array is still finishing the vault of the last power loss; the power is back, so it boots "
                         "when the vault ends: restore the controller once a controller is active");
  transition(c, ControllerTrigger::kControllerRestore, "fault cleared");
  start_boot(c);
  update_cache_modes("");
  return Status::ok();
}

// ---------------------------------------------------------------------------------------
// Sync and the link

void ControllerPair::start_sync(Id c) {
  const Id p = ArrayContext::peer_of(c);
  if (!(link_up_ && serving(p))) {
    sync_complete(c);
    return;
  }
  // The mirror: both controllers' dirty data crosses the link once.
  const std::int64_t bytes = (cache_.dirty_blocks(p) + cache_.dirty_blocks(c)) * WriteCache::kBlockBytes;
  const CostModel& cost = ctx_.options.cost;
  const Time t = cost.interconnect_latency_ns + sim::transfer_time(bytes, cost.interconnect_bytes_per_second);
  Runtime& cr = ctl(c);
  const std::uint64_t epoch = cr.epoch;
  cr.timer = ctx_.sim.at(ctx_.sim.now() + t, [this, c, epoch] {
    ctl(c).timer = {};
    if (ctl(c).epoch != epoch || ctl(c).state != ControllerState::kSyncing) return;
    sync_complete(c);
  });
}

void ControllerPair::sync_complete(Id c) {
  const Id p = ArrayContext::peer_of(c);
  if (link_up_ && serving(p) && !ctx_.options.controllers.test_no_mirror) cache_.mirror_all();
  const std::string why =
      link_up_ && serving(p) ? "cache mirror established"
      : !link_up_ && is_up(ctl(p).state)
          ? "inter-controller link cut: no cache mirror with the peer, write-through"
      : is_up(ctl(p).state) ? "peer controller " + name(p) + " is " + std::string(to_string(ctl(p).state)) +
                                  ": no cache mirror yet, running solo"
                            : "no peer to mirror with: running solo";
  transition(c, ControllerTrigger::kSyncComplete, why);
  become_active(c);
  update_cache_modes("");
  io_->release_parked();
  cache_.pump_destage(c);
  cache_.pump_destage(p);
}

Status ControllerPair::cut_link() {
  if (!link_up_) return sim::conflict("the inter-controller link is already cut");
  link_up_ = false;
  ctx_.emit(Severity::kError, "controller", "", "inter-controller link cut: no heartbeats, no cache mirroring");
  update_cache_modes("inter-controller link cut");
  for (Id c = 1; c <= 2; ++c)
    if (serving(c) && is_up(ctl(ArrayContext::peer_of(c)).state))
      schedule_peer_lost(c, ArrayContext::peer_of(c), ctx_.sim.now());
  return Status::ok();
}

Status ControllerPair::restore_link() {
  if (link_up_) return sim::conflict("the inter-controller link is not cut");
  link_up_ = true;
  ctx_.emit(Severity::kInfo, "controller", "", "inter-controller link restored");
  for (Id c = 1; c <= 2; ++c)
    if (ctl(c).state == ControllerState::kActive && serving(ArrayContext::peer_of(c))) {
      transition(c, ControllerTrigger::kLinkRestore, "rebuilding the cache mirror");
      start_sync(c);
    }
  update_cache_modes("");
  return Status::ok();
}

}  // namespace afasim::controller
