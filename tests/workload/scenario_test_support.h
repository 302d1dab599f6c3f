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

}  // namespace afasim::workload::testing
