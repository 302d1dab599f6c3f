// The QoS acceptance scenarios (issue 5, docs/qos.md "Acceptance scenarios"): the shipped
// config/scenarios/qos-*.json run through `afasim run`'s runner, and each acceptance line
// checked on the report's per-volume IOPS, one row per simulated second.
//
// To keep `make test` fast some runs are shortened where the acceptance allows it, by setting
// the loaded scenario's duration (the workloads are time-based and are simply cut):
//   noisy neighbours 30 s → 8 s (every window checked), work conservation
//   15 s → 6 s, limit 20 s → 10 s. The burst (150 s) and policy-change (30 s) scenarios run
//   in full.
// Figures: the ISE 860 G3 does 284,024 4 KiB random reads per second (12 cores / 42.25 µs,
// docs/performance-model.md), 142,012 per controller.
#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include "config/preset.h"
#include "workload/scenario.h"
#include "workload/scenario_runner.h"
#include "scenario_test_support.h"

using namespace afasim;
using namespace afasim::workload;
using namespace afasim::workload::testing;

namespace {

// IOPS of volume `v` in the row ending at second `t` (rows are 1 s: row i ends at i + 1 s).
double iops_at(const ScenarioReport& r, std::size_t v, std::int64_t t) {
  const TimelineRow& row = r.timeline.at(static_cast<std::size_t>(t - 1));
  REQUIRE(row.end_ns == t * sim::kSecond);
  return static_cast<double>(row.volume_ios[v]) * 1e9 / static_cast<double>(row.length_ns);
}

double total_at(const ScenarioReport& r, std::int64_t t) {
  const TimelineRow& row = r.timeline.at(static_cast<std::size_t>(t - 1));
  return static_cast<double>(row.read_ios + row.write_ios) * 1e9 /
         static_cast<double>(row.length_ns);
}

double total_ios(const ScenarioReport& r, std::int64_t from_s) {
  double sum = 0;
  for (const TimelineRow& row : r.timeline)
    if (row.end_ns > from_s * sim::kSecond)
      sum += static_cast<double>(row.read_ios + row.write_ios);
  return sum;
}

void strip_min(Scenario& s) {
  for (auto& v : s.volumes) v.spec.qos.min_iops.reset();
  for (auto& p : s.qos_policies) p.spec.qos.min_iops.reset();
}

}  // namespace

TEST_CASE(
    "noisy neighbours: the victim's min_iops 20,000 gets at least 99 % in every 1-s window; "
    "without it, it starves at its queue share, 8,354") {
  Scenario s = shipped("qos-noisy-neighbours");
  REQUIRE(s.duration_ns == 30 * sim::kSecond);
  // Four 1-s windows (the shipped 30 s run has 30): the scheduler's state repeats each second
  // once the queues have filled, within the first few milliseconds.
  s.duration_ns = 4 * sim::kSecond;
  const ScenarioReport with_min = run_ok(s);
  const std::size_t victim = volume_index(with_min, "victim");
  REQUIRE(with_min.volumes[victim].qos.min_iops == 20'000);
  REQUIRE(with_min.timeline.size() == 4);
  double lowest = 1e9;
  for (std::int64_t t = 1; t <= 4; ++t) {
    CAPTURE(t);
    // Issue 11: a reservation delivered at 96 % passed the old >= 19,000 check.
    CHECK(iops_at(with_min, victim, t) >= 0.99 * 20'000);
    lowest = std::min(lowest, iops_at(with_min, victim, t));
    // The neighbours push hard enough to saturate the array: its calibrated 284,024, less
    // what the scheduler's dispatch slack (100 µs of backlog spread over 6 per-core queues,
    // docs/performance-model.md) leaves idle: at least 93 % of it.
    CHECK(total_at(with_min, t) <= 284'024 * 1.01);
    CHECK(total_at(with_min, t) >= 284'024 * 0.93);
  }
  MESSAGE("victim with min_iops 20,000: lowest 1-s window " << lowest << " IOPS");

  strip_min(s);
  const ScenarioReport without = run_ok(s);
  // First come, first served: the victim's 32 of the 544 requests on controller A get that
  // share of the controller's rate: half the array's measured total (both controllers run
  // the same load) x 32 / 544 (at the calibrated 142,012: 8,354).
  for (std::int64_t t = 1; t <= 4; ++t) {
    CAPTURE(t);
    const double starved = total_at(without, t) / 2 * 32 / 544;
    CHECK(iops_at(without, victim, t) == doctest::Approx(starved).epsilon(0.03));
    CHECK(iops_at(without, victim, t) < 0.5 * 20'000);
  }
}

TEST_CASE(
    "limit: max_iops 10,000 under unbounded demand gives 9,800 to 10,200 IOPS in every window") {
  Scenario s = shipped("qos-limit");
  s.duration_ns = 10 * sim::kSecond;
  const ScenarioReport r = run_ok(s);
  const std::size_t capped = volume_index(r, "capped");
  const std::size_t neighbour = volume_index(r, "neighbour");
  for (std::int64_t t = 1; t <= 10; ++t) {
    CAPTURE(t);
    CHECK(iops_at(r, capped, t) >= 9'800);
    CHECK(iops_at(r, capped, t) <= 10'200);
    // Work-conserving: the neighbour takes the rest of controller A (142,012).
    CHECK(iops_at(r, capped, t) + iops_at(r, neighbour, t) ==
          doctest::Approx(142'012).epsilon(0.01));
  }
}

TEST_CASE("burst: idle 60 s, then 20,000 IOPS for the 60 s of credit (within 5 %), then 10,000") {
  const ScenarioReport r = run_ok(shipped("qos-burst"));
  const std::size_t v = volume_index(r, "bursty");
  REQUIRE(r.timeline.size() == 150);
  for (std::int64_t t = 1; t <= 60; ++t) CHECK(iops_at(r, v, t) == 0);
  // The burst lasts as long as the rows at ~20,000 (±5 %); the rule says 60 s.
  std::int64_t burst_rows = 0;
  for (std::int64_t t = 61; t <= 150; ++t)
    if (iops_at(r, v, t) >= 19'000 && iops_at(r, v, t) <= 21'000) ++burst_rows;
  MESSAGE("rows at 20,000 +/- 5 %: " << burst_rows << " (the rule: 60)");
  CHECK(burst_rows >= 57);
  CHECK(burst_rows <= 63);
  for (std::int64_t t = 62; t <= 119; ++t) {
    CAPTURE(t);
    CHECK(iops_at(r, v, t) == doctest::Approx(20'000).epsilon(0.05));
  }
  for (std::int64_t t = 125; t <= 150; ++t) {
    CAPTURE(t);
    CHECK(iops_at(r, v, t) == doctest::Approx(10'000).epsilon(0.02));
  }
}

TEST_CASE("work conservation: reservations without limits keep at least 95 % of the no-QoS total") {
  Scenario s = shipped("qos-work-conservation");
  s.duration_ns = 4 * sim::kSecond;
  const ScenarioReport with_qos = run_ok(s);
  Scenario no_min = s;
  strip_min(no_min);
  const ScenarioReport without_settings = run_ok(no_min);
  Scenario off = s;
  off.array_options.qos.enabled = false;  // I/O straight to the data path, as before QoS
  const ScenarioReport scheduler_off = run_ok(off);
  const double q = total_ios(with_qos, 1), n = total_ios(without_settings, 1),
               o = total_ios(scheduler_off, 1);
  MESSAGE("total I/Os after 1 s: with reservations " << q << ", without QoS settings " << n
                                                     << ", scheduler off " << o);
  CHECK(q >= 0.95 * n);
  CHECK(q >= 0.95 * o);
  for (const char* name : {"gold1", "gold2", "gold3", "gold4"}) {
    const std::size_t v = volume_index(with_qos, name);
    for (std::int64_t t = 2; t <= 4; ++t) CHECK(iops_at(with_qos, v, t) >= 30'000 * 0.98);
  }
}

TEST_CASE("a policy changed mid-run takes effect within one simulated second, on all its volumes") {
  const ScenarioReport r = run_ok(shipped("qos-policy-change"));
  REQUIRE(r.actions.size() == 2);
  CHECK(r.actions[0].at_ns == 10 * sim::kSecond);
  for (const char* name : {"t1", "t2", "t3"}) {
    CAPTURE(name);
    const std::size_t v = volume_index(r, name);
    for (std::int64_t t = 2; t <= 10; ++t)
      CHECK(iops_at(r, v, t) == doctest::Approx(20'000).epsilon(0.01));
    // The second right after the change at 10 s already runs at the new max.
    for (std::int64_t t = 11; t <= 20; ++t)
      CHECK(iops_at(r, v, t) == doctest::Approx(5'000).epsilon(0.01));
    for (std::int64_t t = 21; t <= 30; ++t)
      CHECK(iops_at(r, v, t) == doctest::Approx(15'000).epsilon(0.01));
  }
}

TEST_CASE("the QoS scenarios are deterministic: same seed, same timeline") {
  Scenario s = shipped("qos-limit");
  s.duration_ns = 2 * sim::kSecond;
  const ScenarioReport a = run_ok(s), b = run_ok(s);
  CHECK(format_scenario_json(a) == format_scenario_json(b));
  CHECK(format_scenario_svg(a).find("capped") != std::string::npos);
}

TEST_CASE("options.qos_scheduler: false turns the scheduler off for a run; it must be a boolean") {
  auto no_files = [](const std::string& path) -> sim::Result<std::string> {
    return sim::not_found("cannot read " + path);
  };
  const std::string head = R"({"schema": "afasim.scenario/1", "name": "t", "options": {"qos_scheduler": )";
  auto off = parse_scenario(head + "false}}", "t.json", catalog(), no_files);
  REQUIRE_MESSAGE(off.is_ok(), off.status().message());
  CHECK_FALSE(off->array_options.qos.enabled);
  auto on = parse_scenario(head + "true}}", "t.json", catalog(), no_files);
  REQUIRE(on.is_ok());
  CHECK(on->array_options.qos.enabled);
  auto bad = parse_scenario(head + "1}}", "t.json", catalog(), no_files);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("t.json: options.qos_scheduler") == 0);
}

TEST_CASE("a run whose I/Os can never complete stops when nothing is left to happen, naming why") {
  // Hostile round 22: a volume held at max_iops 0, with no duration_s, ran 10^6 simulated
  // seconds and then advised raising report.interval_ms. fio's runtime=1s cannot end the job:
  // its 32 I/Os are held for ever. With an action lifting the limit at 3 s the same run ends.
  auto no_files = [](const std::string& path) -> sim::Result<std::string> {
    return sim::not_found("cannot read " + path);
  };
  const std::string head = R"({"schema": "afasim.scenario/1", "name": "q", "options": {"payload": "none"},
    "volumes": [{"name": "v", "capacity": "1GiB", "max_iops": 0}],
    "workloads": [{"name": "l", "fio": ["[l]", "filename=v", "size=64m", "rw=randread", "bs=4k",
                                        "iodepth=32", "time_based", "runtime=1s"]}])";
  auto held = parse_scenario(head + "}", "q.json", catalog(), no_files);
  REQUIRE_MESSAGE(held.is_ok(), held.status().message());
  auto r = run_scenario(*held, catalog(), {});
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("q.json: the run stalled by 1.000 s: ") == 0);
  CHECK(r.status().message().find("workload(s) l have not finished: their I/Os wait for ever behind "
                                  "max_iops 0 of volume(s) v") != std::string::npos);
  auto lifted = parse_scenario(
      head + R"(, "timeline": [{"at_s": 3, "set_volume": {"volume": "v", "max_iops": null}}]})",
      "q.json", catalog(), no_files);
  REQUIRE_MESSAGE(lifted.is_ok(), lifted.status().message());
  const ScenarioReport done = run_ok(*lifted);
  CHECK(done.end_reason == "workloads finished");
  CHECK(done.timeline.size() >= 4);
}
