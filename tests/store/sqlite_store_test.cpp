// SqliteStore: round trips, atomicity, the full-disk path, and refusing what it must refuse.
#include "store/sqlite_store.h"

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "store/schema.h"
#include "tests/store/store_test_util.h"

using namespace afasim;
using namespace afasim::controller;
using store::SqliteStore;
using store::testing::dump;
using store::testing::TempDir;
using store::testing::load_ok;
using store::testing::open_ok;

namespace {

void commit_ok(Journal& j, const ChangeSet& c) {
  const sim::Status st = j.commit(c);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

Event event(std::int64_t id, Severity sev, std::string category, std::string object,
            std::string message, sim::Time t) {
  Event e;
  e.id = id;
  e.time_ns = t;
  e.severity = sev;
  e.category = std::move(category);
  e.object = std::move(object);
  e.message = std::move(message);
  return e;
}

// A first ChangeSet that uses every field of every kind with values away from the defaults,
// every enum value, and unset next to zero-valued QoS fields.
ChangeSet everything() {
  ChangeSet c;
  Pool p1;
  p1.id = 1;
  p1.name = "Pool 1";
  p1.datapac_ids = {1, 2};
  p1.space_thresholds_percent = {70, 85, 93, 99};
  p1.revision = 3;
  Pool p2;
  p2.id = 4;
  p2.name = "archive";
  p2.datapac_ids = {3};
  p2.space_thresholds_percent = {50};
  c.put_pools = {p1, p2};

  QosPolicy gold;
  gold.id = 2;
  gold.name = "gold";
  gold.qos = {5000, 20000, 40000};
  gold.revision = 9;
  QosPolicy unset;  // every value NULL
  unset.id = 3;
  unset.name = "no-limits";
  QosPolicy zero;  // zero is not NULL
  zero.id = 5;
  zero.name = "zero-min";
  zero.qos.min_iops = 0;
  c.put_qos_policies = {gold, unset, zero};

  Volume v1;
  v1.id = 10;
  v1.name = "db-data";
  v1.pool_id = 1;
  v1.capacity_bytes = 1LL << 50;  // kMaxVolumeBytes: needs all 64 bits of the column
  v1.raid_type = raid::RaidType::kRaid5;
  v1.provisioning = Provisioning::kFixed;
  v1.preferred_controller = 2;
  v1.qos = {0, 1000, 100'000'000};
  v1.qos_policy_id = 2;
  v1.state = VolumeState::kDegraded;
  v1.created_time_ns = 9'000'000'000'000'000'000LL;
  v1.revision = 17;
  Volume v2;  // defaults: thin RAID10, no QoS, no policy
  v2.id = 11;
  v2.name = "scratch";
  v2.pool_id = 1;
  v2.capacity_bytes = 512;
  Volume v3;
  v3.id = 12;
  v3.name = "old";
  v3.pool_id = 4;
  v3.capacity_bytes = 4096;
  v3.raid_type = raid::RaidType::kRaid0;
  v3.state = VolumeState::kFailed;
  v3.qos.max_iops = 7;
  Volume v4;  // under policy 3, which the second ChangeSet deletes as it detaches v4
  v4.id = 13;
  v4.name = "policed";
  v4.pool_id = 1;
  v4.capacity_bytes = 512;
  v4.qos_policy_id = 3;
  c.put_volumes = {v1, v2, v3, v4};

  Host h1;
  h1.id = 20;
  h1.name = "esx-01";
  h1.description = "rack 4, \"blue\" cable; ünïcode ok\nsecond line";
  // Not sorted by type or address: the order must survive.
  h1.initiators = {{InitiatorType::kIscsi, "iqn.1998-01.com.vmware:esx01-4f2a"},
                   {InitiatorType::kFc, "21:00:00:24:ff:7a:1c:01"},
                   {InitiatorType::kNbd, "fio-client@lab"},
                   {InitiatorType::kFc, "21:00:00:24:ff:7a:1c:00"}};
  h1.revision = 2;
  Host h2;  // no initiators, empty description
  h2.id = 21;
  h2.name = "spare";
  c.put_hosts = {h1, h2};

  Mapping m1;
  m1.id = 30;
  m1.volume_id = 10;
  m1.host_id = 20;
  m1.lun = kMaxLun;
  m1.access = MappingAccess::kReadOnly;
  m1.revision = 4;
  Mapping m2;
  m2.id = 31;
  m2.volume_id = 11;
  m2.host_id = 20;
  m2.lun = 0;
  c.put_mappings = {m1, m2};

  // Thin maps: a RAID 5 extent with a lost member, one far into a 1 PiB volume, a RAID 10
  // one of another volume, and one of volume 12 (deleted, with its extents, by second()).
  ExtentRecord e1{10, 0, raid::RaidType::kRaid5, {{0, 0}, {7, 12}, {21, 65535}, {30, 3}, {39, 68000}}, 0b00100};
  ExtentRecord e2{10, 16'777'215, raid::RaidType::kRaid5, {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}}, 0};
  ExtentRecord e3{11, 3, raid::RaidType::kRaid10,
                  {{0, 9}, {20, 9}, {1, 9}, {21, 9}, {2, 9}, {22, 9}, {3, 9}, {23, 9}}, 0};
  ExtentRecord e4{12, 0, raid::RaidType::kRaid0, {{5, 6}, {6, 6}, {7, 6}, {8, 6}}, 0};
  c.put_extents = {e1, e2, e3, e4};

  c.events = {event(1, Severity::kInfo, "system", "", "initialized", 0),
              event(2, Severity::kWarning, "pool", "pool/1", "80 % allocated", 1'500),
              event(3, Severity::kError, "drive", "drive/7", "SSD failed: \"media\"\nretry", -5),
              event(4, Severity::kCritical, "power", "", "mains lost ⚡", INT64_MAX)};
  c.meta = {{"system", "ise-860-g3"}, {"next_id.volume", "13"}, {"empty", ""}};
  return c;
}

// Every field of an object of each kind changed, deletes, and a DataPac and an initiator
// each moving to another object, all in one ChangeSet.
ChangeSet second() {
  ChangeSet c;
  Pool main;
  main.id = 1;
  main.name = "Main";
  main.datapac_ids = {1, 2};
  main.space_thresholds_percent = {90};
  main.revision = 4;
  Pool archive;  // takes DataPac 3 from pool 4, deleted in the same ChangeSet
  archive.id = 6;
  archive.name = "archive-2";
  archive.datapac_ids = {3};
  archive.space_thresholds_percent = {60, 70};
  c.put_pools = {main, archive};
  c.delete_pools = {4};
  c.delete_volumes = {12};
  c.delete_mappings = {31};
  c.delete_qos_policies = {3};

  QosPolicy gold;
  gold.id = 2;
  gold.name = "gold-2";
  gold.qos.max_iops = 1;
  gold.revision = 10;
  c.put_qos_policies = {gold};

  Volume v1;  // every field of volume 10 changes; QoS values and policy become NULL
  v1.id = 10;
  v1.name = "db-data-2";
  v1.pool_id = 6;
  v1.capacity_bytes = 1LL << 40;
  v1.raid_type = raid::RaidType::kRaid10;
  v1.provisioning = Provisioning::kThin;
  v1.preferred_controller = 1;
  v1.state = VolumeState::kOnline;
  v1.created_time_ns = 1;
  v1.revision = 18;
  Volume v2;
  v2.id = 11;
  v2.name = "scratch-renamed";
  v2.pool_id = 1;
  v2.capacity_bytes = 1024;
  v2.qos = {1, 2, 3};
  v2.qos_policy_id = 5;
  v2.revision = 2;
  // Volume 13 leaves policy 3 in the ChangeSet that deletes the policy. Deletes run first,
  // so this passes only because references are checked at COMMIT.
  Volume v4;
  v4.id = 13;
  v4.name = "policed";
  v4.pool_id = 1;
  v4.capacity_bytes = 512;
  v4.revision = 2;
  c.put_volumes = {v1, v2, v4};

  Host h1;  // every field of host 20 changes; it gives "...1c:00" to host 21
  h1.id = 20;
  h1.name = "esx-01b";
  h1.description = "";
  h1.initiators = {{InitiatorType::kFc, "21:00:00:24:ff:7a:1c:01"}};
  h1.revision = 3;
  Host h2;  // listed first, so the moved initiator is written before host 20 lets it go
  h2.id = 21;
  h2.name = "spare";
  h2.description = "now used";
  h2.initiators = {{InitiatorType::kNbd, "qemu-img"},
                   {InitiatorType::kFc, "21:00:00:24:ff:7a:1c:00"}};
  h2.revision = 2;
  c.put_hosts = {h2, h1};

  Mapping m1;  // every field of mapping 30 changes
  m1.id = 30;
  m1.volume_id = 11;
  m1.host_id = 21;
  m1.lun = 5;
  m1.access = MappingAccess::kReadWrite;
  m1.revision = 5;
  c.put_mappings = {m1};

  // Extent 0 of volume 10 is rebuilt (a new member, nothing missing); its other extent is
  // unmapped; volume 12's go with it.
  c.put_extents = {ExtentRecord{10, 0, raid::RaidType::kRaid5, {{0, 0}, {7, 12}, {22, 70000}, {30, 3}, {39, 68000}}, 0}};
  c.delete_extents = {{10, 16'777'215}};

  c.events = {event(5, Severity::kInfo, "pool", "pool/4", "pool deleted", 2'000)};
  c.meta = {{"next_id.volume", "14"}, {"empty", "now set"}};
  return c;
}

}  // namespace

TEST_CASE("every field of every kind survives commit, close, reopen and load") {
  TempDir dir;
  MemoryJournal reference;  // the model's in-memory Journal is the specification
  for (const ChangeSet& c : {everything(), second()}) {
    commit_ok(reference, c);
    auto store = open_ok(dir.path());
    commit_ok(*store, c);
  }  // closed after each commit: every load below comes from the file
  auto store = open_ok(dir.path());
  const Snapshot loaded = load_ok(*store);
  CHECK(dump(loaded) == dump(reference.snapshot()));

  // A few values checked against the literals, not only against MemoryJournal.
  REQUIRE(loaded.pools.size() == 2);
  CHECK(loaded.pools[0].name == "Main");
  CHECK(loaded.pools[0].space_thresholds_percent == std::vector<int>{90});
  CHECK(loaded.pools[1].datapac_ids == std::vector<Id>{3});
  CHECK(loaded.pools[1].space_thresholds_percent == std::vector<int>{60, 70});
  REQUIRE(loaded.volumes.size() == 3);
  CHECK_FALSE(loaded.volumes[2].qos_policy_id.has_value());
  const Volume& v1 = loaded.volumes[0];
  CHECK(v1.name == "db-data-2");
  CHECK(v1.pool_id == 6);
  CHECK(v1.capacity_bytes == (1LL << 40));
  CHECK(v1.raid_type == raid::RaidType::kRaid10);
  CHECK(v1.provisioning == Provisioning::kThin);
  CHECK(v1.qos.empty());
  CHECK_FALSE(v1.qos_policy_id.has_value());
  CHECK(v1.state == VolumeState::kOnline);
  CHECK(v1.revision == 18);
  CHECK(loaded.volumes[1].qos == QosSettings{1, 2, 3});
  CHECK(loaded.volumes[1].qos_policy_id == std::optional<Id>(5));
  REQUIRE(loaded.qos_policies.size() == 2);
  CHECK(loaded.qos_policies[0].qos == QosSettings{std::nullopt, 1, std::nullopt});
  CHECK(loaded.qos_policies[1].qos.min_iops == std::optional<std::int64_t>(0));
  CHECK_FALSE(loaded.qos_policies[1].qos.max_iops.has_value());
  REQUIRE(loaded.hosts.size() == 2);
  CHECK(loaded.hosts[0].description.empty());
  CHECK(loaded.hosts[0].initiators ==
        std::vector<Initiator>{{InitiatorType::kFc, "21:00:00:24:ff:7a:1c:01"}});
  REQUIRE(loaded.hosts[1].initiators.size() == 2);
  CHECK(loaded.hosts[1].initiators[1].address == "21:00:00:24:ff:7a:1c:00");
  REQUIRE(loaded.mappings.size() == 1);
  CHECK(loaded.mappings[0].lun == 5);
  CHECK(loaded.mappings[0].access == MappingAccess::kReadWrite);
  REQUIRE(loaded.events.size() == 5);
  CHECK(loaded.events[2].time_ns == -5);
  CHECK(loaded.events[2].message == "SSD failed: \"media\"\nretry");
  CHECK(loaded.events[3].severity == Severity::kCritical);
  CHECK(loaded.events[3].time_ns == INT64_MAX);
  CHECK(loaded.meta.at("empty") == "now set");
  CHECK(loaded.meta.at("system") == "ise-860-g3");
}

TEST_CASE("the first ChangeSet's values load as written, before any update") {
  TempDir dir;
  commit_ok(*open_ok(dir.path()), everything());
  auto store = open_ok(dir.path());
  const Snapshot loaded = load_ok(*store);
  MemoryJournal reference;
  commit_ok(reference, everything());
  CHECK(dump(loaded) == dump(reference.snapshot()));
  REQUIRE(loaded.volumes.size() == 4);
  CHECK(loaded.volumes[3].qos_policy_id == std::optional<Id>(3));
  const Volume& v1 = loaded.volumes[0];
  CHECK(v1.capacity_bytes == (1LL << 50));
  CHECK(v1.raid_type == raid::RaidType::kRaid5);
  CHECK(v1.provisioning == Provisioning::kFixed);
  CHECK(v1.preferred_controller == 2);
  CHECK(v1.qos == QosSettings{0, 1000, 100'000'000});
  CHECK(v1.qos_policy_id == std::optional<Id>(2));
  CHECK(v1.state == VolumeState::kDegraded);
  CHECK(v1.created_time_ns == 9'000'000'000'000'000'000LL);
  CHECK(loaded.volumes[2].raid_type == raid::RaidType::kRaid0);
  CHECK(loaded.volumes[2].state == VolumeState::kFailed);
  REQUIRE(loaded.hosts.size() == 2);
  REQUIRE(loaded.hosts[0].initiators.size() == 4);
  CHECK(loaded.hosts[0].initiators[0] ==
        Initiator{InitiatorType::kIscsi, "iqn.1998-01.com.vmware:esx01-4f2a"});
  CHECK(loaded.hosts[0].initiators[2] == Initiator{InitiatorType::kNbd, "fio-client@lab"});
  CHECK(loaded.hosts[0].description == "rack 4, \"blue\" cable; ünïcode ok\nsecond line");
  CHECK(loaded.hosts[1].initiators.empty());
  REQUIRE(loaded.mappings.size() == 2);
  CHECK(loaded.mappings[0].lun == kMaxLun);
  CHECK(loaded.mappings[0].access == MappingAccess::kReadOnly);
  CHECK(loaded.mappings[0].revision == 4);
  REQUIRE(loaded.events.size() == 4);
  CHECK(loaded.events[1].severity == Severity::kWarning);
  CHECK(loaded.events[1].object == "pool/1");
  CHECK(loaded.events[0].object.empty());
  CHECK(loaded.events[3].message == "mains lost ⚡");
  CHECK(loaded.meta.at("empty").empty());
}

TEST_CASE("an empty store loads an empty snapshot") {
  TempDir dir;
  auto store = open_ok(dir.sub("fresh/nested/"));  // parents are created too
  const Snapshot s = load_ok(*store);
  CHECK(dump(s).empty());
  CHECK(store->commit(ChangeSet{}).is_ok());
  CHECK(std::filesystem::exists(dir.sub("fresh/nested/afasim.db")));
}

TEST_CASE("load keeps the newest max_events events, oldest first; events() pages newest first") {
  TempDir dir;
  auto store = open_ok(dir.path());
  for (int batch = 0; batch < 5; ++batch) {
    ChangeSet c;
    for (int i = 1; i <= 10; ++i) {
      const int id = batch * 10 + i;
      c.events.push_back(event(id, Severity::kInfo, "test", "", "event " + std::to_string(id), id));
    }
    commit_ok(*store, c);
  }
  const Snapshot s = load_ok(*store, 7);
  REQUIRE(s.events.size() == 7);
  CHECK(s.events.front().id == 44);
  CHECK(s.events.back().id == 50);
  CHECK(load_ok(*store, 0).events.empty());
  CHECK(load_ok(*store, SIZE_MAX).events.size() == 50);

  auto page = store->events(0, 3);
  REQUIRE(page.is_ok());
  CHECK(page->total == 50);
  REQUIRE(page->items.size() == 3);
  CHECK(page->items[0].id == 50);
  CHECK(page->items[2].id == 48);
  auto tail = store->events(45, 100);
  REQUIRE(tail.is_ok());
  REQUIRE(tail->items.size() == 5);
  CHECK(tail->items.back().id == 1);
  CHECK(tail->items.back().message == "event 1");
  auto past = store->events(50, 10);
  REQUIRE(past.is_ok());
  CHECK(past->items.empty());
  CHECK(past->total == 50);
  CHECK(store->events(-1, 10).status().code() == sim::Code::kInvalidArgument);
  CHECK(store->events(0, -1).status().code() == sim::Code::kInvalidArgument);
}

TEST_CASE("a ChangeSet that fails part-way leaves the store exactly as it was") {
  TempDir dir;
  auto store = open_ok(dir.path());
  commit_ok(*store, everything());
  const std::string before = dump(load_ok(*store));

  // Each case starts with valid changes of several kinds, so a partial apply would show;
  // the last item is the bad one. Expected fragments are SQLite's own constraint messages.
  ChangeSet valid;
  Pool p;
  p.id = 40;
  p.name = "new-pool";
  p.datapac_ids = {9};
  valid.put_pools = {p};
  Volume v;
  v.id = 41;
  v.name = "new-volume";
  v.pool_id = 40;
  v.capacity_bytes = 512;
  valid.put_volumes = {v};
  valid.delete_mappings = {31};
  valid.events = {event(100, Severity::kInfo, "volume", "volume/41", "created", 10)};
  valid.meta = {{"next_id.volume", "42"}};

  struct Case {
    const char* what;
    std::function<void(ChangeSet&)> spoil;
    const char* message;
  };
  const Case cases[] = {
      {"a duplicate event id in the last statement",
       [](ChangeSet& c) { c.events.push_back(event(2, Severity::kInfo, "x", "", "dup", 0)); },
       "UNIQUE constraint failed: events.id"},
      {"a volume name taken by another volume",
       [](ChangeSet& c) {
         Volume dup = c.put_volumes[0];
         dup.id = 42;
         dup.name = "db-data";
         c.put_volumes.push_back(dup);
       },
       "UNIQUE constraint failed: volumes.name"},
      {"a DataPac in two pools",
       [](ChangeSet& c) {
         c.put_pools[0].datapac_ids = {9, 3};
       },
       "UNIQUE constraint failed: pool_datapacs.datapac_id"},
      {"a LUN taken on the host",
       [](ChangeSet& c) {
         Mapping m;
         m.id = 43;
         m.volume_id = 12;
         m.host_id = 20;
         m.lun = kMaxLun;
         c.put_mappings.push_back(m);
       },
       "UNIQUE constraint failed: mappings.host_id, mappings.lun"},
      {"an initiator of another host",
       [](ChangeSet& c) {
         Host h;
         h.id = 44;
         h.name = "thief";
         h.initiators = {{InitiatorType::kNbd, "fio-client@lab"}};
         c.put_hosts.push_back(h);
       },
       "UNIQUE constraint failed: host_initiators.type, host_initiators.address"},
      {"a LUN out of range",
       [](ChangeSet& c) {
         Mapping m;
         m.id = 45;
         m.volume_id = 12;
         m.host_id = 21;
         m.lun = kMaxLun + 1;
         c.put_mappings.push_back(m);
       },
       "CHECK constraint failed"},
      {"a mapping to a missing volume (checked at COMMIT)",
       [](ChangeSet& c) {
         Mapping m;
         m.id = 46;
         m.volume_id = 999;
         m.host_id = 21;
         m.lun = 5;
         c.put_mappings.push_back(m);
       },
       "mappings row 46 refers to a missing volumes row"},
      {"deleting a pool that holds volumes (checked at COMMIT)",
       [](ChangeSet& c) { c.delete_pools.push_back(4); },
       "volumes row 12 refers to a missing pools row"},
  };
  for (const Case& k : cases) {
    SUBCASE(k.what) {
      ChangeSet c = valid;
      k.spoil(c);
      const sim::Status st = store->commit(c);
      INFO(st.to_string());
      CHECK(st.code() == sim::Code::kInternal);
      CHECK(st.message().find(k.message) != std::string::npos);
      CHECK(st.message().find("nothing was changed") != std::string::npos);
      CHECK(dump(load_ok(*store)) == before);
      // The store is still usable, and the valid part alone commits.
      commit_ok(*store, valid);
      CHECK(dump(load_ok(*store)) != before);
    }
  }
}

TEST_CASE("a full disk fails the commit with kNoSpace and changes nothing") {
  TempDir dir;
  std::int64_t bytes_after_first = 0;
  {
    auto store = open_ok(dir.path());
    commit_ok(*store, everything());
  }
  bytes_after_first = static_cast<std::int64_t>(std::filesystem::file_size(dir.sub("afasim.db")));
  store::SqliteStoreOptions bounded;
  bounded.max_db_bytes = bytes_after_first + 8 * 4096;  // room for a few pages only
  auto store = open_ok(dir.path(), bounded);
  const std::string before = dump(load_ok(*store));
  ChangeSet big;  // ~1 MiB of events: far more than 8 pages
  for (int i = 0; i < 1000; ++i)
    big.events.push_back(event(1000 + i, Severity::kInfo, "bulk", "", std::string(1000, 'x'), i));
  const sim::Status st = store->commit(big);
  INFO(st.to_string());
  CHECK(st.code() == sim::Code::kNoSpace);
  CHECK(st.message().find("full") != std::string::npos);
  CHECK(dump(load_ok(*store)) == before);
  ChangeSet small;
  small.meta = {{"after", "full"}};
  commit_ok(*store, small);
  store.reset();
  auto reopened = open_ok(dir.path());
  const Snapshot s = load_ok(*reopened);
  CHECK(s.events.size() == 4);
  CHECK(s.meta.at("after") == "full");
}

TEST_CASE("a second store on a locked state directory is refused, naming the directory") {
  TempDir dir;
  auto first = open_ok(dir.path());
  auto second = SqliteStore::open(dir.path());
  REQUIRE_FALSE(second.is_ok());
  CHECK(second.status().code() == sim::Code::kUnavailable);
  CHECK(second.status().message() ==
        "state directory " + dir.path() + " is in use by another afasim process (pid " +
            std::to_string(::getpid()) + "): the directory is locked");
  // Deleting the LOCK file does not free the directory (hostile round 25b: a second server
  // then ran beside the first on the same files).
  std::filesystem::remove(dir.path() + "/LOCK");
  CHECK_FALSE(SqliteStore::open(dir.path()).is_ok());
  first.reset();  // releases the lock
  auto third = SqliteStore::open(dir.path());
  CHECK(third.is_ok());
}

TEST_CASE("a database of a newer schema version is refused and left untouched") {
  TempDir dir;
  open_ok(dir.path()).reset();
  const std::string db_path = dir.sub("afasim.db");
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string bytes = read_file(db_path);
  auto s = SqliteStore::open(dir.path());
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.status().code() == sim::Code::kPreconditionFailed);
  CHECK(s.status().message().find(db_path + " is at schema version 99, newer than this afasim "
                                            "knows (" + std::to_string(afasim::store::latest_schema_version()) + ")") != std::string::npos);
  CHECK(read_file(db_path) == bytes);
}

TEST_CASE("a state database that is not afasim's is refused with a clear message") {
  TempDir dir;
  const std::string db_path = dir.sub("afasim.db");
  SUBCASE("garbage bytes") {
    std::string junk;
    for (int i = 0; i < 8192; ++i) junk += static_cast<char>((i * 131 + 7) % 256);
    store::testing::write_file(db_path, junk);
    auto s = SqliteStore::open(dir.path());
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().code() == sim::Code::kInvalidArgument);
    CHECK(s.status().message().find(db_path + " is not a SQLite database") != std::string::npos);
    CHECK(read_file(db_path) == junk);
  }
  SUBCASE("a short text file") {
    store::testing::write_file(db_path, "hello, I am not a database\n");
    auto s = SqliteStore::open(dir.path());
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().message().find(db_path + " is not a SQLite database") != std::string::npos);
  }
  SUBCASE("another program's SQLite database") {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE notes (body TEXT)", nullptr, nullptr, nullptr) ==
            SQLITE_OK);
    sqlite3_close(db);
    auto s = SqliteStore::open(dir.path());
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().code() == sim::Code::kInvalidArgument);
    CHECK(s.status().message().find("is a SQLite database but not an afasim one") !=
          std::string::npos);
  }
}

TEST_CASE("a state path that is not a usable directory is refused, naming the path") {
  TempDir dir;
  const std::string file = dir.sub("plain-file");
  store::testing::write_file(file, "x");
  SUBCASE("the path is a file") {
    auto s = SqliteStore::open(file);
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().code() == sim::Code::kInvalidArgument);
    CHECK(s.status().message() == "state directory " + file + " exists and is not a directory");
  }
  SUBCASE("the path runs through a file") {
    auto s = SqliteStore::open(file + "/state");
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().code() == sim::Code::kUnavailable);
    CHECK(s.status().message().find("cannot create state directory " + file + "/state: ") == 0);
  }
  SUBCASE("the path is empty") {
    CHECK(SqliteStore::open("").status().code() == sim::Code::kInvalidArgument);
  }
  SUBCASE("the path is a symbolic link to nowhere") {  // hostile round 15: "File exists"
    const std::string link = dir.sub("dangling");
    std::filesystem::create_symlink(dir.sub("gone/zz"), link);
    auto s = SqliteStore::open(link);
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().message() == "state directory " + link + " is a symbolic link to " + dir.sub("gone/zz") +
                                      ", which does not exist");
  }
  SUBCASE("permission denied") {
    if (::geteuid() == 0) {
      MESSAGE("running as root, which ignores permissions: permission case not checked");
      return;
    }
    const std::string locked = dir.sub("no-access");
    std::filesystem::create_directory(locked);
    std::filesystem::permissions(
        locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    auto s = SqliteStore::open(locked);
    std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().code() == sim::Code::kUnavailable);
    CHECK(s.status().message().find(locked) != std::string::npos);
    CHECK(s.status().message().find("Permission denied") != std::string::npos);
  }
}

TEST_CASE("options out of range are refused") {
  TempDir dir;
  store::SqliteStoreOptions o;
  o.busy_timeout_ms = -1;
  CHECK(SqliteStore::open(dir.path(), o).status().code() == sim::Code::kInvalidArgument);
  o = {};
  o.max_db_bytes = -5;
  CHECK(SqliteStore::open(dir.path(), o).status().code() == sim::Code::kInvalidArgument);
}

TEST_CASE("a row the model cannot read back fails load with a message naming it") {
  TempDir dir;
  commit_ok(*open_ok(dir.path()), everything());
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(dir.sub("afasim.db").c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "UPDATE volumes SET state = 'exploded' WHERE id = 11", nullptr, nullptr,
                       nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto store = open_ok(dir.path());
  auto s = store->load(100);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.status().code() == sim::Code::kInternal);
  CHECK(s.status().message().find("volume 11 has an unknown state \"exploded\"") !=
        std::string::npos);
  // The store stays usable: a later commit and events() still work.
  ChangeSet c;
  c.meta = {{"k", "v"}};
  commit_ok(*store, c);
  CHECK(store->events(0, 10).is_ok());
}
