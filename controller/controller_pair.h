// controller::ControllerPair — the two controllers (docs/controller-states.md): each one's
// state machine, volume ownership (ALUA, DataPac reservations, fencing), heartbeats and
// failover, the inter-controller link, the cache mode each runs in; and the power side
// (controller_power.cpp): mains, supercaps, the vault at power loss and its replay at boot.
//
// Heartbeats and reservation renewals are periodic in the real array; here their effect is
// computed when it matters — the time a survivor notices a silent peer, the time a
// reservation lapses — and one event is scheduled for it, so that an idle simulation has an
// empty event queue.
//
// Not thread-safe (model thread).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controller/context.h"
#include "controller/write_cache.h"

namespace afasim::controller {

class IoOrchestrator;

// Mains, supercaps and the inter-controller link, for GET /system. Energies in joules.
struct PowerStatus {
  bool mains_on = true;
  std::string state;                   // "on", "holdup" (on supercaps, vaulting), "off"
  int supercap_packs = 0;
  bool supercap_degraded = false;      // a pack is degraded: the cache stays write-through
  double energy_joules = 0;            // usable energy stored now
  double capacity_joules = 0;          // usable energy when fully charged (degraded: less)
  double vault_energy_joules = 0;      // what a vault of full caches needs
  bool charging = false;
  double holdup_seconds = 0;           // energy / hold-up load
  bool link_up = true;                 // inter-controller link
};

class ControllerPair {
 public:
  // Background work (rebuild, scrub) stops while the array is off and continues after.
  struct Background {
    std::function<void(const std::string& why)> pause;
    std::function<void()> resume;
    // Controller `survivor` took over the volumes of `lost` (null: nothing to do).
    std::function<void(Id survivor, Id lost)> after_takeover;
  };

  ControllerPair(ArrayContext& ctx, WriteCache& cache);
  void wire(IoOrchestrator* io, Background background) {
    io_ = io;
    background_ = std::move(background);
  }
  // Emits the start-up warning of a cache that cannot run write-back.
  void announce_cache_modes();

  // --- Views ------------------------------------------------------------------------------
  ControllerInfo info(Id c) const;
  PowerStatus power_status() const;
  bool online() const { return mains_on_ && (serving(1) || serving(2)); }
  bool mains_on() const { return mains_on_; }
  bool link_up() const { return link_up_; }
  bool serving(Id c) const {
    const ControllerState s = ctl(c).state;
    return s == ControllerState::kActive || s == ControllerState::kSyncing;
  }
  ControllerState state(Id c) const { return ctl(c).state; }
  CacheMode mode(Id c) const { return ctl(c).mode; }
  // Changes when the controller fails or loses power: its in-flight work is void then.
  std::uint64_t epoch(Id c) const { return ctl(c).epoch; }
  std::uint64_t power_epoch() const { return power_epoch_; }
  // The controller that owns (writes) the volume now, 0 while none does. Inline: a host
  // write asks three times.
  Id owner(Id volume_id) const {
    const VolumeRuntime* v = ctx_.volumes.find(volume_id);
    return v == nullptr ? 0 : owner_of(*v);
  }
  // The same, of a volume whose runtime the caller has already found (no second lookup).
  static Id owner_of(const VolumeRuntime& v) {
    return v.claims == 0 ? 0 : static_cast<Id>(std::countr_zero(static_cast<unsigned>(v.claims))) + 1;
  }
  // Whether `c`'s writes can be mirrored into its peer now.
  bool mirror_reachable(Id c) const;
  // A controller to do background work for a volume: its owner, else one that serves.
  Id worker_for(Id volume_id) const;
  sim::Time takeover_bound_ns() const;

  // --- Volumes ----------------------------------------------------------------------------
  // ALUA: a new volume belongs to its preferred controller when that one serves, else to the
  // other.
  void attach(VolumeRuntime& v);
  void set_preferred_controller(VolumeRuntime& v, Id controller);
  // Invariant checks (one writer per volume).
  std::string check_one_writer() const;
  void check_writer(const VolumeRuntime& v, Id c);

  // --- Faults (each kConflict when it does not apply, kNotFound for a bad controller id) ---
  sim::Status fail_controller(Id c);
  sim::Status restore_controller(Id c);
  sim::Status cut_link();
  sim::Status restore_link();
  sim::Status lose_power();
  sim::Status restore_power();
  sim::Status degrade_supercap();
  sim::Status restore_supercap();
  // A clean stop of the process while the controllers hold vaults (the mains are off, or
  // they are booting): writes each vault into the pool, as the boot after power restore
  // would, so the next start (a power-on with the mains on) has the data. Returns the blocks
  // written.
  std::int64_t write_vaults_into_pool();
  bool any_vaulting() const;

 private:
  struct Runtime {
    ControllerState state = ControllerState::kActive;
    std::uint64_t epoch = 1;        // changes when it fails or loses power
    sim::Time down_since_ns = 0;    // when it last stopped renewing its reservation
    CacheMode mode = CacheMode::kWriteBack;
    std::string mode_reason;
    std::vector<VaultRecord> vault;  // non-volatile
    sim::EventId timer;              // boot, sync or takeover
  };

  Runtime& ctl(Id c) { return ctl_[static_cast<std::size_t>(c - 1)]; }
  const Runtime& ctl(Id c) const { return ctl_[static_cast<std::size_t>(c - 1)]; }
  std::string name(Id c) const { return ArrayContext::controller_name(c); }
  void transition(Id c, ControllerTrigger trigger, const std::string& why);
  void controller_down(Id c, const std::string& why);
  void schedule_peer_lost(Id survivor, Id lost, sim::Time stopped_ns);
  void peer_lost(Id survivor, Id lost);
  void takeover(Id survivor, Id lost);
  void claim(VolumeRuntime& v, Id c, const std::string& why);
  void become_active(Id c);
  void start_boot(Id c);
  void boot_complete(Id c);
  // Writes the vault's records into the pool (newest version of each block); returns when
  // the last write completes.
  sim::Time replay_vault(Id c, const std::vector<VaultRecord>& records, std::int64_t& replayed);
  void start_sync(Id c);
  void sync_complete(Id c);
  void vault_done(Id c, bool ok, std::vector<VaultRecord> records, std::int64_t bytes);
  void start_vaults(double holdup_s);
  void power_off_done();
  void boot_powered_off();
  void update_cache_modes(const std::string& why);
  void schedule_charged(double need);
  std::pair<CacheMode, std::string> cache_mode_of(Id c, double need_joules) const;
  std::string cache_mode_blocker(Id c, double need_joules) const;
  void settle_energy() const;
  double vault_energy_joules() const;
  double capacity_joules() const;

  ArrayContext& ctx_;
  WriteCache& cache_;
  IoOrchestrator* io_ = nullptr;
  Background background_;
  std::array<Runtime, 2> ctl_;  // A, B (the model is a dual-controller array)
  std::uint64_t power_epoch_ = 1;
  bool mains_on_ = true;
  bool link_up_ = true;
  bool supercap_degraded_ = false;
  mutable double energy_joules_ = 0;
  mutable sim::Time energy_at_ns_ = 0;
  bool charging_ = false;
  sim::Time power_lost_ns_ = 0;
  sim::EventId charge_event_;
  std::unordered_map<std::uint64_t, std::uint64_t> replayed_version_;  // during a replay (lookups only)
  raid::Plan replay_plan_;
};

}  // namespace afasim::controller
