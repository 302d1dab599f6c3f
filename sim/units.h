#pragma once
// Binary size units (IEC 80000-13): sizes in bytes, as std::int64_t like every size in afasim.

#include <cstdint>

namespace afasim::sim {

inline constexpr std::int64_t kKiB = 1024;
inline constexpr std::int64_t kMiB = 1024 * kKiB;
inline constexpr std::int64_t kGiB = 1024 * kMiB;
inline constexpr std::int64_t kTiB = 1024 * kGiB;

}  // namespace afasim::sim
