// ssd::FlashSsd's constants shared by its source files (flash_ssd.cpp: commands, the
// buffer and flusher; flash_ssd_bulk.cpp: fast-forward). Not part of the library's interface.
#pragma once

#include <cstdint>

namespace afasim::ssd::detail {

inline constexpr std::int64_t kUnitBytes = 4096;  // FTL mapping unit

// MurmurHash3's 64-bit finaliser (Appleby): spreads a counter or index over 64 bits. (Not
// sim::mix64, SplitMix64: the drives' die rotation and bulk replays are seeded by this one.)
inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

}  // namespace afasim::ssd::detail
