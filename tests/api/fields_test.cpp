// FieldReader and parse_body_object: the strict reading of request bodies.
#include "api/fields.h"

#include <doctest/doctest.h>

#include "api/problem.h"

namespace afasim::api {
namespace {

using nlohmann::json;

// The status of the ApiError `fn` throws, or 0 if it throws none.
template <typename F>
int status_of(F&& fn) {
  try {
    fn();
  } catch (const ApiError& e) {
    return e.status();
  }
  return 0;
}

// The detail of the ApiError `fn` throws, or "" if it throws none.
template <typename F>
std::string detail_of(F&& fn) {
  try {
    fn();
  } catch (const ApiError& e) {
    return e.detail();
  }
  return "";
}

TEST_CASE("parse_body_object accepts one object and refuses everything else with 400") {
  CHECK(parse_body_object(R"({"a": 1})")["a"] == 1);
  for (const std::string& body : {std::string(""), std::string("  "), std::string("[1,2]"),
                                  std::string("42"), std::string("\"x\""), std::string("null"),
                                  std::string("{\"a\": 1"), std::string("{\"a\": 1} trailing"),
                                  std::string("{'a': 1}"), std::string("{\"a\": \"\xff\xfe\"}"),
                                  std::string("{\"a\": NaN}"), std::string("\xef\xbb\xbf{}x")}) {
    INFO(body);
    CHECK(status_of([&] { parse_body_object(body); }) == 400);
  }
}

TEST_CASE("parse_body_object refuses nesting deeper than kBodyMaxDepth before building it") {
  std::string deep(100000, '[');
  deep = "{\"a\":" + deep;
  CHECK(status_of([&] { parse_body_object(deep); }) == 400);
  std::string ok =
      "{\"a\":" + std::string(kBodyMaxDepth - 1, '[') + std::string(kBodyMaxDepth - 1, ']') + "}";
  CHECK(status_of([&] { parse_body_object(ok); }) == 0);
}

TEST_CASE("FieldReader lists unknown fields (400) and refuses read-only ones (422)") {
  const json body = {{"name", "v"}, {"colour", "red"}, {"shape", 1}};
  try {
    FieldReader f(body, {"name"});
    FAIL("no error");
  } catch (const ApiError& e) {
    CHECK(e.status() == 400);
    CHECK(e.type() == problem::kUnknownFields);
    CHECK(e.extra()["unknown_fields"] == json({"colour", "shape"}));
    CHECK(e.detail().find("\"colour\"") != std::string::npos);
  }
  CHECK(status_of([&] { FieldReader f(json{{"id", 3}}, {"name"}, {"id"}); }) == 422);
  CHECK(status_of([&] { FieldReader f(json::array(), {"name"}); }) == 400);
}

TEST_CASE("FieldReader integers: wrong types are 400, out-of-range integers 422") {
  const json body = json::parse(R"({"i": 7, "neg": -3, "f": 1.5, "whole": 2.0, "s": "7",
      "b": true, "big": 18446744073709551615, "huge": 1e30, "n": null})");
  FieldReader f(body, {"i", "neg", "f", "whole", "s", "b", "big", "huge", "n"});
  CHECK(f.integer("i") == 7);
  CHECK(f.integer("neg") == -3);
  CHECK(f.integer("n") == std::nullopt);
  CHECK(f.integer("absent") == std::nullopt);
  CHECK(status_of([&] { f.integer("f"); }) == 400);
  CHECK(status_of([&] { f.integer("whole"); }) == 400);
  // A whole number with a decimal point (or an exponent) is told how to write it (hostile
  // round 16: "must be an integer, got a non-integer number 1000.0").
  try {
    f.integer("whole");
    FAIL("no error");
  } catch (const ApiError& e) {
    CHECK(std::string(e.what()).find("whole must be an integer written without an exponent or a decimal point (2), "
                                     "got 2.0") != std::string::npos);
  }
  CHECK(status_of([&] { f.integer("s"); }) == 400);
  CHECK(status_of([&] { f.integer("b"); }) == 400);
  CHECK(status_of([&] { f.integer("big"); }) == 422);
  CHECK(status_of([&] { f.integer("huge"); }) == 422);
  CHECK(status_of([&] { f.required_integer("n"); }) == 400);
  auto cleared = f.nullable_integer("n");
  REQUIRE(cleared.has_value());
  CHECK(!cleared->has_value());
  CHECK(!f.nullable_integer("absent").has_value());
  CHECK(f.nullable_integer("i").value() == 7);
}

TEST_CASE("FieldReader sizes take bytes or size strings") {
  const json body = json::parse(R"({"a": 4096, "b": "100GiB", "c": "lots", "d": "-1G",
      "e": [1], "f": "1.3B"})");
  FieldReader f(body, {"a", "b", "c", "d", "e", "f"});
  CHECK(f.size("a") == 4096);
  CHECK(f.size("b") == 107374182400LL);
  CHECK(status_of([&] { f.size("c"); }) == 400);
  CHECK(status_of([&] { f.size("d"); }) == 422);
  CHECK(status_of([&] { f.size("e"); }) == 400);
  CHECK(status_of([&] { f.size("f"); }) == 422);
  CHECK(status_of([&] { f.required_size("absent"); }) == 400);
}

TEST_CASE("FieldReader enums, controllers and initiators") {
  const json body = json::parse(R"({"r10": "RAID10", "r0": "RAID0", "r6": "RAID6",
      "low": "raid5", "thin": "thin", "thick": "thick", "ro": "read_only", "A": "B",
      "two": 2, "bad": "east", "C": "C", "Z": "Z",
      "ini": [{"type": "fc", "address": "50:01:43:80:12:34:56:78"}],
      "ini_bad_type": [{"type": "sas", "address": "x"}],
      "ini_extra": [{"type": "nbd", "address": "x", "port": 1}],
      "ini_missing": [{"type": "nbd"}],
      "ini_not_list": {"type": "nbd"}})");
  FieldReader f(body, {"r10", "r0", "r6", "low", "thin", "thick", "ro", "A", "two", "bad", "C", "Z",
                       "ini", "ini_bad_type", "ini_extra", "ini_missing", "ini_not_list"});
  CHECK(f.raid_type("r10") == raid::RaidType::kRaid10);
  CHECK(f.raid_type("r0") == raid::RaidType::kRaid0);  // a RAID type; the array refuses it
  CHECK(status_of([&] { f.raid_type("r6"); }) == 400);
  CHECK(status_of([&] { f.raid_type("low"); }) == 400);
  CHECK(f.provisioning("thin") == controller::Provisioning::kThin);
  CHECK(status_of([&] { f.provisioning("thick"); }) == 400);
  CHECK(f.access("ro") == controller::MappingAccess::kReadOnly);
  CHECK(f.controller_id("A") == 2);
  CHECK(f.controller_id("two") == 2);
  CHECK(status_of([&] { f.controller_id("bad"); }) == 400);
  // Letters beyond B were read as ids 3..26, and the array's 422 quoted that number.
  CHECK(status_of([&] { f.controller_id("C"); }) == 400);
  CHECK(status_of([&] { f.controller_id("Z"); }) == 400);
  CHECK(detail_of([&] { f.controller_id("C"); }) ==
        "C must be a controller id (1, 2) or name (\"A\", \"B\"), got \"C\"");
  auto ini = f.initiators("ini");
  REQUIRE(ini.has_value());
  REQUIRE(ini->size() == 1);
  CHECK((*ini)[0].type == controller::InitiatorType::kFc);
  CHECK(status_of([&] { f.initiators("ini_bad_type"); }) == 400);
  CHECK(status_of([&] { f.initiators("ini_extra"); }) == 400);
  CHECK(status_of([&] { f.initiators("ini_missing"); }) == 400);
  CHECK(status_of([&] { f.initiators("ini_not_list"); }) == 400);
}

TEST_CASE("parse_query_integer takes plain decimals in range only") {
  CHECK(parse_query_integer("limit", "10", 0, 1000) == 10);
  CHECK(parse_query_integer("limit", "0", 0, 1000) == 0);
  for (const char* v :
       {"", "-1", "1001", "abc", "1.5", "1e3", " 5", "+5", "99999999999999999999999"}) {
    INFO(v);
    CHECK(status_of([&] { parse_query_integer("limit", v, 0, 1000); }) == 400);
  }
}

}  // namespace
}  // namespace afasim::api
