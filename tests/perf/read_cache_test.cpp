// perf::ReadCache and perf::StreamDetector: segments resident and filling, LRU eviction, fill
// waiters, and stream detection with read-ahead ahead of the stream.
#include <doctest/doctest.h>

#include <algorithm>
#include <list>
#include <utility>

#include "perf/read_cache.h"

using namespace afasim;

namespace {
perf::ReadCache small_cache(std::int64_t segments) {
  perf::ReadCacheOptions o;
  o.segment_bytes = 64 << 10;
  o.capacity_bytes = segments * o.segment_bytes;
  return perf::ReadCache(o);
}
}  // namespace

TEST_CASE("ReadCache: a miss, then a fill; a read during the fill waits on it; after it, a hit") {
  auto cache = small_cache(16);
  CHECK_FALSE(cache.lookup(1, 0, 8192).all_present);
  const auto fill = cache.start_fill(1, 0, 128 << 10);  // two segments
  auto during = cache.lookup(1, 64 << 10, 8192);
  CHECK(during.all_present);
  REQUIRE(during.fills.size() == 1);
  CHECK(during.fills[0] == fill);
  int woken = 0;
  cache.wait(fill, [&] { ++woken; });
  cache.fill_done(fill);
  CHECK(woken == 1);
  auto after = cache.lookup(1, 0, 128 << 10);
  CHECK(after.all_present);
  CHECK(after.fills.empty());
  CHECK_FALSE(cache.lookup(2, 0, 8192).all_present);  // another volume
}

TEST_CASE("ReadCache: a 4 KiB miss brings in its 4 KiB, not its 64 KiB segment; writes likewise") {
  // A random 4K read reads 4 KiB from the SSDs: marking its whole segment resident handed
  // the next 15 blocks free hits (a one-pass random read of 1 GiB found 84 % of them cached).
  auto cache = small_cache(16);
  cache.fill_done(cache.start_fill(1, 8192, 4096));
  CHECK(cache.lookup(1, 8192, 4096).all_present);
  CHECK_FALSE(cache.lookup(1, 4096, 4096).all_present);   // its neighbours in the segment
  CHECK_FALSE(cache.lookup(1, 12288, 4096).all_present);
  CHECK_FALSE(cache.lookup(1, 8192, 8192).all_present);   // partly held is a miss
  const auto second = cache.start_fill(1, 12288, 4096);    // the neighbour, in its own fill
  CHECK(second != 0);
  CHECK(cache.lookup(1, 8192, 8192).all_present);
  cache.fill_done(second);
  cache.write(1, 65536 + 512, 512);  // a sub-block write holds its 4 KiB block
  CHECK(cache.lookup(1, 65536, 4096).all_present);
  CHECK_FALSE(cache.lookup(1, 65536 + 4096, 4096).all_present);
  cache.fill_done(cache.start_fill(1, 3 * 65536, 65536));  // a whole segment: every block
  CHECK(cache.lookup(1, 3 * 65536 + 61440, 4096).all_present);
}

TEST_CASE("ReadCache: a one-segment fill wakes the reads that waited on it, before and after "
          "the first wait") {
  auto cache = small_cache(16);
  const auto fill = cache.start_fill(1, 8192, 4096);  // one segment: named by its node
  REQUIRE(fill != 0);
  auto first = cache.lookup(1, 8192, 4096);  // the block being filled
  CHECK(first.all_present);
  REQUIRE(first.fills.size() == 1);
  CHECK(first.fills[0] == fill);
  std::vector<int> woken;
  cache.wait(first.fills[0], [&] { woken.push_back(1); });
  // A later read of the segment finds the fill under whatever id it has now; both wake in order.
  auto second = cache.lookup(1, 8192, 4096);
  REQUIRE(second.fills.size() == 1);
  cache.wait(second.fills[0], [&] { woken.push_back(2); });
  cache.wait(fill, [&] { woken.push_back(3); });  // the starting id still names it
  CHECK(woken.empty());
  cache.fill_done(fill);
  CHECK(woken == std::vector<int>{1, 2, 3});
  CHECK(cache.lookup(1, 8192, 4096).fills.empty());  // resident now
  // Nobody waits: the fill ends with the segment resident; a fill of it again has nothing to do.
  const auto quiet = cache.start_fill(2, 0, 4096);
  REQUIRE(quiet != 0);
  CHECK(cache.lookup(2, 0, 4096).fills == std::vector<std::uint32_t>{quiet});
  cache.fill_done(quiet);
  CHECK(cache.lookup(2, 0, 4096).fills.empty());
  CHECK(cache.start_fill(2, 0, 4096) == 0);
  CHECK(cache.start_fill(1, 0, 128 << 10) != 0);  // segment 0's other blocks, segment 1
  CHECK(cache.start_fill(1, 0, 128 << 10) == 0);  // now both are resident or filling
  const auto resident = cache.resident_segments();
  cache.fill_done(0);  // nothing to do
  CHECK(cache.resident_segments() == resident);
  CHECK(cache.lookup(1, 64 << 10, 4096).fills.size() == 1);  // segment 1 still filling
}

TEST_CASE("ReadCache: a filling one-segment fill is never evicted") {
  auto cache = small_cache(2);
  const auto fill = cache.start_fill(1, 0, 4096);
  cache.write(1, 64 << 10, 4096);
  cache.write(1, 128 << 10, 4096);   // full: evicts segment 1, not the filling segment 0
  CHECK(cache.lookup(1, 0, 4096).fills == std::vector<std::uint32_t>{fill});
  CHECK_FALSE(cache.lookup(1, 64 << 10, 4096).all_present);
  cache.fill_done(fill);
  CHECK(cache.lookup(1, 0, 4096).fills.empty());
}

TEST_CASE("ReadCache: full, it evicts the least recently used resident segment, never a filling one") {
  auto cache = small_cache(2);
  cache.write(1, 0, 4096);             // segment 0
  cache.write(1, 64 << 10, 4096);      // segment 1
  (void)cache.lookup(1, 0, 4096);      // segment 0 is now the most recent
  cache.write(1, 128 << 10, 4096);     // evicts segment 1
  CHECK(cache.lookup(1, 0, 4096).all_present);
  CHECK_FALSE(cache.lookup(1, 64 << 10, 4096).all_present);
  CHECK(cache.resident_segments() == 2);
}

TEST_CASE("ReadCache: random misses, fills and writes of one and two segments agree with a "
          "reference LRU list") {
  // The miss path puts the new segment in the slot where lookup's probe ended, or in the slot
  // the eviction before it emptied when that lies between the segment's home and that end: a
  // wrong choice leaves a segment the table cannot find, a later read of it a miss. 24
  // segments in a 64-slot table over 3 volumes × 80 segments: probe runs of several slots,
  // evictions inside and outside them.
  constexpr std::size_t kCapacity = 24;
  auto cache = small_cache(kCapacity);
  std::list<std::pair<std::uint64_t, std::int64_t>> lru;  // front: most recently used
  auto held = [&lru](std::uint64_t volume, std::int64_t segment) {
    return std::find(lru.begin(), lru.end(), std::make_pair(volume, segment)) != lru.end();
  };
  auto use = [&lru](std::uint64_t volume, std::int64_t segment) {  // a touch or an insert
    const auto it = std::find(lru.begin(), lru.end(), std::make_pair(volume, segment));
    if (it != lru.end()) lru.erase(it);
    else if (lru.size() == kCapacity) lru.pop_back();  // the cache evicts before it inserts
    lru.emplace_front(volume, segment);
  };
  std::uint64_t x = 12345;
  auto next = [&x](std::uint64_t n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % n;
  };
  for (int op = 0; op < 20000; ++op) {
    const std::uint64_t volume = 1 + next(3);
    const auto first = static_cast<std::int64_t>(next(80));
    const std::int64_t segments = next(4) == 0 ? 2 : 1;
    const std::int64_t offset = first << 16, length = segments << 16;
    const std::uint64_t kind = next(4);  // 0, 1: a read (lookup, then fill); 2: a fill alone; 3: a write
    bool all_held = true;
    for (std::int64_t s = first; s < first + segments; ++s) all_held = all_held && held(volume, s);
    if (kind < 2) {
      REQUIRE(cache.lookup(volume, offset, length).all_present == all_held);
      for (std::int64_t s = first; s < first + segments; ++s)
        if (held(volume, s)) use(volume, s);  // lookup refreshes what it finds
    }
    for (std::int64_t s = first; s < first + segments; ++s) use(volume, s);
    if (kind == 3) {
      cache.write(volume, offset, length);
      continue;
    }
    const std::uint32_t fill = cache.start_fill(volume, offset, length);
    REQUIRE((fill != 0) == !all_held);
    cache.fill_done(fill);
  }
  CHECK(cache.resident_segments() == static_cast<std::int64_t>(kCapacity));
  for (const auto& [volume, segment] : lru) CHECK(cache.lookup(volume, segment << 16, 65536).all_present);
}

TEST_CASE("ReadCache: a fill larger than the cache overfills it while in flight; the next insert "
          "evicts back to the capacity") {
  // Hostile round 13: one 4 GiB read (64 Ki segments against a 2 GiB cache) walked every
  // pinned segment on each insert (6.5 s; 100 GiB never ended). And the cache, once over its
  // capacity, evicted one segment per insert: it stayed that far over for good.
  auto cache = small_cache(4);
  const auto big = cache.start_fill(1, 0, 16 * 65536);  // 16 segments, all filling
  REQUIRE(big != 0);
  CHECK(cache.lookup(1, 0, 16 * 65536).all_present);   // filling: the whole read waits on it
  cache.fill_done(big);
  CHECK(cache.lookup(1, 15 * 65536, 65536).all_present);
  cache.write(2, 0, 65536);                             // one insert: back to 4 segments
  int held = 0;
  for (int s = 0; s < 16; ++s) held += cache.lookup(1, s * 65536, 65536).all_present ? 1 : 0;
  CHECK(held == 3);  // the 3 most recently used of the big read, beside the write's
  CHECK(cache.resident_segments() == 4);
  CHECK(cache.lookup(2, 0, 65536).all_present);
}

TEST_CASE("ReadCacheOptions and StreamOptions reject bad values") {
  perf::ReadCacheOptions o;
  o.segment_bytes = 3000;
  CHECK_FALSE(o.validate().is_ok());
  o.segment_bytes = 65536;
  o.capacity_bytes = 1000;
  CHECK_FALSE(o.validate().is_ok());
  perf::StreamOptions s;
  s.streams_per_volume = 0;
  CHECK_FALSE(s.validate().is_ok());
}

TEST_CASE("StreamDetector: random reads read nothing ahead; a stream is declared on its trigger-th read") {
  perf::StreamOptions o;
  o.trigger_ios = 2;
  o.depth_bytes = 4 << 20;
  o.max_io_bytes = 1 << 20;
  perf::StreamDetector d(o);
  CHECK(d.on_read(1, 10 << 20, 8192).length == 0);
  CHECK(d.on_read(1, 500 << 20, 8192).length == 0);   // not where the first ended: a second stream
  const auto ra = d.on_read(1, (10 << 20) + 8192, 8192);  // continues the first
  CHECK(ra.offset == (10 << 20) + 16384);
  CHECK(ra.length == 4 << 20);                        // the whole window ahead
  CHECK(d.streams_detected() == 1);
  // The window is deep enough until half of it is consumed.
  std::int64_t pos = (10 << 20) + 16384;
  int refills = 0;
  for (int i = 0; i < 768; ++i, pos += 8192)
    if (d.on_read(1, pos, 8192).length > 0) ++refills;
  // 6 MiB consumed in 8 KiB reads: a refill each time only 2 MiB remain ahead, one per 2 MiB.
  CHECK(refills == 2);
}

TEST_CASE("StreamDetector: random reads near a stream do not continue it") {
  // A one-pass random read of 1 GiB (fio randread, 4 KiB, QD 8) declared 131 streams by chance
  // and read 500 MiB ahead when a read up to 16 lengths behind a one-read stream continued it.
  perf::StreamOptions o;
  o.trigger_ios = 2;
  o.depth_bytes = 4 << 20;
  perf::StreamDetector d(o);
  const std::int64_t k4 = 4096, m = 1 << 20;
  CHECK(d.on_read(1, 10 * m, k4).length == 0);
  CHECK(d.on_read(1, 10 * m - 8 * k4, k4).length == 0);  // 8 blocks behind a one-read stream: random
  CHECK(d.streams_detected() == 0);
  // A declared stream, 4 MiB read ahead of it.
  CHECK(d.on_read(1, 100 * m, k4).length == 0);
  CHECK(d.on_read(1, 100 * m + k4, k4).length == 4 << 20);
  CHECK(d.streams_detected() == 1);
  // A random read inside that window is not the stream jumping there: it reads nothing ahead,
  // and the stream's own next read finds its window where it was (still deep enough).
  CHECK(d.on_read(1, 103 * m, k4).length == 0);
  CHECK(d.on_read(1, 100 * m + 2 * k4, k4).length == 0);
  // Had the 103 MiB read moved the stream, this one would be new and its successor would not
  // be the stream's: the stream reads ahead again once half its window is used.
  std::int64_t pos = 100 * m + 3 * k4, refills = 0;
  for (int i = 0; i < 512; ++i, pos += k4) refills += d.on_read(1, pos, k4).length > 0 ? 1 : 0;
  CHECK(refills == 1);  // 2 MiB consumed: exactly one refill, at the half-window mark
  CHECK(d.streams_detected() == 1);
}

TEST_CASE("StreamDetector: a live stream is continued up to 16 lengths either side of its end, "
          "not at 16") {
  // The rule of StreamDetector::match (16 lengths, read_cache.cpp), at both edges of its window.
  const std::int64_t k4 = 4096, start = 100 << 20, end = start + 2 * k4;  // the end after two reads
  // Behind: with trigger_ios = 3 the read that continues the stream a second time declares it.
  for (const std::int64_t behind : {15 * k4, 16 * k4}) {
    CAPTURE(behind);
    perf::StreamOptions o;
    o.trigger_ios = 3;
    perf::StreamDetector d(o);
    CHECK(d.on_read(1, start, k4).length == 0);
    CHECK(d.on_read(1, start + k4, k4).length == 0);  // live now, not yet declared
    d.on_read(1, end - behind, k4);
    CHECK(d.streams_detected() == (behind < 16 * k4 ? 1 : 0));
  }
  // Ahead: declared on its second read, the stream reads 16 lengths ahead (the whole depth);
  // a read that continues it ends at that window's end and reads ahead again, a new stream not.
  for (const std::int64_t ahead : {15 * k4, 16 * k4}) {
    CAPTURE(ahead);
    perf::StreamOptions o;
    o.trigger_ios = 2;
    o.depth_bytes = 16 * k4;
    perf::StreamDetector d(o);
    CHECK(d.on_read(1, start, k4).length == 0);
    CHECK(d.on_read(1, start + k4, k4).length == 16 * k4);
    CHECK((d.on_read(1, end + ahead, k4).length > 0) == (ahead < 16 * k4));
  }
}

TEST_CASE("StreamDetector: of four live streams the least recently created or continued is "
          "replaced first") {
  perf::StreamOptions o;
  o.streams_per_volume = 4;
  o.trigger_ios = 2;  // a read that continues a stream declares it
  perf::StreamDetector d(o);
  const std::int64_t k4 = 4096, m = 1 << 20;
  for (const std::int64_t at : {0 * m, 100 * m, 200 * m, 300 * m}) CHECK(d.on_read(1, at, k4).length == 0);  // A B C D
  CHECK(d.on_read(1, 200 * m + k4, k4).length > 0);  // C continued: A B D C, oldest first
  CHECK(d.on_read(1, k4, k4).length > 0);            // A continued: B D C A
  CHECK(d.streams_detected() == 2);
  CHECK(d.on_read(1, 400 * m, k4).length == 0);      // E in B's place: D C A E
  CHECK(d.on_read(1, 500 * m, k4).length == 0);      // F in D's place: C A E F
  CHECK(d.on_read(1, 300 * m + k4, k4).length == 0); // D is gone: a new stream, in C's place
  CHECK(d.on_read(1, 100 * m + k4, k4).length == 0); // B is gone: a new stream, in A's place
  CHECK(d.streams_detected() == 2);
  CHECK(d.on_read(1, 400 * m + k4, k4).length > 0);  // E is still there
  CHECK(d.on_read(1, 500 * m + k4, k4).length > 0);  // and F
  CHECK(d.on_read(1, 300 * m + 2 * k4, k4).length > 0);  // and the new stream after D's place
  CHECK(d.streams_detected() == 5);
}

TEST_CASE("StreamDetector: streams are per volume, and a dropped volume's streams are gone") {
  perf::StreamOptions o;
  o.trigger_ios = 2;
  perf::StreamDetector d(o);
  CHECK(d.on_read(7, 0, 8192).length == 0);
  CHECK(d.on_read(3, 8192, 8192).length == 0);       // another volume: not the stream of volume 7
  CHECK(d.on_read(7, 8192, 8192).length > 0);        // volume 7's second sequential read
  CHECK(d.streams_detected() == 1);
  d.drop_volume(3);
  d.drop_volume(1000);                               // never seen: nothing to drop
  d.drop_volume(7);
  // The stream went with the volume: the next two sequential reads declare a new one.
  CHECK(d.on_read(7, 16384, 8192).length == 0);
  CHECK(d.on_read(7, 24576, 8192).length > 0);
  CHECK(d.streams_detected() == 2);
}

TEST_CASE("StreamDetector: with every stream live a new one takes the least recently used's "
          "place; a read just behind a new stream's end continues it") {
  perf::StreamOptions o;
  o.streams_per_volume = 2;
  o.trigger_ios = 3;
  o.depth_bytes = 1 << 20;
  perf::StreamDetector d(o);
  const std::int64_t k8 = 8192, m = 1 << 20;
  CHECK(d.on_read(1, 0, k8).length == 0);         // stream A
  CHECK(d.on_read(1, 100 * m, k8).length == 0);   // stream B
  CHECK(d.on_read(1, k8, k8).length == 0);        // A's second read: B is now the least recently used
  CHECK(d.on_read(1, 200 * m, k8).length == 0);   // stream C, in B's place (not A's, created first)
  CHECK(d.on_read(1, 2 * k8, k8).length > 0);     // A's third read: declared, read ahead
  CHECK(d.streams_detected() == 1);
  // C's reads arrive out of order (queue depth > 1): one that ends where C's first ended
  // continues C, though C has read nothing ahead.
  CHECK(d.on_read(1, 200 * m + 4096, 4096).length == 0);
  CHECK(d.on_read(1, 200 * m + k8, k8).length > 0);  // C's third read
  CHECK(d.streams_detected() == 2);
  CHECK(d.on_read(1, 100 * m + k8, k8).length == 0);  // B's is gone: a new stream
  CHECK(d.streams_detected() == 2);
}
