// Reliability scenarios (docs/reliability.md): years of an array's life without per-I/O
// simulation. A JSON document with "schema": "afasim.reliability/1":
//
//   {"schema": "afasim.reliability/1", "name": "ise860-raid5",
//    "system": "ise-860-g3", "raid_type": "RAID5", "fill_percent": 80,
//    "seed": 1, "arrays": 250, "horizon_years": 5,
//    "host_write_bytes_per_second": "100MB/s",
//    "rebuild": {"probe": "drive-failure-short", "bytes_per_second": "400MB/s",
//                "distribution": "fixed"},
//    "replacement": "datapac",
//    "mechanisms": {"latent_errors": true, "rebuild_read_errors": true, "wear_out": true,
//                   "controllers": true},
//    "model": {"drive_afr_percent": 1.0}}
//
// The parser is as strict as the scenario loader (an unknown key, a wrong type, a value out
// of range: `FILE: KEY: what is wrong`). `model` overrides the defaults of
// config/models/reliability.json key by key. The probe (a scenario with a drive failure,
// by path relative to this file's folder or by built-in name) is read and checked here and
// run by run_reliability.
// Pure functions of their inputs except for the file reads; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/preset.h"
#include "raid/raid_type.h"
#include "sim/status.h"
#include "workload/scenario.h"

namespace afasim::reliability {

inline constexpr std::string_view kReliabilitySchema = "afasim.reliability/1";
// Hours in a year of 365.25 days: AFR (failures per drive-year) = kHoursPerYear / MTBF.
inline constexpr double kHoursPerYear = config::kHoursPerYear;
inline constexpr std::int64_t kMaxArrays = 100'000'000;
inline constexpr double kMaxHorizonYears = 100;

enum class RepairDistribution {
  kFixed,        // every rebuild of an SSD takes its bytes ÷ the rebuild rate
  kExponential,  // exponential with that mean: the Markov model's assumption
};

enum class Replacement {
  kDatapac,  // the ISE: a failed SSD is rebuilt into the distributed spare and stays out;
             // a DataPac whose spare is used up is replaced whole
  kDrive,    // the textbook array: a failed SSD is replaced and rebuilt onto the new one
};

struct Mechanisms {
  bool latent_errors = true;        // latent errors arrive, scrub repairs, a rebuild meets them
  bool rebuild_read_errors = true;  // the spec UBER on every bit a rebuild reads
  bool wear_out = true;             // wear-out failures from the write rate and DWPD
  bool controllers = true;          // controller failures (unavailability, never loss)
};

struct ReliabilityScenario {
  std::string file_name;  // starts every message
  std::string name;
  std::string description;
  config::SystemPreset system;
  raid::RaidType raid_type = raid::RaidType::kRaid5;
  double fill = 0.8;  // of the pool's normal chunks holding data, (0, 1]
  std::uint64_t seed = 1;
  std::int64_t arrays = 1;     // array lifetimes simulated, 1..kMaxArrays
  double horizon_years = 5;    // each lifetime's length unless it loses data first
  double host_write_bytes_per_second = 0;  // average host writes, for wear
  // Of those, the fraction written as whole RAID 5 stripes (streaming); the rest are small
  // random writes (a read-modify-write's data and parity). [0, 1]; no effect on RAID 10.
  double host_write_sequential_fraction = 0;
  // The rebuild: with a probe, the rate is measured by running it (bytes_per_second, when
  // set, is the array's rebuild setting for the probe); without, bytes_per_second is the
  // rate of every rebuild.
  std::optional<workload::ScenarioSource> probe;
  std::optional<double> rebuild_bytes_per_second;
  RepairDistribution repair = RepairDistribution::kFixed;
  Replacement replacement = Replacement::kDatapac;
  Mechanisms mechanisms;
  config::ReliabilityParams model;  // the defaults with the file's overrides

  double drive_failures_per_year() const { return kHoursPerYear / model.drive_mtbf_hours; }
};

// The probe's scenario as it runs: its JSON with the scenario's system, every volume's RAID
// type and (when set) the rebuild setting replaced. REQUIRES: s.probe, whose text parses.
std::string probe_scenario_text(const ReliabilityScenario& s);

// True when `text` is a JSON object whose "schema" is kReliabilitySchema (a quick look for
// commands that take either kind of scenario; comments allowed).
bool is_reliability_text(std::string_view text);

// Parses a reliability scenario. `file_name` labels messages and anchors a probe given by
// path. kInvalidArgument "FILE: KEY: what is wrong"; kNotFound for a probe or system that
// does not exist.
sim::Result<ReliabilityScenario> parse_reliability(std::string_view text, const std::string& file_name,
                                                   const config::Catalog& catalog);

}  // namespace afasim::reliability
