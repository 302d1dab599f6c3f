// bench_qos: what one QoS decision costs with 1,000 active volumes (docs/qos.md).
//
// A fake array of two resources (controllers), each serving 200,000 4 KiB IOPS one at a time;
// every volume keeps 8 requests outstanding and submits a new one when one completes. Runs:
//   - 1,000 volumes with mixed QoS (a third with a min, a third with a max, some with burst),
//   - 1,000 volumes without QoS,
//   - 10 volumes with mixed QoS,
// and side by side the baseline: the same array and clients with a plain FIFO in place of the
// scheduler (what the I/O costs without QoS decisions). Prints wall ns per decision and the
// scheduler's cost over the baseline. Not a test: no thresholds.
#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>
#include <vector>

#include "qos/cost.h"
#include "qos/scheduler.h"

using namespace afasim;
using sim::kSecond;
using sim::Time;

namespace {

constexpr int kDepth = 8;
constexpr std::int64_t kResourceIops = 200'000;

struct Bench : qos::Dispatcher {
  sim::Simulator sim{1};
  std::unique_ptr<qos::Scheduler> scheduler;
  bool fifo = false;  // baseline: no scheduler, a FIFO per resource
  std::vector<Time> busy_until{0, 0};
  std::vector<std::deque<std::uint64_t>> fifo_queue{2};
  std::vector<bool> fifo_armed{false, false};
  std::vector<qos::VolumeId> volume_of;  // by cookie
  std::vector<int> resource_of;          // by volume
  std::int64_t completed = 0;

  explicit Bench(bool use_fifo) : fifo(use_fifo) {
    scheduler = qos::Scheduler::create(sim, {}, 2, *this).value();
  }

  Time ready_time(int r) override {
    return std::max(sim.now(), busy_until[static_cast<std::size_t>(r)]);
  }

  void dispatch(std::uint64_t cookie, int) override {
    const qos::VolumeId v = volume_of[cookie];
    const auto r = static_cast<std::size_t>(resource_of[static_cast<std::size_t>(v)]);
    busy_until[r] = std::max(busy_until[r], sim.now()) + kSecond / kResourceIops;
    sim.at(busy_until[r], [this, cookie, v] {
      ++completed;
      if (!fifo) scheduler->complete(v);
      submit(v, cookie);  // reuse the cookie: one per outstanding request
    });
  }

  void fifo_pump(int r) {
    auto& q = fifo_queue[static_cast<std::size_t>(r)];
    while (!q.empty() && ready_time(r) <= sim.now()) {
      const std::uint64_t c = q.front();
      q.pop_front();
      dispatch(c, r);
    }
    if (!q.empty() && !fifo_armed[static_cast<std::size_t>(r)]) {
      fifo_armed[static_cast<std::size_t>(r)] = true;
      sim.at(ready_time(r), [this, r] {
        fifo_armed[static_cast<std::size_t>(r)] = false;
        fifo_pump(r);
      });
    }
  }

  void submit(qos::VolumeId v, std::uint64_t cookie) {
    if (fifo) {
      const int r = resource_of[static_cast<std::size_t>(v)];
      fifo_queue[static_cast<std::size_t>(r)].push_back(cookie);
      fifo_pump(r);
    } else {
      (void)scheduler->submit(v, cookie, qos::kCostUnitsPerIo);
    }
  }

  void add_volumes(int count, bool with_qos) {
    resource_of.assign(static_cast<std::size_t>(count) + 1, 0);
    for (int v = 1; v <= count; ++v) {
      qos::Settings s;
      if (with_qos) {
        // Reservations add up to 60 % of a resource; limits sit around the fair share.
        const std::int64_t share = kResourceIops * 2 / count;
        if (v % 3 == 0) s.min_iops = share * 6 / 10;
        if (v % 3 == 1) s.max_iops = share * 3 / 2;
        if (v % 6 == 1) s.burst_iops = share * 3;
      }
      resource_of[static_cast<std::size_t>(v)] = v % 2;
      (void)scheduler->add_volume(v, v % 2, s);
      for (int i = 0; i < kDepth; ++i) {
        volume_of.push_back(v);
        const std::uint64_t cookie = volume_of.size() - 1;
        sim.at(v, [this, v, cookie] { submit(v, cookie); });
      }
    }
  }
};

struct Result {
  double ns_per_io;
  std::int64_t ios;
  std::int64_t wakeups;
};

Result run(int volumes, bool with_qos, bool fifo, Time simulated) {
  Bench b(fifo);
  b.add_volumes(volumes, with_qos);
  const auto t0 = std::chrono::steady_clock::now();
  b.sim.run_until(simulated);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {wall * 1e9 / static_cast<double>(b.completed), b.completed,
          b.scheduler->counters().wakeups};
}

}  // namespace

int main(int argc, char** argv) {
  const Time simulated = (argc > 1 ? std::atoi(argv[1]) : 10) * kSecond;
  std::printf(
      "bench_qos: 2 resources x 200,000 IOPS, every volume 8 requests outstanding, %lld s "
      "simulated\n",
      static_cast<long long>(simulated / kSecond));
  const Result base = run(1000, false, true, simulated);
  const Result r1000 = run(1000, true, false, simulated);
  const Result r1000_none = run(1000, false, false, simulated);
  const Result r10 = run(10, true, false, simulated);
  auto line = [&](const char* what, const Result& r) {
    std::printf(
        "  %-44s %10lld I/Os  %7.1f ns per I/O  (+%6.1f ns per decision over the baseline)\n", what,
        static_cast<long long>(r.ios), r.ns_per_io, r.ns_per_io - base.ns_per_io);
  };
  std::printf("  %-44s %10lld I/Os  %7.1f ns per I/O\n", "baseline: plain FIFO, 1,000 volumes",
              static_cast<long long>(base.ios), base.ns_per_io);
  line("scheduler, 1,000 volumes, mixed min/max/burst", r1000);
  line("scheduler, 1,000 volumes, no QoS settings", r1000_none);
  line("scheduler, 10 volumes, mixed min/max/burst", r10);
  std::printf(
      "  ratio scheduler (1,000 mixed) / baseline   %7.2f x   (%.2f timer wake-ups per decision)\n",
      r1000.ns_per_io / base.ns_per_io,
      static_cast<double>(r1000.wakeups) / static_cast<double>(r1000.ios));
  return 0;
}
