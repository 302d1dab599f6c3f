#include "controller/context.h"

#include <cstddef>

namespace afasim::controller {

// The layout a read of a cold volume relies on (VolumeRuntime's comment).
static_assert(offsetof(VolumeRuntime, claims) < 64 && offsetof(VolumeRuntime, thin) < 64,
              "VolumeRuntime: the id, thin map and claims in the first cache line");
static_assert(offsetof(VolumeRuntime, stats) + offsetof(VolumeIoStats, read_bytes) +
                      sizeof(std::int64_t) <= 64,
              "VolumeRuntime: the read counters in the first line");
static_assert((offsetof(VolumeRuntime, cache) + offsetof(CacheVolume, cached_blocks)) / 64 == 1,
              "VolumeRuntime: the write cache's count of blocks in the second line");

void ArrayContext::after_plan(const raid::Plan& plan, const sim::Status& st) const {
  if ((plan.member_writes || plan.move_target_bytes > 0) && after_execute) after_execute(plan);
  if (plan.member_writes || st.code() == sim::Code::kNoSpace) note_host_disk(st);
}

void ArrayContext::note_host_disk(const sim::Status& st, HostFile file) const {
  bool& full = host_disk_full[static_cast<std::size_t>(file)];
  sim::Time& last_enospc = host_disk_enospc_ns[static_cast<std::size_t>(file)];
  const char* what = file == HostFile::kPayload ? "payload writes" : "the thin map's commits to afasim.db";
  if (st.is_ok()) {
    // Space again only after 100 ms of simulated time without ENOSPC: on a nearly full disk,
    // writes that take no new space succeed between those that fail, and the pair of events
    // flapped five times a simulated second (hostile round 25b).
    if (!full || sim.now() - last_enospc < 100 * sim::kMillisecond) return;
    full = false;
    emit(Severity::kInfo, "system", "", std::string("host file system has space again: ") + what + " succeed");
    return;
  }
  if (st.code() != sim::Code::kNoSpace) return;
  last_enospc = sim.now();
  if (full) return;
  full = true;
  emit(Severity::kCritical, "system", "",
       std::string("host file system full: ") + what + " fail (" + st.message() +
           "); writes that need them fail with ENOSPC until space is freed");
}

void report_volume_state(const ArrayContext& ctx, VolumeRuntime& v, const std::string& why, bool rebuilding) {
  const VolumeState now = volume_state_of(*v.thin);
  const std::int64_t missing_before = v.reported_degraded_members;
  v.reported_degraded_members = v.thin->degraded_members;
  const std::string name = "volume " + std::to_string(v.id);
  const std::string object = "volume/" + std::to_string(v.id);
  const std::string raid(raid::raid_type_name(v.raid_type()));
  if (now == v.reported_state) {
    // A second SSD's failure in a volume already degraded exposes more of it: an operator
    // needs to hear of it as of the first (a review, 2026-12-06: only "drive 30 failed").
    // Counted in members, not extents: in RAID 10 a second SSD of the same group takes other
    // members of extents already degraded (review 29).
    if (now == VolumeState::kDegraded && v.thin->degraded_members > missing_before)
      ctx.emit(Severity::kWarning, "volume", object,
               name + " degraded further: " + std::to_string(v.thin->degraded_members) +
                   " member(s) missing, up from " + std::to_string(missing_before) + ", in " +
                   std::to_string(v.thin->degraded_extents) + " extent(s) (" + why + "); " + raid +
                   " redundancy covers them" +
                   (rebuilding ? " until the rebuilds restore them" : ""));
    return;
  }
  const VolumeState was = v.reported_state;
  v.reported_state = now;
  switch (now) {
    case VolumeState::kFailed:
      ctx.emit(Severity::kCritical, "volume", object,
               name + " failed: " + std::to_string(v.thin->lost_extents) + " extent(s) lost more members than " + raid +
                   " tolerates (" + why + "); every I/O to the volume now returns an I/O error");
      break;
    case VolumeState::kDegraded:
      ctx.emit(Severity::kWarning, "volume", object,
               name + " degraded: " + std::to_string(v.thin->degraded_extents) + " extent(s) lost a member (" + why +
                   "); " + raid + " redundancy covers it" + (rebuilding ? " until the rebuild restores it" : ""));
      break;
    case VolumeState::kOnline:
      ctx.emit(Severity::kInfo, "volume", object,
               name + " online again (was " + (was == VolumeState::kFailed ? "failed" : "degraded") + "): " + why);
      break;
  }
}

}  // namespace afasim::controller
