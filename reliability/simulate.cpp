#include "reliability/simulate.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "config/json_text.h"
#include "reliability/lifetime.h"
#include "reliability/loss_map.h"
#include "reliability/markov.h"
#include "sim/rng.h"
#include "ssd/flash_ssd.h"
#include "workload/scenario_runner.h"

namespace afasim::reliability {
namespace {

using detail::kInfinity;
using detail::Lifetime;
using detail::LifetimeModel;

// --- per-configuration results, computed once per process --------------------------------

struct Probe {
  double bytes_per_second = 0;
  std::string source;
};

std::mutex cache_mu;
std::map<std::string, std::shared_ptr<const LossMap>> loss_maps;
std::map<std::string, Probe> probes;

sim::Result<std::shared_ptr<const LossMap>> cached_loss_map(const ReliabilityScenario& s,
                                                            const config::Catalog& catalog) {
  // The exact fill and the capacity parameters: a map serves only the configuration it
  // was built for, whichever thread built it first.
  const config::CapacityParams& c = catalog.capacity();
  char key[320];
  std::snprintf(key, sizeof key, "%s|%s|%a|%a|%a|%lld|%lld|%d", s.system.name.c_str(),
                std::string(raid::raid_type_name(s.raid_type)).c_str(), s.fill, c.over_provisioning_fraction,
                c.rebuild_spare_fraction, static_cast<long long>(c.metadata_reserve_bytes_per_drive),
                static_cast<long long>(c.chunk_bytes), c.raid5_data_drives);
  {
    std::lock_guard<std::mutex> lock(cache_mu);
    auto it = loss_maps.find(key);
    if (it != loss_maps.end()) return it->second;
  }
  auto map = build_loss_map(s.system, catalog.capacity(), s.raid_type, s.fill, catalog.capacity().raid5_data_drives);
  if (!map.is_ok()) return sim::invalid_argument(s.file_name + ": " + map.status().message());
  auto shared = std::make_shared<const LossMap>(std::move(map).value());
  std::lock_guard<std::mutex> lock(cache_mu);
  return loss_maps.emplace(key, shared).first->second;
}

// Runs the probe with the scenario's system, RAID type and rebuild setting and returns the
// rate its rebuild reached: chunk bytes rebuilt ÷ the rebuild's duration (pauses excluded).
sim::Result<Probe> measure_rebuild(const ReliabilityScenario& s, const config::Catalog& catalog) {
  const workload::ScenarioSource& source = *s.probe;
  const std::string text = probe_scenario_text(s);
  const std::string key = source.file_name + "|" + text;
  {
    std::lock_guard<std::mutex> lock(cache_mu);
    auto it = probes.find(key);
    if (it != probes.end()) return it->second;
  }
  auto scenario = workload::parse_scenario(text, source.file_name, catalog, source.read_file);
  if (!scenario.is_ok()) return sim::invalid_argument(s.file_name + ": rebuild.probe: " + scenario.status().message());
  auto report = workload::run_scenario(*scenario, catalog);
  if (!report.is_ok()) return sim::Status(report.status().code(), s.file_name + ": rebuild.probe: " + report.status().message());
  const controller::RebuildStatus& rb = report->rebuild;
  if (rb.stalled_bytes > 0)
    return sim::invalid_argument(s.file_name + ": rebuild.probe: " + source.file_name + ": its rebuild stalled (" +
                                 std::to_string(rb.stalled_bytes) +
                                 " bytes found no SSD to take them): a rate needs a rebuild that completes");
  // completed_ns is set only for a rebuild that rebuilt every chunk (none lost or unreadable).
  if (rb.completed_ns < 0 || rb.total_bytes <= 0)
    return sim::invalid_argument(s.file_name + ": rebuild.probe: " + source.file_name +
                                 ": no rebuild completed within its duration_s (a drive_fail early enough, and a "
                                 "duration long enough for the rebuild, are needed; one that lost extents does not "
                                 "count)");
  const double seconds = sim::to_seconds(rb.completed_ns - rb.started_ns - rb.paused_ns);
  Probe p;
  p.bytes_per_second = static_cast<double>(rb.total_bytes) / seconds;
  char line[256];
  std::snprintf(line, sizeof line, "probe %s: %.1f MB rebuilt in %.3f s under its load", source.file_name.c_str(),
                static_cast<double>(rb.total_bytes) / 1e6, seconds);
  p.source = line;
  std::lock_guard<std::mutex> lock(cache_mu);
  return probes.emplace(key, p).first->second;
}

}  // namespace

Estimate poisson_mean_time(std::int64_t count, double exposure) {
  Estimate e;
  const double n = static_cast<double>(count);
  // Garwood (1936): rate in [χ²(0.025; 2n) / 2T, χ²(0.975; 2n + 2) / 2T].
  const boost::math::chi_squared upper_dist(2 * n + 2);
  e.low = 2 * exposure / boost::math::quantile(upper_dist, 0.975);
  if (count == 0) {
    e.high = kInfinity;
    return e;
  }
  const boost::math::chi_squared lower_dist(2 * n);
  e.high = 2 * exposure / boost::math::quantile(lower_dist, 0.025);
  e.value = exposure / n;
  return e;
}

Estimate wilson_proportion(std::int64_t hits, std::int64_t trials) {
  AFASIM_ASSERT(trials > 0 && hits >= 0 && hits <= trials, "wilson_proportion: hits out of [0, trials]");
  const double z = 1.959963984540054;  // the standard normal's 97.5 % point
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(hits) / n;
  const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z / (1 + z * z / n) * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
  Estimate e;
  e.value = p;
  e.low = std::max(0.0, centre - half);
  e.high = std::min(1.0, centre + half);
  return e;
}

namespace {

// The report's description of what runs: the scenario, its layout and rebuild.
ReliabilityReport describe(const ReliabilityScenario& s, const LossMap& lm) {
  ReliabilityReport out;
  out.name = s.name;
  out.file_name = s.file_name;
  out.system_model = s.system.model;
  out.raid_type = s.raid_type;
  out.replacement = s.replacement;
  out.repair = s.repair;
  out.drives = lm.drives;
  out.fill = s.fill;
  out.seed = s.seed;
  out.arrays = s.arrays;
  out.horizon_years = s.horizon_years;
  out.extents = lm.extents;
  out.loss_partners_mean = lm.mean_loss_partners();
  out.drive_afr_percent = 100.0 * s.drive_failures_per_year();
  return out;
}

// The fraction of its rated endurance an SSD uses per hour, as the array's wear model
// counts it (docs/ssd-model.md "Wear"; the two agree within 1 %, model review 27, which found
// the formula before it 1.43x to 2.3x above it): host writes × the RAID write factor (RAID 10:
// two copies; RAID 5: a small random write within one strip, its data and parity, 2, or a
// whole stripe's (k + 1) / k), spread evenly over the SSDs by the array's wear leveling, ×
// the SSD's garbage-collection write amplification over the span the array writes against
// that over the whole drive, which the rating assumes (JESD219's enterprise workload; the
// replica's uniform random writes: with a fifth of each SSD never written, 1.43 / 2.04),
// against the rated endurance.
double wear_fraction_per_hour(const ReliabilityScenario& s, const LossMap& lm) {
  const double rated = s.system.ssd.rated_endurance_bytes();
  if (!(rated > 0) || s.host_write_bytes_per_second <= 0) return 0;
  const double seq = s.host_write_sequential_fraction;
  const double k = lm.data_members;
  const double raid_factor = s.raid_type == raid::RaidType::kRaid5 ? (1 - seq) * 2.0 + seq * (k + 1) / k : 2.0;
  const double wa_ratio = ssd::FlashSsd::steady_random_write_amplification(s.system.ssd, lm.host_span_fraction) /
                          ssd::FlashSsd::steady_random_write_amplification(s.system.ssd, 1.0);
  return s.host_write_bytes_per_second * 3600.0 * raid_factor * wa_ratio / lm.drives / rated;
}

// The lifetimes' fixed inputs; fills the report's wear, rebuild and Markov figures.
LifetimeModel make_model(const ReliabilityScenario& s, const LossMap& lm, ReliabilityReport& out) {
  LifetimeModel m;
  m.s = &s;
  m.map = &lm;
  m.horizon_h = s.horizon_years * kHoursPerYear;
  m.wear_per_hour = wear_fraction_per_hour(s, lm);
  out.wear_percent_per_year = 100.0 * m.wear_per_hour * kHoursPerYear;
  double sum_h = 0;
  for (int i = 0; i < lm.drives; ++i) {
    const double bytes = static_cast<double>(lm.used_chunks[static_cast<std::size_t>(i)] * lm.chunk_bytes);
    m.rebuild_h.push_back(bytes / out.rebuild_bytes_per_second / 3600.0);
    sum_h += m.rebuild_h.back();
  }
  out.rebuild_hours = sum_h / lm.drives;
  m.rebuild_readers = s.raid_type == raid::RaidType::kRaid5 ? lm.data_members : 1;
  m.spare_chunks_per_pack = lm.spare_chunks_per_drive * s.system.datapacs.ssds_per_datapac;
  out.markov_mttdl_years =
      out.loss_partners_mean > 0
          ? markov_mttdl_hours(lm.drives, out.loss_partners_mean, s.model.drive_mtbf_hours, out.rebuild_hours) / kHoursPerYear
          : kInfinity;
  return m;
}

// Refuses a run beyond kMaxExpectedEvents before it starts.
sim::Status check_work(const ReliabilityScenario& s, const LifetimeModel& m) {
  const double drives = m.map->drives;
  const double per_hour =
      drives / s.model.drive_mtbf_hours +
      (s.mechanisms.latent_errors ? drives * s.model.latent_errors_per_drive_year / kHoursPerYear + 1.0 / s.model.scrub_interval_hours : 0) +
      (s.mechanisms.controllers ? 2.0 / s.model.controller_mtbf_hours : 0) +
      (s.mechanisms.wear_out ? drives * m.wear_per_hour / s.model.wear_out_weibull_scale : 0);
  const double expected = per_hour * m.horizon_h * static_cast<double>(s.arrays);
  if (expected <= kMaxExpectedEvents) return sim::Status::ok();
  char msg[256];
  std::snprintf(msg, sizeof msg,
                "%s: (top level): about %.3g events expected (arrays x horizon_years x the rates); at most %.0e: "
                "fewer arrays or a shorter horizon",
                s.file_name.c_str(), expected, kMaxExpectedEvents);
  return sim::invalid_argument(msg);
}

}  // namespace

sim::Result<ReliabilityReport> run_reliability(const ReliabilityScenario& s, const config::Catalog& catalog,
                                               const ReliabilityRunOptions& options) {
  auto map = cached_loss_map(s, catalog);
  if (!map.is_ok()) return map.status();
  const LossMap& lm = **map;
  ReliabilityReport out = describe(s, lm);
  if (s.probe) {
    auto probe = measure_rebuild(s, catalog);
    if (!probe.is_ok()) return probe.status();
    out.rebuild_bytes_per_second = probe->bytes_per_second;
    out.rebuild_source = probe->source;
  } else {
    out.rebuild_bytes_per_second = *s.rebuild_bytes_per_second;
    out.rebuild_source = "given (rebuild.bytes_per_second)";
  }
  const LifetimeModel m = make_model(s, lm, out);
  AFASIM_RETURN_IF_ERROR(check_work(s, m));

  sim::Rng root(s.seed, "reliability");
  const std::int64_t tenth = std::max<std::int64_t>(1, s.arrays / 10);
  for (std::int64_t a = 0; a < s.arrays; ++a) {
    Lifetime life(m, root.split(static_cast<std::uint64_t>(a)), out);
    const std::int64_t before = out.first_loss.total();
    const double length_h = life.run();
    out.array_years += length_h / kHoursPerYear;
    if (out.first_loss.total() > before) ++out.arrays_with_loss;
    if (options.progress && (a + 1) % tenth == 0) {
      char line[160];
      std::snprintf(line, sizeof line, "%lld/%lld arrays, %.0f array-years, %lld data losses",
                    static_cast<long long>(a + 1), static_cast<long long>(s.arrays), out.array_years,
                    static_cast<long long>(out.first_loss.total()));
      options.progress(line);
    }
  }
  out.loss_probability = wilson_proportion(out.arrays_with_loss, s.arrays);
  out.mttdl_years = poisson_mean_time(out.first_loss.total(), out.array_years);
  out.mttdl_double_failure_years = poisson_mean_time(out.first_loss.double_failure, out.array_years);
  return out;
}

}  // namespace afasim::reliability
