// A bandwidth stage (a PCIe link direction, a NAND channel) that callers may book out of
// time order. A plain busy-until server queues a transfer that becomes ready early behind
// one booked earlier for a later time; here the stage keeps the busy spans it has booked
// (sorted, merged when they touch) and a transfer fills the earliest idle time at or after
// its ready time, split over gaps if it must (fluid, as a link interleaves its packets).
// Spans older than `keep` behind the latest foreground ready time are forgotten; at most
// kMaxSpans are kept (the oldest are merged, counting their gap as busy). O(spans touched)
// per call, a handful in practice; memory 16 bytes per span. Forgetting is O(1) (the list
// keeps a start index and compacts now and then).
//
// Two classes share the capacity: foreground transfers (host reads) see only one another, so
// background transfers (program data: host writes from the buffer, garbage collection, SLC
// folding) never delay them; background transfers take what foreground ones leave. A
// foreground transfer booked later into time a background one already holds overcommits that
// time (the background one is not pushed back: its end was already given out): the
// controller's priority for reads on the bus, approximated. The time so taken is added to the
// next background transfer, so that over time the stage carries no more than its rate (the
// debt waits for that transfer: a foreground burst may run ahead of it meanwhile).
//
// While no background transfer has been booked, the two classes' lists are the same and only
// the foreground one is kept. Not thread-safe.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/prefetch.h"
#include "sim/time.h"

namespace afasim::ssd {

class alignas(64) Pipe {
 public:
  static constexpr std::size_t kMaxSpans = 64;
  // REQUIRES: bytes_per_second > 0, 0 < keep <= INT32_MAX ns (about 2.1 s).
  explicit Pipe(double bytes_per_second = 1e9, sim::Time keep = 2 * sim::kMillisecond);
  // When `bytes` made ready at `ready` have crossed the stage. REQUIRES: bytes >= 0, ready >= 0.
  sim::Time transfer(sim::Time ready, std::int64_t bytes, bool background = false) {
    // Inline, without a call, the usual case (most channel and host-link transfers of a read),
    // booked as transfer_any would book it: a foreground transfer of the last size (its time
    // known), no background one booked yet (one list, nothing owed), onto a stage whose last
    // span kept ends before `ready` (appended, merging nothing), with neither forget()'s
    // compaction nor merge_oldest due. The spans it forgets are the ones forget() drops.
    if (!background && all_is_fg_ && bytes == memo_bytes_ && memo_need_ > 0 && ready >= 0) {
      std::vector<Span>& v = fg_.v;
      const std::size_t head = ready > latest_ ? first_kept(fg_, ready - keep_) : fg_.head;
      if ((v.size() == head || v.back().end < ready) && head < kMaxSpans &&
          v.size() - head < kMaxSpans) {
        latest_ = std::max(latest_, ready);
        fg_.head = head;
        v.push_back(Span{ready, ready + memo_need_});
        return ready + memo_need_;
      }
    }
    return transfer_any(ready, bytes, background);
  }
  double bytes_per_second() const { return 1e9 / ns_per_byte_; }
  // The time `bytes` take on the stage alone: ceil(bytes × ns per byte).
  sim::Time time_of(std::int64_t bytes) const {
    if (bytes == memo_bytes_) return memo_need_;
    return static_cast<sim::Time>(std::ceil(static_cast<double>(bytes) * ns_per_byte_));
  }
  // Starts loading the foreground spans a transfer looks at first (the oldest kept, the
  // latest) into the CPU cache. Speed only.
  void prefetch() const {
    if (fg_.size() == 0) return;
    sim::prefetch(&fg_.v[fg_.head]);
    sim::prefetch(&fg_.v.back());
  }
  void reset();
  // Spans held in memory, the forgotten ones not yet freed included (tests: the storage is
  // bounded, about 2 × kMaxSpans per list).
  std::size_t stored_spans() const { return fg_.v.size() + all_.v.size(); }

 private:
  struct Span {
    sim::Time start;
    sim::Time end;
  };
  // Busy spans sorted by time: [head, v.size()) of `v` (spans before head are forgotten).
  struct Spans {
    std::vector<Span> v;
    std::size_t head = 0;
    Span* begin() { return v.data() + head; }
    Span* end() { return v.data() + v.size(); }
    std::size_t size() const { return v.size() - head; }
    void clear() {
      v.clear();
      head = 0;
    }
  };
  // Adds [start, end) to `spans`, merging what it overlaps or touches; add_reaching_last
  // when the last span ends at or after `start`.
  static void add(Spans& spans, sim::Time start, sim::Time end);
  static void add_reaching_last(Spans& spans, sim::Time start, sim::Time end);
  // Past kMaxSpans: the oldest two spans become one.
  static void merge_oldest(Spans& spans);
  // Frees the forgotten prefix.
  static void compact(Spans& spans);
  // The first of `spans` from its head on that ends at or after `horizon` (v.size() if none).
  static std::size_t first_kept(const Spans& spans, sim::Time horizon) {
    std::size_t i = spans.head;
    while (i < spans.v.size() && spans.v[i].end < horizon) ++i;
    return i;
  }
  // transfer() in every case.
  sim::Time transfer_any(sim::Time ready, std::int64_t bytes, bool background);
  void book(sim::Time start, sim::Time end, bool background);
  // transfer() of `need` ns on a stage busy after `ready`: in the idle time between spans.
  sim::Time transfer_around(const Spans& busy, sim::Time ready, sim::Time need, bool background);
  // How much of [start, end) `spans` holds.
  static sim::Time overlap(Spans& spans, sim::Time start, sim::Time end);
  void forget(Spans& spans) const;

  // What a foreground transfer of the last size reads (the inline path of transfer() and
  // time_of()) comes first, in one cache line (the class is aligned to a line): a read's
  // channel and host link are cold when it comes, one line each instead of two or three.
  // The last transfer size and its time_of (most transfers are of one size).
  std::int64_t memo_bytes_ = -1;
  sim::Time memo_need_ = 0;
  sim::Time latest_ = 0;      // latest foreground ready time seen
  std::int32_t keep_;         // ns; 32 bits (asserted) so that the flag below shares the line
  bool all_is_fg_ = true;     // no background transfer yet: all_ is fg_ (not kept apart)
  Spans fg_;                  // foreground busy spans
  // The rest: a background transfer, a new size, the busy spans of both classes.
  double ns_per_byte_;
  Spans all_;                 // busy spans of both classes (unless all_is_fg_)
  sim::Time overcommit_ns_ = 0;  // background time foreground transfers took, not yet repaid
};

}  // namespace afasim::ssd
