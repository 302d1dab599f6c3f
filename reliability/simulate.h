// The reliability mode's simulation (docs/reliability.md): array lifetimes of
// `horizon_years` each, event by event, without per-I/O simulation.
//
// Per SSD: random failures (exponential, the drive's MTBF) and wear-out failures (Weibull in
// units of rated endurance used; the wear rate from the host write rate, the RAID write
// factor and the SSD's DWPD rating); latent errors arriving as a Poisson process and removed
// by the next scrub pass; per controller: failures and replacements (unavailability only).
// A failed SSD is rebuilt for its bytes ÷ the rebuild rate, measured once per configuration
// by running the scenario's probe (a short I/O simulation of a rebuild under load) or given;
// rebuilds run one at a time as in the array. Data is lost when an SSD fails while another
// that shares an extent with it (LossMap) is failed or rebuilding, when a rebuild reads a
// latent error on a surviving member, or when it hits an unrecoverable bit (the spec UBER).
// A lifetime ends at its first loss or its horizon.
//
// Deterministic: every draw comes from the scenario's seed (array i from its own stream).
// Thread-safe: the loss maps and probe results are cached per configuration behind a mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "config/preset.h"
#include "reliability/reliability_scenario.h"
#include "sim/status.h"

namespace afasim::reliability {

// A figure with its two-sided 95 % interval; `high` is +infinity when unbounded.
struct Estimate {
  std::optional<double> value;  // nullopt when not estimable (no event seen)
  double low = 0;
  double high = 0;
};

struct LossCauses {
  std::int64_t double_failure = 0;      // a second SSD failed while the first was degraded
  std::int64_t latent_error = 0;        // the rebuild read a latent error on a survivor
  std::int64_t rebuild_read_error = 0;  // the rebuild hit an unrecoverable bit (UBER)
  std::int64_t total() const { return double_failure + latent_error + rebuild_read_error; }
};

struct ReliabilityReport {
  // What ran.
  std::string name;
  std::string file_name;
  std::string system_model;
  raid::RaidType raid_type = raid::RaidType::kRaid5;
  Replacement replacement = Replacement::kDatapac;
  RepairDistribution repair = RepairDistribution::kFixed;
  int drives = 0;
  double fill = 0;
  std::uint64_t seed = 0;
  std::int64_t arrays = 0;
  double horizon_years = 0;
  std::int64_t extents = 0;          // placed in the loss map
  double loss_partners_mean = 0;     // SSDs whose failure with a given one loses data
  double drive_afr_percent = 0;
  double wear_percent_per_year = 0;  // of rated endurance, per SSD
  double rebuild_bytes_per_second = 0;
  double rebuild_hours = 0;          // mean over SSDs of their bytes ÷ the rate
  std::string rebuild_source;        // how the rate was found (the probe's figures, or "given")

  // What happened.
  double array_years = 0;  // exposure: every lifetime until its first loss or its horizon
  std::int64_t arrays_with_loss = 0;
  LossCauses first_loss;   // the cause of each lifetime's first loss
  Estimate loss_probability;            // within horizon_years (Wilson score interval)
  Estimate mttdl_years;                 // all causes: array_years ÷ losses (Poisson interval)
  Estimate mttdl_double_failure_years;  // double failures only
  double markov_mttdl_years = 0;        // the closed form for double failures (markov.h)
  std::int64_t drive_failures = 0;
  std::int64_t wear_out_failures = 0;
  std::int64_t rebuilds = 0;
  std::int64_t latent_errors = 0;
  std::int64_t latent_errors_scrubbed = 0;
  std::int64_t datapac_replacements = 0;
  std::int64_t controller_failures = 0;
  std::int64_t unavailability_events = 0;  // both controllers down at once
  double unavailable_hours = 0;
};

struct ReliabilityRunOptions {
  // Called with a one-line status every tenth of the lifetimes (for a progress line).
  std::function<void(const std::string& line)> progress;
};

// Bounds the work of one run: expected events (failures, latent errors, scrub passes,
// controller events) over all lifetimes.
inline constexpr double kMaxExpectedEvents = 2e9;

// Runs the scenario. Errors: kInvalidArgument when the probe's rebuild does not complete
// within its duration or the run would exceed kMaxExpectedEvents; the probe's own errors.
sim::Result<ReliabilityReport> run_reliability(const ReliabilityScenario& scenario, const config::Catalog& catalog,
                                               const ReliabilityRunOptions& options = {});

// The two-sided 95 % Poisson interval for a mean time between events: `count` events in
// `exposure` (Garwood's chi-square interval); value nullopt and high +infinity for 0 events.
Estimate poisson_mean_time(std::int64_t count, double exposure);
// The Wilson score 95 % interval for a proportion of `hits` in `trials` > 0.
Estimate wilson_proportion(std::int64_t hits, std::int64_t trials);

}  // namespace afasim::reliability
