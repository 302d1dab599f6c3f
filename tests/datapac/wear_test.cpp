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

TEST_CASE("random 4K writes wear NAND at the model's WA, sequential streams at 1") {
  const auto model = preset_ssd();
  const double wa_native = greedy_random_write_amplification(native_alpha(model));
  // The 1.6 TB drive: 2 TiB of NAND for 1.6 TB, α = 1.374; between the published α = 1.3
  // (2.36) and a hand solution of u = exp(−α(1 − u)) at α = 1.374: u = 0.510, WA = 2.04.
  CHECK(wa_native == doctest::Approx(2.04).epsilon(0.005));

  auto random = make_ssd(model);
  sim::Rng rng(3);
  for (int i = 0; i < 20000; ++i)
    REQUIRE(random
                ->schedule(i * 1000, SsdOp::kWrite,
                           static_cast<std::int64_t>(rng.uniform(1 << 24)) * k4K, k4K)
                .is_ok());
  CHECK(random->wear().host_bytes_written == 20000 * k4K);
  CHECK(random->wear().write_amplification() == doctest::Approx(wa_native).epsilon(1e-6));

  auto sequential = make_ssd(model);
  for (int i = 0; i < 2000; ++i)
    REQUIRE(sequential->schedule(i * 1000, SsdOp::kWrite, i * 65536LL, 65536).is_ok());
  // The first write starts no stream yet: 64 KiB counts as (64 − 4) / (8192 − 4) sequential.
  const double sigma_first = (65536.0 - 4096) / (kGcUnitBytes - 4096);
  const double first = 65536 * (sigma_first + (1 - sigma_first) * wa_native);
  CHECK(sequential->wear().nand_bytes_written ==
        doctest::Approx(first + 1999 * 65536.0).epsilon(1e-6));
  CHECK(sequential->wear().write_amplification() < 1.01);

  // A 512 B write costs a whole 4 KiB mapping unit inside the drive.
  auto small = make_ssd(model);
  REQUIRE(small->schedule(0, SsdOp::kWrite, 512 * 1001, 512).is_ok());
  CHECK(small->wear().host_bytes_written == 512);
  CHECK(small->wear().nand_bytes_written ==
        static_cast<std::int64_t>(std::floor(4096 * wa_native)));
}

TEST_CASE(
    "a stream interleaved with random writes stays sequential; random writes replace each other") {
  const auto model = preset_ssd();
  const double wa_native = greedy_random_write_amplification(native_alpha(model));
  // A 16 MiB copy in 1 MiB segments (the wear leveler's move), 50 random 4 KiB writes between
  // segments: far more than the 8-entry stream table, but they only replace one another.
  auto ssd = make_ssd(model);
  sim::Rng rng(5);
  const std::int64_t segment = 1 << 20;
  const std::int64_t base = std::int64_t{1} << 36;  // far from the random writes' 64 GiB
  sim::Time t = 0;
  for (int s = 0; s < 16; ++s) {
    REQUIRE(ssd->schedule(t += 1000, SsdOp::kWrite, base + s * segment, segment).is_ok());
    for (int i = 0; i < 50; ++i)
      REQUIRE(ssd->schedule(t += 1000, SsdOp::kWrite,
                            static_cast<std::int64_t>(rng.uniform(1 << 24)) * k4K, k4K)
                  .is_ok());
  }
  // The first segment starts the stream: (1 MiB − 4 KiB) / (8 MiB − 4 KiB) sequential.
  const double sigma_first = (segment - 4096.0) / (kGcUnitBytes - 4096);
  const double expected = segment * (sigma_first + (1 - sigma_first) * wa_native) + 15.0 * segment +
                          16 * 50 * k4K * wa_native;
  CHECK(ssd->wear().nand_bytes_written == doctest::Approx(expected).epsilon(1e-6));

  // Eight long streams fill the table; a new stream of small writes still gets a slot (the
  // least recently used long one) and its second write continues it.
  auto full = make_ssd(model);
  t = 0;
  for (int s = 0; s < 8; ++s)
    for (int i = 0; i < 4; ++i)
      REQUIRE(
          full->schedule(t += 1000, SsdOp::kWrite, (s + 1) * base + i * segment, segment).is_ok());
  const std::int64_t before = full->wear().nand_bytes_written;
  REQUIRE(full->schedule(t += 1000, SsdOp::kWrite, 123 * k4K, k4K).is_ok());
  const std::int64_t lone = full->wear().nand_bytes_written - before;
  CHECK(static_cast<double>(lone) == doctest::Approx(k4K * wa_native).epsilon(1e-3));
  REQUIRE(full->schedule(t += 1000, SsdOp::kWrite, 124 * k4K, k4K).is_ok());
  CHECK(static_cast<double>(full->wear().nand_bytes_written - before - lone) ==
        doctest::Approx(k4K).epsilon(1e-3));
}

TEST_CASE("percent of endurance: rated DWPD bytes at the rating's WA make 100 %") {
  const auto model = preset_ssd();
  // Rated: 10 DWPD × 1.6 TB × 365 × 5 = 2.92e16 host bytes, at full-span random WA.
  auto ssd = make_ssd(model);
  const std::int64_t one_percent = static_cast<std::int64_t>(model.rated_endurance_bytes() / 100);
  REQUIRE(ssd->add_bulk_writes(0, 30 * sim::kDay, one_percent, 0.0).is_ok());
  CHECK(ssd->wear().percent_endurance_used == doctest::Approx(1.0).epsilon(1e-9));
  // The same host bytes written sequentially wear 1 / WA_native as much.
  auto seq = make_ssd(model);
  REQUIRE(seq->add_bulk_writes(0, 30 * sim::kDay, one_percent, 1.0).is_ok());
  const double wa_native = greedy_random_write_amplification(native_alpha(model));
  CHECK(seq->wear().percent_endurance_used == doctest::Approx(1.0 / wa_native).epsilon(1e-9));
  // With 20 % of the drive never written, random writes wear less than at full span.
  SsdOptions o;
  o.host_span_fraction = 0.8;
  auto array = make_ssd(model, o);
  REQUIRE(array->add_bulk_writes(0, 30 * sim::kDay, one_percent, 0.0).is_ok());
  const double wa_array = greedy_random_write_amplification(native_alpha(model) / 0.8);
  CHECK(array->wear().percent_endurance_used ==
        doctest::Approx(wa_array / wa_native).epsilon(1e-9));
  CHECK(array->wear().percent_endurance_used < 0.75);
}

TEST_CASE("bulk writes on a fresh drive count WA 1 until the NAND is written over once") {
  const auto model = preset_ssd("xio-g3-sas-200gb");
  SsdOptions o;
  o.preconditioned = false;
  auto ssd = make_ssd(model, o);
  const std::int64_t raw = model.raw_nand_bytes;
  const double wa = greedy_random_write_amplification(native_alpha(model));
  REQUIRE(ssd->add_bulk_writes(0, sim::kDay, 2 * raw, 0.0).is_ok());
  // raw bytes at WA 1, then raw more at steady state.
  CHECK(ssd->timing().steady_state);
  CHECK(ssd->wear().nand_bytes_written == doctest::Approx(raw + raw * wa).epsilon(1e-9));
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
