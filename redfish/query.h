// Redfish query parameters (DSP0266 1.20, "Query parameters"): what afasim supports, how a
// request's parameters are read, and how $select and $expand reshape a resource.
//
// Supported: $select (top-level property names, comma-separated; @odata.id, @odata.type,
// @odata.etag and @odata.context are always kept) and $expand (".", "*" or "~", with an
// optional "($levels=N)", 1 <= N <= kMaxExpandLevels; default 1). Any other parameter that
// starts with '$' (and $select/$expand on a method other than GET) is 501 QueryNotSupported
// (DSP0266: "shall return HTTP 501 Not Implemented"); a bad value of a supported one is 400
// QueryParameterValueFormatError / QueryParameterValueTypeError; parameters without '$'
// ("only", "excerpt", anything unknown) are ignored, as DSP0266 asks.
//
// Pure functions; no model access. Errors are thrown as RedfishError (redfish/internal.h).
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace afasim::redfish {

// Deepest $levels accepted: 3 reaches from the service root to every resource of a
// collection's member's subordinate collection; more is a large answer for no client we know.
inline constexpr int kMaxExpandLevels = 3;
// Most resources one response expands (a bound on its size): beyond it, links stay links.
inline constexpr std::size_t kMaxExpandedResources = 512;

struct Query {
  enum class Expand { kNone, kSubordinate /* "." */, kAll /* "*" */, kLinks /* "~" */ };
  std::vector<std::string> select;  // top-level property names; empty: every property
  Expand expand = Expand::kNone;
  int levels = 1;                   // $levels, 1..kMaxExpandLevels
  bool empty() const { return select.empty() && expand == Expand::kNone; }
};

// Reads the decoded query parameters of a request with method `method`. Throws a
// RedfishError: 501 QueryNotSupported for an unsupported '$' parameter, 400 for a bad value
// or a repeated supported parameter.
Query parse_query(const std::string& method, const std::vector<std::pair<std::string, std::string>>& params);

// `body` with only the properties `select` names plus its @odata.* annotations (and a
// collection's Members@odata.count when Members is selected). An empty `select`: body.
nlohmann::json apply_select(const nlohmann::json& body, const std::vector<std::string>& select);

// Returns the resource at a URI ("/redfish/v1/..."), nullopt when it cannot be expanded.
using Resolver = std::function<std::optional<nlohmann::json>(const std::string& uri)>;

// Replaces the hyperlinks ({"@odata.id": uri} objects) of `body` that q.expand names by the
// resources `resolve` returns, q.levels deep; at most kMaxExpandedResources in all.
nlohmann::json apply_expand(const nlohmann::json& body, const Query& q, const Resolver& resolve);

}  // namespace afasim::redfish
