// The pieces of a request every endpoint reads (ids, bodies, If-Match, list queries) and
// the replies they build. Internal to api/; functions throw ApiError for what a client got
// wrong. Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/problem.h"
#include "controller/objects.h"
#include "http/message.h"
#include "sim/status.h"

namespace afasim::api {

// If-Match, parsed: absent, "*", or the revisions the listed ETags name.
struct Precondition {
  bool present = false;
  bool any = false;
  std::vector<std::uint64_t> revisions;
};

// One request as a handler sees it.
struct Call {
  const http::Request& http;
  std::string id_segment;  // the "{id}" part of the path, unparsed ("" when none)
  // The user making the request ("" without authentication), for the events it causes.
  const std::string& user() const { return http.principal.user; }
};

struct Reply {
  Reply(int status_in, nlohmann::json body_in, std::optional<std::uint64_t> revision_in = {})
      : status(status_in), body(std::move(body_in)), revision(revision_in) {}
  int status = 200;
  nlohmann::json body;                    // null: no body (204)
  std::optional<std::uint64_t> revision;  // sets the ETag
  std::string location;                   // for 201
  std::string raw_body;                   // when set: the body, already serialized JSON
};

inline constexpr std::int64_t kDefaultLimit = 100;
inline constexpr std::int64_t kMaxLimit = 1000;
inline constexpr std::int64_t kIdMax = INT64_MAX;

// `s` as a JSON string, for messages.
std::string quote_json(const std::string& s);
// The {id} of the path: a positive decimal integer, else 404 naming `kind`.
controller::Id parse_id(const Call& c, const std::string& kind);
// The body of a POST (or PATCH, which also takes application/merge-patch+json) as a JSON
// object: 415 for another Content-Type, 400 for anything but one JSON object.
nlohmann::json json_body(const Call& c, bool patch);
Precondition parse_if_match(const http::Request& r);
// The revision to hand the model for `pre`, or 412 when `pre` does not match `current`.
std::optional<std::uint64_t> expected_revision(const Precondition& pre, std::uint64_t current,
                                               const std::string& what);

// limit, offset and the filters a list accepts; anything else is 400.
struct ListQuery {
  std::int64_t offset = 0;
  std::int64_t limit = kDefaultLimit;
  std::map<std::string, std::int64_t> ids;     // integer filters
  std::map<std::string, std::string> strings;  // string filters
};

ListQuery parse_list_query(const http::Request& r, std::vector<std::string> id_filters = {},
                           std::vector<std::string> string_filters = {});
// Query strings on a path that takes none are refused too, so that a typo is never ignored.
void no_query(const http::Request& r);

// Collects one page of a list as items are offered in order.
class Pager {
 public:
  explicit Pager(const ListQuery& q) : q_(q) {}
  template <typename Make>
  void offer(Make&& make) {
    if (total_ >= q_.offset && total_ - q_.offset < q_.limit) items_.push_back(make());
    ++total_;
  }
  Reply reply() {
    return Reply(200, nlohmann::json{{"items", std::move(items_)},
                           {"total", total_},
                           {"offset", q_.offset},
                           {"limit", q_.limit}});
  }

 private:
  const ListQuery& q_;
  nlohmann::json items_ = nlohmann::json::array();
  std::int64_t total_ = 0;
};

bool matches(const ListQuery& q, const char* filter, std::int64_t value);
bool matches(const ListQuery& q, const char* filter, const std::optional<std::int64_t>& value);
bool matches(const ListQuery& q, const char* filter, const std::string& value);

template <typename T>
T unwrap(sim::Result<T> r) {
  if (!r) throw from_status(r.status());
  return std::move(r).value();
}
void check(const sim::Status& s);
Reply created(const std::string& collection, controller::Id id, std::uint64_t revision,
              nlohmann::json body);
Reply no_content();

}  // namespace afasim::api
