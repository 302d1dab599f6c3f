#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/histogram.h"
#include "sim/rng.h"

using namespace afasim::sim;

namespace {
// The nearest-rank percentile over sorted samples, the definition Histogram approximates.
std::int64_t exact_percentile(std::vector<std::int64_t> v, double p) {
  std::sort(v.begin(), v.end());
  if (p <= 0) return v.front();
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * v.size()));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  return v[rank - 1];
}
}  // namespace

TEST_CASE("percentiles are within 1 % of the exact nearest-rank values") {
  for (std::uint64_t seed : {1ULL, 2ULL, 3ULL, 99ULL}) {
    Rng rng(seed, "histogram");
    Histogram h;
    std::vector<std::int64_t> samples;
    for (int i = 0; i < 100'000; ++i) {
      // Log-normal-ish latencies from 100 ns to ~100 ms, plus some exact small values.
      const double x = std::exp(rng.uniform01() * 14.0) * 100.0;
      const std::int64_t v = (i % 17 == 0) ? static_cast<std::int64_t>(rng.uniform(300))
                                           : static_cast<std::int64_t>(x);
      samples.push_back(v);
      h.record(v);
    }
    for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
      const double exact = static_cast<double>(exact_percentile(samples, p));
      const double got = static_cast<double>(h.percentile(p));
      INFO("seed=" << seed << " p=" << p << " exact=" << exact << " got=" << got);
      CHECK(std::abs(got - exact) <= 0.01 * exact);
    }
    CHECK(h.percentile(100) == *std::max_element(samples.begin(), samples.end()));
    CHECK(h.percentile(0) == *std::min_element(samples.begin(), samples.end()));
  }
}

TEST_CASE("small values are counted exactly") {
  Histogram h;
  for (int v = 0; v < 200; ++v) h.record(v);
  CHECK(h.percentile(50) == 99);  // rank 100 of 0..199
  CHECK(h.percentile(1) == 1);    // rank 2
}

TEST_CASE("mean, stddev, min, max and count are exact") {
  Histogram h;
  // 2, 4, 4, 4, 5, 5, 7, 9 (×1000 ns): mean 5000, population stddev 2000.
  for (std::int64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) h.record(v * 1000);
  CHECK(h.count() == 8);
  CHECK(h.mean() == doctest::Approx(5000.0).epsilon(1e-12));
  CHECK(h.stddev() == doctest::Approx(2000.0).epsilon(1e-12));
  CHECK(h.min() == 2000);
  CHECK(h.max() == 9000);
}

TEST_CASE("stddev stays exact when the spread is tiny against the mean") {
  Histogram h;
  // 10^9 ± 1: naive Σx²/n − mean² loses it in double arithmetic.
  h.record(1'000'000'001);
  h.record(999'999'999);
  CHECK(h.stddev() == doctest::Approx(1.0).epsilon(1e-9));
}

TEST_CASE("merge equals recording everything in one histogram") {
  Rng rng(7, "merge");
  Histogram a, b, all;
  for (int i = 0; i < 10'000; ++i) {
    const auto v = static_cast<std::int64_t>(rng.uniform(5'000'000));
    (i % 3 ? a : b).record(v);
    all.record(v);
  }
  a.merge(b);
  CHECK(a.count() == all.count());
  CHECK(a.mean() == all.mean());
  CHECK(a.stddev() == all.stddev());
  CHECK(a.percentile(99) == all.percentile(99));
  CHECK(a.max() == all.max());
}

TEST_CASE("an empty histogram reports zeros") {
  Histogram h;
  CHECK(h.count() == 0);
  CHECK(h.mean() == 0);
  CHECK(h.percentile(99) == 0);
  CHECK(h.max() == 0);
}
