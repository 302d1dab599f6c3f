// LUN masking for NBD clients and base:allocation from the thin map (nbd/nbd_exports.h),
// on an Array driven directly (no server, no threads).
#include "nbd/nbd_exports.h"
#include "nbd/connection_event_limiter.h"

#include <doctest/doctest.h>

#include "tests/nbd/nbd_fixture.h"

using namespace afasim;
using namespace afasim::nbd;
using namespace afasim::nbd::testing;
using controller::Id;

namespace {

// Runs one host I/O to completion in simulated time.
sim::Status run_io(TargetFixture& f, controller::IoOp op, Id volume, std::int64_t offset,
                   std::int64_t length) {
  std::vector<std::uint8_t> data(static_cast<std::size_t>(length), 0x5a);
  controller::HostIo io;
  io.op = op;
  io.volume_id = volume;
  io.offset_bytes = offset;
  io.length_bytes = length;
  if (op == controller::IoOp::kWrite) io.write_data = data.data();
  sim::Status result(sim::Code::kInternal, "did not complete");
  f.array->submit(io, [&result](const controller::IoCompletion& c) { result = c.status; });
  f.sim.run();
  return result;
}

}  // namespace

TEST_CASE("initiator patterns: exact, glob, any") {
  CHECK(initiator_matches("127.0.0.1", "127.0.0.1"));
  CHECK_FALSE(initiator_matches("127.0.0.1", "127.0.0.12"));
  CHECK(initiator_matches("*", "2001:db8::7"));
  CHECK(initiator_matches("*", "unix"));
  CHECK(initiator_matches("10.0.0.*", "10.0.0.42"));
  CHECK_FALSE(initiator_matches("10.0.0.*", "10.0.1.42"));
  CHECK(initiator_matches("unix", "unix"));
  CHECK_FALSE(initiator_matches("unix", "127.0.0.1"));
}

TEST_CASE("a client belongs to the host with the most specific matching nbd initiator") {
  TargetFixture f;
  const Id any = f.host("any", {"*"});
  const Id subnet = f.host("subnet", {"127.0.0.*"});
  const Id exact = f.host("exact", {"10.1.1.1", "127.0.0.1"});
  controller::HostSpec fc;
  fc.name = "fc-only";
  fc.initiators.push_back({controller::InitiatorType::kFc, "50:01:43:80:aa:bb:cc:dd"});
  REQUIRE(f.array->create_host(fc).is_ok());

  CHECK(host_for_client(*f.array, "127.0.0.1")->id == exact);
  CHECK(host_for_client(*f.array, "127.0.0.2")->id == subnet);
  CHECK(host_for_client(*f.array, "192.0.2.9")->id == any);
  CHECK(host_for_client(*f.array, "unix")->id == any);

  TargetFixture g;
  g.host("fc", {});
  CHECK(host_for_client(*g.array, "127.0.0.1") == nullptr);
}

TEST_CASE("exports are the client's host's mappings, by LUN; the empty name is LUN 0") {
  TargetFixture f;
  const Id v1 = f.volume("alpha", 1 * GiB);
  const Id v2 = f.volume("beta", 512 * MiB, raid::RaidType::kRaid5);
  const Id v3 = f.volume("gamma", 256 * MiB);
  f.volume("unmapped", 256 * MiB);
  const Id me = f.host("me", {"127.0.0.1"});
  const Id other = f.host("other", {"10.9.9.9"});
  f.map(v2, me, true, 5);
  f.map(v1, me, false, 0);
  f.map(v3, other);

  const auto exports = visible_exports(*f.array, "127.0.0.1");
  REQUIRE(exports.size() == 2);
  CHECK(exports[0].name == "alpha");
  CHECK(exports[0].lun == 0);
  CHECK(exports[0].size_bytes == 1 * GiB);
  CHECK_FALSE(exports[0].read_only);
  CHECK(exports[1].name == "beta");
  CHECK(exports[1].lun == 5);
  CHECK(exports[1].read_only);
  CHECK(exports[1].description ==
        "volume \"beta\": 512.00 MiB RAID5 thin, LUN 5 of host \"me\", read-only");

  CHECK(find_export(*f.array, "127.0.0.1", "")->name == "alpha");
  CHECK(find_export(*f.array, "127.0.0.1", "beta")->volume_id == v2);
  CHECK_FALSE(find_export(*f.array, "127.0.0.1", "gamma"));  // another host's
  CHECK_FALSE(find_export(*f.array, "127.0.0.1", "unmapped"));
  CHECK_FALSE(find_export(*f.array, "192.0.2.1", "alpha"));  // no host at all
  CHECK(visible_exports(*f.array, "10.9.9.9").size() == 1);

  const ExportInfo e = *find_export(*f.array, "127.0.0.1", "alpha");
  CHECK(export_still_mapped(*f.array, e));
  REQUIRE(f.array->delete_mapping(e.mapping_id).is_ok());
  CHECK_FALSE(export_still_mapped(*f.array, e));
}

TEST_CASE("base:allocation shows the thin map: allocated extents are data, the rest holes") {
  TargetFixture f;
  const Id v = f.volume("thin", 4 * f.array->extent_bytes());
  const std::int64_t ext = f.array->extent_bytes();
  REQUIRE(run_io(f, controller::IoOp::kWrite, v, 0, 4096).is_ok());
  REQUIRE(run_io(f, controller::IoOp::kWrite, v, 2 * ext + 8192, 4096).is_ok());
  const std::uint32_t hole = proto::kStateHole | proto::kStateZero;
  const auto e32 = static_cast<std::uint32_t>(ext);

  CHECK(allocation_map(*f.array, v, 0, 4 * e32, false) ==
        std::vector<proto::BlockDescriptor>{{e32, 0}, {e32, hole}, {e32, 0}, {e32, hole}});
  // A range that starts and ends inside extents is cut at its own ends.
  CHECK(allocation_map(*f.array, v, e32 / 2, 2 * e32, false) ==
        std::vector<proto::BlockDescriptor>{{e32 / 2, 0}, {e32, hole}, {e32 / 2, 0}});
  // REQ_ONE: only the first run.
  CHECK(allocation_map(*f.array, v, e32, 3 * e32, true) ==
        std::vector<proto::BlockDescriptor>{{e32, hole}});

  REQUIRE(run_io(f, controller::IoOp::kTrim, v, 0, ext).is_ok());
  CHECK(allocation_map(*f.array, v, 0, 3 * e32, false) ==
        std::vector<proto::BlockDescriptor>{{2 * e32, hole}, {e32, 0}});

  const Id fixed =
      f.volume("fixed", 2 * ext, raid::RaidType::kRaid10, controller::Provisioning::kFixed);
  CHECK(allocation_map(*f.array, fixed, 0, 2 * e32, false) ==
        std::vector<proto::BlockDescriptor>{{2 * e32, 0}});
}

TEST_CASE("connection events: 64 of a client at once, then one a simulated second, the left-out count told with the next") {
  // Hostile round 19: a client with no credentials that only connected and disconnected wrote
  // 517 events a second to the log, which pushed every other event out of the filtered views.
  afasim::nbd::detail::ConnectionEventLimiter limiter;
  const auto event = [](const std::string& address) { return "NBD client " + address + " connected to volume \"v\""; };
  for (int i = 0; i < 64; ++i) REQUIRE(limiter.admit(event("10.0.0.7"), 0) == event("10.0.0.7"));
  CHECK(limiter.admit(event("10.0.0.7"), 0).empty());
  CHECK(limiter.admit(event("10.0.0.7"), 999'999'999).empty());
  CHECK(limiter.admit(event("10.0.0.8"), 999'999'999) == event("10.0.0.8"));  // another client: its own 64
  const std::string next = limiter.admit(event("10.0.0.7"), 1'000'000'000);
  CHECK(next.starts_with(event("10.0.0.7") + " (2 connection events of this client before it were left out"));
  CHECK(limiter.admit(event("10.0.0.7"), 1'500'000'000).empty());
  // A quiet minute refills the bucket.
  for (int i = 0; i < 60; ++i) CHECK(!limiter.admit(event("10.0.0.7"), 61'000'000'000).empty());
}
