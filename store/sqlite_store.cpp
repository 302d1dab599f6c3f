#include "store/sqlite_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>
#include <unordered_map>

#include "sim/assert.h"
#include "store/schema.h"
#include "store/sqlite_util.h"

namespace afasim::store {

namespace fs = std::filesystem;
using controller::ChangeSet;
using controller::Id;
using controller::Snapshot;
using sim::Status;

namespace {

// ---------------------------------------------------------------------------------------
// Owning handles

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using UniqueDb = std::unique_ptr<sqlite3, DbCloser>;

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string errno_text(int err) {
  return std::strerror(err);
}

// ---------------------------------------------------------------------------------------
// Opening: the directory, the lock, the database

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
  fs::create_directories(state_dir, ec);
  if (ec)
    return sim::unavailable("cannot create state directory " + state_dir + ": " + ec.message());
  created = true;
  return Status::ok();
}

// The pid written in the lock file by its holder, for the "in use" message; "" if none.
std::string lock_holder(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::string pid(buf, static_cast<std::size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

// Takes the directory's exclusive lock. flock(2) locks belong to the open file description,
// so the kernel drops it when the process dies, however it dies: a stale LOCK file never
// keeps the array from starting.
sim::Result<UniqueFd> acquire_lock(const std::string& state_dir) {
  const std::string path = (fs::path(state_dir) / SqliteStore::kLockFileName).string();
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0)
    return sim::unavailable("cannot open lock file " + path + ": " + errno_text(errno));
  int rc;
  do {
    rc = ::flock(fd.get(), LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    if (errno == EWOULDBLOCK) {
      const std::string pid = lock_holder(fd.get());
      return sim::unavailable(
          "state directory " + state_dir + " is in use by another afasim process" +
          (pid.empty() ? "" : " (pid " + pid + ")") + ": " + path + " is locked");
    }
    return sim::unavailable("cannot lock " + path + ": " + errno_text(errno));
  }
  // The holder's pid, for the message above. Informational only: if it cannot be written
  // (disk full) the lock still holds.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) == 0) {
    [[maybe_unused]] ssize_t n = ::pwrite(fd.get(), pid.data(), pid.size(), 0);
  }
  return fd;
}

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

sim::Result<UniqueDb> open_database(const std::string& path, const SqliteStoreOptions& options) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
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

// ---------------------------------------------------------------------------------------
// Rows ↔ objects

// The enum value whose to_string() name is `s`. Walks the values 0, 1, ... until
// to_string answers "?" (past the last one), so that a value added to an enum is loadable
// without touching this file.
template <typename E, typename Name>
std::optional<E> parse_enum(std::string_view s, Name name) {
  for (int i = 0; i < 256; ++i) {
    const E e = static_cast<E>(i);
    const std::string_view n = name(e);
    if (n == "?") break;
    if (n == s) return e;
  }
  return std::nullopt;
}

Status unknown_name(const std::string& object, const char* field, const std::string& value) {
  return {sim::Code::kInternal, "state database: " + object + " has an unknown " + field + " \"" +
                                    value + "\" (written by a newer afasim, or edited by hand)"};
}

std::string obj(const char* kind, Id id) {
  return std::string(kind) + " " + std::to_string(id);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Impl

class SqliteStore::Impl {
 public:
  Impl(std::string state_dir, UniqueFd lock, UniqueDb db)
      : state_dir(std::move(state_dir)), lock(std::move(lock)), db(std::move(db)) {}

  // The cached statement for `sql`, compiled on first use. Statements are reset after
  // every use, so none holds a read transaction open between calls.
  sim::Result<Statement*> statement(const std::string& sql) {
    auto it = statements.find(sql);
    if (it != statements.end()) return it->second.get();
    auto stmt = Statement::prepare(db.get(), sql);
    if (!stmt) return stmt.status();
    auto owned = std::make_unique<Statement>(std::move(stmt).value());
    Statement* p = owned.get();
    statements.emplace(sql, std::move(owned));
    return p;
  }

  // Runs `sql` with `bind` applied, expecting no rows.
  Status run(const std::string& sql, const std::function<void(Statement&)>& bind,
             const std::string& context) {
    auto stmt = statement(sql);
    if (!stmt) return stmt.status();
    bind(**stmt);
    return (*stmt)->run(context);
  }

  // Runs `sql` and calls `row` for each result row; stops at the first error.
  Status for_each_row(const std::string& sql, const std::function<void(Statement&)>& bind,
                      const std::function<Status(const Statement&)>& row) {
    auto stmt = statement(sql);
    if (!stmt) return stmt.status();
    Statement& s = **stmt;
    bind(s);
    for (;;) {
      const int rc = s.step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        Status st = sqlite_error(db.get(), rc, "reading (" + sql.substr(0, 60) + "...)");
        s.reset();
        return st;
      }
      Status st = row(s);
      if (!st.is_ok()) {
        s.reset();
        return st;
      }
    }
    s.reset();
    return Status::ok();
  }

  Status write(const ChangeSet& c);
  Status finish_commit();
  void rollback() {
    if (sqlite3_get_autocommit(db.get()) == 0)
      sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status load(Snapshot& s, std::size_t max_events);

  // Every method starts outside a transaction. One is open only if an earlier ROLLBACK
  // failed (an I/O error); try once more rather than commit into it.
  Status no_open_transaction() {
    rollback();
    if (sqlite3_get_autocommit(db.get()) != 0) return Status::ok();
    return sim::unavailable("store: a failed transaction could not be rolled back: " +
                            std::string(sqlite3_errmsg(db.get())));
  }

  std::string state_dir;
  // Declared in this order so that they are destroyed statements first, then the
  // connection (which checkpoints the WAL), then the lock.
  UniqueFd lock;
  UniqueDb db;
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements;

 private:
  Status delete_ids(const char* table, const std::vector<Id>& ids);
  Status put_pools(const ChangeSet& c, const std::set<Id>& deleted);
  Status put_qos_policies(const ChangeSet& c, const std::set<Id>& deleted);
  Status put_volumes(const ChangeSet& c, const std::set<Id>& deleted);
  Status put_hosts(const ChangeSet& c, const std::set<Id>& deleted);
  Status put_mappings(const ChangeSet& c, const std::set<Id>& deleted);
  Status put_extents(const ChangeSet& c, const std::set<Id>& deleted_volumes);
  Status append_events(const ChangeSet& c);
  Status upsert_meta(const ChangeSet& c);
  Status describe_broken_references();

  Status load_pools(Snapshot& s);
  Status load_qos_policies(Snapshot& s);
  Status load_volumes(Snapshot& s);
  Status load_hosts(Snapshot& s);
  Status load_mappings(Snapshot& s);
  Status load_extents(Snapshot& s);
  Status load_events(Snapshot& s, std::size_t max_events);
  Status load_meta(Snapshot& s);
};

// ---------------------------------------------------------------------------------------
// Writing

namespace {
std::set<Id> as_set(const std::vector<Id>& ids) {
  return {ids.begin(), ids.end()};
}
}  // namespace

Status SqliteStore::Impl::write(const ChangeSet& c) {
  // Deletes first: they free names, DataPacs, LUNs and initiators that puts in the same
  // ChangeSet may take. References are checked at COMMIT, so the order across kinds is
  // free; children go first anyway.
  AFASIM_RETURN_IF_ERROR(delete_ids("mappings", c.delete_mappings));
  AFASIM_RETURN_IF_ERROR(delete_ids("volumes", c.delete_volumes));
  AFASIM_RETURN_IF_ERROR(delete_ids("hosts", c.delete_hosts));
  AFASIM_RETURN_IF_ERROR(delete_ids("qos_policies", c.delete_qos_policies));
  AFASIM_RETURN_IF_ERROR(delete_ids("pools", c.delete_pools));
  AFASIM_RETURN_IF_ERROR(put_pools(c, as_set(c.delete_pools)));
  AFASIM_RETURN_IF_ERROR(put_qos_policies(c, as_set(c.delete_qos_policies)));
  AFASIM_RETURN_IF_ERROR(put_volumes(c, as_set(c.delete_volumes)));
  AFASIM_RETURN_IF_ERROR(put_hosts(c, as_set(c.delete_hosts)));
  AFASIM_RETURN_IF_ERROR(put_mappings(c, as_set(c.delete_mappings)));
  AFASIM_RETURN_IF_ERROR(put_extents(c, as_set(c.delete_volumes)));
  AFASIM_RETURN_IF_ERROR(append_events(c));
  return upsert_meta(c);
}

Status SqliteStore::Impl::delete_ids(const char* table, const std::vector<Id>& ids) {
  const std::string sql = std::string("DELETE FROM ") + table + " WHERE id = ?1";
  for (Id id : ids)
    AFASIM_RETURN_IF_ERROR(run(
        sql, [&](Statement& s) { s.bind(1, id); },
        std::string("deleting ") + table + " row " + std::to_string(id)));
  return Status::ok();
}

Status SqliteStore::Impl::put_pools(const ChangeSet& c, const std::set<Id>& deleted) {
  std::vector<const controller::Pool*> pools;
  for (const auto& p : c.put_pools)
    if (!deleted.count(p.id)) pools.push_back(&p);
  for (const auto* p : pools) {
    AFASIM_RETURN_IF_ERROR(run(
        "INSERT INTO pools (id, name, revision) VALUES (?1, ?2, ?3) "
        "ON CONFLICT (id) DO UPDATE SET name = excluded.name, revision = excluded.revision",
        [&](Statement& s) {
          s.bind(1, p->id).bind(2, p->name).bind(3, static_cast<std::int64_t>(p->revision));
        },
        "putting pool " + std::to_string(p->id) + " \"" + p->name + "\""));
  }
  // Child rows are cleared for every pool before any is written back, so that DataPacs can
  // move between two pools of the same ChangeSet.
  for (const auto* p : pools) {
    const std::string context =
        "rewriting the DataPacs and thresholds of pool " + std::to_string(p->id);
    AFASIM_RETURN_IF_ERROR(run(
        "DELETE FROM pool_datapacs WHERE pool_id = ?1", [&](Statement& s) { s.bind(1, p->id); },
        context));
    AFASIM_RETURN_IF_ERROR(run(
        "DELETE FROM pool_space_thresholds WHERE pool_id = ?1",
        [&](Statement& s) { s.bind(1, p->id); }, context));
  }
  for (const auto* p : pools) {
    for (Id dp : p->datapac_ids)
      AFASIM_RETURN_IF_ERROR(run(
          "INSERT INTO pool_datapacs (pool_id, datapac_id) VALUES (?1, ?2)",
          [&](Statement& s) { s.bind(1, p->id).bind(2, dp); },
          "putting DataPac " + std::to_string(dp) + " in pool " + std::to_string(p->id)));
    for (std::size_t i = 0; i < p->space_thresholds_percent.size(); ++i)
      AFASIM_RETURN_IF_ERROR(run(
          "INSERT INTO pool_space_thresholds (pool_id, position, percent) VALUES (?1, ?2, ?3)",
          [&](Statement& s) {
            s.bind(1, p->id)
                .bind(2, static_cast<std::int64_t>(i))
                .bind(3, static_cast<std::int64_t>(p->space_thresholds_percent[i]));
          },
          "putting the space thresholds of pool " + std::to_string(p->id)));
  }
  return Status::ok();
}

Status SqliteStore::Impl::put_qos_policies(const ChangeSet& c, const std::set<Id>& deleted) {
  for (const auto& q : c.put_qos_policies) {
    if (deleted.count(q.id)) continue;
    AFASIM_RETURN_IF_ERROR(run(
        "INSERT INTO qos_policies (id, name, min_iops, max_iops, burst_iops, revision) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id) DO UPDATE SET name = excluded.name, "
        "min_iops = excluded.min_iops, max_iops = excluded.max_iops, "
        "burst_iops = excluded.burst_iops, revision = excluded.revision",
        [&](Statement& s) {
          s.bind(1, q.id)
              .bind(2, q.name)
              .bind(3, q.qos.min_iops)
              .bind(4, q.qos.max_iops)
              .bind(5, q.qos.burst_iops)
              .bind(6, static_cast<std::int64_t>(q.revision));
        },
        "putting QoS policy " + std::to_string(q.id) + " \"" + q.name + "\""));
  }
  return Status::ok();
}

Status SqliteStore::Impl::put_volumes(const ChangeSet& c, const std::set<Id>& deleted) {
  for (const auto& v : c.put_volumes) {
    if (deleted.count(v.id)) continue;
    AFASIM_RETURN_IF_ERROR(run(
        "INSERT INTO volumes (id, name, pool_id, capacity_bytes, raid_type, provisioning, "
        "preferred_controller, min_iops, max_iops, burst_iops, qos_policy_id, "
        "state, created_time_ns, revision) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
        "ON CONFLICT (id) DO UPDATE SET name = excluded.name, pool_id = excluded.pool_id, "
        "capacity_bytes = excluded.capacity_bytes, raid_type = excluded.raid_type, "
        "provisioning = excluded.provisioning, "
        "preferred_controller = excluded.preferred_controller, min_iops = excluded.min_iops, "
        "max_iops = excluded.max_iops, burst_iops = excluded.burst_iops, "
        "qos_policy_id = excluded.qos_policy_id, "
        "state = excluded.state, created_time_ns = excluded.created_time_ns, "
        "revision = excluded.revision",
        [&](Statement& s) {
          s.bind(1, v.id)
              .bind(2, v.name)
              .bind(3, v.pool_id)
              .bind(4, v.capacity_bytes)
              .bind(5, raid::raid_type_name(v.raid_type))
              .bind(6, controller::to_string(v.provisioning))
              .bind(7, v.preferred_controller)
              .bind(8, v.qos.min_iops)
              .bind(9, v.qos.max_iops)
              .bind(10, v.qos.burst_iops)
              .bind(11, v.qos_policy_id)
              .bind(12, controller::to_string(v.state))
              .bind(13, v.created_time_ns)
              .bind(14, static_cast<std::int64_t>(v.revision));
        },
        "putting volume " + std::to_string(v.id) + " \"" + v.name + "\""));
  }
  return Status::ok();
}

Status SqliteStore::Impl::put_hosts(const ChangeSet& c, const std::set<Id>& deleted) {
  std::vector<const controller::Host*> hosts;
  for (const auto& h : c.put_hosts)
    if (!deleted.count(h.id)) hosts.push_back(&h);
  for (const auto* h : hosts) {
    AFASIM_RETURN_IF_ERROR(run(
        "INSERT INTO hosts (id, name, description, revision) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (id) DO UPDATE SET name = excluded.name, "
        "description = excluded.description, revision = excluded.revision",
        [&](Statement& s) {
          s.bind(1, h->id)
              .bind(2, h->name)
              .bind(3, h->description)
              .bind(4, static_cast<std::int64_t>(h->revision));
        },
        "putting host " + std::to_string(h->id) + " \"" + h->name + "\""));
  }
  // As for pools: clear all, then write all, so an initiator can move between two hosts of
  // the same ChangeSet.
  for (const auto* h : hosts)
    AFASIM_RETURN_IF_ERROR(run(
        "DELETE FROM host_initiators WHERE host_id = ?1", [&](Statement& s) { s.bind(1, h->id); },
        "rewriting the initiators of host " + std::to_string(h->id)));
  for (const auto* h : hosts) {
    for (std::size_t i = 0; i < h->initiators.size(); ++i) {
      const controller::Initiator& ini = h->initiators[i];
      AFASIM_RETURN_IF_ERROR(run(
          "INSERT INTO host_initiators (host_id, position, type, address) VALUES (?1, ?2, ?3, ?4)",
          [&](Statement& s) {
            s.bind(1, h->id)
                .bind(2, static_cast<std::int64_t>(i))
                .bind(3, controller::to_string(ini.type))
                .bind(4, ini.address);
          },
          "putting " + std::string(controller::to_string(ini.type)) + " initiator \"" +
              ini.address + "\" of host " + std::to_string(h->id)));
    }
  }
  return Status::ok();
}

Status SqliteStore::Impl::put_mappings(const ChangeSet& c, const std::set<Id>& deleted) {
  for (const auto& m : c.put_mappings) {
    if (deleted.count(m.id)) continue;
    AFASIM_RETURN_IF_ERROR(run(
        "INSERT INTO mappings (id, volume_id, host_id, lun, access, revision) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id) DO UPDATE SET "
        "volume_id = excluded.volume_id, host_id = excluded.host_id, lun = excluded.lun, "
        "access = excluded.access, revision = excluded.revision",
        [&](Statement& s) {
          s.bind(1, m.id)
              .bind(2, m.volume_id)
              .bind(3, m.host_id)
              .bind(4, m.lun)
              .bind(5, controller::to_string(m.access))
              .bind(6, static_cast<std::int64_t>(m.revision));
        },
        "putting mapping " + std::to_string(m.id) + " (volume " + std::to_string(m.volume_id) +
            " to host " + std::to_string(m.host_id) + " as LUN " + std::to_string(m.lun) + ")"));
  }
  return Status::ok();
}

namespace {
// "3:120 23:4071 ..." — drive index and chunk index of each member.
std::string members_text(const std::vector<pool::ChunkAddr>& members) {
  std::string out;
  for (const auto& m : members) {
    if (!out.empty()) out += ' ';
    out += std::to_string(m.drive) + ':' + std::to_string(m.chunk);
  }
  return out;
}

std::optional<std::vector<pool::ChunkAddr>> parse_members(const std::string& text) {
  std::vector<pool::ChunkAddr> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) return std::nullopt;
    try {
      std::size_t used_drive = 0, used_chunk = 0;
      const long drive = std::stol(item.substr(0, colon), &used_drive);
      const long chunk = std::stol(item.substr(colon + 1), &used_chunk);
      if (used_drive != colon || used_chunk != item.size() - colon - 1 || drive < 0 || chunk < 0 ||
          drive > INT32_MAX || chunk > INT32_MAX)
        return std::nullopt;
      out.push_back({static_cast<std::int32_t>(drive), static_cast<std::int32_t>(chunk)});
    } catch (...) {
      return std::nullopt;
    }
    pos = end + 1;
  }
  if (out.empty() || out.size() > static_cast<std::size_t>(pool::kMaxMembers)) return std::nullopt;
  return out;
}
}  // namespace

Status SqliteStore::Impl::put_extents(const ChangeSet& c, const std::set<Id>& deleted_volumes) {
  for (const auto& [volume_id, index] : c.delete_extents)
    AFASIM_RETURN_IF_ERROR(run(
        "DELETE FROM extents WHERE volume_id = ?1 AND extent_index = ?2",
        [&](Statement& s) { s.bind(1, volume_id).bind(2, index); },
        "deleting extent " + std::to_string(index) + " of volume " + std::to_string(volume_id)));
  for (const auto& e : c.put_extents) {
    if (deleted_volumes.count(e.volume_id)) continue;
    AFASIM_RETURN_IF_ERROR(run(
        "INSERT INTO extents (volume_id, extent_index, raid_type, members, missing) "
        "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (volume_id, extent_index) DO UPDATE SET "
        "raid_type = excluded.raid_type, members = excluded.members, missing = excluded.missing",
        [&](Statement& s) {
          s.bind(1, e.volume_id)
              .bind(2, e.extent_index)
              .bind(3, raid::raid_type_name(e.raid_type))
              .bind(4, members_text(e.members))
              .bind(5, static_cast<std::int64_t>(e.missing));
        },
        "putting extent " + std::to_string(e.extent_index) + " of volume " + std::to_string(e.volume_id)));
  }
  return Status::ok();
}

Status SqliteStore::Impl::load_extents(Snapshot& s) {
  return for_each_row(
      "SELECT volume_id, extent_index, raid_type, members, missing FROM extents "
      "ORDER BY volume_id, extent_index",
      [](Statement&) {}, [&](const Statement& r) -> Status {
        controller::ExtentRecord e;
        e.volume_id = r.column_int64(0);
        e.extent_index = r.column_int64(1);
        const std::string what = "extent " + std::to_string(e.extent_index) + " of " + obj("volume", e.volume_id);
        const std::string raid = r.column_text(2);
        const auto raid_type = raid::parse_raid_type(raid);
        if (!raid_type) return unknown_name(what, "raid_type", raid);
        e.raid_type = *raid_type;
        const std::string text = r.column_text(3);
        auto members = parse_members(text);
        if (!members) return Status(sim::Code::kInternal, "store: " + what + ": members \"" + text + "\" are not drive:chunk pairs");
        e.members = std::move(*members);
        const std::int64_t missing = r.column_int64(4);
        if (missing < 0 || missing >= (1 << e.members.size()))
          return Status(sim::Code::kInternal, "store: " + what + ": missing mask " + std::to_string(missing) + " is out of range");
        e.missing = static_cast<std::uint16_t>(missing);
        s.extents.push_back(std::move(e));
        return Status::ok();
      });
}

Status SqliteStore::Impl::append_events(const ChangeSet& c) {
  for (const auto& e : c.events) {
    AFASIM_RETURN_IF_ERROR(run(
        "INSERT INTO events (id, time_ns, severity, category, object, message, actor) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        [&](Statement& s) {
          s.bind(1, e.id)
              .bind(2, e.time_ns)
              .bind(3, controller::to_string(e.severity))
              .bind(4, e.category)
              .bind(5, e.object)
              .bind(6, e.message)
              .bind(7, e.actor);
        },
        "appending event " + std::to_string(e.id)));
  }
  return Status::ok();
}

Status SqliteStore::Impl::upsert_meta(const ChangeSet& c) {
  for (const auto& [key, value] : c.meta) {
    AFASIM_RETURN_IF_ERROR(run(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [&](Statement& s) { s.bind(1, key).bind(2, value); }, "setting meta \"" + key + "\""));
  }
  return Status::ok();
}

Status SqliteStore::Impl::finish_commit() {
  const int rc = sqlite3_exec(db.get(), "COMMIT", nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) return Status::ok();
  // A deferred reference check fails at COMMIT and leaves the transaction open: say which
  // rows point at what is missing, before the caller rolls back.
  if (rc == SQLITE_CONSTRAINT_FOREIGNKEY && sqlite3_get_autocommit(db.get()) == 0)
    return describe_broken_references();
  return sqlite_error(db.get(), rc, "committing");
}

Status SqliteStore::Impl::describe_broken_references() {
  std::string found;
  int n = 0;
  Status st = for_each_row(
      "PRAGMA foreign_key_check", [](Statement&) {},
      [&](const Statement& s) {
        if (++n <= 5)
          found += (found.empty() ? "" : "; ") + s.column_text(0) + " row " +
                   std::to_string(s.column_int64(1)) + " refers to a missing " + s.column_text(2) +
                   " row";
        return Status::ok();
      });
  if (!st.is_ok()) return st;
  if (n > 5) found += "; and " + std::to_string(n - 5) + " more";
  return {sim::Code::kInternal, "references to missing objects: " + found};
}

// ---------------------------------------------------------------------------------------
// Reading

Status SqliteStore::Impl::load(Snapshot& s, std::size_t max_events) {
  AFASIM_RETURN_IF_ERROR(load_pools(s));
  AFASIM_RETURN_IF_ERROR(load_qos_policies(s));
  AFASIM_RETURN_IF_ERROR(load_volumes(s));
  AFASIM_RETURN_IF_ERROR(load_hosts(s));
  AFASIM_RETURN_IF_ERROR(load_mappings(s));
  AFASIM_RETURN_IF_ERROR(load_extents(s));
  AFASIM_RETURN_IF_ERROR(load_events(s, max_events));
  return load_meta(s);
}

namespace {
void no_bind(Statement&) {}

// The object of `items` (sorted by id) with id `id`, or null.
template <typename T>
T* find_by_id(std::vector<T>& items, Id id) {
  auto it = std::lower_bound(items.begin(), items.end(), id,
                             [](const T& item, Id x) { return item.id < x; });
  return it != items.end() && it->id == id ? &*it : nullptr;
}
}  // namespace

Status SqliteStore::Impl::load_pools(Snapshot& s) {
  AFASIM_RETURN_IF_ERROR(for_each_row("SELECT id, name, revision FROM pools ORDER BY id", no_bind,
                                      [&](const Statement& r) {
                                        controller::Pool p;
                                        p.id = r.column_int64(0);
                                        p.name = r.column_text(1);
                                        p.revision = static_cast<std::uint64_t>(r.column_int64(2));
                                        p.datapac_ids.clear();
                                        p.space_thresholds_percent.clear();
                                        s.pools.push_back(std::move(p));
                                        return Status::ok();
                                      }));
  AFASIM_RETURN_IF_ERROR(for_each_row(
      "SELECT pool_id, datapac_id FROM pool_datapacs ORDER BY pool_id, datapac_id", no_bind,
      [&](const Statement& r) {
        controller::Pool* p = find_by_id(s.pools, r.column_int64(0));
        AFASIM_ASSERT(p != nullptr, "pool_datapacs row without its pool despite the foreign key");
        p->datapac_ids.push_back(r.column_int64(1));
        return Status::ok();
      }));
  return for_each_row(
      "SELECT pool_id, percent FROM pool_space_thresholds ORDER BY pool_id, position", no_bind,
      [&](const Statement& r) {
        controller::Pool* p = find_by_id(s.pools, r.column_int64(0));
        AFASIM_ASSERT(p != nullptr, "pool_space_thresholds row without its pool");
        p->space_thresholds_percent.push_back(static_cast<int>(r.column_int64(1)));
        return Status::ok();
      });
}

Status SqliteStore::Impl::load_qos_policies(Snapshot& s) {
  return for_each_row(
      "SELECT id, name, min_iops, max_iops, burst_iops, revision FROM qos_policies ORDER BY id",
      no_bind, [&](const Statement& r) {
        controller::QosPolicy q;
        q.id = r.column_int64(0);
        q.name = r.column_text(1);
        q.qos.min_iops = r.column_optional_int64(2);
        q.qos.max_iops = r.column_optional_int64(3);
        q.qos.burst_iops = r.column_optional_int64(4);
        q.revision = static_cast<std::uint64_t>(r.column_int64(5));
        s.qos_policies.push_back(std::move(q));
        return Status::ok();
      });
}

Status SqliteStore::Impl::load_volumes(Snapshot& s) {
  return for_each_row(
      "SELECT id, name, pool_id, capacity_bytes, raid_type, provisioning, preferred_controller, "
      "min_iops, max_iops, burst_iops, qos_policy_id, state, created_time_ns, "
      "revision FROM volumes ORDER BY id",
      no_bind, [&](const Statement& r) -> Status {
        controller::Volume v;
        v.id = r.column_int64(0);
        v.name = r.column_text(1);
        v.pool_id = r.column_int64(2);
        v.capacity_bytes = r.column_int64(3);
        const std::string raid = r.column_text(4);
        const auto raid_type = raid::parse_raid_type(raid);
        if (!raid_type) return unknown_name(obj("volume", v.id), "raid_type", raid);
        v.raid_type = *raid_type;
        const std::string prov = r.column_text(5);
        const auto provisioning = controller::parse_provisioning(prov);
        if (!provisioning) return unknown_name(obj("volume", v.id), "provisioning", prov);
        v.provisioning = *provisioning;
        v.preferred_controller = r.column_int64(6);
        v.qos.min_iops = r.column_optional_int64(7);
        v.qos.max_iops = r.column_optional_int64(8);
        v.qos.burst_iops = r.column_optional_int64(9);
        v.qos_policy_id = r.column_optional_int64(10);
        const std::string state = r.column_text(11);
        const auto vs = parse_enum<controller::VolumeState>(
            state, [](controller::VolumeState x) { return controller::to_string(x); });
        if (!vs) return unknown_name(obj("volume", v.id), "state", state);
        v.state = *vs;
        v.created_time_ns = r.column_int64(12);
        v.revision = static_cast<std::uint64_t>(r.column_int64(13));
        s.volumes.push_back(std::move(v));
        return Status::ok();
      });
}

Status SqliteStore::Impl::load_hosts(Snapshot& s) {
  AFASIM_RETURN_IF_ERROR(
      for_each_row("SELECT id, name, description, revision FROM hosts ORDER BY id", no_bind,
                   [&](const Statement& r) {
                     controller::Host h;
                     h.id = r.column_int64(0);
                     h.name = r.column_text(1);
                     h.description = r.column_text(2);
                     h.revision = static_cast<std::uint64_t>(r.column_int64(3));
                     s.hosts.push_back(std::move(h));
                     return Status::ok();
                   }));
  return for_each_row(
      "SELECT host_id, type, address FROM host_initiators ORDER BY host_id, position", no_bind,
      [&](const Statement& r) -> Status {
        controller::Host* h = find_by_id(s.hosts, r.column_int64(0));
        AFASIM_ASSERT(h != nullptr, "host_initiators row without its host");
        const std::string type = r.column_text(1);
        const auto t = controller::parse_initiator_type(type);
        if (!t) return unknown_name(obj("host", h->id), "initiator type", type);
        h->initiators.push_back({*t, r.column_text(2)});
        return Status::ok();
      });
}

Status SqliteStore::Impl::load_mappings(Snapshot& s) {
  return for_each_row(
      "SELECT id, volume_id, host_id, lun, access, revision FROM mappings ORDER BY id", no_bind,
      [&](const Statement& r) -> Status {
        controller::Mapping m;
        m.id = r.column_int64(0);
        m.volume_id = r.column_int64(1);
        m.host_id = r.column_int64(2);
        m.lun = r.column_int64(3);
        const std::string access = r.column_text(4);
        const auto a = controller::parse_mapping_access(access);
        if (!a) return unknown_name(obj("mapping", m.id), "access", access);
        m.access = *a;
        m.revision = static_cast<std::uint64_t>(r.column_int64(5));
        s.mappings.push_back(m);
        return Status::ok();
      });
}

namespace {
constexpr const char* kEventColumns = "id, time_ns, severity, category, object, message, actor";

sim::Result<controller::Event> event_from_row(const Statement& r) {
  controller::Event e;
  e.id = r.column_int64(0);
  e.time_ns = r.column_int64(1);
  const std::string severity = r.column_text(2);
  const auto sev = parse_enum<controller::Severity>(
      severity, [](controller::Severity x) { return controller::to_string(x); });
  if (!sev) return unknown_name(obj("event", e.id), "severity", severity);
  e.severity = *sev;
  e.category = r.column_text(3);
  e.object = r.column_text(4);
  e.message = r.column_text(5);
  e.actor = r.column_text(6);
  return e;
}

std::int64_t clamp_to_int64(std::size_t n) {
  return n > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : static_cast<std::int64_t>(n);
}
}  // namespace

Status SqliteStore::Impl::load_events(Snapshot& s, std::size_t max_events) {
  return for_each_row(
      std::string("SELECT ") + kEventColumns + " FROM (SELECT " + kEventColumns +
          " FROM events ORDER BY id DESC LIMIT ?1) ORDER BY id",
      [&](Statement& st) { st.bind(1, clamp_to_int64(max_events)); },
      [&](const Statement& r) -> Status {
        auto e = event_from_row(r);
        if (!e) return e.status();
        s.events.push_back(std::move(e).value());
        return Status::ok();
      });
}

Status SqliteStore::Impl::load_meta(Snapshot& s) {
  return for_each_row("SELECT key, value FROM meta ORDER BY key", no_bind, [&](const Statement& r) {
    s.meta[r.column_text(0)] = r.column_text(1);
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// SqliteStore

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteStore::~SqliteStore() = default;

sim::Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& state_dir,
                                                            const SqliteStoreOptions& options) {
  if (options.busy_timeout_ms < 0 || options.busy_timeout_ms > 600'000)
    return sim::invalid_argument("busy_timeout_ms must be 0 to 600000, got " +
                                 std::to_string(options.busy_timeout_ms));
  if (options.max_db_bytes < 0)
    return sim::invalid_argument("max_db_bytes must be >= 0, got " +
                                 std::to_string(options.max_db_bytes));
  bool created = false;
  AFASIM_RETURN_IF_ERROR(prepare_state_dir(state_dir, created));
  // The lock comes before the database is touched: a second afasim must not even read a
  // file another one is writing.
  auto lock = acquire_lock(state_dir);
  if (!lock) return lock.status();
  const std::string path = (fs::path(state_dir) / kDbFileName).string();
  auto db = open_database(path, options);
  if (!db) return db.status();
  // SQLite syncs the directory when it creates the WAL, not when it creates the database
  // file: without this, a host crash soon after the first boot could lose afasim.db's name
  // (and a new state directory's own) while the WAL that depends on it survives.
  AFASIM_RETURN_IF_ERROR(sync_directory(state_dir));
  if (created) {
    fs::path dir = fs::absolute(fs::path(state_dir)).lexically_normal();
    if (!dir.has_filename()) dir = dir.parent_path();  // "state/" names "state"
    AFASIM_RETURN_IF_ERROR(sync_directory(dir.parent_path().string()));
  }
  return std::unique_ptr<SqliteStore>(new SqliteStore(
      std::make_unique<Impl>(state_dir, std::move(lock).value(), std::move(db).value())));
}

sim::Status SqliteStore::commit(const ChangeSet& changes) {
  if (changes.empty()) return Status::ok();
  sqlite3* db = impl_->db.get();
  AFASIM_RETURN_IF_ERROR(impl_->no_open_transaction());
  // IMMEDIATE takes the write lock now, so that no statement of the change can meet a busy
  // database half-way through.
  Status st = exec(db, "BEGIN IMMEDIATE", "starting a transaction");
  if (st.is_ok()) st = impl_->write(changes);
  if (st.is_ok()) st = impl_->finish_commit();
  if (st.is_ok()) return st;
  impl_->rollback();
  return {st.code(), "store: commit failed, nothing was changed: " + st.message()};
}

sim::Result<Snapshot> SqliteStore::load(std::size_t max_events) {
  sqlite3* db = impl_->db.get();
  AFASIM_RETURN_IF_ERROR(impl_->no_open_transaction());
  // One read transaction: every table as of the same commit.
  AFASIM_RETURN_IF_ERROR(exec(db, "BEGIN", "starting a read transaction"));
  Snapshot s;
  Status st = impl_->load(s, max_events);
  impl_->rollback();  // read-only: ending it any way is the same
  if (!st.is_ok()) return Status(st.code(), "store: loading " + db_path() + ": " + st.message());
  return s;
}

sim::Result<controller::Page<controller::Event>> SqliteStore::events(std::int64_t offset,
                                                                     std::int64_t limit) {
  if (offset < 0 || limit < 0)
    return sim::invalid_argument("event offset and limit must be >= 0, got " +
                                 std::to_string(offset) + " and " + std::to_string(limit));
  sqlite3* db = impl_->db.get();
  AFASIM_RETURN_IF_ERROR(impl_->no_open_transaction());
  AFASIM_RETURN_IF_ERROR(exec(db, "BEGIN", "starting a read transaction"));
  controller::Page<controller::Event> page;
  Status st = impl_->for_each_row("SELECT count(*) FROM events", no_bind, [&](const Statement& r) {
    page.total = r.column_int64(0);
    return Status::ok();
  });
  if (st.is_ok())
    st = impl_->for_each_row(
        std::string("SELECT ") + kEventColumns + " FROM events ORDER BY id DESC LIMIT ?1 OFFSET ?2",
        [&](Statement& s) { s.bind(1, limit).bind(2, offset); },
        [&](const Statement& r) -> Status {
          auto e = event_from_row(r);
          if (!e) return e.status();
          page.items.push_back(std::move(e).value());
          return Status::ok();
        });
  impl_->rollback();
  if (!st.is_ok()) return Status(st.code(), "store: reading events: " + st.message());
  return page;
}

const std::string& SqliteStore::state_dir() const {
  return impl_->state_dir;
}

std::string SqliteStore::db_path() const {
  return (fs::path(impl_->state_dir) / kDbFileName).string();
}

int SqliteStore::schema_version() {
  return latest_schema_version();
}

}  // namespace afasim::store
