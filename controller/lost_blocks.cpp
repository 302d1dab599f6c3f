// Volume data the array lost (controller/lost_blocks.h).
#include "controller/lost_blocks.h"

#include <algorithm>
#include <bit>

#include "controller/context.h"

namespace afasim::controller {

namespace {

// The sectors of block `block` that [offset, end) bytes cover wholly (bit i: sector i).
std::uint8_t covered_sectors(std::int64_t block, std::int64_t offset, std::int64_t end) {
  const std::int64_t base = block * LostBlocks::kBlockBytes;
  std::uint8_t mask = 0;
  for (int s = 0; s < LostBlocks::kSectors; ++s) {
    const std::int64_t at = base + s * LostBlocks::kSectorBytes;
    if (at >= offset && at + LostBlocks::kSectorBytes <= end) mask = static_cast<std::uint8_t>(mask | (1u << s));
  }
  return mask;
}

// The sectors of block `block` that [offset, end) bytes touch.
std::uint8_t touched_sectors(std::int64_t block, std::int64_t offset, std::int64_t end) {
  const std::int64_t base = block * LostBlocks::kBlockBytes;
  std::uint8_t mask = 0;
  for (int s = 0; s < LostBlocks::kSectors; ++s) {
    const std::int64_t at = base + s * LostBlocks::kSectorBytes;
    if (at < end && at + LostBlocks::kSectorBytes > offset) mask = static_cast<std::uint8_t>(mask | (1u << s));
  }
  return mask;
}

}  // namespace

void LostBlocks::mark(VolumeRuntime& v, std::int64_t block, std::uint8_t sectors) {
  // Only the sectors inside the volume: a last partial block's others can never be written.
  sectors &= touched_sectors(block, 0, v.thin->capacity_bytes);
  if (sectors == 0) return;
  auto [it, added] = volumes_[v.id].try_emplace(block, 0);
  if ((it->second | sectors) == it->second) return;
  it->second = static_cast<std::uint8_t>(it->second | sectors);
  if (added) ++blocks_;
  ++changes_;
}

void LostBlocks::clear_range(VolumeRuntime& v, std::int64_t offset, std::int64_t length) {
  const auto found = volumes_.find(v.id);
  if (found == volumes_.end() || length <= 0) return;
  Sectors& lost = found->second;
  const std::int64_t end = offset + length;
  bool changed = false;
  for (auto it = lost.lower_bound(offset / kBlockBytes); it != lost.end() && it->first * kBlockBytes < end;) {
    const std::uint8_t keep = static_cast<std::uint8_t>(it->second & ~covered_sectors(it->first, offset, end));
    changed = changed || keep != it->second;
    if (keep == 0) {
      it = lost.erase(it);
      --blocks_;
    } else {
      it->second = keep;
      ++it;
    }
  }
  if (lost.empty()) volumes_.erase(found);
  if (changed) ++changes_;
}

bool LostBlocks::find_in(const VolumeRuntime& v, std::int64_t offset, std::int64_t length,
                         std::int64_t& first_lost_byte) const {
  const auto found = volumes_.find(v.id);
  if (found == volumes_.end() || length <= 0) return false;
  const Sectors& lost = found->second;
  const std::int64_t end = offset + length;
  for (auto it = lost.lower_bound(offset / kBlockBytes); it != lost.end() && it->first * kBlockBytes < end; ++it)
    if (const std::uint8_t hit = it->second & touched_sectors(it->first, offset, end); hit != 0) {
      first_lost_byte = it->first * kBlockBytes + std::countr_zero(static_cast<unsigned>(hit)) * kSectorBytes;
      return true;
    }
  return false;
}

void LostBlocks::forget(VolumeRuntime& v) {
  const auto found = volumes_.find(v.id);
  if (found == volumes_.end()) return;
  blocks_ -= static_cast<std::int64_t>(found->second.size());
  volumes_.erase(found);
  ++changes_;
}

std::int64_t LostBlocks::bytes(std::int64_t volume_id) const {
  const auto found = volumes_.find(volume_id);
  if (found == volumes_.end()) return 0;
  std::int64_t sectors = 0;
  for (const auto& [block, mask] : found->second) sectors += std::popcount(static_cast<unsigned>(mask));
  return sectors * kSectorBytes;
}

}  // namespace afasim::controller
