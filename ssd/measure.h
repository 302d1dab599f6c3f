// Closed-loop measurement of a bare device, without a simulator: `outstanding` commands kept
// in flight, each completion issuing the next at its completion time. What datasheets
// quote (4 KiB random IOPS at a deep queue, sequential MB/s, latency at queue depth 1) and
// what the tests and `make bench` check the model with. Deterministic for a seed.
#pragma once

#include <cstdint>

#include "sim/time.h"
#include "ssd/device.h"

namespace afasim::ssd {

struct ClosedLoop {
  Op op = Op::kRead;
  std::int64_t block_bytes = 4096;
  bool random = true;            // uniform over the span; else sequential streams
  int outstanding = 32;          // commands in flight (sequential: one stream each)
  double span_fraction = 1.0;    // of the device, from offset 0
  sim::Time warmup = 0;          // not measured
  sim::Time duration = sim::kSecond;
  std::uint64_t seed = 1;
};

struct ClosedLoopResult {
  std::int64_t commands = 0;           // completed in the measured window
  double iops = 0;
  double bytes_per_second = 0;
  double mean_latency_us = 0;
  double max_latency_us = 0;
  double stddev_latency_us = 0;
  std::int64_t commands_total = 0;     // including warm-up
};

// REQUIRES: outstanding >= 1, block_bytes a multiple of 4096 and at most the span.
ClosedLoopResult run_closed_loop(Device& device, const ClosedLoop& spec);

}  // namespace afasim::ssd
