// perf::ArrayModel end to end, on the calibration file's parameters and the stand-in SSDs:
// the acceptance shapes of issue 13 that do not depend on the exact fit — mixed throughput
// between the pure ones, latency rising with load and spread at every load, read-ahead
// turning sequential reads into cache hits, full-stripe destage of sequential RAID 5 writes.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "perf/closed_loop.h"
#include "sim/histogram.h"

using namespace afasim;
using sim::kMillisecond;

namespace {

using Load = perf::ClosedLoad;
using Measured = perf::ClosedLoopResult;

Load load(int jobs, int iodepth, double read_fraction, std::int64_t block_bytes, bool sequential = false) {
  Load l;
  l.jobs = jobs;
  l.iodepth = iodepth;
  l.read_fraction = read_fraction;
  l.block_bytes = block_bytes;
  l.sequential = sequential;
  return l;
}

// `load` against a fresh model on the calibration file's parameters: `warm` of virtual time,
// then `measure`. `write_cache_bytes` is small by default, so that destage reaches its
// steady state within the warm-up.
Measured run(perf::RowLayout layout, const Load& l, std::uint64_t seed = 1, sim::Time warm = 30 * kMillisecond,
             sim::Time measure = 60 * kMillisecond, std::int64_t write_cache_bytes = 16 << 20) {
  auto cal = perf::load_calibration("ise-860-g3");
  REQUIRE(cal.is_ok());
  perf::ArrayModelOptions o;
  o.params = cal->model;
  o.layout = layout;
  o.write_cache_bytes = write_cache_bytes;
  return perf::run_closed_loop(o, l, seed, warm, measure);
}

void check_mix_between(perf::RowLayout layout) {
  Load read_only{16, 16, 1.0, 8192};
  Load write_only{16, 16, 0.0, 8192};
  Load mix{16, 16, 0.7, 8192};
  const auto r = run(layout, read_only), w = run(layout, write_only), m = run(layout, mix);
  INFO("8K read " << r.iops << ", write " << w.iops << ", 70/30 " << m.iops << " IOPS");
  CHECK(m.iops > std::min(r.iops, w.iops));
  CHECK(m.iops < std::max(r.iops, w.iops));
}

}  // namespace

TEST_CASE("8K 70/30 throughput lies between 8K pure read and pure write: RAID 10") {
  check_mix_between(perf::RowLayout::kRaid10);
}

TEST_CASE("8K 70/30 throughput lies between 8K pure read and pure write: RAID 5") {
  check_mix_between(perf::RowLayout::kRaid5);
}

TEST_CASE("4K random read 2T2Q..16T16Q: latency rises with load and spreads at every point") {
  double previous_ms = 0;
  for (int n : {2, 4, 8, 16}) {
    const auto m = run(perf::RowLayout::kRaid10, load(n, n, 1.0, 4096));
    INFO(n << "T" << n << "Q: " << m.iops << " IOPS, mean " << m.lat_mean_ms << " ms, stddev " << m.lat_stddev_ms);
    CHECK(m.lat_mean_ms > previous_ms * 1.02);  // rises, not flat until a knee
    CHECK(m.lat_stddev_ms > 0.005);             // queueing and service variation: a real spread
    previous_ms = m.lat_mean_ms;
  }
}

TEST_CASE("sequential 8K reads: read-ahead serves them from cache, well above random 8K reads") {
  const auto seq = run(perf::RowLayout::kRaid10, load(16, 16, 1.0, 8192, true));
  const auto rnd = run(perf::RowLayout::kRaid10, load(16, 16, 1.0, 8192, false));
  INFO("sequential " << seq.iops << " IOPS (" << seq.cache_hits << " hits), random " << rnd.iops);
  CHECK(seq.cache_hits > seq.iops * 0.06 * 0.9);  // nearly every measured read hits (0.06 s window)
  CHECK(seq.iops > 1.2 * rnd.iops);
}

TEST_CASE("sequential 128K RAID 5 writes destage as full stripes; random 4K writes by read-modify-write") {
  const auto seq =
      run(perf::RowLayout::kRaid5, load(16, 16, 0.0, 128 << 10, true), 1, 30 * kMillisecond, 60 * kMillisecond, 256 << 20);
  CHECK(seq.full_stripes > 0);
  CHECK(seq.partial_destages <= seq.full_stripes / 50);  // only the rows in flight when the run ends
  const auto rnd = run(perf::RowLayout::kRaid5, load(16, 16, 0.0, 4096));
  CHECK(rnd.partial_destages > 0);
  CHECK(rnd.full_stripes == 0);
}

TEST_CASE("the model is a function of its seed") {
  const auto a = run(perf::RowLayout::kRaid10, load(4, 4, 0.7, 8192), 42, 5 * kMillisecond, 10 * kMillisecond);
  const auto b = run(perf::RowLayout::kRaid10, load(4, 4, 0.7, 8192), 42, 5 * kMillisecond, 10 * kMillisecond);
  CHECK(a.iops == b.iops);
  CHECK(a.lat_mean_ms == b.lat_mean_ms);
}

TEST_CASE("one LUN is served by its owning controller only (ALUA): half the array's 4K random reads") {
  // docs/performance-model.md "One volume": the host sends a LUN's I/O to the controller that
  // owns it (ALUA active/optimised); the peer's cores, memory and ports stay idle.
  Load four{16, 16, 1.0, 4096};
  Load one = four;
  one.volumes = 1;
  const auto a = run(perf::RowLayout::kRaid10, four), b = run(perf::RowLayout::kRaid10, one);
  INFO("4K random read 16T16Q: four LUNs " << a.iops << " IOPS " << a.lat_mean_ms << " ms; one LUN " << b.iops
                                              << " IOPS " << b.lat_mean_ms << " ms");
  CHECK(b.iops == doctest::Approx(a.iops / 2).epsilon(0.05));
  CHECK(b.lat_mean_ms == doctest::Approx(a.lat_mean_ms * 2).epsilon(0.05));  // Little: 256 outstanding, half the rate
}

// Not a check: prints the model's figures for docs/performance-model.md's tables.
// Run: test_perf -tc="figures*" --no-skip
TEST_CASE("figures of the stand-in model for the documentation" * doctest::skip()) {
  using L = perf::RowLayout;
  for (auto lay : {L::kRaid5, L::kRaid10}) {
    const std::string n = lay == L::kRaid5 ? "RAID5" : "RAID10";
    auto p = [&](const std::string& what, const Load& l, std::int64_t write_cache_bytes = 16 << 20) {
      const auto m = run(lay, l, 1, 50 * kMillisecond, 100 * kMillisecond, write_cache_bytes);
      MESSAGE(n << " " << what << ": " << m.iops << " IOPS, " << m.mb_per_s << " MB/s, mean " << m.lat_mean_ms
                << " ms, stddev " << m.lat_stddev_ms << " ms, cache hits " << m.cache_hits);
    };
    p("4K random read", load(16, 16, 1.0, 4096));
    p("4K random write", load(16, 16, 0.0, 4096));
    p("8K random read", load(16, 16, 1.0, 8192));
    p("8K random write", load(16, 16, 0.0, 8192));
    p("8K 70/30", load(16, 16, 0.7, 8192));
    p("8K sequential read", load(16, 16, 1.0, 8192, true));
    p("8K sequential write", load(16, 16, 0.0, 8192, true), 256 << 20);
    p("128K sequential read", load(16, 16, 1.0, 128 << 10, true));
    p("128K sequential write", load(16, 16, 0.0, 128 << 10, true), 256 << 20);
  }
}
