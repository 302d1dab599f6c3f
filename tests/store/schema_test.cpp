// The migration mechanism, on an in-memory database with made-up migrations, and the real
// schema's constraints.
#include "store/schema.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "store/sqlite_store.h"
#include "tests/store/store_test_util.h"

using namespace afasim;
using namespace afasim::store;

namespace {

// A plain connection, in memory unless a path is given.
struct Db {
  sqlite3* db = nullptr;
  explicit Db(const std::string& path = ":memory:") {
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  }
  ~Db() { sqlite3_close(db); }
  std::int64_t value(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(s) == SQLITE_ROW);
    const std::int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
  }
  bool has_table(const std::string& name) const {
    return value("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '" + name +
                 "'") == 1;
  }
};

// Each migration creates a table; running one twice would fail ("table ... already exists"),
// so a second migrate() passing proves it skipped what was applied.
const Migration kOne{1, "table a", "CREATE TABLE a (x INTEGER)"};
const Migration kTwo{2, "table b", "CREATE TABLE b (x INTEGER); INSERT INTO a VALUES (2)"};
const Migration kBroken{3, "table c, then a bad statement",
                        "CREATE TABLE c (x INTEGER); INSERT INTO a VALUES (3); "
                        "INSERT INTO no_such_table VALUES (1)"};

}  // namespace

TEST_CASE("the shipped migrations are numbered 1, 2, ... and the store writes the last") {
  const auto list = migrations();
  REQUIRE_FALSE(list.empty());
  for (std::size_t i = 0; i < list.size(); ++i) CHECK(list[i].version == static_cast<int>(i) + 1);
  CHECK(latest_schema_version() == list.back().version);
  CHECK(SqliteStore::schema_version() == list.back().version);
}

TEST_CASE("migrate applies only the missing migrations, in order") {
  Db m;
  const std::vector<Migration> v1{kOne};
  const std::vector<Migration> v2{kOne, kTwo};
  REQUIRE(migrate(m.db, v1).is_ok());
  CHECK(m.value("PRAGMA user_version") == 1);
  CHECK(m.value("PRAGMA application_id") == kApplicationId);
  CHECK(m.has_table("a"));
  CHECK_FALSE(m.has_table("b"));
  const sim::Status st = migrate(m.db, v2);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  CHECK(m.value("PRAGMA user_version") == 2);
  CHECK(m.has_table("b"));
  CHECK(m.value("SELECT count(*) FROM a") == 1);
  // Up to date: nothing runs.
  REQUIRE(migrate(m.db, v2).is_ok());
  CHECK(m.value("SELECT count(*) FROM a") == 1);
}

TEST_CASE("a failing migration leaves the database at its old version, with nothing of the batch") {
  Db m;
  REQUIRE(migrate(m.db, std::vector<Migration>{kOne}).is_ok());
  const sim::Status st = migrate(m.db, std::vector<Migration>{kOne, kTwo, kBroken});
  INFO(st.to_string());
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("schema migration 3 (table c, then a bad statement)") !=
        std::string::npos);
  CHECK(st.message().find("no such table: no_such_table") != std::string::npos);
  CHECK(m.value("PRAGMA user_version") == 1);
  CHECK_FALSE(m.has_table("b"));  // migration 2 succeeded, but was in the same transaction
  CHECK_FALSE(m.has_table("c"));
  CHECK(m.value("SELECT count(*) FROM a") == 0);
  CHECK(sqlite3_get_autocommit(m.db) != 0);  // no transaction left open
}

TEST_CASE("migrate refuses a database newer than its list") {
  Db m;
  REQUIRE(sqlite3_exec(m.db, "PRAGMA user_version = 7", nullptr, nullptr, nullptr) == SQLITE_OK);
  const sim::Status st = migrate(m.db, std::vector<Migration>{kOne});
  CHECK(st.code() == sim::Code::kPreconditionFailed);
  CHECK(st.message().find("schema version 7, newer than this afasim knows (1)") !=
        std::string::npos);
  CHECK_FALSE(m.has_table("a"));
  CHECK(m.value("PRAGMA user_version") == 7);
}

TEST_CASE("a new state database has the schema's tables, WAL mode and the afasim mark") {
  testing::TempDir dir;
  SqliteStore::open(dir.path()).value().reset();
  Db m(dir.sub("afasim.db"));
  for (const char* table : {"pools", "pool_datapacs", "pool_space_thresholds", "qos_policies",
                            "volumes", "hosts", "host_initiators", "mappings", "events", "meta"}) {
    INFO(table);
    CHECK(m.has_table(table));
  }
  CHECK(m.value("PRAGMA user_version") == latest_schema_version());
  CHECK(m.value("PRAGMA application_id") == kApplicationId);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(m.db, "PRAGMA journal_mode", -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 0))) == "wal");
  sqlite3_finalize(s);
  // STRICT tables: a text in an integer column is refused, not silently stored.
  CHECK(sqlite3_exec(m.db, "INSERT INTO pools (id, name, revision) VALUES ('x', 'p', 1)", nullptr,
                     nullptr, nullptr) != SQLITE_OK);
}

TEST_CASE("a write lock another process holds is named as such, migration due or not (hostile round 28a, L11)") {
  // main at b7facb7: "starting the schema migration: database is locked" on every start,
  // though no migration was due.
  testing::TempDir dir;
  const std::string path = dir.sub("state.db");
  Db holder(path), starter(path);
  REQUIRE(migrate(holder.db, std::vector<Migration>{kOne}).is_ok());  // nothing is due below
  REQUIRE(sqlite3_exec(holder.db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_busy_timeout(starter.db, 50);
  const sim::Status st = migrate(starter.db, std::vector<Migration>{kOne});
  CHECK_FALSE(st.is_ok());
  CHECK(st.message().find("another process (a sqlite3 shell, a backup tool) holds a write lock") !=
        std::string::npos);
  CHECK(st.message().find("migration") == std::string::npos);
  REQUIRE(sqlite3_exec(holder.db, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK);
  CHECK(migrate(starter.db, std::vector<Migration>{kOne}).is_ok());
}
