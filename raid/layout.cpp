#include "raid/layout.h"

#include <cstring>

namespace afasim::raid {

Layout::Layout(RaidType type, int members, int data, std::int64_t strip, std::int64_t chunk)
    : type_(type), members_(members), data_(data), strip_(strip), chunk_(chunk), strip_div_(strip), data_div_(data), extent_div_(chunk * data) {
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
  // 64 bytes a round in four 16-byte vectors (SSE2 on x86-64, NEON on arm64: GCC's vector
  // extension), then words, then bytes. Parity and reconstruction spend most of a RAID 5
  // write's model-thread time here (docs/nbd.md): 1.6x the word loop's rate, measured on a
  // 64 KiB strip. memcpy keeps unaligned buffers well defined.
  using Vector = std::uint64_t __attribute__((vector_size(16)));
  std::int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    Vector a0, a1, a2, a3, b0, b1, b2, b3;
    std::memcpy(&a0, dst + i, 16);
    std::memcpy(&a1, dst + i + 16, 16);
    std::memcpy(&a2, dst + i + 32, 16);
    std::memcpy(&a3, dst + i + 48, 16);
    std::memcpy(&b0, src + i, 16);
    std::memcpy(&b1, src + i + 16, 16);
    std::memcpy(&b2, src + i + 32, 16);
    std::memcpy(&b3, src + i + 48, 16);
    a0 ^= b0;
    a1 ^= b1;
    a2 ^= b2;
    a3 ^= b3;
    std::memcpy(dst + i, &a0, 16);
    std::memcpy(dst + i + 16, &a1, 16);
    std::memcpy(dst + i + 32, &a2, 16);
    std::memcpy(dst + i + 48, &a3, 16);
  }
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
