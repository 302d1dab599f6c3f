// SSD states: healthy, failed, removed, and replacement with a new drive.
#include <doctest/doctest.h>

#include <vector>

#include "datapac/ssd.h"
#include "test_support.h"

using namespace afasim;
using namespace afasim::datapac;
using namespace afasim::datapac::testing;

namespace {

std::unique_ptr<Ssd> memory_ssd() {
  SsdOptions o;
  o.name = "state-test";
  o.payload = PayloadKind::kMemory;
  auto ssd = Ssd::create(preset_ssd("xio-g3-sas-200gb"), o);
  REQUIRE(ssd.is_ok());
  return std::move(ssd).value();
}

}  // namespace

TEST_CASE("a failed SSD answers kIoError to commands and payload calls") {
  auto ssd = memory_ssd();
  const std::vector<std::uint8_t> data(4096, 0xAB);
  REQUIRE(ssd->write_payload(0, data).is_ok());
  REQUIRE(ssd->fail().is_ok());
  CHECK(ssd->state() == SsdState::kFailed);
  CHECK(ssd->fail().is_ok());  // idempotent
  CHECK(ssd->schedule(0, SsdOp::kRead, 0, 4096).status().code() == sim::Code::kIoError);
  CHECK(ssd->schedule(0, SsdOp::kFlush, 0, 0).status().code() == sim::Code::kIoError);
  std::vector<std::uint8_t> out(4096);
  CHECK(ssd->read_payload(0, out).code() == sim::Code::kIoError);
  CHECK(ssd->write_payload(0, data).code() == sim::Code::kIoError);
  CHECK(ssd->add_bulk_writes(0, 0, 1, 0).code() == sim::Code::kIoError);
}

TEST_CASE("a removed SSD is kUnavailable; put back, it has its data and wear") {
  auto ssd = memory_ssd();
  std::vector<std::uint8_t> data(4096, 0x5A);
  REQUIRE(ssd->write_payload(8192, data).is_ok());
  REQUIRE(ssd->schedule(0, SsdOp::kWrite, 8192, 4096).is_ok());
  REQUIRE(ssd->remove().is_ok());
  CHECK(ssd->state() == SsdState::kRemoved);
  CHECK(ssd->remove().code() == sim::Code::kPreconditionFailed);
  CHECK(ssd->fail().code() == sim::Code::kPreconditionFailed);
  CHECK(ssd->schedule(0, SsdOp::kWrite, 0, 4096).status().code() == sim::Code::kUnavailable);
  std::vector<std::uint8_t> out(4096);
  CHECK(ssd->read_payload(8192, out).code() == sim::Code::kUnavailable);
  REQUIRE(ssd->insert().is_ok());
  CHECK(ssd->insert().code() == sim::Code::kPreconditionFailed);
  CHECK(ssd->state() == SsdState::kHealthy);
  REQUIRE(ssd->read_payload(8192, out).is_ok());
  CHECK(out == data);
  CHECK(ssd->wear().host_bytes_written == 4096);
  CHECK(ssd->incarnation() == 0);
}

TEST_CASE("a failed drive removed and put back is still failed") {
  auto ssd = memory_ssd();
  REQUIRE(ssd->fail().is_ok());
  REQUIRE(ssd->remove().is_ok());
  REQUIRE(ssd->insert().is_ok());
  CHECK(ssd->state() == SsdState::kFailed);
}

TEST_CASE("a replacement SSD is healthy, empty, fresh, idle and has zero wear") {
  auto ssd = memory_ssd();
  std::vector<std::uint8_t> data(100'000, 0x77);
  REQUIRE(ssd->write_payload(12345, data).is_ok());
  for (int i = 0; i < 100; ++i) REQUIRE(ssd->schedule(0, SsdOp::kWrite, i * 4096LL, 4096).is_ok());
  REQUIRE(ssd->fail().is_ok());
  REQUIRE(ssd->insert_replacement().is_ok());
  CHECK(ssd->state() == SsdState::kHealthy);
  CHECK(ssd->incarnation() == 1);
  CHECK(ssd->wear().host_bytes_written == 0);
  CHECK(ssd->wear().nand_bytes_written == 0);
  CHECK(ssd->wear().percent_endurance_used == 0);
  CHECK(ssd->counters().writes == 0);
  CHECK(ssd->payload_memory_bytes() == 0);
  CHECK_FALSE(ssd->timing().steady_state);
  std::vector<std::uint8_t> out(data.size(), 0xFF);
  REQUIRE(ssd->read_payload(12345, out).is_ok());
  CHECK(out == std::vector<std::uint8_t>(data.size(), 0));
  // Idle and empty: a read at t=1 µs is not queued behind the old drive's work, and a
  // never-written range is answered without touching the NAND.
  const auto& c = ssd->model().controller;
  CHECK(*ssd->schedule(1000, SsdOp::kRead, 0, 4096) <
        1000 + c.read_command_ns + c.read_overhead_ns + ssd->model().host.latency_ns + 5000);
}

TEST_CASE("validation names the bad option or model figure") {
  const auto model = preset_ssd();
  SsdOptions o;
  o.host_span_fraction = 0;
  CHECK(Ssd::validate(model, o).message().find("host_span_fraction") != std::string::npos);
  o = {};
  o.name = "../escape";
  CHECK(Ssd::validate(model, o).code() == sim::Code::kInvalidArgument);
  o = {};
  o.payload = PayloadKind::kMemory;
  o.memory_page_bytes = 3000;
  CHECK(Ssd::validate(model, o).message().find("memory_page_bytes") != std::string::npos);
  o = {};
  o.payload = PayloadKind::kFile;
  CHECK(Ssd::create(model, o).status().message().find("payload_directory") != std::string::npos);
  auto bad = model;
  bad.raw_nand_bytes = bad.capacity_bytes;
  CHECK(Ssd::validate(bad, {}).message().find("exceed capacity") != std::string::npos);
}
