// The sweep file parser (sweep/sweep_file.h), JSON pointers with * (sweep/field_pointer.h)
// and the summary's confidence interval (sweep/statistics.h).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>

#include "sim/rng.h"
#include "sweep/field_pointer.h"
#include "sweep/statistics.h"
#include "sweep/sweep_file.h"

namespace afasim::sweep {
namespace {

using nlohmann::json;

constexpr const char* kHead = R"("schema": "afasim.sweep/1", "name": "t", "base": "b.json")";

sim::Result<SweepFile> parse(const std::string& body) { return parse_sweep_file("{" + std::string(kHead) + body + "}", "s.json"); }

// The message of a sweep file the parser must refuse.
std::string refused(const std::string& body) {
  auto f = parse(body);
  REQUIRE_MESSAGE(!f.is_ok(), "accepted: " << body);
  CHECK(f.status().code() == sim::Code::kInvalidArgument);
  return f.status().message();
}

FieldPointer pointer(const std::string& text) {
  auto p = parse_field_pointer(text);
  REQUIRE_MESSAGE(p.is_ok(), p.status().message());
  return *p;
}

}  // namespace

TEST_CASE("sweep file: axes multiply out in file order, the last axis fastest; seeds ascending") {
  auto f = parse(R"(, "axes": [{"field": "/a", "values": [1, 2]}, {"field": "/b/*/c", "values": ["x", "y", "z"]}],
                   "seeds": [3, 1, 2])");
  REQUIRE_MESSAGE(f.is_ok(), f.status().message());
  CHECK(f->fields == std::vector<std::string>{"/a", "/b/*/c"});
  REQUIRE(f->points.size() == 6);
  // (1,x) (1,y) (1,z) (2,x) (2,y) (2,z): nested loops, the first axis outermost.
  const char* b[] = {"x", "y", "z", "x", "y", "z"};
  for (std::size_t n = 0; n < 6; ++n) {
    REQUIRE(f->points[n].fields.size() == 2);
    CHECK(f->points[n].fields[0].value == json(n < 3 ? 1 : 2));
    CHECK(f->points[n].fields[1].value == json(b[n]));
  }
  CHECK(f->seeds == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(f->runs() == 18);
}

TEST_CASE("sweep file: points, set and seeds {first, count}") {
  auto f = parse(R"(, "set": {"/duration_s": 2}, "points": [{"/b": 1, "/a": "x"}, {}, {"/c": null}],
                   "seeds": {"first": 7, "count": 3})");
  REQUIRE_MESSAGE(f.is_ok(), f.status().message());
  CHECK(f->fields == std::vector<std::string>{"/a", "/b", "/c"});  // every point's fields, pointer order
  REQUIRE(f->points.size() == 3);
  CHECK(f->points[0].fields.size() == 2);
  CHECK(f->points[1].fields.empty());  // the base as it is: a valid point
  CHECK(f->seeds == std::vector<std::uint64_t>{7, 8, 9});
  REQUIRE(f->set.size() == 1);
  CHECK(f->set[0].pointer.text == "/duration_s");
}

TEST_CASE("sweep file: every rule refused with FILE: KEY: what is wrong") {
  const std::string axes = R"(, "axes": [{"field": "/a", "values": [1]}])";
  const std::string seeds = R"(, "seeds": [1])";
  CHECK(refused(axes + seeds + R"(, "colour": 1)") == "s.json: colour: unknown key (known: schema, name, description, base, set, axes, points, seeds)");
  CHECK(parse_sweep_file(R"({"schema": "afasim.sweep/2", "name": "t", "base": "b"})", "s.json").status().message() ==
        "s.json: schema: expected \"afasim.sweep/1\", got \"afasim.sweep/2\"");
  // Control characters anywhere in the file, and a point listed twice (hostile round 44: an
  // ESC in a value reached results.csv raw; the same point ran twice).
  CHECK(refused(seeds + R"(, "axes": [{"field": "/name", "values": ["ok", "x\u001by"]}])") ==
        "s.json: axes[0].values[1]: holds a control character (U+001B) at byte 2");
  CHECK(refused(axes + seeds + R"(, "description": "a\u007f")") ==
        "s.json: description: holds a control character (U+007F) at byte 2");
  CHECK(refused(axes + seeds + R"(, "description": "a\u009b31m")") ==
        "s.json: description: holds a control character (U+009B) at byte 2");
  CHECK(refused(seeds + R"(, "points": [{"/duration_s": 1}, {"/duration_s": 2}, {"/duration_s": 1}])") ==
        "s.json: points[2]: is also points[0]");
  CHECK(refused(seeds + R"(, "points": [{"/duration_s": 1, "/seed_x": 2}, {"/seed_x": 2, "/duration_s": 1}])") ==
        "s.json: points[1]: is also points[0]");
  CHECK(refused(seeds + R"(, "points": [{"/duration_s": 1}, {"/duration_s": 1.0}])") == "s.json: points[1]: is also points[0]");
  // The schema before the keys (hostile round 44: a scenario given to sweep said "duration_s: unknown key").
  CHECK(parse_sweep_file(R"({"schema": "afasim.scenario/1", "name": "t", "duration_s": 1})", "s.json").status().message() ==
        "s.json: schema: expected \"afasim.sweep/1\", got \"afasim.scenario/1\" (a scenario: afasim run FILE)");
  CHECK(parse_sweep_file(R"({"schema": "afasim.sweep/1", "base": "b"})", "s.json").status().message() == "s.json: name: required");
  CHECK(parse_sweep_file(R"({"schema": "afasim.sweep/1", "name": "t", "base": ""})", "s.json").status().message() ==
        "s.json: base: must not be empty");
  CHECK(refused(seeds) == "s.json: (top level): give exactly one of \"axes\" (a grid) and \"points\" (a list)");
  CHECK(refused(axes + R"(, "points": [{}])" + seeds) == "s.json: (top level): give exactly one of \"axes\" (a grid) and \"points\" (a list)");
  CHECK(refused(axes) == "s.json: seeds: required: a list of seeds, or {\"first\": 1, \"count\": 8}");
  CHECK(refused(R"(, "axes": [])" + seeds) == "s.json: axes: must not be empty");
  CHECK(refused(R"(, "axes": [{"values": [1]}])" + seeds) == "s.json: axes[0].field: required");
  CHECK(refused(R"(, "axes": [{"field": "/a", "values": 1}])" + seeds) == "s.json: axes[0].values: must be an array, got number");
  CHECK(refused(R"(, "axes": [{"field": "/a", "values": [1, 2, 1]}])" + seeds) == "s.json: axes[0].values[2]: 1 is also values[0]");
  CHECK(refused(R"(, "axes": [{"field": "/a", "values": [1]}, {"field": "/a", "values": [2]}])" + seeds) ==
        "s.json: axes[1].field: \"/a\" is already an axis");
  // Hostile round 25: a wildcard over another axis's field, or a field inside another: both
  // were run, the second winning, and the table showed both values.
  CHECK(refused(R"(, "axes": [{"field": "/volumes/*/name", "values": ["a"]}, {"field": "/volumes/0/name", "values": ["b"]}])" + seeds) ==
        "s.json: axes[1].field: \"/volumes/0/name\" overlaps \"/volumes/*/name\" (axes[0].field): both would set the same field");
  CHECK(refused(R"(, "points": [{"/volumes/0": {}, "/volumes/0/name": "b"}])" + seeds) ==
        "s.json: points[0][\"/volumes/0/name\"]: \"/volumes/0/name\" overlaps \"/volumes/0\" (points[0][\"/volumes/0\"]): both "
        "would set the same field");
  CHECK(parse_sweep_file(std::string(R"({"schema": "afasim.sweep/1", "name": "t", "base": "b")") +
                             R"(, "axes": [{"field": "/volumes/*/name", "values": ["a"]}, {"field": "/volumes/1/size", "values": [1]}])" +
                             seeds + "}",
                         "s.json")
            .is_ok());  // different fields under one array: no overlap
  CHECK(refused(R"(, "axes": [{"field": "a", "values": [1]}])" + seeds) == "s.json: axes[0].field: \"a\" does not start with / (RFC 6901)");
  CHECK(refused(R"(, "points": [{"/a~2": 1}])" + seeds) ==
        "s.json: points[0][\"/a~2\"]: \"/a~2\": ~ must be followed by 0 or 1 (RFC 6901: ~0 is ~, ~1 is /)");
  CHECK(refused(R"(, "points": [{"/volumes/*": 1}])" + seeds) ==
        "s.json: points[0][\"/volumes/*\"]: \"/volumes/*\" ends with *: name the field of each element");
  CHECK(refused(R"(, "points": [{"": 1}])" + seeds) == "s.json: points[0][\"\"]: \"\" is the whole scenario, not a field");
  CHECK(refused(R"(, "points": [1])" + seeds) == "s.json: points[0]: must be an object of field → value, got number");
  CHECK(refused(axes + R"(, "seeds": [1, 2, 1])") == "s.json: seeds: seed 1 is listed twice");
  CHECK(refused(axes + R"(, "seeds": [-1])") == "s.json: seeds[0]: must be an integer 0 to 2^64-1, got -1");
  CHECK(refused(axes + R"(, "seeds": {"first": 1})") == "s.json: seeds: needs both \"first\" and \"count\"");
  CHECK(refused(axes + R"(, "seeds": {"first": 1, "count": 0})") == "s.json: seeds.count: must be an integer 1 to 100000, got 0");
  CHECK(refused(axes + R"(, "seeds": {"first": 18446744073709551615, "count": 2})") == "s.json: seeds: the last seed is past 2^64-1");
  CHECK(refused(axes + R"(, "seeds": "all")") == "s.json: seeds: must be a list of seeds or {\"first\": F, \"count\": N}, got string");
  // 100 × 100 × 100 points is past kMaxSweepPoints (at the third axis): refused before anything is built.
  std::string values = "[";
  for (int i = 0; i < 100; ++i) values += (i ? "," : "") + std::to_string(i);
  values += "]";
  std::string big = R"(, "axes": [)";
  for (int a = 0; a < 4; ++a) big += std::string(a ? "," : "") + R"({"field": "/f)" + std::to_string(a) + R"(", "values": )" + values + "}";
  CHECK(refused(big + "]" + seeds) == "s.json: axes[2].values: the axes make more than 100000 points");
  CHECK(parse_sweep_file(R"({"schema": "afasim.sweep/1", "schema": "x"})", "s.json").status().message() ==
        "s.json: schema: duplicate key");
  CHECK(parse_sweep_file("{", "s.json").status().message().rfind("s.json: invalid JSON: ", 0) == 0);
  // "seeds" sets each run's seed: a /seed axis, set or point was silently overwritten
  // (hostile round 13: two "seeds" in the CSV, one run twice).
  const std::string seed_message = "/seed is set by \"seeds\" (each point runs once per seed): list the seeds there";
  CHECK(refused(R"(, "axes": [{"field": "/seed", "values": [5, 77]}])" + seeds) == "s.json: axes[0].field: " + seed_message);
  CHECK(refused(R"(, "set": {"/seed": 5}, "axes": [{"field": "/duration_s", "values": [1, 2]}])" + seeds) ==
        "s.json: set[\"/seed\"]: " + seed_message);
}

TEST_CASE("sweep file: mangled sweep files are refused with a message, never a crash") {
  // The shipped sweep's shape, edited at random: bytes cut, tokens inserted, bytes replaced.
  const std::string source = R"({"schema": "afasim.sweep/1", "name": "r", "base": "b.json", "set": {"/duration_s": 2},
    "axes": [{"field": "/volumes/*/raid_type", "values": ["RAID5", "RAID10"]},
             {"field": "/options/rebuild_bytes_per_second", "values": ["100MB/s", 2e9]}],
    "seeds": {"first": 1, "count": 8}})";
  const std::vector<std::string> tokens = {"[", "]", "{", "}", ",", ":", "\"", "*", "/", "~", "-1", "1e999",
                                           "null", "\"points\": [{}]", "\"seeds\": []", "/*"};
  std::size_t accepted = 0;
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    sim::Rng rng(seed, "sweep-fuzz");
    std::string text = source;
    for (int e = 0, edits = 1 + static_cast<int>(rng.uniform(3)); e < edits; ++e) {
      const std::size_t at = rng.uniform(text.size());
      switch (rng.uniform(3)) {
        case 0: text.erase(at, 1 + rng.uniform(6)); break;
        case 1: text.insert(at, tokens[rng.uniform(tokens.size())]); break;
        default: text[at] = static_cast<char>(rng.uniform(256)); break;
      }
    }
    auto f = parse_sweep_file(text, "s.json");
    if (f.is_ok()) {
      ++accepted;
      CHECK_MESSAGE(f->runs() >= 1, "seed " << seed);
    } else if (f.status().message().rfind("s.json: ", 0) != 0) {
      FAIL("seed " << seed << ": " << f.status().message());
    }
  }
  CHECK(accepted < 2000);  // the edits did reach the checks
}

TEST_CASE("field pointer: * sets the field in every element; RFC 6901 escapes") {
  json doc = json::parse(R"({"volumes": [{"raid_type": "RAID10"}, {"raid_type": "RAID10", "x": 1}], "a/b": {"~": 0}})");
  auto n = set_field(doc, pointer("/volumes/*/raid_type"), "RAID5");
  REQUIRE(n.is_ok());
  CHECK(*n == 2);
  CHECK(doc["volumes"][0]["raid_type"] == "RAID5");
  CHECK(doc["volumes"][1]["raid_type"] == "RAID5");
  CHECK(doc["volumes"][1]["x"] == 1);
  CHECK(*set_field(doc, pointer("/volumes/1/raid_type"), "RAID10") == 1);
  CHECK(doc["volumes"][0]["raid_type"] == "RAID5");
  CHECK(*set_field(doc, pointer("/a~1b/~0"), 5) == 1);  // ~1 is /, ~0 is ~
  CHECK(doc["a/b"]["~"] == 5);
  CHECK(*set_field(doc, pointer("/duration_s"), 2) == 1);  // a new member of an object
  CHECK(doc["duration_s"] == 2);
}

TEST_CASE("field pointer: a pointer that names nothing is an error, not a no-op") {
  json doc = json::parse(R"({"volumes": [{"name": "a"}], "empty": [], "n": 3, "options": {}})");
  auto message = [&](const std::string& p) { return set_field(doc, pointer(p), 1).status().message(); };
  CHECK(message("/volumes/2/name") == "/volumes/2/name: no element 2 (the array has 1) (at /volumes)");
  CHECK(message("/volumes/01/name") == "/volumes/01/name: \"01\" is not an index of an array (0, 1, ... or *) (at /volumes)");
  CHECK(message("/volumes/-") == "/volumes/-: \"-\" is not an index of an array (0, 1, ... or *) (at /volumes)");
  CHECK(message("/empty/*/x") == "/empty/*/x: * on an empty array sets nothing (at /empty)");
  CHECK(message("/options/*/x") == "/options/*/x: * applies to an array, this is object (at /options)");
  CHECK(message("/n/x") == "/n/x: \"x\" is under number, not an object or an array (at /n)");
  CHECK(message("/ghost/x") == "/ghost/x: no member \"ghost\" (at the top level)");
  CHECK(message("/volumes/*/a/b") == "/volumes/*/a/b: no member \"a\" (at /volumes/0)");
}

TEST_CASE("statistics: the 95 % interval of a mean against a hand computation") {
  // {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, Σ(x − 5)² = 32, s² = 32 / 7, s = 2.13809; t(0.975, 7)
  // = 2.365 (NIST/SEMATECH e-Handbook table 1.3.6.7.2); half-width 2.365 × 2.13809 / √8 =
  // 1.7875 (computed by hand from those table values).
  const MeanInterval m = mean_ci95({2, 4, 4, 4, 5, 5, 7, 9});
  CHECK(m.count == 8);
  CHECK(m.mean == doctest::Approx(5.0));
  REQUIRE(m.ci95_half_width);
  CHECK(*m.ci95_half_width == doctest::Approx(1.7875).epsilon(0.0005));
  // One sample: a mean, no interval. None: nothing.
  CHECK(!mean_ci95({3.5}).ci95_half_width);
  CHECK(mean_ci95({3.5}).mean == 3.5);
  CHECK(mean_ci95({}).count == 0);
  // The t quantile against NIST's table (3 decimals, so within 0.0005) at 1, 4, 7 and 30
  // (the table here), 60 and 100 (the expansion past it), and tending to z = 1.960.
  const std::pair<std::size_t, double> nist[] = {{1, 12.706}, {4, 2.776}, {7, 2.365}, {30, 2.042}, {60, 2.000}, {100, 1.984}};
  for (const auto& [dof, t] : nist) {
    CAPTURE(dof);
    CHECK(std::abs(student_t_975(dof) - t) <= 0.0005);
  }
  CHECK(student_t_975(31) < student_t_975(30));
  CHECK(std::abs(student_t_975(1000000) - 1.960) <= 0.0005);
}

}  // namespace afasim::sweep
