// parse_json_strict: JSON as nlohmann reads it, minus the duplicate keys it would keep
// silently, with a depth bound and comments only when asked for.
#include "config/json_text.h"

#include <doctest/doctest.h>

namespace afasim::config {
namespace {

using nlohmann::json;

JsonParseError refusal(std::string_view text, JsonParseOptions options = {}) {
  JsonParseError e;
  auto r = parse_json_strict(text, options, &e);
  REQUIRE_MESSAGE(!r.is_ok(), text);
  CHECK(r.status().code() == sim::Code::kInvalidArgument);
  return e;
}

TEST_CASE("parse_json_strict reads valid JSON as nlohmann does") {
  const std::string text = R"({"a": [1, {"b": null, "c": "x"}], "d": {"a": 2}, "e": 1.5})";
  auto r = parse_json_strict(text);
  REQUIRE(r.is_ok());
  CHECK(*r == json::parse(text));
  // The same key in different objects, and in objects of an array, is no duplicate.
  CHECK(parse_json_strict(R"([{"k": 1}, {"k": 2}, {"x": {"k": 3}}])").is_ok());
  CHECK(parse_json_strict("7").value() == 7);
}

TEST_CASE("a key given twice is refused with its path") {
  JsonParseError e = refusal(R"({"type": "link_cut", "type": "power_loss"})");
  CHECK(e.kind == JsonParseError::Kind::kDuplicateKey);
  CHECK(e.path == "type");
  CHECK(e.message == "duplicate key");
  e = refusal(R"({"volumes": [{"name": "a"}, {"name": "b", "size": 1, "name": "c"}]})");
  CHECK(e.path == "volumes[1].name");
  auto r = parse_json_strict(R"({"x": {"y": 1, "y": 2}})");
  CHECK(r.status().message() == "x.y: duplicate key");
}

TEST_CASE(
    "nesting past max_depth is refused where it happens; syntax errors keep nlohmann's words") {
  JsonParseOptions o;
  o.max_depth = 3;
  CHECK(parse_json_strict("[[[1]]]", o).is_ok());
  JsonParseError e = refusal("[[[[1]]]]", o);
  CHECK(e.kind == JsonParseError::Kind::kTooDeep);
  CHECK(e.path == "[0][0][0][0]");  // the value inside a fourth array
  CHECK(e.message == "nested deeper than 3 levels");
  // A deep document is refused long before the parser's own recursion could matter.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(refusal(deep).kind == JsonParseError::Kind::kTooDeep);
  e = refusal(R"({"name": )");
  CHECK(e.kind == JsonParseError::Kind::kSyntax);
  CHECK(e.message.rfind("parse error at line 1, column 10: ", 0) == 0);
  CHECK(parse_json_strict("").status().message().rfind("invalid JSON: ", 0) == 0);
}

TEST_CASE("a NUL byte is refused where it is, not taken as the end of the text") {
  // Review 41: nlohmann's lexer ends at a NUL, so {"name":"a"}\0,"max_iops":5} created "a"
  // and the rest, invalid UTF-8 included, went unread.
  using namespace std::string_literals;
  JsonParseError e = refusal("{\"name\":\"a\"}\0,\"max_iops\":5}"s);
  CHECK(e.kind == JsonParseError::Kind::kSyntax);
  CHECK(e.message == "parse error at line 1, column 13: a NUL byte, which JSON text does not have");
  CHECK(refusal("[1,\n 2]\0\xff\xfe"s).message.rfind("parse error at line 2, column 4: ", 0) == 0);
  CHECK(parse_json_strict("{\"a\":\"\0\"}"s).status().message().find("invalid JSON: ") == 0);
  CHECK(parse_json_strict("{\"a\":\"\\u0000\"}").is_ok());  // the escape is JSON's way to write one
}

TEST_CASE("a large array of objects reads whole, its refusals with their paths; a number beyond a double") {
  // Hostile round 36: {"x":[{},{},...]} (349,522 objects in a 1 MiB body) held a server
  // worker for 66 s in nlohmann's callback parser (O(n^2)); 0.15 s now (measured through
  // POST /api/v1/sessions: not asserted here, a test does not time itself).
  std::string text = "{\"x\":[";
  for (int i = 0; i < 349'000; ++i) text += i == 0 ? "{}" : ",{}";
  auto r = parse_json_strict(text + "]}");
  REQUIRE(r.is_ok());
  CHECK((*r)["x"].size() == 349'000);
  JsonParseError e = refusal(text + R"(,{"k":1,"k":2}]})");
  CHECK(e.kind == JsonParseError::Kind::kDuplicateKey);
  CHECK(e.path == "x[349000].k");
  e = refusal(R"({"a": [1, 2, 1e400]})");
  CHECK(e.kind == JsonParseError::Kind::kNumberTooLarge);
  CHECK(e.path == "a[2]");
}

TEST_CASE("comments only when allowed") {
  const std::string text = "{\"a\": 1 // one\n}";
  CHECK(refusal(text).kind == JsonParseError::Kind::kSyntax);
  JsonParseOptions o;
  o.allow_comments = true;
  CHECK(parse_json_strict(text, o).value() == json{{"a", 1}});
}

}  // namespace
}  // namespace afasim::config
