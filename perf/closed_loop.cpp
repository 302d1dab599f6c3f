#include "perf/closed_loop.h"

#include <functional>
#include <vector>

#include "sim/histogram.h"

namespace afasim::perf {

ClosedLoopResult run_closed_loop(const ArrayModelOptions& options, const ClosedLoad& load, std::uint64_t seed,
                                 sim::Time warm_ns, sim::Time measure_ns) {
  AFASIM_ASSERT(load.jobs >= 1 && load.iodepth >= 1 && load.volumes >= 1 && load.block_bytes >= 1,
                "run_closed_loop: empty load");
  AFASIM_ASSERT(warm_ns >= 0 && measure_ns > 0, "run_closed_loop: bad window");
  sim::Simulator s(seed);
  ArrayModel model(s, options);
  sim::Rng rng = s.rng("perf.closed_loop");
  sim::Histogram lat;
  std::int64_t ios = 0, bytes = 0;
  std::vector<std::int64_t> next_offset(static_cast<std::size_t>(load.jobs));
  for (int j = 0; j < load.jobs; ++j) next_offset[static_cast<std::size_t>(j)] = (j / load.volumes) * (1LL << 30);
  const auto blocks = static_cast<std::uint64_t>(std::max<std::int64_t>(1, load.volume_bytes / load.block_bytes));
  std::function<void(int)> issue = [&](int j) {
    const bool is_read = rng.uniform01() < load.read_fraction;
    std::int64_t offset;
    if (load.sequential) {
      offset = next_offset[static_cast<std::size_t>(j)];
      next_offset[static_cast<std::size_t>(j)] += load.block_bytes;
    } else {
      offset = static_cast<std::int64_t>(rng.uniform(blocks)) * load.block_bytes;
    }
    model.submit(static_cast<std::uint64_t>(j % load.volumes), !is_read, offset, load.block_bytes,
                 [&, j](const IoRecord& r) {
                   if (s.now() >= warm_ns) {
                     ++ios;
                     bytes += r.bytes;
                     lat.record(r.latency_ns);
                   }
                   if (s.now() < warm_ns + measure_ns) issue(j);
                 });
  };
  for (int j = 0; j < load.jobs; ++j)
    for (int q = 0; q < load.iodepth; ++q) issue(j);
  s.run_until(warm_ns + measure_ns);
  ClosedLoopResult m;
  m.iops = static_cast<double>(ios) / sim::to_seconds(measure_ns);
  m.mb_per_s = static_cast<double>(bytes) / sim::to_seconds(measure_ns) / 1e6;
  m.lat_mean_ms = lat.mean() / 1e6;
  m.lat_stddev_ms = lat.stddev() / 1e6;
  m.cache_hits = model.cache_hits();
  m.full_stripes = model.full_stripe_destages();
  m.partial_destages = model.partial_destages();
  return m;
}

}  // namespace afasim::perf
