#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sim/pacer.h"
#include "sim/rng.h"

using namespace afasim::sim;

TEST_CASE("a stream is a pure function of seed and name") {
  Rng a(123, "ssd"), b(123, "ssd"), c(123, "raid"), d(124, "ssd");
  bool differs_by_name = false, differs_by_seed = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    CHECK(x == b.next_u64());
    differs_by_name |= x != c.next_u64();
    differs_by_seed |= x != d.next_u64();
  }
  CHECK(differs_by_name);
  CHECK(differs_by_seed);
}

TEST_CASE("the first draws of a known stream never change (golden values)") {
  // If this fails, every recorded run changes: the generator or its seeding moved.
  Rng r(1, "golden");
  const std::uint64_t first = r.next_u64();
  Rng again(1, "golden");
  CHECK(again.next_u64() == first);
  Rng raw(0);
  // xoshiro256** seeded by SplitMix64 from 0; value computed by the reference algorithm.
  CHECK(raw.next_u64() == 0x99EC5F36CB75F2B4ULL);
}

TEST_CASE("uniform(bound) is unbiased over a small bound (chi-square)") {
  Rng r(5, "uniform");
  constexpr int kBins = 10, kDraws = 100'000;
  std::vector<int> bins(kBins);
  for (int i = 0; i < kDraws; ++i) bins[r.uniform(kBins)]++;
  double chi2 = 0;
  const double expected = static_cast<double>(kDraws) / kBins;
  for (int n : bins) chi2 += (n - expected) * (n - expected) / expected;
  CHECK(chi2 < 27.88);  // chi-square, 9 degrees of freedom, p = 0.001
}

TEST_CASE("uniform_range covers both ends and exponential has the right mean") {
  Rng r(9, "range");
  bool lo = false, hi = false;
  double sum = 0;
  for (int i = 0; i < 200'000; ++i) {
    const auto v = r.uniform_range(-2, 2);
    CHECK((v >= -2 && v <= 2));
    lo |= v == -2;
    hi |= v == 2;
    sum += r.exponential(50.0);
  }
  CHECK(lo);
  CHECK(hi);
  CHECK(sum / 200'000 == doctest::Approx(50.0).epsilon(0.01));
}

TEST_CASE("the pacer maps wall time to virtual time at the chosen speed") {
  Pacer p(Pacer::Mode::kRealtime, 2.0);
  p.start(1'000, 5'000'000);
  CHECK(p.virtual_at(5'000'000) == 1'000);
  CHECK(p.virtual_at(6'000'000) == 2'001'000);
  CHECK(p.wall_at(2'001'000) == 6'000'000);
  Pacer none(Pacer::Mode::kNone);
  CHECK_FALSE(none.paced());
}
