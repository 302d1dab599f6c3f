// How a model object maps onto table rows: one description per table, from which the store
// derives the INSERT ... ON CONFLICT upsert, the SELECT, the binding of a row and the
// reading of one back (issue 11: one mechanism instead of a hand-written upsert and load
// per table). Internal to store/.
//
// A Table<T> lists its columns in schema order; the first `key_columns` of them are the
// key (the upsert's conflict target and the load order). A ChildTable<P, C> holds a list
// member of a parent object (a pool's DataPacs, a host's initiators): rows keyed by the
// parent's id and, when order matters, a position; it is always rewritten whole.
//
// Each column converts between a member of T and a Value with to_value / from_value below:
// integers (any width), strings, optional integers (NULL when unset) and the enums that
// have a text name (stored as that name). Not thread-safe; descriptions are immutable.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "controller/objects.h"
#include "raid/raid_type.h"
#include "store/sqlite_util.h"

namespace afasim::store {

// ---------------------------------------------------------------------------------------
// Value conversions

// The text name of each stored enum, and back. parse returns false for an unknown name.
inline std::string enum_name(raid::RaidType e) { return std::string(raid::raid_type_name(e)); }
inline std::string enum_name(controller::Provisioning e) { return std::string(controller::to_string(e)); }
inline std::string enum_name(controller::VolumeState e) { return std::string(controller::to_string(e)); }
inline std::string enum_name(controller::InitiatorType e) { return std::string(controller::to_string(e)); }
inline std::string enum_name(controller::MappingAccess e) { return std::string(controller::to_string(e)); }
inline std::string enum_name(controller::Severity e) { return std::string(controller::to_string(e)); }

// The value of E whose enum_name is `s`: walks 0, 1, ... until the name is "?" (past the
// last value), so a value added to an enum loads without touching this file.
template <typename E>
bool parse_enum(const std::string& s, E& out) {
  for (int i = 0; i < 256; ++i) {
    const E e = static_cast<E>(i);
    const std::string n = enum_name(e);
    if (n == "?") return false;
    if (n == s) {
      out = e;
      return true;
    }
  }
  return false;
}

template <typename M>
Value to_value(const M& m) {
  if constexpr (std::is_enum_v<M>) {
    return enum_name(m);
  } else if constexpr (std::is_integral_v<M>) {
    return static_cast<std::int64_t>(m);
  } else if constexpr (std::is_same_v<M, std::optional<std::int64_t>>) {
    return m ? Value(*m) : Value(std::monostate{});
  } else {
    static_assert(std::is_same_v<M, std::string>, "a column is an integer, string, optional or enum");
    return m;
  }
}

// False when `v` does not hold what M needs (a NULL in a required column, a text where an
// integer belongs, an enum name this binary does not know).
template <typename M>
bool from_value(const Value& v, M& m) {
  if constexpr (std::is_enum_v<M>) {
    const auto* s = std::get_if<std::string>(&v);
    return s != nullptr && parse_enum(*s, m);
  } else if constexpr (std::is_integral_v<M>) {
    const auto* i = std::get_if<std::int64_t>(&v);
    if (i == nullptr) return false;
    m = static_cast<M>(*i);
    return true;
  } else if constexpr (std::is_same_v<M, std::optional<std::int64_t>>) {
    if (std::holds_alternative<std::monostate>(v)) {
      m.reset();
      return true;
    }
    const auto* i = std::get_if<std::int64_t>(&v);
    if (i == nullptr) return false;
    m = *i;
    return true;
  } else {
    const auto* s = std::get_if<std::string>(&v);
    if (s == nullptr) return false;
    m = *s;
    return true;
  }
}

// The text of a value, for error messages.
inline std::string value_text(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return "NULL";
}

// ---------------------------------------------------------------------------------------
// Columns and tables

template <typename T>
struct Column {
  const char* name;
  std::function<Value(const T&)> get;
  // False when the value cannot be stored in T (see from_value).
  std::function<bool(T&, const Value&)> set;
};

// A column for the member that `access` reaches: a generic lambda `[](auto& t) -> auto& {
// return t.member; }` (it is called with const T& to read and T& to write).
template <typename T, typename Access>
Column<T> field(const char* name, Access access) {
  return {name, [access](const T& t) { return to_value(access(t)); },
          [access](T& t, const Value& v) { return from_value(v, access(t)); }};
}

// The comma-separated column names of `columns` from `first` on.
template <typename T>
std::string column_list(const std::vector<Column<T>>& columns, std::size_t first = 0) {
  std::string out;
  for (std::size_t i = first; i < columns.size(); ++i) out += (out.empty() ? "" : ", ") + std::string(columns[i].name);
  return out;
}

// "?1, ?2, ..., ?n".
inline std::string placeholders(std::size_t n) {
  std::string out;
  for (std::size_t i = 1; i <= n; ++i) out += (i > 1 ? ", ?" : "?") + std::to_string(i);
  return out;
}

template <typename T>
struct Table {
  const char* name;
  const char* kind;  // "volume": the row's kind in error messages
  std::size_t key_columns = 1;
  bool append_only = false;  // plain INSERT: a row with an existing key is an error
  std::vector<Column<T>> columns;
  // "volume 42 \"db-data\"": names a row in error messages.
  std::function<std::string(const T&)> describe;

  std::string insert_sql() const {
    std::string sql = "INSERT INTO " + std::string(name) + " (" + column_list(columns) + ") VALUES (" +
                      placeholders(columns.size()) + ")";
    if (append_only) return sql;
    sql += " ON CONFLICT (" + key_list() + ") DO ";
    if (key_columns == columns.size()) return sql + "NOTHING";
    sql += "UPDATE SET ";
    for (std::size_t i = key_columns; i < columns.size(); ++i)
      sql += (i > key_columns ? ", " : "") + std::string(columns[i].name) + " = excluded." + columns[i].name;
    return sql;
  }
  std::string select_sql() const {
    return "SELECT " + column_list(columns) + " FROM " + name + " ORDER BY " + key_list();
  }
  // "volume 11", "extent 2, 4": the kind and the key's values.
  std::string key_text(const T& item) const {
    std::string out = std::string(kind) + " ";
    for (std::size_t i = 0; i < key_columns; ++i) out += (i > 0 ? ", " : "") + value_text(columns[i].get(item));
    return out;
  }
  std::string key_list() const {
    std::string out;
    for (std::size_t i = 0; i < key_columns; ++i) out += (i > 0 ? ", " : "") + std::string(columns[i].name);
    return out;
  }
};

// A list member of P stored as rows of its own table, keyed by the parent's id column and
// (when `position_column` is set) the item's index in the list.
template <typename P, typename C>
struct ChildTable {
  const char* name;
  const char* parent_column;
  const char* position_column;  // nullptr: the list is a set, loaded in column order
  std::vector<Column<C>> columns;
  std::function<std::vector<C>&(P&)> items;
  std::function<const std::vector<C>&(const P&)> const_items;
  const char* item_kind;  // "DataPac", "initiator": for error messages

  std::string insert_sql() const {
    const std::string position = position_column ? std::string(position_column) + ", " : "";
    const std::size_t n = columns.size() + (position_column ? 2 : 1);
    return "INSERT INTO " + std::string(name) + " (" + parent_column + ", " + position + column_list(columns) +
           ") VALUES (" + placeholders(n) + ")";
  }
  std::string delete_sql() const { return "DELETE FROM " + std::string(name) + " WHERE " + parent_column + " = ?1"; }
  std::string select_sql() const {
    return "SELECT " + std::string(parent_column) + ", " + column_list(columns) + " FROM " + name + " ORDER BY " +
           parent_column + ", " + (position_column ? position_column : column_list(columns));
  }
};

}  // namespace afasim::store
