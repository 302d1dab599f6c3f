// The two controllers of DataPath (docs/controller-states.md): state machine, heartbeats and
// DataPac reservations, ALUA ownership, failover and failback, the cache mode, power loss
// with the supercap-powered vault, power restore with its replay.
//
// Heartbeats and reservation renewals are periodic in the real array; here their effect is
// computed when it matters — the time a survivor notices a silent peer, the time a
// reservation lapses — and one event is scheduled for it, so that an idle simulation has
// an empty event queue (tests run the simulator "until nothing is left").
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "controller/data_path.h"
#include "sim/assert.h"

namespace afasim::controller {

using sim::Status;
using sim::Time;

namespace {
constexpr std::int64_t B = DataPath::kCacheBlock;

std::string controller_object(Id c) { return "controller/" + std::to_string(c); }

std::string mib(std::int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

std::string seconds(Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", sim::to_seconds(t));
  return buf;
}
}  // namespace

// ---------------------------------------------------------------------------------------
// Views

ControllerInfo DataPath::controller_info(Id c) const {
  ControllerInfo info;
  info.id = c;
  info.name = ctl_name(c);
  const ControllerRuntime& cr = ctl(c);
  info.state = cr.state;
  info.cache_mode = cr.mode;
  info.cache_mode_reason = cr.mode_reason;
  info.dirty_bytes = cr.dirty_blocks * B;
  info.cached_bytes = cr.cached_blocks * B;
  info.write_cache_bytes = write_cache_bytes();
  const Id p = peer_of(c);
  info.mirrored_bytes = serving(c) && mirror_reachable(p) ? ctl(p).dirty_blocks * B : 0;
  for (const auto& v : volumes_)
    if (v && owner(v->id) == c) ++info.owned_volumes;
  return info;
}

void DataPath::settle_energy() const {
  const Time now = sim_.now();
  if (charging_ && now > energy_at_ns_) {
    const double capacity = power_status_capacity();
    energy_joules_ = std::min(capacity, energy_joules_ + preset_.supercaps.charge_power_w * sim::to_seconds(now - energy_at_ns_));
  }
  energy_at_ns_ = now;
}

double DataPath::power_status_capacity() const {
  const auto& sc = preset_.supercaps;
  const double full = sc.usable_energy_joules();
  return supercap_degraded_ ? full * (sc.packs - 1) / sc.packs : full;
}

double DataPath::vault_energy_joules() const {
  // Both controllers vault at once, each its full write cache and its mirror of the peer's.
  const auto& o = options_.controllers;
  const Time t = o.vault_overhead_ns + sim::transfer_time(2 * write_cache_bytes(), o.vault_bytes_per_second);
  return o.holdup_load_w * sim::to_seconds(t);
}

PowerStatus DataPath::power_status() const {
  settle_energy();
  PowerStatus p;
  p.mains_on = mains_on_;
  bool vaulting = false, up = false;
  for (const auto& c : ctl_) {
    vaulting |= c.state == ControllerState::kVaulting;
    up |= is_up(c.state);
  }
  p.state = vaulting ? "holdup" : (mains_on_ && up) ? "on" : "off";
  p.supercap_packs = preset_.supercaps.packs;
  p.supercap_degraded = supercap_degraded_;
  p.energy_joules = energy_joules_;
  p.capacity_joules = power_status_capacity();
  p.vault_energy_joules = vault_energy_joules();
  p.charging = charging_ && energy_joules_ < p.capacity_joules;
  p.holdup_seconds = energy_joules_ / options_.controllers.holdup_load_w;
  p.link_up = link_up_;
  return p;
}

bool DataPath::online() const { return mains_on_ && (serving(1) || serving(2)); }

// ---------------------------------------------------------------------------------------
// State machine

void DataPath::transition(Id c, ControllerTrigger trigger, const std::string& why) {
  ControllerRuntime& cr = ctl(c);
  const ControllerState from = cr.state;
  const auto to = next_state(from, trigger);
  AFASIM_ASSERT(to.has_value(), "controller transition not in the table");
  cr.state = *to;
  if ((is_up(from) || from == ControllerState::kVaulting) && !is_up(*to)) {
    // In-flight work of this controller is void from now on (its completions check the epoch).
    ++cr.epoch;
    cr.destages = 0;
    cr.down_since_ns = sim_.now();
    sim_.cancel(cr.timer);
    cr.timer = {};
  }
  const Severity sev = *to == ControllerState::kFailed ? Severity::kCritical
                       : (*to == ControllerState::kVaulting || *to == ControllerState::kOff) ? Severity::kWarning
                                                                                             : Severity::kInfo;
  emit(sev, "controller", controller_object(c),
       "controller " + ctl_name(c) + ": " + std::string(to_string(from)) + " -> " + std::string(to_string(*to)) + " (" +
           std::string(to_string(trigger)) + (why.empty() ? "" : ": " + why) + ")");
}

void DataPath::recount_cache() {
  for (auto& c : ctl_) c.dirty_blocks = c.cached_blocks = 0;
  for (const auto& v : volumes_) {
    if (!v) continue;
    if (const Id o = owner(v->id)) {
      ctl(o).dirty_blocks += v->dirty_blocks;
      ctl(o).cached_blocks += v->cached_blocks;
    }
  }
}

std::pair<CacheMode, std::string> DataPath::cache_mode_of(Id c, double need) const {
  const ControllerRuntime& cr = ctl(c);
  const ControllerRuntime& peer = ctl(peer_of(c));
  if (!serving(c)) return {CacheMode::kNone, "controller " + std::string(to_string(cr.state))};
  std::string reason;
  if (peer.state != ControllerState::kActive) {
    reason =
        "peer controller " + ctl_name(peer_of(c)) + " is " + std::string(to_string(peer.state));
  } else if (!link_up_) {
    reason = "inter-controller link cut";
  } else if (cr.state == ControllerState::kSyncing) {
    reason = "cache mirror resynchronizing";
  } else if (!options_.cache.write_back) {
    reason = "write-back disabled by configuration";
  } else if (supercap_degraded_) {
    reason = "supercap pack degraded";
  } else if (power_status_capacity() < need) {
    // Not a matter of time: the packs, full, cannot cover a vault of this cache.
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "supercaps too small: a vault of the write cache needs %.0f J, the packs hold "
                  "%.0f J when full",
                  need, power_status_capacity());
    reason = buf;
  } else if (energy_joules_ < need) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "supercaps charging: %.0f of the %.0f J a vault needs",
                  energy_joules_, need);
    reason = buf;
  } else {
    return {CacheMode::kWriteBack, ""};
  }
  return {CacheMode::kWriteThrough, reason};
}

void DataPath::update_cache_modes(const std::string& why) {
  settle_energy();
  const double need = vault_energy_joules();
  for (Id c = 1; c <= static_cast<Id>(ctl_.size()); ++c) {
    ControllerRuntime& cr = ctl(c);
    const auto [mode, reason] = cache_mode_of(c, need);
    const bool changed = mode != cr.mode;
    cr.mode = mode;
    cr.mode_reason = reason;
    if (changed && mode != CacheMode::kNone)
      emit(mode == CacheMode::kWriteBack ? Severity::kInfo : Severity::kWarning, "cache", controller_object(c),
           "controller " + ctl_name(c) + " cache " + std::string(to_string(mode)) +
               (reason.empty() ? "" : " (" + reason + ")") + (why.empty() ? "" : "; " + why));
    if (changed) pump_destage(c);
  }
  // While the supercaps charge, come back when they hold enough for a vault.
  sim_.cancel(charge_event_);
  charge_event_ = {};
  if (charging_ && energy_joules_ < need && !supercap_degraded_ &&
      need <= power_status_capacity()) {
    const double secs = (need - energy_joules_) / preset_.supercaps.charge_power_w;
    const Time at = sim_.now() + static_cast<Time>(std::ceil(secs * 1e9)) + 1;
    charge_event_ = sim_.at(at, [this] {
      charge_event_ = {};
      update_cache_modes("supercaps charged");
    });
  }
}

// ---------------------------------------------------------------------------------------
// Ownership

void DataPath::claim(VolumeRuntime& v, Id c, const std::string& why) {
  const Id before = owner(v.id);
  if (options_.controllers.test_no_fencing) v.claims = static_cast<std::uint8_t>(v.claims | (1u << (c - 1)));
  else v.claims = static_cast<std::uint8_t>(1u << (c - 1));
  if (before != 0 && before != c) {
    // The old owner's clean blocks were in its DRAM only; its dirty ones the new owner
    // holds as current mirror copies (the move waits for the mirror, become_active).
    std::vector<std::int64_t> clean;
    for (const auto& [key, blk] : cache_)
      if (static_cast<Id>(key >> 40) == v.id && !blk.dirty) clean.push_back(static_cast<std::int64_t>(key & ((1ULL << 40) - 1)));
    for (std::int64_t b : clean) drop_block(v, b, 0);
  }
  recount_cache();
  emit(Severity::kInfo, "controller", "volume/" + std::to_string(v.id),
       "volume " + std::to_string(v.id) + " owned by controller " + ctl_name(c) +
           (before != 0 && before != c ? " (was " + ctl_name(before) + ")" : "") + ": " + why);
  if (invariants_.enabled())
    if (std::string bad = check_one_writer(); !bad.empty()) invariants_.violation(sim_.now(), "one-writer", bad);
}

void DataPath::set_preferred_controller(Id volume_id, Id controller) {
  VolumeRuntime* v = find_volume(volume_id);
  if (v == nullptr) return;
  v->preferred_controller = controller;
  const Id o = owner(volume_id);
  if (o == controller || ctl(controller).state != ControllerState::kActive) return;
  if (o == 0 || (link_up_ && serving(o))) claim(*v, controller, "preferred controller changed");
  pump_destage(controller);
}

void DataPath::become_active(Id c) {
  const Id p = peer_of(c);
  for (auto& vp : volumes_) {
    if (!vp) continue;
    VolumeRuntime& v = *vp;
    const Id o = owner(v.id);
    if (o == c) continue;
    if (v.preferred_controller == c) {
      // Failback needs the mirror: the dirty data moves with the volume.
      if (o == 0) claim(v, c, "preferred controller up");
      else if (link_up_ && serving(o)) claim(v, c, "failback to the preferred controller");
    } else if (o == 0 && !is_up(ctl(v.preferred_controller).state)) {
      claim(v, c, "preferred controller " + ctl_name(v.preferred_controller) + " is " +
                      std::string(to_string(ctl(v.preferred_controller).state)));
    }
  }
  // A vault left on a controller that did not come back with the array: its peer vaulted
  // current copies of the same data and has replayed them.
  if (!is_up(ctl(p).state) && !ctl(p).vault.empty()) {
    emit(Severity::kWarning, "power", controller_object(p),
         "controller " + ctl_name(p) + "'s vault (" + std::to_string(ctl(p).vault.size()) +
             " blocks) discarded: the array is back without it and its mirror copies were replayed");
    ctl(p).vault.clear();
  }
  resume_rebuild();
}

void DataPath::release_parked() {
  const std::size_t n = parked_.size();
  for (std::size_t i = 0; i < n && !parked_.empty(); ++i) {
    Parked p = std::move(parked_.front());
    parked_.pop_front();
    const Id o = mains_on_ ? owner(p.io.volume_id) : 0;
    if (o == 0) {
      if (mains_on_ && (serving(1) || serving(2))) parked_.push_back(std::move(p));
      else p.done(IoCompletion{sim::unavailable("no controller serves volume " + std::to_string(p.io.volume_id)),
                               p.submitted, sim_.now()});
    } else if (p.execute) {
      submit_at(p.io, std::move(p.done), p.submitted);
    } else {
      const Time t = cores_[static_cast<std::size_t>(o - 1)].serve(sim_.now(), options_.cost.host_io_ns) +
                     options_.cost.host_port_latency_ns;
      complete_on(o, p.io, p.done, std::move(p.status), p.submitted, t);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Failure, detection, takeover

void DataPath::controller_down(Id c, const std::string& why) {
  ControllerRuntime& cr = ctl(c);
  const Id p = peer_of(c);
  // Writes waiting for cache room are in the cache and its mirror: the survivor acks them.
  for (Waiter& w : cr.waiting) {
    HostIo io;
    io.op = IoOp::kWrite;
    io.volume_id = w.volume_id;
    parked_.push_back(Parked{io, false, Status::ok(), std::move(w.done), w.submitted});
  }
  cr.waiting.clear();
  cr.waiting_blocks = 0;
  // Its DRAM is gone. Its own blocks live on only where the peer holds a current copy; the
  // copies it held of the peer's are gone.
  std::int64_t lost = 0;
  std::vector<std::pair<VolumeRuntime*, std::int64_t>> drop;
  for (auto& [key, blk] : cache_) {
    VolumeRuntime* v = find_volume(static_cast<Id>(key >> 40));
    const auto b = static_cast<std::int64_t>(key & ((1ULL << 40) - 1));
    const Id o = owner(v->id);
    const bool held_by_c = o == c || (o == 0 && !serving(p));
    if (held_by_c) {
      if (blk.dirty && blk.mirrored_version == blk.version && serving(p)) {
        if (blk.destaging_version != 0) {
          blk.destaging_version = 0;  // its destage died with it
          enqueue(*v, blk, b, true);
        }
        continue;
      }
      if (blk.dirty) lost += B;
      drop.emplace_back(v, b);
    } else {
      blk.mirrored_version = 0;
    }
  }
  for (auto& [v, b] : drop) drop_block(*v, b, 0);
  for (auto& v : volumes_)
    if (v) v->claims = static_cast<std::uint8_t>(v->claims & ~(1u << (c - 1)));
  recount_cache();
  if (lost > 0)
    emit(Severity::kCritical, "cache", controller_object(c),
         "controller " + ctl_name(c) + " went down (" + why + ") holding " + mib(lost) +
             " of dirty data with no current copy on its peer: lost");
  if (serving(p)) schedule_peer_lost(p, c, sim_.now());
}

void DataPath::schedule_peer_lost(Id survivor, Id lost, Time stopped_ns) {
  // The last heartbeat left at the last tick before `stopped_ns`; the survivor declares the
  // peer lost at the check `heartbeat_misses` ticks later.
  const ControllerOptions& o = options_.controllers;
  const Time hb = o.heartbeat_interval_ns;
  const Time last_sent = stopped_ns / hb * hb;
  const Time detect = std::max(sim_.now(), last_sent + (o.heartbeat_misses + 1) * hb);
  const std::uint64_t epoch = ctl(survivor).epoch;
  sim_.at(detect, [this, survivor, lost, epoch] {
    if (ctl(survivor).epoch != epoch) return;
    peer_lost(survivor, lost);
  });
}

void DataPath::peer_lost(Id s, Id lost) {
  if (!serving(s)) return;
  if (link_up_ && serving(lost)) return;  // the link came back before the survivor noticed
  const ControllerOptions& o = options_.controllers;
  const ControllerRuntime& pl = ctl(lost);
  if (is_up(pl.state) && !o.test_no_fencing) {
    // Split brain: the link is cut, both are alive. The peer keeps renewing its reservation
    // on the DataPacs, so nothing is preempted: each keeps its own volumes, write-through.
    emit(Severity::kWarning, "controller", controller_object(s),
         "controller " + ctl_name(s) + ": no heartbeat from " + ctl_name(lost) +
             " over the link, but it holds its DataPac reservation: split brain avoided, each controller keeps its "
             "own volumes");
    return;
  }
  if (pl.state == ControllerState::kVaulting) return;
  // The peer stopped renewing at its last renewal tick; its reservation lapses lease_ns later.
  const Time expiry = is_up(pl.state) ? sim_.now()
                                      : pl.down_since_ns / o.lease_renew_ns * o.lease_renew_ns + o.lease_ns;
  const Time at = std::max(sim_.now(), expiry) + o.takeover_ns;
  emit(Severity::kWarning, "controller", controller_object(s),
       "controller " + ctl_name(s) + ": no heartbeat from " + ctl_name(lost) + "; taking over its volumes at t=" +
           seconds(at) + " (its DataPac reservation lapses at t=" + seconds(std::max(sim_.now(), expiry)) + ")");
  const std::uint64_t epoch = ctl(s).epoch;
  sim_.at(at, [this, s, lost, epoch] {
    if (ctl(s).epoch != epoch) return;
    takeover(s, lost);
  });
}

void DataPath::takeover(Id s, Id lost) {
  if (!serving(s)) return;
  const bool fencing = !options_.controllers.test_no_fencing;
  if (fencing && serving(lost)) return;
  for (auto& vp : volumes_) {
    if (!vp) continue;
    VolumeRuntime& v = *vp;
    if ((v.claims >> (s - 1)) & 1u) continue;
    if (fencing && v.claims != 0) continue;
    claim(v, s, "takeover: controller " + ctl_name(lost) + " is " + std::string(to_string(ctl(lost).state)));
  }
  // The dead controller's copies are gone: nothing the survivor holds is mirrored now.
  for (auto& [key, blk] : cache_) blk.mirrored_version = 0;
  recount_cache();
  update_cache_modes("takeover");
  release_parked();
  pump_destage(s);
}

sim::Status DataPath::fail_controller(Id c) {
  if (c != 1 && c != 2) return sim::not_found("no controller " + std::to_string(c) + " (controllers are 1 and 2)");
  if (ctl(c).state == ControllerState::kFailed) return sim::conflict("controller " + ctl_name(c) + " has already failed");
  const bool was_serving = serving(c);
  transition(c, ControllerTrigger::kControllerFail, "fault injected");
  if (was_serving) controller_down(c, "failed");
  update_cache_modes("controller " + ctl_name(c) + " failed");
  release_parked();
  return Status::ok();
}

sim::Status DataPath::restore_controller(Id c) {
  if (c != 1 && c != 2) return sim::not_found("no controller " + std::to_string(c) + " (controllers are 1 and 2)");
  if (ctl(c).state != ControllerState::kFailed)
    return sim::conflict("controller " + ctl_name(c) + " is " + std::string(to_string(ctl(c).state)) + ", not failed");
  if (!mains_on_) return sim::conflict("the array has no mains power; restore power first");
  bool vaulting = false;
  for (const auto& x : ctl_) vaulting |= x.state == ControllerState::kVaulting;
  if (vaulting) return sim::conflict("the array is vaulting; restore the controller once it is off");
  transition(c, ControllerTrigger::kControllerRestore, "fault cleared");
  start_boot(c);
  update_cache_modes("");
  return Status::ok();
}

// ---------------------------------------------------------------------------------------
// Boot, sync

void DataPath::start_boot(Id c) {
  ControllerRuntime& cr = ctl(c);
  const std::uint64_t epoch = cr.epoch;
  cr.timer = sim_.at(sim_.now() + options_.controllers.boot_ns, [this, c, epoch] {
    ctl(c).timer = {};
    if (ctl(c).epoch != epoch || ctl(c).state != ControllerState::kBooting) return;
    boot_complete(c);
  });
}

void DataPath::boot_complete(Id c) {
  ControllerRuntime& cr = ctl(c);
  // Replay the vault into the pool before going on: each block at the newest version either
  // controller vaulted (both vault their own blocks and their mirror of the peer's).
  std::vector<VaultRecord> records = std::move(cr.vault);
  cr.vault.clear();
  Time done = sim_.now();
  std::int64_t replayed = 0;
  Work w;
  const CostModel& cost = options_.cost;
  for (const VaultRecord& r : records) {
    std::uint64_t& seen = replayed_version_[cache_key(r.volume_id, r.block)];
    if (seen >= r.version) continue;
    seen = r.version;
    VolumeRuntime* v = find_volume(r.volume_id);
    if (v == nullptr) continue;  // deleted meanwhile
    const std::int64_t ext = extent_bytes(v->raid_type);
    const std::uint32_t id = v->map[static_cast<std::size_t>(r.block * B / ext)];
    if (id == kNoExtent) continue;  // unmapped after it was vaulted: nothing to put back
    w.clear();
    Status st = write_extent(extents_[id], r.block * B % ext, B, r.data.get(), w);
    if (!st.is_ok()) {
      emit(Severity::kError, "power", controller_object(c), "vault replay of a block failed: " + st.message());
      continue;
    }
    const Time t = cores_[static_cast<std::size_t>(c - 1)].serve(
        sim_.now(), static_cast<Time>(w.ops.size()) * cost.backend_op_ns +
                        static_cast<Time>(w.parity_rows) * cost.parity_op_ns + cost.parity_xor_ns(w.xor_bytes));
    done = std::max(done, run_plan(w, t, c));
    ++replayed;
  }
  if (!records.empty())
    emit(Severity::kInfo, "power", controller_object(c),
         "controller " + ctl_name(c) + " replayed " + mib(replayed * B) + " from its vault into the pool (" +
             std::to_string(records.size() - static_cast<std::size_t>(replayed)) + " blocks already replayed)");
  // The supercaps charge once a controller is up.
  if (mains_on_ && !charging_) {
    settle_energy();
    charging_ = true;
  }
  const std::uint64_t epoch = cr.epoch;
  cr.timer = sim_.at(done, [this, c, epoch] {
    ctl(c).timer = {};
    if (ctl(c).epoch != epoch || ctl(c).state != ControllerState::kBooting) return;
    transition(c, ControllerTrigger::kBootComplete, "");
    start_sync(c);
  });
}

void DataPath::start_sync(Id c) {
  const Id p = peer_of(c);
  if (!(link_up_ && serving(p))) {
    sync_complete(c);
    return;
  }
  // The mirror: both controllers' dirty data crosses the link once.
  const std::int64_t bytes = (ctl(p).dirty_blocks + ctl(c).dirty_blocks) * B;
  const Time t = options_.cost.interconnect_latency_ns + sim::transfer_time(bytes, options_.cost.interconnect_bytes_per_second);
  ControllerRuntime& cr = ctl(c);
  const std::uint64_t epoch = cr.epoch;
  cr.timer = sim_.at(sim_.now() + t, [this, c, epoch] {
    ctl(c).timer = {};
    if (ctl(c).epoch != epoch || ctl(c).state != ControllerState::kSyncing) return;
    sync_complete(c);
  });
}

void DataPath::sync_complete(Id c) {
  const Id p = peer_of(c);
  if (link_up_ && serving(p) && !options_.controllers.test_no_mirror)
    for (auto& [key, blk] : cache_)
      if (blk.dirty) blk.mirrored_version = blk.version;
  const char* why = link_up_ && serving(p) ? "cache mirror established"
                    : is_up(ctl(p).state)
                        ? "inter-controller link cut: no cache mirror with the peer, write-through"
                        : "no peer to mirror with: running solo";
  transition(c, ControllerTrigger::kSyncComplete, why);
  become_active(c);
  update_cache_modes("");
  release_parked();
  pump_destage(c);
  pump_destage(p);
}

// ---------------------------------------------------------------------------------------
// Link

sim::Status DataPath::cut_link() {
  if (!link_up_) return sim::conflict("the inter-controller link is already cut");
  link_up_ = false;
  emit(Severity::kError, "controller", "", "inter-controller link cut: no heartbeats, no cache mirroring");
  update_cache_modes("inter-controller link cut");
  for (Id c = 1; c <= 2; ++c)
    if (serving(c) && is_up(ctl(peer_of(c)).state)) schedule_peer_lost(c, peer_of(c), sim_.now());
  return Status::ok();
}

sim::Status DataPath::restore_link() {
  if (link_up_) return sim::conflict("the inter-controller link is not cut");
  link_up_ = true;
  emit(Severity::kInfo, "controller", "", "inter-controller link restored");
  for (Id c = 1; c <= 2; ++c)
    if (ctl(c).state == ControllerState::kActive && serving(peer_of(c))) {
      transition(c, ControllerTrigger::kLinkRestore, "rebuilding the cache mirror");
      start_sync(c);
    }
  update_cache_modes("");
  return Status::ok();
}

// ---------------------------------------------------------------------------------------
// Power

sim::Status DataPath::lose_power() {
  if (!mains_on_) return sim::conflict("the mains are already off");
  settle_energy();
  charging_ = false;
  mains_on_ = false;
  power_lost_ns_ = sim_.now();
  const ControllerOptions& o = options_.controllers;
  const double holdup_s = energy_joules_ / o.holdup_load_w;
  char buf[160];
  std::snprintf(buf, sizeof buf, "mains power lost: the supercaps hold the array up for %.1f s (%.0f J at %.0f W)",
                holdup_s, energy_joules_, o.holdup_load_w);
  emit(Severity::kCritical, "power", "", buf);
  ++power_epoch_;
  // Nothing more is accepted; what was not acknowledged fails (its data may have landed).
  for (auto& cr : ctl_) {
    for (Waiter& w : cr.waiting) w.done(IoCompletion{sim::unavailable("the array lost power"), w.submitted, sim_.now()});
    cr.waiting.clear();
    cr.waiting_blocks = 0;
  }
  std::deque<Parked> parked = std::move(parked_);
  parked_.clear();
  for (Parked& p : parked) p.done(IoCompletion{sim::unavailable("the array lost power"), p.submitted, sim_.now()});

  // What each controller's DRAM holds: its own dirty blocks, and current copies of its
  // peer's (or, after a failover, of volumes it is taking over).
  std::vector<std::vector<VaultRecord>> records(ctl_.size());
  std::vector<bool> holds(ctl_.size());
  for (Id c = 1; c <= 2; ++c) holds[static_cast<std::size_t>(c - 1)] = serving(c);
  for (const auto& [key, blk] : cache_) {
    if (!blk.dirty) continue;
    const Id vol = static_cast<Id>(key >> 40);
    const auto b = static_cast<std::int64_t>(key & ((1ULL << 40) - 1));
    const Id o = owner(vol);
    for (Id c = 1; c <= 2; ++c) {
      if (!holds[static_cast<std::size_t>(c - 1)]) continue;
      const bool own = o == c;
      const bool copy = o != c && blk.mirrored_version == blk.version;
      if (own || copy) records[static_cast<std::size_t>(c - 1)].push_back({vol, b, blk.version, blk.data});
    }
  }
  for (Id c = 1; c <= 2; ++c) {
    if (ctl(c).state == ControllerState::kBooting) transition(c, ControllerTrigger::kPowerLoss, "mains lost");
    if (!serving(c)) continue;
    transition(c, ControllerTrigger::kPowerLoss, "mains lost");
    auto recs = std::make_shared<std::vector<VaultRecord>>(std::move(records[static_cast<std::size_t>(c - 1)]));
    const std::int64_t bytes = static_cast<std::int64_t>(recs->size()) * B;
    const Time duration = o.vault_overhead_ns + sim::transfer_time(bytes, o.vault_bytes_per_second);
    const Time holdup = static_cast<Time>(holdup_s * 1e9);
    const bool ok = duration <= holdup && !o.test_skip_vault;
    ctl(c).timer = sim_.at(sim_.now() + std::min(duration, holdup), [this, c, ok, recs, bytes] {
      ctl(c).timer = {};
      vault_done(c, ok, std::move(*recs), bytes);
    });
  }
  for (auto& v : volumes_)
    if (v) v->claims = 0;
  recount_cache();
  pause_rebuild("the array lost power");
  update_cache_modes("mains lost");
  bool vaulting = false;
  for (const auto& x : ctl_) vaulting |= x.state == ControllerState::kVaulting;
  if (!vaulting) power_off_done();
  return Status::ok();
}

void DataPath::vault_done(Id c, bool ok, std::vector<VaultRecord> records, std::int64_t bytes) {
  if (ctl(c).state != ControllerState::kVaulting) return;  // failed during the vault
  if (ok) {
    ctl(c).vault = std::move(records);
    emit(Severity::kInfo, "power", controller_object(c),
         "controller " + ctl_name(c) + " vaulted " + mib(bytes) + " of write cache to flash");
    transition(c, ControllerTrigger::kVaultComplete, "");
  } else {
    emit(Severity::kCritical, "power", controller_object(c),
         "controller " + ctl_name(c) + "'s vault did not complete (" +
             (options_.controllers.test_skip_vault ? std::string("vault switched off") : std::string("the supercaps ran out")) +
             "): " + mib(bytes) + " of write cache lost");
    transition(c, ControllerTrigger::kVaultFailed, "");
  }
  for (const auto& x : ctl_)
    if (x.state == ControllerState::kVaulting) return;
  power_off_done();
}

void DataPath::power_off_done() {
  // The hold-up spent the supercaps' energy for as long as the vault ran.
  settle_energy();
  const double used = options_.controllers.holdup_load_w * sim::to_seconds(sim_.now() - power_lost_ns_);
  energy_joules_ = std::max(0.0, energy_joules_ - used);
  // DRAM is gone.
  cache_.clear();
  for (auto& v : volumes_)
    if (v) {
      v->dirty_fifo.clear();
      v->clean_fifo.clear();
      v->dirty_blocks = v->cached_blocks = 0;
      v->claims = 0;
    }
  recount_cache();
  emit(Severity::kCritical, "power", "", "the array is off");
  update_cache_modes("");
  if (mains_on_)
    for (Id c = 1; c <= 2; ++c)
      if (ctl(c).state == ControllerState::kOff) {
        transition(c, ControllerTrigger::kPowerRestore, "mains back");
        start_boot(c);
      }
}

sim::Status DataPath::restore_power() {
  if (mains_on_) return sim::conflict("the mains are on");
  mains_on_ = true;
  settle_energy();
  replayed_version_.clear();
  bool vaulting = false;
  for (const auto& x : ctl_) vaulting |= x.state == ControllerState::kVaulting;
  emit(Severity::kInfo, "power", "",
       vaulting ? "mains power restored: the controllers boot once their vault completes" : "mains power restored");
  if (vaulting) return Status::ok();
  for (Id c = 1; c <= 2; ++c)
    if (ctl(c).state == ControllerState::kOff) {
      transition(c, ControllerTrigger::kPowerRestore, "mains back");
      start_boot(c);
    }
  update_cache_modes("");
  return Status::ok();
}

sim::Status DataPath::degrade_supercap() {
  if (supercap_degraded_) return sim::conflict("a supercap pack is already degraded");
  settle_energy();
  supercap_degraded_ = true;
  energy_joules_ = std::min(energy_joules_, power_status_capacity());
  emit(Severity::kError, "power", "", "supercap pack degraded: the write cache stays write-through until it is replaced");
  update_cache_modes("supercap degraded");
  return Status::ok();
}

sim::Status DataPath::restore_supercap() {
  if (!supercap_degraded_) return sim::conflict("no supercap pack is degraded");
  settle_energy();
  supercap_degraded_ = false;
  emit(Severity::kInfo, "power", "", "supercap pack replaced; it charges with the other");
  update_cache_modes("supercap restored");
  return Status::ok();
}

}  // namespace afasim::controller
