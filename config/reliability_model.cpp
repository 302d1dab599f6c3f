// models/reliability.json: the reliability mode's defaults (preset.h ReliabilityParams,
// docs/reliability.md), read with the preset files' rules (every figure with its source).
#include "config/preset.h"
#include "config/preset_reader.h"

namespace afasim::config::preset_detail {

ReliabilityParams read_reliability(const Reader& r, const json& j) {
  r.only_keys(j, "", {"schema", "description", "drive_afr_percent", "latent_errors_per_drive_year",
                      "uncorrectable_bit_error_rate", "wear_out_weibull_shape", "wear_out_weibull_scale",
                      "scrub_interval_hours", "controller_mtbf_hours", "controller_replacement_hours",
                      "datapac_replacement_hours"});
  check_schema(r, j, "afasim.reliability-model/1");
  ReliabilityParams p;
  // Failures per drive-year as a percentage; kept as the equivalent MTBF (8,766 hours in a
  // year of 365.25 days, reliability::kHoursPerYear; config/ sits below reliability/).
  p.drive_mtbf_hours = 8766.0 / (r.figure(j, "", "drive_afr_percent", 1e-6, 1e5) / 100.0);
  p.latent_errors_per_drive_year = r.figure(j, "", "latent_errors_per_drive_year", 0, 1e6);
  p.uncorrectable_bit_error_rate = r.figure(j, "", "uncorrectable_bit_error_rate", 0, 1e-3);
  p.wear_out_weibull_shape = r.figure(j, "", "wear_out_weibull_shape", 0.1, 100);
  p.wear_out_weibull_scale = r.figure(j, "", "wear_out_weibull_scale", 1e-3, 1e3);
  p.scrub_interval_hours = r.figure(j, "", "scrub_interval_hours", 1e-3, 1e6);
  p.controller_mtbf_hours = r.figure(j, "", "controller_mtbf_hours", 1, 1e12);
  p.controller_replacement_hours = r.figure(j, "", "controller_replacement_hours", 1e-3, 1e6);
  p.datapac_replacement_hours = r.figure(j, "", "datapac_replacement_hours", 1e-3, 1e6);
  return p;
}

}  // namespace afasim::config::preset_detail

namespace afasim::config {

sim::Result<ReliabilityParams> Catalog::reliability() const {
  if (!reliability_) return sim::not_found("models/reliability.json: missing from the config folder");
  return *reliability_;
}

}  // namespace afasim::config
