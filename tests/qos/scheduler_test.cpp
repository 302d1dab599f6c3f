// qos::Scheduler against a fake array: each resource is one server that takes an I/O when it
// is idle and serves 4 KiB of cost in a fixed time (the capacity given in IOPS). Clients are
// greedy (keep N requests queued) or open-loop at a rate. Figures asserted come from the
// settings themselves (a max of 10,000 IOPS gives 10,000 I/Os per second) or from the fake
// array's capacity.
#include "qos/scheduler.h"

#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "qos/cost.h"

using namespace afasim;
using qos::Settings;
using sim::kMillisecond;
using sim::kSecond;
using sim::Time;

namespace {

struct FakeArray : qos::Dispatcher {
  struct Server {
    Time busy_until = 0;
    Time service_ns = 0;  // per 4 KiB of cost
    int outstanding = 0;
  };
  struct Io {
    qos::VolumeId volume;
    int resource;
    std::int64_t cost;
  };

  sim::Simulator& sim;
  std::unique_ptr<qos::Scheduler> scheduler;
  std::vector<Server> servers;
  std::map<std::uint64_t, Io> ios;
  std::uint64_t next_cookie = 1;
  // Completions per volume per simulated second.
  std::map<qos::VolumeId, std::map<std::int64_t, std::int64_t>> per_second;
  std::map<qos::VolumeId, std::function<void()>> on_done;     // client reaction to a completion
  std::vector<std::unique_ptr<std::function<void()>>> pumps;  // fio_like clients

  FakeArray(sim::Simulator& s, std::vector<std::int64_t> capacity_iops,
            qos::SchedulerOptions options = {})
      : sim(s) {
    for (auto c : capacity_iops) servers.push_back({0, kSecond / c, 0});
    scheduler =
        qos::Scheduler::create(sim, options, static_cast<int>(servers.size()), *this).value();
  }

  Time ready_time(int resource) override {
    return std::max(sim.now(), servers[static_cast<std::size_t>(resource)].busy_until);
  }
  void dispatch(std::uint64_t cookie, int) override {
    Io io = ios.at(cookie);
    Server& s = servers[static_cast<std::size_t>(io.resource)];
    s.busy_until =
        std::max(s.busy_until, sim.now()) + s.service_ns * io.cost / qos::kCostUnitsPerIo;
    sim.at(s.busy_until, [this, cookie] {
      Io done = ios.at(cookie);
      ios.erase(cookie);
      scheduler->complete(done.volume);
      per_second[done.volume][sim.now() / kSecond]++;
      if (auto it = on_done.find(done.volume); it != on_done.end() && it->second) it->second();
    });
  }

  sim::Status submit(qos::VolumeId v, std::int64_t cost = qos::kCostUnitsPerIo) {
    const std::uint64_t cookie = next_cookie++;
    ios[cookie] = {v, *scheduler->resource_of(v), cost};
    sim::Status st = scheduler->submit(v, cookie, cost);
    if (!st.is_ok()) ios.erase(cookie);
    return st;
  }

  // A client that keeps `depth` requests outstanding (queued or in service), from `start`.
  void greedy(qos::VolumeId v, int depth, Time start = 0,
              std::int64_t cost = qos::kCostUnitsPerIo) {
    on_done[v] = [this, v, cost] { (void)submit(v, cost); };
    sim.at(start, [this, v, depth, cost] {
      for (int i = 0; i < depth; ++i) (void)submit(v, cost);
    });
  }

  // An open-loop client submitting at `iops` from `start` to `stop`.
  void paced(qos::VolumeId v, std::int64_t iops, Time start, Time stop) {
    const Time gap = kSecond / iops;
    for (Time t = start; t < stop; t += gap) sim.at(t, [this, v] { (void)submit(v); });
  }

  // fio's rate_iops with an iodepth: at most `depth` in flight, one issued every 1/iops at the
  // earliest (workload/fio_runner.cpp does the same).
  void fio_like(qos::VolumeId v, std::int64_t iops, int depth, Time start) {
    auto state = std::make_shared<std::pair<int, Time>>(0, start);  // in flight, next allowed
    const Time gap = kSecond / iops;
    pumps.push_back(std::make_unique<std::function<void()>>());
    std::function<void()>* pump = pumps.back().get();
    *pump = [this, v, depth, gap, state] {
      while (state->first < depth) {
        const Time t = std::max(state->second, sim.now());
        state->second = t + gap;
        ++state->first;
        sim.at(t, [this, v, state] {
          if (!submit(v).is_ok()) --state->first;
        });
      }
    };
    on_done[v] = [state, pump] {
      --state->first;
      (*pump)();
    };
    sim.at(start, [pump] { (*pump)(); });
  }

  std::int64_t in_second(qos::VolumeId v, std::int64_t s) { return per_second[v][s]; }
};

Settings S(std::optional<std::int64_t> min, std::optional<std::int64_t> max,
           std::optional<std::int64_t> burst = std::nullopt) {
  return Settings{min, max, burst};
}

}  // namespace

TEST_CASE("cost curve: 4 KiB is one I/O, 8 KiB 1.25, 64 KiB 4.75, 1 MiB 64.75 (docs/qos.md)") {
  CHECK(qos::io_cost_units(512) == 32);
  CHECK(qos::io_cost_units(4096) == 32);
  CHECK(qos::io_cost_units(8192) == 40);
  CHECK(qos::io_cost_units(16384) == 56);
  CHECK(qos::io_cost_units(65536) == 152);
  CHECK(qos::io_cost_units(1 << 20) == 2072);
  CHECK(qos::io_cost_units(4097) == 33);  // rounded up to 512
}

TEST_CASE("settings are validated with the array's rules") {
  CHECK(qos::validate(S(100, 1000, 2000)).is_ok());
  CHECK(qos::validate(S(std::nullopt, std::nullopt)).is_ok());
  CHECK(qos::validate(S(0, 0)).is_ok());
  CHECK(qos::validate(S(2000, 1000)).code() == sim::Code::kInvalidArgument);
  CHECK(qos::validate(S(std::nullopt, std::nullopt, 100)).code() == sim::Code::kInvalidArgument);
  CHECK(qos::validate(S(std::nullopt, 1000, 999)).code() == sim::Code::kInvalidArgument);
  CHECK(qos::validate(S(-1, std::nullopt)).code() == sim::Code::kInvalidArgument);
  CHECK(qos::validate(S(std::nullopt, qos::kMaxSettingIops + 1)).code() ==
        sim::Code::kInvalidArgument);
}

TEST_CASE("options and volumes are checked") {
  sim::Simulator sim(1);
  FakeArray a(sim, {100'000});
  qos::SchedulerOptions bad;
  bad.queue_depth_max = 0;
  CHECK(qos::Scheduler::create(sim, bad, 1, a).status().code() == sim::Code::kInvalidArgument);
  CHECK(qos::Scheduler::create(sim, {}, 0, a).status().code() == sim::Code::kInvalidArgument);
  CHECK(a.scheduler->add_volume(1, 0, {}).is_ok());
  CHECK(a.scheduler->add_volume(1, 0, {}).code() == sim::Code::kConflict);
  CHECK(a.scheduler->add_volume(2, 1, {}).code() == sim::Code::kInvalidArgument);
  CHECK(a.scheduler->add_volume(0, 0, {}).code() == sim::Code::kInvalidArgument);
  CHECK(a.scheduler->update_volume(9, {}).code() == sim::Code::kNotFound);
  CHECK(a.scheduler->submit(9, 1, 32).code() == sim::Code::kNotFound);
  CHECK(a.scheduler->update_volume(1, S(5, 4)).code() == sim::Code::kInvalidArgument);
}

TEST_CASE("a max of 10,000 IOPS gives 10,000 I/Os in every second under unbounded demand") {
  sim::Simulator sim(1);
  FakeArray a(sim, {200'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 10'000)).is_ok());
  a.greedy(1, 64);
  sim.run_until(10 * kSecond);
  for (int s = 0; s < 10; ++s) {
    INFO("second " << s);
    CHECK(a.in_second(1, s) >= 9'999);
    CHECK(a.in_second(1, s) <= 10'001);
  }
  // Held back by its limit nearly all the time: it always has a request waiting for its tag.
  const auto st = a.scheduler->status(1).value();
  CHECK(st.throttled_ns > 9 * kSecond);
  CHECK(st.current_iops >= 9'999);
  CHECK(st.burst_credit_ns == 0);
}

TEST_CASE("the limit counts cost: 64 KiB I/Os under a max of 9,500 run at 2,000 per second") {
  sim::Simulator sim(1);
  FakeArray a(sim, {200'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 9'500)).is_ok());
  a.greedy(1, 16, 0, qos::io_cost_units(65536));  // 4.75 I/Os each: 9,500 / 4.75 = 2,000
  sim.run_until(5 * kSecond);
  for (int s = 1; s < 5; ++s) CHECK(a.in_second(1, s) == doctest::Approx(2'000).epsilon(0.001));
}

TEST_CASE("a reservation holds against eight greedy neighbours; without it the victim starves") {
  for (bool with_min : {true, false}) {
    CAPTURE(with_min);
    sim::Simulator sim(1);
    FakeArray a(sim, {100'000});  // the resource does 100,000 IOPS
    REQUIRE(
        a.scheduler
            ->add_volume(1, 0, with_min ? S(20'000, std::nullopt) : S(std::nullopt, std::nullopt))
            .is_ok());
    a.fio_like(1, 30'000, 32, 0);  // the victim wants 30,000, 32 I/Os in flight at most
    for (int v = 2; v <= 9; ++v) {
      REQUIRE(a.scheduler->add_volume(v, 0, {}).is_ok());
      a.greedy(v, 256);
    }
    sim.run_until(6 * kSecond);
    std::int64_t total = 0;
    for (int s = 1; s < 6; ++s) {
      INFO("second " << s);
      const std::int64_t victim = a.in_second(1, s);
      std::int64_t all = victim;
      for (int v = 2; v <= 9; ++v) all += a.in_second(v, s);
      // Work-conserving: the resource is busy all the time.
      CHECK(all >= 99'990);
      if (with_min) {
        CHECK(victim >= 19'990);
      } else {
        CHECK(victim < 20'000);
      }
      total += victim;
    }
    if (with_min) {
      const auto st = a.scheduler->status(1).value();
      CHECK(st.reservation_ios > 90'000);
    } else {
      // First come, first served: the victim's share follows its share of the requests
      // waiting, 32 of 2,080: about 1,500 IOPS.
      CHECK(total < 5 * 5'000);
    }
  }
}

TEST_CASE("reservations that cannot all be met leave the spare phase its floor: no volume starves") {
  // A review (2026-12-06): after a failover put 150,000 IOPS of reservations on a controller
  // that does 142,000, the volumes without one got 0 IOPS for 8 s (strict priority: every
  // reserved head was always due). The floor is 100 − reservable_percent = 10 % of the
  // dispatched cost (SchedulerOptions::spare_floor_percent); with 0, the old rule. It goes to
  // the volume without a reservation however shallow its queue and however large the reserved
  // I/Os (review 29: the oldest head of any volume took it, 0.5 % at depth 1; a bound smaller
  // than one 32 MiB I/O's share cut it to 0.8 %).
  struct Case {
    int floor;
    int unreserved_depth;
    std::int64_t reserved_cost;
  };
  for (const Case c : {Case{10, 64, qos::kCostUnitsPerIo}, Case{10, 1, qos::kCostUnitsPerIo},
                       Case{10, 1, qos::io_cost_units(32 << 20)}, Case{0, 64, qos::kCostUnitsPerIo}}) {
    CAPTURE(c.floor);
    CAPTURE(c.unreserved_depth);
    CAPTURE(c.reserved_cost);
    sim::Simulator sim(1);
    qos::SchedulerOptions o;
    o.spare_floor_percent = c.floor;
    FakeArray a(sim, {100'000}, o);  // 100,000 4 KiB I/Os' worth of cost a second
    for (int v = 1; v <= 3; ++v) {
      REQUIRE(a.scheduler->add_volume(v, 0, S(50'000, std::nullopt)).is_ok());  // 150,000 reserved
      a.greedy(v, 4, 0, c.reserved_cost);
    }
    REQUIRE(a.scheduler->add_volume(4, 0, {}).is_ok());  // no reservation, 4 KiB I/Os
    a.greedy(4, c.unreserved_depth);
    sim.run_until(4 * kSecond);
    for (int s = 2; s < 4; ++s) {
      INFO("second " << s);
      if (c.floor == 10) {
        // 10 % of the resource's 100,000 I/Os' worth a second.
        CHECK(a.in_second(4, s) >= 9'800);
        CHECK(a.in_second(4, s) <= 10'200);
      } else {
        CHECK(a.in_second(4, s) == 0);
      }
    }
  }
}

TEST_CASE("reservations whose shares exceed the resource are held in proportion to min_iops") {
  // A review (2026-12-06): reservations that cannot all be met were served in turn, each
  // volume about alike whatever its min_iops. Admission control's shares say by how much they
  // exceed what the resource can guarantee; each is held at min × 10^6 / the sum of the
  // shares. The resource does 100,000 a second and guarantees 90,000 (the shares below);
  // 200,000 are reserved, so each is held at 90 / 200 of its min: 54,000, 27,000 and 9,000.
  for (const bool with_shares : {true, false}) {
    CAPTURE(with_shares);
    sim::Simulator sim(1);
    FakeArray a(sim, {100'000});
    const std::int64_t mins[] = {120'000, 60'000, 20'000};
    std::int64_t sum = 0;
    for (int v = 1; v <= 3; ++v) {
      const std::int64_t min = mins[v - 1];
      const std::int64_t share = (min * 1'000'000 + 89'999) / 90'000;  // qos::share_ppm's rounding
      sum += share;
      REQUIRE(a.scheduler->add_volume(v, 0, S(min, std::nullopt), with_shares ? share : 0).is_ok());
      a.greedy(v, 4);
    }
    REQUIRE(a.scheduler->add_volume(4, 0, {}).is_ok());
    a.greedy(4, 4);
    sim.run_until(4 * kSecond);
    CHECK(a.scheduler->reserved_share_ppm(0) == (with_shares ? sum : 0));
    for (int v = 1; v <= 3; ++v)
      CHECK(a.scheduler->status(v)->min_iops_held == (with_shares ? mins[v - 1] * 1'000'000 / sum : mins[v - 1]));
    CHECK_FALSE(a.scheduler->status(4)->min_iops_held.has_value());
    for (int s = 2; s < 4; ++s) {
      INFO("second " << s);
      const std::int64_t v1 = a.in_second(1, s), v2 = a.in_second(2, s), v3 = a.in_second(3, s);
      INFO(v1 << " " << v2 << " " << v3 << " " << a.in_second(4, s));
      if (with_shares) {
        // Each at least its held reservation, less 1 %.
        CHECK(v1 >= 53'460);
        CHECK(v2 >= 26'730);
        CHECK(v3 >= 8'910);
      } else {
        // Every min at face value: 200,000 due at every pick, served in turn (the catch-up
        // bound): 35,000, 35,000 and 20,000, the largest far below 54,000.
        CHECK(v1 < 40'000);
      }
      CHECK(a.in_second(4, s) >= 1'000);  // the floor keeps the volume without one going
    }
  }
}

TEST_CASE("a volume's share follows it to its new resource, and a share out of range is refused") {
  sim::Simulator sim(1);
  FakeArray a(sim, {100'000, 100'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(10'000, std::nullopt), 400'000).is_ok());
  REQUIRE(a.scheduler->add_volume(2, 1, S(10'000, std::nullopt), 700'000).is_ok());
  REQUIRE(a.scheduler->add_volume(3, 1, {}, 0).is_ok());
  CHECK(a.scheduler->reserved_share_ppm(0) == 400'000);
  CHECK(a.scheduler->reserved_share_ppm(1) == 700'000);
  REQUIRE(a.scheduler->move_volume(1, 1).is_ok());  // a failover: 1,100,000 on resource 1
  CHECK(a.scheduler->reserved_share_ppm(0) == 0);
  CHECK(a.scheduler->reserved_share_ppm(1) == 1'100'000);
  CHECK(a.scheduler->status(2)->min_iops_held == std::int64_t{10'000} * 1'000'000 / 1'100'000);
  REQUIRE(a.scheduler->update_volume(2, S(10'000, std::nullopt), 600'000).is_ok());
  CHECK(a.scheduler->reserved_share_ppm(1) == 1'000'000);
  CHECK(a.scheduler->status(2)->min_iops_held == 10'000);  // exactly whole: held in full
  REQUIRE(a.scheduler->update_volume(2, {}, 0).is_ok());  // the min removed takes its share
  CHECK(a.scheduler->reserved_share_ppm(1) == 400'000);
  (void)a.scheduler->remove_volume(1);
  CHECK(a.scheduler->reserved_share_ppm(1) == 0);
  CHECK(a.scheduler->add_volume(4, 0, S(1, std::nullopt), -1).message() ==
        "share_ppm must be between 0 and 1000000000, got -1");
  CHECK_FALSE(a.scheduler->add_volume(4, 0, S(1, std::nullopt), qos::kShareMaxPpm + 1).is_ok());
  CHECK_FALSE(a.scheduler->update_volume(3, {}, -5).is_ok());
  CHECK_FALSE(a.scheduler->has_volume(4));
}

TEST_CASE("submit with the owner's resource moves the volume there first, as move_volume does") {
  // The data path passes the owning controller's resource with each request instead of
  // looking the volume's resource up and moving it itself.
  sim::Simulator sim(1);
  FakeArray a(sim, {100'000, 100'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(10'000, std::nullopt), 400'000).is_ok());
  a.ios[1] = {1, 1, qos::kCostUnitsPerIo};  // served where the request says
  REQUIRE(a.scheduler->submit(1, 1, qos::kCostUnitsPerIo, 1).is_ok());
  CHECK(a.scheduler->resource_of(1) == 1);
  CHECK(a.scheduler->reserved_share_ppm(0) == 0);  // the share went with it
  CHECK(a.scheduler->reserved_share_ppm(1) == 400'000);
  a.ios[2] = {1, 1, qos::kCostUnitsPerIo};
  REQUIRE(a.scheduler->submit(1, 2, qos::kCostUnitsPerIo, qos::Scheduler::kSameResource).is_ok());
  CHECK(a.scheduler->resource_of(1) == 1);
  // An unknown volume: refused, nothing queued (volume 1's second request waits for the first).
  CHECK(a.scheduler->queued_total() == 1);
  CHECK(a.scheduler->submit(2, 3, qos::kCostUnitsPerIo, 0).code() == sim::Code::kNotFound);
  CHECK(a.scheduler->queued_total() == 1);
  CHECK(a.scheduler->resource_of(1) == 1);
  sim.run_until(kSecond);
  CHECK(a.scheduler->status(1)->completed_ios == 2);
}

TEST_CASE("SchedulerOptions::spare_floor_percent outside 0..99 is refused") {
  sim::Simulator sim(1);
  struct Never : qos::Dispatcher {
    Time ready_time(int) override { return sim::kTimeMax; }
    void dispatch(std::uint64_t, int) override {}
  } never;
  qos::SchedulerOptions o;
  o.spare_floor_percent = 100;
  CHECK(qos::Scheduler::create(sim, o, 1, never).status().message() ==
        "spare_floor_percent must be between 0 and 99, got 100");
  o.spare_floor_percent = -1;
  CHECK_FALSE(qos::Scheduler::create(sim, o, 1, never).is_ok());
}

TEST_CASE("work conservation: reservations without limits leave no capacity idle") {
  sim::Simulator sim(1);
  FakeArray a(sim, {100'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(30'000, std::nullopt)).is_ok());
  REQUIRE(a.scheduler->add_volume(2, 0, S(30'000, std::nullopt)).is_ok());
  REQUIRE(a.scheduler->add_volume(3, 0, S(std::nullopt, std::nullopt)).is_ok());
  a.greedy(1, 8);
  a.greedy(2, 8);
  a.greedy(3, 8);
  sim.run_until(3 * kSecond);
  for (int s = 1; s < 3; ++s) {
    const std::int64_t all = a.in_second(1, s) + a.in_second(2, s) + a.in_second(3, s);
    CHECK(all >= 99'990);
    CHECK(a.in_second(1, s) >= 30'000 - 10);
    CHECK(a.in_second(2, s) >= 30'000 - 10);
  }
}

TEST_CASE("limits cap spare capacity: a limited volume does not take more than its max") {
  sim::Simulator sim(1);
  FakeArray a(sim, {100'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(10'000, 15'000)).is_ok());
  REQUIRE(a.scheduler->add_volume(2, 0, S(std::nullopt, 40'000)).is_ok());
  a.greedy(1, 64);
  a.greedy(2, 64);
  sim.run_until(3 * kSecond);
  for (int s = 1; s < 3; ++s) {
    CHECK(a.in_second(1, s) == doctest::Approx(15'000).epsilon(0.001));
    CHECK(a.in_second(2, s) == doctest::Approx(40'000).epsilon(0.001));
  }
}

TEST_CASE("burst: idle 10 s earns 10 s of credit; then 20,000 IOPS for 10 s, then 10,000") {
  sim::Simulator sim(1);
  FakeArray a(sim, {200'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 10'000, 20'000)).is_ok());
  sim.run_until(10 * kSecond);
  CHECK(a.scheduler->status(1)->burst_credit_ns == 10 * kSecond);
  a.greedy(1, 64, 10 * kSecond);
  sim.run_until(30 * kSecond);
  for (int s = 10; s < 20; ++s) {
    INFO("second " << s);
    CHECK(a.in_second(1, s) == doctest::Approx(20'000).epsilon(0.001));
  }
  for (int s = 21; s < 30; ++s) {
    INFO("second " << s);
    CHECK(a.in_second(1, s) == doctest::Approx(10'000).epsilon(0.001));
  }
  const auto st = a.scheduler->status(1).value();
  CHECK(st.burst_ios == doctest::Approx(100'000).epsilon(0.001));  // 10 s × (20,000 − 10,000)
  CHECK(st.burst_credit_ns < 10 * kMillisecond);
}

TEST_CASE("burst credit is capped at burst_credit_max (60 s by default, configurable)") {
  for (Time cap : {60 * kSecond, 5 * kSecond}) {
    sim::Simulator sim(1);
    qos::SchedulerOptions options;
    options.burst_credit_max_ns = cap;
    FakeArray a(sim, {200'000}, options);
    REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 1'000, 3'000)).is_ok());
    sim.run_until(100 * kSecond);
    CHECK(a.scheduler->status(1)->burst_credit_ns == cap);
  }
}

TEST_CASE("burst credit accrues for the unused share of max: half of max for 10 s earns 5 s") {
  sim::Simulator sim(1);
  FakeArray a(sim, {200'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 10'000, 20'000)).is_ok());
  a.paced(1, 5'000, 0, 10 * kSecond);
  sim.run_until(10 * kSecond);
  CHECK(sim::to_seconds(a.scheduler->status(1)->burst_credit_ns) ==
        doctest::Approx(5.0).epsilon(0.01));
  // Running at its max earns nothing.
  sim::Simulator sim2(1);
  FakeArray b(sim2, {200'000});
  REQUIRE(b.scheduler->add_volume(1, 0, S(std::nullopt, 10'000, 20'000)).is_ok());
  b.paced(1, 10'000, 0, 10 * kSecond);
  sim2.run_until(10 * kSecond - 1);
  CHECK(b.scheduler->status(1)->burst_credit_ns < kMillisecond);
}

TEST_CASE("a settings change takes effect at once, in both directions") {
  sim::Simulator sim(1);
  FakeArray a(sim, {200'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 10'000)).is_ok());
  a.greedy(1, 64);
  sim.at(3 * kSecond,
         [&] { REQUIRE(a.scheduler->update_volume(1, S(std::nullopt, 5'000)).is_ok()); });
  sim.at(6 * kSecond, [&] { REQUIRE(a.scheduler->update_volume(1, S(std::nullopt, 1)).is_ok()); });
  sim.at(7 * kSecond,
         [&] { REQUIRE(a.scheduler->update_volume(1, S(std::nullopt, 20'000)).is_ok()); });
  sim.at(8 * kSecond,
         [&] { REQUIRE(a.scheduler->update_volume(1, S(std::nullopt, std::nullopt)).is_ok()); });
  sim.run_until(9 * kSecond);
  CHECK(a.in_second(1, 2) == doctest::Approx(10'000).epsilon(0.001));
  CHECK(a.in_second(1, 3) == doctest::Approx(5'000).epsilon(0.001));
  CHECK(a.in_second(1, 6) <= 2);
  // From 1 IOPS to 20,000: no waiting out the old one-second interval.
  CHECK(a.in_second(1, 7) == doctest::Approx(20'000).epsilon(0.001));
  // No limit: the array's 200,000.
  CHECK(a.in_second(1, 8) == doctest::Approx(200'000).epsilon(0.001));
}

TEST_CASE("a limit set on a volume that had none holds at once (no fast path left open)") {
  sim::Simulator sim(1);
  FakeArray a(sim, {200'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, std::nullopt)).is_ok());
  a.greedy(1, 1);  // one at a time: each finds the volume's queue empty and the array free
  sim.at(1 * kSecond,
         [&] { REQUIRE(a.scheduler->update_volume(1, S(std::nullopt, 10'000)).is_ok()); });
  sim.run_until(3 * kSecond);
  CHECK(a.in_second(1, 0) == doctest::Approx(200'000).epsilon(0.001));
  CHECK(a.in_second(1, 2) == doctest::Approx(10'000).epsilon(0.001));
}

TEST_CASE("max 0 holds every I/O until the setting changes") {
  sim::Simulator sim(1);
  FakeArray a(sim, {100'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 0)).is_ok());
  for (int i = 0; i < 10; ++i) REQUIRE(a.submit(1).is_ok());
  sim.run_until(2 * kSecond);
  CHECK(a.per_second[1].empty());
  CHECK(a.scheduler->status(1)->queued_ios == 10);
  CHECK(a.scheduler->status(1)->throttled_ns == 2 * kSecond);
  REQUIRE(a.scheduler->update_volume(1, S(std::nullopt, 1'000)).is_ok());
  sim.run_until(3 * kSecond);
  CHECK(a.in_second(1, 2) == 10);
}

TEST_CASE("a full queue refuses the request with kUnavailable and keeps the others") {
  sim::Simulator sim(1);
  qos::SchedulerOptions options;
  options.queue_depth_max = 4;
  FakeArray a(sim, {100'000}, options);
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 0)).is_ok());
  for (int i = 0; i < 4; ++i) REQUIRE(a.submit(1).is_ok());
  const sim::Status st = a.submit(1);
  CHECK(st.code() == sim::Code::kUnavailable);
  CHECK(st.message().find("full") != std::string::npos);
  CHECK(a.scheduler->counters().refused_queue_full == 1);
  CHECK(a.scheduler->status(1)->queued_ios == 4);
}

TEST_CASE("removing a volume hands back its queued requests, oldest first") {
  sim::Simulator sim(1);
  FakeArray a(sim, {100'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 0)).is_ok());
  for (int i = 0; i < 3; ++i) REQUIRE(a.submit(1).is_ok());
  const auto cookies = a.scheduler->remove_volume(1);
  CHECK(cookies == std::vector<std::uint64_t>{1, 2, 3});
  CHECK_FALSE(a.scheduler->has_volume(1));
  CHECK(a.scheduler->queued_total() == 0);
  a.scheduler->complete(1);  // ignored
  sim.run_until(kSecond);
}

TEST_CASE("resources are independent; moving a volume moves its queue") {
  sim::Simulator sim(1);
  FakeArray a(sim, {50'000, 50'000});
  REQUIRE(a.scheduler->add_volume(1, 0, {}).is_ok());
  REQUIRE(a.scheduler->add_volume(2, 0, {}).is_ok());
  REQUIRE(a.scheduler->add_volume(3, 1, {}).is_ok());
  a.greedy(1, 32);
  a.greedy(2, 32);
  a.greedy(3, 32);
  sim.at(2 * kSecond, [&] { REQUIRE(a.scheduler->move_volume(2, 1).is_ok()); });
  sim.run_until(4 * kSecond);
  CHECK(a.in_second(3, 1) == doctest::Approx(50'000).epsilon(0.001));
  CHECK(a.in_second(1, 1) + a.in_second(2, 1) == doctest::Approx(50'000).epsilon(0.001));
  CHECK(a.in_second(1, 3) == doctest::Approx(50'000).epsilon(0.001));
  CHECK(a.in_second(2, 3) + a.in_second(3, 3) == doctest::Approx(50'000).epsilon(0.001));
}

TEST_CASE("current_iops is the last whole second's completions") {
  sim::Simulator sim(1);
  FakeArray a(sim, {100'000});
  REQUIRE(a.scheduler->add_volume(1, 0, S(std::nullopt, 2'500)).is_ok());
  a.greedy(1, 8);
  sim.run_until(3 * kSecond + kSecond / 2);
  CHECK(a.scheduler->status(1)->current_iops == doctest::Approx(2'500).epsilon(0.001));
  a.on_done[1] = nullptr;  // stop
  sim.run_until(6 * kSecond);
  CHECK(a.scheduler->status(1)->current_iops == 0);
}

TEST_CASE("same inputs, same decisions") {
  auto run = [] {
    sim::Simulator sim(7);
    FakeArray a(sim, {80'000});
    std::vector<std::int64_t> out;
    for (int v = 1; v <= 6; ++v) {
      REQUIRE(a.scheduler
                  ->add_volume(v, 0,
                               S(v % 2 ? std::optional<std::int64_t>(5'000) : std::nullopt,
                                 v % 3 ? std::optional<std::int64_t>(20'000) : std::nullopt,
                                 v == 1 ? std::optional<std::int64_t>(30'000) : std::nullopt))
                  .is_ok());
      a.greedy(v, 4 * v, v * kMillisecond);
    }
    sim.run_until(2 * kSecond);
    for (int v = 1; v <= 6; ++v) out.push_back(a.scheduler->status(v)->completed_ios);
    out.push_back(a.scheduler->counters().decisions);
    return out;
  };
  CHECK(run() == run());
}

TEST_CASE("a volume without settings goes at once only when nothing else is due: it does not overtake a limit that came due") {
  // Scheduler::submit dispatches a request of a volume with neither min nor max at once when
  // its resource has nothing ready or due; a limited volume whose L tag has come is due, and
  // its older request goes first (the spare phase serves the oldest arrival first).
  struct Recorder : qos::Dispatcher {
    std::vector<std::uint64_t> order;
    sim::Simulator* sim = nullptr;
    bool open = true;
    Time ready_time(int) override { return open ? sim->now() : sim::kTimeMax; }
    void dispatch(std::uint64_t cookie, int) override { order.push_back(cookie); }
  };
  sim::Simulator sim(1);
  Recorder rec;
  rec.sim = &sim;
  auto scheduler = qos::Scheduler::create(sim, {}, 1, rec).value();
  REQUIRE(scheduler->add_volume(1, 0, S(std::nullopt, 1'000, std::nullopt)).is_ok());  // max 1,000 IOPS
  REQUIRE(scheduler->add_volume(2, 0, Settings{}).is_ok());                               // no settings
  // Scheduled before the scheduler's wake-up for volume 1's limit (same time, earlier event).
  sim.at(kMillisecond, [&] { REQUIRE(scheduler->submit(2, 30, qos::kCostUnitsPerIo).is_ok()); });
  REQUIRE(scheduler->submit(1, 10, qos::kCostUnitsPerIo).is_ok());  // within max: at once
  REQUIRE(scheduler->submit(1, 20, qos::kCostUnitsPerIo).is_ok());  // held until 1 ms
  CHECK(rec.order == std::vector<std::uint64_t>{10});
  sim.run_until(2 * kMillisecond);
  CHECK(rec.order == std::vector<std::uint64_t>{10, 20, 30});
  // Nothing waiting: the unregulated volume's request is dispatched before submit returns.
  REQUIRE(scheduler->submit(2, 40, qos::kCostUnitsPerIo).is_ok());
  CHECK(rec.order.back() == 40);
  // A request that waits in the ready heap (the array was full, and room came back without a
  // kick yet) also goes before a later one of another volume without settings.
  REQUIRE(scheduler->add_volume(3, 0, Settings{}).is_ok());
  rec.open = false;
  REQUIRE(scheduler->submit(2, 50, qos::kCostUnitsPerIo).is_ok());
  CHECK(rec.order.back() == 40);
  rec.open = true;
  REQUIRE(scheduler->submit(3, 60, qos::kCostUnitsPerIo).is_ok());
  CHECK(rec.order == std::vector<std::uint64_t>{10, 20, 30, 40, 50, 60});
  CHECK(scheduler->counters().decisions == 6);
  CHECK(scheduler->status(2)->dispatched_ios == 3);
}

TEST_CASE("a reservation holds when the array takes work in batches with pauses longer than its interval") {
  // The Array's gate (docs/qos.md "Knowing what the array can do now") opens when the cores'
  // backlog has fallen and hands over a batch: here every 100 µs, 10 I/Os. A volume reserving
  // 50,000 IOPS (one due every 20 µs) with 8 requests queued beside one with 1,000 queued (older,
  // so the spare phase, oldest first, serves it) must get its 50,000: 5 per batch. Counting
  // each tag from when its request became the head lost every interval of a pause (one per
  // batch: 10,000 IOPS here; 47,300 of 50,000 in the array beside a busy neighbour).
  struct Batches : qos::Dispatcher {
    sim::Simulator* sim = nullptr;
    qos::Scheduler* scheduler = nullptr;
    Time window = -1;  // the 100 µs window whose batch is being handed over
    int taken = 0;
    std::map<std::uint64_t, qos::VolumeId> volume_of;
    std::map<qos::VolumeId, std::int64_t> dispatched;
    std::vector<std::uint64_t> resubmit;  // dispatched cookies: their clients send another
    Time ready_time(int) override {
      const Time now = sim->now();
      const Time start = now / (100 * sim::kMicrosecond) * (100 * sim::kMicrosecond);
      if (start != window) return now;
      return taken < 10 ? now : start + 100 * sim::kMicrosecond;
    }
    void dispatch(std::uint64_t cookie, int) override {
      const Time now = sim->now();
      const Time start = now / (100 * sim::kMicrosecond) * (100 * sim::kMicrosecond);
      if (start != window) window = start, taken = 0;
      ++taken;
      ++dispatched[volume_of.at(cookie)];
      resubmit.push_back(cookie);
    }
  };
  sim::Simulator sim(1);
  Batches array;
  array.sim = &sim;
  auto scheduler = qos::Scheduler::create(sim, {}, 1, array).value();
  array.scheduler = scheduler.get();
  REQUIRE(scheduler->add_volume(1, 0, S(50'000, std::nullopt)).is_ok());
  REQUIRE(scheduler->add_volume(2, 0, Settings{}).is_ok());
  std::uint64_t next = 1;
  int refused = 0;
  auto send = [&](qos::VolumeId v) {
    array.volume_of[next] = v;
    if (!scheduler->submit(v, next++, qos::kCostUnitsPerIo).is_ok()) ++refused;
  };
  for (int i = 0; i < 1'000; ++i) send(2);  // the neighbour's backlog first: its requests are older
  for (int i = 0; i < 8; ++i) send(1);
  // Each client sends another request when one of its is dispatched (a closed loop whose
  // array answers at once), at the next microsecond.
  std::function<void()> loop = [&] {
    std::vector<std::uint64_t> done;
    done.swap(array.resubmit);
    for (std::uint64_t c : done) {
      send(array.volume_of.at(c));
      scheduler->complete(array.volume_of.at(c));
    }
    if (sim.now() < kSecond) sim.at(sim.now() + sim::kMicrosecond, loop);
  };
  sim.at(0, loop);
  sim.run_until(kSecond);
  INFO("reserved " << array.dispatched[1] << ", neighbour " << array.dispatched[2]);
  CHECK(refused == 0);
  CHECK(array.dispatched[1] + array.dispatched[2] >= 99'000);  // 10 per 100 µs: 100,000 per second
  CHECK(array.dispatched[1] >= 49'500);                          // the reservation, within 1 %
  CHECK(array.dispatched[1] <= 50'500);                          // and no more: the rest is the neighbour's
}

TEST_CASE("a volume starved for long catches up at most reservation_catch_up_ns of its reservation") {
  // The array takes nothing for 50 ms, then everything. A volume reserving 1,000 IOPS (one due
  // every ms) with 100 requests queued is owed 50 of them; with the default 1 ms of catch-up it
  // gets the head filed before the pause and two more ahead of the neighbour's older requests,
  // not all 50 (which would starve every other volume for as long after a takeover's stall).
  struct Gate : qos::Dispatcher {
    sim::Simulator* sim = nullptr;
    bool open = false;
    std::vector<std::uint64_t> order;
    Time ready_time(int) override { return open ? sim->now() : sim::kTimeMax; }
    void dispatch(std::uint64_t cookie, int) override { order.push_back(cookie); }
  };
  sim::Simulator sim(1);
  Gate gate;
  gate.sim = &sim;
  auto scheduler = qos::Scheduler::create(sim, {}, 1, gate).value();
  REQUIRE(scheduler->add_volume(1, 0, S(1'000, std::nullopt)).is_ok());
  REQUIRE(scheduler->add_volume(2, 0, Settings{}).is_ok());
  for (std::uint64_t c = 1; c <= 100; ++c) REQUIRE(scheduler->submit(2, 1'000 + c, qos::kCostUnitsPerIo).is_ok());
  for (std::uint64_t c = 1; c <= 100; ++c) REQUIRE(scheduler->submit(1, c, qos::kCostUnitsPerIo).is_ok());
  sim.run_until(50 * kMillisecond);
  gate.open = true;
  scheduler->kick(0);
  REQUIRE(gate.order.size() == 200);
  const auto first_neighbour = std::find_if(gate.order.begin(), gate.order.end(), [](std::uint64_t c) { return c > 1'000; });
  CHECK(first_neighbour - gate.order.begin() == 3);  // R tags 0, 49 ms and 50 ms are due at 50 ms
}

TEST_CASE("SchedulerOptions::reservation_catch_up_ns outside 0..1 s is refused") {
  sim::Simulator sim(1);
  struct Never : qos::Dispatcher {
    Time ready_time(int) override { return sim::kTimeMax; }
    void dispatch(std::uint64_t, int) override {}
  } never;
  for (Time bad : {Time{-1}, kSecond + 1}) {
    qos::SchedulerOptions o;
    o.reservation_catch_up_ns = bad;
    auto s = qos::Scheduler::create(sim, o, 1, never);
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().message() == "reservation_catch_up_ns must be between 0 and one second, got " + std::to_string(bad));
  }
  qos::SchedulerOptions zero;
  zero.reservation_catch_up_ns = 0;
  CHECK(qos::Scheduler::create(sim, zero, 1, never).is_ok());
}
