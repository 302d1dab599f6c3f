#include "store/state_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "store/schema.h"
#include "store/sqlite_util.h"

namespace afasim::store {

namespace fs = std::filesystem;
using sim::Status;

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

namespace {

// ---------------------------------------------------------------------------------------
// Owning handles

std::string errno_text(int err) {
  return std::strerror(err);
}

// ---------------------------------------------------------------------------------------
// Opening: the directory, the lock, the database

}  // namespace

// fsync(2) on a directory, so that the entries created in it survive a host crash.
Status sync_directory(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0 || ::fsync(fd.get()) != 0)
    return sim::unavailable("cannot sync directory " + dir + ": " + errno_text(errno));
  return Status::ok();
}

// Creates `state_dir` if it is missing (`created` tells whether it did).
Status prepare_state_dir(const std::string& state_dir, bool& created) {
  created = false;
  if (state_dir.empty()) return sim::invalid_argument("the state directory path is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(state_dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      return sim::invalid_argument("state directory " + state_dir +
                                   " exists and is not a directory");
    return Status::ok();
  }
  // ENOENT and ENOTDIR (a component is a file) are for create_directories to report.
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    return sim::unavailable("cannot reach state directory " + state_dir + ": " + ec.message());
  // A symbolic link to nowhere exists for the directory's parent but not for status(): say so
  // ("cannot create ...: File exists" named neither the link nor its target).
  if (std::error_code link_ec; fs::is_symlink(fs::symlink_status(state_dir, link_ec)))
    return sim::invalid_argument("state directory " + state_dir + " is a symbolic link to " +
                                 fs::read_symlink(state_dir, link_ec).string() + ", which does not exist");
  fs::create_directories(state_dir, ec);
  if (ec)
    return sim::unavailable("cannot create state directory " + state_dir + ": " + ec.message());
  created = true;
  return Status::ok();
}

namespace {
// The pid written in the lock file by its holder, for the "in use" message; "" if none.
std::string lock_holder(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::string pid(buf, static_cast<std::size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

}  // namespace

// Takes the directory's exclusive lock. flock(2) locks belong to the open file description,
// so the kernel drops it when the process dies, however it dies: a stale LOCK file never
// keeps the array from starting. The lock is on the directory itself, which cannot be
// deleted while it holds the state: on the LOCK file alone, deleting the file let a second
// server start beside the first on the same files (hostile round 25b: 2,000 of 2,000 blocks
// overwritten). The LOCK file names the holder's pid, for the message.
sim::Result<UniqueFd> acquire_lock(const std::string& state_dir) {
  const std::string path = (fs::path(state_dir) / SqliteStore::kLockFileName).string();
  UniqueFd dir(::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0)
    return sim::unavailable("cannot open the state directory " + state_dir + ": " + errno_text(errno));
  int rc;
  do {
    rc = ::flock(dir.get(), LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    if (errno == EWOULDBLOCK) {
      UniqueFd named(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      const std::string pid = named.get() < 0 ? "" : lock_holder(named.get());
      return sim::unavailable(
          "state directory " + state_dir + " is in use by another afasim process" +
          (pid.empty() ? "" : " (pid " + pid + ")") + ": the directory is locked");
    }
    return sim::unavailable("cannot lock the state directory " + state_dir + ": " + errno_text(errno));
  }
  // The holder's pid, for the message above. Informational only: if it cannot be written
  // (disk full) the lock still holds.
  UniqueFd named(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (named.get() >= 0 && ::ftruncate(named.get(), 0) == 0) {
    [[maybe_unused]] ssize_t n = ::pwrite(named.get(), pid.data(), pid.size(), 0);
  }
  return dir;
}

namespace {
// One integer from a PRAGMA or query that returns one row. On failure `rc` (if given)
// receives SQLite's result code.
sim::Result<std::int64_t> query_int(sqlite3* db, const std::string& sql, int* rc_out = nullptr) {
  auto stmt = Statement::prepare(db, sql);
  if (!stmt) {
    if (rc_out != nullptr) *rc_out = sqlite3_extended_errcode(db);
    return stmt.status();
  }
  const int rc = stmt->step();
  if (rc_out != nullptr) *rc_out = rc;
  if (rc != SQLITE_ROW) return sqlite_error(db, rc, sql);
  return stmt->column_int64(0);
}

// Refuses a file that is not this program's database, without writing to it.
Status check_database(sqlite3* db, const std::string& path) {
  // The first read of the file is where SQLite notices a file that is not a database.
  int rc = SQLITE_OK;
  auto app_id = query_int(db, "PRAGMA application_id", &rc);
  if (!app_id) {
    if ((rc & 0xff) == SQLITE_NOTADB)
      return sim::invalid_argument(path +
                                   " is not a SQLite database; move it aside or use another "
                                   "state directory");
    if ((rc & 0xff) == SQLITE_CORRUPT)
      return {sim::Code::kInternal,
              path + " is a corrupt SQLite database: " + app_id.status().message()};
    return {app_id.status().code(), "cannot read " + path + ": " + app_id.status().message()};
  }
  auto version = schema_version(db);
  if (!version)
    return {version.status().code(), "cannot read " + path + ": " + version.status().message()};
  auto objects = query_int(db, "SELECT count(*) FROM sqlite_schema");
  if (!objects)
    return {objects.status().code(), "cannot read " + path + ": " + objects.status().message()};

  if (*app_id != 0 && *app_id != kApplicationId) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08x", static_cast<unsigned>(*app_id));
    return sim::invalid_argument(path +
                                 " is a SQLite database of another program (application_id " + hex +
                                 "), not afasim's; move it aside or use another state directory");
  }
  if (*app_id == 0 && (*version != 0 || *objects != 0))
    return sim::invalid_argument(path + " is a SQLite database but not an afasim one (it holds " +
                                 std::to_string(*objects) +
                                 " schema objects and no afasim mark); move it aside or use "
                                 "another state directory");
  if (*version > latest_schema_version())
    return sim::precondition_failed(
        path + " is at schema version " + std::to_string(*version) +
        ", newer than this afasim knows (" + std::to_string(latest_schema_version()) +
        "): it was written by a newer afasim; run that one, or use another state directory");
  return Status::ok();
}

// Connection settings, applied once the file is known to be ours.
Status configure(sqlite3* db, const std::string& path, const SqliteStoreOptions& options) {
  // WAL: a commit appends to the log and never rewrites the database in place, so a crash
  // at any point leaves either the old or the new state; readers (an operator's sqlite3
  // shell) never block the model's writes.
  {
    auto stmt = Statement::prepare(db, "PRAGMA journal_mode = WAL");
    if (!stmt) return stmt.status();
    const int rc = stmt->step();
    if (rc != SQLITE_ROW) return sqlite_error(db, rc, "setting WAL mode on " + path);
    if (stmt->column_text(0) != "wal")
      return sim::unavailable("cannot use WAL mode on " + path + " (got journal_mode " +
                              stmt->column_text(0) +
                              "); is the state directory on a network "
                              "file system?");
  }
  // FULL: the WAL is fsynced at every commit, so an ok commit survives a host crash or power
  // loss too (NORMAL would survive only a crash of the process).
  AFASIM_RETURN_IF_ERROR(exec(db, "PRAGMA synchronous = FULL", "setting synchronous on " + path));
  AFASIM_RETURN_IF_ERROR(exec(db, "PRAGMA foreign_keys = ON", "enabling foreign keys on " + path));
  auto fk = query_int(db, "PRAGMA foreign_keys");
  if (!fk || *fk != 1)
    return {sim::Code::kInternal, "this SQLite build cannot enforce foreign keys"};
  if (options.max_db_bytes > 0) {
    auto page_bytes = query_int(db, "PRAGMA page_size");
    if (!page_bytes) return page_bytes.status();
    const std::int64_t pages = std::max<std::int64_t>(1, options.max_db_bytes / *page_bytes);
    AFASIM_RETURN_IF_ERROR(exec(db, "PRAGMA max_page_count = " + std::to_string(pages),
                                "bounding the size of " + path));
  }
  return Status::ok();
}

}  // namespace

sim::Result<UniqueDb> open_database(const std::string& path, const SqliteStoreOptions& options) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      options.vfs.empty() ? nullptr : options.vfs.c_str());
  UniqueDb db(raw);
  if (rc != SQLITE_OK) {
    Status st = sqlite_error(db.get(), rc, "cannot open the state database " + path);
    return Status(sim::Code::kUnavailable, st.message());
  }
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), options.busy_timeout_ms);
  // Defensive mode: no statement on this connection can corrupt the file on purpose
  // (writable_schema and the like).
  sqlite3_db_config(db.get(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  AFASIM_RETURN_IF_ERROR(check_database(db.get(), path));
  AFASIM_RETURN_IF_ERROR(configure(db.get(), path, options));
  Status st = migrate(db.get(), migrations());
  if (!st.is_ok()) return Status(st.code(), path + ": " + st.message());
  return db;
}

}  // namespace afasim::store
