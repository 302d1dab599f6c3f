// Each seed device against its datasheet's corner figures (±10 %), the figures read from
// config/ (each with its source key, sources.json).
#include <doctest/doctest.h>

#include <string>

#include "config/preset.h"
#include "ssd/measure.h"
#include "tests/ssd/ssd_test_support.h"

using namespace afasim;

namespace {

using ssd_test::device_spec;

struct Corners {
  double seq_read = 0, seq_write = 0, rand_read = 0, rand_write_steady = 0, rand_write_fob = 0,
         read_lat = 0, write_lat = 0;
};

Corners measure(const config::DeviceSpec& spec) {
  Corners c;
  const int members = spec.member_count;
  auto run = [&](ssd::StartState start, ssd::ClosedLoop l) {
    auto dev = ssd::Device::create(spec, {start, 1.0});
    REQUIRE(dev.is_ok());
    return ssd::run_closed_loop(**dev, l);
  };
  ssd::ClosedLoop l;
  l.duration = 200 * sim::kMillisecond;
  l.warmup = 50 * sim::kMillisecond;
  l.block_bytes = spec.datasheet.seq_block_bytes > 0 ? spec.datasheet.seq_block_bytes : 131072;
  l.random = false;
  l.outstanding = 32 * members;
  l.op = ssd::Op::kRead;
  c.seq_read = run(ssd::StartState::kFilled, l).bytes_per_second;
  l.op = ssd::Op::kWrite;
  c.seq_write = run(ssd::StartState::kFilled, l).bytes_per_second;
  l.block_bytes = 4096;
  l.random = true;
  l.outstanding = 128 * members;
  l.op = ssd::Op::kRead;
  c.rand_read = run(ssd::StartState::kFilled, l).iops;
  l.op = ssd::Op::kWrite;
  c.rand_write_fob = run(ssd::StartState::kFresh, l).iops;
  l.warmup = 1 * sim::kSecond;
  l.duration = 1 * sim::kSecond;
  c.rand_write_steady = run(ssd::StartState::kSteady, l).iops;
  l.warmup = 10 * sim::kMillisecond;
  l.duration = 50 * sim::kMillisecond;
  l.outstanding = 1;
  l.op = ssd::Op::kRead;
  c.read_lat = run(ssd::StartState::kFilled, l).mean_latency_us;
  l.op = ssd::Op::kWrite;
  c.write_lat = run(ssd::StartState::kFilled, l).mean_latency_us;
  return c;
}

void check_figure(const std::string& what, double model, double datasheet) {
  if (datasheet <= 0) return;
  INFO(what << ": model " << model << ", datasheet " << datasheet);
  MESSAGE(what << ": model " << model << ", datasheet " << datasheet << " ("
               << (model / datasheet - 1) * 100 << " %)");
  CHECK(model == doctest::Approx(datasheet).epsilon(0.10));
}

void check_device(const std::string& name) {
  const config::DeviceSpec spec = device_spec(name);
  const Corners c = measure(spec);
  const config::SsdDatasheet& d = spec.datasheet;
  INFO(name << " against " << d.source);
  check_figure("sequential read B/s", c.seq_read, static_cast<double>(d.seq_read_bytes_per_second));
  check_figure("sequential write B/s", c.seq_write, static_cast<double>(d.seq_write_bytes_per_second));
  check_figure("4K random read IOPS", c.rand_read, static_cast<double>(d.random_read_iops));
  check_figure("4K random write IOPS (steady)", c.rand_write_steady,
               static_cast<double>(d.random_write_iops));
  check_figure("4K random write IOPS (FOB)", c.rand_write_fob,
               static_cast<double>(d.random_write_iops_fob));
  check_figure("4K read latency QD1 us", c.read_lat, static_cast<double>(d.read_latency_us));
  check_figure("4K write latency QD1 us", c.write_lat, static_cast<double>(d.write_latency_us));
}

}  // namespace

TEST_CASE("Liqid Element AIC 7.68 TB meets its spec sheet's corners (liqid-element-aic)") {
  check_device("liqid-element-aic-7.68tb");
}
TEST_CASE("Liqid LQD4500 with 8 XG5-P meets its spec sheet's corners (liqid-lqd4500)") {
  check_device("liqid-lqd4500");
}
TEST_CASE("PBlaze5 916 AIC 6.4 TB meets its spec sheet's corners (memblaze-pblaze5-916)") {
  check_device("memblaze-pblaze5-916-aic-6400gb");
}
TEST_CASE("PBlaze5 916 AIC 3.2 TB meets its spec sheet's corners (memblaze-pblaze5-916-3200gb)") {
  check_device("memblaze-pblaze5-916-aic-3200gb");
}
