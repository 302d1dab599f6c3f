// A bandwidth stage (a PCIe link direction, a NAND channel) that callers may book out of
// time order. A plain busy-until server queues a transfer that becomes ready early behind
// one booked earlier for a later time; here the stage keeps the busy spans it has booked
// (sorted, merged when they touch) and a transfer fills the earliest idle time at or after
// its ready time, split over gaps if it must (fluid, as a link interleaves its packets).
// Spans older than `keep` behind the latest foreground ready time are forgotten; at most
// kMaxSpans are kept (the oldest are merged, counting their gap as busy). O(spans touched)
// per call, a handful in practice; memory 16 bytes per span.
//
// Two classes share the capacity: foreground transfers (host reads) see only one another, so
// background transfers (program data: host writes from the buffer, garbage collection, SLC
// folding) never delay them; background transfers take what foreground ones leave. A
// foreground transfer booked later into time a background one already holds overcommits that
// time (the background one is not pushed back): the controller's priority for reads on the
// bus, approximated.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace afasim::ssd {

class Pipe {
 public:
  static constexpr std::size_t kMaxSpans = 64;
  // REQUIRES: bytes_per_second > 0, keep > 0.
  explicit Pipe(double bytes_per_second = 1e9, sim::Time keep = 2 * sim::kMillisecond);
  // When `bytes` made ready at `ready` have crossed the stage. REQUIRES: bytes >= 0, ready >= 0.
  sim::Time transfer(sim::Time ready, std::int64_t bytes, bool background = false);
  double bytes_per_second() const { return 1e9 / ns_per_byte_; }
  void reset();

 private:
  struct Span {
    sim::Time start;
    sim::Time end;
  };
  // Adds [start, end) to `spans`, merging what it overlaps or touches.
  static void add(std::vector<Span>& spans, sim::Time start, sim::Time end);
  void forget(std::vector<Span>& spans) const;

  double ns_per_byte_;
  sim::Time keep_;
  sim::Time latest_ = 0;      // latest foreground ready time seen
  std::vector<Span> fg_;      // foreground busy spans
  std::vector<Span> all_;     // busy spans of both classes
};

}  // namespace afasim::ssd
