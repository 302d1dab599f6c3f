#include "pool/extent_allocator.h"

#include <algorithm>
#include <limits>

#include "sim/assert.h"

namespace afasim::pool {

ExtentAllocator::ExtentAllocator(const CapacityModel& model, std::int64_t nominal_bytes,
                                 const std::vector<int>& drive_datapacs)
    : chunk_bytes_(model.params().chunk_bytes) {
  const DriveCapacity cap = model.drive(nominal_bytes);
  for (int dp : drive_datapacs) {
    DriveSlot d;
    d.datapac = dp;
    d.normal_chunks = cap.raw_usable_bytes / chunk_bytes_;
    d.spare_chunks = cap.spare_bytes / chunk_bytes_;
    drives_.push_back(std::move(d));
    reset_drive(static_cast<int>(drives_.size()) - 1);
  }
}

void ExtentAllocator::reset_drive(int drive) {
  DriveSlot& d = drives_[static_cast<std::size_t>(drive)];
  d.usable = true;
  d.free_normal.clear();
  d.free_spare.clear();
  d.in_use.assign(static_cast<std::size_t>(d.normal_chunks + d.spare_chunks), 0);
  d.free_normal_count = d.normal_chunks;
  d.free_spare_count = d.spare_chunks;
  // Stacks with the lowest index on top: an SSD fills from its start.
  for (std::int64_t c = d.normal_chunks - 1; c >= 0; --c) d.free_normal.push_back(static_cast<std::int32_t>(c));
  for (std::int64_t c = d.normal_chunks + d.spare_chunks - 1; c >= d.normal_chunks; --c)
    d.free_spare.push_back(static_cast<std::int32_t>(c));
}

double ExtentAllocator::score(int drive) const {
  if (score_) return score_(drive);
  const DriveSlot& d = drives_[static_cast<std::size_t>(drive)];
  const std::int64_t total = d.normal_chunks + d.spare_chunks;
  return total == 0 ? 1.0 : static_cast<double>(d.used()) / static_cast<double>(total);
}

std::vector<int> ExtentAllocator::best(const std::vector<int>& from, std::size_t count) const {
  if (prepare_) prepare_();
  std::vector<std::pair<double, int>> ranked;
  ranked.reserve(from.size());
  for (int i : from) {
    const DriveSlot& d = drives_[static_cast<std::size_t>(i)];
    if (d.usable && d.free_normal_count > 0) ranked.emplace_back(score(i), i);
  }
  if (ranked.size() < count) return {};
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(count), ranked.end());
  std::vector<int> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(ranked[i].second);
  return out;
}

std::int32_t ExtentAllocator::take(int drive, bool spare_first) {
  DriveSlot& d = drives_[static_cast<std::size_t>(drive)];
  const bool spare = spare_first ? d.free_spare_count > 0 : d.free_normal_count == 0;
  auto& list = spare ? d.free_spare : d.free_normal;
  (spare ? d.free_spare_count : d.free_normal_count) -= 1;
  for (;;) {
    AFASIM_ASSERT(!list.empty(), "take from a full SSD");
    const std::int32_t c = list.back();
    list.pop_back();
    if (!d.in_use[static_cast<std::size_t>(c)]) {
      d.in_use[static_cast<std::size_t>(c)] = 1;
      return c;
    }
  }
}

sim::Result<std::vector<ChunkAddr>> ExtentAllocator::allocate(raid::RaidType type, int data_members,
                                                              const std::vector<int>& candidates) {
  std::vector<ChunkAddr> members;
  if (type == raid::RaidType::kRaid10) {
    // Pairs straddle the DataPacs: the even members on one side, the odd on the other.
    std::vector<int> side[2];
    if (!mirror_sides(candidates, side)) return sim::unprocessable("RAID10 mirrors across DataPacs; the pool has one");
    const auto a = best(side[0], static_cast<std::size_t>(data_members));
    const auto b = best(side[1], static_cast<std::size_t>(data_members));
    if (a.empty() || b.empty())
      return sim::no_space("no space for a RAID10 extent: it needs a free chunk on " +
                           std::to_string(data_members) + " SSDs in each DataPac");
    for (int p = 0; p < data_members; ++p) {
      members.push_back({a[static_cast<std::size_t>(p)], take(a[static_cast<std::size_t>(p)], false)});
      members.push_back({b[static_cast<std::size_t>(p)], take(b[static_cast<std::size_t>(p)], false)});
    }
    return members;
  }
  const int n = type == raid::RaidType::kRaid5 ? data_members + 1 : data_members;
  const auto chosen = best(candidates, static_cast<std::size_t>(n));
  if (chosen.empty())
    return sim::no_space(std::string("no space for a ") + std::string(raid::raid_type_name(type)) +
                         " extent: it needs a free chunk on " + std::to_string(n) + " different SSDs");
  for (int d : chosen) members.push_back({d, take(d, false)});
  return members;
}

sim::Status ExtentAllocator::claim(const std::vector<ChunkAddr>& chunks) {
  for (const ChunkAddr& c : chunks) {
    if (c.drive < 0 || c.drive >= drive_count())
      return sim::conflict("chunk on unknown drive index " + std::to_string(c.drive));
    DriveSlot& d = drives_[static_cast<std::size_t>(c.drive)];
    if (c.chunk < 0 || c.chunk >= d.normal_chunks + d.spare_chunks || d.in_use[static_cast<std::size_t>(c.chunk)])
      return sim::conflict("chunk " + std::to_string(c.chunk) + " of drive index " + std::to_string(c.drive) +
                           " is taken twice or out of range");
    d.in_use[static_cast<std::size_t>(c.chunk)] = 1;
    (c.chunk < d.normal_chunks ? d.free_normal_count : d.free_spare_count) -= 1;
  }
  return sim::Status::ok();
}

void ExtentAllocator::release(const std::vector<ChunkAddr>& chunks) {
  for (const ChunkAddr& c : chunks) {
    if (!c.valid()) continue;
    DriveSlot& d = drives_[static_cast<std::size_t>(c.drive)];
    if (!d.usable) continue;  // a failed SSD's chunks are gone with it
    AFASIM_ASSERT(d.in_use[static_cast<std::size_t>(c.chunk)], "releasing a free chunk");
    d.in_use[static_cast<std::size_t>(c.chunk)] = 0;
    const bool normal = c.chunk < d.normal_chunks;
    (normal ? d.free_normal : d.free_spare).push_back(c.chunk);
    (normal ? d.free_normal_count : d.free_spare_count) += 1;
  }
}

sim::Result<ChunkAddr> ExtentAllocator::allocate_replacement(const std::vector<ChunkAddr>& members,
                                                             const std::vector<int>& candidates,
                                                             std::optional<int> datapac) {
  std::vector<int> eligible;
  for (int i : candidates) {
    const DriveSlot& d = drives_[static_cast<std::size_t>(i)];
    if (!d.usable || (d.free_spare_count == 0 && d.free_normal_count == 0)) continue;
    if (datapac && d.datapac != *datapac) continue;
    bool member = false;
    for (const ChunkAddr& m : members) member |= m.drive == i;
    if (!member) eligible.push_back(i);
  }
  if (eligible.empty())
    return sim::no_space("no SSD can take a rebuilt chunk" +
                         (datapac ? " in DataPac " + std::to_string(*datapac) : std::string()));
  // Prefer SSDs with spare left, then the lowest score.
  if (prepare_) prepare_();
  auto key = [&](int i) {
    const DriveSlot& d = drives_[static_cast<std::size_t>(i)];
    return std::make_pair(d.free_spare_count == 0 ? 1 : 0, score(i));
  };
  const int drive = *std::min_element(eligible.begin(), eligible.end(),
                                      [&](int a, int b) { return key(a) < key(b) || (key(a) == key(b) && a < b); });
  return ChunkAddr{drive, take(drive, true)};
}

sim::Result<ChunkAddr> ExtentAllocator::allocate_on(int drive) {
  if (drive < 0 || drive >= drive_count()) return sim::not_found("no drive index " + std::to_string(drive));
  const DriveSlot& d = drives_[static_cast<std::size_t>(drive)];
  if (!d.usable) return sim::unavailable("drive index " + std::to_string(drive) + " is not in service");
  if (d.free_normal_count == 0) return sim::no_space("drive index " + std::to_string(drive) + " has no free chunk");
  return ChunkAddr{drive, take(drive, false)};
}

std::int64_t ExtentAllocator::free_normal_chunks(const std::vector<int>& candidates) const {
  std::int64_t n = 0;
  for (int i : candidates) {
    const DriveSlot& d = drives_[static_cast<std::size_t>(i)];
    if (d.usable) n += d.free_normal_count;
  }
  return n;
}

std::int64_t ExtentAllocator::total_normal_chunks(const std::vector<int>& candidates) const {
  std::int64_t n = 0;
  for (int i : candidates) {
    const DriveSlot& d = drives_[static_cast<std::size_t>(i)];
    if (d.usable) n += d.normal_chunks;
  }
  return n;
}

bool ExtentAllocator::mirror_sides(const std::vector<int>& candidates, std::vector<int> (&side)[2]) const {
  int first = std::numeric_limits<int>::max();
  for (int i : candidates) first = std::min(first, drives_[static_cast<std::size_t>(i)].datapac);
  for (int i : candidates) side[drives_[static_cast<std::size_t>(i)].datapac == first ? 0 : 1].push_back(i);
  return !side[0].empty() && !side[1].empty();
}

std::int64_t ExtentAllocator::placeable_extents(raid::RaidType type, int data_members,
                                                const std::vector<int>& candidates) const {
  if (type != raid::RaidType::kRaid10)
    return placeable_extents(candidates, type == raid::RaidType::kRaid5 ? data_members + 1 : data_members);
  std::vector<int> side[2];
  if (!mirror_sides(candidates, side)) return 0;
  return std::min(placeable_extents(side[0], data_members), placeable_extents(side[1], data_members));
}

std::int64_t ExtentAllocator::placeable_extents(const std::vector<int>& candidates, int distinct) const {
  AFASIM_ASSERT(distinct >= 1, "an extent takes at least one chunk");
  std::vector<std::int64_t> free;
  std::int64_t total = 0;
  for (int i : candidates) {
    const DriveSlot& d = drives_[static_cast<std::size_t>(i)];
    if (!d.usable || d.free_normal_count == 0) continue;
    free.push_back(d.free_normal_count);
    total += d.free_normal_count;
  }
  const auto holds = [&](std::int64_t k) {  // monotone: true up to the answer, false past it
    std::int64_t chunks = 0;
    for (std::int64_t f : free) chunks += std::min(f, k);
    return chunks >= distinct * k;
  };
  std::int64_t lo = 0, hi = total / distinct;  // holds(lo); the answer is at most hi
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (holds(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace afasim::pool
