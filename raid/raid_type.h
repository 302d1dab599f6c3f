// RAID types by their Swordfish spellings (DESIGN.md "Capacity words").
#pragma once

#include <optional>
#include <string_view>

namespace afasim::raid {

enum class RaidType {
  kRaid0,   // striping only: performance-only presets
  kRaid10,  // mirror pairs, the two members in different DataPacs
  kRaid5,   // k data + 1 rotating parity (4+1 by default)
};

inline constexpr RaidType kAllRaidTypes[] = {RaidType::kRaid0, RaidType::kRaid10, RaidType::kRaid5};

constexpr std::string_view raid_type_name(RaidType t) {
  switch (t) {
    case RaidType::kRaid0: return "RAID0";
    case RaidType::kRaid10: return "RAID10";
    case RaidType::kRaid5: return "RAID5";
  }
  return "?";
}

// "RAID10" → kRaid10; exact spelling only. nullopt for anything else.
constexpr std::optional<RaidType> parse_raid_type(std::string_view s) {
  for (RaidType t : kAllRaidTypes)
    if (raid_type_name(t) == s) return t;
  return std::nullopt;
}

}  // namespace afasim::raid
