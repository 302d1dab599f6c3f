#include "sim/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "sim/assert.h"

namespace afasim::sim {
namespace {
constexpr int kLinear = 1 << Histogram::kSubBucketBits;   // values [0, kLinear) exact
constexpr int kHalf = kLinear / 2;                         // buckets per octave above
}  // namespace

// Layout: indices [0, kLinear) hold the values 0..kLinear-1. Octave k >= 1 covers
// [kLinear << (k-1), kLinear << k) in kHalf buckets of width 2^k each.
int Histogram::bucket_index(std::int64_t value) {
  if (value < kLinear) return static_cast<int>(value);
  const int msb = 63 - std::countl_zero(static_cast<std::uint64_t>(value));
  const int octave = msb - kSubBucketBits + 1;  // >= 1
  const std::int64_t offset = (value >> octave) - kHalf;  // in [0, kHalf)
  return kLinear + (octave - 1) * kHalf + static_cast<int>(offset);
}

std::int64_t Histogram::bucket_low(int index) {
  if (index < kLinear) return index;
  const int octave = (index - kLinear) / kHalf + 1;
  const std::int64_t offset = (index - kLinear) % kHalf;
  return (kHalf + offset) << octave;
}

std::int64_t Histogram::bucket_high(int index) {
  if (index < kLinear) return index;
  const int octave = (index - kLinear) / kHalf + 1;
  return bucket_low(index) + (std::int64_t{1} << octave) - 1;
}

// One body for both: with kOne the products by the count go (record() is on every I/O's path).
template <bool kOne>
[[gnu::hot]] inline void Histogram::add(std::int64_t value, std::uint64_t n) {
  AFASIM_ASSERT(value >= 0, "histogram values must be non-negative");
  const int index = bucket_index(value);
  if (index >= static_cast<int>(buckets_.size())) buckets_.resize(index + 1, 0);
  buckets_[index] += kOne ? 1 : n;
  count_ += kOne ? 1 : n;
  sum_ += kOne ? static_cast<__int128>(value) : static_cast<__int128>(value) * n;
  sum_squares_ += kOne ? static_cast<__int128>(value) * value : static_cast<__int128>(value) * value * n;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

[[gnu::hot]] void Histogram::record(std::int64_t value) { add<true>(value, 1); }

[[gnu::hot]] void Histogram::record_n(std::int64_t value, std::uint64_t n) {
  AFASIM_ASSERT(value >= 0, "histogram values must be non-negative");
  if (n == 0) return;
  add<false>(value, n);
}

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0) return;
  if (other.buckets_.size() > buckets_.size()) buckets_.resize(other.buckets_.size(), 0);
  for (std::size_t i = 0; i < other.buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::clear() { *this = Histogram(); }

double Histogram::mean() const {
  if (count_ == 0) return 0;
  return static_cast<double>(static_cast<long double>(sum_) / count_);
}

double Histogram::stddev() const {
  if (count_ < 2) return 0;
  // Variance = (n·Σx² − (Σx)²) / n². The numerator is computed exactly in 128-bit integers
  // when it fits (any realistic latency run), so the result is exact to the last division.
  __int128 n_sum_squares;
  __int128 sum_squared;
  long double numerator;
  if (!__builtin_mul_overflow(sum_squares_, static_cast<__int128>(count_), &n_sum_squares) &&
      !__builtin_mul_overflow(sum_, sum_, &sum_squared)) {
    numerator = static_cast<long double>(n_sum_squares - sum_squared);
  } else {
    const long double n = count_;
    numerator = static_cast<long double>(sum_squares_) * n -
                static_cast<long double>(sum_) * static_cast<long double>(sum_);
  }
  const long double n = count_;
  const long double variance = numerator / (n * n);
  return variance > 0 ? static_cast<double>(std::sqrt(variance)) : 0.0;
}

std::int64_t Histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  if (p <= 0) return min_;
  if (p >= 100) return max_;
  auto rank = static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      const int index = static_cast<int>(i);
      const std::int64_t mid = bucket_low(index) + (bucket_high(index) - bucket_low(index)) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

}  // namespace afasim::sim
