// Helpers for the store tests: temporary state directories and a full-text dump of a
// Snapshot, so that "the same state" is one string comparison that shows the difference.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "controller/array.h"
#include "controller/journal.h"
#include "store/sqlite_store.h"

namespace afasim::store::testing {

// A fresh directory under /tmp (or $TMPDIR), removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Every field of every object, one object per line, objects by id.
std::string dump(const controller::Snapshot& s);
// The same for what an Array holds (its managed objects and its in-memory events).
std::string dump(const controller::Array& a);

// Writes `bytes` to `path`, replacing it.
void write_file(const std::string& path, const std::string& bytes);

// SqliteStore::open that must succeed (REQUIRE, with the status on failure).
inline std::unique_ptr<SqliteStore> open_ok(const std::string& dir, SqliteStoreOptions o = {}) {
  auto s = SqliteStore::open(dir, o);
  INFO(s.status().to_string());
  REQUIRE(s.is_ok());
  return std::move(s).value();
}

// The same, through the SQLite VFS named `vfs` (a FaultInjectionVfs's name).
inline std::unique_ptr<SqliteStore> open_ok(const std::string& dir, const std::string& vfs) {
  SqliteStoreOptions o;
  o.vfs = vfs;
  return open_ok(dir, o);
}

// SqliteStore::load that must succeed.
inline controller::Snapshot load_ok(SqliteStore& s, std::size_t max_events = 1'000'000) {
  auto snap = s.load(max_events);
  INFO(snap.status().to_string());
  REQUIRE(snap.is_ok());
  return std::move(snap).value();
}

}  // namespace afasim::store::testing
