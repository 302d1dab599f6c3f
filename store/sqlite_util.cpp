#include "store/sqlite_util.h"

#include "sim/assert.h"

namespace afasim::store {

sim::Code code_for_sqlite(int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL:
      return sim::Code::kNoSpace;
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_NOMEM:
      return sim::Code::kUnavailable;
    default:
      return sim::Code::kInternal;
  }
}

sim::Status sqlite_error(sqlite3* db, int rc, std::string_view context) {
  // sqlite3_errmsg describes the most recent failure on the connection, which is the one
  // that returned `rc` as long as the caller asks right away; without a connection only
  // the code's generic text is known.
  std::string message(context);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += " (";
  message += sqlite3_errstr(rc);
  message += ", code " + std::to_string(rc) + ")";
  return {code_for_sqlite(rc), std::move(message)};
}

sim::Status exec(sqlite3* db, const std::string& sql, std::string_view context) {
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return sqlite_error(db, rc, context);
  return sim::Status::ok();
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

sim::Result<Statement> Statement::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return sqlite_error(db, rc, "preparing \"" + std::string(sql.substr(0, 60)) + "...\"");
  }
  AFASIM_ASSERT(stmt != nullptr, "prepared an empty SQL statement");
  return Statement(stmt);
}

namespace {
void check_bind(int rc) {
  AFASIM_ASSERT(rc == SQLITE_OK, sqlite3_errstr(rc));
}
}  // namespace

Statement& Statement::bind(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  check_bind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::int64_t>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(stmt_, index));
  return *this;
}

Statement& Statement::bind(int index, const Value& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return bind(index, *i);
  if (const auto* t = std::get_if<std::string>(&value)) return bind(index, std::string_view(*t));
  return bind_null(index);
}

int Statement::step() {
  return sqlite3_step(stmt_);
}

sim::Status Statement::run(std::string_view context) {
  const int rc = step();
  // The Status is built before reset() so that it carries this step's message.
  sim::Status st =
      rc == SQLITE_DONE ? sim::Status::ok()
      : rc == SQLITE_ROW
          ? sim::Status(sim::Code::kInternal, std::string(context) + ": statement returned rows")
          : sqlite_error(db(), rc, context);
  reset();
  return st;
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  const int bytes = sqlite3_column_bytes(stmt_, column);
  return text == nullptr ? std::string() : std::string(text, static_cast<std::size_t>(bytes));
}

std::optional<std::int64_t> Statement::column_optional_int64(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_int64(column);
}

bool Statement::column_is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

Value Statement::column_value(int column) const {
  switch (sqlite3_column_type(stmt_, column)) {
    case SQLITE_NULL:
      return std::monostate{};
    case SQLITE_INTEGER:
      return column_int64(column);
    default:
      return column_text(column);
  }
}

}  // namespace afasim::store
