// pool::ExtentRecord — one extent of a volume as persisted (store/) and restored at boot:
// where it lives (its RAID members, chunks on SSDs) and which members are lost.
#pragma once

#include <cstdint>
#include <vector>

#include "raid/members.h"
#include "raid/raid_type.h"

namespace afasim::pool {

struct ExtentRecord {
  std::int64_t volume_id = 0;
  std::int64_t extent_index = 0;  // which extent of the volume (offset / extent size)
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  std::vector<raid::ChunkAddr> members;
  std::uint16_t missing = 0;  // bit i: member i lost with its SSD, awaiting rebuild
  bool operator==(const ExtentRecord&) const = default;
};

}  // namespace afasim::pool
