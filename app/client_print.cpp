// The client commands' output (app/client.h): tables, sizes in binary units, objects as
// key-value lines, or the API's own JSON.
#include <cstdio>
#include <iostream>

#include "app/client.h"
#include "config/json_text.h"

namespace afasim::app {

std::string human_bytes(std::int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const bool negative = bytes < 0;
  double v = std::fabs(static_cast<double>(bytes));
  int unit = 0;
  while (v >= 1024 && unit < 6) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0 || std::fabs(v - std::round(v)) < 0.05) std::snprintf(buf, sizeof buf, "%.0f %s", std::round(v), kUnits[unit]);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return (negative ? "-" : "") + std::string(buf);
}

std::string cell_text(const std::string& key, const json& v, bool exact_bytes) {
  // "capacity.free_bytes.RAID10" is a size too: a unit ends a key or one of its parents.
  const auto ends_with = [&key](const char* suffix) {
    const std::string s(suffix);
    return (key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0) ||
           key.find(s + ".") != std::string::npos;
  };
  if (v.is_null()) return "-";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer() && ends_with("_bytes") && !exact_bytes) return human_bytes(v.get<std::int64_t>());
  if (v.is_number_integer() && ends_with("_ns")) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(v.get<std::int64_t>()) / 1e9);
    return buf;
  }
  if (v.is_number_float()) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
    return buf;
  }
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_object() && v.contains("type") && v.contains("address"))  // an initiator
    return v["type"].get<std::string>() + ":" + v["address"].get<std::string>();
  if (v.is_array()) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + cell_text(key, x, exact_bytes);
    return out;
  }
  return config::dump_json(v);
}

std::string Table::str() const {
  std::vector<std::size_t> width(headers_.size(), 0);
  std::vector<bool> numeric(headers_.size(), true);
  static const std::regex number("^-?[0-9][0-9.,]*( [KMGTPE]?i?B| s)?$");
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& r : rows_)
    for (std::size_t c = 0; c < r.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], r[c].size());
      if (r[c] != "-" && !std::regex_match(r[c], number)) numeric[c] = false;
    }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < headers_.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string pad(width[c] - std::min(width[c], cell.size()), ' ');
      const bool last = c + 1 == headers_.size();
      l += numeric[c] ? pad + cell : cell + (last ? "" : pad);
      if (!last) l += "  ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(headers_);
  for (const auto& r : rows_) line(r);
  return out;
}

const json& at_path(const json& j, const std::string& dotted) {
  static const json kNull = nullptr;
  const json* cur = &j;
  std::size_t i = 0;
  while (i <= dotted.size()) {
    const std::size_t dot = std::min(dotted.find('.', i), dotted.size());
    const std::string part = dotted.substr(i, dot - i);
    if (!cur->is_object() || !cur->contains(part)) return kNull;
    cur = &(*cur)[part];
    i = dot + 1;
  }
  return *cur;
}

void print_list(const ClientOptions& o, const json& page, const std::vector<Column>& columns) {
  if (o.output == "json") {
    std::cout << config::dump_json(page, 2) << "\n";
    return;
  }
  std::vector<std::string> headers;
  for (const auto& c : columns) headers.push_back(c.header);
  Table t(headers);
  for (const auto& item : page.value("items", json::array())) {
    std::vector<std::string> cells;
    for (const auto& c : columns) cells.push_back(cell_text(c.as.empty() ? c.key : c.as, at_path(item, c.key), o.bytes));
    t.row(std::move(cells));
  }
  std::cout << t.str();
}

namespace {
void flatten(const json& j, const std::string& prefix, Table& t, bool exact) {
  for (const auto& [k, v] : j.items()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object() && !v.empty()) flatten(v, key, t, exact);
    else if (v.is_array() && !v.empty() && v[0].is_object()) {
      for (std::size_t i = 0; i < v.size(); ++i) flatten(v[i], key + "[" + std::to_string(i) + "]", t, exact);
    } else if (v.is_number_integer() && key.size() > 3 && key.compare(key.size() - 3, 3, "_ns") == 0) {
      // The field keeps its unit: nanoseconds, as named, with seconds beside them ("time_ns
      // 12.345 s" read as a unit mismatch in a new-user trial).
      t.row({key, std::to_string(v.get<std::int64_t>()) + " (" + cell_text(key, v, exact) + ")"});
    } else {
      t.row({key, cell_text(key, v, exact)});
    }
  }
}
}  // namespace

void print_object(const ClientOptions& o, const json& object) {
  if (o.output == "json") {
    std::cout << config::dump_json(object, 2) << "\n";
    return;
  }
  Table t({"FIELD", "VALUE"});
  flatten(object, "", t, o.bytes);
  std::cout << t.str();
}

}  // namespace afasim::app
