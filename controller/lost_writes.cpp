// Acknowledged writes the array lost (controller/lost_writes.h).
#include "controller/lost_writes.h"

#include "controller/context.h"

namespace afasim::controller {

void LostWrites::mark(VolumeRuntime& v, std::int64_t block) {
  if (!v.lost_blocks.insert(block).second) return;
  ++blocks_;
  ++changes_;
}

void LostWrites::clear_range(VolumeRuntime& v, std::int64_t offset, std::int64_t length) {
  if (v.lost_blocks.empty()) return;
  const std::int64_t first = (offset + kBlockBytes - 1) / kBlockBytes;  // wholly covered blocks only
  const std::int64_t end = (offset + length) / kBlockBytes;
  if (first >= end) return;
  auto from = v.lost_blocks.lower_bound(first), to = v.lost_blocks.lower_bound(end);
  if (from == to) return;
  for (auto it = from; it != to; ++it) --blocks_;
  v.lost_blocks.erase(from, to);
  ++changes_;
}

bool LostWrites::find_in(const VolumeRuntime& v, std::int64_t offset, std::int64_t length,
                         std::int64_t& first_lost_byte) const {
  if (v.lost_blocks.empty() || length <= 0) return false;
  const auto it = v.lost_blocks.lower_bound(offset / kBlockBytes);
  if (it == v.lost_blocks.end() || *it * kBlockBytes >= offset + length) return false;
  first_lost_byte = *it * kBlockBytes;
  return true;
}

void LostWrites::forget(VolumeRuntime& v) {
  if (v.lost_blocks.empty()) return;
  blocks_ -= static_cast<std::int64_t>(v.lost_blocks.size());
  v.lost_blocks.clear();
  ++changes_;
}

}  // namespace afasim::controller
