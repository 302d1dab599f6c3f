// The write-amplification model, wear counters, endurance and write rates.
#include "datapac/wear.h"

#include <doctest/doctest.h>

#include <cmath>

#include "datapac/ssd.h"
#include "test_support.h"

using namespace afasim;
using namespace afasim::datapac;
using namespace afasim::datapac::testing;

namespace {

double native_alpha(const config::SsdModel& m) {
  return static_cast<double>(m.raw_nand_bytes) / static_cast<double>(m.capacity_bytes);
}

}  // namespace

TEST_CASE("greedy-GC write amplification matches the published analytic and simulated values") {
  // Xiang & Kurkoski 2012 (arXiv:1110.4245), over-provisioning factor 0.3 (α = 1.3): their
  // expression gives 2.36, their greedy-GC simulation 2.35.
  CHECK(greedy_random_write_amplification(1.3) == doctest::Approx(2.355).epsilon(0.005));
  // The valid fraction u = 1 − 1/WA solves u = exp(−α(1 − u)) (the equation behind it).
  for (double alpha : {1.05, 1.1, 1.28, 1.5, 2.0, 4.0}) {
    const double u = 1.0 - 1.0 / greedy_random_write_amplification(alpha);
    CHECK(u == doctest::Approx(std::exp(-alpha * (1.0 - u))).epsilon(1e-9));
  }
  // More spare, less amplification; none at all is impossible; very much approaches 1.
  CHECK(greedy_random_write_amplification(1.1) > greedy_random_write_amplification(1.2));
  CHECK(std::isinf(greedy_random_write_amplification(1.0)));
  CHECK(greedy_random_write_amplification(50.0) == doctest::Approx(1.0).epsilon(1e-6));
}

TEST_CASE("random 4K writes wear NAND at the write amplification the mapping table shows") {
  const auto model = preset_ssd();
  // The replica's greedy GC at α = 2 TiB / 1.6 TB = 1.374 against Xiang & Kurkoski's
  // analytic greedy WA (2.04): within 3 % (the replica has 1,024 blocks of 128 units).
  const double wa_native = ssd::FlashSsd::steady_random_write_amplification(model, 1.0);
  CHECK(wa_native == doctest::Approx(greedy_random_write_amplification(native_alpha(model))).epsilon(0.03));
  auto random = make_ssd(model);
  sim::Rng rng(3);
  for (int i = 0; i < 20000; ++i)
    REQUIRE(random
                ->schedule(i * 10000, SsdOp::kWrite,
                           static_cast<std::int64_t>(rng.uniform(1 << 24)) * k4K, k4K)
                .is_ok());
  CHECK(random->wear().host_bytes_written == 20000 * k4K);
  CHECK(random->wear().write_amplification() == doctest::Approx(wa_native).epsilon(0.05));
  // Sequential writes on a fresh drive fill erased blocks: no garbage collection.
  SsdOptions fresh;
  fresh.preconditioned = false;
  auto sequential = make_ssd(model, fresh);
  for (int i = 0; i < 2000; ++i)
    REQUIRE(sequential->schedule(i * 100000, SsdOp::kWrite, i * 65536LL, 65536).is_ok());
  CHECK(sequential->wear().write_amplification() == doctest::Approx(1.0));
}

TEST_CASE("percent of endurance: rated DWPD bytes at the rating's WA make 100 %") {
  const auto model = preset_ssd();
  // Rated: 10 DWPD × 1.6 TB × 365 × 5 = 2.92e16 host bytes, at full-span random WA.
  auto ssd = make_ssd(model);
  const auto one_percent = static_cast<std::int64_t>(model.rated_endurance_bytes() / 100);
  REQUIRE(ssd->add_bulk_writes(0, 30 * sim::kDay, one_percent, 0.0).is_ok());
  CHECK(ssd->wear().percent_endurance_used == doctest::Approx(1.0).epsilon(0.03));
  // With 20 % of the drive never written, random writes wear less than at full span:
  // Xiang & Kurkoski at α / 0.8 over α (1.43 / 2.04).
  SsdOptions o;
  o.host_span_fraction = 0.8;
  auto array = make_ssd(model, o);
  REQUIRE(array->add_bulk_writes(0, 30 * sim::kDay, one_percent, 0.0).is_ok());
  const double ratio = greedy_random_write_amplification(native_alpha(model) / 0.8) /
                       greedy_random_write_amplification(native_alpha(model));
  CHECK(array->wear().percent_endurance_used == doctest::Approx(ratio).epsilon(0.05));
  CHECK(array->wear().percent_endurance_used < 0.75);
}

TEST_CASE("bulk writes on a fresh drive count WA 1 until garbage collection starts") {
  const auto model = preset_ssd("xio-g3-sas-200gb");
  SsdOptions o;
  o.preconditioned = false;
  auto ssd = make_ssd(model, o);
  // Less than the drive's user capacity: every block was erased, nothing to collect.
  REQUIRE(ssd->add_bulk_writes(0, sim::kDay, model.capacity_bytes / 2, 0.0).is_ok());
  CHECK_FALSE(ssd->timing().steady_state);
  CHECK(ssd->wear().write_amplification() == doctest::Approx(1.0));
  // Three times the capacity more: garbage collection has started and amplifies.
  REQUIRE(ssd->add_bulk_writes(sim::kDay, sim::kDay, 3 * model.capacity_bytes, 0.0).is_ok());
  CHECK(ssd->timing().steady_state);
  CHECK(ssd->wear().write_amplification() > 1.3);
}

TEST_CASE("recent write rates over the rate window, from I/O and from bulk spans") {
  const auto model = preset_ssd();
  SsdOptions o;
  o.write_rate_window = sim::kSecond;
  auto ssd = make_ssd(model, o);
  // 1000 sequential 1 MiB writes within the first second: 1000 MiB/s host over [0, 1 s).
  for (int i = 0; i < 1000; ++i)
    REQUIRE(ssd->schedule(i * sim::kMillisecond, SsdOp::kWrite, i * (1LL << 20), 1 << 20).is_ok());
  CHECK(ssd->host_write_bytes_per_second(sim::kSecond / 2) == 0);  // no complete window yet
  CHECK(ssd->host_write_bytes_per_second(sim::kSecond + 1) == doctest::Approx(1000.0 * (1 << 20)));
  CHECK(ssd->nand_write_bytes_per_second(sim::kSecond + 1) ==
        doctest::Approx(ssd->wear().nand_bytes_written));
  CHECK(ssd->host_write_bytes_per_second(3 * sim::kSecond) == 0);  // idle since
  // Fast-forward a day of 1 TB: the rate is the day's mean.
  REQUIRE(ssd->add_bulk_writes(10 * sim::kSecond, sim::kDay, 1'000'000'000'000, 0.5).is_ok());
  CHECK(ssd->host_write_bytes_per_second(10 * sim::kSecond + sim::kDay) ==
        doctest::Approx(1e12 / 86400.0));
  CHECK(ssd->add_bulk_writes(0, sim::kDay, -1, 0.5).code() == sim::Code::kInvalidArgument);
  CHECK(ssd->add_bulk_writes(0, sim::kDay, 1, 1.5).code() == sim::Code::kInvalidArgument);
}

TEST_CASE("RateMeter: idle windows read as zero, a long span sets the rate") {
  RateMeter m(sim::kSecond);
  m.add(100, 500);
  m.add(999'999'999, 500);
  CHECK(m.rate(sim::kSecond) == doctest::Approx(1000.0));
  m.add(sim::kSecond + 5, 10);
  CHECK(m.rate(sim::kSecond + 6) == doctest::Approx(1000.0));
  CHECK(m.rate(2 * sim::kSecond) == doctest::Approx(10.0));
  m.add(5 * sim::kSecond, 1);  // windows [2 s, 5 s) were idle
  CHECK(m.rate(5 * sim::kSecond) == 0);
  m.add_span(6 * sim::kSecond, 10 * sim::kSecond, 1000);
  CHECK(m.rate(16 * sim::kSecond) == doctest::Approx(100.0));
}
