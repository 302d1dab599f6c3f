// Simulated time: a signed 64-bit count of nanoseconds since the start of a run.
//
// Never a double (DESIGN.md). 2^63 ns is about 292 years, enough for the wear
// fast-forward's horizons. Helpers convert rates and sizes to durations with integer
// arithmetic, rounding up so that a non-zero transfer never takes zero time.
#pragma once

#include <cstdint>

namespace afasim::sim {

using Time = std::int64_t;  // nanoseconds

inline constexpr Time kNanosecond = 1;
inline constexpr Time kMicrosecond = 1'000;
inline constexpr Time kMillisecond = 1'000'000;
inline constexpr Time kSecond = 1'000'000'000;
inline constexpr Time kMinute = 60 * kSecond;
inline constexpr Time kHour = 60 * kMinute;
inline constexpr Time kDay = 24 * kHour;
inline constexpr Time kYear = 365 * kDay;  // a 365-day year, as endurance ratings use
inline constexpr Time kTimeMax = INT64_MAX;
// The latest instant a run may reach: 100 years, well inside the clock's 292, so that an event
// scheduled from there (a week's scrub interval, a year's wear step) cannot overflow. A fio job
// or trace that would pass it fails with EOVERFLOW; a saved state past it is refused; a served
// array's idle time stops short of it (serve::ModelThread).
inline constexpr Time kClockCeiling = 100 * kYear;

// Duration of moving `bytes` at `bytes_per_second`, rounded up to whole nanoseconds.
// REQUIRES: bytes >= 0, bytes_per_second > 0.
constexpr Time transfer_time(std::int64_t bytes, std::int64_t bytes_per_second) {
  const __int128 num = static_cast<__int128>(bytes) * kSecond;
  return static_cast<Time>((num + bytes_per_second - 1) / bytes_per_second);
}

// Interval between operations at `per_second` operations per second, rounded to nearest.
// REQUIRES: per_second > 0.
constexpr Time interval_for_rate(std::int64_t per_second) {
  return (kSecond + per_second / 2) / per_second;
}

constexpr double to_seconds(Time t) { return static_cast<double>(t) / kSecond; }
constexpr double to_us(Time t) { return static_cast<double>(t) / kMicrosecond; }

}  // namespace afasim::sim
