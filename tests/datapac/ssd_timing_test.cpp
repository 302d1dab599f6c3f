// Timing of the SSD model against the spec-sheet figures it is built from. Every expected
// figure is a field of config/ssds/xio-g3-sas-1600gb.json (an assumption there, recorded with
// its reasoning) or follows from them by the formula named beside it (docs/ssd-model.md).
#include <doctest/doctest.h>

#include <vector>

#include "datapac/ssd.h"
#include "test_support.h"

using namespace afasim;
using namespace afasim::datapac;
using namespace afasim::datapac::testing;

namespace {

}  // namespace

TEST_CASE("derived parameters follow Little's law from the spec's read IOPS and latency") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  const SsdTiming& t = ssd->timing();
  // 4 KiB at 1 GB/s = 4096 ns; 130,000 IOPS × (90 µs − 4.096 µs) = 11.17 → 11 units of
  // 11 / 130,000 s = 84,615 ns; what is left of 90 µs is the fixed overhead.
  CHECK(t.read_transfer_4k_ns == 4096);
  CHECK(t.read_units == 11);
  CHECK(t.read_unit_ns == 84'615);
  CHECK(t.read_overhead_ns == 90'000 - 4096 - 84'615);
  CHECK(t.write_overhead_ns + t.write_transfer_4k_ns == model.write_latency_us * 1000);
  // Full span with the drive's own spare: the steady-state drain is 1 / random_write_iops.
  CHECK(t.random_drain_ns_per_4k == doctest::Approx(1e9 / 35'000.0));
  CHECK(t.steady_state);
}

TEST_CASE("a 4K read at queue depth 1 takes the model's read_latency_us") {
  for (const char* name : {"xio-g3-sas-1600gb", "xio-g3-sas-200gb"}) {
    const auto model = preset_ssd(name);
    auto ssd = make_ssd(model);
    INFO(std::string(name));
    sim::Time t = 0;
    for (int i = 0; i < 100; ++i) {
      const auto done = ssd->schedule(t, SsdOp::kRead, (i * 7919LL % 1000) * k4K, k4K);
      REQUIRE(done.is_ok());
      CHECK(*done - t == model.read_latency_us * sim::kMicrosecond);
      t = *done;
    }
  }
}

TEST_CASE("random 4K reads at queue depth 64 saturate at random_read_iops (±5 %)") {
  for (const char* name : {"xio-g3-sas-1600gb", "xio-g3-sas-200gb"}) {
    const auto model = preset_ssd(name);
    auto ssd = make_ssd(model);
    ClosedLoop loop(*ssd, 64, random_commands(*ssd, SsdOp::kRead, k4K));
    loop.run(20 * sim::kMillisecond, 220 * sim::kMillisecond);
    MESSAGE(std::string(name) << ": QD64 4K random read " << loop.ops_per_second() << " IOPS, spec "
                              << model.random_read_iops);
    CHECK(loop.ops_per_second() ==
          doctest::Approx(static_cast<double>(model.random_read_iops)).epsilon(0.05));
    // Little's law on the loop itself: 64 outstanding / IOPS = mean latency.
    CHECK(loop.mean_latency_us() == doctest::Approx(64e6 / loop.ops_per_second()).epsilon(0.02));
  }
}

TEST_CASE("sustained random 4K writes settle at random_write_iops once the buffer is full") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  // The buffer fills at (write-stage rate − drain rate) ≈ 171K − 35K writes/s: 64 MiB in
  // ≈ 0.12 s. Measure from 0.5 s to 1.5 s.
  ClosedLoop loop(*ssd, 32, random_commands(*ssd, SsdOp::kWrite, k4K));
  loop.run(500 * sim::kMillisecond, 1500 * sim::kMillisecond);
  MESSAGE("sustained 4K random write " << loop.ops_per_second() << " IOPS, spec "
                                       << model.random_write_iops);
  CHECK(loop.ops_per_second() ==
        doctest::Approx(static_cast<double>(model.random_write_iops)).epsilon(0.05));
  // The buffer is full (within the 32 writes the loop keeps outstanding).
  CHECK(ssd->buffered_bytes() >= model.write_buffer_bytes - 32 * k4K);
}

TEST_CASE("a short burst of writes is acknowledged at the write latency") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  // Queue depth 1: every write lands in the empty buffer at write_latency_us.
  sim::Time t = 0;
  for (int i = 0; i < 200; ++i) {
    const auto done = ssd->schedule(t, SsdOp::kWrite, (i * 104729LL % 100000) * k4K, k4K);
    REQUIRE(done.is_ok());
    CHECK(*done - t == model.write_latency_us * sim::kMicrosecond);
    t = *done;
  }
  // 1000 writes at once: paced by the write stage (4 KiB / 700 MB/s each), never by the
  // drain, which would need 1000 / 35,000 s = 28.6 ms for them.
  auto fresh = make_ssd(model);
  sim::Time last = 0;
  for (int i = 0; i < 1000; ++i) last = *fresh->schedule(0, SsdOp::kWrite, i * 3 * k4K, k4K);
  const sim::Time stage = fresh->timing().write_transfer_4k_ns;
  CHECK(last == 1000 * stage + fresh->timing().write_overhead_ns);
  CHECK(last < sim::kSecond / model.random_write_iops * 1000 / 4);
}

TEST_CASE("128K sequential reads approach seq_read_bytes_per_second (±5 %)") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  ClosedLoop loop(*ssd, 8, sequential_commands(SsdOp::kRead, 128 * 1024));
  loop.run(10 * sim::kMillisecond, 210 * sim::kMillisecond);
  MESSAGE("128K sequential read " << loop.bytes_per_second() << " B/s, spec "
                                  << model.seq_read_bytes_per_second);
  CHECK(loop.bytes_per_second() ==
        doctest::Approx(static_cast<double>(model.seq_read_bytes_per_second)).epsilon(0.05));
  // At queue depth 1 a 128K read spreads its 8 NAND pages over 8 units: one unit time, then
  // the 128 KiB cross the read stage: 84,615 + 131,072 + overhead 1,289 ns.
  auto idle = make_ssd(model);
  CHECK(*idle->schedule(0, SsdOp::kRead, 0, 128 * 1024) == 84'615 + 131'072 + 1'289);
}

TEST_CASE("128K sequential writes approach seq_write_bytes_per_second (±5 %)") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  ClosedLoop loop(*ssd, 8, sequential_commands(SsdOp::kWrite, 128 * 1024));
  loop.run(200 * sim::kMillisecond, 700 * sim::kMillisecond);
  MESSAGE("128K sequential write " << loop.bytes_per_second() << " B/s, spec "
                                   << model.seq_write_bytes_per_second);
  CHECK(loop.bytes_per_second() ==
        doctest::Approx(static_cast<double>(model.seq_write_bytes_per_second)).epsilon(0.05));
}

TEST_CASE("a saturated 50/50 random read/write mix meets the harmonic mean of the two rates") {
  // Reads and the buffer's drain share the die array: r / random_read_iops +
  // w / random_write_iops = 1 at saturation, so 50/50 gives 1 / (0.5/130K + 0.5/35K) ≈ 55.2K.
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  const std::int64_t slots = ssd->capacity_bytes() / k4K;
  ClosedLoop loop(*ssd, 64, [slots](sim::Rng& rng) {
    const SsdOp op = rng.bernoulli(0.5) ? SsdOp::kRead : SsdOp::kWrite;
    return ClosedLoop::Command{op, static_cast<std::int64_t>(rng.uniform(slots)) * k4K, k4K};
  });
  loop.run(500 * sim::kMillisecond, 1500 * sim::kMillisecond);
  const double harmonic = 1.0 / (0.5 / model.random_read_iops + 0.5 / model.random_write_iops);
  MESSAGE("50/50 mix " << loop.ops_per_second() << " IOPS, harmonic " << harmonic);
  CHECK(loop.ops_per_second() == doctest::Approx(harmonic).epsilon(0.05));
}

TEST_CASE("more spare area (an array that leaves 20 % unused) speeds up random writes") {
  const auto model = preset_ssd();
  SsdOptions o;
  o.host_span_fraction = 0.8;
  auto ssd = make_ssd(model, o);
  const SsdTiming& t = ssd->timing();
  // Die time per host write scales with WA: IOPS = spec × WA_native / WA(α / 0.8).
  const double alpha = static_cast<double>(model.raw_nand_bytes) / model.capacity_bytes;
  const double expected = model.random_write_iops * greedy_random_write_amplification(alpha) /
                          greedy_random_write_amplification(alpha / 0.8);
  CHECK(t.random_write_amplification < t.native_write_amplification);
  ClosedLoop loop(*ssd, 32, random_commands(*ssd, SsdOp::kWrite, k4K));
  loop.run(500 * sim::kMillisecond, 1500 * sim::kMillisecond);
  MESSAGE("span 0.8 random write " << loop.ops_per_second() << " IOPS, expected " << expected);
  CHECK(loop.ops_per_second() == doctest::Approx(expected).epsilon(0.05));
  CHECK(loop.ops_per_second() > 1.2 * model.random_write_iops);
}

TEST_CASE("a fresh drive drains random writes at the sequential rate until GC starts") {
  const auto model = preset_ssd();
  SsdOptions o;
  o.preconditioned = false;
  auto ssd = make_ssd(model, o);
  CHECK_FALSE(ssd->timing().steady_state);
  CHECK(ssd->timing().random_drain_ns_per_4k ==
        doctest::Approx(ssd->timing().sequential_drain_ns_per_4k));
  ClosedLoop loop(*ssd, 32, random_commands(*ssd, SsdOp::kWrite, k4K));
  loop.run(100 * sim::kMillisecond, 300 * sim::kMillisecond);
  // Out of the box: 4 KiB per 4 KiB / 700 MB/s ≈ 170,900 IOPS (the write stage's rate too).
  const double expected = model.seq_write_bytes_per_second / 4096.0;
  CHECK(loop.ops_per_second() == doctest::Approx(expected).epsilon(0.05));
  // Once the NAND has been written over once, the drive is in steady state.
  REQUIRE(ssd->add_bulk_writes(sim::kSecond, sim::kSecond, model.raw_nand_bytes, 1.0).is_ok());
  CHECK(ssd->timing().steady_state);
  CHECK(ssd->timing().random_drain_ns_per_4k == doctest::Approx(1e9 / 35'000.0));
}

TEST_CASE("a slow SSD multiplies its internal service times, not its interface") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  ssd->set_latency_multiplier(3.0);
  const SsdTiming& t = ssd->timing();
  // Read at QD1: 3 × (unit + overhead) + the unchanged 4 KiB transfer.
  CHECK(*ssd->schedule(0, SsdOp::kRead, 0, k4K) == 3 * 84'615 + 3 * 1'289 + 4096);
  CHECK(*ssd->schedule(sim::kSecond, SsdOp::kWrite, 0, k4K) ==
        sim::kSecond + t.write_transfer_4k_ns + t.write_overhead_ns);
  CHECK(t.write_overhead_ns == 3 * (25'000 - t.write_transfer_4k_ns));
  ssd->set_latency_multiplier(1.0);
  CHECK(*ssd->schedule(2 * sim::kSecond, SsdOp::kRead, 0, k4K) - 2 * sim::kSecond == 90'000);
}

TEST_CASE("trim and flush take the command latency; bad ranges are refused") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  CHECK(*ssd->schedule(100, SsdOp::kTrim, 0, 1 << 20) == 100 + 25'000);
  CHECK(*ssd->schedule(100, SsdOp::kFlush, 0, 0) == 100 + 25'000);
  const std::int64_t cap = ssd->capacity_bytes();
  CHECK(ssd->schedule(0, SsdOp::kRead, cap - k4K, k4K).is_ok());
  CHECK(ssd->schedule(0, SsdOp::kRead, cap - k4K + 1, k4K).status().code() ==
        sim::Code::kOutOfRange);
  CHECK(ssd->schedule(0, SsdOp::kWrite, -4096, k4K).status().code() == sim::Code::kOutOfRange);
  CHECK(ssd->schedule(0, SsdOp::kRead, 0, 0).status().code() == sim::Code::kInvalidArgument);
  CHECK(ssd->schedule(0, SsdOp::kWrite, INT64_MAX - 10, k4K).status().code() ==
        sim::Code::kOutOfRange);
}

TEST_CASE("timing is deterministic: same seed and inputs give the same completion times") {
  const auto model = preset_ssd();
  auto run = [&](std::uint64_t seed) {
    SsdOptions o;
    o.seed = seed;
    o.read_jitter_fraction = 0.1;
    auto ssd = make_ssd(model, o);
    sim::Rng rng(42);
    std::vector<sim::Time> out;
    for (int i = 0; i < 5000; ++i) {
      const SsdOp op = rng.bernoulli(0.7) ? SsdOp::kRead : SsdOp::kWrite;
      const std::int64_t size = rng.bernoulli(0.9) ? k4K : 256 * 1024;
      const std::int64_t offset = static_cast<std::int64_t>(rng.uniform(1 << 20)) * k4K;
      out.push_back(*ssd->schedule(i * 5'000, op, offset, size));
    }
    return out;
  };
  const auto a = run(7);
  CHECK(a == run(7));
  CHECK(a != run(8));  // jitter draws from the drive's own seed
}
