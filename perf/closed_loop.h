// perf::run_closed_loop — a closed-loop load on a perf::ArrayModel (what fio does with
// iodepth and numjobs): `jobs` jobs keep `iodepth` I/Os each in flight on `volumes` LUNs,
// random or sequential, a share of them reads; measured after a warm-up. Used by the model's
// tests and by `afasim calibrate --engine model` (the mechanism alone, stand-in SSDs; the
// array's own runs are `--engine array`). Deterministic for the seed.
#pragma once

#include <cstdint>

#include "perf/array_model.h"
#include "sim/time.h"

namespace afasim::perf {

struct ClosedLoad {
  int jobs = 16;              // job j runs on volume j % volumes (fio's layout in config/workloads)
  int iodepth = 16;
  double read_fraction = 1.0;
  std::int64_t block_bytes = 4096;
  bool sequential = false;    // each job streams its own 1 GiB region of its volume
  int volumes = 4;            // 1: every job on one LUN, owned by one controller (ALUA)
  std::int64_t volume_bytes = 128LL << 30;
};

struct ClosedLoopResult {
  double iops = 0;
  double mb_per_s = 0;        // 10^6 bytes per second, as fio and the review report
  double lat_mean_ms = 0;
  double lat_stddev_ms = 0;
  std::int64_t cache_hits = 0, full_stripes = 0, partial_destages = 0;
};

// REQUIRES: load.jobs, iodepth, volumes, block_bytes >= 1; warm_ns >= 0; measure_ns > 0.
ClosedLoopResult run_closed_loop(const ArrayModelOptions& options, const ClosedLoad& load, std::uint64_t seed,
                                 sim::Time warm_ns, sim::Time measure_ns);

}  // namespace afasim::perf
