#include "controller/rebuilder.h"

#include <algorithm>
#include <cstdio>

#include "controller/controller_pair.h"
#include "controller/extent_mover.h"
#include "sim/assert.h"

namespace afasim::controller {

using raid::ChunkAddr;
using raid::RaidType;
using sim::Status;
using sim::Time;

void Rebuilder::drive_lost(int drive) {
  queue_.push_back(drive);
  if (!status_.active) start();
}

int Rebuilder::resume_interrupted() {
  const raid::ExtentTable& table = ctx_.thin.extents();
  std::vector<bool> pending(static_cast<std::size_t>(ctx_.hw.drive_count()), false);
  for (std::uint32_t id = 0; id < table.size(); ++id) {
    const raid::Extent& e = table[id];
    if (e.is_free() || e.lost) continue;
    for (int m = 0; m < e.member_count; ++m)
      if (e.is_missing(m)) pending[static_cast<std::size_t>(e.members[static_cast<std::size_t>(m)].drive)] = true;
  }
  int queued = 0;
  for (int d = 0; d < static_cast<int>(pending.size()); ++d) {
    const bool already = std::find(queue_.begin(), queue_.end(), d) != queue_.end() ||
                         (status_.active && status_.drive == d);
    if (!pending[static_cast<std::size_t>(d)] || already) continue;
    queue_.push_back(d);
    ++queued;
  }
  if (queued > 0 && !status_.active) start();
  return queued;
}

void Rebuilder::space_added() {
  if (status_.active) {
    space_added_ = true;
    return;
  }
  resume_interrupted();
}

void Rebuilder::pause(const std::string& why) {
  if (!status_.active || paused_) return;
  paused_ = true;
  status_.paused_since_ns = ctx_.sim.now();
  char buf[200];
  std::snprintf(buf, sizeof buf, "rebuild of drive %d paused at %.0f %% (%s)", status_.drive + 1, status_.percent(),
                why.c_str());
  ctx_.emit(Severity::kWarning, "rebuild", ArrayContext::drive_object(status_.drive), buf);
}

void Rebuilder::resume() {
  if (!paused_) return;
  paused_ = false;
  const Time paused = status_.paused_since_ns >= 0 ? ctx_.sim.now() - status_.paused_since_ns : 0;
  status_.paused_ns += paused;
  status_.paused_since_ns = -1;
  ++epoch_;  // a piece scheduled before the pause must not start a second chain
  waiting_ = false;
  char buf[200];
  std::snprintf(buf, sizeof buf, "rebuild of drive %d resumed at %.0f %% after %.1f s paused", status_.drive + 1,
                status_.percent(), sim::to_seconds(paused));
  ctx_.emit(Severity::kInfo, "rebuild", ArrayContext::drive_object(status_.drive), buf);
  schedule_next(ctx_.sim.now());
}

void Rebuilder::schedule_next(Time at) {
  ctx_.sim.at(at, [this, epoch = epoch_] {
    if (epoch == epoch_) next();
  });
}

void Rebuilder::start() {
  const raid::ExtentTable& table = ctx_.thin.extents();
  while (!queue_.empty()) {
    const int drive = queue_.front();
    queue_.erase(queue_.begin());
    extents_.clear();
    for (std::uint32_t id = 0; id < table.size(); ++id) {
      const raid::Extent& e = table[id];
      if (e.is_free() || e.lost) continue;
      for (int m = 0; m < e.member_count; ++m)
        if (e.members[static_cast<std::size_t>(m)].drive == drive && e.is_missing(m)) {
          extents_.push_back(id);
          break;
        }
    }
    if (extents_.empty()) continue;
    status_ = RebuildStatus{};
    left_degraded_.clear();
    status_.active = true;
    status_.drive = drive;
    status_.total_bytes = static_cast<std::int64_t>(extents_.size()) * ctx_.raid.chunk_bytes();
    status_.started_ns = ctx_.sim.now();
    progress_reported_ = 0;
    char buf[200];
    std::snprintf(buf, sizeof buf, "rebuild of drive %d started: %zu chunk(s), %.2f GB into spare space at up to %.0f MB/s",
                  drive + 1, extents_.size(), status_.total_bytes / 1e9,
                  ctx_.options.rebuild_bytes_per_second / 1e6);
    ctx_.emit(Severity::kWarning, "rebuild", ArrayContext::drive_object(drive), buf);
    schedule_next(ctx_.sim.now());
    return;
  }
  status_.active = false;
}

std::int64_t Rebuilder::piece_bytes() const {
  return std::min(ctx_.raid.layout(RaidType::kRaid5).strip_bytes(), ctx_.raid.chunk_bytes());
}

void Rebuilder::start_piece(const raid::Extent& e, int m, ChunkAddr replacement, std::int64_t offset,
                            std::int64_t length) {
  // The survivors a lost member is rebuilt from, read at once (phase 0): its mirror, or every
  // other RAID 5 member, whose XOR is the lost strip (one stripe row's parity computation);
  // then the replacement's write (phase 1).
  plan_.clear();
  for (int o = 0; o < e.member_count; ++o) {
    if (o == m || e.is_missing(o)) continue;
    if (e.type == RaidType::kRaid10 && o != raid::Layout::mirror_of(m)) continue;
    raid::MemberOp read;
    read.addr = e.members[static_cast<std::size_t>(o)];
    read.offset_in_chunk = offset;
    read.length = length;
    read.op = raid::MemberOpKind::kRead;
    plan_.ops.push_back(read);
    if (e.type == RaidType::kRaid5) plan_.xor_bytes += length;
  }
  if (e.type == RaidType::kRaid5) plan_.parity_rows = 1;  // a piece is one stripe row
  raid::MemberOp write;
  write.addr = replacement;
  write.offset_in_chunk = offset;
  write.length = length;
  write.op = raid::MemberOpKind::kWrite;
  write.phase = 1;
  plan_.ops.push_back(write);
  ++in_flight_;
  ctx_.timing.background(pair_.worker_for(e.volume_id), plan_, [this, epoch = epoch_](Time) {
    --in_flight_;
    // A chain waiting for a place, or for the last pieces before completing, goes on.
    if (waiting_ && epoch == epoch_) {
      waiting_ = false;
      next();
    }
  });
}

bool Rebuilder::next_chunk() {
  const int drive = status_.drive;
  const std::int64_t chunk = ctx_.raid.chunk_bytes();
  while (!extents_.empty()) {
    const std::uint32_t id = extents_.back();
    extents_.pop_back();
    raid::Extent& e = ctx_.thin.extents()[id];
    int m = -1;
    for (int i = 0; i < e.member_count; ++i)
      if (e.members[static_cast<std::size_t>(i)].drive == drive && e.is_missing(i)) m = i;
    if (e.is_free() || e.lost || m < 0) {  // freed, lost or already rebuilt meanwhile
      status_.done_bytes += chunk;
      if (e.lost && !e.is_free()) status_.lost_bytes += chunk;
      continue;
    }
    mover_.abort(id, "the extent is being rebuilt");  // its target could take the rebuilt member's SSD
    const pool::ThinVolume* v = ctx_.thin.find(e.volume_id);
    std::optional<int> datapac;
    if (e.type == RaidType::kRaid10) datapac = ctx_.hw.datapac_of(drive);  // keep the pair across DataPacs
    auto replacement = ctx_.thin.allocator().allocate_replacement(e.member_list(), v ? v->pool_drives : std::vector<int>{},
                                                                  datapac);
    if (!replacement.is_ok()) {
      // Said once per drive (a DataPac lost can stall thousands of extents); complete()
      // gives the total and names every volume left degraded.
      if (status_.stalled_bytes == 0)
        ctx_.emit(Severity::kCritical, "rebuild", ArrayContext::drive_object(drive),
                  "rebuild of drive " + std::to_string(drive + 1) + " stalled: " + replacement.status().message() +
                      "; volume " + std::to_string(e.volume_id) +
                      " stays degraded (the rebuild's end names every volume left so)");
      status_.stalled_bytes += chunk;
      left_degraded_.insert(e.volume_id);
      continue;
    }
    chunk_ = Chunk{id, e.volume_id, e.index, m, *replacement, 0};
    return true;
  }
  return false;
}

std::string Rebuilder::degraded_volumes_text() const {
  constexpr std::size_t kNamed = 10;
  std::string text = left_degraded_.size() == 1 ? "; volume " : "; volumes ";
  std::size_t i = 0;
  for (const std::uint64_t id : left_degraded_) {
    if (i == kNamed) break;
    if (i > 0) text += i + 1 == left_degraded_.size() ? " and " : ", ";
    text += std::to_string(id);
    ++i;
  }
  if (left_degraded_.size() > kNamed) text += " and " + std::to_string(left_degraded_.size() - kNamed) + " more";
  return text + (left_degraded_.size() == 1 ? " stays degraded" : " stay degraded");
}

void Rebuilder::complete() {
  const int drive = status_.drive;
  char buf[256];
  // The time the array was off (or had no controller serving) is not rebuild time.
  const Time rebuilding = ctx_.sim.now() - status_.started_ns - status_.paused_ns;
  // The rate achieved beside the limit the start announced: each piece waits for the last.
  const double seconds = sim::to_seconds(rebuilding);
  const std::int64_t rebuilt = status_.done_bytes - status_.lost_bytes - status_.failed_bytes;
  const double mb_per_s = seconds > 0 ? rebuilt / 1e6 / seconds : 0.0;
  if (status_.paused_ns > 0)
    std::snprintf(buf, sizeof buf,
                  "rebuild of drive %d complete: %.2f GB in %.1f s, %.0f MB/s (not counting %.1f s paused)",
                  drive + 1, rebuilt / 1e9, seconds, mb_per_s, sim::to_seconds(status_.paused_ns));
  else
    std::snprintf(buf, sizeof buf, "rebuild of drive %d complete: %.2f GB in %.1f s, %.0f MB/s", drive + 1,
                  rebuilt / 1e9, seconds, mb_per_s);
  if (status_.failed_bytes > 0) {
    // Not complete either: what could not be read stays degraded (a second failure there
    // loses data), and says so; stalled chunks, if any, are named too.
    std::string stalled;
    if (status_.stalled_bytes > 0) {
      std::snprintf(buf, sizeof buf, ", %.2f GB found no SSD to take it", status_.stalled_bytes / 1e9);
      stalled = buf;
    }
    std::snprintf(buf, sizeof buf,
                  "rebuild of drive %d incomplete: %.2f GB rebuilt, %.2f GB could not be reconstructed (a surviving "
                  "SSD could not be read)%s",
                  drive + 1, rebuilt / 1e9, status_.failed_bytes / 1e9, stalled.c_str());
    ctx_.emit(Severity::kCritical, "rebuild", ArrayContext::drive_object(drive), buf + degraded_volumes_text());
  } else if (status_.lost_bytes > 0 && status_.stalled_bytes == 0) {
    std::snprintf(buf, sizeof buf,
                  "rebuild of drive %d ended: %.2f GB rebuilt in %.1f s, %.0f MB/s; %.2f GB of extents lost meanwhile "
                  "(more members gone than their RAID type tolerates) were not rebuilt",
                  drive + 1, rebuilt / 1e9, seconds, mb_per_s, status_.lost_bytes / 1e9);
    ctx_.emit(Severity::kError, "rebuild", ArrayContext::drive_object(drive), buf);
  } else if (status_.stalled_bytes > 0) {
    // Not complete: what could not be placed stays degraded, and says so.
    std::snprintf(buf, sizeof buf,
                  "rebuild of drive %d incomplete: %.2f GB rebuilt, %.2f GB found no SSD to take it (no spare space "
                  "where its RAID type may place it)",
                  drive + 1, rebuilt / 1e9, status_.stalled_bytes / 1e9);
    ctx_.emit(Severity::kCritical, "rebuild", ArrayContext::drive_object(drive), buf + degraded_volumes_text());
  } else if (status_.unreadable_blocks > 0) {
    // Complete, every extent whole again, but not every block: say so beside the rate.
    std::string msg = buf;
    msg += "; " + std::to_string(status_.unreadable_blocks) +
           " block(s) of 4 KiB had no readable source (a surviving SSD's media error) and read as errors until "
           "rewritten";
    ctx_.emit(Severity::kError, "rebuild", ArrayContext::drive_object(drive), msg);
  } else {
    ctx_.emit(Severity::kInfo, "rebuild", ArrayContext::drive_object(drive), buf);
  }
  status_.active = false;
  if (status_.lost_bytes == 0 && status_.failed_bytes == 0 && status_.stalled_bytes == 0)
    status_.completed_ns = ctx_.sim.now();
  if (space_added_) {
    space_added_ = false;
    resume_interrupted();  // this drive's stalled chunks too, behind the drives queued already
  }
  if (!status_.active) start();
}

bool Rebuilder::drop_stale_chunk() {
  Chunk& rc = *chunk_;
  raid::Extent& e = ctx_.thin.extents()[rc.extent];
  const bool replacement_ok = ctx_.thin.allocator().drive(rc.replacement.drive).usable;
  const bool still_needed = !e.is_free() && e.volume_id == rc.volume_id && e.index == rc.index && !e.lost &&
                            e.is_missing(rc.member) &&
                            e.members[static_cast<std::size_t>(rc.member)].drive == status_.drive;
  if (still_needed && replacement_ok) return false;
  // The extent went away or was lost meanwhile, or the SSD taking the chunk failed: give
  // the chunk back and, in the last case, start this extent over elsewhere.
  if (replacement_ok) ctx_.thin.allocator().release({rc.replacement});
  if (still_needed) extents_.push_back(rc.extent);
  status_.done_bytes -= rc.piece * piece_bytes();
  if (!still_needed) status_.done_bytes += ctx_.raid.chunk_bytes();
  if (!still_needed && e.lost && !e.is_free()) status_.lost_bytes += ctx_.raid.chunk_bytes();
  chunk_.reset();
  schedule_next(ctx_.sim.now());
  return true;
}

void Rebuilder::next() {
  if (paused_) return;  // resume() schedules the next piece
  if (!pair_.online()) {
    pause(pair_.mains_on() ? "no controller is serving" : "the array lost power");  // resumed when a controller is active
    return;
  }
  if (in_flight_ >= kPiecesInFlight) {  // the piece completing next goes on
    waiting_ = true;
    return;
  }
  const std::int64_t chunk = ctx_.raid.chunk_bytes();
  if (!chunk_ && !next_chunk()) {
    if (in_flight_ == 0) return complete();
    waiting_ = true;  // complete once the last pieces are written
    return;
  }
  if (drop_stale_chunk()) return;
  Chunk& rc = *chunk_;
  raid::Extent& e = ctx_.thin.extents()[rc.extent];
  // One piece of the chunk: read from the survivors, write to the replacement. Pieces keep
  // the rebuild's back-end I/O in host-sized bites between host I/O on the same SSDs.
  const std::int64_t piece = piece_bytes();
  start_piece(e, rc.member, rc.replacement, rc.piece * piece, piece);
  ++rc.piece;
  status_.done_bytes += piece;
  if (rc.piece * piece >= chunk) {
    switch_member(e);
    chunk_.reset();
    report_progress();
  }
  // Paced: the next piece starts when the rate allows and a place is free.
  schedule_next(ctx_.sim.now() + sim::transfer_time(piece, ctx_.options.rebuild_bytes_per_second));
}

void Rebuilder::switch_member(raid::Extent& e) {
  // A write to the extent lands either before (and is reconstructed) or after (and goes to
  // the new chunk).
  const Chunk& rc = *chunk_;
  const int drive = status_.drive;
  std::vector<std::int64_t> unreadable;
  Status st = ctx_.raid.rebuild_member(e, rc.member, rc.replacement, unreadable);
  if (!st.is_ok()) {
    status_.failed_bytes += ctx_.raid.chunk_bytes();
    left_degraded_.insert(e.volume_id);
    // Rows written before the failure hold this extent's bytes: a chunk goes back to the pool
    // empty, or the next rebuild onto it shows them where it writes nothing (review 31).
    (void)ctx_.raid.trim_chunk(rc.replacement);
    ctx_.thin.allocator().release({rc.replacement});
    ctx_.emit(Severity::kCritical, "rebuild", ArrayContext::drive_object(drive), "rebuild of a chunk failed: " + st.message());
    return;
  }
  const std::uint16_t was_missing = e.missing;
  e.members[static_cast<std::size_t>(rc.member)] = rc.replacement;
  e.missing = static_cast<std::uint16_t>(e.missing & ~(1u << rc.member));
  ctx_.thin.update_health(e, was_missing, e.lost);
  // The extent's new member and its unreadable blocks' marks are saved in one transaction
  // (Array::on_extent_changed): a kill cannot keep one without the other.
  if (Status p = ctx_.thin.notify(pool::ThinMap::Change::kUpdated, e); !p.is_ok())
    ctx_.emit(Severity::kError, "rebuild", ArrayContext::drive_object(drive), "could not persist a rebuilt extent: " + p.message());
  if (!unreadable.empty()) report_unreadable(e, unreadable);
  if (VolumeRuntime* v = ctx_.volumes.find(e.volume_id))
    report_volume_state(ctx_, *v, "rebuild of drive " + std::to_string(drive + 1) + " restored its extents",
                        status_.active);
}

void Rebuilder::report_unreadable(const raid::Extent& e, const std::vector<std::int64_t>& unreadable) {
  status_.unreadable_blocks += static_cast<std::int64_t>(unreadable.size());
  const std::int64_t extent_bytes = ctx_.extent_bytes(e.type);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "rebuild of drive %d: volume %lld extent %lld (volume bytes %lld..%lld): %zu block(s) of 4 KiB could not "
                "be reconstructed (a surviving member has a media error there; first at chunk byte %lld of member %d); "
                "reads of them fail until they are rewritten",
                status_.drive + 1, static_cast<long long>(e.volume_id), static_cast<long long>(e.index),
                static_cast<long long>(e.index * extent_bytes), static_cast<long long>((e.index + 1) * extent_bytes),
                unreadable.size(), static_cast<long long>(unreadable.front()), chunk_->member);
  ctx_.emit(Severity::kError, "rebuild", ArrayContext::drive_object(status_.drive), buf);
}

void Rebuilder::report_progress() {
  const int percent = static_cast<int>(status_.percent());
  if (percent / 10 > progress_reported_ / 10 && percent < 100) {
    progress_reported_ = percent;
    ctx_.emit(Severity::kInfo, "rebuild", ArrayContext::drive_object(status_.drive),
              "rebuild of drive " + std::to_string(status_.drive + 1) + " " + std::to_string(percent) + " % done");
  }
}

}  // namespace afasim::controller
