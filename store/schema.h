// The SQLite schema of the state database and the migrations that build it.
//
// The schema version lives in the database header (PRAGMA user_version). Migration N takes
// a database from version N-1 to N; migrate() applies the missing ones in order, in one
// transaction, so a database is always at exactly one known version. To change the schema,
// append a migration (never edit one that has shipped) and describe it in
// docs/persistence.md. Not thread-safe: called on the store's connection only.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "sim/status.h"

namespace afasim::store {

struct Migration {
  int version = 0;               // the user_version the database has after this migration
  std::string_view description;  // one line, for the docs and error messages
  std::string_view sql;          // statements run inside migrate()'s transaction
};

// Marks an afasim database in its header (PRAGMA application_id): the bytes "AFAS".
inline constexpr std::int32_t kApplicationId = 0x41464153;

// The migrations of this binary, versions 1..N in order.
std::span<const Migration> migrations();

// The version a database has after all of migrations(): what this binary writes.
int latest_schema_version();

// Reads PRAGMA user_version. Error: the SQLite error (kInternal for a file that is not a
// database; kUnavailable for I/O).
sim::Result<int> schema_version(sqlite3* db);

// Applies the migrations of `list` newer than the database's user_version, in one
// BEGIN IMMEDIATE transaction that also sets user_version (and application_id, on a new
// database). On success the database is at list.back().version. Errors, with the database
// left exactly as it was:
//   kPreconditionFailed  the database is newer than `list` knows (written by a newer afasim)
//   kUnavailable/kInternal  a migration's SQL failed (the message names the migration)
// REQUIRES: `list` is non-empty and its versions are 1, 2, ... in order; no transaction is
// open on `db`.
sim::Status migrate(sqlite3* db, std::span<const Migration> list);

}  // namespace afasim::store
