// store::SqliteStore — the array's configuration and metadata in SQLite (DESIGN.md layer 7).
//
// The durable controller::Journal: pools, volumes, hosts (with initiators), mappings, QoS
// policies, the event log and the model's key/value meta live in `<state_dir>/afasim.db`,
// one table per kind (docs/persistence.md gives the schema). The model hands each
// management change to commit() as one ChangeSet before applying it; commit() makes it
// durable in one SQLite transaction, all or nothing. At boot, load() gives back the
// Snapshot that controller::Array::open restores.
//
// Durability: WAL journal with synchronous=FULL, so a commit that returned ok survives a
// crash of the afasim process and of the host. Exclusivity: the store holds an advisory
// lock (flock on `<state_dir>/LOCK`) for its whole life, so a second afasim on the same
// state directory is refused at open.
//
// Thread-safety: none. A SqliteStore belongs to the model thread (DESIGN.md), like the
// Array that commits to it; other threads reach it through the serve runtime's inbox.
// Do not fork while a store is open and use it in the child.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "controller/array.h"
#include "controller/journal.h"
#include "sim/status.h"

namespace afasim::store {

struct SqliteStoreOptions {
  // How long a statement waits for a lock held by another connection (an operator's
  // `sqlite3` shell reading the file, say) before failing with kUnavailable. Milliseconds,
  // 0..600000. Assumption: 5 s is longer than any read of this small database takes, and
  // short enough that a stuck reader shows up as an error rather than a hung API call.
  int busy_timeout_ms = 5000;
  // Upper bound on the database's size in bytes, rounded down to whole pages and never
  // below the file's current size; 0 = SQLite's own limit. A commit that would grow the
  // database past it fails with kUnavailable like a full disk. Lets tests reach the
  // full-disk path; also a guard for a small state volume. >= 0.
  std::int64_t max_db_bytes = 0;
  // The SQLite VFS to open the database through, "" for SQLite's default. Tests pass a
  // FaultInjectionVfs's name (store/fault_injection_vfs.h).
  std::string vfs;
};

class SqliteStore : public controller::Journal {
 public:
  // The database's file name inside the state directory, and the lock file's.
  static constexpr const char* kDbFileName = "afasim.db";
  static constexpr const char* kLockFileName = "LOCK";

  // Opens the store in `state_dir`, creating the directory (and parents) and an empty
  // database if missing, and migrating an older database to this binary's schema. On
  // success the store holds the directory's lock until it is destroyed. Errors (each
  // message names the path):
  //   kInvalidArgument     state_dir is empty or not a directory; afasim.db is not an
  //                        afasim SQLite database (garbage bytes, another program's file);
  //                        an option is out of range
  //   kPreconditionFailed  afasim.db was written by a newer afasim (schema version too new)
  //   kUnavailable         the directory is in use by another afasim process; it cannot be
  //                        created or opened (permission denied, read-only, disk full)
  //   kInternal            SQLite failed otherwise (a corrupt database)
  // A file that fails the checks above is never written to: WAL mode and the migrations
  // come after them, and a failed migration is rolled back. On success the directory is
  // fsynced (and its parent, when open() created it), so the new file's name is durable.
  static sim::Result<std::unique_ptr<SqliteStore>> open(const std::string& state_dir,
                                                        const SqliteStoreOptions& options = {});

  // Closes the database (checkpointing the WAL into it) and releases the lock.
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // Everything the store holds, objects by ascending id, with the newest `max_events`
  // events (oldest first), in one read transaction. Errors: kInternal when a row cannot be
  // turned back into its object (an unknown enum name: the file was edited by hand or
  // written by a newer afasim); kUnavailable on an I/O error.
  sim::Result<controller::Snapshot> load(std::size_t max_events);

  // controller::Journal. Applies `changes` in one BEGIN IMMEDIATE ... COMMIT transaction:
  // first every delete, then the puts, parents before children (a put inserts or replaces
  // the object with that id, its DataPacs, thresholds or initiators included; an id both put
  // and deleted ends up deleted, as in MemoryJournal), then the events are appended and the
  // meta pairs upserted. References between objects are checked at COMMIT. On any error
  // the transaction is rolled back and the store is exactly as before; errors:
  //   kNoSpace      the disk is full (SQLITE_FULL)
  //   kUnavailable  the disk is read-only or failing (SQLITE_IOERR/READONLY...)
  //   kInternal     a constraint failed (a duplicate name, LUN, initiator or event id, a
  //                 reference to a missing object): the model sent an inconsistent change
  // The message says what failed; it never throws. An empty ChangeSet writes nothing and
  // returns ok.
  sim::Status commit(const controller::ChangeSet& changes) override;

  // A page of the event log, newest first: `limit` events after skipping the `offset`
  // newest; `total` is the number of events stored. Lets the API page past what the Array
  // keeps in memory. Errors: kInvalidArgument for a negative offset or limit; kUnavailable
  // on an I/O error.
  sim::Result<controller::Page<controller::Event>> events(std::int64_t offset, std::int64_t limit);

  const std::string& state_dir() const;
  std::string db_path() const;
  // The schema version this binary writes (migrations().back().version).
  static int schema_version();

 private:
  class Impl;  // the connection, the lock and the statements (sqlite_store.cpp)
  explicit SqliteStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace afasim::store
