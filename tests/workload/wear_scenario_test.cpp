// The wear scenarios (config/scenarios/wear-*.json, docs/wear-leveling.md): three simulated
// years of a skewed write workload through `afasim run`'s runner — issue 7's acceptance.
#include <doctest/doctest.h>

#include <algorithm>

#include "config/preset.h"
#include "workload/scenario.h"
#include "workload/scenario_runner.h"
#include "scenario_test_support.h"

using namespace afasim;
using namespace afasim::workload;
using namespace afasim::workload::testing;

namespace {

double spread(const WearSample& w) {
  const auto [lo, hi] = std::minmax_element(w.percent.begin(), w.percent.end());
  return *hi - *lo;
}

}  // namespace

TEST_CASE(
    "wear-three-years: even ends with max/min <= 1.10; the same seed with leveling off >= 1.5") {
  Scenario s = shipped("wear-three-years");
  const ScenarioReport even = run_ok(s);
  s.array_options.wear.policy = pool::WearPolicy::kOff;
  const ScenarioReport off = run_ok(s);
  const auto& e = even.wear.summary;
  const auto& o = off.wear.summary;
  MESSAGE("even: " << e.min_percent << ".." << e.max_percent << " %, max/min "
                   << e.max_min_ratio.value_or(-1) << ", " << e.fast_forward_moves
                   << " moves; off: " << o.min_percent << ".." << o.max_percent << " %, max/min "
                   << o.max_min_ratio.value_or(-1));
  CHECK(even.end_ns == 3 * sim::kYear);
  CHECK(even.wear.fast_forward);
  // It ended at until_s: the reason says so (hostile review 42: "duration_s reached" alone).
  CHECK(even.end_reason == "duration_s reached, then wear.until_s reached by the fast-forward");
  REQUIRE(e.max_min_ratio.has_value());
  REQUIRE(o.max_min_ratio.has_value());
  CHECK(*e.max_min_ratio <= 1.10);
  // The guard that the workload is skewed enough for leveling to matter: without it the
  // spread is far beyond the 1.10 the leveler holds (1.97 on the flash-level SSD model,
  // whose write amplification each drive's own replica measures; 2.1 on the analytic one).
  CHECK(*o.max_min_ratio >= 1.5);
  CHECK(e.mean_percent > 5);  // three years of this workload wear the SSDs noticeably
  CHECK(e.fast_forward_moves > 0);
  // Projected life: the leveled array lasts longer than its most-worn SSD alone would.
  REQUIRE(e.projected_life_s.has_value());
  REQUIRE(o.projected_life_unleveled_s.has_value());
  CHECK(*e.projected_life_s > *o.projected_life_unleveled_s);
  // The JSON report carries the figure and the wear over time (30-day samples).
  const auto j = scenario_to_json(even);
  CHECK(j["wear"]["max_min_ratio"].get<double>() ==
        doctest::Approx(*e.max_min_ratio).epsilon(1e-3));
  CHECK(j["wear"]["drives"].size() == 40);
  CHECK(j["wear"]["over_time"]["t_s"].size() == even.wear.over_time.size());
  CHECK(even.wear.over_time.size() >= 36);
  // The per-I/O part is reported as before: the workloads ran their 6 s.
  CHECK(even.array.end_ns == 6 * sim::kSecond);
  CHECK(even.array.direction[1].ios > 100000);
  CHECK(format_scenario_text(even).find("Wear (policy even") != std::string::npos);
}

TEST_CASE(
    "wear-three-years with staggered and a 10-point gap: the spread holds within 2 points of the "
    "gap") {
  Scenario s = shipped("wear-three-years");
  s.array_options.wear.policy = pool::WearPolicy::kStaggered;
  s.array_options.wear.stagger_gap_points = 10;
  const ScenarioReport r = run_ok(s);
  MESSAGE("staggered: spread " << r.wear.summary.spread_points << " points at 3 years, mean "
                               << r.wear.summary.mean_percent << " %");
  // The staggered offsets do not pack the new array's extents on a few SSDs: the per-I/O run
  // keeps up with the workload (20,000 IOPS for 6 s), so the rates the fast-forward
  // extrapolates, and the wear they make, are those of the even run.
  CHECK(r.array.direction[1].ios >= 6 * 19'990);
  CHECK(r.wear.summary.spread_points >= 8);
  CHECK(r.wear.summary.spread_points <= 12);
  // Held, not just reached: every 30-day sample of the last year.
  for (const auto& w : r.wear.over_time)
    if (w.t_ns >= 2 * sim::kYear) CHECK(std::abs(spread(w) - 10) <= 2);
}

TEST_CASE("wear-replacement: the new SSD is absorbed and the report says how long it took") {
  const ScenarioReport r = run_ok(shipped("wear-replacement"));
  const auto& s = r.wear.summary;
  REQUIRE(s.replacements.size() == 1);
  const auto& rep = s.replacements[0];
  CHECK(rep.drive == 4);
  REQUIRE(rep.absorbed_ns.has_value());
  MESSAGE("replaced at day " << sim::to_seconds(rep.replaced_ns) / 86400 << " (spread "
                             << rep.spread_at_replacement_points << " points), absorbed after "
                             << sim::to_seconds(*rep.absorbed_ns - rep.replaced_ns) / 86400
                             << " days");
  // The new SSD starts at 0 %, the others carry a year of wear: real work to absorb.
  CHECK(rep.spread_at_replacement_points > 4 * r.wear.options.threshold_points);
  CHECK(*rep.absorbed_ns > rep.replaced_ns);
  CHECK(*rep.absorbed_ns - rep.replaced_ns < 365 * 86400 * sim::kSecond);
  CHECK(s.spread_points <= r.wear.options.threshold_points + 0.5);
  const auto j = scenario_to_json(r);
  CHECK(j["wear"]["replacements"][0]["absorbed_after_s"].get<double>() ==
        doctest::Approx(sim::to_seconds(*rep.absorbed_ns - rep.replaced_ns)));
}

TEST_CASE("the wear section is checked like the rest of a scenario: FILE: KEY: what is wrong") {
  auto parse = [](const std::string& wear, const std::string& extra = "") {
    const std::string text = R"({"schema": "afasim.scenario/1", "name": "w", "duration_s": 5)" +
                             extra + R"(, "wear": )" + wear + "}";
    return parse_scenario(
        text, "t.json", catalog(),
        [](const std::string& p) -> sim::Result<std::string> { return sim::not_found(p); });
  };
  struct Case {
    std::string wear, extra, message;
  };
  const Case cases[] = {
      {R"({"policy": "uneven"})", "",
       "t.json: wear.policy: wear policy \"uneven\" is not one of off, even, staggered"},
      {R"({"policy": "staggered", "stagger_gap_points": 0})", "",
       "t.json: wear.stagger_gap_points: must be a number in (0, 90], got 0"},
      {R"({"stagger_gap_points": 10})", "",
       "t.json: wear.stagger_gap_points: applies to policy \"staggered\" only"},
      {R"({"stagger_gap_points": 10, "policy": "even"})", "",
       "t.json: wear.stagger_gap_points: applies to policy \"staggered\" only"},
      {R"({"threshold_points": 51})", "",
       "t.json: wear.threshold_points: must be a number in (0, 50], got 51"},
      {R"({"speed": 1})", "", "t.json: wear.speed: unknown key"},
      {R"({"fast_forward": {"epoch_s": 60}})", "", "t.json: wear.fast_forward.until_s: missing"},
      {R"({"fast_forward": {"until_s": 4}})", "",
       "t.json: wear.fast_forward.until_s: must be after duration_s"},
      {R"({"fast_forward": {"until_s": 100, "measure_from_s": 5}})", "",
       "t.json: wear.fast_forward.measure_from_s: must be before duration_s"},
      {R"({"fast_forward": {"until_s": 100, "epoch_s": 1000}})", "",
       "t.json: wear.fast_forward.epoch_s: is longer than the fast-forward itself"},
      {R"({"fast_forward": {"until_s": 100, "epoch_s": 10}})",
       R"(, "timeline": [{"at_s": 100, "fault": {"type": "drive_fail", "drive": 1}}])",
       "t.json: timeline[0].at_s: is not before wear.fast_forward.until_s"},
  };
  for (const Case& c : cases) {
    auto s = parse(c.wear, c.extra);
    INFO(c.wear << c.extra);
    REQUIRE_FALSE(s.is_ok());
    INFO(s.status().message());
    CHECK(s.status().message().rfind(c.message, 0) == 0);
  }
  // And a good one: an action inside the fast-forward is accepted.
  auto ok = parse(
      R"({"policy": "staggered", "stagger_gap_points": 12.5, "move_bytes_per_second": "32MB/s",
                      "fast_forward": {"until_s": 1000, "epoch_s": 100, "measure_from_s": 1}})",
      R"(, "timeline": [{"at_s": 500, "fault": {"type": "drive_fail", "drive": 1}}])");
  REQUIRE_MESSAGE(ok.is_ok(), ok.status().to_string());
  CHECK(ok->array_options.wear.policy == pool::WearPolicy::kStaggered);
  CHECK(ok->array_options.wear.stagger_gap_points == 12.5);
  CHECK(ok->array_options.wear.move_bytes_per_second == 32'000'000);
  CHECK(ok->wear.until_ns == 1000 * sim::kSecond);
  CHECK(ok->wear.epoch_ns == 100 * sim::kSecond);
}

TEST_CASE("without fast-forward the report still has the wear at the end") {
  auto s = parse_scenario(
      R"({"schema": "afasim.scenario/1", "name": "w", "duration_s": 1,
    "workloads": [{"name": "w", "fio": ["[w]", "filename=v", "size=1g", "rw=randwrite", "bs=16k",
                                        "rate_iops=2000", "time_based", "runtime=1s"]}]})",
      "t.json", catalog(),
      [](const std::string& p) -> sim::Result<std::string> { return sim::not_found(p); });
  REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  const ScenarioReport r = run_ok(*s);
  CHECK_FALSE(r.wear.fast_forward);
  CHECK(r.end_reason == "duration_s reached");
  CHECK(r.wear.drives.size() == 40);
  CHECK(r.wear.summary.max_percent > 0);
  // 32 MB stay far under the 4 GiB cache's destage watermark: the run's clean stop destages
  // them, so the SSDs hold every written byte, twice on the workload's RAID 10 volume: less
  // the blocks written twice while dirty (~30 of 2,000 16 KiB writes over 65,536 blocks),
  // plus the write in flight at the stop (iodepth 1; the array took it, fio does not count it).
  REQUIRE(r.volumes.size() == 1);
  CHECK(r.volumes[0].raid_type == raid::RaidType::kRaid10);
  std::int64_t ssd_bytes = 0;
  for (const auto& d : r.wear.drives) ssd_bytes += d.host_bytes_written;
  const std::int64_t written = r.array.direction[1].bytes;
  CHECK(written == 2000 * 16384);
  CHECK(ssd_bytes <= 2 * (written + 16384));
  CHECK(ssd_bytes >= 2 * written * 97 / 100);
  CHECK(r.end_ns == sim::kSecond);  // the clean stop is not part of the run's time
  const auto j = scenario_to_json(r);
  CHECK(j["wear"]["fast_forward"].is_null());
  CHECK(j["wear"].contains("max_min_ratio"));
}

TEST_CASE("fast-forward warns when a workload ran below its rate_iops over the measured window") {
  // Model review 27: twice wear-three-years' rates reached 1.35x at 38 ms, and the three-year
  // projection said nothing. One RAID 5 volume: 4K random writes capped at `rate` IOPS.
  auto run_at = [](const std::string& rate) {
    const std::string text = R"({"schema": "afasim.scenario/1", "name": "sat", "system": "ise-860-g3", "seed": 1,
        "duration_s": 2, "options": {"payload": "none"},
        "volumes": [{"name": "v", "capacity": "8GiB", "raid_type": "RAID5", "provisioning": "fixed"}],
        "workloads": [{"name": "w", "fio": ["[w]", "filename=v", "size=8g", "rw=randwrite", "bs=4k",
                       "iodepth=64", "norandommap", "rate_iops=)" + rate + R"(", "time_based", "runtime=2s"]}],
        "wear": {"policy": "even", "fast_forward": {"until_s": 172800, "epoch_s": 86400, "measure_from_s": 1}}})";
    auto s = parse_scenario(text, "sat.json", catalog(),
                            [](const std::string& p) -> sim::Result<std::string> { return sim::not_found(p); });
    REQUIRE_MESSAGE(s.is_ok(), s.status().message());
    return run_ok(*s);
  };
  const ScenarioReport kept_up = run_at("2000");
  CHECK(kept_up.warnings.empty());
  // 10 million IOPS asked of one volume: the array reaches a fraction of it.
  const ScenarioReport short_of = run_at("10000000");
  REQUIRE(short_of.warnings.size() == 1);
  INFO(short_of.warnings[0]);
  CHECK(short_of.warnings[0].rfind("workloads[0] (w): ran at ", 0) == 0);
  CHECK(short_of.warnings[0].find(" IOPS of the 10000000 its rate_iops ask for over the window the fast-forward "
                                  "repeats: the array (or a QoS limit) did not serve it") != std::string::npos);
}

namespace {

// One year fast-forwarded after 3 s of `fio` (a job on a 64 GiB fixed RAID 10 volume, through a
// 16 MiB write cache, measured from 1 s): the drives' NAND bytes per host byte at the end.
// `job`: fio options, each ending in \\n as the JSON string holds them.
double year_write_amplification(const std::string& job) {
  const std::string text = R"({"schema": "afasim.scenario/1", "name": "wa", "seed": 21, "duration_s": 3,
    "options": {"payload": "none", "write_cache": "16MiB"},
    "volumes": [{"name": "v", "capacity": "64GiB", "raid_type": "RAID10", "provisioning": "fixed"}],
    "workloads": [{"name": "w", "fio": "[w]\nfilename=v\nsize=64g\niodepth=64\ntime_based\nruntime=10s\n)" +
                           job + R"("}],
    "wear": {"policy": "even", "fast_forward": {"until_s": 31536000, "epoch_s": 86400, "measure_from_s": 1},
             "sample_every_s": 31536000}})";
  auto s = parse_scenario(text, "wa.json", catalog(), [](const std::string& path) -> sim::Result<std::string> {
    return sim::not_found(path);
  });
  REQUIRE_MESSAGE(s.is_ok(), s.status().message());
  const ScenarioReport r = run_ok(*s);
  double host = 0, nand = 0;
  for (const auto& d : r.wear.drives) {
    host += static_cast<double>(d.host_bytes_written);
    nand += static_cast<double>(d.nand_bytes_written);
  }
  REQUIRE(host > 0);
  return nand / host;
}

}  // namespace

TEST_CASE("a year of sequential writes wears the SSDs at write amplification ~1, random ones at ~1.43") {
  // Random writes over the array's 80 % of each SSD: greedy GC's 1.43 (docs/ssd-model.md, the
  // published analytic value at that spare). A sequential stream overwrites whole blocks: WA 1
  // once it has gone over the drive. Model review 28: fast-forward took the window's sequential
  // fraction from its NAND / host bytes, which 3 s of sequential writes do not move off a drive
  // preconditioned with random ones, and replayed the 1 MiB stream as random: 1.435 for both.
  const double sequential = year_write_amplification("rw=write\\nbs=1m\\nrate_iops=500\\n");
  const double random = year_write_amplification("rw=randwrite\\nnorandommap\\nbs=16k\\nrate_iops=10000\\n");
  MESSAGE("a year's write amplification: sequential " << sequential << ", random " << random);
  CHECK(sequential < 1.1);
  CHECK(random == doctest::Approx(1.43).epsilon(0.03));
}
