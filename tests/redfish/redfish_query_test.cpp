// Query parameters (redfish/query.h) against DSP0266 1.20 "Query parameters": what parses,
// what each malformed value answers, and how $select and $expand reshape a resource.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "redfish/internal.h"
#include "redfish/query.h"

using namespace afasim::redfish;
using nlohmann::json;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

// The status and Base message key parse_query throws for `params`, or {0, ""} when it parses.
std::pair<int, std::string> outcome(const Params& params, const std::string& method = "GET") {
  try {
    parse_query(method, params);
    return {0, ""};
  } catch (const RedfishError& e) {
    return {e.status, e.message_id};
  }
}

}  // namespace

TEST_CASE("$select and $expand parse; other '$' parameters are 501, parameters without '$' ignored") {
  const Query q = parse_query("GET", {{"$select", "Name,Status,Members@odata.count"}, {"$expand", "~($levels=3)"}, {"only", ""}});
  CHECK(q.select == std::vector<std::string>{"Name", "Status", "Members@odata.count"});
  CHECK(q.expand == Query::Expand::kLinks);
  CHECK(q.levels == 3);
  CHECK(parse_query("GET", {{"$expand", "."}}).expand == Query::Expand::kSubordinate);
  CHECK(parse_query("GET", {{"$expand", "*"}}).levels == 1);  // DSP0266: $levels defaults to 1
  CHECK(parse_query("GET", {{"excerpt", ""}, {"foo", "bar"}}).empty());
  // DSP0266: "shall return HTTP 501 Not Implemented" for an unsupported '$' parameter.
  for (const char* name : {"$filter", "$top", "$skip", "$orderby", "$", "$SELECT"})
    CHECK(outcome({{name, "1"}}) == std::pair<int, std::string>{501, "QueryNotSupported"});
  CHECK(outcome({{"$select", "Name"}}, "PATCH") == std::pair<int, std::string>{501, "QueryNotSupported"});
  CHECK(outcome({{"$select", "Name"}, {"$select", "Id"}}).first == 400);
  // A property named twice in one $select counts once: the same answer as naming it once.
  CHECK(parse_query("GET", {{"$select", "Name,Status,Name,Name"}}).select ==
        std::vector<std::string>{"Name", "Status"});
  const json body = {{"@odata.id", "/x"}, {"Name", "x"}, {"Id", "1"}};
  CHECK(apply_select(body, parse_query("GET", {{"$select", "Name,Name"}}).select) ==
        apply_select(body, {"Name"}));
}

TEST_CASE("every malformed $select or $expand value is a 400 naming the parameter") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"$select", ""}, {"$select", ","}, {"$select", "Name,"}, {"$select", ",Name"}, {"$select", "Status/Health"},
      {"$select", "Na me"}, {"$select", "Name;Id"}, {"$select", std::string("Na\0me", 5)}, {"$select", "*"},
      {"$expand", ""}, {"$expand", "x"}, {"$expand", ".."}, {"$expand", ".($levels=)"}, {"$expand", ".($levels=0)"},
      {"$expand", ".($levels=4)"}, {"$expand", ".($levels=-1)"}, {"$expand", ".($levels=1"}, {"$expand", ".(levels=1)"},
      {"$expand", ".($levels=99999999999999999999)"}, {"$expand", "*($levels=1)x"}, {"$expand", "~ ($levels=1)"},
  };
  for (const auto& [name, value] : bad) {
    CAPTURE(name);
    CAPTURE(value);
    const auto [status, id] = outcome({{name, value}});
    CHECK(status == 400);
    CHECK(id.rfind("Query", 0) == 0);
  }
  // A number too large is out of range, not a non-number (hostile round 16: '1000').
  CHECK(outcome({{"$expand", ".($levels=1000)"}}).second == "QueryParameterOutOfRange");
  CHECK(outcome({{"$expand", ".($levels=99999999999999999999)"}}).second == "QueryParameterOutOfRange");
  CHECK(outcome({{"$expand", ".($levels=1e3)"}}).second == "QueryParameterValueTypeError");
  CHECK(outcome({{"$expand", ".($levels=0001)"}}).first == 0);  // 1, however many leading zeros
  // Every string of up to 4 characters over the syntax's alphabet after each type: parsed or
  // a 400, never another status or an exception of another type.
  const std::string alphabet = ".*~($levls=019)";
  std::vector<std::string> tails = {""};
  for (int len = 1; len <= 3; ++len) {
    const std::size_t n = tails.size();
    for (std::size_t i = 0; i < n; ++i)
      if (tails[i].size() == static_cast<std::size_t>(len - 1))
        for (char c : alphabet) tails.push_back(tails[i] + c);
  }
  int parsed = 0;
  for (const char* head : {".", "*", "~", "x"})
    for (const std::string& t : tails) {
      const auto [status, id] = outcome({{"$expand", head + t}});
      CHECK((status == 0 || status == 400));
      parsed += status == 0;
    }
  CHECK(parsed == 3);  // ".", "*", "~" alone: no 3-character tail is a ($levels=N)
}

TEST_CASE("$select keeps the named top-level properties and every @odata annotation") {
  const json body = {{"@odata.id", "/redfish/v1/X"}, {"@odata.type", "#X.v1_0_0.X"}, {"@odata.etag", "\"1-ab\""},
                     {"Name", "x"}, {"Status", {{"State", "Enabled"}}}, {"Members", json::array()}, {"Members@odata.count", 0}};
  const json a = apply_select(body, {"Status", "Missing"});
  CHECK(a == json{{"@odata.id", "/redfish/v1/X"}, {"@odata.type", "#X.v1_0_0.X"}, {"@odata.etag", "\"1-ab\""},
                  {"Status", {{"State", "Enabled"}}}});
  CHECK(apply_select(body, {"Members"}).contains("Members@odata.count"));
  CHECK(apply_select(body, {}) == body);
}

TEST_CASE("$expand replaces the links its type names, $levels deep, and leaves unknown ones") {
  // A two-level tree: a collection whose members link to their pool (in Links) and a subordinate.
  auto resolve = [](const std::string& u) -> std::optional<json> {
    if (u == "/m/1" || u == "/m/2")
      return json{{"@odata.id", u}, {"Links", {{"Pool", {{"@odata.id", "/pool"}}}}}, {"Sub", {{"@odata.id", "/sub"}}}};
    if (u == "/pool" || u == "/sub") return json{{"@odata.id", u}, {"Name", u}};
    return std::nullopt;
  };
  const json coll = {{"@odata.id", "/m"}, {"Members", {{{"@odata.id", "/m/1"}}, {{"@odata.id", "/m/2"}}, {{"@odata.id", "/gone"}}}},
                     {"Links", {{"Owner", {{"@odata.id", "/pool"}}}}}};
  Query q;
  q.expand = Query::Expand::kSubordinate;
  json one = apply_expand(coll, q, resolve);
  CHECK(one["Members"][0]["Sub"] == json{{"@odata.id", "/sub"}});  // level 1 only
  CHECK(one["Members"][2] == json{{"@odata.id", "/gone"}});         // not resolvable: stays a link
  CHECK(one["Links"]["Owner"] == json{{"@odata.id", "/pool"}});     // "." skips Links
  q.levels = 2;
  json two = apply_expand(coll, q, resolve);
  CHECK(two["Members"][1]["Sub"]["Name"] == "/sub");
  CHECK(two["Members"][1]["Links"]["Pool"] == json{{"@odata.id", "/pool"}});
  q.expand = Query::Expand::kLinks;
  json links = apply_expand(coll, q, resolve);
  CHECK(links["Links"]["Owner"]["Name"] == "/pool");
  CHECK(links["Members"][0] == json{{"@odata.id", "/m/1"}});
  q.expand = Query::Expand::kAll;
  json all = apply_expand(coll, q, resolve);
  CHECK(all["Links"]["Owner"]["Name"] == "/pool");
  CHECK(all["Members"][0]["Links"]["Pool"]["Name"] == "/pool");
  // The bound: a collection of more members than kMaxExpandedResources expands that many.
  json big = {{"Members", json::array()}};
  for (std::size_t i = 0; i < kMaxExpandedResources + 10; ++i) big["Members"].push_back({{"@odata.id", "/sub"}});
  q.levels = 1;
  const json capped = apply_expand(big, q, resolve);
  std::size_t expanded = 0;
  for (const json& m : capped["Members"]) expanded += m.contains("Name");
  CHECK(expanded == kMaxExpandedResources);
}
