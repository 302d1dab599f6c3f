// Drive faults and the rebuild into distributed spare space (docs/faults.md).
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "controller/data_path.h"
#include "sim/assert.h"

namespace afasim::controller {

using pool::ChunkAddr;
using raid::RaidType;
using sim::Status;
using sim::Time;

namespace {
std::string drive_object(int drive) { return "drive/" + std::to_string(drive + 1); }
bool is_missing(std::uint16_t mask, int m) { return (mask >> m) & 1u; }

// "5", "4.5", "1.25": a multiplier as a person writes it.
std::string multiplier_text(double m) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", m);
  return buf;
}

// Whether `missing` members exceed what the layout tolerates.
bool beyond_redundancy(RaidType type, std::uint16_t missing, int members) {
  if (missing == 0) return false;
  switch (type) {
    case RaidType::kRaid0: return true;
    case RaidType::kRaid5: return (missing & (missing - 1)) != 0;  // two or more
    case RaidType::kRaid10:
      for (int m = 0; m < members; m += 2)
        if (is_missing(missing, m) && is_missing(missing, m + 1)) return true;
      return false;
  }
  return true;
}
}  // namespace

void DataPath::update_extent_health(Extent& e, bool was_degraded, bool was_lost) {
  VolumeRuntime* v = find_volume(e.volume_id);
  const bool lost = e.lost;
  const bool degraded = !lost && e.missing != 0;
  if (v == nullptr) return;
  v->lost_extents += static_cast<int>(lost) - static_cast<int>(was_lost);
  v->degraded_extents += static_cast<int>(degraded) - static_cast<int>(was_degraded);
}

void DataPath::report_volume_state(VolumeRuntime& v, const std::string& why) {
  const VolumeState now = volume_state(v.id);
  if (now == v.reported_state) return;
  const VolumeState was = v.reported_state;
  v.reported_state = now;
  const std::string name = "volume " + std::to_string(v.id);
  const std::string raid(raid::raid_type_name(v.raid_type));
  switch (now) {
    case VolumeState::kFailed:
      emit(Severity::kCritical, "volume", "volume/" + std::to_string(v.id),
           name + " failed: " + std::to_string(v.lost_extents) +
               " extent(s) lost more members than " + raid + " tolerates (" + why +
               "); its I/O to them now returns errors");
      break;
    case VolumeState::kDegraded:
      emit(Severity::kWarning, "volume", "volume/" + std::to_string(v.id),
           name + " degraded: " + std::to_string(v.degraded_extents) +
               " extent(s) lost a member (" + why + "); " + raid + " redundancy covers it" +
               (rebuild_.active ? " until the rebuild restores it" : ""));
      break;
    case VolumeState::kOnline:
      emit(Severity::kInfo, "volume", "volume/" + std::to_string(v.id),
           name + " online again (was " + (was == VolumeState::kFailed ? "failed" : "degraded") +
               "): " + why);
      break;
  }
}

void DataPath::pause_rebuild(const std::string& why) {
  if (!rebuild_.active || rebuild_paused_) return;
  rebuild_paused_ = true;
  rebuild_.paused_since_ns = sim_.now();
  char buf[200];
  std::snprintf(buf, sizeof buf, "rebuild of drive %d paused at %.0f %% (%s)", rebuild_.drive + 1,
                rebuild_.percent(), why.c_str());
  emit(Severity::kWarning, "rebuild", drive_object(rebuild_.drive), buf);
}

void DataPath::resume_rebuild() {
  if (!rebuild_paused_) return;
  rebuild_paused_ = false;
  const Time paused = rebuild_.paused_since_ns >= 0 ? sim_.now() - rebuild_.paused_since_ns : 0;
  rebuild_.paused_ns += paused;
  rebuild_.paused_since_ns = -1;
  ++rebuild_epoch_;  // a piece scheduled before the pause must not start a second chain
  char buf[200];
  std::snprintf(buf, sizeof buf, "rebuild of drive %d resumed at %.0f %% after %.1f s paused",
                rebuild_.drive + 1, rebuild_.percent(), sim::to_seconds(paused));
  emit(Severity::kInfo, "rebuild", drive_object(rebuild_.drive), buf);
  schedule_rebuild_next(sim_.now());
}

void DataPath::schedule_rebuild_next(Time at) {
  sim_.at(at, [this, epoch = rebuild_epoch_] {
    if (epoch == rebuild_epoch_) rebuild_next();
  });
}

Status DataPath::lose_drive(int drive, const char* how) {
  if (drive < 0 || drive >= drive_count()) return sim::not_found("no drive " + std::to_string(drive + 1));
  datapac::Ssd& ssd = *ssds_[static_cast<std::size_t>(drive)];
  if (ssd.state() != datapac::SsdState::kHealthy)
    return sim::conflict("drive " + std::to_string(drive + 1) + " is already " +
                         (ssd.state() == datapac::SsdState::kFailed ? "failed" : "removed"));
  abort_moves_on_drive(drive);  // before the drive goes: a move from or to it is given up
  AFASIM_RETURN_IF_ERROR(std::strcmp(how, "pulled") == 0 ? ssd.remove() : ssd.fail());
  allocator_.set_usable(drive, false);
  emit(Severity::kError, "drive", drive_object(drive),
       "drive " + std::to_string(drive + 1) + " (DataPac " + std::to_string(datapac_of(drive)) + ") " + how);

  std::vector<std::uint32_t> affected;
  for (std::uint32_t id = 0; id < extents_.size(); ++id) {
    Extent& e = extents_[id];
    for (int m = 0; m < e.member_count; ++m) {
      if (e.members[static_cast<std::size_t>(m)].drive != drive || is_missing(e.missing, m)) continue;
      const bool was_degraded = !e.lost && e.missing != 0;
      const bool was_lost = e.lost;
      e.missing = static_cast<std::uint16_t>(e.missing | (1u << m));
      e.lost = beyond_redundancy(e.type, e.missing, e.member_count);
      update_extent_health(e, was_degraded, was_lost);
      if (!e.lost) affected.push_back(id);
      (void)notify_extent(ExtentChange::kUpdated, e);
    }
  }
  // One event per volume whose state changed (online -> degraded, or -> failed).
  for (auto& vp : volumes_)
    if (vp) report_volume_state(*vp, "drive " + std::to_string(drive + 1) + " " + how);
  if (!affected.empty()) {
    rebuild_queue_.push_back(drive);
    if (!rebuild_.active) start_rebuild();
  }
  return Status::ok();
}

Status DataPath::fail_drive(int drive) { return lose_drive(drive, "failed"); }

int DataPath::resume_rebuilds() {
  std::vector<bool> pending(static_cast<std::size_t>(drive_count()), false);
  for (const Extent& e : extents_) {
    if (e.member_count == 0 || e.lost) continue;
    for (int m = 0; m < e.member_count; ++m)
      if (is_missing(e.missing, m)) pending[static_cast<std::size_t>(e.members[static_cast<std::size_t>(m)].drive)] = true;
  }
  int queued = 0;
  for (int d = 0; d < drive_count(); ++d) {
    const bool already = std::find(rebuild_queue_.begin(), rebuild_queue_.end(), d) != rebuild_queue_.end() ||
                         (rebuild_.active && rebuild_.drive == d);
    if (!pending[static_cast<std::size_t>(d)] || already) continue;
    rebuild_queue_.push_back(d);
    ++queued;
  }
  if (queued > 0 && !rebuild_.active) start_rebuild();
  return queued;
}
Status DataPath::pull_drive(int drive) { return lose_drive(drive, "pulled"); }

Status DataPath::replace_drive(int drive) {
  if (drive < 0 || drive >= drive_count()) return sim::not_found("no drive " + std::to_string(drive + 1));
  datapac::Ssd& ssd = *ssds_[static_cast<std::size_t>(drive)];
  if (ssd.state() == datapac::SsdState::kHealthy)
    return sim::conflict("drive " + std::to_string(drive + 1) + " is healthy; fail or pull it before replacing it");
  AFASIM_RETURN_IF_ERROR(ssd.insert_replacement());
  // The slowness was the old drive's: the new one runs at normal speed.
  if (ssd.latency_multiplier() != 1.0) ssd.set_latency_multiplier(1.0);
  allocator_.reset_drive(drive);
  emit(Severity::kInfo, "drive", drive_object(drive),
       "drive " + std::to_string(drive + 1) + " replaced by a new SSD (empty, 0 % wear); new extents may use it");
  return Status::ok();
}

Status DataPath::set_drive_latency_multiplier(int drive, double multiplier) {
  if (drive < 0 || drive >= drive_count()) return sim::not_found("no drive " + std::to_string(drive + 1));
  if (!(multiplier >= kLatencyMultiplierMin && multiplier <= kLatencyMultiplierMax))
    return sim::unprocessable(
        "latency multiplier must be between " + multiplier_text(kLatencyMultiplierMin) + " and " +
        multiplier_text(kLatencyMultiplierMax) + ", got " + multiplier_text(multiplier));
  datapac::Ssd& ssd = *ssds_[static_cast<std::size_t>(drive)];
  const std::string name = "drive " + std::to_string(drive + 1);
  if (ssd.state() != datapac::SsdState::kHealthy)
    return sim::conflict(name + " is " +
                         (ssd.state() == datapac::SsdState::kFailed ? "failed" : "removed") +
                         "; its speed can change only while it is in service");
  if (ssd.latency_multiplier() == multiplier)
    return sim::conflict(multiplier == 1.0 ? name + " is at normal speed"
                                           : name + " is already slowed to latency x" +
                                                 multiplier_text(multiplier));
  ssd.set_latency_multiplier(multiplier);
  emit(multiplier > 1 ? Severity::kWarning : Severity::kInfo, "drive", drive_object(drive),
       multiplier > 1 ? name + " slowed: latency x" + multiplier_text(multiplier)
                      : name + " back to normal latency");
  return Status::ok();
}

void DataPath::start_rebuild() {
  while (!rebuild_queue_.empty()) {
    const int drive = rebuild_queue_.front();
    rebuild_queue_.erase(rebuild_queue_.begin());
    rebuild_extents_.clear();
    for (std::uint32_t id = 0; id < extents_.size(); ++id) {
      const Extent& e = extents_[id];
      if (e.member_count == 0 || e.lost) continue;
      for (int m = 0; m < e.member_count; ++m)
        if (e.members[static_cast<std::size_t>(m)].drive == drive && is_missing(e.missing, m)) {
          rebuild_extents_.push_back(id);
          break;
        }
    }
    if (rebuild_extents_.empty()) continue;
    rebuild_ = RebuildStatus{};
    rebuild_.active = true;
    rebuild_.drive = drive;
    rebuild_.total_bytes = static_cast<std::int64_t>(rebuild_extents_.size()) * allocator_.chunk_bytes();
    rebuild_.started_ns = sim_.now();
    rebuild_progress_reported_ = 0;
    char buf[200];
    std::snprintf(buf, sizeof buf, "rebuild of drive %d started: %zu chunk(s), %.2f GB into spare space at %.0f MB/s",
                  drive + 1, rebuild_extents_.size(), rebuild_.total_bytes / 1e9,
                  options_.rebuild_bytes_per_second / 1e6);
    emit(Severity::kWarning, "rebuild", drive_object(drive), buf);
    schedule_rebuild_next(sim_.now());
    return;
  }
  rebuild_.active = false;
}

Status DataPath::rebuild_member(Extent& e, int m, ChunkAddr replacement) {
  // Reconstructs member m's whole chunk strip by strip into `replacement`: a copy from the
  // mirror or the XOR of the survivors. Rows that hold nothing on any source are zeros, and
  // so is the replacement chunk (chunks are trimmed when freed): no bytes to move there.
  const raid::Layout& l = layout(e.type);
  const std::int64_t S = l.strip_bytes();
  const std::int64_t chunk = allocator_.chunk_bytes();
  if (!has_payload()) return Status::ok();
  Work w;
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(S));
  for (std::int64_t row = 0; row < l.rows(); ++row) {
    bool any = false;
    for (int o = 0; o < e.member_count && !any; ++o) {
      if (o == m || is_missing(e.missing, o)) continue;
      const ChunkAddr a = e.members[static_cast<std::size_t>(o)];
      any = ssds_[static_cast<std::size_t>(a.drive)]->payload_may_hold_data(a.offset_bytes(chunk) + row * S, S);
    }
    if (!any) continue;
    w.ops.clear();
    AFASIM_RETURN_IF_ERROR(read_member(e, m, row * S, S, buf.data(), w));
    AFASIM_RETURN_IF_ERROR(ssds_[static_cast<std::size_t>(replacement.drive)]->write_payload(
        replacement.offset_bytes(chunk) + row * S, {buf.data(), buf.size()}));
  }
  return Status::ok();
}

Time DataPath::time_rebuild_piece(const Extent& e, int m, ChunkAddr replacement, std::int64_t offset,
                                  std::int64_t length) {
  // The survivors a lost member is rebuilt from: its mirror, or every other RAID 5 member.
  Id c = owner(e.volume_id);
  if (c == 0) c = serving(1) ? 1 : 2;
  const Time t = sim_.now();
  Time reads_done = t;
  for (int o = 0; o < e.member_count; ++o) {
    if (o == m || is_missing(e.missing, o)) continue;
    if (e.type == RaidType::kRaid10 && o != raid::Layout::mirror_of(m)) continue;
    reads_done = std::max(reads_done, backend(t, c, e.members[static_cast<std::size_t>(o)], offset, length,
                                              datapac::SsdOp::kRead));
  }
  return backend(reads_done, c, replacement, offset, length, datapac::SsdOp::kWrite);
}

bool DataPath::next_rebuild_chunk() {
  const int drive = rebuild_.drive;
  const std::int64_t chunk = allocator_.chunk_bytes();
  while (!rebuild_extents_.empty()) {
    const std::uint32_t id = rebuild_extents_.back();
    rebuild_extents_.pop_back();
    Extent& e = extents_[id];
    int m = -1;
    for (int i = 0; i < e.member_count; ++i)
      if (e.members[static_cast<std::size_t>(i)].drive == drive && is_missing(e.missing, i)) m = i;
    if (e.member_count == 0 || e.lost || m < 0) {  // freed, lost or already rebuilt meanwhile
      rebuild_.done_bytes += chunk;
      continue;
    }
    abort_move(id, "the extent is being rebuilt");  // its target could take the rebuilt member's SSD
    VolumeRuntime* v = find_volume(e.volume_id);
    std::optional<int> datapac;
    if (e.type == RaidType::kRaid10) datapac = datapac_of(drive);  // keep the pair across DataPacs
    auto replacement = allocator_.allocate_replacement(e.member_list(), v ? v->pool_drives : std::vector<int>{}, datapac);
    if (!replacement.is_ok()) {
      rebuild_.done_bytes += chunk;
      emit(Severity::kCritical, "rebuild", drive_object(drive),
           "rebuild of drive " + std::to_string(drive + 1) + " stalled: " + replacement.status().message() +
               "; volume " + std::to_string(e.volume_id) + " stays degraded");
      continue;
    }
    rebuild_chunk_ = RebuildChunk{id, e.volume_id, e.index, m, *replacement, 0};
    return true;
  }
  return false;
}

void DataPath::rebuild_next() {
  if (rebuild_paused_) return;  // resume_rebuild() schedules the next piece
  if (!online()) {
    pause_rebuild(mains_on_ ? "no controller is serving"
                            : "the array lost power");  // resumed when a controller is active
    return;
  }
  const int drive = rebuild_.drive;
  const std::int64_t chunk = allocator_.chunk_bytes();
  if (!rebuild_chunk_ && !next_rebuild_chunk()) {
    char buf[200];
    // The time the array was off (or had no controller serving) is not rebuild time.
    const Time rebuilding = sim_.now() - rebuild_.started_ns - rebuild_.paused_ns;
    if (rebuild_.paused_ns > 0)
      std::snprintf(buf, sizeof buf,
                    "rebuild of drive %d complete: %.2f GB in %.1f s (not counting %.1f s paused)",
                    drive + 1, rebuild_.done_bytes / 1e9, sim::to_seconds(rebuilding),
                    sim::to_seconds(rebuild_.paused_ns));
    else
      std::snprintf(buf, sizeof buf, "rebuild of drive %d complete: %.2f GB in %.1f s", drive + 1,
                    rebuild_.done_bytes / 1e9, sim::to_seconds(rebuilding));
    emit(Severity::kInfo, "rebuild", drive_object(drive), buf);
    rebuild_.active = false;
    start_rebuild();
    return;
  }
  RebuildChunk& rc = *rebuild_chunk_;
  Extent& e = extents_[rc.extent];
  const bool replacement_ok = allocator_.drive(rc.replacement.drive).usable;
  const bool still_needed = e.member_count > 0 && e.volume_id == rc.volume_id && e.index == rc.index && !e.lost &&
                            is_missing(e.missing, rc.member) &&
                            e.members[static_cast<std::size_t>(rc.member)].drive == drive;
  if (!still_needed || !replacement_ok) {
    // The extent went away or was lost meanwhile, or the SSD taking the chunk failed: give
    // the chunk back and, in the last case, start this extent over elsewhere.
    if (replacement_ok) allocator_.release({rc.replacement});
    if (still_needed) rebuild_extents_.push_back(rc.extent);
    rebuild_.done_bytes -= rc.piece * kRebuildPieceBytes;
    if (!still_needed) rebuild_.done_bytes += chunk;
    rebuild_chunk_.reset();
    schedule_rebuild_next(sim_.now());
    return;
  }
  // One piece of the chunk: read from the survivors, write to the replacement. Pieces keep
  // the rebuild's back-end I/O in host-sized bites between host I/O on the same SSDs.
  const std::int64_t piece = std::min(kRebuildPieceBytes, chunk);
  const Time done = time_rebuild_piece(e, rc.member, rc.replacement, rc.piece * piece, piece);
  ++rc.piece;
  rebuild_.done_bytes += piece;
  if (rc.piece * piece >= chunk) {
    // The bytes move, and the member switches, in this one event: a write to the extent
    // lands either before (and is reconstructed) or after (and goes to the new chunk).
    Status st = rebuild_member(e, rc.member, rc.replacement);
    if (!st.is_ok()) {
      allocator_.release({rc.replacement});
      emit(Severity::kCritical, "rebuild", drive_object(drive), "rebuild of a chunk failed: " + st.message());
    } else {
      const bool was_degraded = !e.lost && e.missing != 0;
      e.members[static_cast<std::size_t>(rc.member)] = rc.replacement;
      e.missing = static_cast<std::uint16_t>(e.missing & ~(1u << rc.member));
      update_extent_health(e, was_degraded, false);
      if (Status p = notify_extent(ExtentChange::kUpdated, e); !p.is_ok())
        emit(Severity::kError, "rebuild", drive_object(drive), "could not persist a rebuilt extent: " + p.message());
      if (VolumeRuntime* v = find_volume(e.volume_id))
        report_volume_state(
            *v, "rebuild of drive " + std::to_string(drive + 1) + " restored its extents");
    }
    rebuild_chunk_.reset();
    const int percent = static_cast<int>(rebuild_.percent());
    if (percent / 10 > rebuild_progress_reported_ / 10 && percent < 100) {
      rebuild_progress_reported_ = percent;
      emit(Severity::kInfo, "rebuild", drive_object(drive),
           "rebuild of drive " + std::to_string(drive + 1) + " " + std::to_string(percent) + " % done");
    }
  }
  // Paced: the next piece starts when this one is written and the rate allows.
  const Time paced = sim_.now() + sim::transfer_time(piece, options_.rebuild_bytes_per_second);
  schedule_rebuild_next(std::max(done, paced));
}

}  // namespace afasim::controller
