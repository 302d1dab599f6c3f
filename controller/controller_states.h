// The dual-controller state machine's transition table, and the options of the controller
// model (heartbeats, DataPac reservations, boot, vault, supercaps, write cache).
//
// Every state change of a controller goes through next_state(), which looks it up in
// kTransitions: a change that is not in the table is a bug (AFASIM_ASSERT). The table is the
// contract docs/controller-states.md draws; a test checks that the two list the same
// transitions. Plain data, thread-safe (constants only).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "controller/objects.h"
#include "sim/time.h"

namespace afasim::controller {

// What makes a controller change state.
enum class ControllerTrigger {
  kPowerRestore,       // mains back: a powered-off controller boots
  kBootComplete,       // firmware up (and, after a power loss, its vault replayed into the pool)
  kSyncComplete,       // the cache mirror with the peer is established (or there is no peer)
  kLinkRestore,        // the inter-controller link is back: the mirror must be rebuilt
  kControllerFail,     // controller_fail fault
  kControllerRestore,  // controller_restore fault (a replacement or a reset controller)
  kPowerLoss,          // mains lost: the supercaps hold the array up while it vaults
  kVaultComplete,      // the dirty cache is in the vault flash
  kVaultFailed,        // the supercaps ran out (or the vault was switched off) before the end
};

std::string_view to_string(ControllerTrigger t);

struct ControllerTransition {
  ControllerState from;
  ControllerTrigger trigger;
  ControllerState to;
};

// Every transition a controller can make. Off → booting → syncing → active is the way up;
// failed is left only by controller_restore; vaulting only ends in off.
inline constexpr ControllerTransition kTransitions[] = {
    {ControllerState::kOff, ControllerTrigger::kPowerRestore, ControllerState::kBooting},
    {ControllerState::kBooting, ControllerTrigger::kBootComplete, ControllerState::kSyncing},
    {ControllerState::kSyncing, ControllerTrigger::kSyncComplete, ControllerState::kActive},
    {ControllerState::kActive, ControllerTrigger::kLinkRestore, ControllerState::kSyncing},
    {ControllerState::kBooting, ControllerTrigger::kControllerFail, ControllerState::kFailed},
    {ControllerState::kSyncing, ControllerTrigger::kControllerFail, ControllerState::kFailed},
    {ControllerState::kActive, ControllerTrigger::kControllerFail, ControllerState::kFailed},
    {ControllerState::kVaulting, ControllerTrigger::kControllerFail, ControllerState::kFailed},
    {ControllerState::kOff, ControllerTrigger::kControllerFail, ControllerState::kFailed},
    {ControllerState::kFailed, ControllerTrigger::kControllerRestore, ControllerState::kBooting},
    {ControllerState::kBooting, ControllerTrigger::kPowerLoss, ControllerState::kOff},
    {ControllerState::kSyncing, ControllerTrigger::kPowerLoss, ControllerState::kVaulting},
    {ControllerState::kActive, ControllerTrigger::kPowerLoss, ControllerState::kVaulting},
    {ControllerState::kVaulting, ControllerTrigger::kVaultComplete, ControllerState::kOff},
    {ControllerState::kVaulting, ControllerTrigger::kVaultFailed, ControllerState::kOff},
};

// The state `from` goes to on `trigger`, or nullopt when the table has no such transition.
std::optional<ControllerState> next_state(ControllerState from, ControllerTrigger trigger);

// Whether a controller in `s` is running firmware that serves or may serve I/O (and renews
// its DataPac reservations): booting, syncing, active.
inline bool is_up(ControllerState s) {
  return s == ControllerState::kBooting || s == ControllerState::kSyncing || s == ControllerState::kActive;
}

// The write-back cache (docs/write-cache.md).
struct CacheOptions {
  // Write cache per controller for its own volumes' data, bytes; the same again holds the
  // mirror of the peer's dirty data. 0 = a quarter of the controller's DRAM (4 GiB of the
  // ISE's 16 GB; assumption: the rest holds the firmware, the thin maps and the mirror).
  std::int64_t write_cache_bytes = 0;
  // false: the cache never goes write-back; every write is acknowledged after the SSDs (an
  // administrator's "cache disabled", and side-by-side runs of what the cache changes).
  bool write_back = true;
  // Destage starts above the low watermark (percent of the write cache dirty) with
  // `destage_ops_trickle` operations in flight, and runs `destage_ops_max` in flight above
  // the high watermark, in write-through mode and for FLUSH. Writes wait for room at 100 %.
  // Assumption: the usual two-watermark destage policy; the figures are typical defaults.
  int low_watermark_percent = 40;
  int high_watermark_percent = 80;
  int destage_ops_trickle = 4;
  int destage_ops_max = 64;
  // Dirty data older than `destage_age_ns` is destaged below the low watermark too,
  // `destage_ops_trickle` operations in flight, as arrays age out dirty data when the load is
  // light (an age timer besides the watermarks). The cache looks every `destage_age_check_ns`
  // while it holds dirty data, so a block is destaged at most age + 2 checks after it became
  // dirty (a rewrite while dirty does not restart its age; a destage run also takes the
  // younger dirty blocks of the same RAID row). 0 = never: below the low watermark dirty data
  // waits for a FLUSH, a stop or more writes. Assumption: 10 s, looked at once a second
  // (X-IO published no figure; 10 s is the order of the flush intervals of write-back
  // caches, e.g. a 10 s consistency point).
  sim::Time destage_age_ns = 10 * sim::kSecond;
  sim::Time destage_age_check_ns = 1 * sim::kSecond;
  // Writes of at least this many bytes bypass the cache (written through as full-stripe
  // streams), as arrays do for large sequential writes. Assumption: 512 KiB, two RAID rows.
  std::int64_t bypass_bytes = 512 << 10;
  // Writes waiting for room in a full cache, per controller; past it a write fails with
  // kUnavailable (SCSI TASK SET FULL: the host retries).
  std::size_t max_waiting_writes = 65536;
};

// The two controllers, their link, the DataPac reservations and the power (docs/controller-states.md).
struct ControllerOptions {
  // Heartbeats over the inter-controller link every `heartbeat_interval_ns`; a peer is
  // declared lost after `heartbeat_misses` intervals without one. Assumption: 100 ms × 3,
  // the order of magnitude of dual-controller arrays' internal heartbeats.
  sim::Time heartbeat_interval_ns = 100 * sim::kMillisecond;
  int heartbeat_misses = 3;
  // Each controller renews its reservation on the DataPacs (the tie-breaker) every
  // `lease_renew_ns`; it stays valid for `lease_ns` after the last renewal. A controller may
  // take over its peer's volumes only once the peer's reservation has lapsed. Assumption.
  sim::Time lease_renew_ns = 250 * sim::kMillisecond;
  sim::Time lease_ns = 1 * sim::kSecond;
  // Work of a takeover once the peer's reservation is preempted (scan the mirror, claim the
  // volumes, switch the ALUA port states). Assumption.
  sim::Time takeover_ns = 50 * sim::kMillisecond;
  // Firmware boot, from power (or a restore) to replaying the vault. Assumption.
  sim::Time boot_ns = 20 * sim::kSecond;
  // Vault: each controller writes its cache's dirty data (its own and the peer's mirrored)
  // to its own flash module at `vault_bytes_per_second` after `vault_overhead_ns` of
  // quiescing, while the supercaps feed `holdup_load_w` (both controllers; the DataPacs are
  // shed). Assumptions: an M.2 flash module per controller, 2 GB/s; 300 W of controllers.
  std::int64_t vault_bytes_per_second = 2'000'000'000;
  sim::Time vault_overhead_ns = 2 * sim::kSecond;
  double holdup_load_w = 300;
  // Test-only switches that break a guarantee, so that a test can show it sees the loss:
  // skip the vault (power loss drops the cache), take over on heartbeat loss without the
  // DataPac reservation (two writers under a cut link), do not mirror (failover loses data).
  bool test_skip_vault = false;
  bool test_no_fencing = false;
  bool test_no_mirror = false;
};

}  // namespace afasim::controller
