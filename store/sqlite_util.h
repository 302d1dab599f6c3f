// Small RAII helpers over the SQLite C API, shared by store/ (not a public interface).
//
// Statement owns one prepared statement; Database owns one connection. Errors come back as
// sim::Status with SQLite's own message and a caller-supplied context, classified by
// code_for_sqlite. Not thread-safe: a connection and its statements belong to one thread.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "sim/status.h"

namespace afasim::store {

// The Status code for an SQLite result code: a full disk (SQLITE_FULL) → kNoSpace; the host's
// disk or file system refusing otherwise (IOERR, READONLY, CANTOPEN, PERM, BUSY, LOCKED, NOMEM)
// → kUnavailable;
// anything else (constraint, corrupt, misuse...) → kInternal.
sim::Code code_for_sqlite(int rc);

// A Status for the failed SQLite call that returned `rc` on `db`:
// "<context>: <sqlite message> (<sqlite code name>)". `db` may be null.
sim::Status sqlite_error(sqlite3* db, int rc, std::string_view context);

// Runs `sql` (one or more statements, no results wanted). Error: sqlite_error(context).
sim::Status exec(sqlite3* db, const std::string& sql, std::string_view context);

// One column value of a row: NULL, an INTEGER or a TEXT (the only types the STRICT tables
// of store/schema.cpp use).
using Value = std::variant<std::monostate, std::int64_t, std::string>;

class Statement {
 public:
  Statement() = default;
  ~Statement();
  Statement(Statement&& o) noexcept : stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Compiles `sql` (one statement). Error: sqlite_error with the SQL in the context.
  static sim::Result<Statement> prepare(sqlite3* db, std::string_view sql);

  // Binders take 1-based parameter indexes. A wrong index is a programming error (assert).
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::optional<std::int64_t>& value);  // nullopt → NULL
  Statement& bind_null(int index);
  Statement& bind(int index, const Value& value);

  // Runs one step: SQLITE_ROW, SQLITE_DONE or an error code.
  int step();
  // Runs the statement to completion expecting no rows, then resets it. Error:
  // sqlite_error(context).
  sim::Status run(std::string_view context);
  // Makes the statement ready to run again and clears its bindings.
  void reset();

  std::int64_t column_int64(int column) const;
  std::string column_text(int column) const;
  std::optional<std::int64_t> column_optional_int64(int column) const;  // NULL → nullopt
  bool column_is_null(int column) const;
  // The column as a Value: NULL, INTEGER or TEXT (a REAL or BLOB reads as its text).
  Value column_value(int column) const;

  sqlite3* db() const { return sqlite3_db_handle(stmt_); }

 private:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace afasim::store
