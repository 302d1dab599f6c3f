// The faulting payload store (datapac/fault_injection_payload.h) under a whole array: what a
// FLUSH promises is checked against SSDs that lose their volatile caches, and SSD write
// errors reach the host as errors, never as acknowledged writes.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "datapac/fault_injection_payload.h"
#include "sim/units.h"
#include "tests/controller/raid_sim_harness.h"

using namespace afasim;
using namespace afasim::testing;

namespace {

constexpr std::int64_t kBytes = 4 * sim::kMiB;

struct Outcome {
  bool done = false, ok = false;
};

Outcome run_io(sim::Simulator& sim, Array& array, HostIo io) {
  auto o = std::make_shared<Outcome>();
  array.submit(io, [o](const IoCompletion& c) {
    o->done = true;
    o->ok = c.status.is_ok();
  });
  while (!o->done && sim.step()) {
  }
  return *o;
}

HostIo io_of(IoOp op, Id vol, std::int64_t off, std::int64_t len, std::uint8_t* data) {
  HostIo io;
  io.op = op;
  io.volume_id = vol;
  io.offset_bytes = off;
  io.length_bytes = len;
  if (op == IoOp::kWrite) io.write_data = data;
  if (op == IoOp::kRead) io.read_buffer = data;
  return io;
}

// File payload in a fresh directory, every SSD's store wrapped and kept in `stores`.
DataPathOptions faulting_file_payload(const std::string& dir,
                                      std::map<std::string, datapac::FaultInjectionPayloadStore*>& stores) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  DataPathOptions o;
  o.payload = datapac::PayloadKind::kFile;
  o.payload_dir = dir;
  o.wrap_payload = datapac::fault_injection_wrapper(
      [&stores](const std::string& name, datapac::FaultInjectionPayloadStore* s) { stores[name] = s; });
  return o;
}

}  // namespace

TEST_CASE("FLUSH reaches the SSD media: SSDs that lose their volatile caches keep what a FLUSH covered") {
  const std::string dir = (std::filesystem::temp_directory_path() / "afasim-flush-media").string();
  std::map<std::string, datapac::FaultInjectionPayloadStore*> stores;
  SimArray a(3, faulting_file_payload(dir, stores));
  REQUIRE(stores.size() == 40);
  const Id vol = a.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kThin);
  std::vector<std::uint8_t> flushed(kBytes, 0xA5), later(kBytes, 0x3C), back(kBytes);
  REQUIRE(run_io(*a.sim, *a.array, io_of(IoOp::kWrite, vol, 0, kBytes, flushed.data())).ok);
  REQUIRE(run_io(*a.sim, *a.array, io_of(IoOp::kFlush, vol, 0, 0, nullptr)).ok);
  // Acknowledged but not flushed: the array may lose it.
  REQUIRE(run_io(*a.sim, *a.array, io_of(IoOp::kWrite, vol, kBytes, kBytes, later.data())).ok);
  a.array->destage_all();
  a.sim->run();
  std::int64_t dropped = 0;
  for (auto& [name, s] : stores) {
    dropped += s->unsynced_bytes();
    REQUIRE(s->drop_unsynced().is_ok());  // every SSD loses its volatile cache
  }
  CHECK(dropped > 0);  // the later write reached the SSDs, unsynced
  // Power back on: a new array over the same payload files and thin map.
  sim::Simulator sim2(3);
  ArrayOptions o;
  o.data_path.payload = datapac::PayloadKind::kFile;
  o.data_path.payload_dir = dir;
  auto again = Array::open(sim2, a.catalog, a.preset, a.journal, a.journal.snapshot(), o);
  REQUIRE(again.is_ok());
  REQUIRE(run_io(sim2, **again, io_of(IoOp::kRead, vol, 0, kBytes, back.data())).ok);
  CHECK(back == flushed);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an SSD write error fails the host write that met it; it is never acknowledged") {
  std::map<std::string, datapac::FaultInjectionPayloadStore*> stores;
  DataPathOptions o;
  o.wrap_payload = datapac::fault_injection_wrapper(
      [&stores](const std::string& name, datapac::FaultInjectionPayloadStore* s) { stores[name] = s; });
  SimArray a(5, o);
  const Id vol = a.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kFixed);
  std::vector<std::uint8_t> data(64 * 1024, 0x77);
  for (auto& [name, s] : stores) s->fail_next_writes(1);
  HostIo fua = io_of(IoOp::kWrite, vol, 0, 64 * 1024, data.data());
  fua.fua = true;  // through the cache: the write meets the SSDs before its ack
  const Outcome first = run_io(*a.sim, *a.array, fua);
  std::int64_t failed = 0;
  for (auto& [name, s] : stores) failed += s->writes_failed();
  CHECK(failed >= 1);
  CHECK_FALSE(first.ok);
  for (auto& [name, s] : stores) s->fail_next_writes(0);
  CHECK(run_io(*a.sim, *a.array, io_of(IoOp::kWrite, vol, 0, 64 * 1024, data.data())).ok);
}
