// An afasim.db edited by hand or restored inconsistently: the Array refuses to open it, with a
// message naming the table or meta key, the row and what is wrong (hostile round 18 finding 5:
// a counter at an id in use aborted the server on the next volume create and overwrote host 1
// on the next host create; a huge capacity aborted the start; event ids overflowed).
#include <doctest/doctest.h>
#include <sqlite3.h>

#include "config/preset.h"
#include "controller/array.h"
#include "controller/state_check.h"
#include "controller/telemetry.h"
#include "sim/simulator.h"
#include "sim/units.h"
#include "store/sqlite_store.h"
#include "tests/store/store_test_util.h"

using namespace afasim;
using namespace afasim::controller;
using store::SqliteStore;
using store::testing::TempDir;

// A named namespace, not an anonymous one: the folder builds as one unity file, and
// array_persistence_test.cpp has helpers of the same names.
namespace tampered_state_test {

const config::Catalog& catalog() {
  static const config::Catalog c = config::Catalog::embedded().value();
  return c;
}

// Array::open over the SqliteStore in `dir`: the array, or the refusal.
struct Opened {
  std::unique_ptr<SqliteStore> store;
  sim::Simulator sim{42};
  std::unique_ptr<Array> array;
  sim::Status status;  // why Array::open refused, when it did

  explicit Opened(const std::string& dir, ArrayOptions options = {}) {
    store = store::testing::open_ok(dir);
    auto snap = store->load(Array::kEventsInMemory);
    INFO(snap.status().to_string());
    REQUIRE(snap.is_ok());
    auto a = Array::open(sim, catalog(), catalog().system("ise-860-g3").value(), *store, *snap, options);
    if (a.is_ok()) array = std::move(a).value();
    else status = a.status();
  }
  ~Opened() {
    array.reset();  // the Array goes before the Journal it commits to
    store.reset();
  }
  Array& ok() {
    INFO(status.to_string());
    REQUIRE(array != nullptr);
    return *array;
  }
};

template <typename T>
T ok(sim::Result<T> r) {
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  return std::move(r).value();
}

// The state the tampering starts from: pool 1; QoS policy 1; volume 1 ("a", 128 MiB fixed
// RAID10: two 64 MiB extents allocated); host 1 mapped to it by mapping 1; fault 1.
void make_base(const std::string& dir) {
  Opened o(dir);
  Array& a = o.ok();
  ok(a.create_qos_policy({"gold", {std::nullopt, 5000, std::nullopt}}));
  VolumeSpec v;
  v.name = "a";
  v.capacity_bytes = 128 * sim::kMiB;
  v.raid_type = raid::RaidType::kRaid10;
  v.provisioning = Provisioning::kFixed;
  const Volume volume = ok(a.create_volume(v));
  REQUIRE(a.data_path().allocated_extents(volume.id) == 2);
  const Host h = ok(a.create_host({"h", "", {{InitiatorType::kNbd, "*"}}}));
  MappingSpec m;
  m.volume_id = volume.id;
  m.host_id = h.id;
  ok(a.create_mapping(m));
  FaultSpec slow;
  slow.type = "drive_slow";
  slow.drive = 3;
  slow.latency_multiplier = 2;
  ok(a.inject_fault(slow));
}

void execute(const std::string& dir, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir + "/afasim.db").c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string why = error ? error : "";
  sqlite3_free(error);
  INFO(sql << ": " << why);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

// The base state, `sql` run on its afasim.db, opened: the refusal's message ("" if it opened).
std::string refusal_after(const std::string& sql) {
  TempDir dir;
  make_base(dir.path());
  execute(dir.path(), sql);
  Opened o(dir.path());
  if (o.array != nullptr) return "";
  CHECK(o.status.code() == sim::Code::kInternal);
  return o.status.message();
}

#define CHECK_REFUSED(sql, message)                                   \
  do {                                                                \
    const std::string got = refusal_after(sql);                       \
    INFO("after " << (sql) << ": \"" << got << "\"");                 \
    CHECK(got.find(message) != std::string::npos);                    \
  } while (0)

TEST_CASE("the untampered base state opens, and hands out ids after the ones in use") {
  TempDir dir;
  make_base(dir.path());
  Opened o(dir.path());
  Array& a = o.ok();
  const Host h2 = ok(a.create_host({"h2", "", {{InitiatorType::kNbd, "10.0.0.1"}}}));
  CHECK(h2.id == 2);
  CHECK(a.host(1)->name == "h");
}

TEST_CASE("a next_id at or below an id in use is refused, naming the counter and the table") {
  // next_id.volume 1: the next volume create reached DataPath::attach_volume's "volume attached
  // twice" assertion. next_id.host 1: the next host replaced host 1 and took its mapping.
  CHECK_REFUSED("UPDATE meta SET value = '1' WHERE key = 'next_id.volume'",
                "state: meta next_id.volume is 1, not above the largest id in table volumes (1): the next volume "
                "would take the id of one in use");
  CHECK_REFUSED("UPDATE meta SET value = '1' WHERE key = 'next_id.host'",
                "meta next_id.host is 1, not above the largest id in table hosts (1)");
  CHECK_REFUSED("UPDATE meta SET value = '1' WHERE key = 'next_id.mapping'",
                "meta next_id.mapping is 1, not above the largest id in table mappings (1)");
  CHECK_REFUSED("UPDATE meta SET value = '1' WHERE key = 'next_id.qos_policy'",
                "meta next_id.qos_policy is 1, not above the largest id in table qos_policies (1)");
  CHECK_REFUSED("UPDATE meta SET value = '1' WHERE key = 'next_id.pool'",
                "meta next_id.pool is 1, not above the largest id in table pools (1)");
  // A missing counter starts at 1, the same collision.
  CHECK_REFUSED("DELETE FROM meta WHERE key = 'next_id.host'",
                "meta next_id.host is missing, but table hosts holds ids up to 1");
}

TEST_CASE("a next_id that is not a count, or past the ceiling ids may reach, is refused") {
  CHECK_REFUSED("UPDATE meta SET value = '2abc' WHERE key = 'next_id.host'", "meta next_id.host is not a count: \"2abc\"");
  CHECK_REFUSED("UPDATE meta SET value = '-3' WHERE key = 'next_id.fault'", "meta next_id.fault is not a count");
  // 2^63-1: events got id 9223372036854775807, then -9223372036854775808.
  CHECK_REFUSED("UPDATE meta SET value = '9223372036854775807' WHERE key = 'next_id.event'",
                "meta next_id.event is 9223372036854775807: a counter is 1..9007199254740992");
  CHECK_REFUSED("UPDATE meta SET value = '99999999999' WHERE key = 'next_id.volume'",
                "meta next_id.volume is 99999999999: a counter is 1..16777215");
  // 2^24: the write cache's key holds volume ids below 2^24 - 1 (WriteCache::key asserted).
  CHECK_REFUSED("UPDATE meta SET value = '16777216' WHERE key = 'next_id.volume'",
                "meta next_id.volume is 16777216: a counter is 1..16777215");
  // An event row at the ceiling: the id after it would pass it.
  CHECK_REFUSED("UPDATE events SET id = 9007199254740993 WHERE id = (SELECT MAX(id) FROM events)",
                "table events holds id 9007199254740993: ids are 1..9007199254740991");
}

TEST_CASE("a row id below 1 is refused, in a snapshot that did not come through SQLite's CHECK (id > 0)") {
  Snapshot s;
  s.hosts.push_back(Host{});
  s.hosts.back().id = 0;
  s.meta["next_id.host"] = "1";
  const config::SystemPreset& preset = catalog().system("ise-860-g3").value();
  CHECK(snapshot_problem(s, preset) == "table hosts holds id 0: ids are 1..9007199254740991");
  s.hosts.back().id = 1;
  s.meta["next_id.host"] = "2";
  CHECK(snapshot_problem(s, preset) == "");
  // More hosts than an array holds (hostile round 23: hosts had no bound).
  for (Id id = 2; id <= static_cast<Id>(kMaxHosts) + 1; ++id) {
    s.hosts.push_back(Host{});
    s.hosts.back().id = id;
  }
  s.meta["next_id.host"] = std::to_string(kMaxHosts + 2);
  // More hosts than an array holds: a state saved before the bound (hostile round 23) still
  // loads (the next test).
  CHECK(snapshot_problem(s, preset) == "");
}

TEST_CASE("a state with more hosts than the bound opens; an alert says so and creates are refused until fewer") {
  // A state saved before hosts were bounded (hostile round 23) must not be locked out.
  TempDir dir;
  make_base(dir.path());
  std::string sql = "BEGIN;";
  for (std::size_t i = 2; i <= kMaxHosts + 1; ++i)
    sql += "INSERT INTO hosts VALUES (" + std::to_string(i) + ", 'h" + std::to_string(i) + "', '', 1);";
  sql += "UPDATE meta SET value = '" + std::to_string(kMaxHosts + 2) + "' WHERE key = 'next_id.host'; COMMIT;";
  execute(dir.path(), sql);
  Opened o(dir.path());
  Array& a = o.ok();
  CHECK(a.hosts().size() == kMaxHosts + 1);
  CHECK(a.host(4097)->name == "h4097");
  auto telemetry = ok(Telemetry::create(a, {}));
  telemetry->sample();
  const auto alerts = telemetry->alerts();
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].kind == "objects_over_limit");
  CHECK(alerts[0].object == "hosts");
  CHECK(alerts[0].message ==
        "the array holds 4097 hosts, more than the 4096 it supports: creating hosts is refused until fewer remain");
  CHECK(a.create_host({"one-more", "", {}}).status().message() ==
        "the array holds at most 4096 hosts; delete 2 first");
  REQUIRE(a.delete_host(4097).is_ok());
  CHECK(a.create_host({"one-more", "", {}}).status().message() ==
        "the array holds at most 4096 hosts; delete one first");
  REQUIRE(a.delete_host(4096).is_ok());
  CHECK(a.create_host({"one-more", "", {}}).is_ok());
  telemetry->sample();
  CHECK(telemetry->alerts().empty());
}

TEST_CASE("a volume counter with every volume id handed out opens, and the next create is refused, not attached") {
  // 2^24 - 1: the write cache keys blocks by volume ids below it.
  TempDir dir;
  make_base(dir.path());
  execute(dir.path(), "UPDATE meta SET value = '16777215' WHERE key = 'next_id.volume'");
  Opened o(dir.path());
  Array& a = o.ok();
  VolumeSpec v;
  v.name = "b";
  v.capacity_bytes = 64 * sim::kMiB;
  const auto created = a.create_volume(v);
  CHECK(created.status().code() == sim::Code::kUnprocessable);
  CHECK(created.status().message() == "the array has handed out every volume id (1..16777214)");
  CHECK(a.volumes().size() == 1);
}

TEST_CASE("the last volume id is served like the first: created, written, read back, deleted") {
  // Hostile rounds 18 and 19: the per-volume tables were vectors indexed by id, so the next
  // create after a counter at 2^28 took 10.5 GB (one near 2^31: bad_alloc, a 500), and an id
  // past 2^24 - 2 reached the write cache's assertion on its first write.
  TempDir dir;
  make_base(dir.path());
  execute(dir.path(), "UPDATE meta SET value = '16777214' WHERE key = 'next_id.volume'");
  ArrayOptions with_payload;
  with_payload.data_path.payload = datapac::PayloadKind::kMemory;
  Opened o(dir.path(), with_payload);
  Array& a = o.ok();
  VolumeSpec v;
  v.name = "last";
  v.capacity_bytes = 64 * sim::kMiB;
  const Volume last = ok(a.create_volume(v));
  CHECK(last.id == 16'777'214);
  std::vector<std::uint8_t> data(4096, 0xA5), back(4096, 0);
  // `io` on the last volume, run for a simulated second: its status.
  const auto run = [&](HostIo io) {
    io.volume_id = last.id;
    io.length_bytes = 4096;
    sim::Status st = sim::unavailable("never completed");
    a.submit(io, [&](const IoCompletion& c) { st = c.status; });
    o.sim.run_until(o.sim.now() + sim::kSecond);
    return st;
  };
  HostIo w, r;
  w.op = IoOp::kWrite;
  w.write_data = data.data();
  r.op = IoOp::kRead;
  r.read_buffer = back.data();
  CHECK(run(w).is_ok());
  CHECK(run(r).is_ok());
  CHECK(back == data);
  // Moved to the other controller, then back by a failover: the write cache drops the old
  // owner's clean blocks by key range (its end past the last id aborted: review, round 19).
  VolumePatch move;
  move.preferred_controller = last.preferred_controller == 1 ? 2 : 1;
  REQUIRE(a.update_volume(last.id, move).is_ok());
  o.sim.run_until(o.sim.now() + sim::kSecond);
  FaultSpec fail;
  fail.type = "controller_fail";
  fail.controller = *move.preferred_controller;
  REQUIRE(a.inject_fault(fail).is_ok());
  o.sim.run_until(o.sim.now() + 5 * sim::kSecond);
  std::fill(back.begin(), back.end(), 0);
  CHECK(run(r).is_ok());
  CHECK(back == data);
  CHECK(a.delete_volume(last.id).is_ok());
}

TEST_CASE("an event counter below the newest event is raised past it, not refused") {
  TempDir dir;
  make_base(dir.path());
  execute(dir.path(), "UPDATE meta SET value = '1' WHERE key = 'next_id.event'");
  Opened o(dir.path());
  Array& a = o.ok();
  const std::int64_t newest = a.events(0, 1).items.at(0).id;
  REQUIRE(a.log_event(Severity::kInfo, "system", "", "after").is_ok());
  CHECK(a.events(0, 1).items.at(0).id == newest + 1);
}

TEST_CASE("a volume capacity outside the API's 512 B..1 PiB, or not whole sectors, is refused, naming the volume") {
  // 2^63-1 aborted the start in pool::ThinMap ("a map beyond 2^32 extents").
  CHECK_REFUSED("UPDATE volumes SET capacity_bytes = 9223372036854775807",
                "state: table volumes, volume 1 (\"a\"): capacity_bytes 9223372036854775807 is not between 512 and "
                "1125899906842624 (1 PiB)");
  CHECK_REFUSED("UPDATE volumes SET capacity_bytes = 1", "volume 1 (\"a\"): capacity_bytes 1 is not between 512");
  CHECK_REFUSED("UPDATE volumes SET capacity_bytes = 134217729",
                "volume 1 (\"a\"): capacity_bytes 134217729 is not a multiple of 512");
  CHECK_REFUSED("UPDATE volumes SET preferred_controller = 3", "volume 1 (\"a\"): preferred_controller 3 is not a "
                                                               "controller (1..2)");
}

TEST_CASE("an extent past the end of its volume's capacity is refused, naming both") {
  // 64 MiB: one extent's worth; the base volume has extents 0 and 1 allocated.
  CHECK_REFUSED("UPDATE volumes SET capacity_bytes = 67108864", "state: extent 1 is past the end of volume 1");
}

TEST_CASE("a media error past the end of its SSD is refused, naming the hardware line") {
  const std::int64_t ssd_bytes = catalog().system("ise-860-g3").value().ssd.capacity_bytes;
  CHECK_REFUSED("INSERT OR REPLACE INTO meta VALUES ('hardware', 'drive 1 bad 9223372036854775807')",
                "state: meta hardware line \"drive 1 bad 9223372036854775807\": byte 9223372036854775807 is past "
                "the end of drive 1 (" + std::to_string(ssd_bytes) + " bytes)");
  CHECK_REFUSED("INSERT OR REPLACE INTO meta VALUES ('hardware', 'drive 2 bad " + std::to_string(ssd_bytes) + "')",
                "is past the end of drive 2");
  // The last block of the SSD is inside it.
  CHECK(refusal_after("INSERT OR REPLACE INTO meta VALUES ('hardware', 'drive 2 bad " +
                      std::to_string(ssd_bytes - 4096) + "')") == "");
}

TEST_CASE("a lost-data line past its volume's end or misspelt is refused; one of a deleted volume is dropped") {
  // "volume V lost FIRST COUNT [SECTORS]": 4 KiB blocks whose data was lost
  // (controller/lost_blocks.h). A count of 2^62 would have marked blocks for ever.
  CHECK_REFUSED("INSERT OR REPLACE INTO meta VALUES ('hardware', 'volume 1 lost 0 4611686018427387904')",
                "state: meta hardware line \"volume 1 lost 0 4611686018427387904\": blocks 0+4611686018427387904 lie "
                "past the end of volume 1");
  CHECK_REFUSED("INSERT OR REPLACE INTO meta VALUES ('hardware', 'volume 1 lost 9223372036854775807 1')",
                "lie past the end of volume 1");
  for (const char* bad : {"volume 1 lost", "volume 1 lost -1 2", "volume 1 lost 0 0", "volume 1 gone 0 1",
                          "volume 1 lost 0 1 extra", "volume x lost 0 1", "volume 1 lost 0 1 0", "volume 1 lost 0 1 256",
                          "volume 1 lost 0 1 15 1"})
    CHECK_REFUSED("INSERT OR REPLACE INTO meta VALUES ('hardware', '" + std::string(bad) + "')",
                  "state: meta hardware has a line this afasim does not know: " + std::string(bad));
  // Within a 1 TiB volume, more blocks than afasim keeps: refused, not 4 GB of marks and an
  // out-of-memory end of the start (hostile round 41).
  CHECK_REFUSED("UPDATE volumes SET capacity_bytes = 1099511627776 WHERE id = 1; "
                "INSERT OR REPLACE INTO meta VALUES ('hardware', 'volume 1 lost 0 268435456')",
                "more lost data than afasim keeps (4194304 blocks of 4 KiB in all)");
  CHECK(refusal_after("INSERT OR REPLACE INTO meta VALUES ('hardware', 'volume 99 lost 0 1')") == "");
  CHECK(refusal_after("INSERT OR REPLACE INTO meta VALUES ('hardware', 'volume 1 lost 16 4')") == "");
  CHECK(refusal_after("INSERT OR REPLACE INTO meta VALUES ('hardware', 'volume 1 lost 16 4 15')") == "");  // sectors 0..3
}

TEST_CASE("QoS values the API would refuse are refused at load, naming the volume or the policy") {
  // The base's policy 1 has max_iops 5000 and volume 1 is attached to no policy.
  CHECK_REFUSED("UPDATE qos_policies SET max_iops = 200000000",
                "state: table qos_policies, policy 1 (\"gold\"): max_iops must be between 0 and 100000000, got "
                "200000000");
  CHECK_REFUSED("UPDATE qos_policies SET min_iops = 6000",
                "policy 1 (\"gold\"): min_iops (6000) must not exceed max_iops (5000)");
  CHECK_REFUSED("UPDATE volumes SET burst_iops = 10",
                "table volumes, volume 1 (\"a\"): burst_iops needs max_iops (burst is a limit above max)");
  CHECK_REFUSED("UPDATE volumes SET qos_policy_id = 7", "volume 1 (\"a\"): qos_policy_id 7 names no row of table qos_policies");
  // Each value fine alone, not together: the volume's own min over the policy's max.
  CHECK_REFUSED("UPDATE volumes SET qos_policy_id = 1, min_iops = 9000",
                "volume 1 (\"a\") with its policy: min_iops (9000) must not exceed max_iops (5000)");
  CHECK(refusal_after("UPDATE volumes SET qos_policy_id = 1, min_iops = 4000") == "");
}

TEST_CASE("a mapping to a host or volume that is not there, or a LUN out of range or taken twice, is refused") {
  // The store's connection enforces the foreign keys; a hand edit through another one does not.
  CHECK_REFUSED("UPDATE mappings SET host_id = 9", "state: table mappings, mapping 1: host_id 9 names no host");
  CHECK_REFUSED("UPDATE mappings SET volume_id = 9", "table mappings, mapping 1: volume_id 9 names no volume");
  const config::SystemPreset& preset = catalog().system("ise-860-g3").value();
  Snapshot s;  // the schema's CHECK and UNIQUE keep these out of afasim.db; a snapshot has no such guard
  s.volumes.push_back(Volume{});
  s.volumes.back().id = 1;
  s.volumes.back().capacity_bytes = sim::kMiB;
  s.volumes.back().preferred_controller = 1;
  s.hosts.push_back(Host{});
  s.hosts.back().id = 1;
  s.mappings.push_back(Mapping{1, 1, 1, kMaxLun + 1});
  s.meta = {{"next_id.volume", "2"}, {"next_id.host", "2"}, {"next_id.mapping", "3"}};
  CHECK(snapshot_problem(s, preset) == "table mappings, mapping 1: lun 16384 is not between 0 and 16383");
  s.mappings.back().lun = 5;
  CHECK(snapshot_problem(s, preset) == "");
  s.mappings.push_back(Mapping{2, 1, 1, 5});
  CHECK(snapshot_problem(s, preset) == "table mappings, mapping 2: host 1 already has LUN 5 (mapping 1)");
  s.mappings.back().lun = 6;  // the API maps a volume to a host once
  CHECK(snapshot_problem(s, preset) == "table mappings, mapping 2: host 1 already sees volume 1 (mapping 1)");
}

TEST_CASE("a saved clock or an event time outside 0..100 years is refused") {
  // 2^63-1 ns: the first event scheduled after the load overflowed the simulated time.
  CHECK_REFUSED("INSERT OR REPLACE INTO meta VALUES ('clock_ns', '9223372036854775807')",
                "state: meta clock_ns is \"9223372036854775807\": a simulated time is 0..3153600000000000000 ns");
  CHECK_REFUSED("INSERT OR REPLACE INTO meta VALUES ('clock_ns', '12s')", "meta clock_ns is \"12s\"");
  CHECK_REFUSED("UPDATE events SET time_ns = -1 WHERE id = (SELECT MAX(id) FROM events)",
                "time_ns -1 is not between 0 and 3153600000000000000");
  CHECK(refusal_after("INSERT OR REPLACE INTO meta VALUES ('clock_ns', '3153600000000000000')") == "");
}

TEST_CASE("an extent whose missing member names a drive that is not there is refused") {
  // claim() checks the live members only; a missing member's chunk was indexed by a later
  // release or rebuild without a check. (The store refuses mask bits past the members.)
  CHECK_REFUSED("UPDATE extents SET missing = 1, members = '999:5 ' || substr(members, instr(members, ' ') + 1) "
                "WHERE extent_index = 0",
                "state: extent 0 of volume 1: missing member 0 names chunk 5 of drive index 999, which does not exist "
                "(this system, ise-860-g3, has 40 SSDs, drive indexes 0..39, of 1.46 TiB; a state opens only with the "
                "presets it was made with: was --config-dir or a preset in it changed?)");
  CHECK(refusal_after("UPDATE extents SET missing = 1 WHERE extent_index = 0") == "");  // an SSD lost: opens
}

TEST_CASE("an extent with two live members on one SSD is refused: losing it would lose both") {
  // Member 1 moved to free chunk 100 of member 0's drive ("d0:c0 d1:c1 ..." -> "d0:c0 d0:100 ...");
  // the allocator, a rebuild's replacement and a wear-leveling move each keep members apart.
  const std::string rest = "substr(members, instr(members, ' ') + 1)";
  const std::string same_drive = "UPDATE extents SET members = substr(members, 1, instr(members, ' ')) || "
                                 "substr(members, 1, instr(members, ':')) || '100' || substr(" +
                                 rest + ", instr(" + rest + " || ' ', ' ')) WHERE extent_index = 0";
  const std::string got = refusal_after(same_drive);
  INFO(got);
  CHECK(got.find("state: extent 0 of volume 1: two members are on drive index ") != std::string::npos);
  // The same change with member 1 missing (its SSD lost, the address kept) opens.
  CHECK(refusal_after(same_drive + "; UPDATE extents SET missing = 2 WHERE extent_index = 0") == "");
}

}  // namespace tampered_state_test
