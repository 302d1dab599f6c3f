// Simulation tests of the controllers with real payload (issue 6's acceptance): power cut at
// a random moment under a verifying write workload, controller failover under load, link cut
// with both controllers alive. Each runs over many seeds; AFASIM_SEEDS sets how many (the
// `torture` label runs the full sweeps: 200 power cuts, 100 failovers, 100 link cuts). Each
// also runs with a test-only switch that breaks the guarantee, to show the check sees it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>

#include "sim/buggify.h"
#include "sim/units.h"
#include "tests/controller/raid_sim_harness.h"
#include "tests/controller/write_tracker.h"
#include "tests/seed_count.h"

using namespace afasim;
using namespace afasim::testing;

namespace {

struct PowerCut {
  std::int64_t lost = 0;
  std::int64_t dirty_at_cut = 0;
  std::string invariants, parity;
};

// Writes, cuts the mains at a random moment of a burst, restores them, reads back.
// With `fault_points`, the run before the read-back has datapac's fault points on
// (sim/buggify.h): slow and late SSD ops, media read errors, dropped link frames. (It found
// acknowledged writes lost at seeds 4 and 5: a destage or vault replay whose
// read-modify-write met a read error dropped the block; see docs/faults.md.)
PowerCut power_cut(std::uint64_t seed, bool skip_vault, bool fault_points = false) {
  DataPathOptions o;
  o.controllers.test_skip_vault = skip_vault;
  SimArray a(seed, o);
  std::optional<sim::BuggifyScope> faults;
  if (fault_points)
    faults.emplace(sim::BuggifyOptions{.seed = seed, .activate_probability = 0.5, .fire_probability = 0.05, .off = {}});
  add_volumes(a);
  Tracker t(a);
  sim::Rng rng(seed, "test.power");
  t.fill_then_burst(rng);  // the cut lands in the burst
  PowerCut r;
  r.dirty_at_cut = a.array->data_path().dirty_bytes();
  REQUIRE(a.array->inject_fault({"power_loss"}).is_ok());
  a.sim->run();
  REQUIRE(a.array->inject_fault({"power_restore"}).is_ok());
  a.sim->run();
  REQUIRE(a.array->data_path().online());
  faults.reset();
  r.lost = t.lost_blocks();
  r.invariants = a.invariant_report();
  r.parity = a.array->data_path().check_all_parity();
  return r;
}

}  // namespace

TEST_CASE("power cut at a random moment: every acknowledged write reads back, parity consistent (RAID10, RAID5)") {
  const int seeds = seed_count(20);
  for (int s = 1; s <= seeds; ++s) {
    const auto r = power_cut(static_cast<std::uint64_t>(s), false);
    INFO("replay with AFASIM_SEEDS covering seed " << s << "; dirty at the cut " << r.dirty_at_cut);
    CHECK(r.dirty_at_cut > 0);
    CHECK(r.lost == 0);
    CHECK(r.invariants == "");
    CHECK(r.parity == "");
  }
  MESSAGE(seeds << " power cuts, no acknowledged write lost");
}

TEST_CASE("power cut with the fault points on (slow SSD ops, read errors, dropped link frames): nothing acknowledged lost") {
  const int seeds = seed_count(20, 4);
  for (int s = 1; s <= seeds; ++s) {
    const auto r = power_cut(static_cast<std::uint64_t>(s), false, true);
    INFO("replay with AFASIM_SEEDS covering seed " << s << "; dirty at the cut " << r.dirty_at_cut);
    CHECK(r.lost == 0);
    CHECK(r.invariants == "");
    CHECK(r.parity == "");
  }
}

TEST_CASE("the same power cut with the vault switched off loses acknowledged writes, and the check sees it") {
  const int seeds = seed_count(20, 4);
  std::int64_t total = 0;
  for (int s = 1; s <= seeds; ++s) {
    const auto r = power_cut(static_cast<std::uint64_t>(s), true);
    INFO("seed " << s << ": lost " << r.lost << " blocks, dirty at the cut " << r.dirty_at_cut);
    CHECK(r.lost > 0);
    CHECK(r.parity == "");  // lost, but never torn: the SSDs hold an older, consistent version
    total += r.lost;
  }
  MESSAGE(seeds << " power cuts without a vault lost " << total << " acknowledged blocks");
}

namespace {

struct Failover {
  std::int64_t lost = 0;
  std::int64_t errors = 0;
  sim::Time max_latency = 0;
  sim::Time bound = 0;
  sim::Time resumed = 0, drained = 0;  // after the fault: the first and last parked write done
  int parked = 0;
  // The same writes as the parked ones, each submitted after the one before it completed, on
  // the survivor alone: the sum of their latencies (0 when not measured).
  sim::Time serial_ns = 0;
  sim::Time serial_max_ns = 0;  // the longest of them
  bool failback = false;
  std::string invariants;
};

// Random writes at queue depth 16 on both controllers; one fails mid-burst; writes go on
// through the takeover; it is restored and its volumes fail back; everything reads back.
Failover failover(std::uint64_t seed, bool no_mirror) {
  DataPathOptions o;
  o.controllers.test_no_mirror = no_mirror;
  SimArray a(seed, o);
  add_volumes(a);
  Tracker t(a);
  sim::Rng rng(seed, "test.failover");
  for (int batch = 0; batch < 8; ++batch) {
    t.random_writes(rng, 16);
    a.sim->run();
  }
  t.random_writes(rng, 16);
  a.sim->run_until(a.sim->now() + static_cast<sim::Time>(rng.uniform(200'000)));
  FaultSpec f{"controller_fail"};
  f.controller = 1 + static_cast<Id>(rng.uniform(2));
  REQUIRE(a.array->inject_fault(f).is_ok());
  const sim::Time fault = a.sim->now();
  // Keep writing through the detection and takeover, 16 at a time every 100 ms.
  for (int batch = 0; batch < 15; ++batch) {
    t.random_writes(rng, 16);
    a.sim->run_until(a.sim->now() + 100 * sim::kMillisecond);
  }
  a.sim->run();
  Failover r;
  r.max_latency = t.max_latency;
  r.bound = a.array->data_path().takeover_bound_ns();
  r.resumed = t.parked_first - fault;
  r.drained = t.parked_last - fault;
  r.parked = static_cast<int>(t.parked.size());
  if (!no_mirror) {  // (more writes would overwrite what the no-mirror run must find lost)
    // Over a copy: t.write's completion appends to t.parked if a write is parked again.
    for (const Tracker::Parked p : std::vector<Tracker::Parked>(t.parked)) {
      t.write(p.vi, p.offset, p.len);
      a.sim->run();
      r.serial_ns += t.last_latency;
      r.serial_max_ns = std::max(r.serial_max_ns, t.last_latency);
    }
  }
  f.type = "controller_restore";
  REQUIRE(a.array->inject_fault(f).is_ok());
  a.sim->run();
  r.failback = true;
  for (const auto& v : a.vols)
    r.failback = r.failback && a.array->data_path().owner(v.id) == a.array->volume(v.id)->preferred_controller;
  r.lost = t.lost_blocks();
  r.errors = t.errors;
  r.invariants = a.invariant_report();
  return r;
}

}  // namespace

TEST_CASE("controller failover under load: nothing acknowledged lost, I/O resumes within the takeover time, failback") {
  const int seeds = seed_count(20, 2);
  sim::Time worst = 0;
  for (int s = 1; s <= seeds; ++s) {
    const auto r = failover(static_cast<std::uint64_t>(s), false);
    INFO("seed " << s << ": max latency " << r.max_latency << " ns, bound " << r.bound << " ns; " << r.parked
                  << " parked writes done " << r.resumed << ".." << r.drained
                  << " ns after the fault; the same writes one at a time " << r.serial_ns << " ns");
    CHECK(r.lost == 0);
    CHECK(r.errors == 0);
    // I/O resumes within the takeover bound: the first parked write is done by then, plus its
    // own service (the bound is when the takeover ends: the peer's lease, renewed at most at
    // the fault, lapses and the takeover's work is done; a write still takes its time after).
    CHECK(r.resumed <= r.bound + r.serial_max_ns);
    // Then the survivor, writing through, drains what was parked during the outage (67-97
    // writes of 4-256 KiB, 7-14 MB, in 14-21 ms over seeds 1-100). Which parked write
    // finishes last is not the order they were parked in: their member operations queue at
    // 40 SSDs. The bound comes from the mechanism, not from the drain times seen: resources
    // that serve queued work in arrival order and never idle while work waits finish a batch
    // no later than the same work done one request at a time (the parked writes resubmitted
    // one after another on the survivor: 2.4-3.1x the drain over seeds 1-100;
    // releasing them 1 ms apart fails it in 10 of 10 seeds). A drain that stalls fails it;
    // one that only ran the parked writes one at a time would sit at the bound itself.
    CHECK(r.serial_ns > 0);
    CHECK(r.drained - r.resumed <= r.serial_ns);
    CHECK(r.max_latency <= r.bound + r.serial_ns + 200 * sim::kMicrosecond);  // submitted <= 200 us before the fault
    CHECK(r.max_latency > 300 * sim::kMillisecond);  // there was an outage to measure
    CHECK(r.failback);
    CHECK(r.invariants == "");
    worst = std::max(worst, r.max_latency);
  }
  MESSAGE(seeds << " failovers; worst host I/O latency across a takeover " << sim::to_seconds(worst) << " s");
}

TEST_CASE("failover without the cache mirror (test-only) loses the dead controller's dirty data, and the check sees it") {
  const int seeds = seed_count(20, 4);
  for (int s = 1; s <= seeds; ++s) {
    const auto r = failover(static_cast<std::uint64_t>(s), true);
    INFO("seed " << s);
    CHECK(r.lost > 0);
  }
}

namespace {

struct LinkCut {
  std::int64_t lost = 0, errors = 0;
  std::string invariants;
};

// Both controllers alive, the link cut mid-burst, writes go on, the link comes back.
LinkCut link_cut(std::uint64_t seed, bool no_fencing) {
  DataPathOptions o;
  o.controllers.test_no_fencing = no_fencing;
  SimArray a(seed, o);
  add_volumes(a);
  Tracker t(a);
  sim::Rng rng(seed, "test.link");
  for (int batch = 0; batch < 8; ++batch) {
    t.random_writes(rng, 16);
    a.sim->run();
  }
  t.random_writes(rng, 16);
  a.sim->run_until(a.sim->now() + static_cast<sim::Time>(rng.uniform(200'000)));
  REQUIRE(a.array->inject_fault({"link_cut"}).is_ok());
  for (int batch = 0; batch < 20; ++batch) {
    t.random_writes(rng, 16);
    a.sim->run_until(a.sim->now() + 100 * sim::kMillisecond);
    if (std::string bad = a.array->data_path().check_one_writer(); !bad.empty())
      a.array->invariants().violation(a.sim->now(), "one-writer", bad);
  }
  a.sim->run();
  REQUIRE(a.array->inject_fault({"link_restore"}).is_ok());
  t.random_writes(rng, 16);
  a.sim->run();
  LinkCut r;
  r.lost = t.lost_blocks();
  r.errors = t.errors;
  r.invariants = a.invariant_report();
  return r;
}

}  // namespace

TEST_CASE("link cut with both controllers alive: at most one writer per volume at every moment, data consistent") {
  const int seeds = seed_count(20, 2);
  for (int s = 1; s <= seeds; ++s) {
    const auto r = link_cut(static_cast<std::uint64_t>(s), false);
    INFO("seed " << s);
    CHECK(r.invariants == "");
    CHECK(r.lost == 0);
    CHECK(r.errors == 0);
  }
}

TEST_CASE("link cut without the DataPac reservation (test-only): the one-writer checker sees two writers") {
  const auto r = link_cut(1, true);
  CHECK(r.invariants.find("one-writer") != std::string::npos);
}
