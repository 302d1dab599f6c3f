// The reliability mode (reliability/, docs/reliability.md): the loss map read off the
// array's allocator, the lifetime simulation against two independent figures (the Markov
// closed form where its assumptions hold, and the steady-state latent-error fraction of a
// periodic scrub), determinism, bad input, and `afasim run` / `afasim sweep` on the shipped
// files through the binary.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "reliability/loss_map.h"
#include "reliability/markov.h"
#include "reliability/reliability_report.h"
#include "reliability/reliability_scenario.h"
#include "reliability/simulate.h"

namespace afasim::reliability {
namespace {

namespace fs = std::filesystem;

const config::Catalog& catalog() {
  static const config::Catalog c = config::Catalog::embedded().value();
  return c;
}

ReliabilityScenario parse(const std::string& text) {
  auto s = parse_reliability(text, "r.json", catalog());
  REQUIRE_MESSAGE(s.is_ok(), s.status().message());
  return std::move(s).value();
}

ReliabilityReport run(const std::string& text) {
  auto r = run_reliability(parse(text), catalog());
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return std::move(r).value();
}

// The textbook array the Markov model describes: failed SSDs replaced, exponential
// failures and repairs, nothing but double failures. `extra` goes inside the braces.
std::string markov_case(const std::string& raid, double mtbf_hours, const std::string& extra = "") {
  return R"({"schema": "afasim.reliability/1", "name": "m", "raid_type": ")" + raid +
         R"(", "fill_percent": 80, "seed": 3, "arrays": 4000, "horizon_years": 100,
     "rebuild": {"bytes_per_second": "25MB/s", "distribution": "exponential"}, "replacement": "drive",
     "mechanisms": {"latent_errors": false, "rebuild_read_errors": false, "wear_out": false, "controllers": false},
     "model": {"drive_mtbf_hours": )" +
         std::to_string(mtbf_hours) + "}" + extra + "}";
}

}  // namespace

TEST_CASE("loss map: chunk counts add up, RAID 10 loss pairs straddle the DataPacs, RAID 5 pairs share an extent") {
  const config::SystemPreset system = catalog().system("ise-860-g3").value();
  for (const raid::RaidType type : {raid::RaidType::kRaid5, raid::RaidType::kRaid10}) {
    CAPTURE(raid::raid_type_name(type));
    auto built = build_loss_map(system, catalog().capacity(), type, 0.05);
    REQUIRE_MESSAGE(built.is_ok(), built.status().message());
    const LossMap& m = *built;
    REQUIRE(m.drives == 40);
    const int members = type == raid::RaidType::kRaid5 ? 5 : 8;  // 4+1; 4 mirror pairs
    std::int64_t used = 0;
    for (std::int64_t u : m.used_chunks) used += u;
    CHECK(used == m.extents * members);
    // 5 % of the normal chunks, to within one extent.
    const std::int64_t target = static_cast<std::int64_t>(0.05 * static_cast<double>(m.normal_chunks_per_drive * 40));
    CHECK(used >= target);
    CHECK(used < target + members);
    std::int64_t pair_extents = 0;
    for (int i = 0; i < m.drives; ++i) {
      CHECK(m.shared_extents(i, i) == 0);
      for (int j = 0; j < m.drives; ++j) {
        CHECK(m.shared_extents(i, j) == m.shared_extents(j, i));
        if (type == raid::RaidType::kRaid10 && m.shared_extents(i, j) > 0)
          CHECK(m.datapac[static_cast<std::size_t>(i)] != m.datapac[static_cast<std::size_t>(j)]);
        pair_extents += m.shared_extents(i, j);
      }
      // At least the other members of one of its extents (RAID 5) or its mirror (RAID 10).
      CHECK(m.loss_partners(i) >= (type == raid::RaidType::kRaid5 ? 4 : 1));
    }
    // Every extent counted once per loss pair, both ways: RAID 5 has C(5, 2) pairs per
    // extent, RAID 10 one per mirror pair.
    CHECK(pair_extents == 2 * m.extents * (type == raid::RaidType::kRaid5 ? 10 : 4));
  }
}

TEST_CASE("markov: Patterson's RAID 5 formula is the d = N - 1 case") {
  // MTTF² / (N (N − 1) MTTR) is the formula's limit for MTTR << MTTF (SIGMOD 1988); the
  // exact chain is larger by 1 + (2N − 1) MTTR / MTTF = 1.00015 here.
  const double exact = markov_mttdl_hours(8, 7, 1e6, 10);
  CHECK(exact == doctest::Approx(1e12 / (8.0 * 7 * 10) * (1 + 15 * 10 / 1e6)).epsilon(1e-9));
  // (μ + (2N − 1) λ) / (N (N − 1) λ²) written out: N = 3, λ = 0.1, μ = 1.
  CHECK(markov_mttdl_hours(3, 2, 10, 1) == doctest::Approx((1 + 5 * 0.1) / (3 * 2 * 0.01)));
}

TEST_CASE("simulation: double failures agree with the Markov estimate where its assumptions hold") {
  // λ·MTTR ~ 1e-4: overlapping rebuilds and third failures are rare, so the chain is close
  // to exact; ~560 losses each give an interval of about ±8 %. The estimate uses the
  // layout's own loss partners (RAID 5: 4, RAID 10: 1 with the allocator's placement).
  for (const auto& [raid, mtbf] : {std::pair<std::string, double>{"RAID5", 100000}, {"RAID10", 50000}}) {
    for (const char* distribution : {"exponential", "fixed"}) {
      CAPTURE(raid);
      CAPTURE(distribution);
      std::string text = markov_case(raid, mtbf);
      if (std::string(distribution) == "fixed") text.replace(text.find("\"exponential\""), 13, "\"fixed\"");
      const ReliabilityReport r = run(text);
      INFO("seed 3: simulated " << r.mttdl_double_failure_years.value.value_or(-1) << " years ["
                                << r.mttdl_double_failure_years.low << ", " << r.mttdl_double_failure_years.high
                                << "], Markov " << r.markov_mttdl_years << ", losses " << r.first_loss.double_failure);
      REQUIRE(r.first_loss.double_failure > 400);
      CHECK(r.first_loss.latent_error == 0);
      CHECK(r.first_loss.rebuild_read_error == 0);
      CHECK(r.markov_mttdl_years >= r.mttdl_double_failure_years.low);
      CHECK(r.markov_mttdl_years <= r.mttdl_double_failure_years.high);
    }
  }
}

TEST_CASE("simulation: latent errors lose data at the steady-state rate of a periodic scrub") {
  // Only latent errors can lose data: a rebuild takes seconds (no double failure), no UBER.
  // A failure at a time τ after the last scrub pass (τ uniform in [0, T) in the steady
  // state) meets a Poisson number of errors with mean d r τ on its d = 4 RAID 5 partners
  // (all of whose extents it shares), so it loses data with probability
  //   E[1 − exp(−d r τ)] = 1 − (1 − exp(−x)) / x,  x = d r T = 4 × 70 / 8766 × 24 = 0.7666,
  // = 0.3016. T is short beside the time to the first failure (2,500 h), so the first
  // interval, where τ is shorter, hardly counts.
  const ReliabilityReport r = run(R"({"schema": "afasim.reliability/1", "name": "lse", "raid_type": "RAID5",
      "fill_percent": 80, "seed": 11, "arrays": 8000, "horizon_years": 20,
      "rebuild": {"bytes_per_second": "100GB/s"}, "replacement": "drive",
      "mechanisms": {"rebuild_read_errors": false, "wear_out": false, "controllers": false},
      "model": {"drive_mtbf_hours": 100000, "latent_errors_per_drive_year": 70, "scrub_interval_hours": 24}})");
  const double x = 4 * 70.0 / 8766 * 24;
  const double expected = 1 - (1 - std::exp(-x)) / x;
  CHECK(expected == doctest::Approx(0.3016).epsilon(1e-3));
  REQUIRE(r.drive_failures > 20000);
  CHECK(r.first_loss.double_failure == 0);
  // Within three standard errors of the binomial (a correct model fails one seed in 370;
  // seeds 1 to 4 and 11 gave 0.308, 0.304, 0.302, 0.309, 0.293 with 4,000 arrays).
  const double observed = static_cast<double>(r.first_loss.latent_error) / static_cast<double>(r.drive_failures);
  const double standard_error = std::sqrt(expected * (1 - expected) / static_cast<double>(r.drive_failures));
  INFO("seed 11: " << r.first_loss.latent_error << " of " << r.drive_failures << " failures met a latent error: "
                   << observed << " against " << expected << " +- " << 3 * standard_error);
  CHECK(std::abs(observed - expected) < 3 * standard_error);
  CHECK(r.latent_errors_scrubbed > 0);
}

TEST_CASE("simulation: the same seed gives the same report, another seed another; the ISE's spare runs out") {
  const std::string text = R"({"schema": "afasim.reliability/1", "name": "d", "raid_type": "RAID10",
      "seed": 5, "arrays": 200, "horizon_years": 5, "rebuild": {"bytes_per_second": "200MB/s"},
      "host_write_bytes_per_second": "2GB/s", "model": {"drive_afr_percent": 40}})";
  const std::string a = format_reliability_json(run(text));
  CHECK(a == format_reliability_json(run(text)));
  std::string other = text;
  other.replace(other.find("\"seed\": 5"), 9, "\"seed\": 6");
  CHECK(a != format_reliability_json(run(other)));
  const ReliabilityReport r = run(text);
  // At 40 % AFR a DataPac loses ~40 SSDs in five years; its spare holds under 3 SSDs' data.
  CHECK(r.datapac_replacements > 0);
  // 2 GB/s of host writes, ×2 for the mirror, over 40 SSDs rated 10 DWPD × 1.6 TB × 5 years,
  // × the SSDs' garbage collection over the 80 % the ISE writes against the rating's full
  // span: 1.43 / 2.04 (docs/ssd-model.md "Wear"; the array's own wear model gave 0.378 %/yr
  // per 100 MB/s of random writes in model review 27, where this formula gave 0.540).
  const double rated_full_span = 100 * 2e9 * 2 / 40 * 3600 * 8766 / (10 * 1.6e12 * 365 * 5);
  CHECK(r.wear_percent_per_year == doctest::Approx(rated_full_span * 1.43 / 2.04).epsilon(0.02));
  CHECK(r.drive_afr_percent == doctest::Approx(40));
}

TEST_CASE("wear: RAID 5 whole-stripe writes wear (k + 1) / k per host byte, small random writes 2, RAID 10 2") {
  const std::string base = R"({"schema": "afasim.reliability/1", "name": "w", "raid_type": "RAID5",
      "arrays": 1, "horizon_years": 1, "rebuild": {"bytes_per_second": "400MB/s"},
      "host_write_bytes_per_second": "100MB/s")";
  const double random = run(base + "}").wear_percent_per_year;
  const double stream = run(base + R"(, "host_write_sequential_fraction": 1})").wear_percent_per_year;
  const double half = run(base + R"(, "host_write_sequential_fraction": 0.5})").wear_percent_per_year;
  // RAID 5 4+1: 5 / 4 against 2 (model review 27: the array's wear model gave 0.237 against
  // 0.378 %/yr per 100 MB/s, 0.627).
  CHECK(stream / random == doctest::Approx(1.25 / 2));
  CHECK(half / random == doctest::Approx((0.5 * 2 + 0.5 * 1.25) / 2));
  std::string raid10 = base + R"(, "host_write_sequential_fraction": 1})";
  raid10.replace(raid10.find("RAID5"), 5, "RAID10");
  CHECK(run(raid10).wear_percent_per_year == doctest::Approx(random));  // a mirror writes 2 either way
  CHECK(random == doctest::Approx(0.378).epsilon(0.03));  // the array's figure above, 100 MB/s
}

TEST_CASE("intervals: Garwood's Poisson and Wilson's score interval against published values") {
  // One event in unit exposure: the exact 95 % interval of a Poisson mean is [0.0253, 5.5716]
  // (Garwood 1936; the table of Ulm 1990), so the mean time between events is [1/5.5716,
  // 1/0.0253]; with none, the lower end is 1/3.6889.
  const Estimate one = poisson_mean_time(1, 1.0);
  REQUIRE(one.value);
  CHECK(*one.value == doctest::Approx(1.0));
  CHECK(one.low == doctest::Approx(1 / 5.5716).epsilon(1e-4));
  CHECK(one.high == doctest::Approx(1 / 0.025318).epsilon(1e-3));
  const Estimate none = poisson_mean_time(0, 1.0);
  CHECK_FALSE(none.value);
  CHECK(none.low == doctest::Approx(1 / 3.6889).epsilon(1e-4));
  CHECK(std::isinf(none.high));
  // Wilson (1927): 0 of 10 -> [0, 0.2775]; 5 of 10 -> [0.2366, 0.7634].
  const Estimate zero = wilson_proportion(0, 10);
  CHECK(zero.low == doctest::Approx(0));
  CHECK(zero.high == doctest::Approx(0.2775).epsilon(1e-3));
  const Estimate half = wilson_proportion(5, 10);
  CHECK(half.low == doctest::Approx(0.2366).epsilon(1e-3));
  CHECK(half.high == doctest::Approx(0.7634).epsilon(1e-3));
}

TEST_CASE("simulation: both controllers down at the rate two independent failures and repairs predict") {
  // Each controller is down R = 24 h after a failure, up MTBF = 1,000 h on average between:
  // it fails at 1 / (MTBF + R) per hour and is down R / (MTBF + R) of the time, so one fails
  // while the other is down at 2 R / (MTBF + R)² per hour, and the overlap lasts the other's
  // remaining repair: R / 2 on average. SSDs all but never fail here.
  const ReliabilityReport r = run(R"({"schema": "afasim.reliability/1", "name": "c", "raid_type": "RAID10",
      "seed": 7, "arrays": 1000, "horizon_years": 10, "rebuild": {"bytes_per_second": "1GB/s"},
      "mechanisms": {"latent_errors": false, "rebuild_read_errors": false, "wear_out": false},
      "model": {"drive_afr_percent": 0.000001, "controller_mtbf_hours": 1000, "controller_replacement_hours": 24}})");
  const double hours = r.array_years * kHoursPerYear;
  const double expected = 2 * 24 / (1024.0 * 1024.0) * hours;
  INFO("seed 7: " << r.unavailability_events << " overlaps against " << expected << ", " << r.unavailable_hours << " hours");
  CHECK(std::abs(static_cast<double>(r.unavailability_events) - expected) < 3 * std::sqrt(expected));
  const double mean_h = r.unavailable_hours / static_cast<double>(r.unavailability_events);
  CHECK(mean_h > 11);
  CHECK(mean_h < 13);
}

TEST_CASE("bad input: every problem is FILE: KEY: what is wrong") {
  const std::string head = R"("schema": "afasim.reliability/1", "name": "b", )";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"schema": "afasim.scenario/1", "name": "b"})", "r.json: schema: expected \"afasim.reliability/1\""},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {"bytes_per_second": "1GB/s"}, "colour": 1})",
       "r.json: colour: unknown key"},
      {"{" + head + R"("arrays": 1, "rebuild": {"bytes_per_second": "1GB/s"}})", "r.json: raid_type: missing"},
      {"{" + head + R"("raid_type": "RAID6", "arrays": 1, "rebuild": {"bytes_per_second": "1GB/s"}})",
       "r.json: raid_type: must be one of RAID10, RAID5, got \"RAID6\""},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 0, "rebuild": {"bytes_per_second": "1GB/s"}})",
       "r.json: arrays: must be 1 to 100000000, got 0"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "fill_percent": 101, "rebuild": {"bytes_per_second": "1GB/s"}})",
       "r.json: fill_percent: must be 0.001 to 100, got 101"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "host_write_sequential_fraction": 1.5, "rebuild": {"bytes_per_second": "1GB/s"}})",
       "r.json: host_write_sequential_fraction: must be 0 to 1, got 1.5"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "host_write_sequential_fraction": "half", "rebuild": {"bytes_per_second": "1GB/s"}})",
       "r.json: host_write_sequential_fraction: must be a number, got"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {}})", "r.json: rebuild: give a probe scenario"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {"probe": "no-such-scenario"}})",
       "r.json: rebuild.probe: cannot read no-such-scenario"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {"bytes_per_second": "1GB/s", "distribution": "normal"}})",
       "r.json: rebuild.distribution: must be one of fixed, exponential"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {"bytes_per_second": "1GB/s"}, "model": {"drive_afr_percent": 1, "drive_mtbf_hours": 5}})",
       "r.json: model: give drive_afr_percent or drive_mtbf_hours, not both"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {"bytes_per_second": "1GB/s"}, "model": {"scrub_interval_hours": -1}})",
       "r.json: model.scrub_interval_hours: must be 0.001 to 1e+06, got -1"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "system": "ise-9000", "rebuild": {"bytes_per_second": "1GB/s"}})",
       "r.json: system: "},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {"bytes_per_second": "1GB/s"}, "mechanisms": {"wear_out": 1}})",
       "r.json: mechanisms.wear_out: must be true or false"},
      {"{" + head, "r.json: invalid JSON"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {"probe": "ise860-reliability"}})",
       "r.json: rebuild.probe: config/reliability/ise860-reliability.json is a reliability scenario"},
      {"{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {"bytes_per_second": "1GB/s"}, "model": {"drive_afr_percent": 1e6}})",
       "r.json: model.drive_afr_percent: must be 1e-06 to 100000, got 1000000"},
  };
  for (const auto& [text, expected] : cases) {
    CAPTURE(text);
    auto s = parse_reliability(text, "r.json", catalog());
    REQUIRE_FALSE(s.is_ok());
    CHECK_MESSAGE(s.status().message().rfind(expected, 0) == 0, s.status().message());
  }
  // Work beyond the bound is refused before it starts, not run for hours.
  auto huge = run_reliability(parse("{" + head + R"("raid_type": "RAID5", "arrays": 100000000, "horizon_years": 100,
      "rebuild": {"bytes_per_second": "1GB/s"}, "model": {"drive_afr_percent": 1000}})"), catalog());
  REQUIRE_FALSE(huge.is_ok());
  CHECK(huge.status().message().find("events expected") != std::string::npos);
  // A probe whose scenario fails no SSD has no rebuild to measure.
  const fs::path dir = fs::temp_directory_path() / ("afasim-reliability-probe-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "idle.json") << R"({"schema": "afasim.scenario/1", "name": "idle", "duration_s": 0.1,
      "volumes": [{"name": "v", "capacity": "1GiB", "raid_type": "RAID5"}]})";
  auto no_rebuild = run_reliability(parse_reliability("{" + head + R"("raid_type": "RAID5", "arrays": 1, "rebuild": {"probe": "idle.json"}})",
                                                      (dir / "r.json").string(), catalog()).value(), catalog());
  fs::remove_all(dir);
  REQUIRE_FALSE(no_rebuild.is_ok());
  CHECK(no_rebuild.status().message().find("no rebuild completed within its duration_s") != std::string::npos);
}

namespace {

struct Cli {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Cli afasim(const std::string& args, const fs::path& dir) {
  const char* binary = std::getenv("AFASIM_BINARY");
  REQUIRE_MESSAGE(binary != nullptr, "AFASIM_BINARY is not set (run through ctest)");
  const std::string cmd = std::string(binary) + " " + args + " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

}  // namespace

TEST_CASE("afasim run and afasim sweep on the shipped reliability files") {
  const char* source = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const fs::path dir = fs::temp_directory_path() / ("afasim-reliability-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Cli json = afasim("run ise860-reliability --format json --quiet --seed 2", dir);
  REQUIRE_MESSAGE(json.exit_code == 0, json.err);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  CHECK(j["schema"] == "afasim.reliability-report/1");
  CHECK(j["raid_type"] == "RAID5");
  CHECK(j["seed"] == 2);
  CHECK(j["array_years"].get<double>() > 1240);  // 250 × 5 years, less any lifetime cut short
  CHECK(j["rebuild_source"].get<std::string>().find("probe config/scenarios/drive-failure-short.json") == 0);
  const Cli svg = afasim("run ise860-reliability --quiet --svg " + (dir / "x.svg").string(), dir);
  CHECK(svg.exit_code == 2);
  CHECK(svg.err.find("a reliability scenario's report has no charts") != std::string::npos);

  // The shipped sweep, two seeds: a RAID 5 and a RAID 10 point with the reliability columns.
  const std::string sweep = (fs::path(source) / "config/sweeps/reliability-ise860.json").string();
  const Cli s = afasim("sweep " + sweep + " --seed-count 2 --quiet --out " + (dir / "s").string(), dir);
  REQUIRE_MESSAGE(s.exit_code == 0, s.err);
  const std::string csv = slurp(dir / "s" / "results.csv");
  CHECK(csv.rfind("point,/raid_type,seed,status,array_years,arrays_with_loss,losses_double_failure,", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);  // header + 2 RAID × 2 seeds
  CHECK(csv.find("\n1,RAID10,2,ok,") != std::string::npos);
  // The summary pools each point's seeds: its total exposure is the sum of the rows'.
  std::istringstream rows(csv);
  std::string line;
  std::getline(rows, line);
  double raid5_years = 0;
  while (std::getline(rows, line))
    if (line.rfind("0,RAID5,", 0) == 0) raid5_years += std::stod(line.substr(line.find(",ok,") + 4));
  const std::string summary = slurp(dir / "s" / "summary.csv");
  CHECK(summary.find(",array_years_total,losses_total,mttdl_years_pooled,mttdl_years_low,mttdl_years_high,") !=
        std::string::npos);
  const std::string raid5 = summary.substr(summary.find("\n0,RAID5,") + 1);
  // Split on commas, keeping empty cells (the figures here are never quoted).
  const auto split = [](const std::string& text) {
    std::vector<std::string> cells{""};
    for (char c : text.substr(0, text.find('\n'))) {
      if (c == ',')
        cells.emplace_back();
      else
        cells.back().push_back(c);
    }
    return cells;
  };
  const std::vector<std::string> header_cells = split(summary);
  const std::vector<std::string> cells = split(raid5);
  REQUIRE(cells.size() == header_cells.size());
  const auto total = std::find(header_cells.begin(), header_cells.end(), "array_years_total") - header_cells.begin();
  CHECK(std::stod(cells[static_cast<std::size_t>(total)]) == doctest::Approx(raid5_years).epsilon(1e-6));
  fs::remove_all(dir);
}

}  // namespace afasim::reliability
