// The QoS cost curve (docs/qos.md "What an I/O costs"): how many 4 KiB I/Os one host I/O of
// a given size counts as against a volume's min / max / burst IOPS.
//
// QoS values are 4 KiB IOPS, as on the ISE and SolidFire. A larger I/O costs one I/O plus one
// more for every further 16 KiB:
//
//     cost(bytes) = 1 + (bytes − 4 KiB) / 16 KiB      (bytes rounded up to 512; at least 1)
//
//     4 KiB 1    8 KiB 1.25    16 KiB 1.75    32 KiB 2.75    64 KiB 4.75
//     128 KiB 8.75    256 KiB 16.75    1 MiB 64.75
//
// Source: the performance model (docs/performance-model.md). The fixed part is a host I/O's
// controller work, whatever its size; the per-byte part is what the array's bandwidth makes of
// a byte: the ISE moves 5 GB/s (spec sheet), and in the time of one 4 KiB I/O at its 284,000
// 4K read IOPS (calibration) it moves 5e9 / 284,000 ≈ 17.6 KB, rounded to 16 KiB so that every
// cost is a whole number of 1/32 units (exact integer arithmetic in the scheduler).
// Commands that move no host data (flush, trim, write zeroes) cost one I/O.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

namespace afasim::qos {

// One 4 KiB I/O is this many cost units; costs are integers in these units.
inline constexpr std::int64_t kCostUnitsPerIo = 32;
// Bytes that cost one unit beyond the first 4 KiB: 16 KiB / 32.
inline constexpr std::int64_t kBytesPerCostUnit = 512;
inline constexpr std::int64_t kBaseIoBytes = 4096;

// Cost units of a data-moving I/O (read or write) of `length_bytes`. Lengths of 4 KiB or less
// (and 0 or negative, which the data path refuses anyway) cost one I/O.
constexpr std::int64_t io_cost_units(std::int64_t length_bytes) {
  if (length_bytes <= kBaseIoBytes) return kCostUnitsPerIo;
  const std::int64_t extra = length_bytes - kBaseIoBytes;
  return kCostUnitsPerIo + (extra + kBytesPerCostUnit - 1) / kBytesPerCostUnit;
}

// The cost of a command that moves no host data (flush, trim, write zeroes).
inline constexpr std::int64_t kCommandCostUnits = kCostUnitsPerIo;

// A whole resource (a controller's guarantee to reservations), in parts per million: the unit
// of admission control's shares (qos/admission.h) and of the scheduler's (Scheduler::add_volume).
inline constexpr std::int64_t kPartsPerMillion = 1'000'000;

}  // namespace afasim::qos
