// Helpers shared by the scenario tests: the built-in catalog, a shipped scenario, a run that
// must succeed.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "config/preset.h"
#include "workload/scenario.h"
#include "workload/scenario_runner.h"

namespace afasim::workload::testing {

// The presets compiled into the binary, loaded once.
inline const config::Catalog& catalog() {
  static const config::Catalog c = config::Catalog::embedded().value();
  return c;
}

// config/scenarios/NAME.json, as `afasim run NAME` loads it; fails the test when it does not load.
inline Scenario shipped(const std::string& name) {
  auto s = load_embedded_scenario(name, catalog());
  REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  return std::move(s).value();
}

// Runs `s` on a fresh array; fails the test when the run is refused.
inline ScenarioReport run_ok(const Scenario& s, const ScenarioRunOptions& options = {}) {
  auto r = run_scenario(s, catalog(), options);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return std::move(r).value();
}

// The index of the volume called `name` in the report; fails the test when there is none.
inline std::size_t volume_index(const ScenarioReport& r, const std::string& name) {
  for (std::size_t i = 0; i < r.volumes.size(); ++i)
    if (r.volumes[i].name == name) return i;
  FAIL("no volume " << name);
  return 0;
}

}  // namespace afasim::workload::testing
