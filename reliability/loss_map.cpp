#include "reliability/loss_map.h"

#include <numeric>

#include "pool/capacity.h"
#include "pool/extent_allocator.h"

namespace afasim::reliability {

int LossMap::loss_partners(int i) const {
  int n = 0;
  for (int j = 0; j < drives; ++j) n += shared_extents(i, j) > 0 ? 1 : 0;
  return n;
}

double LossMap::mean_loss_partners() const {
  if (drives == 0) return 0;
  double sum = 0;
  for (int i = 0; i < drives; ++i) sum += loss_partners(i);
  return sum / drives;
}

sim::Result<LossMap> build_loss_map(const config::SystemPreset& system, const config::CapacityParams& capacity,
                                    raid::RaidType type, double fill, int raid5_data_members, int raid10_pairs) {
  if (type != raid::RaidType::kRaid5 && type != raid::RaidType::kRaid10)
    return sim::invalid_argument("the reliability mode models RAID5 and RAID10 pools");
  if (!(fill > 0 && fill <= 1)) return sim::invalid_argument("fill must be in (0, 1]");
  const pool::CapacityModel model(capacity);
  std::vector<int> datapacs;
  for (int dp = 1; dp <= system.datapacs.count; ++dp)
    for (int s = 0; s < system.datapacs.ssds_per_datapac; ++s) datapacs.push_back(dp);
  pool::ExtentAllocator allocator(model, system.ssd.capacity_bytes, datapacs);

  LossMap map;
  map.raid_type = type;
  map.drives = static_cast<int>(datapacs.size());
  map.data_members = type == raid::RaidType::kRaid5 ? raid5_data_members : raid10_pairs;
  map.chunk_bytes = allocator.chunk_bytes();
  map.host_span_fraction = 1.0 - capacity.over_provisioning_fraction;
  map.datapac = datapacs;
  map.normal_chunks_per_drive = allocator.drive(0).normal_chunks;
  map.spare_chunks_per_drive = allocator.drive(0).spare_chunks;
  map.shared.assign(static_cast<std::size_t>(map.drives) * static_cast<std::size_t>(map.drives), 0);

  std::vector<int> candidates(datapacs.size());
  std::iota(candidates.begin(), candidates.end(), 0);
  const std::int64_t total = allocator.total_normal_chunks(candidates);
  const auto target = static_cast<std::int64_t>(fill * static_cast<double>(total));
  auto count = [&](int a, int b) {
    ++map.shared[static_cast<std::size_t>(a) * static_cast<std::size_t>(map.drives) + static_cast<std::size_t>(b)];
    ++map.shared[static_cast<std::size_t>(b) * static_cast<std::size_t>(map.drives) + static_cast<std::size_t>(a)];
  };
  std::int64_t used = 0;
  while (used < target) {
    auto members = allocator.allocate(type, map.data_members, candidates);
    if (!members.is_ok()) {
      if (members.status().code() == sim::Code::kNoSpace) break;  // fill 1: as full as it gets
      return members.status();
    }
    ++map.extents;
    const auto& m = *members;
    used += static_cast<std::int64_t>(m.size());
    if (type == raid::RaidType::kRaid10) {
      for (std::size_t p = 0; p + 1 < m.size(); p += 2) count(m[p].drive, m[p + 1].drive);
    } else {
      for (std::size_t a = 0; a < m.size(); ++a)
        for (std::size_t b = a + 1; b < m.size(); ++b) count(m[a].drive, m[b].drive);
    }
  }
  if (map.extents == 0) return sim::invalid_argument("the fill places no extent");
  for (int d = 0; d < map.drives; ++d) map.used_chunks.push_back(allocator.drive(d).used());
  return map;
}

}  // namespace afasim::reliability
