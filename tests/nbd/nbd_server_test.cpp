// The NBD server end to end in one process: a test client on a socket, the server's Asio
// thread, the model thread, the Array. Every case uses --pace none except the one about
// pacing.
#include "nbd/nbd_server.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "controller/perf.h"
#include "nbd/nbd_exports.h"
#include "tests/nbd/nbd_test_client.h"
#include "tests/nbd/nbd_fixture.h"

using namespace afasim;
using namespace afasim::nbd;
using namespace afasim::nbd::testing;
using controller::Id;
namespace n = afasim::nbd::proto;

namespace {


// The usual layout: "vol" (1 GiB RAID10 thin, LUN 0) and "ro" (256 MiB, read-only, LUN 1)
// mapped to the loopback client's host; "hidden" mapped to another host; "loose" unmapped.
struct Served : TargetFixture {
  Id vol = 0, ro = 0, hidden = 0, loose = 0, me = 0, other = 0;
  explicit Served(NbdServerOptions o = loopback_options(), const std::string& system = "ise-860-g3")
      : TargetFixture(system) {
    vol = volume("vol", 1 * GiB);
    ro = volume("ro", 256 * MiB);
    hidden = volume("hidden", 256 * MiB);
    loose = volume("loose", 256 * MiB);
    me = host("me", {"127.0.0.1"});
    other = host("other", {"192.0.2.1"});
    map(vol, me, false, 0);
    map(ro, me, true, 1);
    map(hidden, other);
    start(o);
  }
};

std::vector<controller::Event> nbd_events(TargetFixture& f) {
  auto page = f.on_model([&] { return f.array->events(0, 1000); });
  std::vector<controller::Event> out;
  for (auto& e : page.items)
    if (e.category == "nbd") out.push_back(e);
  return out;
}

// Waits (bounded) until `pred` holds; the server's threads make some effects asynchronous.
template <typename P>
bool eventually(P pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace

TEST_CASE("NBD_OPT_LIST shows exactly the volumes mapped to the client's host") {
  Served s;
  TestClient c(s.port());
  CHECK(c.start() == (n::kFlagFixedNewstyle | n::kFlagNoZeroes));
  CHECK(c.list() == std::vector<std::string>{"vol", "ro"});
}

TEST_CASE(
    "INFO and GO: size, flags, block sizes; unknown and unmapped exports are NBD_REP_ERR_UNKNOWN") {
  Served s;
  TestClient c(s.port());
  c.start();
  auto info = c.info("vol", false, {n::kInfoName, n::kInfoDescription, n::kInfoBlockSize});
  REQUIRE(info.ok);
  CHECK(info.size == static_cast<std::uint64_t>(1 * GiB));
  CHECK(info.flags == (n::kFlagHasFlags | n::kFlagSendFlush | n::kFlagSendFua |
                       n::kFlagCanMultiConn | n::kFlagSendTrim | n::kFlagSendWriteZeroes));
  CHECK(info.min_block == 512);
  CHECK(info.preferred_block == 4096);
  CHECK(info.max_block == 32u << 20);
  CHECK(info.name == "vol");
  CHECK(info.description ==
        "volume \"vol\": 1.00 GiB RAID10 thin, LUN 0 of host \"me\", read-write");

  auto ro = c.info("ro", false);
  REQUIRE(ro.ok);
  CHECK((ro.flags & n::kFlagReadOnly) != 0);
  CHECK((ro.flags & (n::kFlagSendTrim | n::kFlagSendWriteZeroes)) == 0);

  for (const char* name : {"hidden", "loose", "nonexistent"}) {
    auto bad = c.info(name, true);
    CHECK_FALSE(bad.ok);
    CHECK(bad.error == n::kRepErrUnknown);
    CHECK(bad.message.find(name) != std::string::npos);
  }
  // The default export (empty name) is LUN 0; the handshake went on after the errors.
  c.structured_reply();
  auto go = c.info("", true, {n::kInfoName});
  REQUIRE(go.ok);
  CHECK(go.name == "vol");
  CHECK((go.flags & n::kFlagSendDf) != 0);  // structured replies were negotiated first
  CHECK(c.read(0, 512).error == 0);
}

TEST_CASE("a client that matches no host sees no export, and the server's log says why") {
  // Clients show the refusal's text only when debugging: the log is where a person sees it.
  std::ostringstream log;
  const auto before = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("nbd-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  {
    TargetFixture f;
    f.volume("vol", 1 * GiB);
    f.start();
    TestClient c(f.port());
    c.start();
    CHECK(c.list().empty());
    auto go = c.info("vol", true);
    CHECK(go.error == n::kRepErrUnknown);
    CHECK(go.message.find("matches no host") != std::string::npos);
    // The client's bytes are escaped in the log (an ESC would reach the operator's terminal).
    CHECK(c.info("v\x1b[2J", true).error == n::kRepErrUnknown);
  }
  spdlog::set_default_logger(before);
  CHECK(log.str().find("no export \"v\\x1b[2J\"") != std::string::npos);
  CHECK(log.str().find('\x1b') == std::string::npos);
  INFO(log.str());
  CHECK(log.str().find("NBD_OPT_GO: no export \"vol\": client 127.0.0.1 matches no host's nbd initiator") !=
        std::string::npos);
}

TEST_CASE(
    "NBD_OPT_EXPORT_NAME: a known export enters transmission; an unknown one closes that "
    "connection") {
  Served s;
  {
    TestClient c(s.port());
    c.start(n::kClientFlagFixedNewstyle);  // without NO_ZEROES: 124 zero bytes follow
    const std::string name = "vol";
    c.send_option(static_cast<std::uint32_t>(n::Option::kExportName),
                  {reinterpret_cast<const std::uint8_t*>(name.data()), name.size()});
    const auto reply = c.read_raw(8 + 2 + 124);
    CHECK(n::load_u64(reply.data()) == static_cast<std::uint64_t>(1 * GiB));
    CHECK((n::load_u16(reply.data() + 8) & n::kFlagSendDf) == 0);  // simple replies only
    CHECK(std::all_of(reply.begin() + 10, reply.end(), [](std::uint8_t b) { return b == 0; }));
    const auto data = pattern(4096, 20);
    CHECK(c.write(0, data).error == 0);
    CHECK(c.read(0, 4096).data == data);
  }
  {
    TestClient c(s.port());
    c.start();
    const std::string name = "hidden";
    c.send_option(static_cast<std::uint32_t>(n::Option::kExportName),
                  {reinterpret_cast<const std::uint8_t*>(name.data()), name.size()});
    CHECK(c.closed_by_server());
  }
  TestClient ok(s.port());
  ok.connect("vol");
  CHECK(ok.read(0, 4096).error == 0);
}

TEST_CASE("handshake option errors: the handshake goes on") {
  Served s;
  TestClient c(s.port());
  c.start();
  SUBCASE("meta contexts need structured replies") {
    std::vector<std::uint8_t> d;
    n::Writer(d).u32(3).bytes("vol").u32(0);
    c.send_option(static_cast<std::uint32_t>(n::Option::kListMetaContext), d);
    CHECK(c.read_option_reply().type == n::kRepErrInvalid);
    REQUIRE(c.structured_reply());
    CHECK_FALSE(c.structured_reply());  // twice: NBD_REP_ERR_INVALID
    c.send_option(static_cast<std::uint32_t>(n::Option::kListMetaContext), d);
    auto r = c.read_option_reply();
    CHECK(r.type == n::kRepMetaContext);
    CHECK(std::string(r.data.begin() + 4, r.data.end()) == "base:allocation");
    CHECK(c.read_option_reply().type == n::kRepAck);
    CHECK(c.set_meta_context("vol", {"base:allocation", "qemu:dirty-bitmap:x"}) ==
          std::vector<std::string>{"base:allocation"});
    CHECK(c.set_meta_context("vol", {"x-other:thing"}).empty());
  }
  SUBCASE("unknown options, STARTTLS, LIST with data, oversized data") {
    c.send_option(1000);
    CHECK(c.read_option_reply().type == n::kRepErrUnsup);
    c.send_option(static_cast<std::uint32_t>(n::Option::kStartTls));
    CHECK(c.read_option_reply().type == n::kRepErrUnsup);
    std::vector<std::uint8_t> junk(8, 1);
    c.send_option(static_cast<std::uint32_t>(n::Option::kList), junk);
    CHECK(c.read_option_reply().type == n::kRepErrInvalid);
    std::vector<std::uint8_t> big(NbdServer::kMaxOptionDataBytes + 1, 7);
    c.send_option(static_cast<std::uint32_t>(n::Option::kInfo), big);
    CHECK(c.read_option_reply().type == n::kRepErrTooBig);
    std::vector<std::uint8_t> bad_info;
    n::Writer(bad_info).u32(99).bytes("vol");
    c.send_option(static_cast<std::uint32_t>(n::Option::kGo), bad_info);
    CHECK(c.read_option_reply().type == n::kRepErrInvalid);
    CHECK(c.list().size() == 2);
  }
  SUBCASE("ABORT is acknowledged, then the server closes") {
    c.send_option(static_cast<std::uint32_t>(n::Option::kAbort));
    CHECK(c.read_option_reply().type == n::kRepAck);
    CHECK(c.closed_by_server());
  }
}

TEST_CASE(
    "data written through NBD reads back, and counts in the volume's and controller's counters and "
    "events") {
  Served s;
  const auto before = s.volume_stats(s.vol);
  const auto host_ios_before = s.on_model([&] {
    return s.array->data_path().controller_stats(1).host_ios +
           s.array->data_path().controller_stats(2).host_ios;
  });
  {
    TestClient c(s.port());
    c.connect("vol");
    const auto a = pattern(64 << 10, 1), b = pattern(4096, 2);
    CHECK(c.write(0, a).error == 0);
    CHECK(c.write(512 * MiB + 4096, b, n::kCmdFlagFua).error == 0);
    CHECK(c.read(0, 64 << 10).data == a);
    CHECK(c.read(512 * MiB + 4096, 4096).data == b);
    CHECK(c.read(256 * MiB, 4096).data ==
          std::vector<std::uint8_t>(4096, 0));  // a hole reads as zeros
    CHECK(c.request(kFlush, 0, 0).error == 0);
    c.disconnect();
    CHECK(c.closed_by_server());
  }
  const auto after = s.volume_stats(s.vol);
  CHECK(after.write_ops - before.write_ops == 2);
  CHECK(after.read_ops - before.read_ops == 3);
  CHECK(after.write_bytes - before.write_bytes == (64 << 10) + 4096);
  CHECK(after.other_ops - before.other_ops == 1);  // the FLUSH (FUA rides on its write)
  const auto host_ios_after = s.on_model([&] {
    return s.array->data_path().controller_stats(1).host_ios +
           s.array->data_path().controller_stats(2).host_ios;
  });
  CHECK(host_ios_after - host_ios_before == 6);
  REQUIRE(eventually([&] { return nbd_events(s).size() == 2; }));
  const auto events = nbd_events(s);  // newest first
  CHECK(events[1].message.find("NBD client 127.0.0.1 connected to volume \"vol\"") == 0);
  CHECK(events[0].message.find("disconnected from volume \"vol\": 3 reads (72.00 KiB), 2 writes (68.00 KiB)") !=
        std::string::npos);
  CHECK(events[0].object == "volume/" + std::to_string(s.vol));
}

TEST_CASE("simple replies (no structured replies negotiated) carry READ data and errors") {
  Served s;
  TestClient c(s.port());
  c.connect("vol", false);
  const auto a = pattern(8192, 3);
  CHECK(c.write(4096, a).error == 0);
  CHECK(c.read(4096, 8192).data == a);
  auto bad = c.read(1 * GiB, 512);
  CHECK(bad.error == n::kEinval);
  CHECK(bad.data.empty());
  CHECK(c.request(kStatus, 0, 4096).error ==
        n::kEinval);  // no meta context without structured replies
  CHECK(c.read(0, 512).error == 0);
}

TEST_CASE("bad requests get the protocol's errors and the connection keeps serving") {
  NbdServerOptions o = loopback_options();
  Served s(o);
  TestClient c(s.port());
  c.connect("vol");
  const std::uint64_t size = 1 * GiB;
  struct Case {
    const char* what;
    std::uint16_t type;
    std::uint64_t offset;
    std::uint32_t length;
    std::uint16_t flags;
    std::uint32_t error;
  };
  const Case cases[] = {
      {"read past the end", kRead, size - 512, 1024, 0, n::kEinval},
      {"read at an offset near 2^64", kRead, ~0ULL - 511, 512, 0, n::kEinval},
      {"trim past the end", kTrim, size, 512, 0, n::kEinval},
      {"zero-length read", kRead, 0, 0, 0, n::kEinval},
      {"zero-length trim", kTrim, 0, 0, 0, n::kEinval},
      {"unknown command", 42, 0, 4096, 0, n::kEinval},
      {"NBD_CMD_CACHE, not offered", kCache, 0, 4096, 0, n::kEinval},
      {"unknown flag", kRead, 0, 4096, 1 << 9, n::kEinval},
      {"REQ_ONE on a read", kRead, 0, 4096, n::kCmdFlagReqOne, n::kEinval},
      {"FAST_ZERO, not offered", kZero, 0, 4096, n::kCmdFlagFastZero, n::kEinval},
      {"unaligned read", kRead, 100, 4096, 0, n::kEinval},
      {"flush with a length", kFlush, 0, 512, 0, n::kEinval},
      {"read longer than the maximum payload", kRead, 0, (32u << 20) + 512, 0, n::kEinval},
      {"write zeroes past the end", kZero, size, 512, 0, n::kEnospc},
  };
  for (const Case& k : cases) {
    CAPTURE(k.what);
    auto r = c.request(k.type, k.offset, k.length, k.flags);
    CHECK(r.error == k.error);
    CHECK_FALSE(r.message.empty());
  }
  // A WRITE past the end or too long: its payload is read and dropped, the stream stays in step.
  const auto tail = pattern(1024, 4);
  CHECK(c.write(size - 512, tail).error == n::kEnospc);
  const std::vector<std::uint8_t> huge((32u << 20) + 512, 9);
  CHECK(c.write(0, huge).error == n::kEinval);
  const auto ok = pattern(4096, 5);
  CHECK(c.write(0, ok).error == 0);
  CHECK(c.read(0, 4096).data == ok);
  // Nothing refused reached the array: the first 1 MiB of the huge write was not applied.
  CHECK(c.read(4096, 4096).data == std::vector<std::uint8_t>(4096, 0));
  CHECK(s.server->stats().requests_refused == 16);
  // WRITE_ZEROES longer than the maximum payload is served (issue 14: nbdcopy zeroes a
  // whole hole at once; main at 4676db3 refused it with EINVAL).
  CHECK(c.write(64 << 20, pattern(4096, 6)).error == 0);
  CHECK(c.request(kZero, 0, (96u << 20) + 512, 0).error == 0);
  CHECK(c.read(64 << 20, 4096).data == std::vector<std::uint8_t>(4096, 0));
  CHECK(c.request(kTrim, 0, 512u << 20, 0).error == 0);
}

TEST_CASE("a read-only mapping refuses writes with EPERM") {
  Served s;
  TestClient c(s.port());
  auto info = c.connect("ro");
  CHECK((info.flags & n::kFlagReadOnly) != 0);
  const auto data = pattern(4096, 6);
  CHECK(c.write(0, data).error == n::kEperm);
  CHECK(c.request(kTrim, 0, 4096).error == n::kEperm);
  CHECK(c.request(kZero, 0, 4096).error == n::kEperm);
  CHECK(c.read(0, 4096).data == std::vector<std::uint8_t>(4096, 0));
  CHECK(s.volume_stats(s.ro).write_ops == 0);
}

TEST_CASE("a broken stream closes that connection only; the server keeps serving the others") {
  Served s;
  TestClient good(s.port());
  good.connect("vol");
  const auto data = pattern(4096, 7);
  REQUIRE(good.write(8192, data).error == 0);

  SUBCASE("bad request magic") {
    TestClient bad(s.port());
    bad.connect("vol");
    std::vector<std::uint8_t> junk(28, 0xab);
    bad.send_raw(junk);
    CHECK(bad.closed_by_server());
  }
  SUBCASE("bad option magic") {
    TestClient bad(s.port());
    bad.start();
    std::vector<std::uint8_t> junk(16, 0x11);
    bad.send_raw(junk);
    CHECK(bad.closed_by_server());
  }
  SUBCASE("unknown client flags") {
    // Said in the log, as every other handshake violation (hostile review 42: closed without a word).
    std::ostringstream log;
    const auto before = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("nbd-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
    TestClient bad(s.port());
    bad.start(0xff);
    CHECK(bad.closed_by_server());
    spdlog::set_default_logger(before);
    CHECK(log.str().find("handshake: unknown client flags 0x000000ff; closing") != std::string::npos);
  }
  SUBCASE("a client that goes away mid-write") {
    TestClient bad(s.port());
    bad.connect("vol");
    n::RequestHeader h;
    h.type = kWrite;
    h.offset = 0;
    h.length = 1 << 20;
    bad.send_raw(n::encode_request_header(h));
    bad.send_raw(pattern(1000, 8));
  }
  CHECK(eventually([&] { return s.server->stats().connections_active == 1; }));
  CHECK(good.read(8192, 4096).data == data);
  CHECK(good.read(0, 4096).data ==
        std::vector<std::uint8_t>(4096, 0));  // the torn write never landed
  TestClient again(s.port());
  again.connect("vol");
  CHECK(again.read(8192, 4096).data == data);
}

TEST_CASE(
    "BLOCK_STATUS reports the thin map; TRIM unmaps whole extents; WRITE_ZEROES zeroes in place") {
  Served s;
  const auto ext = static_cast<std::uint32_t>(s.array->extent_bytes());
  const std::uint32_t hole = n::kStateHole | n::kStateZero;
  TestClient c(s.port());
  c.connect("vol");
  const auto data = pattern(4096, 9);
  REQUIRE(c.write(0, data).error == 0);
  REQUIRE(c.write(2ULL * ext, data).error == 0);
  auto r = c.request(kStatus, 0, 4 * ext);
  REQUIRE(r.error == 0);
  CHECK(r.extents == std::vector<n::BlockDescriptor>{{ext, 0}, {ext, hole}, {ext, 0}, {ext, hole}});
  CHECK(c.request(kStatus, 0, 4 * ext, n::kCmdFlagReqOne).extents ==
        std::vector<n::BlockDescriptor>{{ext, 0}});

  // TRIM unmaps the whole extents it covers.
  REQUIRE(c.request(kTrim, 0, ext).error == 0);
  CHECK(c.request(kStatus, 0, 3 * ext).extents ==
        std::vector<n::BlockDescriptor>{{2 * ext, hole}, {ext, 0}});
  // WRITE_ZEROES is bounded by the maximum payload (32 MiB), half an extent: it zeroes an
  // allocated extent in place and leaves a hole a hole.
  REQUIRE(c.request(kZero, 2ULL * ext, ext / 2).error == 0);
  REQUIRE(c.request(kZero, 3ULL * ext, ext / 2).error == 0);
  CHECK(c.read(2ULL * ext, 4096).data == std::vector<std::uint8_t>(4096, 0));
  CHECK(c.request(kStatus, 0, 4 * ext).extents ==
        std::vector<n::BlockDescriptor>{{2 * ext, hole}, {ext, 0}, {ext, hole}});
  // WRITE_ZEROES with NO_HOLE allocates.
  REQUIRE(c.request(kZero, ext, 4096, n::kCmdFlagNoHole).error == 0);
  CHECK(c.request(kStatus, 0, 3 * ext).extents ==
        std::vector<n::BlockDescriptor>{{ext, hole}, {2 * ext, 0}});
  CHECK(c.read(ext, 4096).data == std::vector<std::uint8_t>(4096, 0));
}

TEST_CASE(
    "a full pool: ENOSPC for writes needing a new extent only; written data still reads back") {
  // The smallest system (ISE 820 G3, 4.3 TB RAID5) keeps the fixed volume that fills the
  // pool to ~65 000 extents.
  TargetFixture f("ise-820-g3");
  const Id thin = f.volume("thin", 1 * GiB, raid::RaidType::kRaid5);
  const Id me = f.host("me", {"*"});
  f.map(thin, me);
  const std::int64_t ext = f.array->extent_bytes(raid::RaidType::kRaid5);
  f.start();
  TestClient c(f.port());
  c.connect("thin");
  const auto data = pattern(64 << 10, 10);
  REQUIRE(c.write(0, data).error == 0);
  // Fill the pool: a fixed volume as large as the free space.
  const std::int64_t free_bytes = f.on_model([&] {
    return f.array->pool_capacity(f.array->pools().begin()->first)
        .free_bytes.at(raid::RaidType::kRaid5);
  });
  f.volume("filler", free_bytes, raid::RaidType::kRaid5, controller::Provisioning::kFixed);
  CHECK(f.on_model([&] {
    return f.array->pool_capacity(f.array->pools().begin()->first)
        .free_bytes.at(raid::RaidType::kRaid5);
  }) == 0);

  CHECK(c.write(static_cast<std::uint64_t>(ext), data).error == n::kEnospc);  // a new extent
  auto zero_no_hole =
      c.request(kZero, static_cast<std::uint64_t>(2 * ext), 4096, n::kCmdFlagNoHole);
  CHECK(zero_no_hole.error == n::kEnospc);
  const auto more = pattern(4096, 11);
  CHECK(c.write(ext - 4096, more).error == 0);  // the allocated extent takes overwrites
  CHECK(c.read(0, 64 << 10).data == data);
  CHECK(c.read(static_cast<std::uint64_t>(ext), 4096).data == std::vector<std::uint8_t>(4096, 0));
}

TEST_CASE("a failed volume answers EIO") {
  Served s;
  const Id r5 = s.volume("r5", 256 * MiB, raid::RaidType::kRaid5);
  s.map(r5, s.me, false, 7);
  TestClient c(s.port());
  c.connect("r5");
  const auto data = pattern(4096, 12);
  REQUIRE(c.write(0, data).error == 0);
  // Two members of the same RAID 5 extent: beyond what it tolerates.
  // Both at the same simulated instant: with --pace none a rebuild would otherwise finish
  // between two separate calls.
  const bool failed = s.on_model([&] {
    const auto members = s.array->data_path().extent_records(r5).at(0).members;
    for (int m = 0; m < 2; ++m) {
      controller::FaultSpec fault;
      fault.type = "drive_fail";
      fault.drive = members[static_cast<std::size_t>(m)].drive + 1;
      if (!s.array->inject_fault(fault).is_ok()) return false;
    }
    return s.array->volume_state(r5) == controller::VolumeState::kFailed;
  });
  REQUIRE(failed);
  auto r = c.read(0, 4096);
  CHECK(r.error == n::kEio);
  CHECK(r.message.find("failed") != std::string::npos);
  CHECK(c.write(0, data).error == n::kEio);
}

TEST_CASE("unmapping a volume cuts an open connection off at its next request") {
  Served s;
  TestClient c(s.port());
  c.connect("vol");
  REQUIRE(c.read(0, 4096).error == 0);
  const Id mapping =
      s.on_model([&] { return find_export(*s.array, "127.0.0.1", "vol")->mapping_id; });
  REQUIRE(s.on_model([&] { return s.array->delete_mapping(mapping); }).is_ok());
  auto r = c.read(0, 4096);
  CHECK(r.error == n::kEio);
  CHECK(r.message.find("no longer mapped") != std::string::npos);
  TestClient d(s.port());
  d.start();
  CHECK(d.list() == std::vector<std::string>{"ro"});
}

TEST_CASE("in-flight requests are bounded per connection; the reader waits, nothing is lost") {
  NbdServerOptions o = loopback_options();
  o.max_requests_in_flight = 4;
  o.max_bytes_in_flight = 32 << 20;
  Served s(o);
  TestClient c(s.port());
  c.connect("vol");
  const auto data = pattern(4096, 13);
  REQUIRE(c.write(0, data).error == 0);
  std::vector<std::uint64_t> handles;
  for (int i = 0; i < 300; ++i) handles.push_back(c.send_request(kRead, 0, 4096));
  std::vector<std::uint64_t> got;
  for (int i = 0; i < 300; ++i) {
    auto r = c.read_reply();
    REQUIRE(r.error == 0);
    CHECK(r.data == data);
    got.push_back(r.handle);
  }
  std::sort(got.begin(), got.end());
  CHECK(got == handles);
  CHECK(s.server->stats().requests_in_flight_high_water == 4);
}

TEST_CASE("connections are bounded; the one over the bound is closed at once") {
  NbdServerOptions o = loopback_options();
  o.max_connections = 2;
  Served s(o);
  auto a = std::make_unique<TestClient>(s.port());
  a->connect("vol");
  TestClient b(s.port());
  b.connect("vol");
  {
    TestClient over(s.port());
    CHECK_THROWS_AS(over.start(), ConnectionClosed);
  }
  CHECK(s.server->stats().connections_refused == 1);
  a.reset();
  REQUIRE(eventually([&] { return s.server->stats().connections_active == 1; }));
  TestClient c(s.port());
  c.connect("vol");
  CHECK(c.read(0, 512).error == 0);
}

TEST_CASE("connections from one address are capped; another address is still served") {
  // main at 4676db3: one address could take every slot.
  NbdServerOptions o = loopback_options();
  o.max_connections_per_address = 2;
  Served s(o);
  TestClient a(s.port()), b(s.port());
  a.connect("vol");
  b.connect("vol");
  for (int i = 0; i < 5; ++i) {  // however often it tries
    TestClient over(s.port());
    CHECK_THROWS_AS(over.start(), ConnectionClosed);
  }
  CHECK(s.server->stats().connections_refused == 5);
  CHECK(a.read(0, 512).error == 0);
  // Another client address (127.0.0.2 is loopback too) gets its own two slots.
  s.map(s.loose, s.host("second", {"127.0.0.2"}));
  TestClient other(s.port(), "127.0.0.2");
  other.connect("loose");
  CHECK(other.read(0, 512).error == 0);
  CHECK(s.server->stats().connections_active == 3);
  // A slot given back is free again for the capped address.
  b.disconnect();
  REQUIRE(eventually([&] { return s.server->stats().connections_active == 2; }));
  TestClient again(s.port());
  again.connect("vol");
  CHECK(again.read(0, 512).error == 0);
}

TEST_CASE("connections that never leave the handshake give their slots to a mapped client") {
  // Hostile round 28b (F1): 4 addresses × 16 silent connections, reopened when closed, held
  // every slot and locked out every mapped client without a credential. Here 2 × 4 of 8.
  NbdServerOptions o = loopback_options();
  o.max_connections = 8;
  o.max_connections_per_address = 4;
  o.eviction_grace = std::chrono::hours(1);
  Served s(o);
  std::vector<std::unique_ptr<TestClient>> hogs;
  for (const char* from : {"127.0.9.1", "127.0.9.2"})
    for (int i = 0; i < 4; ++i) hogs.push_back(std::make_unique<TestClient>(s.port(), from));
  REQUIRE(eventually([&] { return s.server->stats().connections_active == 8; }));
  // 127.0.0.1 matches the host's nbd initiator: it takes a hog's slot at once, however young
  // (hostile round 29, F1: hogs on more addresses than slots kept every slot younger than the
  // grace). The grace is 1 h here.
  TestClient mapped(s.port());
  mapped.connect("vol");
  CHECK(mapped.read(0, 512).error == 0);
  CHECK(s.server->stats().connections_evicted == 1);
  CHECK(s.server->stats().connections_refused == 0);
  // Its second connection (multi-conn, a second volume) takes another (F2: a client holding
  // one connection could not open another).
  TestClient second(s.port());
  second.connect("vol");
  CHECK(second.read(0, 512).error == 0);
  CHECK(s.server->stats().connections_evicted == 2);
  // The hogs keep trying: young slots are no stranger's to take; refused.
  for (int i = 0; i < 6; ++i) hogs.push_back(std::make_unique<TestClient>(s.port(), "127.0.9.3"));
  REQUIRE(eventually([&] { return s.server->stats().connections_refused == 6; }));
  CHECK(s.server->stats().connections_evicted == 2);
  CHECK(mapped.read(4096, 512).error == 0);
}

TEST_CASE("a connection younger than the eviction grace keeps its slot") {
  NbdServerOptions o = loopback_options();
  o.max_connections = 2;
  o.eviction_grace = std::chrono::hours(1);
  Served s(o);
  TestClient a(s.port(), "127.0.9.1"), b(s.port(), "127.0.9.1");
  REQUIRE(eventually([&] { return s.server->stats().connections_active == 2; }));
  TestClient late(s.port(), "127.0.0.5");  // no host's initiator names it
  CHECK_THROWS_AS(late.start(), ConnectionClosed);
  CHECK(s.server->stats().connections_evicted == 0);
  CHECK(s.server->stats().connections_refused == 1);
}

TEST_CASE("an eviction grace outside 0..1 h is refused at start, naming the option") {
  for (const auto grace : {std::chrono::milliseconds(-1), std::chrono::milliseconds(3'600'001)}) {
    TargetFixture f;
    f.model = std::make_unique<serve::ModelThread>(f.sim, sim::Pacer(sim::Pacer::Mode::kNone));
    NbdServerOptions o = loopback_options();
    o.eviction_grace = grace;
    NbdServer server(*f.array, *f.model, o);
    const sim::Status st = server.start();
    CHECK(st.code() == sim::Code::kInvalidArgument);
    CHECK(st.message() == "nbd: eviction_grace must be 0..1 h");
  }
}

TEST_CASE("the per-address cap is 16 of 64 connections by default (docs/nbd.md \"Limits\")") {
  // afasim serve passes --nbd-max-connections-per-address, whose default is also 16.
  CHECK(NbdServerOptions{}.max_connections_per_address == 16);
  CHECK(NbdServerOptions{}.max_connections == 64);
}

TEST_CASE("a connection idle in transmission is closed after the idle timeout") {
  // main at 4676db3: idle connections held their slots forever.
  NbdServerOptions o = loopback_options();
  o.idle_timeout = std::chrono::milliseconds(1000);
  Served s(o);
  TestClient busy(s.port()), idle(s.port());
  busy.connect("vol");
  idle.connect("vol");
  CHECK(idle.read(0, 512).error == 0);  // a request, then nothing
  for (int i = 0; i < 8; ++i) {          // the other one keeps working meanwhile
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(busy.read(0, 512).error == 0);
  }
  CHECK(idle.closed_by_server());
  CHECK(s.server->stats().connections_idle_closed == 1);
  CHECK(busy.read(0, 512).error == 0);
}

TEST_CASE("a client that stalls in the handshake is dropped after the timeout") {
  NbdServerOptions o = loopback_options();
  o.handshake_timeout = std::chrono::milliseconds(200);
  Served s(o);
  TestClient idle(s.port());
  idle.start();
  CHECK(idle.closed_by_server());
  CHECK(s.server->stats().protocol_errors == 1);
  TestClient c(s.port());  // a prompt client is not affected
  c.connect("vol");
  CHECK(c.read(0, 512).error == 0);
}

// Short enough to keep the I/O-timeout cases fast, long enough that a loaded machine's
// loopback moves a test's bytes well within it.
constexpr std::chrono::milliseconds kTestIoTimeout{500};
// Upper bound on when a connection past kTestIoTimeout must be gone: the timer's own delay
// plus generous slack for a loaded 2-core machine.
constexpr std::chrono::milliseconds kTestIoCloseBy{2000};

NbdServerOptions io_timeout_options() {
  NbdServerOptions o = loopback_options();
  o.io_timeout = kTestIoTimeout;  // idle_timeout stays 300 s: it cannot be what closes
  return o;
}

// The one connection since `start` is gone (connections_active drops when the Connection is
// destroyed, and its requests and their buffers with it), closed by the I/O timeout, in time.
void check_closed_by_io_timeout(Served& s, std::chrono::steady_clock::time_point start) {
  REQUIRE(eventually([&] { return s.server->stats().connections_active == 0; }));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  INFO("closed after " << std::chrono::duration<double>(elapsed).count() << " s");
  CHECK(elapsed >= kTestIoTimeout);
  CHECK(elapsed < kTestIoCloseBy);
  CHECK(s.server->stats().connections_io_timed_out == 1);
}

TEST_CASE("a WRITE whose payload stops arriving is closed after the I/O timeout and not applied") {
  // fix-nbd-timeouts base (8d7ce94): the idle timer was off once the header arrived and
  // nothing bounded the payload read, so the connection stayed open for good (64 of them
  // locked every NBD client out; hostile round 14, section 2).
  Served s(io_timeout_options());
  TestClient c(s.port());
  c.connect("vol");
  const auto old_data = pattern(64 << 10, 31);
  REQUIRE(c.write(0, old_data).error == 0);
  // A WRITE of 64 KiB over the same range, of which only the header and 1000 bytes come.
  const auto new_data = pattern(64 << 10, 32);
  const auto stalled = std::chrono::steady_clock::now();
  c.send_request(kWrite, 0, 64 << 10, 0, std::span(new_data).first(1000));
  CHECK(c.closed_by_server());
  const auto elapsed = std::chrono::steady_clock::now() - stalled;
  INFO("closed after " << std::chrono::duration<double>(elapsed).count() << " s");
  CHECK(elapsed >= kTestIoTimeout);
  CHECK(elapsed < kTestIoCloseBy);
  CHECK(s.server->stats().connections_io_timed_out == 1);
  CHECK(s.server->stats().connections_idle_closed == 0);
  REQUIRE(eventually([&] { return s.server->stats().connections_active == 0; }));
  // The partial write never reached the array: the range holds the old data.
  TestClient after(s.port());
  after.connect("vol");
  CHECK(after.read(0, 64 << 10).data == old_data);
  CHECK(s.volume_stats(s.vol).write_ops == 1);
}

TEST_CASE("a refused WRITE whose payload stops arriving is closed after the I/O timeout") {
  // The payload of a refused WRITE is read and dropped before the error reply; that read
  // is bounded too.
  Served s(io_timeout_options());
  TestClient c(s.port());
  c.connect("vol");
  const auto data = pattern(64 << 10, 33);
  const auto stalled = std::chrono::steady_clock::now();
  c.send_request(kWrite, 1 * GiB, 64 << 10, 0, std::span(data).first(1000));  // past the end
  CHECK(c.closed_by_server());
  const auto elapsed = std::chrono::steady_clock::now() - stalled;
  CHECK(elapsed >= kTestIoTimeout);
  CHECK(elapsed < kTestIoCloseBy);
  CHECK(s.server->stats().connections_io_timed_out == 1);
}

TEST_CASE("a client that stops reading replies is closed after the I/O timeout; its buffers go") {
  // fix-nbd-timeouts base (8d7ce94): no deadline on a reply write, so such a connection held
  // its slot and up to 64 MiB of read buffers for good (hostile round 14, section 3).
  Served s(io_timeout_options());
  TestClient c(s.port());
  c.connect("vol");
  c.set_receive_buffer_bytes(4096);
  // 4 × 16 MiB: far more than loopback's socket buffers (a few MiB) hold.
  constexpr std::uint32_t kReadBytes = 16 << 20;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i)
    c.send_request(kRead, static_cast<std::uint64_t>(i) * kReadBytes, kReadBytes);
  check_closed_by_io_timeout(s, start);
  CHECK(s.server->stats().connections_idle_closed == 0);
  TestClient other(s.port());  // the slot is free and the server serves on
  other.connect("vol");
  CHECK(other.read(0, 512).error == 0);
}

TEST_CASE("a client gone while the array holds its request gives up its slot after the I/O timeout") {
  // Review 41: on EOF the connection waited for every request in flight to be answered; one
  // the array holds (max_iops 0 holds a volume's I/O until the setting changes) kept the slot
  // and its buffers for good, and 16 such clients locked their host out of NBD.
  Served s(io_timeout_options());
  controller::VolumePatch hold;
  hold.max_iops = std::optional<std::int64_t>(0);
  REQUIRE(s.on_model([&] { return s.array->update_volume(s.vol, hold); }).is_ok());
  const auto start = std::chrono::steady_clock::now();
  {
    TestClient gone(s.port());
    gone.connect("vol");
    gone.send_request(kRead, 0, 4096);
    gone.shutdown_send();
  }  // closed both ways
  check_closed_by_io_timeout(s, start);
  // A client that half-closes and waits is still answered when the array answers in time.
  controller::VolumePatch release;
  release.max_iops = std::optional<std::int64_t>();
  REQUIRE(s.on_model([&] { return s.array->update_volume(s.vol, release); }).is_ok());
  TestClient waiting(s.port());
  waiting.connect("vol");
  waiting.send_request(kRead, 0, 4096);
  waiting.shutdown_send();
  CHECK(waiting.read_reply().error == 0);
  CHECK(waiting.closed_by_server());
}

TEST_CASE("a client that reads its replies slowly but within the I/O timeout is served") {
  // The deadline is per socket write of replies, not per connection: a reader that keeps
  // up with it is never cut off, however long it stays.
  Served s(io_timeout_options());
  TestClient c(s.port());
  c.connect("vol");
  const auto data = pattern(1 << 20, 34);
  REQUIRE(c.write(0, data).error == 0);
  for (int i = 0; i < 4; ++i) c.send_request(kRead, 0, 1 << 20);
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(kTestIoTimeout / 2);
    const auto r = c.read_reply();
    CHECK(r.error == 0);
    CHECK(r.data == data);
  }
  CHECK(c.read(0, 512).error == 0);
  CHECK(s.server->stats().connections_io_timed_out == 0);
}

TEST_CASE("NBD_CMD_DISC: requests already sent are answered, then the connection closes") {
  Served s;
  TestClient c(s.port());
  c.connect("vol");
  const auto data = pattern(1 << 20, 14);
  c.send_request(kWrite, 0, 1 << 20, 0, data);
  for (int i = 0; i < 8; ++i) c.send_request(kRead, 0, 1 << 20);
  c.disconnect();
  for (int i = 0; i < 9; ++i) {
    auto r = c.read_reply();
    CHECK(r.error == 0);
  }
  CHECK(c.closed_by_server());
  CHECK(s.volume_stats(s.vol).write_ops == 1);
}

TEST_CASE("a client that half-closes after its requests gets their replies, as after NBD_CMD_DISC") {
  // Hostile round 25: the server read EOF and closed without a reply, though the write had landed.
  Served s;
  TestClient c(s.port());
  c.connect("vol");
  const auto data = pattern(4096, 16);
  // The model thread held, so that the server reads the EOF while the requests are in flight.
  std::promise<void> release;
  s.model->post([gate = release.get_future().share()] { gate.wait(); });
  c.send_request(kWrite, 8192, 4096, 0, data);
  c.send_request(kFlush, 0, 0);
  c.send_request(kRead, 8192, 4096);
  c.shutdown_send();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  release.set_value();
  for (int i = 0; i < 3; ++i) CHECK(c.read_reply().error == 0);
  CHECK(c.closed_by_server());
  TestClient again(s.port());
  again.connect("vol");
  CHECK(again.read(8192, 4096).data == data);
}

TEST_CASE("the Unix socket: its clients are \"unix\" to LUN masking") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("afasim-nbd-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "nbd.sock").string();
  {
    TargetFixture f;
    const Id v = f.volume("local", 64 * MiB);
    f.map(v, f.host("local-host", {"unix"}));
    NbdServerOptions o;
    o.host = "";
    o.unix_socket_path = path;
    f.start(o);
    CHECK(f.port() == 0);
    TestClient c(path);
    c.connect("local");
    const auto data = pattern(4096, 15);
    CHECK(c.write(0, data).error == 0);
    CHECK(c.read(0, 4096).data == data);
  }
  CHECK_FALSE(std::filesystem::exists(path));  // removed at stop
  std::filesystem::remove_all(dir);
}

TEST_CASE("start() refuses bad options and an address in use, leaving nothing running") {
  TargetFixture f;
  f.start();
  NbdServerOptions o = loopback_options();
  o.port = f.port();
  NbdServer same_port(*f.array, *f.model, o);
  const sim::Status st = same_port.start();
  CHECK(st.code() == sim::Code::kUnavailable);
  CHECK(st.message().find("127.0.0.1:" + std::to_string(f.port())) != std::string::npos);
  NbdServerOptions bad = loopback_options();
  bad.max_payload_bytes = 1000;
  NbdServer wrong(*f.array, *f.model, bad);
  CHECK(wrong.start().code() == sim::Code::kInvalidArgument);
  NbdServerOptions quick = loopback_options();
  quick.io_timeout = std::chrono::milliseconds(50);
  NbdServer too_quick(*f.array, *f.model, quick);
  const sim::Status io = too_quick.start();
  CHECK(io.code() == sim::Code::kInvalidArgument);
  CHECK(io.message() == "nbd: io_timeout must be 100 ms..1 h");
}

TEST_CASE("stop() with clients connected and requests in flight ends cleanly") {
  Served s;
  TestClient c(s.port());
  c.connect("vol");
  const auto data = pattern(1 << 20, 16);
  for (int i = 0; i < 16; ++i)
    c.send_request(kWrite, static_cast<std::uint64_t>(i) << 20, 1 << 20, 0, data);
  s.server->stop();
  int answered = 0;
  try {
    for (int i = 0; i < 16; ++i) {
      auto r = c.read_reply();
      CHECK((r.error == 0 || r.error == n::kEshutdown));
      ++answered;
    }
  } catch (const ConnectionClosed&) {
  }
  CHECK(c.closed_by_server());
  CHECK(s.server->stats().connections_active == 0);
  INFO("answered " << answered << " of 16 before the close");
}

TEST_CASE("--pace realtime: a reply is sent no earlier than the request's simulated completion") {
  std::optional<controller::PerfCounters> perf;  // outlives the array that reports into it
  TargetFixture f;
  perf.emplace(static_cast<int>(f.array->drives().size()));
  f.on_model([&] { f.array->set_perf_counters(&*perf); });
  const Id v = f.volume("paced", 64 * MiB, raid::RaidType::kRaid5);
  f.map(v, f.host("any", {"*"}));
  f.start(loopback_options(), sim::Pacer::Mode::kRealtime);
  TestClient c(f.port());
  c.connect("paced");
  const auto data = pattern(128 << 10, 17);
  REQUIRE(c.write(0, data).error == 0);
  const sim::Time before = f.on_model([&] { return f.sim.now(); });
  REQUIRE(c.read(0, 128 << 10).data == data);
  const sim::Time after = f.on_model([&] { return f.sim.now(); });
  const controller::ObjectTotals* totals = f.on_model([&] { return perf->volume_totals(v); });
  REQUIRE(totals != nullptr);
  const controller::IoTotals read = f.on_model([&] { return totals->read; });
  // The model's clock moved past the read's simulated latency before the reply came back.
  CHECK(read.ios == 1);
  CHECK(read.latency_ns_sum > 0);
  CHECK(after - before >= read.latency_ns_sum);
}

TEST_CASE(
    "a write's new extent is in the journal before its reply; a failed commit refuses the write "
    "whole") {
  Served s;
  TestClient c(s.port());
  c.connect("vol");
  const auto ext = static_cast<std::uint64_t>(s.array->extent_bytes());
  auto persisted = [&](std::int64_t index) {
    return s.on_model([&] {
      for (const auto& e : s.journal.snapshot().extents)
        if (e.volume_id == s.vol && e.extent_index == index) return true;
      return false;
    });
  };
  const auto data = pattern(8192, 18);
  REQUIRE(c.write(ext + 4096, data).error == 0);
  CHECK(persisted(1));  // committed before the reply was sent

  // The store refuses the next commit: the write that needs extent 3 is refused and leaves
  // no trace, in memory or in the store.
  s.on_model([&] { s.journal.fail_next_commits(1); });
  auto refused = c.write(3 * ext, data);
  CHECK(refused.error != 0);
  CHECK_FALSE(persisted(3));
  CHECK(c.request(kStatus, 3 * ext, static_cast<std::uint32_t>(ext)).extents ==
        std::vector<n::BlockDescriptor>{
            {static_cast<std::uint32_t>(ext), n::kStateHole | n::kStateZero}});
  CHECK(c.read(3 * ext, 8192).data == std::vector<std::uint8_t>(8192, 0));
  REQUIRE(c.write(3 * ext, data).error == 0);  // the next commit goes through
  CHECK(persisted(3));
}

TEST_CASE("--pace none: an NBD client's back-to-back reads keep virtual time with them, not with background events") {
  // The target counts its requests in flight for the model thread (host_io_started): with
  // none in flight it holds virtual time for the client's next request; with one in flight it
  // runs the events that complete it. Without the count, the model would hold a read's own
  // completion until the gap ran out (10 s here), then run the background event too.
  TargetFixture f;
  f.host_gap_ns = 10LL * 1'000'000'000;
  const Id v = f.volume("vol", 1 * GiB);
  f.map(v, f.host("me", {"127.0.0.1"}));
  f.start();
  TestClient c(f.port());
  c.connect("vol");
  std::atomic<bool> background_ran{false};
  const sim::Time start = f.on_model([&] {
    f.sim.after(60 * sim::kSecond, [&] { background_ran.store(true); });
    return f.sim.now();
  });
  for (int i = 0; i < 100; ++i) REQUIRE(c.read(static_cast<std::uint64_t>(i) * 4096, 4096).error == 0);
  const sim::Time elapsed = f.on_model([&] { return f.sim.now(); }) - start;
  INFO("virtual time for 100 reads: " << elapsed << " ns");
  CHECK_FALSE(background_ran.load());
  // Each read at queue depth 1 on an idle array is well under 1 ms (all 100 took 5.7 ms of
  // virtual time when measured); without the count the clock read 60.006 s.
  CHECK(elapsed < 100 * sim::kMillisecond);
}
