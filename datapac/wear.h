// Wear of one SSD: the write-amplification model, the wear counters and a recent-rate meter.
//
// Write amplification (WA) is NAND bytes programmed per host byte written. The model
// (docs/ssd-model.md):
// - uniform random small writes under greedy garbage collection have
//     WA(α) = α / (α + W0(−α·e^(−α))),   α = physical NAND / live user data (> 1),
//   with W0 the principal branch of Lambert's W. This is Xiang & Kurkoski, "An Improved
//   Analytic Expression for Write Amplification in NAND Flash" (ICNC 2012, arXiv:1110.4245),
//   which matches their greedy-GC simulation within 1 % (α = 1.3: 2.36 vs 2.35 simulated);
//   Desnoyers (SYSTOR 2012) derives the same equation for FIFO/LRU cleaning and shows greedy
//   converging to it for uniform traffic, and Hu et al. (SYSTOR 2009) simulate the same
//   regime. Live user data is the part of the drive the host writes: an array that keeps a
//   fifth of every SSD unused raises α by 1/0.8 and lowers WA.
// - sequential (stream) writes and writes of a whole GC unit or more invalidate whole erase
//   blocks, so WA ≈ 1; writes in between are interpolated by size (an assumption).
//
// Not thread-safe: belongs to the model thread with its Ssd.
#pragma once

#include <cstdint>

#include "sim/time.h"

namespace afasim::datapac {

// Write amplification of uniform random writes under greedy GC at over-provisioning ratio
// `alpha` = physical / live user bytes (see above). Returns +infinity for alpha <= 1 (no
// spare space: GC cannot make progress). Pure function; about 100 floating-point steps.
double greedy_random_write_amplification(double alpha);

// The fraction of a write that behaves like a sequential write for garbage collection: 1 for
// a write that continues a stream, else (length − 4 KiB) / (kGcUnitBytes − 4 KiB) clamped to
// [0, 1]: a lone 4 KiB write is wholly random, a lone write of a whole GC unit wholly
// sequential, and sizes between are interpolated linearly (an assumption: the larger a
// write, the fewer erase blocks it shares with other data).
//
// kGcUnitBytes: the span a write must cover to invalidate whole erase blocks on its own.
// Assumption: a 2015 MLC die's erase block of 4 MiB (256 pages of 16 KiB) written across its
// two planes as one 8 MiB unit.
inline constexpr std::int64_t kGcUnitBytes = 8 << 20;

// A recent rate of bytes per second over fixed windows of `window` ns: rate() is the last
// complete window's rate (or the rate of the last span added with add_span() when it was
// longer than a window). O(1), deterministic, no floating point on the add path.
class RateMeter {
 public:
  // REQUIRES: window > 0.
  explicit RateMeter(sim::Time window);

  // Adds `bytes` at time `t`. Times need not be monotone; an add earlier than the current
  // window counts in the current window.
  void add(sim::Time t, std::int64_t bytes);
  // Adds `bytes` spread evenly over [start, start + duration): a span of a window or more
  // sets the rate to bytes / duration as of its end (fast-forward); a shorter span is add().
  // REQUIRES: duration >= 0.
  void add_span(sim::Time start, sim::Time duration, std::int64_t bytes);
  // Bytes per second over the last complete window before `now` (0 when that window was
  // idle or `now` is more than one window past the last activity).
  double rate(sim::Time now) const;
  sim::Time window() const { return window_; }
  void reset();

 private:
  void roll(sim::Time t);

  sim::Time window_;
  sim::Time current_start_ = 0;  // start of the window being filled
  std::int64_t current_bytes_ = 0;
  double previous_rate_ = 0;  // bytes/s of the window before current_start_
};

// Wear counters of one SSD (one physical drive: a replacement starts at zero).
struct SsdWear {
  std::int64_t host_bytes_written = 0;  // bytes the host asked to write
  std::int64_t nand_bytes_written = 0;  // bytes programmed into NAND (host × WA)
  // 100 × nand_bytes_written / (rated endurance × rating WA), see Ssd::endurance_nand_bytes.
  // May exceed 100: a drive goes on past its rating.
  double percent_endurance_used = 0;

  // nand / host, 1 before any write.
  double write_amplification() const {
    return host_bytes_written == 0
               ? 1.0
               : static_cast<double>(nand_bytes_written) / static_cast<double>(host_bytes_written);
  }
};

}  // namespace afasim::datapac
