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
#include "reliability/loss_map.h"
#include "reliability/markov.h"
#include "sim/rng.h"
#include "workload/scenario_runner.h"

namespace afasim::reliability {
namespace {

constexpr double kHoursPerYear = 8766;  // 365.25 days
constexpr double kInfinity = std::numeric_limits<double>::infinity();

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
  const std::string key = s.system.name + "|" + std::string(raid::raid_type_name(s.raid_type)) + "|" +
                          std::to_string(s.fill);
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
  config::JsonParseOptions parse_options;
  parse_options.allow_comments = true;
  auto doc = config::parse_json_strict(source.text, parse_options);
  if (!doc.is_ok()) return sim::invalid_argument(s.file_name + ": rebuild.probe: " + doc.status().message());
  nlohmann::json j = std::move(doc).value();
  j["system"] = s.system.name;
  if (j.contains("volumes") && j["volumes"].is_array())
    for (auto& v : j["volumes"]) v["raid_type"] = std::string(raid::raid_type_name(s.raid_type));
  if (s.rebuild_bytes_per_second) {
    if (!j.contains("options")) j["options"] = nlohmann::json::object();
    j["options"]["rebuild_bytes_per_second"] = static_cast<std::int64_t>(*s.rebuild_bytes_per_second);
  }
  const std::string text = j.dump();
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
  if (rb.completed_ns < 0 || rb.total_bytes <= 0)
    return sim::invalid_argument(s.file_name + ": rebuild.probe: " + source.file_name +
                                 ": no rebuild completed within its duration_s (a drive_fail early enough, and a "
                                 "duration long enough for the rebuild, are needed)");
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

// --- one array's life ----------------------------------------------------------------------

enum class DriveState { kUp, kRebuilding, kWaitingForSpare, kRetired };

struct Drive {
  DriveState state = DriveState::kUp;
  double fail_h = kInfinity;  // next failure while up
  bool wear_out = false;      // that failure is a wear-out
  double rebuild_end_h = kInfinity;
  std::int64_t latent_errors = 0;
};

// The fixed inputs of every lifetime.
struct Model {
  const ReliabilityScenario& s;
  const LossMap& map;
  double horizon_h = 0;
  double wear_per_hour = 0;  // of rated endurance
  std::vector<double> rebuild_h;  // per drive: its bytes ÷ the rate
  int rebuild_readers = 1;        // members read per chunk rebuilt
  std::int64_t spare_per_pack = 0;  // chunks
};

class Lifetime {
 public:
  Lifetime(const Model& m, sim::Rng rng, ReliabilityReport& out) : m_(m), rng_(std::move(rng)), out_(out) {}

  // Runs one lifetime; returns its length in hours (to the first loss or the horizon).
  double run() {
    const int n = m_.map.drives;
    drives_.assign(static_cast<std::size_t>(n), Drive{});
    for (int i = 0; i < n; ++i) install(i, 0);
    packs_ = *std::max_element(m_.map.datapac.begin(), m_.map.datapac.end());
    spare_.assign(static_cast<std::size_t>(packs_) + 1, m_.spare_per_pack);
    pack_replacement_h_.assign(static_cast<std::size_t>(packs_) + 1, kInfinity);
    const config::ReliabilityParams& p = m_.s.model;
    const double latent_rate_h = m_.s.mechanisms.latent_errors ? p.latent_errors_per_drive_year * n / kHoursPerYear : 0;
    next_latent_h_ = latent_rate_h > 0 ? rng_.exponential(1 / latent_rate_h) : kInfinity;
    next_scrub_h_ = m_.s.mechanisms.latent_errors ? rng_.uniform01() * p.scrub_interval_hours : kInfinity;
    for (int c = 0; c < 2; ++c) {
      controller_fail_h_[c] = m_.s.mechanisms.controllers ? rng_.exponential(p.controller_mtbf_hours) : kInfinity;
      controller_up_h_[c] = 0;
    }
    drives_changed_ = true;
    double t = 0;
    for (;;) {
      // The next event: the earliest of every clock.
      int kind = 0, who = -1;
      double at = m_.horizon_h;
      auto consider = [&](double when, int k, int i) {
        if (when < at) at = when, kind = k, who = i;
      };
      if (drives_changed_) next_drive_event();
      consider(next_drive_h_, next_drive_kind_, next_drive_);
      for (int pk = 1; pk <= packs_; ++pk) consider(pack_replacement_h_[static_cast<std::size_t>(pk)], 3, pk);
      consider(next_latent_h_, 4, -1);
      consider(next_scrub_h_, 5, -1);
      for (int c = 0; c < 2; ++c) consider(controller_fail_h_[c], 6, c);
      t = at;
      if (kind == 0) return m_.horizon_h;
      switch (kind) {
        case 1:
          if (drive_failed(who, t)) return t;
          break;
        case 2: rebuild_done(who, t); break;
        case 3: replace_pack(who, t); break;
        case 4: {
          const int i = static_cast<int>(rng_.uniform(static_cast<std::uint64_t>(n)));
          // Thinning: an error drawn for an SSD that is not up is dropped.
          if (drives_[static_cast<std::size_t>(i)].state == DriveState::kUp) {
            ++drives_[static_cast<std::size_t>(i)].latent_errors;
            ++out_.latent_errors;
          }
          next_latent_h_ = t + rng_.exponential(1 / latent_rate_h);
          break;
        }
        case 5:
          for (Drive& d : drives_) {
            out_.latent_errors_scrubbed += d.latent_errors;
            d.latent_errors = 0;
          }
          next_scrub_h_ = t + p.scrub_interval_hours;
          break;
        case 6: controller_failed(who, t); break;
      }
    }
  }

 private:
  // The earliest SSD event (a failure or a rebuild's end), found again only after an SSD
  // changed: latent errors and scrub passes, most of the events, leave it as it is.
  void next_drive_event() {
    next_drive_h_ = kInfinity;
    next_drive_kind_ = 0;
    next_drive_ = -1;
    for (int i = 0; i < m_.map.drives; ++i) {
      const Drive& d = drives_[static_cast<std::size_t>(i)];
      const double at = d.state == DriveState::kUp ? d.fail_h : d.state == DriveState::kRebuilding ? d.rebuild_end_h : kInfinity;
      if (at < next_drive_h_) next_drive_h_ = at, next_drive_kind_ = d.state == DriveState::kUp ? 1 : 2, next_drive_ = i;
    }
    drives_changed_ = false;
  }

  // A new SSD in slot i at time t: its next random failure and its wear-out.
  void install(int i, double t) {
    drives_changed_ = true;
    Drive& d = drives_[static_cast<std::size_t>(i)];
    d = Drive{};
    const double random_h = t + rng_.exponential(m_.s.model.drive_mtbf_hours);
    double wear_h = kInfinity;
    if (m_.s.mechanisms.wear_out && m_.wear_per_hour > 0) {
      // Weibull by inversion: life = scale × (−ln U)^(1/shape), in rated endurances.
      const double u = 1.0 - rng_.uniform01();
      const double life = m_.s.model.wear_out_weibull_scale * std::pow(-std::log(u), 1.0 / m_.s.model.wear_out_weibull_shape);
      wear_h = t + life / m_.wear_per_hour;
    }
    d.fail_h = std::min(random_h, wear_h);
    d.wear_out = wear_h < random_h;
  }

  bool degraded(const Drive& d) const {
    return d.state == DriveState::kRebuilding || d.state == DriveState::kWaitingForSpare;
  }

  // Returns true when the failure loses data.
  bool drive_failed(int i, double t) {
    drives_changed_ = true;
    Drive& d = drives_[static_cast<std::size_t>(i)];
    ++out_.drive_failures;
    if (d.wear_out) ++out_.wear_out_failures;
    const int n = m_.map.drives;
    for (int j = 0; j < n; ++j)
      if (j != i && degraded(drives_[static_cast<std::size_t>(j)]) && m_.map.shared_extents(i, j) > 0) {
        ++out_.first_loss.double_failure;
        return true;
      }
    if (m_.s.mechanisms.latent_errors) {
      for (int j = 0; j < n; ++j) {
        const Drive& o = drives_[static_cast<std::size_t>(j)];
        if (j == i || o.state != DriveState::kUp || o.latent_errors == 0) continue;
        // Each latent error on SSD j lies in an extent shared with i with probability
        // shared ÷ j's chunks in use.
        const double p_shared = static_cast<double>(m_.map.shared_extents(i, j)) /
                                static_cast<double>(m_.map.used_chunks[static_cast<std::size_t>(j)]);
        if (p_shared > 0 && rng_.bernoulli(1.0 - std::pow(1.0 - std::min(1.0, p_shared), static_cast<double>(o.latent_errors)))) {
          ++out_.first_loss.latent_error;
          return true;
        }
      }
    }
    if (m_.s.mechanisms.rebuild_read_errors && m_.s.model.uncorrectable_bit_error_rate > 0) {
      const double bits = 8.0 * static_cast<double>(m_.map.used_chunks[static_cast<std::size_t>(i)]) *
                          static_cast<double>(m_.map.chunk_bytes) * m_.rebuild_readers;
      if (rng_.bernoulli(-std::expm1(-bits * m_.s.model.uncorrectable_bit_error_rate))) {
        ++out_.first_loss.rebuild_read_error;
        return true;
      }
    }
    d.latent_errors = 0;
    d.fail_h = kInfinity;
    if (m_.s.replacement == Replacement::kDatapac) {
      const int pack = m_.map.datapac[static_cast<std::size_t>(i)];
      spare_[static_cast<std::size_t>(pack)] -= m_.map.spare_chunks_per_drive;  // its own share is gone with it
      d.state = DriveState::kWaitingForSpare;
      if (!take_spare(i)) {
        if (pack_replacement_h_[static_cast<std::size_t>(pack)] == kInfinity)
          pack_replacement_h_[static_cast<std::size_t>(pack)] = t + m_.s.model.datapac_replacement_hours;
        return false;
      }
    }
    start_rebuild(i, t);
    return false;
  }

  // Takes the spare for SSD i's chunks: RAID 10 from its own DataPac (pairs straddle the
  // two), RAID 5 from its DataPac first, then the other's. False when there is not enough.
  bool take_spare(int i) {
    const std::int64_t need = m_.map.used_chunks[static_cast<std::size_t>(i)];
    const int pack = m_.map.datapac[static_cast<std::size_t>(i)];
    std::int64_t& own = spare_[static_cast<std::size_t>(pack)];
    if (m_.s.raid_type == raid::RaidType::kRaid10) {
      if (own < need) return false;
      own -= need;
      return true;
    }
    std::int64_t all = 0;
    for (int pk = 1; pk <= packs_; ++pk) all += std::max<std::int64_t>(0, spare_[static_cast<std::size_t>(pk)]);
    if (all < need) return false;
    std::int64_t left = need;
    auto take_from = [&](int pk) {
      std::int64_t& sp = spare_[static_cast<std::size_t>(pk)];
      const std::int64_t take = std::min(left, std::max<std::int64_t>(0, sp));
      sp -= take;
      left -= take;
    };
    take_from(pack);
    for (int pk = 1; pk <= packs_; ++pk)
      if (pk != pack) take_from(pk);
    return true;
  }

  void start_rebuild(int i, double t) {
    drives_changed_ = true;
    Drive& d = drives_[static_cast<std::size_t>(i)];
    const double mean = m_.rebuild_h[static_cast<std::size_t>(i)];
    const double length = m_.s.repair == RepairDistribution::kExponential ? rng_.exponential(mean) : mean;
    // One rebuild at a time, as the array queues them.
    const double start = std::max(t, rebuild_free_h_);
    d.state = DriveState::kRebuilding;
    d.rebuild_end_h = start + length;
    rebuild_free_h_ = d.rebuild_end_h;
  }

  void rebuild_done(int i, double t) {
    drives_changed_ = true;
    ++out_.rebuilds;
    if (m_.s.replacement == Replacement::kDrive) {
      install(i, t);  // the replacement SSD now holds the rebuilt data
    } else {
      Drive& d = drives_[static_cast<std::size_t>(i)];
      d.state = DriveState::kRetired;  // its data lives in the survivors' spare
      d.rebuild_end_h = kInfinity;
    }
  }

  void replace_pack(int pack, double t) {
    ++out_.datapac_replacements;
    pack_replacement_h_[static_cast<std::size_t>(pack)] = kInfinity;
    for (int i = 0; i < m_.map.drives; ++i)
      if (m_.map.datapac[static_cast<std::size_t>(i)] == pack) install(i, t);
    spare_[static_cast<std::size_t>(pack)] = m_.spare_per_pack;
    // SSDs of the other DataPac waiting for spare (RAID 5 shares it) may go on now.
    for (int i = 0; i < m_.map.drives; ++i)
      if (drives_[static_cast<std::size_t>(i)].state == DriveState::kWaitingForSpare && take_spare(i)) start_rebuild(i, t);
  }

  void controller_failed(int c, double t) {
    ++out_.controller_failures;
    const double back = t + m_.s.model.controller_replacement_hours;
    const int other = 1 - c;
    if (controller_up_h_[other] > t) {  // the other is still being replaced: nothing serves
      ++out_.unavailability_events;
      out_.unavailable_hours += std::min(back, controller_up_h_[other]) - t;
    }
    controller_up_h_[c] = back;
    controller_fail_h_[c] = back + rng_.exponential(m_.s.model.controller_mtbf_hours);
  }

  const Model& m_;
  sim::Rng rng_;
  ReliabilityReport& out_;
  std::vector<Drive> drives_;
  bool drives_changed_ = true;
  double next_drive_h_ = kInfinity;
  int next_drive_kind_ = 0;
  int next_drive_ = -1;
  int packs_ = 0;
  std::vector<std::int64_t> spare_;  // per DataPac (1-based), chunks
  std::vector<double> pack_replacement_h_;
  double rebuild_free_h_ = 0;
  double next_latent_h_ = kInfinity;
  double next_scrub_h_ = kInfinity;
  double controller_fail_h_[2] = {kInfinity, kInfinity};
  double controller_up_h_[2] = {0, 0};
};

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
  out.drive_afr_percent = 100.0 * s.drive_afr();
  return out;
}

// The lifetimes' fixed inputs; fills the report's wear, rebuild and Markov figures.
Model make_model(const ReliabilityScenario& s, const LossMap& lm, ReliabilityReport& out) {
  Model m{s, lm, 0, 0, {}, 1, 0};
  m.horizon_h = s.horizon_years * kHoursPerYear;
  // Wear: host writes × the RAID write factor (RAID 10: two copies; RAID 5: data and parity
  // of a small random write's read-modify-write), spread evenly over the SSDs by the array's
  // wear leveling, against each SSD's rated endurance.
  const double write_factor = 2.0;
  const double rated = s.system.ssd.rated_endurance_bytes();
  const double per_drive_bytes_per_hour = s.host_write_bytes_per_second * 3600.0 * write_factor / lm.drives;
  m.wear_per_hour = rated > 0 ? per_drive_bytes_per_hour / rated : 0;
  out.wear_percent_per_year = 100.0 * m.wear_per_hour * kHoursPerYear;
  double sum_h = 0;
  for (int i = 0; i < lm.drives; ++i) {
    const double bytes = static_cast<double>(lm.used_chunks[static_cast<std::size_t>(i)] * lm.chunk_bytes);
    m.rebuild_h.push_back(bytes / out.rebuild_bytes_per_second / 3600.0);
    sum_h += m.rebuild_h.back();
  }
  out.rebuild_hours = sum_h / lm.drives;
  m.rebuild_readers = s.raid_type == raid::RaidType::kRaid5 ? lm.data_members : 1;
  m.spare_per_pack = lm.spare_chunks_per_drive * s.system.datapacs.ssds_per_datapac;
  out.markov_mttdl_years =
      out.loss_partners_mean > 0
          ? markov_mttdl_hours(lm.drives, out.loss_partners_mean, s.model.drive_mtbf_hours, out.rebuild_hours) / kHoursPerYear
          : kInfinity;
  return m;
}

// Refuses a run beyond kMaxExpectedEvents before it starts.
sim::Status check_work(const ReliabilityScenario& s, const Model& m) {
  const double drives = m.map.drives;
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
  const Model m = make_model(s, lm, out);
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
