// The controller state machine's table (controller/controller_states.h) against the diagram in
// docs/controller-states.md: the two must list the same transitions.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "controller/controller_states.h"

using namespace afasim::controller;

namespace {
using Row = std::tuple<std::string, std::string, std::string>;  // from, trigger, to

std::set<Row> table_rows() {
  std::set<Row> rows;
  for (const auto& t : kTransitions)
    rows.insert({std::string(to_string(t.from)), std::string(to_string(t.trigger)), std::string(to_string(t.to))});
  return rows;
}

std::set<Row> doc_rows() {
  const char* dir = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(dir != nullptr);
  std::ifstream in(std::string(dir) + "/docs/controller-states.md");
  REQUIRE(in.good());
  std::set<Row> rows;
  bool in_diagram = false;
  const std::regex edge(R"(^\s*(\w+)\s*-->\s*(\w+)\s*:\s*(\w+)\s*$)");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```mermaid", 0) == 0) in_diagram = true;
    else if (in_diagram && line.rfind("```", 0) == 0) in_diagram = false;
    std::smatch m;
    if (in_diagram && std::regex_match(line, m, edge)) rows.insert({m[1], m[3], m[2]});
  }
  return rows;
}
}  // namespace

TEST_CASE("docs/controller-states.md draws exactly the transitions of kTransitions") {
  const auto table = table_rows();
  const auto doc = doc_rows();
  for (const auto& [from, trigger, to] : table) {
    INFO("in the table, not in the doc: " << from << " --" << trigger << "--> " << to);
    CHECK(doc.count({from, trigger, to}) == 1);
  }
  for (const auto& [from, trigger, to] : doc) {
    INFO("in the doc, not in the table: " << from << " --" << trigger << "--> " << to);
    CHECK(table.count({from, trigger, to}) == 1);
  }
  CHECK(table.size() == std::size(kTransitions));  // no duplicate rows
}

TEST_CASE("the table: one target per (state, trigger); off reaches active; failed is left only by a restore") {
  std::set<std::pair<ControllerState, ControllerTrigger>> keys;
  for (const auto& t : kTransitions) CHECK(keys.insert({t.from, t.trigger}).second);
  auto s = next_state(ControllerState::kOff, ControllerTrigger::kPowerRestore);
  REQUIRE(s);
  s = next_state(*s, ControllerTrigger::kBootComplete);
  REQUIRE(s);
  s = next_state(*s, ControllerTrigger::kSyncComplete);
  REQUIRE(s);
  CHECK(*s == ControllerState::kActive);
  for (const auto& t : kTransitions)
    if (t.from == ControllerState::kFailed) CHECK(t.trigger == ControllerTrigger::kControllerRestore);
  CHECK_FALSE(next_state(ControllerState::kFailed, ControllerTrigger::kPowerRestore));
  CHECK_FALSE(next_state(ControllerState::kOff, ControllerTrigger::kSyncComplete));
}
