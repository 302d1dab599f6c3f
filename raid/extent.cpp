#include "raid/extent.h"

namespace afasim::raid {

bool beyond_redundancy(RaidType type, std::uint16_t missing, int members) {
  if (missing == 0) return false;
  switch (type) {
    case RaidType::kRaid0: return true;
    case RaidType::kRaid5: return (missing & (missing - 1)) != 0;  // two or more
    case RaidType::kRaid10:
      for (int m = 0; m < members; m += 2)
        if (((missing >> m) & 1u) && ((missing >> (m + 1)) & 1u)) return true;
      return false;
  }
  return true;
}

std::uint32_t ExtentTable::add(const Extent& e) {
  AFASIM_ASSERT(e.member_count > 0, "an extent has members");
  std::uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(extents_.size());
    extents_.emplace_back();
  }
  extents_[id] = e;
  return id;
}

void ExtentTable::remove(std::uint32_t id) {
  AFASIM_ASSERT(holds(id), "releasing a free extent");
  extents_[id] = Extent{};
  free_ids_.push_back(id);
}

}  // namespace afasim::raid
