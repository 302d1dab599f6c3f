// bench_ssd: how many SSD commands the model schedules per wall-clock second.
//
// The array's target is 2 million simulated host I/Os per second on one core, so one
// Ssd::schedule must cost a small fraction of a microsecond. This drives the 40 SSDs of an
// ISE 860 G3 with several command mixes at a virtual arrival rate of 2 M commands/s (so
// that queues form and drain as in a run), and prints commands per wall second and the
// ratio to the cost of one simulator event measured in the same run (each command costs
// its caller one completion event). Not a test: it prints, it does not assert.
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "config/preset.h"
#include "datapac/datapac.h"
#include "sim/rng.h"
#include "sim/simulator.h"

using namespace afasim;
using Clock = std::chrono::steady_clock;

namespace {

struct Mix {
  const char* name;
  double read_fraction;
  std::int64_t size_bytes;
  bool with_link;  // also reserve the backplane link for the data
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Commands per wall second for `mix` over `ops` commands.
double run_mix(std::vector<std::unique_ptr<datapac::DataPac>>& dps, const Mix& mix, int ops,
               std::uint64_t* checksum) {
  sim::Rng rng(12345);
  const int per_dp = dps[0]->ssd_count();
  const std::int64_t slots = dps[0]->ssd(0).capacity_bytes() / mix.size_bytes;
  const sim::Time interarrival = sim::kSecond / 2'000'000;
  // Pre-draw the commands so that the timed loop measures the model, not the generator.
  struct Cmd {
    std::uint16_t dp, slot;
    bool read;
    std::int64_t offset;
  };
  std::vector<Cmd> cmds(static_cast<std::size_t>(ops));
  for (auto& c : cmds) {
    c.dp = static_cast<std::uint16_t>(rng.uniform(dps.size()));
    c.slot = static_cast<std::uint16_t>(rng.uniform(static_cast<std::uint64_t>(per_dp)));
    c.read = rng.bernoulli(mix.read_fraction);
    c.offset =
        static_cast<std::int64_t>(rng.uniform(static_cast<std::uint64_t>(slots))) * mix.size_bytes;
  }
  static sim::Time clock = 0;  // keep time moving forward across mixes
  const auto t0 = Clock::now();
  for (const Cmd& c : cmds) {
    clock += interarrival;
    datapac::DataPac& dp = *dps[c.dp];
    sim::Time arrival = clock;
    if (mix.with_link && !c.read)
      arrival =
          dp.backplane(0, datapac::LinkDirection::kToDataPac).transfer(arrival, mix.size_bytes);
    auto done = dp.ssd(c.slot).schedule(
        arrival, c.read ? datapac::SsdOp::kRead : datapac::SsdOp::kWrite, c.offset, mix.size_bytes);
    sim::Time t = done.value();
    if (mix.with_link && c.read)
      t = dp.backplane(0, datapac::LinkDirection::kFromDataPac).transfer(t, mix.size_bytes);
    *checksum += static_cast<std::uint64_t>(t);
  }
  return ops / seconds_since(t0);
}

// Simulator events (schedule + run) per wall second, the caller's cost per command: a
// steady pipeline of 1024 pending events, each scheduling its successor.
double event_rate(int events) {
  sim::Simulator s(1);
  int left = events;
  struct Next {
    sim::Simulator* s;
    int* left;
    void operator()() const {
      if (--*left > 0) s->after(1000 + (*left % 7) * 300, Next{s, left});
    }
  };
  const auto t0 = Clock::now();
  for (int i = 0; i < 1024; ++i) s.at(i, Next{&s, &left});
  s.run();
  return (events + 1023) / seconds_since(t0);
}

}  // namespace

int main() {
  auto cat = config::Catalog::embedded();
  if (!cat.is_ok()) {
    std::fprintf(stderr, "%s\n", cat.status().to_string().c_str());
    return 1;
  }
  const auto preset = cat->system("ise-860-g3").value();
  std::vector<std::unique_ptr<datapac::DataPac>> dps;
  for (int id = 0; id < preset.datapacs.count; ++id) {
    datapac::DataPacOptions o;
    o.id = id;
    o.ssd.host_span_fraction = 0.8;
    dps.push_back(datapac::DataPac::create(preset.datapacs, preset.ssd, o).value());
  }

  const int ops = 4'000'000;
  const Mix mixes[] = {
      {"4K random read", 1.0, 4096, false},
      {"4K random write", 0.0, 4096, false},
      {"4K 70/30 read/write", 0.7, 4096, false},
      {"4K 70/30 + backplane link", 0.7, 4096, true},
      {"64K 70/30 read/write", 0.7, 64 << 10, false},
      {"1M sequential-size read", 1.0, 1 << 20, false},
  };
  std::uint64_t checksum = 0;
  const double events_per_s = event_rate(ops);
  std::printf("%d SSDs (%s), %d commands per mix, virtual arrivals at 2 M/s\n",
              static_cast<int>(dps.size()) * dps[0]->ssd_count(), preset.ssd.name.c_str(), ops);
  std::printf("  %-28s %14.0f /s  (baseline: one sim::Simulator event)\n", "simulator event",
              events_per_s);
  for (const Mix& m : mixes) {
    const double rate = run_mix(dps, m, ops, &checksum);
    std::printf("  %-28s %14.0f commands/s  %6.1f ns each  %5.2f× an event\n", m.name, rate,
                1e9 / rate, events_per_s / rate);
  }
  std::printf("checksum %llu\n", static_cast<unsigned long long>(checksum));
  return 0;
}
