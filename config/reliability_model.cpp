// models/reliability.json: the reliability mode's defaults (preset.h ReliabilityParams,
// docs/reliability.md), read with the preset files' rules (every figure with its source).
#include "config/preset.h"
#include "config/preset_reader.h"

#include <set>
#include <string>

namespace afasim::config::preset_detail {

ReliabilityParams read_reliability(const Reader& r, const json& j) {
  std::set<std::string> keys{"schema", "description", "drive_afr_percent"};
  for (const ReliabilityParamSpec& spec : reliability_param_specs()) keys.insert(spec.key);
  r.only_keys(j, "", keys);
  check_schema(r, j, "afasim.reliability-model/1");
  ReliabilityParams p;
  p.drive_mtbf_hours = mtbf_hours_of_afr_percent(r.figure(j, "", "drive_afr_percent", kDriveAfrPercentMin, kDriveAfrPercentMax));
  for (const ReliabilityParamSpec& spec : reliability_param_specs()) p.*spec.field = r.figure(j, "", spec.key, spec.lo, spec.hi);
  return p;
}

}  // namespace afasim::config::preset_detail

namespace afasim::config {

std::span<const ReliabilityParamSpec> reliability_param_specs() {
  static constexpr ReliabilityParamSpec kSpecs[] = {
      {"latent_errors_per_drive_year", &ReliabilityParams::latent_errors_per_drive_year, 0, 1e6},
      {"uncorrectable_bit_error_rate", &ReliabilityParams::uncorrectable_bit_error_rate, 0, 1e-3},
      {"wear_out_weibull_shape", &ReliabilityParams::wear_out_weibull_shape, 0.1, 100},
      {"wear_out_weibull_scale", &ReliabilityParams::wear_out_weibull_scale, 1e-3, 1e3},
      {"scrub_interval_hours", &ReliabilityParams::scrub_interval_hours, 1e-3, 1e6},
      {"controller_mtbf_hours", &ReliabilityParams::controller_mtbf_hours, 1, 1e12},
      {"controller_replacement_hours", &ReliabilityParams::controller_replacement_hours, 1e-3, 1e6},
      {"datapac_replacement_hours", &ReliabilityParams::datapac_replacement_hours, 1e-3, 1e6},
  };
  return kSpecs;
}

sim::Result<ReliabilityParams> Catalog::reliability() const {
  if (!reliability_) return sim::not_found("models/reliability.json: missing from the config folder");
  return *reliability_;
}

}  // namespace afasim::config
