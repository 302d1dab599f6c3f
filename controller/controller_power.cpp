// The controller pair's power side (docs/controller-states.md "Power"): mains, supercaps,
// the vault at power loss, boot and the vault's replay at power restore.
#include <algorithm>
#include <cstdio>

#include "controller/controller_pair.h"
#include "controller/io_orchestrator.h"
#include "sim/assert.h"

namespace afasim::controller {

using sim::Status;
using sim::Time;

namespace {
std::string mib(std::int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}
}  // namespace

// ---------------------------------------------------------------------------------------
// Energy

void ControllerPair::settle_energy() const {
  const Time now = ctx_.sim.now();
  if (charging_ && now > energy_at_ns_) {
    energy_joules_ = std::min(capacity_joules(), energy_joules_ + ctx_.preset.supercaps.charge_power_w *
                                                                      sim::to_seconds(now - energy_at_ns_));
  }
  energy_at_ns_ = now;
}

double ControllerPair::capacity_joules() const {
  const auto& sc = ctx_.preset.supercaps;
  const double full = sc.usable_energy_joules();
  return supercap_degraded_ ? full * (sc.packs - 1) / sc.packs : full;
}

double ControllerPair::vault_energy_joules() const {
  // Both controllers vault at once, each its full write cache and its mirror of the peer's.
  const auto& o = ctx_.options.controllers;
  const Time t = o.vault_overhead_ns + sim::transfer_time(2 * cache_.capacity_bytes(), o.vault_bytes_per_second);
  return o.holdup_load_w * sim::to_seconds(t);
}

PowerStatus ControllerPair::power_status() const {
  settle_energy();
  PowerStatus p;
  p.mains_on = mains_on_;
  bool up = false;
  for (const auto& c : ctl_) up |= is_up(c.state);
  p.state = any_vaulting() ? "holdup" : (mains_on_ && up) ? "on" : "off";
  p.supercap_packs = ctx_.preset.supercaps.packs;
  p.supercap_degraded = supercap_degraded_;
  p.energy_joules = energy_joules_;
  p.capacity_joules = capacity_joules();
  p.vault_energy_joules = vault_energy_joules();
  p.charging = charging_ && energy_joules_ < p.capacity_joules;
  p.holdup_seconds = energy_joules_ / ctx_.options.controllers.holdup_load_w;
  p.link_up = link_up_;
  return p;
}

// ---------------------------------------------------------------------------------------
// Boot

void ControllerPair::start_boot(Id c) {
  Runtime& cr = ctl(c);
  const std::uint64_t epoch = cr.epoch;
  cr.timer = ctx_.sim.at(ctx_.sim.now() + ctx_.options.controllers.boot_ns, [this, c, epoch] {
    ctl(c).timer = {};
    if (ctl(c).epoch != epoch || ctl(c).state != ControllerState::kBooting) return;
    boot_complete(c);
  });
}

Time ControllerPair::replay_vault(Id c, const std::vector<VaultRecord>& records, std::int64_t& replayed) {
  // Each block at the newest version either controller vaulted (both vault their own blocks
  // and their mirror of the peer's).
  Time done = ctx_.sim.now();
  raid::Plan& plan = replay_plan_;
  std::int64_t restored = 0;
  for (const VaultRecord& r : records) {
    std::uint64_t& seen = replayed_version_[WriteCache::key(r.volume_id, r.block)];
    if (seen >= r.version) continue;
    seen = r.version;
    VolumeRuntime* v = ctx_.volumes.find(r.volume_id);
    if (v == nullptr) continue;  // deleted meanwhile
    const std::int64_t ext = ctx_.extent_bytes(v->raid_type());
    const std::uint32_t id = v->thin->map[static_cast<std::size_t>(r.block * WriteCache::kBlockBytes / ext)];
    if (id == pool::ThinMap::kNoExtent) continue;  // unmapped after it was vaulted: nothing to put back
    plan.clear();
    Status st = ctx_.raid.plan_write(ctx_.thin.extents()[id], r.block * WriteCache::kBlockBytes % ext, WriteCache::kBlockBytes, r.data.get(), plan);
    if (st.is_ok()) st = ctx_.execute(plan);
    if (!st.is_ok()) {
      // Kept dirty in the cache, not dropped; said once per replay, not per block.
      if (cache_.restore_vaulted(r) && restored++ == 0)
        ctx_.emit(Severity::kError, "power", ArrayContext::controller_object(c),
                  "vault replay of a block failed: " + st.message() +
                      "; the blocks that cannot be replayed stay dirty in the write cache and are destaged when they can be");
      continue;
    }
    const Time t = ctx_.hw.cores(c).serve(ctx_.sim.now(), ctx_.options.cost.core_ns(Work::of(plan)));
    done = std::max(done, ctx_.hw.run_plan(plan, t, c));
    ++replayed;
  }
  return done;
}

std::int64_t ControllerPair::write_vaults_into_pool() {
  replayed_version_.clear();
  std::int64_t written = 0;
  for (Id c = 1; c <= 2; ++c) {
    std::vector<VaultRecord> records = std::move(ctl(c).vault);
    ctl(c).vault.clear();
    if (records.empty()) continue;
    std::int64_t replayed = 0;
    replay_vault(c, records, replayed);
    written += replayed;
    if (replayed > 0)  // (its mirror copies of the peer's blocks the peer's vault wrote)
      ctx_.emit(Severity::kInfo, "power", ArrayContext::controller_object(c),
              "controller " + name(c) + "'s vault written into the pool at the stop: " +
                  mib(replayed * WriteCache::kBlockBytes) + " (the next start is a power-on with the mains on)");
  }
  replayed_version_.clear();
  return written;
}

void ControllerPair::boot_complete(Id c) {
  Runtime& cr = ctl(c);
  // Replay the vault into the pool before going on.
  std::vector<VaultRecord> records = std::move(cr.vault);
  cr.vault.clear();
  std::int64_t replayed = 0;
  Time done = replay_vault(c, records, replayed);
  if (!records.empty())
    ctx_.emit(Severity::kInfo, "power", ArrayContext::controller_object(c),
              "controller " + name(c) + " replayed " + mib(replayed * WriteCache::kBlockBytes) + " from its vault into the pool (" +
                  std::to_string(records.size() - static_cast<std::size_t>(replayed)) + " blocks already replayed)");
  // A peer that is not up (failed, off, or booting behind this one) may hold the only vault
  // of some acknowledged writes: this controller's own vault did not complete (it failed
  // mid-vault) or held no copy. Its vault is replayed here too, before this controller
  // serves any I/O, the blocks this one replayed skipped by version. (A choice: either
  // controller reads both vaults, as the clean stop writes both into the pool. Hostile round
  // 27: the peer's vault was discarded here "as its mirror copies were replayed" when they
  // were not, and 128 MiB of acknowledged writes read back old.)
  const Id p = ArrayContext::peer_of(c);
  if (!is_up(ctl(p).state) && !ctl(p).vault.empty()) {
    std::vector<VaultRecord> peer = std::move(ctl(p).vault);
    ctl(p).vault.clear();
    std::int64_t from_peer = 0;
    done = std::max(done, replay_vault(c, peer, from_peer));
    ctx_.emit(from_peer > 0 ? Severity::kWarning : Severity::kInfo, "power", ArrayContext::controller_object(c),
              "controller " + name(c) + " replayed " + mib(from_peer * WriteCache::kBlockBytes) + " from controller " +
                  name(p) + "'s vault, which is " + std::string(to_string(ctl(p).state)) + " (" +
                  std::to_string(peer.size() - static_cast<std::size_t>(from_peer)) + " blocks already replayed)");
  }
  // The supercaps charge once a controller is up.
  if (mains_on_ && !charging_) {
    settle_energy();
    charging_ = true;
  }
  const std::uint64_t epoch = cr.epoch;
  cr.timer = ctx_.sim.at(done, [this, c, epoch] {
    ctl(c).timer = {};
    if (ctl(c).epoch != epoch || ctl(c).state != ControllerState::kBooting) return;
    transition(c, ControllerTrigger::kBootComplete, "");
    start_sync(c);
  });
}

// ---------------------------------------------------------------------------------------
// Power loss and restore

Status ControllerPair::lose_power() {
  if (!mains_on_) return sim::conflict("the mains are already off");
  settle_energy();
  charging_ = false;
  mains_on_ = false;
  power_lost_ns_ = ctx_.sim.now();
  const ControllerOptions& o = ctx_.options.controllers;
  const double holdup_s = energy_joules_ / o.holdup_load_w;
  char buf[160];
  std::snprintf(buf, sizeof buf, "mains power lost: the supercaps hold the array up for %.1f s (%.0f J at %.0f W)",
                holdup_s, energy_joules_, o.holdup_load_w);
  ctx_.emit(Severity::kCritical, "power", "", buf);
  ++power_epoch_;
  // Nothing more is accepted; what was not acknowledged fails (its data may have landed).
  const Status lost = sim::unavailable("the array lost power");
  cache_.fail_waiters(lost);
  io_->fail_parked(lost);
  start_vaults(holdup_s);
  ctx_.volumes.for_each([](VolumeRuntime& v) { v.claims = 0; });
  cache_.recount();
  if (background_.pause) background_.pause("the array lost power");
  update_cache_modes("mains lost");
  if (!any_vaulting()) power_off_done();
  return Status::ok();
}

void ControllerPair::start_vaults(double holdup_s) {
  const ControllerOptions& o = ctx_.options.controllers;
  std::vector<bool> holds(ctl_.size());
  for (Id c = 1; c <= 2; ++c) holds[static_cast<std::size_t>(c - 1)] = serving(c);
  std::vector<std::vector<VaultRecord>> records = cache_.vault_records(holds);
  for (Id c = 1; c <= 2; ++c) {
    if (ctl(c).state == ControllerState::kBooting) transition(c, ControllerTrigger::kPowerLoss, "mains lost");
    if (!serving(c)) continue;
    transition(c, ControllerTrigger::kPowerLoss, "mains lost");
    auto recs = std::make_shared<std::vector<VaultRecord>>(std::move(records[static_cast<std::size_t>(c - 1)]));
    const std::int64_t bytes = static_cast<std::int64_t>(recs->size()) * WriteCache::kBlockBytes;
    const Time duration = o.vault_overhead_ns + sim::transfer_time(bytes, o.vault_bytes_per_second);
    const Time holdup = static_cast<Time>(holdup_s * 1e9);
    const bool ok = duration <= holdup && !o.test_skip_vault;
    ctl(c).timer = ctx_.sim.at(ctx_.sim.now() + std::min(duration, holdup), [this, c, ok, recs, bytes] {
      ctl(c).timer = {};
      vault_done(c, ok, std::move(*recs), bytes);
    });
  }
}

void ControllerPair::vault_done(Id c, bool ok, std::vector<VaultRecord> records, std::int64_t bytes) {
  if (ctl(c).state != ControllerState::kVaulting) return;  // failed during the vault
  if (ok) {
    ctl(c).vault = std::move(records);
    ctx_.emit(Severity::kInfo, "power", ArrayContext::controller_object(c),
              "controller " + name(c) + " vaulted " + mib(bytes) + " of write cache to flash");
    transition(c, ControllerTrigger::kVaultComplete, "");
  } else {
    ctx_.emit(Severity::kCritical, "power", ArrayContext::controller_object(c),
              "controller " + name(c) + "'s vault did not complete (" +
                  (ctx_.options.controllers.test_skip_vault ? std::string("vault switched off")
                                                           : std::string("the supercaps ran out")) +
                  "): " + mib(bytes) + " of write cache lost");
    transition(c, ControllerTrigger::kVaultFailed, "");
  }
  if (!any_vaulting()) power_off_done();
}

void ControllerPair::power_off_done() {
  // The hold-up spent the supercaps' energy for as long as the vault ran.
  settle_energy();
  const double used = ctx_.options.controllers.holdup_load_w * sim::to_seconds(ctx_.sim.now() - power_lost_ns_);
  energy_joules_ = std::max(0.0, energy_joules_ - used);
  // DRAM is gone. What no vault holds is lost: its reads fail until rewritten (docs/faults.md
  // "Lost data"), instead of returning the SSDs' older bytes after the boot.
  cache_.mark_lost_unless_vaulted({&ctl(1).vault, &ctl(2).vault});
  cache_.clear();
  ctx_.volumes.for_each([](VolumeRuntime& v) { v.claims = 0; });
  cache_.recount();
  ctx_.emit(Severity::kCritical, "power", "", "the array is off");
  update_cache_modes("");
  if (mains_on_) boot_powered_off();
}

void ControllerPair::boot_powered_off() {
  for (Id c = 1; c <= 2; ++c)
    if (ctl(c).state == ControllerState::kOff) {
      transition(c, ControllerTrigger::kPowerRestore, "mains back");
      start_boot(c);
    }
}

Status ControllerPair::restore_power() {
  if (mains_on_) return sim::conflict("the mains are on");
  mains_on_ = true;
  settle_energy();
  replayed_version_.clear();
  const bool vaulting = any_vaulting();
  ctx_.emit(Severity::kInfo, "power", "",
            vaulting ? "mains power restored: the controllers boot once their vault completes" : "mains power restored");
  if (vaulting) return Status::ok();
  boot_powered_off();
  update_cache_modes("");
  return Status::ok();
}

Status ControllerPair::degrade_supercap() {
  if (supercap_degraded_) return sim::conflict("a supercap pack is already degraded");
  settle_energy();
  supercap_degraded_ = true;
  energy_joules_ = std::min(energy_joules_, capacity_joules());
  ctx_.emit(Severity::kError, "power", "",
            "supercap pack degraded: the write cache stays write-through until it is replaced");
  update_cache_modes("supercap degraded");
  return Status::ok();
}

Status ControllerPair::restore_supercap() {
  if (!supercap_degraded_) return sim::conflict("no supercap pack is degraded");
  settle_energy();
  supercap_degraded_ = false;
  ctx_.emit(Severity::kInfo, "power", "", "supercap pack replaced; it charges with the other");
  update_cache_modes("supercap restored");
  return Status::ok();
}

}  // namespace afasim::controller
