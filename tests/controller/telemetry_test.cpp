// Telemetry: per-second samples of what the I/O path did (counted by the hooks in
// IoOrchestrator::finish_io and Hardware::backend), the bounded history rings, the sampler that stops
// when the model is idle, and alerts raised and cleared as events. Expected figures come from
// the I/O each test issues itself, counted in its own completion callbacks.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <memory>
#include <numeric>

#include "controller/array.h"
#include "controller/telemetry.h"
#include "tests/controller/array_with_volumes.h"

using namespace afasim;
using namespace afasim::controller;
using sim::kMillisecond;
using sim::kSecond;
using sim::Time;
using Kind = PerfHistory::Kind;

namespace {

struct TelemetryFixture : afasim::controller::testing::ArrayWithVolumes {
  // Completions the test saw, by the second they completed in: count and latencies.
  std::map<std::int64_t, std::vector<Time>> read_latency_by_second;
  std::int64_t completed = 0;

  // `per_second` 4 KiB reads of `v` every second from `from` to `until`, evenly spaced.
  void reads(Id v, int per_second, Time from, Time until, IoOp op = IoOp::kRead) {
    const Time gap = kSecond / per_second;
    for (Time t = from; t < until; t += gap) {
      sim.at(t, [this, v, t, op, gap] {
        HostIo io;
        io.op = op;
        io.volume_id = v;
        io.offset_bytes = (t / gap * 4096) % (1LL << 30);
        io.length_bytes = 4096;
        array->submit(io, [this, op](const IoCompletion& c) {
          REQUIRE(c.status.is_ok());
          ++completed;
          if (op == IoOp::kRead) read_latency_by_second[c.complete_time / kSecond].push_back(c.latency());
        });
      });
    }
  }

  std::unique_ptr<Telemetry> telemetry(TelemetryOptions o = {}) {
    auto t = Telemetry::create(*array, std::move(o));
    REQUIRE(t.is_ok());
    return std::move(t).value();
  }

  std::vector<Event> alert_events() const {
    std::vector<Event> out;
    const auto page = array->events(0, array->event_count());
    for (auto it = page.items.rbegin(); it != page.items.rend(); ++it)
      if (it->category == "alert") out.push_back(*it);
    return out;
  }
};

}  // namespace

TEST_CASE("each second's sample counts the I/O that completed in it, per volume, controller and array") {
  TelemetryFixture f;
  const Id a = f.volume("a", 1);
  const Id b = f.volume("b", 2);
  auto t = f.telemetry();
  // 200 reads/s on a (controller A) and 50 writes/s on b (controller B) for 3 s.
  f.reads(a, 200, 0, 3 * kSecond);
  f.reads(b, 50, 0, 3 * kSecond, IoOp::kWrite);
  f.sim.run_until(4 * kSecond + 1);

  const PerfSeries va = t->history().series({Kind::kVolume, a}, std::nullopt, 100);
  REQUIRE(va.samples.size() == 4);
  CHECK(va.stamps[0].time_ns == kSecond);
  CHECK(va.stamps[3].time_ns == 4 * kSecond);
  CHECK_FALSE(va.stamps[0].wall_ms.has_value());  // no wall clock given
  // The reads completing in second k are the ones the test saw completing there.
  for (int k = 0; k < 4; ++k) {
    const auto& lat = f.read_latency_by_second[k];
    CHECK(va.samples[static_cast<std::size_t>(k)].read_ios == lat.size());
    CHECK(va.samples[static_cast<std::size_t>(k)].read_bytes == static_cast<std::int64_t>(lat.size()) * 4096);
    CHECK(va.samples[static_cast<std::size_t>(k)].write_ios == 0);
    if (!lat.empty()) {
      const double mean_us = std::accumulate(lat.begin(), lat.end(), 0.0) / static_cast<double>(lat.size()) / 1e3;
      CHECK(va.samples[static_cast<std::size_t>(k)].latency_us_mean == doctest::Approx(mean_us).epsilon(1e-4));
      const Time max = *std::max_element(lat.begin(), lat.end());
      CHECK(va.samples[static_cast<std::size_t>(k)].latency_us_max == doctest::Approx(max / 1e3).epsilon(1e-4));
    }
  }
  // 200 a second were issued; all but the last few of second 0..2 complete in that second.
  CHECK(va.samples[1].read_ios >= 199);
  CHECK(va.samples[3].read_ios == 0);

  const PerfSeries vb = t->history().series({Kind::kVolume, b}, std::nullopt, 100);
  std::int64_t b_writes = 0;
  for (const auto& s : vb.samples) b_writes += s.write_ios;
  CHECK(b_writes == 150);

  // Controllers: A served only a, B only b; the array is their sum.
  const PerfSeries ca = t->history().series({Kind::kController, 1}, std::nullopt, 100);
  const PerfSeries cb = t->history().series({Kind::kController, 2}, std::nullopt, 100);
  const PerfSeries all = t->history().series({Kind::kArray, 0}, std::nullopt, 100);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(ca.samples[k].read_ios == va.samples[k].read_ios);
    CHECK(ca.samples[k].write_ios == 0);
    CHECK(cb.samples[k].write_ios == vb.samples[k].write_ios);
    CHECK(all.samples[k].read_ios + all.samples[k].write_ios ==
          va.samples[k].read_ios + vb.samples[k].write_ios);
  }
  // A's cores did work while the reads ran and none in the idle fourth second.
  CHECK(ca.samples[1].cpu_busy_ratio > 0);
  CHECK(ca.samples[1].cpu_busy_ratio < 1);
  CHECK(ca.samples[3].cpu_busy_ratio == 0);

  // Totals (what /metrics shows) count every completion, and the buckets add up to them.
  const ObjectTotals* ta = t->counters().volume_totals(a);
  REQUIRE(ta != nullptr);
  CHECK(ta->read.ios == 600);
  CHECK(ta->read.bytes == 600 * 4096);
  CHECK(std::accumulate(ta->read.buckets.begin(), ta->read.buckets.end(), std::int64_t{0}) == 600);
  CHECK(t->counters().volume_totals(b)->write.ios == 150);
  CHECK(f.completed == 750);
}

TEST_CASE("the SSD hook counts back-end commands per drive") {
  TelemetryFixture f;
  const Id a = f.volume("a");
  auto t = f.telemetry();
  f.reads(a, 100, 0, kSecond);
  f.sim.run_until(2 * kSecond + 1);
  std::int64_t drive_reads = 0;
  for (int d = 0; d < t->counters().drive_count(); ++d) drive_reads += t->counters().drive_totals(d).read.ios;
  // The hook sees every SSD command the timing model issued: the reads' misses (RAID10 reads
  // one copy) and what the read-ahead fetched for these sequential reads; hits read none.
  const auto& timing = f.array->data_path().timing().stats();
  CHECK(drive_reads == timing.member_ops);
  CHECK(drive_reads > 0);
  CHECK(timing.read_cache_hits > 0);
}

TEST_CASE("a ring keeps the newest samples; since and limit select from them") {
  PerfHistory h(3, kSecond);
  const PerfHistory::Key v{Kind::kVolume, 7};
  for (int row = 1; row <= 5; ++row) {
    h.begin({row * kSecond, std::nullopt});
    PerfSample s;
    s.read_ios = static_cast<std::uint32_t>(row);
    h.add(v, s);
  }
  PerfSeries all = h.series(v, std::nullopt, 100);
  REQUIRE(all.samples.size() == 3);
  CHECK(all.samples[0].read_ios == 3);
  CHECK(all.samples[2].read_ios == 5);
  CHECK(all.stamps[0].time_ns == 3 * kSecond);
  PerfSeries after = h.series(v, 4 * kSecond, 100);
  REQUIRE(after.samples.size() == 1);
  CHECK(after.samples[0].read_ios == 5);
  PerfSeries newest = h.series(v, std::nullopt, 2);
  REQUIRE(newest.samples.size() == 2);
  CHECK(newest.samples[0].read_ios == 4);
  CHECK(h.series({Kind::kVolume, 8}, std::nullopt, 100).samples.empty());

  // An object that appears later lines up with the stamps of its own rows.
  h.begin({6 * kSecond, std::nullopt});
  h.add(v, PerfSample{});
  PerfSample late;
  late.write_ios = 9;
  h.add({Kind::kVolume, 8}, late);
  PerfSeries l = h.series({Kind::kVolume, 8}, std::nullopt, 100);
  REQUIRE(l.samples.size() == 1);
  CHECK(l.stamps[0].time_ns == 6 * kSecond);
  CHECK(l.samples[0].write_ios == 9);
}

TEST_CASE("history length is bounded by history_samples and wall stamps come from the given clock") {
  TelemetryFixture f;
  const Id a = f.volume("a");
  TelemetryOptions o;
  o.history_samples = 5;
  std::int64_t wall = 1'700'000'000'000;
  o.wall_clock_ms = [&wall] { return wall += 1000; };
  auto t = f.telemetry(o);
  f.sim.run_until(10 * kSecond + 1);
  const PerfSeries s = t->history().series({Kind::kVolume, a}, std::nullopt, 100);
  REQUIRE(s.samples.size() == 5);
  CHECK(s.stamps.front().time_ns == 6 * kSecond);
  CHECK(s.stamps.back().time_ns == 10 * kSecond);
  CHECK(s.stamps.back().wall_ms == 1'700'000'010'000);
  CHECK(t->history().rows() == 10);
}

TEST_CASE("with tick_when_idle off the sampler stops on an empty queue and the next I/O restarts it") {
  TelemetryFixture f;
  const Id a = f.volume("a");
  TelemetryOptions o;
  o.tick_when_idle = false;
  auto t = f.telemetry(o);
  f.sim.run();  // returns at once: without host I/O the sampler has not started
  CHECK(t->history().rows() == 0);
  CHECK(f.sim.now() == 0);
  // Reads for a second: the sampler starts with them, takes the sample at 1 s and stops.
  f.reads(a, 10, 0, kSecond);
  f.sim.run();
  CHECK(t->history().rows() == 1);
  CHECK(f.sim.now() == kSecond);
  // Idle again, then more reads: it starts again.
  f.reads(a, 10, 5 * kSecond, 6 * kSecond);
  f.sim.run();
  CHECK(t->history().rows() == 2);
  CHECK(f.sim.now() == 6 * kSecond);
  std::int64_t reads = 0;
  for (const auto& s : t->history().series({Kind::kVolume, a}, std::nullopt, 100).samples) reads += s.read_ios;
  CHECK(reads == 20);
}

TEST_CASE("a deleted volume's ring and counters go at the next sample") {
  TelemetryFixture f;
  const Id a = f.volume("a");
  auto t = f.telemetry();
  f.reads(a, 10, 0, kSecond);
  f.sim.run_until(kSecond + 1);
  CHECK(t->history().has({Kind::kVolume, a}));
  REQUIRE(f.array->delete_volume(a).is_ok());
  f.sim.run_until(2 * kSecond + 1);
  CHECK_FALSE(t->history().has({Kind::kVolume, a}));
  CHECK(t->counters().volume_totals(a) == nullptr);
}

TEST_CASE("alerts: a failed SSD raises drive_failed until it is replaced, and volume_degraded for each "
          "volume it held until the rebuild") {
  TelemetryFixture f;
  const Id a = f.volume("a");
  auto t = f.telemetry();
  f.sim.run_until(kSecond + 1);
  CHECK(t->alerts().empty());
  FaultSpec fail;
  fail.type = "drive_fail";
  // The first member of a's first extent: a drive the volume certainly uses.
  fail.drive = f.array->data_path().extent_records(a).front().members.front().drive + 1;
  REQUIRE(f.array->inject_fault(fail).is_ok());
  const std::string drive = "drive/" + std::to_string(fail.drive);
  // Raised at the time of the fault (its events trigger an evaluation), not at the next
  // sample; the rebuild of a 1 GiB volume's lost chunk takes less than a second.
  const Time fault_at = f.sim.now();
  f.sim.run_until(fault_at + 1);
  std::map<std::string, Alert> by_kind;
  for (const Alert& x : t->alerts()) by_kind[x.kind] = x;
  REQUIRE(by_kind.size() == 2);
  CHECK(by_kind["volume_degraded"].object == "volume/" + std::to_string(a));
  CHECK(by_kind["volume_degraded"].severity == Severity::kWarning);
  CHECK(by_kind["volume_degraded"].raised_ns == fault_at);
  CHECK(by_kind["drive_failed"].object == drive);
  CHECK(by_kind["drive_failed"].severity == Severity::kError);
  // A 1 GiB volume's lost chunks rebuild in well under a minute at 400 MB/s: redundancy is
  // back, the SSD still wants replacing.
  f.sim.run_until(60 * kSecond + 1);
  CHECK(f.array->volume_state(a) == VolumeState::kOnline);
  REQUIRE(t->alerts().size() == 1);
  CHECK(t->alerts()[0].kind == "drive_failed");
  FaultSpec replace;
  replace.type = "drive_replace";
  replace.drive = fail.drive;
  REQUIRE(f.array->inject_fault(replace).is_ok());
  f.sim.run_until(61 * kSecond + 1);
  CHECK(t->alerts().empty());
  const auto events = f.alert_events();
  REQUIRE(events.size() == 4);
  std::vector<std::string> messages;
  for (const auto& e : events) messages.push_back(e.message.substr(0, e.message.find(':', 14)));
  std::sort(messages.begin(), messages.begin() + 2);  // raised together, in either order
  CHECK(messages == std::vector<std::string>{"alert raised: drive_failed", "alert raised: volume_degraded",
                                             "alert cleared: volume_degraded", "alert cleared: drive_failed"});
  CHECK(events[2].severity == Severity::kInfo);
}

TEST_CASE("alerts: a degraded volume that fails clears its degraded alert as superseded, not resolved (hostile review 42)") {
  TelemetryFixture f;
  const Id a = f.volume("a");
  auto t = f.telemetry();
  f.sim.run_until(kSecond + 1);
  const auto members = f.array->data_path().extent_records(a).front().members;
  FaultSpec fail;
  fail.type = "drive_fail";
  fail.drive = members.front().drive + 1;
  REQUIRE(f.array->inject_fault(fail).is_ok());
  f.sim.run_until(f.sim.now() + 1);
  for (std::size_t m = 1; m < members.size(); ++m) {
    fail.drive = members[m].drive + 1;
    REQUIRE(f.array->inject_fault(fail).is_ok());
  }
  f.sim.run_until(f.sim.now() + kSecond);
  REQUIRE(f.array->volume_state(a) == VolumeState::kFailed);
  std::string cleared;
  for (const auto& e : f.alert_events())
    if (e.message.rfind("alert cleared: volume_degraded: ", 0) == 0) cleared = e.message;
  INFO(cleared);
  CHECK(cleared.rfind("alert cleared: volume_degraded: superseded by volume_failed after ", 0) == 0);
}

TEST_CASE("alerts: one whose event the journal cannot take is raised once, not at every evaluation") {
  // Hostile round 18: the alert's state was left unchanged when its event's commit failed
  // (a full host disk), so each second's evaluation raised it again (45,730 events in 33 s).
  TelemetryFixture f;
  f.volume("a");
  auto t = f.telemetry();
  f.sim.run_until(kSecond + 1);
  f.journal.fail_next_commits(1 << 30);
  FaultSpec cut;
  cut.type = "link_cut";
  REQUIRE(f.array->inject_fault(cut).is_ok());
  f.sim.run_until(20 * kSecond + 1);
  f.journal.fail_next_commits(0);
  int raised = 0;
  for (const auto& e : f.alert_events()) raised += e.message.rfind("alert raised: link_down", 0) == 0;
  CHECK(raised == 1);
  REQUIRE(t->alerts().size() == 1);
  CHECK(t->alerts()[0].kind == "link_down");
}

TEST_CASE("alerts: controller, link, supercap and mains; none raised twice across a restart of the monitor") {
  TelemetryFixture f;
  f.volume("a");
  auto t = f.telemetry();
  auto inject = [&](const char* type, Id controller = 0) {
    FaultSpec s;
    s.type = type;
    s.controller = controller;
    REQUIRE_MESSAGE(f.array->inject_fault(s).is_ok(), type);
  };
  inject("controller_fail", 2);
  inject("supercap_degrade");
  f.sim.run_until(kSecond + 1);
  std::map<std::string, Severity> kinds;
  for (const Alert& a : t->alerts()) kinds[a.kind] = a.severity;
  CHECK(kinds.size() == 2);
  CHECK(kinds["controller_failed"] == Severity::kCritical);
  CHECK(kinds["supercap_degraded"] == Severity::kWarning);

  // A new monitor over the same event log takes the active alerts over without new events.
  const std::size_t before = f.alert_events().size();
  t.reset();
  t = f.telemetry();
  CHECK(t->alerts().size() == 2);
  f.sim.run_until(2 * kSecond + 1);
  CHECK(f.alert_events().size() == before);

  inject("controller_restore", 2);
  inject("supercap_restore");
  f.sim.run_until(3 * kSecond);
  // Restored, the controller boots before it serves: still alerted, as not serving yet.
  kinds.clear();
  for (const Alert& a : t->alerts()) kinds[a.kind] = a.severity;
  CHECK(kinds.size() == 1);
  CHECK(kinds.count("controller_failed") == 1);
  inject("link_cut");
  f.sim.run_until(60 * kSecond + 1);
  kinds.clear();
  for (const Alert& a : t->alerts()) kinds[a.kind] = a.severity;
  CHECK(kinds.size() == 1);
  CHECK(kinds.count("link_down") == 1);
  inject("power_loss");
  f.sim.run_until(61 * kSecond + 1);
  bool mains = false;
  for (const Alert& a : t->alerts()) mains |= a.kind == "mains_lost";
  CHECK(mains);
}

TEST_CASE("alerts: a pool at or above a space threshold, cleared when the volume goes") {
  TelemetryFixture f;
  PoolPatch p;
  p.space_thresholds_percent = std::vector<int>{1, 2};
  const Id pool_id = f.array->pools().begin()->first;
  REQUIRE(f.array->update_pool(pool_id, p).is_ok());
  auto t = f.telemetry();
  VolumeSpec s;
  s.name = "big";
  // RAID10 doubles it: 2 × 384 GiB of raw space is 1.7 % of the ISE 860's ~46 TB raw usable.
  s.capacity_bytes = 384LL << 30;
  s.provisioning = Provisioning::kFixed;
  auto v = f.array->create_volume(s);
  REQUIRE(v.is_ok());
  f.sim.run_until(kSecond + 1);
  auto alerts = t->alerts();
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].kind == "pool_space_1");
  CHECK(alerts[0].object == "pool/" + std::to_string(pool_id));
  REQUIRE(f.array->delete_volume(v->id).is_ok());
  f.sim.run_until(2 * kSecond + 1);
  CHECK(t->alerts().empty());
}

TEST_CASE("PerfCounters: volumes by id, ascending; a forgotten volume's counters are gone") {
  PerfCounters p(2);
  p.host_io(5, 1, IoOp::kRead, 4096, 100'000, true);
  p.host_io(2, 2, IoOp::kWrite, 8192, 300'000, true);
  p.host_io(5, 1, IoOp::kRead, 4096, 200'000, true);
  CHECK(p.volume_ids() == std::vector<Id>{2, 5});
  REQUIRE(p.volume_totals(5) != nullptr);
  CHECK(p.volume_totals(5)->read.ios == 2);
  CHECK(p.volume_totals(5)->read.latency_ns_sum == 300'000);
  CHECK(p.volume_totals(2)->write.bytes == 8192);
  CHECK(p.volume_totals(3) == nullptr);      // below the largest id, never seen
  CHECK(p.volume_totals(1000) == nullptr);   // beyond it
  const PerfSample s = p.close_volume(5);
  CHECK(s.read_ios == 2);
  CHECK(s.latency_us_max == doctest::Approx(200.0));
  CHECK(p.close_volume(5).read_ios == 0);    // the interval was cleared
  CHECK(p.close_volume(77).read_ios == 0);   // unknown: an empty sample
  p.forget_volume(5);
  p.forget_volume(77);                       // unknown: nothing happens
  CHECK(p.volume_ids() == std::vector<Id>{2});
  CHECK(p.volume_totals(5) == nullptr);
  CHECK(p.array_totals().read.ios == 2);     // the array's totals keep what the volume did
}
