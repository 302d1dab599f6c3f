#include "raid/layout.h"

#include <cstring>

namespace afasim::raid {

Layout::Layout(RaidType type, int members, int data, std::int64_t strip, std::int64_t chunk)
    : type_(type), members_(members), data_(data), strip_(strip), chunk_(chunk) {
  AFASIM_ASSERT(strip > 0 && chunk > 0 && chunk % strip == 0, "strip must divide chunk");
  AFASIM_ASSERT(data >= 1 && members >= data, "bad member counts");
}

Layout Layout::raid10(int pairs, std::int64_t strip, std::int64_t chunk) {
  return Layout(RaidType::kRaid10, 2 * pairs, pairs, strip, chunk);
}

Layout Layout::raid5(int data, std::int64_t strip, std::int64_t chunk) {
  AFASIM_ASSERT(data >= 2, "RAID5 needs at least two data members");
  return Layout(RaidType::kRaid5, data + 1, data, strip, chunk);
}

Layout Layout::raid0(int data, std::int64_t strip, std::int64_t chunk) {
  return Layout(RaidType::kRaid0, data, data, strip, chunk);
}

void xor_into(std::uint8_t* dst, const std::uint8_t* src, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t a, b;
    std::memcpy(&a, dst + i, 8);
    std::memcpy(&b, src + i, 8);
    a ^= b;
    std::memcpy(dst + i, &a, 8);
  }
  for (; i < n; ++i) dst[i] ^= src[i];
}

}  // namespace afasim::raid
