// A bandwidth stage (a PCIe link direction, a NAND channel) that callers may book out of
// time order. A plain busy-until server queues a transfer that becomes ready early behind
// one booked earlier for a later time; here the stage keeps a calendar of its capacity in
// buckets of `bucket_ns` over a horizon ahead of the latest ready time seen, so a transfer
// uses the earliest capacity at or after its ready time (fluid, FIFO within a bucket).
// Beyond the horizon (a stage booked that far ahead is saturated) it falls back to
// busy-until. O(buckets a transfer spans) per call; memory 16 bytes per bucket.
//
// Two classes share the capacity: foreground transfers (host reads) see only one another, so
// background transfers (program data: host writes from the buffer, garbage collection, SLC
// folding) never delay them; background transfers take what foreground ones leave. A foreground transfer booked later into time a
// background one already holds overcommits that bucket (the background one is not pushed
// back): the controller's priority for host transfers, approximated.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace afasim::ssd {

class Pipe {
 public:
  static constexpr int kBuckets = 2048;
  // REQUIRES: bytes_per_second > 0, bucket_ns >= 1.
  explicit Pipe(double bytes_per_second = 1e9, sim::Time bucket_ns = 8000);
  // When `bytes` made ready at `ready` have crossed the stage. REQUIRES: bytes >= 0.
  sim::Time transfer(sim::Time ready, std::int64_t bytes, bool background = false);
  double bytes_per_second() const { return bytes_per_ns_ * 1e9; }
  void reset();

 private:
  void roll(sim::Time ready);

  double bytes_per_ns_;
  sim::Time bucket_ns_;
  double bucket_bytes_;
  std::vector<double> used_;     // bytes booked per bucket (both classes), ring from head_
  std::vector<double> used_fg_;  // foreground bytes booked per bucket
  int head_ = 0;
  sim::Time base_ = 0;        // start of the head bucket
  sim::Time tail_free_ = 0;     // busy-until beyond the horizon (both classes)
  sim::Time tail_free_fg_ = 0;  // the same, foreground only
};

}  // namespace afasim::ssd
