// Timing of a DataPac SSD (the ISE's SAS drive) through datapac::Ssd: the flash-up model of
// ssd/ (docs/ssd-model.md) behind the DataPac's states. Expected figures are the sums of the
// drive's stages, each a field of config/ssds/xio-g3-sas-1600gb.json; the mechanisms
// (GC, suspend, waits) are tested in tests/ssd/.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "datapac/ssd.h"
#include "test_support.h"

using namespace afasim;
using namespace afasim::datapac;
using namespace afasim::datapac::testing;

namespace {

// ceil(bytes / rate) in ns, as the model's stages round.
sim::Time xfer(std::int64_t bytes, std::int64_t rate) {
  return static_cast<sim::Time>(std::ceil(static_cast<double>(bytes) * 1e9 / static_cast<double>(rate)));
}

sim::Time qd1_read_ns(const config::SsdModel& m) {
  return m.controller.read_command_ns + m.nand.read_ns +
         xfer(4096, m.nand.channel_bytes_per_second) + m.controller.read_overhead_ns +
         xfer(4096, m.host.bytes_per_second()) + m.host.latency_ns;
}

sim::Time qd1_write_ns(const config::SsdModel& m) {
  return m.controller.write_command_ns + xfer(4096, m.host.bytes_per_second()) +
         m.controller.write_overhead_ns + m.host.latency_ns;
}

}  // namespace

TEST_CASE("a 4K read at queue depth 1 is the sum of its stages: command, tR, channel, ECC, link") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  // 20 + 60 + 10.24 + 8 + 3.41 + 10 us = 111.65 us for the 1.6 TB SAS drive.
  const sim::Time expect = qd1_read_ns(model);
  CHECK(std::abs(expect - 111'654) <= 2);
  sim::Time t = 0;
  for (int i = 0; i < 5; ++i, t += sim::kMillisecond) {
    auto done = ssd->schedule(t, SsdOp::kRead, (i * 7919LL) * 4096, 4096);
    REQUIRE(done.is_ok());
    CHECK(std::abs((*done - t) - expect) <= 2);
  }
}

TEST_CASE("a 4K write at queue depth 1 is acknowledged from the buffer") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  auto done = ssd->schedule(0, SsdOp::kWrite, 4096 * 1000, 4096);
  REQUIRE(done.is_ok());
  CHECK(std::abs(*done - qd1_write_ns(model)) <= 2);
  CHECK(ssd->buffered_bytes() == 4096);
}

TEST_CASE("a slow SSD multiplies its internal service times, not its interface") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  ssd->set_latency_multiplier(3.0);
  auto done = ssd->schedule(0, SsdOp::kRead, 0, 4096);
  REQUIRE(done.is_ok());
  const sim::Time internal =
      model.controller.read_command_ns + model.nand.read_ns + model.controller.read_overhead_ns;
  CHECK(std::abs(*done - (qd1_read_ns(model) + 2 * internal)) <= 3);
  CHECK(ssd->timing().latency_multiplier == 3.0);
}

TEST_CASE("trim and flush take a command's time; bad ranges are refused") {
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  const sim::Time cmd =
      model.controller.write_command_ns + model.controller.write_overhead_ns + model.host.latency_ns;
  CHECK(*ssd->schedule(0, SsdOp::kTrim, 0, 1 << 20) == cmd);
  CHECK(*ssd->schedule(sim::kSecond, SsdOp::kFlush, 0, 0) == sim::kSecond + cmd);
  CHECK(ssd->schedule(0, SsdOp::kRead, model.capacity_bytes, 4096).status().code() ==
        sim::Code::kOutOfRange);
  CHECK(ssd->schedule(0, SsdOp::kRead, -4096, 4096).status().code() == sim::Code::kOutOfRange);
  CHECK(ssd->schedule(0, SsdOp::kWrite, 0, 0).status().code() == sim::Code::kInvalidArgument);
}

TEST_CASE("timing is deterministic: same inputs give the same completion times") {
  const auto model = preset_ssd();
  auto run = [&] {
    auto ssd = make_ssd(model);
    std::vector<sim::Time> out;
    sim::Rng rng(42);
    for (int i = 0; i < 20000; ++i) {
      const bool write = rng.uniform(10) < 3;
      auto done = ssd->schedule(i * 2000, write ? SsdOp::kWrite : SsdOp::kRead,
                                static_cast<std::int64_t>(rng.uniform(1 << 24)) * 4096, 4096);
      REQUIRE(done.is_ok());
      out.push_back(*done);
    }
    return out;
  };
  CHECK(run() == run());
}

TEST_CASE("random 4K reads at queue depth 64 run at the controller's command rate") {
  // 4 cores / 20 us per read = 200,000 per second (the drive's controller bounds it: 128
  // dies / 60 us would give 2 M, the SAS lane 290,000).
  const auto model = preset_ssd();
  auto ssd = make_ssd(model);
  ClosedLoop loop(*ssd, 64, random_commands(*ssd, SsdOp::kRead, 4096));
  loop.run(20 * sim::kMillisecond, 220 * sim::kMillisecond);
  const double cap = model.controller.cores * 1e9 / static_cast<double>(model.controller.read_command_ns);
  CHECK(loop.ops_per_second() == doctest::Approx(cap).epsilon(0.03));
}
