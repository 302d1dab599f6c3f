// The write-back cache and the controller model, case by case (docs/write-cache.md,
// docs/controller-states.md): ack at mirror time, read hits, FLUSH, FUA, a full cache, TRIM,
// the cache mode's reasons, supercap charging, split brain, and faults refused.
#include <doctest/doctest.h>

#include "perf/calibration.h"

#include <cstdio>
#include <set>

#include "tests/controller/raid_sim_harness.h"
#include "sim/units.h"

using namespace afasim;
using namespace afasim::testing;

namespace {


struct Done {
  bool ok = false;
  sim::Time latency = -1;
};

// Submits one I/O and runs the simulator until it completes.
Done run_io(SimArray& a, HostIo io) {
  auto d = std::make_shared<Done>();
  a.array->submit(io, [d](const IoCompletion& c) {
    d->ok = c.status.is_ok();
    d->latency = c.latency();
  });
  while (d->latency < 0 && a.sim->step()) {
  }
  return *d;
}

HostIo read_io(Id vol, std::int64_t off, std::int64_t len, std::uint8_t* out) {
  HostIo io;
  io.op = IoOp::kRead;
  io.volume_id = vol;
  io.offset_bytes = off;
  io.length_bytes = len;
  io.read_buffer = out;
  return io;
}

HostIo flush_io(Id vol) {
  HostIo io;
  io.op = IoOp::kFlush;
  io.volume_id = vol;
  return io;
}

ControllerInfo info(SimArray& a, Id c) { return a.array->data_path().controller_info(c); }

bool has_event(SimArray& a, const std::string& needle) {
  const auto page = a.array->events(0, 100000);
  for (const auto& e : page.items)
    if (e.message.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("write-back: a 4 KiB write is acknowledged once in the owner's cache and mirrored; write-through waits for the SSDs") {
  SimArray a(1);
  const Id vol = a.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  const Id owner = a.array->data_path().owner(vol);
  REQUIRE(owner == 1);  // the first volume prefers A
  std::vector<std::uint8_t> buf(4096, 0x5A);
  // Allocate the extent first so that both writes below find it.
  REQUIRE(run_io(a, write_io(vol, 1 << 20, 4096, buf.data())).ok);
  const Done wb = run_io(a, write_io(vol, 0, 4096, buf.data()));
  REQUIRE(wb.ok);
  // Expected from the performance model (config/calibration/ise-860-g3.json, an idle array):
  // FC in (the data at 800 MB/s, 10 µs) cut through into DRAM, one core's command and
  // mirroring work, DMA out of DRAM cut through the mirror link (3.2 GB/s, 3 µs) into the
  // peer's DRAM, the acknowledgement frame (10 µs). Each cut-through DMA lasts as long as its
  // slowest resource (the wire, the link; DRAM at 4.68 GB/s is faster). The core's time
  // varies around its mean by cpu_service_cv (0.2): at least 0.8 of it; the rest is exact.
  const auto cal = perf::load_calibration("ise-860-g3").value();
  const perf::ModelParameters& p = cal.model;
  const sim::Time fixed = sim::transfer_time(4096, p.host_port_bytes_per_second) + 2 * p.host_port_latency_ns +
                          sim::transfer_time(4096, p.mirror_link_bytes_per_second) + p.mirror_link_latency_ns;
  const sim::Time core = p.cpu.ns(perf::CpuOp::kHostWrite, 1, 4096) + p.cpu.ns(perf::CpuOp::kMirror, 1, 4096);
  INFO("write-back " << wb.latency << " ns; fixed " << fixed << " ns + core " << core << " ns");
  CHECK(wb.latency >= fixed + core * 8 / 10 - 10);
  CHECK(wb.latency <= fixed + core * 3);
  CHECK(info(a, 1).dirty_bytes == 2 * 4096);
  CHECK(info(a, 1).cache_mode == CacheMode::kWriteBack);
  CHECK(info(a, 2).mirrored_bytes == 2 * 4096);

  REQUIRE(a.array->inject_fault({"supercap_degrade"}).is_ok());
  CHECK(info(a, 1).cache_mode == CacheMode::kWriteThrough);
  CHECK(info(a, 1).cache_mode_reason == "supercap pack degraded");
  a.sim->run();  // write-through drains the dirty data
  CHECK(info(a, 1).dirty_bytes == 0);
  const Done wt = run_io(a, write_io(vol, 8192, 4096, buf.data()));
  REQUIRE(wt.ok);
  INFO("write-back " << wb.latency << " ns, write-through " << wt.latency << " ns");
  CHECK(wt.latency > wb.latency + 10'000);  // the mirrored SSD writes come on top
  CHECK(info(a, 1).dirty_bytes == 0);
  REQUIRE(a.array->inject_fault({"supercap_restore"}).is_ok());
  CHECK(info(a, 1).cache_mode == CacheMode::kWriteBack);
}

TEST_CASE("a read of cached blocks is served from the cache with the newest bytes and no SSD operation") {
  SimArray a(2);
  const Id vol = a.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kThin);
  std::vector<std::uint8_t> w(16384), r(16384);
  fill_pattern(w.data(), 16384, 7, vol, 4096);
  REQUIRE(run_io(a, write_io(vol, 4096, 16384, w.data())).ok);
  const auto ops = a.array->data_path().controller_stats(1).backend_ops;
  const Done d = run_io(a, read_io(vol, 4096, 16384, r.data()));
  REQUIRE(d.ok);
  CHECK(r == w);
  CHECK(a.array->data_path().controller_stats(1).backend_ops == ops);
  // A read that is half cached reads the SSDs and overlays the cache.
  std::vector<std::uint8_t> r2(8192);
  REQUIRE(run_io(a, read_io(vol, 0, 8192, r2.data())).ok);
  CHECK(std::all_of(r2.begin(), r2.begin() + 4096, [](std::uint8_t b) { return b == 0; }));
  CHECK(std::equal(r2.begin() + 4096, r2.end(), w.begin()));
}

TEST_CASE("a destaged block keeps its place in the cache but not its bytes: reads and partial writes take them from the SSDs") {
  // Hostile round 31: with a payload every cached block kept a 4 KiB copy, clean or dirty, so
  // the server's memory grew 1 GB per GiB written up to both caches' 4 GiB, and a 4 GB machine
  // ran out (std::bad_alloc, the process gone). Now only dirty blocks hold bytes.
  SimArray a(3);
  const Id vol = a.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kThin);
  std::vector<std::uint8_t> w(8 * 65536);
  fill_pattern(w.data(), static_cast<std::int64_t>(w.size()), 9, vol, 0);
  for (int i = 0; i < 8; ++i) REQUIRE(run_io(a, write_io(vol, i * 65536, 65536, w.data() + i * 65536)).ok);  // cached (< 512 KiB)
  CHECK(a.array->data_path().cache_payload_bytes() == static_cast<std::int64_t>(w.size()));
  REQUIRE(run_io(a, flush_io(vol)).ok);
  CHECK(info(a, 1).dirty_bytes == 0);
  CHECK(info(a, 1).cached_bytes == static_cast<std::int64_t>(w.size()));  // still cached: hits
  CHECK(a.array->data_path().cache_payload_bytes() == 0);
  // A read of cached blocks: a hit (no SSD operation in the timing), its bytes from the SSDs.
  const auto ops = a.array->data_path().controller_stats(1).backend_ops;
  std::vector<std::uint8_t> r(65536);
  REQUIRE(run_io(a, read_io(vol, 65536, 65536, r.data())).ok);
  CHECK(std::equal(r.begin(), r.end(), w.begin() + 65536));
  CHECK(a.array->data_path().controller_stats(1).backend_ops == ops);
  // A write of part of a clean block, write-back and written through (FUA): the rest of the
  // block comes back from the SSDs.
  std::vector<std::uint8_t> p(1024, 0x5a);
  REQUIRE(run_io(a, write_io(vol, 4096 + 512, 1024, p.data())).ok);
  REQUIRE(run_io(a, write_io(vol, 3 * 4096 + 1024, 1024, p.data(), true)).ok);
  std::copy(p.begin(), p.end(), w.begin() + 4096 + 512);
  std::copy(p.begin(), p.end(), w.begin() + 3 * 4096 + 1024);
  // The write-back block, dirty again, and the written-through one, whose bytes a write-through
  // keeps (it may fail after the merge: review 31).
  CHECK(a.array->data_path().cache_payload_bytes() == 8192);
  std::vector<std::uint8_t> all(w.size());
  REQUIRE(run_io(a, read_io(vol, 0, static_cast<std::int64_t>(all.size()), all.data())).ok);
  CHECK(all == w);
  REQUIRE(run_io(a, flush_io(vol)).ok);
  REQUIRE(run_io(a, read_io(vol, 0, static_cast<std::int64_t>(all.size()), all.data())).ok);
  CHECK(all == w);
  CHECK(a.array->data_path().check_all_parity() == "");
}

TEST_CASE("FLUSH replies once the volume's dirty data is on the SSDs; a FUA write is written through") {
  SimArray a(3);
  const Id vol = a.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kThin);
  std::vector<std::uint8_t> w(65536, 0x33);
  for (int i = 0; i < 8; ++i) REQUIRE(run_io(a, write_io(vol, i * 131072, 65536, w.data())).ok);
  CHECK(info(a, 1).dirty_bytes == 8 * 65536);  // under the low watermark: no destage yet
  HostIo flush;
  flush.op = IoOp::kFlush;
  flush.volume_id = vol;
  const Done f = run_io(a, flush);
  REQUIRE(f.ok);
  CHECK(info(a, 1).dirty_bytes == 0);
  CHECK(f.latency > 50'000);  // RAID 5 read-modify-writes were timed, not skipped
  CHECK(a.array->data_path().check_all_parity() == "");
  REQUIRE(run_io(a, write_io(vol, 0, 4096, w.data(), true)).ok);
  CHECK(info(a, 1).dirty_bytes == 0);
}

TEST_CASE("a full cache makes writes wait for destage: dirty data stays bounded and everything reads back") {
  DataPathOptions o;
  o.cache.write_cache_bytes = 1 * sim::kMiB;
  SimArray a(4, o);
  a.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kThin);
  sim::Rng rng(4, "test.cache");
  std::int64_t max_dirty = 0;
  for (int batch = 0; batch < 40; ++batch) {
    for (int i = 0; i < 16; ++i) {
      const std::int64_t block = static_cast<std::int64_t>(rng.uniform(64 * sim::kMiB / kBlock - 16));
      a.write(a.vols[0], block * kBlock, 16 * kBlock);
    }
    while (a.sim->step()) max_dirty = std::max(max_dirty, info(a, 1).dirty_bytes);
  }
  // At most the cache plus what the 16 writes of a batch put in it before they wait.
  CHECK(max_dirty <= 1 * sim::kMiB + 16 * 16 * kBlock);
  CHECK(max_dirty > 1 * sim::kMiB / 2);
  a.read_all();
  CHECK(a.write_errors == 0);
  CHECK(a.wrong_bytes == 0);
  CHECK(a.invariant_report() == "");
  CHECK(a.array->data_path().check_all_parity() == "");
}

TEST_CASE("TRIM of whole extents drops their cached dirty blocks: nothing comes back after destage") {
  SimArray a(5);
  const Id vol = a.add_volume("v", 4LL << 30, raid::RaidType::kRaid10, Provisioning::kThin);
  const std::int64_t ext = a.array->extent_bytes(raid::RaidType::kRaid10);
  std::vector<std::uint8_t> w(65536, 0x77);
  REQUIRE(run_io(a, write_io(vol, 0, 65536, w.data())).ok);
  REQUIRE(run_io(a, write_io(vol, ext + 4096, 65536, w.data())).ok);
  CHECK(info(a, 1).dirty_bytes == 2 * 65536);
  HostIo trim;
  trim.op = IoOp::kTrim;
  trim.volume_id = vol;
  trim.offset_bytes = 0;
  trim.length_bytes = ext;
  REQUIRE(run_io(a, trim).ok);
  CHECK(info(a, 1).dirty_bytes == 65536);  // the second extent's write stays
  CHECK(a.array->data_path().allocated_extents(vol) == 1);
  a.array->destage_all();
  a.sim->run();
  std::vector<std::uint8_t> r(65536, 0xEE);
  REQUIRE(run_io(a, read_io(vol, 0, 65536, r.data())).ok);
  CHECK(std::all_of(r.begin(), r.end(), [](std::uint8_t b) { return b == 0; }));
  CHECK(a.array->data_path().allocated_extents(vol) == 1);
  REQUIRE(run_io(a, read_io(vol, ext + 4096, 65536, r.data())).ok);
  CHECK(r == w);
}

TEST_CASE("destage_all of many dirty blocks runs destage_ops_max at a time; every block reaches the SSDs") {
  // A FLUSH or destage_all issues every dirty run at once. Their journeys all in flight
  // passed perf::Flow's bound and aborted a scenario's end after ~8 s of 4K random writes
  // (~850,000 dirty blocks); the timing now runs the cache's destage_ops_max (64) at a time.
  SimArray a(12);
  const Id vol = a.add_volume("v", 256 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  std::vector<std::uint8_t> w(4096);
  constexpr int kBlocks = 600;  // every other 4 KiB block: 600 runs of one block
  for (int i = 0; i < kBlocks; ++i) {
    std::fill(w.begin(), w.end(), static_cast<std::uint8_t>(i));
    REQUIRE(run_io(a, write_io(vol, 2 * i * 4096, 4096, w.data())).ok);
  }
  REQUIRE(info(a, 1).dirty_bytes == kBlocks * 4096);
  a.array->destage_all();
  const Timing& t = a.array->data_path().timing();
  CHECK(t.destages_running(1) == 64);
  CHECK(t.destages_waiting(1) == kBlocks - 64);
  a.sim->run();
  CHECK(t.destages_running(1) == 0);
  CHECK(t.destages_waiting(1) == 0);
  CHECK(info(a, 1).dirty_bytes == 0);
  std::vector<std::uint8_t> r(4096);
  for (int i : {0, 63, 64, 599}) {
    REQUIRE(run_io(a, read_io(vol, 2 * i * 4096, 4096, r.data())).ok);
    CHECK(r == std::vector<std::uint8_t>(4096, static_cast<std::uint8_t>(i)));
  }
}

TEST_CASE("after a power cycle the cache is write-through until the supercaps hold a vault's energy") {
  SimArray a(6);
  const Id vol = a.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  std::vector<std::uint8_t> w(65536, 0x42);
  REQUIRE(run_io(a, write_io(vol, 0, 65536, w.data())).ok);
  const double full = a.preset.supercaps.usable_energy_joules();
  CHECK(a.array->data_path().power_status().energy_joules == doctest::Approx(full));
  const sim::Time t0 = a.sim->now();
  REQUIRE(a.array->inject_fault({"power_loss"}).is_ok());
  CHECK(a.array->controller(1)->state == ControllerState::kVaulting);
  CHECK(a.array->data_path().power_status().state == "holdup");
  a.sim->run();
  CHECK(a.array->controller(1)->state == ControllerState::kOff);
  CHECK(a.array->data_path().power_status().state == "off");
  // Each controller vaulted 64 KiB (own and mirror) in 2 s of overhead plus 33 µs: the
  // hold-up load drew 300 W for that long.
  const double used = 300 * sim::to_seconds(a.sim->now() - t0);
  CHECK(a.array->data_path().power_status().energy_joules == doctest::Approx(full - used).epsilon(1e-6));
  std::vector<std::uint8_t> r(65536);
  CHECK_FALSE(run_io(a, read_io(vol, 0, 65536, r.data())).ok);  // off: a clean error

  // Drain the supercaps with a second cut right after the restore boots... simpler: degrade
  // them to below a vault's need by restoring, then cutting again while charging.
  REQUIRE(a.array->inject_fault({"power_restore"}).is_ok());
  a.sim->run_until(a.sim->now() + 25 * sim::kSecond);
  CHECK(a.array->controller(1)->state == ControllerState::kActive);
  REQUIRE(run_io(a, read_io(vol, 0, 65536, r.data())).ok);
  CHECK(r == w);  // replayed from the vault
  a.sim->run();
  CHECK(info(a, 1).cache_mode == CacheMode::kWriteBack);

  // A power loss with the supercaps low: after this cycle they start from what is left.
  DataPathOptions o;
  o.controllers.holdup_load_w = 300;
  SimArray b(7, o);
  const Id vb = b.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  REQUIRE(run_io(b, write_io(vb, 0, 4096, w.data())).ok);
  for (int i = 0; i < 2; ++i) {
    REQUIRE(b.array->inject_fault({"power_loss"}).is_ok());
    b.sim->run();
    REQUIRE(b.array->inject_fault({"power_restore"}).is_ok());
    b.sim->run_until(b.sim->now() + 21 * sim::kSecond);
  }
  const auto p = b.array->data_path().power_status();
  INFO("energy " << p.energy_joules << " J, a vault needs " << p.vault_energy_joules << " J");
  if (p.energy_joules < p.vault_energy_joules) {
    CHECK(info(b, 1).cache_mode == CacheMode::kWriteThrough);
    CHECK(info(b, 1).cache_mode_reason.rfind("supercaps charging", 0) == 0);
    CHECK(p.charging);
  }
  b.sim->run();
  CHECK(info(b, 1).cache_mode == CacheMode::kWriteBack);
  CHECK(has_event(b, "cache write-back"));
}

TEST_CASE("link cut with both controllers alive: each keeps its volumes, write-through; restore resyncs to write-back") {
  SimArray a(8);
  const Id v1 = a.add_volume("a", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  const Id v2 = a.add_volume("b", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kThin);
  CHECK(a.array->data_path().owner(v1) == 1);
  CHECK(a.array->data_path().owner(v2) == 2);
  REQUIRE(a.array->inject_fault({"link_cut"}).is_ok());
  a.sim->run();
  CHECK(a.array->data_path().owner(v1) == 1);
  CHECK(a.array->data_path().owner(v2) == 2);
  CHECK(info(a, 1).cache_mode == CacheMode::kWriteThrough);
  CHECK(info(a, 2).cache_mode_reason == "inter-controller link cut");
  CHECK(has_event(a, "split brain avoided"));
  CHECK(a.array->data_path().check_one_writer() == "");
  CHECK(a.array->data_path().power_status().link_up == false);
  REQUIRE(a.array->inject_fault({"link_restore"}).is_ok());
  CHECK(a.array->controller(1)->state == ControllerState::kSyncing);
  a.sim->run();
  CHECK(a.array->controller(1)->state == ControllerState::kActive);
  CHECK(info(a, 1).cache_mode == CacheMode::kWriteBack);
  CHECK(info(a, 2).cache_mode == CacheMode::kWriteBack);
}

TEST_CASE("controller failure: takeover within the bound, write-through solo, failback after restore") {
  SimArray a(9);
  const Id v1 = a.add_volume("a", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  const Id v2 = a.add_volume("b", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  REQUIRE(a.array->data_path().owner(v2) == 2);
  std::vector<std::uint8_t> w(4096, 0x11);
  REQUIRE(run_io(a, write_io(v2, 0, 4096, w.data())).ok);
  FaultSpec f{"controller_fail"};
  f.controller = 2;
  REQUIRE(a.array->inject_fault(f).is_ok());
  CHECK(a.array->data_path().owner(v2) == 0);
  const Done d = run_io(a, write_io(v2, 4096, 4096, w.data()));  // parked until the takeover
  REQUIRE(d.ok);
  CHECK(d.latency > 400 * sim::kMillisecond);
  CHECK(d.latency <= a.array->data_path().takeover_bound_ns() + sim::kMillisecond);
  CHECK(a.array->data_path().owner(v2) == 1);
  CHECK(a.array->data_path().owner(v1) == 1);
  CHECK(info(a, 1).cache_mode == CacheMode::kWriteThrough);
  CHECK(info(a, 1).cache_mode_reason == "peer controller B is failed");
  CHECK(a.array->controllers()[1].cache_mode == CacheMode::kNone);
  std::vector<std::uint8_t> r(4096);
  REQUIRE(run_io(a, read_io(v2, 0, 4096, r.data())).ok);
  CHECK(r == w);

  REQUIRE(a.array->inject_fault(f).status().code() == sim::Code::kConflict);
  f.type = "controller_restore";
  REQUIRE(a.array->inject_fault(f).is_ok());
  CHECK(a.array->controller(2)->state == ControllerState::kBooting);
  a.sim->run();
  CHECK(a.array->controller(2)->state == ControllerState::kActive);
  CHECK(a.array->data_path().owner(v2) == 2);  // failback
  CHECK(info(a, 1).cache_mode == CacheMode::kWriteBack);
  CHECK(has_event(a, "failback to the preferred controller"));
}

TEST_CASE("a controller restored before its peer noticed the failure: the peer takes over while it boots") {
  // Restarted at once, B boots for seconds; over the intact link A sees a peer that holds no
  // reservation (not a split brain) and takes B's volumes within the takeover bound.
  SimArray a(9);
  a.add_volume("a", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);  // A's
  const Id v2 = a.add_volume("b", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  REQUIRE(a.array->data_path().owner(v2) == 2);
  FaultSpec f{"controller_fail"};
  f.controller = 2;
  REQUIRE(a.array->inject_fault(f).is_ok());
  f.type = "controller_restore";
  REQUIRE(a.array->inject_fault(f).is_ok());
  REQUIRE(a.array->controller(2)->state == ControllerState::kBooting);
  std::vector<std::uint8_t> w(4096, 0x22);
  const Done d = run_io(a, write_io(v2, 0, 4096, w.data()));
  REQUIRE(d.ok);
  CHECK(d.latency <= a.array->data_path().takeover_bound_ns() + sim::kMillisecond);
  CHECK(a.array->data_path().owner(v2) == 1);
  CHECK(a.array->controller(2)->state == ControllerState::kBooting);  // served by A meanwhile
  CHECK_FALSE(has_event(a, "split brain"));
  a.sim->run();
  CHECK(a.array->controller(2)->state == ControllerState::kActive);
  CHECK(a.array->data_path().owner(v2) == 2);  // failback once B is active
  CHECK_FALSE(has_event(a, "inter-controller link cut"));
}

TEST_CASE("controller and power faults that do not apply are refused, and nothing changes") {
  SimArray a(10);
  FaultSpec f{"controller_fail"};
  f.controller = 3;
  CHECK(a.array->inject_fault(f).status().code() == sim::Code::kNotFound);
  f.controller = 0;
  CHECK(a.array->inject_fault(f).status().code() == sim::Code::kNotFound);
  f = FaultSpec{"controller_restore"};
  f.controller = 1;
  CHECK(a.array->inject_fault(f).status().code() == sim::Code::kConflict);
  CHECK(a.array->inject_fault({"power_restore"}).status().code() == sim::Code::kConflict);
  CHECK(a.array->inject_fault({"link_restore"}).status().code() == sim::Code::kConflict);
  CHECK(a.array->inject_fault({"supercap_restore"}).status().code() == sim::Code::kConflict);
  CHECK(a.array->inject_fault({"power_surge"}).status().code() == sim::Code::kInvalidArgument);
  REQUIRE(a.array->inject_fault({"power_loss"}).is_ok());
  CHECK(a.array->inject_fault({"power_loss"}).status().code() == sim::Code::kConflict);
  f = FaultSpec{"controller_fail"};
  f.controller = 1;
  REQUIRE(a.array->inject_fault(f).is_ok());  // a vaulting controller can still die
  f.type = "controller_restore";
  CHECK(a.array->inject_fault(f).status().code() == sim::Code::kConflict);  // no mains
  CHECK(a.array->faults().size() == 2);
  for (const auto& c : a.array->controllers()) CHECK(c.state != ControllerState::kActive);
}

namespace {

// The events whose message contains `needle`, in order.
std::vector<Event> events_with(SimArray& a, const std::string& needle) {
  std::vector<Event> out;
  for (const auto& e : a.array->events(0, 100000).items)
    if (e.message.find(needle) != std::string::npos) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE(
    "a write cache the supercaps cannot vault is write-through from the start, and stays so") {
  // 2 packs of 2 F between 16.2 V and 8 V hold ½·2·(16.2² − 8²)·2 = 397 J; a vault of 16 MiB
  // of cache and 16 MiB of mirror needs 300 W × (2 s + 32 MiB / 2 GB/s) = 605 J.
  config::Catalog catalog = config::Catalog::embedded().value();
  config::SystemPreset preset = catalog.system("ise-860-g3").value();
  preset.supercaps.capacitance_farads_per_pack = 2;
  sim::Simulator sim(21);
  MemoryJournal journal;
  ArrayOptions o;
  o.data_path.payload = datapac::PayloadKind::kMemory;
  o.data_path.cache.write_cache_bytes = 16 << 20;
  auto opened = Array::open(sim, catalog, preset, journal, journal.snapshot(), o);
  REQUIRE(opened.is_ok());
  Array& array = **opened;
  const auto p = array.data_path().power_status();
  CHECK(p.capacity_joules == doctest::Approx(396.88).epsilon(1e-3));
  CHECK(p.vault_energy_joules == doctest::Approx(605.03).epsilon(1e-3));
  for (Id c = 1; c <= 2; ++c) {
    const ControllerInfo ci = array.data_path().controller_info(c);
    CHECK(ci.cache_mode == CacheMode::kWriteThrough);
    CHECK(ci.cache_mode_reason ==
          "supercaps too small: a vault of the write cache needs 605 J, the packs hold 397 J when "
          "full");
  }
  int start_events = 0;
  for (const auto& e : array.events(0, 1000).items)
    if (e.category == "cache" &&
        e.message.find("cache write-through (supercaps too small") != std::string::npos) {
      CHECK(e.time_ns == 0);
      ++start_events;
    }
  CHECK(start_events == 2);  // one per controller, at t = 0

  VolumeSpec s;
  s.name = "v";
  s.capacity_bytes = 64 << 20;
  auto v = array.create_volume(s);
  REQUIRE(v.is_ok());
  std::vector<std::uint8_t> w(4096, 0x5a);
  HostIo io;
  io.op = IoOp::kWrite;
  io.volume_id = v->id;
  io.length_bytes = 4096;
  io.write_data = w.data();
  bool acked = false;
  array.submit(io, [&](const IoCompletion& c) { acked = c.status.is_ok(); });
  // sim.run() returns: no charge event re-arms forever waiting for energy the packs never hold.
  sim.run();
  REQUIRE(acked);
  CHECK(array.data_path().dirty_bytes() == 0);  // written through: nothing a power cut could lose
  CHECK(array.data_path().controller_info(1).cache_mode == CacheMode::kWriteThrough);
}

TEST_CASE("a write cache larger than half the controller's DRAM is refused with the numbers") {
  // 16 GiB of DRAM per controller (config/systems/ise-800-g3.json) holds the cache and the
  // mirror of the peer's: at most 8 GiB.
  config::Catalog catalog = config::Catalog::embedded().value();
  config::SystemPreset preset = catalog.system("ise-860-g3").value();
  for (std::int64_t bytes : {64LL << 30, 1LL << 50, (8LL << 30) + 4096, -1LL}) {
    INFO(bytes);
    sim::Simulator sim(22);
    MemoryJournal journal;
    ArrayOptions o;
    o.data_path.cache.write_cache_bytes = bytes;
    auto opened = Array::open(sim, catalog, preset, journal, journal.snapshot(), o);
    REQUIRE_FALSE(opened.is_ok());
    CHECK(opened.status().code() == sim::Code::kInvalidArgument);
    if (bytes > 0)
      CHECK(opened.status().message().find("at most 8589934592 bytes") != std::string::npos);
  }
  sim::Simulator sim(23);
  MemoryJournal journal;
  ArrayOptions o;
  o.data_path.cache.write_cache_bytes = 8LL
                                        << 30;  // exactly half: fits, and the supercaps cover it
  auto opened = Array::open(sim, catalog, preset, journal, journal.snapshot(), o);
  REQUIRE(opened.is_ok());
  CHECK((*opened)->data_path().controller_info(1).cache_mode == CacheMode::kWriteBack);
  // 300 W × (2 s + 16 GiB / 2 GB/s) = 3,177 J of the 5,953 J the packs hold.
  CHECK((*opened)->data_path().power_status().vault_energy_joules ==
        doctest::Approx(3177.1).epsilon(1e-3));
}

TEST_CASE(
    "controller restored while the link is cut: sync_complete says the link is cut, not that it "
    "runs solo") {
  SimArray a(24);
  a.add_volume("a", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  FaultSpec f{"controller_fail"};
  f.controller = 2;
  REQUIRE(a.array->inject_fault(f).is_ok());
  a.sim->run();
  REQUIRE(a.array->inject_fault({"link_cut"}).is_ok());
  f.type = "controller_restore";
  const sim::Time restored = a.sim->now();
  REQUIRE(a.array->inject_fault(f).is_ok());
  a.sim->run();
  CHECK(a.array->controller(1)->state == ControllerState::kActive);
  CHECK(a.array->controller(2)->state == ControllerState::kActive);
  const auto ev = events_with(a, "controller B: syncing -> active (sync_complete");
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].message ==
        "controller B: syncing -> active (sync_complete: inter-controller link cut: no cache "
        "mirror with the peer, "
        "write-through)");
  CHECK(ev[0].time_ns == restored + 20 * sim::kSecond);  // boot_ns, nothing to replay or mirror
  CHECK(events_with(a, "running solo").empty());
  CHECK(info(a, 2).cache_mode_reason == "inter-controller link cut");
}

TEST_CASE("a second SSD failure in a volume already degraded is an event: degraded further") {
  // A review (2026-12-06): a RAID 5 volume degraded by one SSD, then exposed on 201 more
  // chunks by a second in another group, got no volume event for the second. Review 29: in
  // RAID 10 a second SSD of the same group takes other members of extents already degraded,
  // so the count of degraded extents does not move: the members are counted.
  for (const bool same_extents : {false, true}) {
    CAPTURE(same_extents);
    const raid::RaidType type = same_extents ? raid::RaidType::kRaid10 : raid::RaidType::kRaid5;
    DataPathOptions o;
    o.rebuild_bytes_per_second = 16'000'000;  // slow: the first rebuild is still running
    SimArray a(25, o);
    const Id v = a.add_volume("v", 1024 * sim::kMiB, type, Provisioning::kFixed);
    a.sim->run();
    const auto extents = a.array->data_path().extent_records(v);
    const int first = extents[0].members[0].drive;
    // The drives that share an extent with the first, and its mirror partners (RAID 10
    // members 2k and 2k+1): losing a partner too would lose the extent.
    std::set<int> beside_first, partners;
    for (const auto& e : extents)
      for (std::size_t i = 0; i < e.members.size(); ++i)
        if (e.members[i].drive == first) {
          for (const auto& m : e.members) beside_first.insert(m.drive);
          if (type == raid::RaidType::kRaid10) partners.insert(e.members[i ^ 1].drive);
        }
    int second = -1;
    for (const auto& e : extents)
      for (const auto& m : e.members) {
        const bool shares = beside_first.contains(m.drive);
        if (second < 0 && m.drive != first && !partners.contains(m.drive) && shares == same_extents) second = m.drive;
      }
    REQUIRE(second >= 0);
    for (int d : {first, second}) {
      FaultSpec f{"drive_fail"};
      f.drive = d + 1;
      REQUIRE(a.array->inject_fault(f).is_ok());
      a.sim->run_until(a.sim->now() + sim::kMillisecond);
    }
    CHECK(a.array->data_path().volume_state(v) == VolumeState::kDegraded);
    const auto further = events_with(a, "volume " + std::to_string(v) + " degraded further: ");
    REQUIRE(further.size() == 1);
    CHECK(further[0].severity == Severity::kWarning);
    CHECK(further[0].message.find("drive " + std::to_string(second + 1) + " failed") != std::string::npos);
    CHECK(further[0].message.find(" member(s) missing, up from ") != std::string::npos);  // what "before" counted
    CHECK(events_with(a, "volume " + std::to_string(v) + " degraded: ").size() == 1);
  }
}

TEST_CASE(
    "volume state changes are events: degraded at the drive failure, online at the rebuild's end") {
  DataPathOptions o;
  o.rebuild_bytes_per_second = 16'000'000;  // 1 s per 16 MiB chunk
  SimArray a(25, o);
  const Id v1 = a.add_volume("r5", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kFixed);
  const Id v2 = a.add_volume("r10", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kFixed);
  a.sim->run();
  const int drive = a.array->data_path().extent_records(v1)[0].members[0].drive;
  FaultSpec f{"drive_fail"};
  f.drive = drive + 1;
  const sim::Time failed = a.sim->now();
  REQUIRE(a.array->inject_fault(f).is_ok());
  CHECK(a.array->data_path().volume_state(v1) == VolumeState::kDegraded);
  const std::int64_t rebuild_bytes = a.array->data_path().rebuild_status().total_bytes;
  REQUIRE(rebuild_bytes > 0);
  a.sim->run();
  CHECK(a.array->data_path().volume_state(v1) == VolumeState::kOnline);
  // v1 (RAID5 4+1 over the drive) lost a chunk; v2 may have too. Each volume: at most one
  // event per transition, degraded at the failure, online at or before the rebuild's end.
  for (Id v : {v1, v2}) {
    const std::string name = "volume " + std::to_string(v);
    const auto degraded = events_with(a, name + " degraded");
    const auto online = events_with(a, name + " online again");
    CHECK(degraded.size() <= 1);
    CHECK(online.size() == degraded.size());
    for (const auto& e : degraded) {
      CHECK(e.category == "volume");
      CHECK(e.object == "volume/" + std::to_string(v));
      CHECK(e.time_ns == failed);
      CHECK(e.message.find("drive " + std::to_string(drive + 1) + " failed") != std::string::npos);
    }
    for (const auto& e : online) {
      CHECK(e.time_ns > failed);
      CHECK(e.time_ns <= a.sim->now());
    }
  }
  // v1 (RAID5 4+1 over the drive) certainly had a chunk there: both events exist for it.
  CHECK(events_with(a, "volume " + std::to_string(v1) + " degraded").size() == 1);
  const auto done = events_with(a, "rebuild of drive " + std::to_string(drive + 1) + " complete");
  REQUIRE(done.size() == 1);
  // Rebuilding the chunks at 16 MB/s: total / rate seconds, paced per 64 KiB piece.
  const double expect_s = static_cast<double>(rebuild_bytes) / 16e6;
  INFO(done[0].message << " (expected about " << expect_s << " s)");
  CHECK(sim::to_seconds(done[0].time_ns - failed) == doctest::Approx(expect_s).epsilon(0.02));
  CHECK(done[0].message.find("paused") == std::string::npos);
}

TEST_CASE(
    "a rebuild pauses at a power loss and resumes after the restore; its duration leaves the pause "
    "out") {
  DataPathOptions o;
  o.rebuild_bytes_per_second = 16'000'000;
  SimArray a(26, o);
  const Id v1 = a.add_volume("r5", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kFixed);
  a.sim->run();
  const int drive = a.array->data_path().extent_records(v1)[0].members[0].drive;
  FaultSpec f{"drive_fail"};
  f.drive = drive + 1;
  REQUIRE(a.array->inject_fault(f).is_ok());
  const sim::Time failed = a.sim->now();
  const std::int64_t rebuild_bytes = a.array->data_path().rebuild_status().total_bytes;
  const double rebuild_s = static_cast<double>(rebuild_bytes) / 16e6;
  REQUIRE(rebuild_s > 1.0);
  const sim::Time cut = failed + static_cast<sim::Time>(rebuild_s * 0.45 * 1e9);
  a.sim->run_until(cut);
  REQUIRE(a.array->data_path().rebuild_status().active);
  REQUIRE(a.array->inject_fault({"power_loss"}).is_ok());
  a.sim->run();
  const sim::Time restore = a.sim->now() + 5 * sim::kSecond;
  a.sim->run_until(restore);
  REQUIRE(a.array->inject_fault({"power_restore"}).is_ok());
  a.sim->run();
  CHECK_FALSE(a.array->data_path().rebuild_status().active);
  CHECK(a.array->data_path().volume_state(v1) == VolumeState::kOnline);

  const std::string d = "rebuild of drive " + std::to_string(drive + 1);
  const auto paused = events_with(a, d + " paused");
  const auto resumed = events_with(a, d + " resumed");
  const auto done = events_with(a, d + " complete");
  REQUIRE(paused.size() == 1);
  REQUIRE(resumed.size() == 1);
  REQUIRE(done.size() == 1);
  CHECK(paused[0].time_ns == cut);
  CHECK(paused[0].message.find("the array lost power") != std::string::npos);
  // The controllers boot 20 s after the restore, replay nothing, sync, and the first one
  // active resumes the rebuild.
  CHECK(resumed[0].time_ns >= restore + 20 * sim::kSecond);
  CHECK(resumed[0].time_ns < restore + 21 * sim::kSecond);
  const double paused_s = sim::to_seconds(resumed[0].time_ns - cut);
  char want[80];
  std::snprintf(want, sizeof want, "after %.1f s paused", paused_s);
  CHECK(resumed[0].message.find(want) != std::string::npos);
  INFO(done[0].message << " (about " << rebuild_s << " s of rebuilding expected)");
  std::snprintf(want, sizeof want, "(not counting %.1f s paused)", paused_s);
  CHECK(done[0].message.find(want) != std::string::npos);
  // "in X s": the wall time from failure to completion minus the pause, about total / rate.
  const double in_s = sim::to_seconds(done[0].time_ns - failed - (resumed[0].time_ns - cut));
  // Within 65.5 ms (a megabyte at 16 MB/s) of the rebuild without a pause.
  CHECK(in_s > rebuild_s - 0.066);
  CHECK(in_s < rebuild_s + 0.066);
  std::snprintf(want, sizeof want, "in %.1f s", in_s);
  CHECK(done[0].message.find(want) != std::string::npos);
  // One volume event per transition: degraded once, online once, despite the power cycle.
  CHECK(events_with(a, "volume " + std::to_string(v1) + " degraded").size() == 1);
  CHECK(events_with(a, "volume " + std::to_string(v1) + " online again").size() == 1);
}

TEST_CASE(
    "a rebuild reaches its set rate, and each stripe row it rebuilds costs the worker controller "
    "its SAS commands, the parity computation and the DRAM crossings") {
  // 400 MB/s: above the ~285 MB/s that one piece in flight reached whatever the limit, below
  // the ~470 MB/s at which a RAID 5 rebuild's ten DRAM crossings per byte fill one
  // controller's 4.68 GB/s (config/calibration/ise-860-g3.json).
  DataPathOptions o;
  o.rebuild_bytes_per_second = 400'000'000;
  SimArray a(27, o);
  const Id v = a.add_volume("r5", 4 * sim::kGiB, raid::RaidType::kRaid5, Provisioning::kFixed);
  a.sim->run();
  const int drive = a.array->data_path().extent_records(v)[0].members[0].drive;
  const Timing& t = a.array->data_path().timing();
  const auto core_ns = [&] { return model_core_ns(a); };
  const auto memory_bytes = [&] { return model_memory_bytes(a); };
  const sim::Time core_before = core_ns();
  const std::int64_t memory_before = memory_bytes();
  FaultSpec f{"drive_fail"};
  f.drive = drive + 1;
  const sim::Time failed = a.sim->now();
  REQUIRE(a.array->inject_fault(f).is_ok());
  const std::int64_t rebuild_bytes = a.array->data_path().rebuild_status().total_bytes;
  REQUIRE(rebuild_bytes >= 4 * 16 * sim::kMiB);
  a.sim->run();
  const auto done = events_with(a, "rebuild of drive " + std::to_string(drive + 1) + " complete");
  REQUIRE(done.size() == 1);
  INFO(done[0].message);
  // The set rate: total / rate, within what the last pieces in flight add.
  const double rate = static_cast<double>(rebuild_bytes) / sim::to_seconds(done[0].time_ns - failed);
  CHECK(rate > 0.97 * 400e6);
  CHECK(rate <= 400e6);

  // Per 64 KiB stripe row (the piece), RAID 5 4+1 (docs/raid.md "Rebuild"): four SAS reads of
  // the survivors and one SAS write of the replacement, one parity computation over the 320
  // KiB the XOR engine moves (four strips read, one written), priced by the calibration's
  // CPU costs (config/calibration/ise-860-g3.json); DRAM: the four strips in, the XOR's 320
  // KiB, the rebuilt strip out to the SAS path.
  const std::int64_t strip = 64 << 10;
  const std::int64_t rows = rebuild_bytes / strip;
  const perf::CpuCosts& cpu = t.params().cpu;
  const double per_row_ns = static_cast<double>(4 * cpu.ns(perf::CpuOp::kBackendRead, 1, 0) +
                                                cpu.ns(perf::CpuOp::kBackendWrite, 1, 0) +
                                                cpu.ns(perf::CpuOp::kParity, 1, 5 * strip));
  // Each core step's service varies around its mean (cpu_service_cv): over thousands of rows
  // the mean holds to well under 2 %.
  CHECK(static_cast<double>(core_ns() - core_before) == doctest::Approx(per_row_ns * rows).epsilon(0.02));
  CHECK(memory_bytes() - memory_before == rows * (4 * strip + 5 * strip + strip));
}

namespace {

struct AgedRun {
  std::vector<std::int64_t> dirty_bytes;  // at t0 + 9.9 s, 12.1 s, 17.1 s, 60 s
  int max_destages = 0;                   // destage operations in flight at once, at most
  std::uint64_t events_while_off = 0;     // events from 60 to 120 s after a power cut with dirty data
  std::string parity;
  bool reads_back = true;
};

// RAID 5 4 KiB writes well under the low watermark: 40 blocks at t0, 40 more at t0 + 5 s;
// the dirty bytes sampled on the way; each block read back; then 40 more and a power cut.
AgedRun aged_run(sim::Time destage_age_ns) {
  DataPathOptions o;
  o.cache.destage_age_ns = destage_age_ns;
  SimArray a(14, o);
  const Id vol = a.add_volume("v", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kThin);
  std::vector<std::uint8_t> w(4096);
  auto write_batch = [&](int first) {
    for (int i = first; i < first + 40; ++i) {
      std::fill(w.begin(), w.end(), static_cast<std::uint8_t>(i));
      REQUIRE(run_io(a, write_io(vol, 3 * i * 4096, 4096, w.data())).ok);
    }
  };
  AgedRun r;
  const Timing& t = a.array->data_path().timing();
  auto run_to = [&](sim::Time until) {
    while (a.sim->next_event_time() <= until && a.sim->step()) r.max_destages = std::max(r.max_destages, t.destages_running(1));
    a.sim->run_until(until);
  };
  const sim::Time t0 = a.sim->now();
  write_batch(0);
  run_to(t0 + 5 * sim::kSecond);
  write_batch(40);
  for (sim::Time at : {9'900 * sim::kMillisecond, 12'100 * sim::kMillisecond, 17'100 * sim::kMillisecond, 60 * sim::kSecond}) {
    run_to(t0 + at);
    r.dirty_bytes.push_back(info(a, 1).dirty_bytes);
  }
  std::vector<std::uint8_t> back(4096);
  for (int i = 0; i < 80; ++i) {
    REQUIRE(run_io(a, read_io(vol, 3 * i * 4096, 4096, back.data())).ok);
    r.reads_back = r.reads_back && back == std::vector<std::uint8_t>(4096, static_cast<std::uint8_t>(i));
  }
  r.parity = a.array->data_path().check_all_parity();
  write_batch(80);
  REQUIRE(a.array->inject_fault({"power_loss"}).is_ok());
  a.sim->run_until(a.sim->now() + 60 * sim::kSecond);  // the vault written, the last checks run
  const std::uint64_t before = a.sim->events_executed();
  a.sim->run_until(a.sim->now() + 60 * sim::kSecond);
  r.events_while_off = a.sim->events_executed() - before;
  return r;
}

}  // namespace

TEST_CASE("dirty data under the low watermark is destaged once older than the destage age; an age of 0 keeps it") {
  // CacheOptions: 10 s, looked at once a second, so a block goes between 10 and 12 s after
  // its write; `destage_ops_trickle` (4) operations at a time.
  const AgedRun aged = aged_run(10 * sim::kSecond);
  const AgedRun kept = aged_run(0);
  INFO("dirty bytes with the age " << aged.dirty_bytes[0] << " " << aged.dirty_bytes[1] << " " << aged.dirty_bytes[2]
                                   << " " << aged.dirty_bytes[3] << "; without " << kept.dirty_bytes[0] << " "
                                   << kept.dirty_bytes[3]);
  CHECK(aged.dirty_bytes == std::vector<std::int64_t>{80 * 4096, 40 * 4096, 0, 0});
  CHECK(kept.dirty_bytes == std::vector<std::int64_t>(4, 80 * 4096));
  CHECK(aged.max_destages >= 1);
  CHECK(aged.max_destages <= CacheOptions{}.destage_ops_trickle);
  CHECK(kept.max_destages == 0);
  CHECK(aged.reads_back);
  CHECK(kept.reads_back);
  CHECK(aged.parity == "");
  // With the controllers off (the dirty blocks in the vault) the age check does not tick on:
  // a check a second would be 60 events in that minute (the other events are the array's own
  // timers, e.g. the wear leveler's, which the run that wrote its SSDs has and the other not).
  INFO("events in a minute while off: " << aged.events_while_off << " with the age, " << kept.events_while_off
                                         << " without");
  CHECK(aged.events_while_off < 60 * sim::kSecond / CacheOptions{}.destage_age_check_ns / 2);
}
