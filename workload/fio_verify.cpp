#include "workload/fio_verify.h"

#include <algorithm>
#include <cstring>

#include "sim/assert.h"
#include "sim/rng.h"

namespace afasim::workload {
namespace {

void fill_sector(std::uint64_t volume_key, std::int64_t offset_bytes, std::uint8_t* out) {
  std::uint64_t x = sim::mix64(volume_key ^ static_cast<std::uint64_t>(offset_bytes));
  std::memcpy(out, &x, sizeof x);  // the header: the sector's own key
  for (std::int64_t i = 8; i < kVerifySectorBytes; i += 8) {
    x ^= x << 13;  // xorshift64 (Marsaglia 2003)
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(out + i, &x, sizeof x);
  }
}

}  // namespace

std::uint64_t verify_volume_key(std::uint64_t run_seed, std::string_view volume_name) {
  std::uint64_t h = sim::mix64(run_seed ^ 0x76657269667931ULL);  // "verify1"
  for (unsigned char c : volume_name) h = sim::mix64(h ^ c);
  return h;
}

void fill_verify_pattern(std::uint64_t volume_key, std::int64_t offset_bytes,
                         std::int64_t length_bytes, std::uint8_t* out) {
  AFASIM_ASSERT(offset_bytes >= 0 && length_bytes >= 0, "a byte range of a volume");
  std::uint8_t sector[kVerifySectorBytes];
  for (std::int64_t at = 0; at < length_bytes;) {
    const std::int64_t pos = offset_bytes + at;
    const std::int64_t within = pos % kVerifySectorBytes;
    const std::int64_t n = std::min(kVerifySectorBytes - within, length_bytes - at);
    if (within == 0 && n == kVerifySectorBytes) {
      fill_sector(volume_key, pos, out + at);
    } else {
      fill_sector(volume_key, pos - within, sector);
      std::memcpy(out + at, sector + within, static_cast<std::size_t>(n));
    }
    at += n;
  }
}

std::optional<std::int64_t> check_verify_pattern(std::uint64_t volume_key, std::int64_t offset_bytes,
                                                 std::int64_t length_bytes, const std::uint8_t* data) {
  std::uint8_t expected[kVerifySectorBytes];
  for (std::int64_t at = 0; at < length_bytes;) {
    const std::int64_t pos = offset_bytes + at;
    const std::int64_t within = pos % kVerifySectorBytes;
    const std::int64_t n = std::min(kVerifySectorBytes - within, length_bytes - at);
    fill_verify_pattern(volume_key, pos, n, expected);
    if (std::memcmp(expected, data + at, static_cast<std::size_t>(n)) != 0) {
      for (std::int64_t i = 0; i < n; ++i)
        if (expected[i] != data[at + i]) return pos + i;
    }
    at += n;
  }
  return std::nullopt;
}

}  // namespace afasim::workload
