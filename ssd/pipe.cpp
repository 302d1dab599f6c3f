#include "ssd/pipe.h"

#include <algorithm>
#include <cmath>

#include "sim/assert.h"

namespace afasim::ssd {

Pipe::Pipe(double bytes_per_second, sim::Time bucket_ns)
    : bytes_per_ns_(bytes_per_second / 1e9), bucket_ns_(bucket_ns) {
  AFASIM_ASSERT(bytes_per_second > 0 && bucket_ns >= 1, "Pipe: bad rate or bucket");
  bucket_bytes_ = bytes_per_ns_ * static_cast<double>(bucket_ns_);
  reset();
}

void Pipe::reset() {
  used_.assign(kBuckets, 0.0);
  used_fg_.assign(kBuckets, 0.0);
  head_ = 0;
  base_ = 0;
  tail_free_ = 0;
  tail_free_fg_ = 0;
}

// Keeps a quarter of the calendar behind the latest ready time (transfers booked out of order
// come up to that much earlier) and the rest ahead.
void Pipe::roll(sim::Time ready) {
  const sim::Time keep_from = ready - bucket_ns_ * (kBuckets / 4);
  if (keep_from <= base_ + bucket_ns_) return;
  const sim::Time drop = (keep_from - base_) / bucket_ns_;
  if (drop >= kBuckets) {
    std::fill(used_.begin(), used_.end(), 0.0);
    std::fill(used_fg_.begin(), used_fg_.end(), 0.0);
    head_ = 0;
    base_ += drop * bucket_ns_;
    return;
  }
  for (sim::Time i = 0; i < drop; ++i) {
    used_[static_cast<std::size_t>(head_)] = 0.0;
    used_fg_[static_cast<std::size_t>(head_)] = 0.0;
    head_ = head_ + 1 == kBuckets ? 0 : head_ + 1;
  }
  base_ += drop * bucket_ns_;
}

sim::Time Pipe::transfer(sim::Time ready, std::int64_t bytes, bool background) {
  AFASIM_ASSERT(bytes >= 0, "Pipe::transfer of negative bytes");
  // Foreground transfers move the calendar on: background ones are booked at the times their
  // dies come free, often well ahead of the host's clock.
  if (!background) roll(ready);
  if (ready < base_) ready = base_;
  const sim::Time horizon = base_ + static_cast<sim::Time>(kBuckets) * bucket_ns_;
  sim::Time& tail_free = background ? tail_free_ : tail_free_fg_;
  auto tail = [&](sim::Time from, double remaining) {
    const sim::Time start = std::max({from, tail_free, horizon});
    tail_free = start + static_cast<sim::Time>(std::ceil(remaining / bytes_per_ns_));
    tail_free_ = std::max(tail_free_, tail_free);
    return tail_free;
  };
  if (tail_free > ready) return tail(ready, static_cast<double>(bytes));
  double remaining = static_cast<double>(bytes);
  sim::Time i = (ready - base_) / bucket_ns_;
  double floor_bytes = static_cast<double>(ready - base_ - i * bucket_ns_) * bytes_per_ns_;
  for (;; ++i, floor_bytes = 0) {
    if (i >= kBuckets) return tail(std::max(ready, horizon), remaining);
    const auto k = static_cast<std::size_t>((head_ + i) % kBuckets);
    double& used = background ? used_[k] : used_fg_[k];
    used = std::max(used, floor_bytes);
    const double take = std::max(0.0, std::min(bucket_bytes_ - used, remaining));
    used += take;
    if (!background) used_[k] += take;
    remaining -= take;
    if (remaining <= 0.0)
      return base_ + i * bucket_ns_ + static_cast<sim::Time>(std::ceil(used / bytes_per_ns_));
  }
}

}  // namespace afasim::ssd
