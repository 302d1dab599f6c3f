// Fuzz target: sweep files (sweep/sweep_file.h), as `afasim sweep` reads them: parsed, then
// prepared against the built-in presets (the base a built-in scenario, or a path that is not
// there), and the first point's scenario built with the first seed.
#include <cstdint>
#include <string_view>

#include "config/preset.h"
#include "sweep/sweep_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const afasim::config::Catalog catalog = afasim::config::Catalog::embedded().value();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto file = afasim::sweep::parse_sweep_file(text, "/nonexistent-fuzz-dir/fuzz.json");
  if (!file.is_ok()) return 0;
  auto plan = afasim::sweep::prepare_sweep(std::move(file).value(), catalog);
  if (!plan.is_ok() || plan->file.points.empty()) return 0;
  if (plan->file.kind == afasim::sweep::SweepKind::kScenario)
    (void)afasim::sweep::point_scenario(*plan, 0, plan->file.seeds.front(), catalog);
  else
    (void)afasim::sweep::point_reliability(*plan, 0, plan->file.seeds.front(), catalog);
  return 0;
}
