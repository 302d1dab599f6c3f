#include "redfish/query.h"

#include <algorithm>

#include "redfish/internal.h"

namespace afasim::redfish {

namespace {

std::string shown(const std::string& s) { return s.size() > 80 ? s.substr(0, 80) + "..." : s; }

RedfishError bad_value(const std::string& param, const std::string& value, const std::string& why) {
  return RedfishError(400, "QueryParameterValueFormatError",
                      "The value '" + shown(value) + "' for the parameter " + param + " is of a different format than the parameter can accept: " + why,
                      {}, "Correct the value for the query parameter in the request and resubmit the request.");
}

bool name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '@' || c == '.' || c == '#';
}

std::vector<std::string> parse_select(const std::string& value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = value.find(',', start);
    const std::string name = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty()) throw bad_value("$select", value, "an empty property name (a stray comma, or no value).");
    if (name.find('/') != std::string::npos)
      throw bad_value("$select", value, "afasim selects top-level properties only (" + shown(name) + " names a nested one).");
    for (char c : name)
      if (!name_char(c)) throw bad_value("$select", value, "'" + shown(name) + "' is not a property name.");
    // A name given twice selects once (OData 4.01 does not forbid it; the body is the same).
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

void parse_expand(const std::string& value, Query& q) {
  if (value.empty()) throw bad_value("$expand", value, "no value; expected '.', '*' or '~', optionally with ($levels=N).");
  switch (value[0]) {
    case '.': q.expand = Query::Expand::kSubordinate; break;
    case '*': q.expand = Query::Expand::kAll; break;
    case '~': q.expand = Query::Expand::kLinks; break;
    default: throw bad_value("$expand", value, "expected '.', '*' or '~', optionally with ($levels=N).");
  }
  if (value.size() == 1) return;
  static const std::string kOpen = "($levels=";
  if (value.compare(1, kOpen.size(), kOpen) != 0 || value.back() != ')')
    throw bad_value("$expand", value, "expected '" + value.substr(0, 1) + "($levels=N)' after the expansion type.");
  const std::string digits = value.substr(1 + kOpen.size(), value.size() - 2 - kOpen.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    throw RedfishError(400, "QueryParameterValueTypeError",
                       "The value '" + shown(digits) + "' for $levels is not a positive decimal integer.", {},
                       "Correct the value for the query parameter in the request and resubmit the request.");
  // More than three digits is out of range, not a non-number (hostile round 16: '1000' was
  // called not a positive decimal integer).
  const std::size_t first = std::min(digits.find_first_not_of('0'), digits.size() - 1);  // 0001 is 1
  const int levels = digits.size() - first > 3 ? kMaxExpandLevels + 1 : std::stoi(digits.substr(first));
  if (levels < 1 || levels > kMaxExpandLevels)
    throw RedfishError(400, "QueryParameterOutOfRange",
                       "The value '" + shown(digits) + "' for $levels is not in the supported range 1 to " + std::to_string(kMaxExpandLevels) + ".",
                       {}, "Reduce the value for the query parameter to a value that is within range.");
  q.levels = levels;
}

bool is_link(const nlohmann::json& j) { return j.is_object() && j.size() == 1 && j.contains("@odata.id") && j["@odata.id"].is_string(); }

struct Expander {
  const Query& q;
  const Resolver& resolve;
  std::size_t expanded = 0;

  // Expands the links inside `j` (a resource or a part of one) that the query names.
  // `in_links`: inside a "Links" property; `levels`: how many link hops remain.
  void walk(nlohmann::json& j, bool in_links, int levels) {
    if (j.is_array()) {
      for (auto& e : j) visit(e, in_links, levels);
    } else if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key().rfind("@odata.", 0) == 0) continue;
        visit(it.value(), in_links || it.key() == "Links", levels);
      }
    }
  }

  void visit(nlohmann::json& j, bool in_links, int levels) {
    if (!is_link(j)) return walk(j, in_links, levels);
    const bool wanted = q.expand == Query::Expand::kAll || (q.expand == Query::Expand::kSubordinate && !in_links) ||
                        (q.expand == Query::Expand::kLinks && in_links);
    if (!wanted || expanded >= kMaxExpandedResources) return;
    std::optional<nlohmann::json> target = resolve(j["@odata.id"].get<std::string>());
    if (!target || !target->is_object()) return;
    ++expanded;
    if (levels > 1) walk(*target, false, levels - 1);
    j = std::move(*target);
  }
};

}  // namespace

Query parse_query(const std::string& method, const std::vector<std::pair<std::string, std::string>>& params) {
  Query q;
  bool seen_select = false, seen_expand = false;
  for (const auto& [name, value] : params) {
    if (name.empty() || name[0] != '$') continue;  // DSP0266: ignore unknown parameters without '$'
    const bool supported = (name == "$select" || name == "$expand") && method == "GET";
    if (!supported)
      throw RedfishError(501, "QueryNotSupported",
                         "Querying with " + shown(name) + (method == "GET" ? "" : " on " + method) +
                             " is not supported by the implementation; see ProtocolFeaturesSupported in the service root.",
                         {}, "Remove the query parameter and resubmit the request.");
    bool& seen = name == "$select" ? seen_select : seen_expand;
    if (seen)
      throw RedfishError(400, "QueryCombinationInvalid", "The parameter " + name + " appears more than once in the request.", {},
                         "Remove the repeated query parameter and resubmit the request.");
    seen = true;
    if (name == "$select") q.select = parse_select(value);
    else parse_expand(value, q);
  }
  return q;
}

nlohmann::json apply_select(const nlohmann::json& body, const std::vector<std::string>& select) {
  if (select.empty() || !body.is_object()) return body;
  nlohmann::json out = nlohmann::json::object();
  for (auto it = body.begin(); it != body.end(); ++it)
    if (it.key().rfind("@odata.", 0) == 0) out[it.key()] = it.value();
  for (const std::string& name : select) {
    if (body.contains(name)) out[name] = body[name];
    if (name == "Members" && body.contains("Members@odata.count")) out["Members@odata.count"] = body["Members@odata.count"];
  }
  return out;
}

nlohmann::json apply_expand(const nlohmann::json& body, const Query& q, const Resolver& resolve) {
  if (q.expand == Query::Expand::kNone) return body;
  nlohmann::json out = body;
  Expander{q, resolve}.walk(out, false, q.levels);
  return out;
}

}  // namespace afasim::redfish
