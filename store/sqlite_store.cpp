#include "store/sqlite_store.h"

#include <filesystem>
#include <functional>
#include <limits>
#include <set>
#include <unordered_map>

#include "sim/assert.h"
#include "store/schema.h"
#include "store/sqlite_util.h"
#include "store/state_dir.h"
#include "store/tables.h"

namespace afasim::store {

namespace fs = std::filesystem;
using controller::ChangeSet;
using controller::Id;
using controller::Snapshot;
using sim::Status;

namespace {

void no_bind(Statement&) {}

std::set<Id> as_set(const std::vector<Id>& ids) {
  return {ids.begin(), ids.end()};
}

// The object of `items` (sorted by id) with id `id`, or null.
template <typename T>
T* find_by_id(std::vector<T>& items, Id id) {
  auto it = std::lower_bound(items.begin(), items.end(), id, [](const T& item, Id x) { return item.id < x; });
  return it != items.end() && it->id == id ? &*it : nullptr;
}

std::int64_t clamp_to_int64(std::size_t n) {
  return n > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : static_cast<std::int64_t>(n);
}

// A row's columns from `first` on into `out`. A value that does not fit its column (an
// unknown enum name: the file was edited by hand or written by a newer afasim) is kInternal,
// naming the row `what` and the column.
template <typename T>
Status read_columns(const Statement& r, int first, const std::vector<Column<T>>& columns, T& out,
                    const std::function<std::string(const T&)>& what) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const Value v = r.column_value(first + static_cast<int>(i));
    if (!columns[i].set(out, v))
      return {sim::Code::kInternal, "state database: " + what(out) + " has an unknown " + columns[i].name +
                                        " \"" + value_text(v) + "\" (written by a newer afasim, or edited by hand)"};
  }
  return Status::ok();
}

template <typename T>
sim::Result<T> read_row(const Table<T>& table, const Statement& r) {
  T out{};
  // Error messages name the row by its key, which is read first.
  auto what = [&table](const T& x) { return table.key_text(x); };
  AFASIM_RETURN_IF_ERROR(read_columns(r, 0, table.columns, out, std::function<std::string(const T&)>(what)));
  return out;
}

// "pool 3": the parent column without its "_id", and the parent's id.
template <typename P, typename C>
std::string parent_name(const ChildTable<P, C>& child, const P& parent) {
  std::string kind = child.parent_column;
  if (kind.size() > 3 && kind.compare(kind.size() - 3, 3, "_id") == 0) kind.resize(kind.size() - 3);
  return kind + " " + std::to_string(parent.id);
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
  Status run(const std::string& sql, const std::function<void(Statement&)>& bind, const std::string& context) {
    auto stmt = statement(sql);
    if (!stmt) return stmt.status();
    bind(**stmt);
    return (*stmt)->run(context);
  }

  // Runs `sql` and calls `row` for each result row; stops at the first error.
  Status for_each_row(const std::string& sql, const std::function<void(Statement&)>& bind,
                      const std::function<Status(const Statement&)>& row);

  // Upserts (or, append-only, inserts) `item` as one row of `table`.
  template <typename T>
  Status put(const Table<T>& table, const T& item) {
    return run(
        table.insert_sql(),
        [&](Statement& s) {
          for (std::size_t i = 0; i < table.columns.size(); ++i)
            s.bind(static_cast<int>(i) + 1, table.columns[i].get(item));
        },
        "putting " + table.describe(item));
  }
  template <typename T>
  Status put_all(const Table<T>& table, const std::vector<T>& items, const std::function<bool(const T&)>& skip) {
    for (const T& item : items)
      if (!skip || !skip(item)) AFASIM_RETURN_IF_ERROR(put(table, item));
    return Status::ok();
  }
  // Rewrites the child rows of every parent in `parents`: all deleted first, then all
  // written, so that an item (a DataPac, an initiator) can move between two parents of one
  // ChangeSet.
  template <typename P, typename C>
  Status rewrite_children(const ChildTable<P, C>& child, const std::vector<const P*>& parents);
  template <typename T>
  Status load_all(const Table<T>& table, std::vector<T>& out) {
    return for_each_row(table.select_sql(), no_bind, [&](const Statement& r) -> Status {
      auto item = read_row(table, r);
      if (!item) return item.status();
      out.push_back(std::move(item).value());
      return Status::ok();
    });
  }
  template <typename P, typename C>
  Status load_children(const ChildTable<P, C>& child, std::vector<P>& parents);

  Status write(const ChangeSet& c);
  Status finish_commit();
  void rollback() {
    if (sqlite3_get_autocommit(db.get()) == 0) sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
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
  template <typename T>
  Status put_objects(const Table<T>& table, const std::vector<T>& items, const std::vector<Id>& deleted);
  Status put_extents(const ChangeSet& c);
  Status describe_broken_references();
};

Status SqliteStore::Impl::for_each_row(const std::string& sql, const std::function<void(Statement&)>& bind,
                                       const std::function<Status(const Statement&)>& row) {
  auto stmt = statement(sql);
  if (!stmt) return stmt.status();
  Statement& s = **stmt;
  bind(s);
  Status st;
  for (;;) {
    const int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      st = sqlite_error(db.get(), rc, "reading (" + sql.substr(0, 60) + "...)");
      break;
    }
    st = row(s);
    if (!st.is_ok()) break;
  }
  s.reset();
  return st;
}

template <typename P, typename C>
Status SqliteStore::Impl::rewrite_children(const ChildTable<P, C>& child, const std::vector<const P*>& parents) {
  for (const P* p : parents)
    AFASIM_RETURN_IF_ERROR(run(child.delete_sql(), [&](Statement& s) { s.bind(1, p->id); },
                               "rewriting the " + std::string(child.item_kind) + "s of " + parent_name(child, *p)));
  for (const P* p : parents) {
    const std::vector<C>& items = child.const_items(*p);
    for (std::size_t i = 0; i < items.size(); ++i) {
      AFASIM_RETURN_IF_ERROR(run(
          child.insert_sql(),
          [&](Statement& s) {
            int n = 1;
            s.bind(n++, p->id);
            if (child.position_column) s.bind(n++, static_cast<std::int64_t>(i));
            for (const auto& c : child.columns) s.bind(n++, c.get(items[i]));
          },
          "putting " + std::string(child.item_kind) + " " + value_text(child.columns.back().get(items[i])) +
              " of " + parent_name(child, *p)));
    }
  }
  return Status::ok();
}

template <typename P, typename C>
Status SqliteStore::Impl::load_children(const ChildTable<P, C>& child, std::vector<P>& parents) {
  for (P& p : parents) child.items(p).clear();
  return for_each_row(child.select_sql(), no_bind, [&](const Statement& r) -> Status {
    P* p = find_by_id(parents, r.column_int64(0));
    AFASIM_ASSERT(p != nullptr, "a child row without its parent despite the foreign key");
    C item{};
    const std::string what = std::string(child.item_kind) + " of " + parent_name(child, *p);
    AFASIM_RETURN_IF_ERROR(read_columns(r, 1, child.columns, item, std::function<std::string(const C&)>(
                                                                         [&what](const C&) { return what; })));
    child.items(*p).push_back(std::move(item));
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// Writing

Status SqliteStore::Impl::write(const ChangeSet& c) {
  // Deletes first: they free names, DataPacs, LUNs and initiators that puts in the same
  // ChangeSet may take. References are checked at COMMIT, so the order across kinds is
  // free; children go first anyway.
  AFASIM_RETURN_IF_ERROR(delete_ids("mappings", c.delete_mappings));
  AFASIM_RETURN_IF_ERROR(delete_ids("volumes", c.delete_volumes));
  AFASIM_RETURN_IF_ERROR(delete_ids("hosts", c.delete_hosts));
  AFASIM_RETURN_IF_ERROR(delete_ids("qos_policies", c.delete_qos_policies));
  AFASIM_RETURN_IF_ERROR(delete_ids("pools", c.delete_pools));
  // Puts, parents first: an id both put and deleted ends up deleted (as in MemoryJournal).
  AFASIM_RETURN_IF_ERROR(put_objects(pools_table(), c.put_pools, c.delete_pools));
  AFASIM_RETURN_IF_ERROR(put_objects(qos_policies_table(), c.put_qos_policies, c.delete_qos_policies));
  AFASIM_RETURN_IF_ERROR(put_objects(volumes_table(), c.put_volumes, c.delete_volumes));
  AFASIM_RETURN_IF_ERROR(put_objects(hosts_table(), c.put_hosts, c.delete_hosts));
  AFASIM_RETURN_IF_ERROR(put_objects(mappings_table(), c.put_mappings, c.delete_mappings));
  AFASIM_RETURN_IF_ERROR(put_extents(c));
  AFASIM_RETURN_IF_ERROR(put_all<controller::Event>(events_table(), c.events, nullptr));
  for (const auto& pair : c.meta) AFASIM_RETURN_IF_ERROR(put(meta_table(), MetaPair(pair)));
  return Status::ok();
}

Status SqliteStore::Impl::delete_ids(const char* table, const std::vector<Id>& ids) {
  const std::string sql = std::string("DELETE FROM ") + table + " WHERE id = ?1";
  for (Id id : ids)
    AFASIM_RETURN_IF_ERROR(run(sql, [&](Statement& s) { s.bind(1, id); },
                               std::string("deleting ") + table + " row " + std::to_string(id)));
  return Status::ok();
}

// The objects not deleted in the same ChangeSet, and for pools and hosts their child rows.
template <typename T>
Status SqliteStore::Impl::put_objects(const Table<T>& table, const std::vector<T>& items,
                                      const std::vector<Id>& deleted_ids) {
  const std::set<Id> deleted = as_set(deleted_ids);
  std::vector<const T*> kept;
  for (const T& item : items)
    if (!deleted.count(item.id)) kept.push_back(&item);
  for (const T* item : kept) AFASIM_RETURN_IF_ERROR(put(table, *item));
  if constexpr (std::is_same_v<T, controller::Pool>) {
    AFASIM_RETURN_IF_ERROR(rewrite_children(pool_datapacs_table(), kept));
    return rewrite_children(pool_thresholds_table(), kept);
  } else if constexpr (std::is_same_v<T, controller::Host>) {
    return rewrite_children(host_initiators_table(), kept);
  }
  return Status::ok();
}

Status SqliteStore::Impl::put_extents(const ChangeSet& c) {
  for (const auto& key : c.delete_extents) {
    // Named copies, not a structured binding: clang 14 cannot capture those in the lambda.
    const auto volume_id = key.first;
    const auto index = key.second;
    AFASIM_RETURN_IF_ERROR(run(
        "DELETE FROM extents WHERE volume_id = ?1 AND extent_index = ?2",
        [&](Statement& s) { s.bind(1, volume_id).bind(2, index); },
        "deleting extent " + std::to_string(index) + " of volume " + std::to_string(volume_id)));
  }
  const std::set<Id> deleted_volumes = as_set(c.delete_volumes);
  return put_all<controller::ExtentRecord>(
      extents_table(), c.put_extents,
      [&](const controller::ExtentRecord& e) { return deleted_volumes.count(e.volume_id) > 0; });
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
  Status st = for_each_row("PRAGMA foreign_key_check", no_bind, [&](const Statement& s) {
    if (++n <= 5)
      found += (found.empty() ? "" : "; ") + s.column_text(0) + " row " + std::to_string(s.column_int64(1)) +
               " refers to a missing " + s.column_text(2) + " row";
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  if (n > 5) found += "; and " + std::to_string(n - 5) + " more";
  return {sim::Code::kInternal, "references to missing objects: " + found};
}

// ---------------------------------------------------------------------------------------
// Reading

Status SqliteStore::Impl::load(Snapshot& s, std::size_t max_events) {
  AFASIM_RETURN_IF_ERROR(load_all(pools_table(), s.pools));
  AFASIM_RETURN_IF_ERROR(load_children(pool_datapacs_table(), s.pools));
  AFASIM_RETURN_IF_ERROR(load_children(pool_thresholds_table(), s.pools));
  AFASIM_RETURN_IF_ERROR(load_all(qos_policies_table(), s.qos_policies));
  AFASIM_RETURN_IF_ERROR(load_all(volumes_table(), s.volumes));
  AFASIM_RETURN_IF_ERROR(load_all(hosts_table(), s.hosts));
  AFASIM_RETURN_IF_ERROR(load_children(host_initiators_table(), s.hosts));
  AFASIM_RETURN_IF_ERROR(load_all(mappings_table(), s.mappings));
  AFASIM_RETURN_IF_ERROR(load_all(extents_table(), s.extents));
  // The newest max_events events, oldest first.
  const Table<controller::Event>& events = events_table();
  const std::string columns = column_list(events.columns);
  AFASIM_RETURN_IF_ERROR(for_each_row(
      "SELECT " + columns + " FROM (SELECT " + columns + " FROM events ORDER BY id DESC LIMIT ?1) ORDER BY id",
      [&](Statement& st) { st.bind(1, clamp_to_int64(max_events)); },
      [&](const Statement& r) -> Status {
        auto e = read_row(events, r);
        if (!e) return e.status();
        s.events.push_back(std::move(e).value());
        return Status::ok();
      }));
  std::vector<MetaPair> meta;
  AFASIM_RETURN_IF_ERROR(load_all(meta_table(), meta));
  for (auto& [key, value] : meta) s.meta[key] = value;
  return Status::ok();
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
        "SELECT " + column_list(events_table().columns) + " FROM events ORDER BY id DESC LIMIT ?1 OFFSET ?2",
        [&](Statement& s) { s.bind(1, limit).bind(2, offset); },
        [&](const Statement& r) -> Status {
          auto e = read_row(events_table(), r);
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
