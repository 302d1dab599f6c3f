// Reading requests and shaping replies: what every endpoint shares (api/request.h).
#include "api/request.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "api/fields.h"
#include "api/rest_server.h"

namespace afasim::api {

using nlohmann::json;
using controller::Id;


std::string quote_json(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

// The {id} of the path: a positive decimal integer as the API writes it (no leading zero:
// "01" names nothing), else no such object (404).
Id parse_id(const Call& c, const std::string& kind) {
  const std::string& s = c.id_segment;
  const std::optional<Id> id = controller::parse_object_id(s);
  if (!id) {
    std::string shown = s.size() > 40 ? s.substr(0, 40) + "..." : s;
    throw not_found("no " + kind + " " + quote_json(shown) + " (ids are positive integers, written without leading zeros)");
  }
  return *id;
}

namespace {
std::string lower_trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  s = s.substr(b);
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

// The body of a POST or PATCH: a JSON object sent as application/json (or, for PATCH,
// application/merge-patch+json, whose semantics the PATCH handlers follow).
json json_body(const Call& c, bool patch) {
  const auto& r = c.http;
  if (r.has_header("Content-Type")) {
    std::string type = r.header("Content-Type");
    type = lower_trim(type.substr(0, type.find(';')));
    const bool ok = type == "application/json" || (patch && type == "application/merge-patch+json");
    if (!ok) {
      throw ApiError(415, problem::kUnsupportedMediaType,
                     "Content-Type " + quote_json(type) +
                         " is not accepted; send application/json" +
                         (patch ? " or application/merge-patch+json" : ""));
    }
  } else if (!r.body.empty()) {
    throw ApiError(415, problem::kUnsupportedMediaType,
                   "the request has a body but no Content-Type; send application/json");
  }
  return parse_body_object(r.body);
}

Precondition parse_if_match(const http::Request& r) {
  Precondition p;
  if (!r.has_header("If-Match")) return p;
  p.present = true;
  const std::string v = r.header("If-Match");
  std::size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && (v[i] == ' ' || v[i] == ',' || v[i] == '\t')) ++i;
    if (i >= v.size()) break;
    if (v[i] == '*') {
      p.any = true;
      ++i;
      continue;
    }
    const bool weak = v.compare(i, 2, "W/") == 0;
    if (weak) i += 2;
    if (i >= v.size() || v[i] != '"') break;  // malformed: what was read so far stands
    const std::size_t close = v.find('"', i + 1);
    if (close == std::string::npos) break;
    const std::string tag = v.substr(i + 1, close - i - 1);
    i = close + 1;
    if (weak) continue;  // If-Match compares strongly: a weak tag never matches
    // Our ETags are "<revision>-<digest>"; If-Match compares the revision (docs/api.md).
    std::uint64_t rev = 0;
    const auto [end, ec] = std::from_chars(tag.data(), tag.data() + tag.size(), rev);
    if (ec == std::errc() && end != tag.data() && (end == tag.data() + tag.size() || *end == '-'))
      p.revisions.push_back(rev);
  }
  return p;
}

// The revision to hand the model for `pre`, or 412 when `pre` does not match `current`.
std::optional<std::uint64_t> expected_revision(const Precondition& pre, std::uint64_t current,
                                               const std::string& what) {
  if (!pre.present) return std::nullopt;
  if (pre.any) return current;
  if (std::find(pre.revisions.begin(), pre.revisions.end(), current) != pre.revisions.end())
    return current;
  throw ApiError(412, problem::kPreconditionFailed,
                 what + " is at revision " + std::to_string(current) +
                     "; If-Match does not name it (GET it again for its current ETag)");
}


ListQuery parse_list_query(const http::Request& r, std::vector<std::string> id_filters,
                           std::vector<std::string> string_filters) {
  ListQuery q;
  std::set<std::string> seen;
  for (const auto& [name, value] : r.params) {
    if (!seen.insert(name).second) throw bad_request("query parameter " + name + " is given twice");
    if (name == "limit") {
      q.limit = parse_query_integer(name, value, 0, kMaxLimit);
    } else if (name == "offset") {
      q.offset = parse_query_integer(name, value, 0, INT64_MAX);
    } else if (std::find(id_filters.begin(), id_filters.end(), name) != id_filters.end()) {
      q.ids[name] = parse_query_integer(name, value, 1, kIdMax);
    } else if (std::find(string_filters.begin(), string_filters.end(), name) !=
               string_filters.end()) {
      q.strings[name] = value;
    } else {
      std::string accepted = "limit, offset";
      for (const auto& f : id_filters) accepted += ", " + f;
      for (const auto& f : string_filters) accepted += ", " + f;
      throw ApiError(
          400, problem::kBadRequest,
          "unknown query parameter " + quote_json(name) + "; accepted here: " + accepted);
    }
  }
  return q;
}

// Query strings on a path that takes none are refused too, so that a typo is never ignored.
// (r.params would also hold the fields of a form-encoded body: read the target instead.)
void no_query(const http::Request& r) {
  const std::size_t q = r.target.find('?');
  if (q != std::string::npos && q + 1 < r.target.size()) {
    std::string query = r.target.substr(q + 1, 40);
    throw bad_request("this resource takes no query parameters, got " + quote_json(query));
  }
}


bool matches(const ListQuery& q, const char* filter, std::int64_t value) {
  auto it = q.ids.find(filter);
  return it == q.ids.end() || it->second == value;
}
bool matches(const ListQuery& q, const char* filter, const std::optional<std::int64_t>& value) {
  auto it = q.ids.find(filter);
  return it == q.ids.end() || (value && it->second == *value);
}
bool matches(const ListQuery& q, const char* filter, const std::string& value) {
  auto it = q.strings.find(filter);
  return it == q.strings.end() || it->second == value;
}

void check(const sim::Status& s) {
  if (!s) throw from_status(s);
}

Reply created(const std::string& collection, Id id, std::uint64_t revision, json body) {
  Reply r(201, std::move(body), revision);
  r.location = std::string(kApiPrefix) + "/" + collection + "/" + std::to_string(id);
  return r;
}

Reply no_content() {
  return Reply(204, nullptr);
}

}  // namespace afasim::api
