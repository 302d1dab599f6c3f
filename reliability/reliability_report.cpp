#include "reliability/reliability_report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "workload/report_util.h"
#include "config/json_text.h"

namespace afasim::reliability {
namespace {

using workload::report::fmt;

// "1,234 years [567, 8,901]" style: a value and its interval, "> low" when unbounded.
std::string years(const Estimate& e) {
  auto g = [](double v) { return fmt(v >= 100 ? "%.0f" : "%.3g", v); };
  if (!e.value) return "> " + g(e.low) + " years (95 %; no loss seen)";
  return g(*e.value) + " years (95 %: " + g(e.low) + " to " + (std::isinf(e.high) ? "inf" : g(e.high)) + ")";
}

nlohmann::ordered_json estimate_json(const Estimate& e) {
  nlohmann::ordered_json j;
  j["value"] = e.value ? nlohmann::ordered_json(*e.value) : nlohmann::ordered_json(nullptr);
  j["low"] = e.low;
  j["high"] = std::isinf(e.high) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(e.high);
  return j;
}

const char* replacement_name(Replacement r) { return r == Replacement::kDatapac ? "datapac" : "drive"; }
const char* repair_name(RepairDistribution r) { return r == RepairDistribution::kFixed ? "fixed" : "exponential"; }

}  // namespace

std::string format_reliability_text(const ReliabilityReport& r) {
  std::string o;
  auto line = [&](const std::string& k, const std::string& v) { o += "  " + k + std::string(k.size() < 34 ? 34 - k.size() : 1, ' ') + v + "\n"; };
  o += "Reliability: " + r.name + " (" + r.file_name + ")\n";
  o += "  " + r.system_model + ", " + std::string(raid::raid_type_name(r.raid_type)) + ", " + std::to_string(r.drives) +
       " SSDs, " + fmt("%.0f", 100 * r.fill) + " % full, seed " + std::to_string(r.seed) + "\n\n";
  o += "Model\n";
  line("extents placed", std::to_string(r.extents) + " (the array's allocator)");
  line("loss partners per SSD", fmt("%.2f", r.loss_partners_mean) + " (SSDs whose failure with it loses data)");
  line("SSD annual failure rate", fmt("%.3f %%", r.drive_afr_percent));
  line("wear per SSD per year", fmt("%.3f %% of rated endurance", r.wear_percent_per_year));
  line("rebuild rate", fmt("%.1f MB/s", r.rebuild_bytes_per_second / 1e6) + ", " + r.rebuild_source);
  line("rebuild of one SSD", fmt("%.3f hours", r.rebuild_hours) + " (" + repair_name(r.repair) + ")");
  line("failed SSDs", std::string(replacement_name(r.replacement)) +
                          (r.replacement == Replacement::kDatapac ? " (rebuilt into spare; DataPac replaced when it runs out)"
                                                                   : " (replaced and rebuilt onto the new SSD)"));
  o += "\nLifetimes\n";
  line("arrays", std::to_string(r.arrays) + " x " + fmt("%g", r.horizon_years) + " years");
  line("array-years simulated", fmt("%.1f", r.array_years));
  line("SSD failures", std::to_string(r.drive_failures) + " (" + std::to_string(r.wear_out_failures) + " wear-out)");
  line("rebuilds completed", std::to_string(r.rebuilds));
  line("DataPac replacements", std::to_string(r.datapac_replacements));
  line("latent errors", std::to_string(r.latent_errors) + " (" + std::to_string(r.latent_errors_scrubbed) + " found by scrub)");
  line("controller failures", std::to_string(r.controller_failures) + ", both down " +
                                  std::to_string(r.unavailability_events) + " times, " +
                                  fmt("%.1f hours", r.unavailable_hours) + " unavailable (no data lost)");
  o += "\nData loss\n";
  line("arrays that lost data", std::to_string(r.arrays_with_loss) + " of " + std::to_string(r.arrays));
  line("  by a double failure", std::to_string(r.first_loss.double_failure));
  line("  by a latent error in rebuild", std::to_string(r.first_loss.latent_error));
  line("  by an unreadable bit (UBER)", std::to_string(r.first_loss.rebuild_read_error));
  line("P(loss within " + fmt("%g", r.horizon_years) + " years)",
       fmt("%.5f", r.loss_probability.value.value_or(0)) + " (95 %: " + fmt("%.5f", r.loss_probability.low) + " to " +
           fmt("%.5f", r.loss_probability.high) + ")");
  line("MTTDL, all causes", years(r.mttdl_years));
  line("MTTDL, double failures", years(r.mttdl_double_failure_years));
  line("MTTDL, Markov closed form", fmt(r.markov_mttdl_years >= 100 ? "%.0f" : "%.3g", r.markov_mttdl_years) +
                                        " years (double failures; docs/reliability.md)");
  return o;
}

std::string format_reliability_json(const ReliabilityReport& r) {
  nlohmann::ordered_json j;
  j["schema"] = "afasim.reliability-report/1";
  j["name"] = r.name;
  j["file"] = r.file_name;
  j["system"] = r.system_model;
  j["raid_type"] = std::string(raid::raid_type_name(r.raid_type));
  j["drives"] = r.drives;
  j["fill"] = r.fill;
  j["seed"] = r.seed;
  j["arrays"] = r.arrays;
  j["horizon_years"] = r.horizon_years;
  j["replacement"] = replacement_name(r.replacement);
  j["repair"] = repair_name(r.repair);
  j["extents"] = r.extents;
  j["loss_partners_mean"] = r.loss_partners_mean;
  j["drive_afr_percent"] = r.drive_afr_percent;
  j["wear_percent_per_year"] = r.wear_percent_per_year;
  j["rebuild_bytes_per_second"] = r.rebuild_bytes_per_second;
  j["rebuild_hours"] = r.rebuild_hours;
  j["rebuild_source"] = r.rebuild_source;
  j["array_years"] = r.array_years;
  j["arrays_with_loss"] = r.arrays_with_loss;
  j["first_loss"] = {{"double_failure", r.first_loss.double_failure},
                     {"latent_error", r.first_loss.latent_error},
                     {"rebuild_read_error", r.first_loss.rebuild_read_error}};
  j["loss_probability"] = estimate_json(r.loss_probability);
  j["mttdl_years"] = estimate_json(r.mttdl_years);
  j["mttdl_double_failure_years"] = estimate_json(r.mttdl_double_failure_years);
  j["markov_mttdl_years"] = r.markov_mttdl_years;
  j["drive_failures"] = r.drive_failures;
  j["wear_out_failures"] = r.wear_out_failures;
  j["rebuilds"] = r.rebuilds;
  j["latent_errors"] = r.latent_errors;
  j["latent_errors_scrubbed"] = r.latent_errors_scrubbed;
  j["datapac_replacements"] = r.datapac_replacements;
  j["controller_failures"] = r.controller_failures;
  j["unavailability_events"] = r.unavailability_events;
  j["unavailable_hours"] = r.unavailable_hours;
  return config::dump_json(j, 2) + "\n";
}

}  // namespace afasim::reliability
