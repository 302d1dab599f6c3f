#include "store/schema.h"

#include <string>

#include "sim/assert.h"
#include "store/sqlite_util.h"

namespace afasim::store {
namespace {

// Version 1: the management objects of controller/objects.h, the event log and meta.
//
// Conventions (docs/persistence.md): ids are the model's own (never AUTOINCREMENT: the
// model hands them out and never reuses one); enums are stored as their to_string() names
// and checked when loaded, not by CHECK constraints, so that a new state or RAID type does
// not need a table rebuild; unset QoS values are NULL. References between objects are
// : one ChangeSet may touch several kinds in any order, and
// the references are checked at COMMIT. Child rows of one object (DataPacs, thresholds,
// initiators) go with it (ON DELETE CASCADE).
constexpr std::string_view kVersion1 = R"sql(
CREATE TABLE pools (
  id        INTEGER PRIMARY KEY CHECK (id > 0),
  name      TEXT    NOT NULL UNIQUE CHECK (name <> ''),
  revision  INTEGER NOT NULL CHECK (revision >= 1)
) STRICT;

-- A DataPac belongs to at most one pool.
CREATE TABLE pool_datapacs (
  pool_id     INTEGER NOT NULL REFERENCES pools (id) ON DELETE CASCADE,
  datapac_id  INTEGER NOT NULL UNIQUE CHECK (datapac_id > 0),
  PRIMARY KEY (pool_id, datapac_id)
) STRICT, WITHOUT ROWID;

-- Low-space thresholds in the pool's order (position 0 first).
CREATE TABLE pool_space_thresholds (
  pool_id   INTEGER NOT NULL REFERENCES pools (id) ON DELETE CASCADE,
  position  INTEGER NOT NULL CHECK (position >= 0),
  percent   INTEGER NOT NULL CHECK (percent BETWEEN 1 AND 100),
  PRIMARY KEY (pool_id, position)
) STRICT, WITHOUT ROWID;

CREATE TABLE qos_policies (
  id          INTEGER PRIMARY KEY CHECK (id > 0),
  name        TEXT    NOT NULL UNIQUE CHECK (name <> ''),
  min_iops    INTEGER CHECK (min_iops >= 0),    -- NULL: no reservation
  max_iops    INTEGER CHECK (max_iops >= 0),    -- NULL: no limit
  burst_iops  INTEGER CHECK (burst_iops >= 0),  -- NULL: burst equals max
  revision    INTEGER NOT NULL CHECK (revision >= 1)
) STRICT;

CREATE TABLE volumes (
  id                    INTEGER PRIMARY KEY CHECK (id > 0),
  name                  TEXT    NOT NULL UNIQUE CHECK (name <> ''),
  pool_id               INTEGER NOT NULL
                        REFERENCES pools (id) DEFERRABLE INITIALLY DEFERRED,
  capacity_bytes        INTEGER NOT NULL CHECK (capacity_bytes > 0),
  raid_type             TEXT    NOT NULL,  -- RAID0 | RAID10 | RAID5
  provisioning          TEXT    NOT NULL,  -- thin | fixed
  preferred_controller  INTEGER NOT NULL CHECK (preferred_controller > 0),
  min_iops              INTEGER CHECK (min_iops >= 0),
  max_iops              INTEGER CHECK (max_iops >= 0),
  burst_iops            INTEGER CHECK (burst_iops >= 0),
  qos_policy_id         INTEGER
                        REFERENCES qos_policies (id) DEFERRABLE INITIALLY DEFERRED,
  state                 TEXT    NOT NULL,  -- online | degraded | failed
  created_time_ns       INTEGER NOT NULL,  -- simulated time
  revision              INTEGER NOT NULL CHECK (revision >= 1)
) STRICT;
CREATE INDEX volumes_by_pool ON volumes (pool_id);
CREATE INDEX volumes_by_qos_policy ON volumes (qos_policy_id);

CREATE TABLE hosts (
  id           INTEGER PRIMARY KEY CHECK (id > 0),
  name         TEXT    NOT NULL UNIQUE CHECK (name <> ''),
  description  TEXT    NOT NULL,
  revision     INTEGER NOT NULL CHECK (revision >= 1)
) STRICT;

-- A host's initiators in its order; an initiator belongs to at most one host.
CREATE TABLE host_initiators (
  host_id   INTEGER NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  position  INTEGER NOT NULL CHECK (position >= 0),
  type      TEXT    NOT NULL,  -- fc | iscsi | nbd
  address   TEXT    NOT NULL,  -- WWPN, IQN/EUI/NAA, NBD client name
  PRIMARY KEY (host_id, position),
  UNIQUE (type, address)
) STRICT, WITHOUT ROWID;

CREATE TABLE mappings (
  id         INTEGER PRIMARY KEY CHECK (id > 0),
  volume_id  INTEGER NOT NULL REFERENCES volumes (id) DEFERRABLE INITIALLY DEFERRED,
  host_id    INTEGER NOT NULL REFERENCES hosts (id) DEFERRABLE INITIALLY DEFERRED,
  lun        INTEGER NOT NULL CHECK (lun BETWEEN 0 AND 16383),  -- SAM-5 flat space
  access     TEXT    NOT NULL,  -- read_write | read_only
  revision   INTEGER NOT NULL CHECK (revision >= 1),
  UNIQUE (host_id, lun),
  UNIQUE (host_id, volume_id)
) STRICT;
CREATE INDEX mappings_by_volume ON mappings (volume_id);

-- The event log, append-only. id is the model's sequence number.
CREATE TABLE events (
  id        INTEGER PRIMARY KEY CHECK (id > 0),
  time_ns   INTEGER NOT NULL,  -- simulated time
  severity  TEXT    NOT NULL,  -- info | warning | error | critical
  category  TEXT    NOT NULL,
  object    TEXT    NOT NULL,  -- "volume/7", '' for the array
  message   TEXT    NOT NULL
) STRICT;

-- Key/value settings of the model: system preset, next ids, first-boot marker.
CREATE TABLE meta (
  key    TEXT NOT NULL PRIMARY KEY,
  value  TEXT NOT NULL
) STRICT, WITHOUT ROWID;
)sql";

// Version 2: the thin maps. One row per allocated extent of a volume: its RAID type and
// its members (chunks on SSDs) as "drive:chunk" pairs separated by spaces, drive being the
// array-wide drive index, plus the bit mask of members lost with a failed SSD (rebuild
// pending). A volume's extents go with it.
constexpr std::string_view kVersion2 = R"sql(
CREATE TABLE extents (
  volume_id     INTEGER NOT NULL
                REFERENCES volumes (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  extent_index  INTEGER NOT NULL CHECK (extent_index >= 0),
  raid_type     TEXT    NOT NULL,  -- RAID0 | RAID10 | RAID5
  members       TEXT    NOT NULL CHECK (members <> ''),
  missing       INTEGER NOT NULL CHECK (missing >= 0),
  PRIMARY KEY (volume_id, extent_index)
) STRICT, WITHOUT ROWID;
)sql";

// Version 3 (issue 14): who made each event's change (the API's user; '' for the array).
constexpr std::string_view kVersion3 = R"sql(
ALTER TABLE events ADD COLUMN actor TEXT NOT NULL DEFAULT '';
)sql";

constexpr Migration kMigrations[] = {
    {1, "pools, volumes, hosts, mappings, QoS policies, events, meta", kVersion1},
    {2, "thin maps: the extents of each volume and where they live", kVersion2},
    {3, "the user behind each event", kVersion3},
    // Later issues append here (per-volume counters, ...).
};

}  // namespace

std::span<const Migration> migrations() {
  return kMigrations;
}

int latest_schema_version() {
  return migrations().back().version;
}

sim::Result<int> schema_version(sqlite3* db) {
  auto stmt = Statement::prepare(db, "PRAGMA user_version");
  if (!stmt) return stmt.status();
  const int rc = stmt->step();
  if (rc != SQLITE_ROW) return sqlite_error(db, rc, "reading the schema version");
  return static_cast<int>(stmt->column_int64(0));
}

sim::Status migrate(sqlite3* db, std::span<const Migration> list) {
  AFASIM_ASSERT(!list.empty(), "migrate: no migrations");
  for (std::size_t i = 0; i < list.size(); ++i)
    AFASIM_ASSERT(list[i].version == static_cast<int>(i) + 1,
                  "migrate: migration versions must be 1, 2, ... in order");
  AFASIM_ASSERT(sqlite3_get_autocommit(db) != 0, "migrate: a transaction is already open");

  // BEGIN IMMEDIATE takes the write lock before the version is read, so that the version
  // cannot change between the check and the migrations.
  if (const int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr); rc != SQLITE_OK) {
    // Every start takes the write lock here, migration due or not (hostile round 28a, L11:
    // a held lock read "starting the schema migration: database is locked").
    return sqlite_error(db, rc,
                        rc == SQLITE_BUSY ? "taking the state database's write lock to check its schema "
                                            "version: another process (a sqlite3 shell, a backup tool) "
                                            "holds a write lock on the file and did not let go within the "
                                            "busy timeout; end its transaction and start again"
                                          : "taking the state database's write lock to check its schema version");
  }
  // Passes `st` through; an error first rolls the transaction back (if SQLite has not
  // already), so that a failed migration leaves the database as it was.
  auto rollback_with = [db](sim::Status st) {
    if (!st.is_ok() && sqlite3_get_autocommit(db) == 0)
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return st;
  };
  auto current = schema_version(db);
  if (!current) return rollback_with(current.status());
  const int latest = list.back().version;
  if (*current > latest)
    return rollback_with(sim::precondition_failed(
        "the state database is at schema version " + std::to_string(*current) +
        ", newer than this afasim knows (" + std::to_string(latest) +
        "); it was written by a newer afasim: run that one, or use another state directory"));
  if (*current < 0)
    return rollback_with(sim::Status(
        sim::Code::kInternal, "the state database has schema version " + std::to_string(*current) +
                                  ", which no afasim writes"));
  if (*current == latest) return rollback_with(exec(db, "COMMIT", "ending the schema check"));

  if (*current == 0) {
    AFASIM_RETURN_IF_ERROR(rollback_with(exec(
        db, "PRAGMA application_id = " + std::to_string(kApplicationId), "marking the database")));
  }
  for (const Migration& m : list) {
    if (m.version <= *current) continue;
    AFASIM_RETURN_IF_ERROR(rollback_with(exec(db, std::string(m.sql),
                                              "schema migration " + std::to_string(m.version) +
                                                  " (" + std::string(m.description) + ")")));
  }
  AFASIM_RETURN_IF_ERROR(rollback_with(
      exec(db, "PRAGMA user_version = " + std::to_string(latest), "setting the schema version")));
  return rollback_with(exec(db, "COMMIT", "committing the schema migration"));
}

}  // namespace afasim::store
