#include "ssd/measure.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <vector>

#include "sim/assert.h"
#include "sim/rng.h"

namespace afasim::ssd {

ClosedLoopResult run_closed_loop(Device& device, const ClosedLoop& spec) {
  AFASIM_ASSERT(spec.outstanding >= 1 && spec.block_bytes >= 4096 && spec.block_bytes % 4096 == 0,
                "run_closed_loop: bad spec");
  const std::int64_t span =
      static_cast<std::int64_t>(static_cast<double>(device.capacity_bytes()) * spec.span_fraction) /
      spec.block_bytes;
  AFASIM_ASSERT(span >= 1, "run_closed_loop: span smaller than a block");
  sim::Rng rng(spec.seed, "closed-loop");
  struct Slot {
    sim::Time done;
    sim::Time issued;
    int stream;
    bool operator>(const Slot& o) const { return done > o.done; }
  };
  std::vector<std::int64_t> cursor(static_cast<std::size_t>(spec.outstanding));
  for (int s = 0; s < spec.outstanding; ++s)
    cursor[static_cast<std::size_t>(s)] = span / spec.outstanding * s;
  auto issue = [&](sim::Time at, int stream) {
    std::int64_t block;
    if (spec.random) {
      block = static_cast<std::int64_t>(rng.uniform(static_cast<std::uint64_t>(span)));
    } else {
      std::int64_t& c = cursor[static_cast<std::size_t>(stream)];
      block = c;
      c = (c + 1) % span;
    }
    auto done = device.schedule(at, spec.op, block * spec.block_bytes, spec.block_bytes);
    AFASIM_ASSERT(done.is_ok(), done.status().message());
    return Slot{*done, at, stream};
  };
  std::priority_queue<Slot, std::vector<Slot>, std::greater<>> inflight;
  for (int s = 0; s < spec.outstanding; ++s) inflight.push(issue(0, s));
  ClosedLoopResult r;
  const sim::Time end = spec.warmup + spec.duration;
  double sum = 0, sum_sq = 0;
  while (!inflight.empty()) {
    const Slot s = inflight.top();
    inflight.pop();
    if (s.done > end) break;
    ++r.commands_total;
    if (s.issued >= spec.warmup) {
      const double lat = static_cast<double>(s.done - s.issued) / 1e3;
      ++r.commands;
      sum += lat;
      sum_sq += lat * lat;
      r.max_latency_us = std::max(r.max_latency_us, lat);
    }
    inflight.push(issue(s.done, s.stream));
  }
  const double seconds = sim::to_seconds(spec.duration);
  r.iops = static_cast<double>(r.commands) / seconds;
  r.bytes_per_second = r.iops * static_cast<double>(spec.block_bytes);
  if (r.commands > 0) {
    r.mean_latency_us = sum / static_cast<double>(r.commands);
    r.stddev_latency_us = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(r.commands) -
                                                      r.mean_latency_us * r.mean_latency_us));
  }
  return r;
}

}  // namespace afasim::ssd
