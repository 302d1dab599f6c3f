// Drive faults of the DataPath (docs/faults.md): a drive failed or pulled, replaced, slowed,
// a block corrupted.
#include <cstdio>
#include <cstring>

#include "config/json_text.h"
#include "controller/data_path.h"
#include "sim/assert.h"

namespace afasim::controller {

using sim::Status;

bool DataPath::mark_members_lost(int drive) {
  bool affected = false;
  raid::ExtentTable& table = thin_->extents();
  for (std::uint32_t id = 0; id < table.size(); ++id) {
    raid::Extent& e = table[id];
    for (int m = 0; m < e.member_count; ++m) {
      if (e.members[static_cast<std::size_t>(m)].drive != drive || e.is_missing(m)) continue;
      const std::uint16_t was_missing = e.missing;
      const bool was_lost = e.lost;
      e.missing = static_cast<std::uint16_t>(e.missing | (1u << m));
      e.lost = raid::beyond_redundancy(e.type, e.missing, e.member_count);
      thin_->update_health(e, was_missing, was_lost);
      if (!e.lost) affected = true;
      (void)thin_->notify(ExtentChange::kUpdated, e);
    }
  }
  return affected;
}

Status DataPath::lose_drive(int drive, const char* how) {
  if (drive < 0 || drive >= drive_count()) return sim::not_found("no drive " + std::to_string(drive + 1));
  datapac::Ssd& ssd = hw_->ssd(drive);
  if (ssd.state() != datapac::SsdState::kHealthy)
    return sim::conflict("drive " + std::to_string(drive + 1) + " is already " +
                         (ssd.state() == datapac::SsdState::kFailed ? "failed" : "removed"));
  mover_->abort_on_drive(drive);  // before the drive goes: a move from or to it is given up
  AFASIM_RETURN_IF_ERROR(std::strcmp(how, "pulled") == 0 ? ssd.remove() : ssd.fail());
  thin_->allocator().set_usable(drive, false);
  ctx_->emit(Severity::kError, "drive", ArrayContext::drive_object(drive),
             "drive " + std::to_string(drive + 1) + " (DataPac " + std::to_string(datapac_of(drive)) + ") " + how);
  const bool affected = mark_members_lost(drive);
  // One event per volume whose state changed (online -> degraded, or -> failed).
  const std::string why = "drive " + std::to_string(drive + 1) + " " + how;
  volumes_.for_each([&](VolumeRuntime& v) { report_volume_state(*ctx_, v, why, rebuild_->status().active); });
  if (affected) rebuild_->drive_lost(drive);
  return Status::ok();
}

Status DataPath::replace_drive(int drive) {
  if (drive < 0 || drive >= drive_count()) return sim::not_found("no drive " + std::to_string(drive + 1));
  datapac::Ssd& ssd = hw_->ssd(drive);
  if (ssd.state() == datapac::SsdState::kHealthy)
    return sim::conflict("drive " + std::to_string(drive + 1) + " is healthy; fail or pull it before replacing it");
  AFASIM_RETURN_IF_ERROR(ssd.insert_replacement());
  // The slowness was the old drive's: the new one runs at normal speed; so were its media errors.
  if (ssd.latency_multiplier() != 1.0) ssd.set_latency_multiplier(1.0);
  members_->clear_drive(drive);
  thin_->allocator().reset_drive(drive);
  ctx_->emit(Severity::kInfo, "drive", ArrayContext::drive_object(drive),
             "drive " + std::to_string(drive + 1) + " replaced by a new SSD (empty, 0 % wear); new extents may use it");
  rebuild_->space_added();
  return Status::ok();
}

Status DataPath::set_drive_latency_multiplier(int drive, double multiplier) {
  if (drive < 0 || drive >= drive_count()) return sim::not_found("no drive " + std::to_string(drive + 1));
  if (!(multiplier >= kLatencyMultiplierMin && multiplier <= kLatencyMultiplierMax))
    return sim::unprocessable("latency multiplier must be between " + config::number_text(kLatencyMultiplierMin) +
                              " and " + config::number_text(kLatencyMultiplierMax) + ", got " +
                              config::number_text(multiplier));
  datapac::Ssd& ssd = hw_->ssd(drive);
  const std::string name = "drive " + std::to_string(drive + 1);
  if (ssd.state() != datapac::SsdState::kHealthy)
    return sim::conflict(name + " is " + (ssd.state() == datapac::SsdState::kFailed ? "failed" : "removed") +
                         "; its speed can change only while it is in service");
  if (ssd.latency_multiplier() == multiplier)
    return sim::conflict(multiplier == 1.0 ? name + " is at normal speed"
                                           : name + " is already slowed to latency x" + config::number_text(multiplier));
  ssd.set_latency_multiplier(multiplier);
  ctx_->emit(multiplier > 1 ? Severity::kWarning : Severity::kInfo, "drive", ArrayContext::drive_object(drive),
             multiplier > 1 ? name + " slowed: latency x" + config::number_text(multiplier)
                            : name + " back to normal latency");
  return Status::ok();
}

std::vector<raid::ChunkAddr> DataPath::allocated_chunks_on(int drive) const {
  std::vector<raid::ChunkAddr> out;
  const raid::ExtentTable& table = thin_->extents();
  for (std::uint32_t id = 0; id < table.size(); ++id) {
    const raid::Extent& e = table[id];
    for (int m = 0; m < e.member_count; ++m)
      if (e.members[static_cast<std::size_t>(m)].drive == drive && !e.is_missing(m))
        out.push_back(e.members[static_cast<std::size_t>(m)]);
  }
  return out;
}

sim::Result<std::int64_t> DataPath::corrupt_block(int drive, std::optional<std::int64_t> offset_bytes) {
  if (drive < 0 || drive >= drive_count()) return sim::not_found("no drive " + std::to_string(drive + 1));
  const std::string name = "drive " + std::to_string(drive + 1);
  if (hw_->ssd(drive).state() != datapac::SsdState::kHealthy)
    return sim::conflict(name + " is not in service; a block can be corrupted only on a drive in service");
  if (!ctx_->has_payload())
    return sim::conflict("the array keeps no payload (payload none): there are no bytes to corrupt");
  std::int64_t at;
  if (offset_bytes) {
    at = *offset_bytes;
  } else {
    const auto chunks = allocated_chunks_on(drive);
    if (chunks.empty()) return sim::conflict(name + " holds no allocated chunk");
    const raid::ChunkAddr c = chunks[fault_rng_.uniform(chunks.size())];
    const std::uint64_t blocks = static_cast<std::uint64_t>(raid_->chunk_bytes() / raid::DriveMembers::kMediaBlockBytes);
    at = c.offset_bytes(raid_->chunk_bytes()) +
         static_cast<std::int64_t>(fault_rng_.uniform(blocks)) * raid::DriveMembers::kMediaBlockBytes;
  }
  if (at < 0) return sim::unprocessable("a block offset is not negative, got " + std::to_string(at));
  AFASIM_RETURN_IF_ERROR(members_->corrupt_block(drive, at));
  at = at / raid::DriveMembers::kMediaBlockBytes * raid::DriveMembers::kMediaBlockBytes;
  ctx_->emit(Severity::kWarning, "drive", ArrayContext::drive_object(drive),
             name + ": the 4 KiB block at byte " + std::to_string(at) +
                 " is corrupted (a media error: reads of it fail until it is rewritten)");
  return at;
}

}  // namespace afasim::controller
