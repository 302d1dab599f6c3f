// Opening a state directory: the directory itself, its lock file and its SQLite database
// (docs/persistence.md "The lock", "Durability", "Migrations"). Internal to store/.
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>
#include <utility>

#include "sim/status.h"
#include "store/sqlite_store.h"

namespace afasim::store {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using UniqueDb = std::unique_ptr<sqlite3, DbCloser>;

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  int get() const { return fd_; }

 private:
  int fd_;
};

// fsync(2) on a directory, so that the entries created in it survive a host crash.
// Error: kUnavailable naming the directory.
sim::Status sync_directory(const std::string& dir);

// Creates `state_dir` if it is missing (`created` tells whether it did). Errors:
// kInvalidArgument (empty, or a file), kUnavailable (cannot be created or reached).
sim::Status prepare_state_dir(const std::string& state_dir, bool& created);

// Takes the directory's exclusive flock on <state_dir>/LOCK and writes this pid into it.
// Error: kUnavailable, naming the holder's pid when another process has it.
sim::Result<UniqueFd> acquire_lock(const std::string& state_dir);

// Opens (creating) the database at `path`, refuses a file that is not afasim's or is newer
// than this binary, sets WAL + synchronous=FULL + foreign keys, and migrates it. Errors as
// SqliteStore::open lists them.
sim::Result<UniqueDb> open_database(const std::string& path, const SqliteStoreOptions& options);

}  // namespace afasim::store
