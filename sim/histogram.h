// Latency histogram with log-linear buckets (the HdrHistogram layout, Gil Tene).
//
// Values are non-negative integers (nanoseconds, usually). Values below 2^kSubBucketBits
// are counted exactly; above, each power-of-two range is split into 2^(kSubBucketBits-1)
// equal buckets, so a bucket is at most 1/128 of its value wide and a percentile reported
// at the bucket's midpoint is within 0.4 % of the exact sample (the issue asks for 1 %).
// Count, sum, sum of squares, min and max are kept exactly, so mean, stddev and max are
// exact. Memory grows with the largest value seen: about 8 KiB for values up to 1 s in ns.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace afasim::sim {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 8;  // 256 linear values, then 128 buckets per octave

  // Adds one value. REQUIRES: value >= 0.
  void record(std::int64_t value);
  // Adds `count` copies of value. REQUIRES: value >= 0, count >= 0.
  void record_n(std::int64_t value, std::uint64_t count);
  // Adds every sample of `other`.
  void merge(const Histogram& other);
  void clear();

  std::uint64_t count() const { return count_; }
  std::int64_t min() const { return count_ ? min_ : 0; }
  std::int64_t max() const { return count_ ? max_ : 0; }
  // Exact arithmetic mean; 0 when empty.
  double mean() const;
  // Exact population standard deviation; 0 when fewer than two samples.
  double stddev() const;
  // Exact sum of recorded values.
  long double sum() const { return static_cast<long double>(sum_); }

  // The nearest-rank percentile: the value of the sample at rank ceil(p/100 × count),
  // approximated by its bucket's midpoint and clamped to [min, max]. p in [0, 100];
  // p = 0 gives min, p = 100 gives max. 0 when empty.
  std::int64_t percentile(double p) const;

  // Calls f(low, high, count) for every non-empty bucket, ascending; the bucket holds the
  // values low..high (inclusive), exactly one value below 2^kSubBucketBits. For exporting the
  // distribution in another layout (fio's json+ bins, workload/fio_report.h).
  template <typename F>
  void for_each_bucket(F&& f) const {
    for (int i = 0; i < static_cast<int>(buckets_.size()); ++i)
      if (buckets_[i] != 0) f(bucket_low(i), bucket_high(i), buckets_[i]);
  }

 private:
  // record (kOne) and record_n: one body, without the products by the count for one value.
  template <bool kOne>
  void add(std::int64_t value, std::uint64_t n);
  static int bucket_index(std::int64_t value);
  static std::int64_t bucket_low(int index);
  static std::int64_t bucket_high(int index);  // inclusive

  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0;
  __int128 sum_ = 0;
  __int128 sum_squares_ = 0;
  std::int64_t min_ = INT64_MAX;
  std::int64_t max_ = 0;
};

}  // namespace afasim::sim
