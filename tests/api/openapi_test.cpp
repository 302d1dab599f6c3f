// The OpenAPI document and the server agree: every route the server registers is in the
// document and every operation in the document is a route; every $ref resolves.
#include <doctest/doctest.h>

#include <set>

#include "api_fixture.h"

namespace afasim::api::testing {
namespace {

void collect_refs(const json& node, std::set<std::string>& refs) {
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) {
      if (k == "$ref" && v.is_string())
        refs.insert(v.get<std::string>());
      else
        collect_refs(v, refs);
    }
  } else if (node.is_array()) {
    for (const auto& v : node) collect_refs(v, refs);
  }
}

TEST_CASE("every registered route is in openapi.json and every documented operation is served") {
  ApiFixture fx;
  std::set<std::pair<std::string, std::string>> served;
  for (const auto& r : fx.server().routes()) {
    std::string m = r.method;
    for (char& ch : m) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    CHECK_MESSAGE(served.insert({m, r.path}).second, "route registered twice: " << r.path);
  }
  std::set<std::pair<std::string, std::string>> documented;
  for (const auto& [path, item] : openapi()["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      if (method == "parameters") continue;
      documented.insert({method, path});
    }
  }
  for (const auto& r : served)
    CHECK_MESSAGE(documented.count(r), "not documented: " << r.first << " " << r.second);
  for (const auto& d : documented)
    CHECK_MESSAGE(served.count(d), "not served: " << d.first << " " << d.second);
  CHECK(served.size() == documented.size());
}

TEST_CASE("openapi.json is an OpenAPI 3 document whose references all resolve") {
  const json& doc = openapi();
  CHECK(doc["openapi"].get<std::string>().rfind("3.0", 0) == 0);
  CHECK(doc["servers"][0]["url"] == kApiPrefix);
  std::set<std::string> refs;
  collect_refs(doc, refs);
  CHECK(refs.size() > 20);
  for (const auto& ref : refs) {
    INFO(ref);
    REQUIRE(ref.rfind("#/", 0) == 0);
    CHECK(doc.contains(json::json_pointer(ref.substr(1))));
  }
  std::set<std::string> operation_ids;
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      INFO(method << " " << path);
      CHECK(op.contains("responses"));
      CHECK(op.contains("summary"));
      REQUIRE(op.contains("operationId"));
      CHECK(operation_ids.insert(op["operationId"].get<std::string>()).second);
      // Every path with {id} declares the parameter.
      if (path.find("{id}") != std::string::npos) CHECK(op.contains("parameters"));
      // Every body-taking operation documents its body and the errors bodies cause.
      if (method == "post" || method == "patch") {
        CHECK(op.contains("requestBody"));
        for (const char* s : {"400", "413", "415", "422"}) CHECK(op["responses"].contains(s));
      }
    }
  }
}

}  // namespace
}  // namespace afasim::api::testing
