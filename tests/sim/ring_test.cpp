#include "sim/ring.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <deque>

#include "sim/rng.h"

using afasim::sim::Ring;

TEST_CASE("a ring is first in, first out across its wrap and its growth, as std::deque") {
  // Random pushes, pops and compactions against std::deque, the container it replaced.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    afasim::sim::Rng rng(seed);
    Ring<std::int64_t> ring;
    std::deque<std::int64_t> model;
    std::int64_t next = 0;
    for (int step = 0; step < 20'000; ++step) {
      const double u = rng.uniform01();
      if (u < 0.55) {
        ring.push_back(next);
        model.push_back(next++);
      } else if (u < 0.995) {
        if (model.empty()) continue;
        REQUIRE(ring.front() == model.front());
        ring.pop_front();
        model.pop_front();
      } else {
        const std::int64_t mod = 2 + static_cast<std::int64_t>(rng.uniform01() * 5);
        const auto gone = ring.erase_if([&](std::int64_t x) { return x % mod == 0; });
        CHECK(gone == std::erase_if(model, [&](std::int64_t x) { return x % mod == 0; }));
      }
      REQUIRE(ring.size() == model.size());
      REQUIRE(ring.empty() == model.empty());
    }
    while (!model.empty()) {  // what is left comes out in order
      REQUIRE(ring.front() == model.front());
      ring.pop_front();
      model.pop_front();
    }
    ring.push_back(7);
    ring.clear();
    CHECK(ring.empty());
  }
}

TEST_CASE("a ring gives its memory back as it drains, and release() frees it") {
  // A write cache's FIFO that filled a volume and drained kept its largest array (64 MiB at a
  // 4 GiB cache) until the review of the twentieth session.
  Ring<std::int64_t> ring;
  constexpr std::int64_t kEntries = 1 << 20;
  for (std::int64_t i = 0; i < kEntries; ++i) ring.push_back(i);
  CHECK(ring.capacity() == std::size_t{1} << 20);
  for (std::int64_t i = 0; i < kEntries - 10; ++i) {
    REQUIRE(ring.front() == i);
    ring.pop_front();
  }
  CHECK(ring.capacity() <= Ring<std::int64_t>::kShrinkAboveSlots);
  for (std::int64_t i = kEntries - 10; i < kEntries; ++i) {  // what was left, in order
    REQUIRE(ring.front() == i);
    ring.pop_front();
  }
  // A compaction that leaves few entries shrinks the array at once.
  for (std::int64_t i = 0; i < kEntries; ++i) ring.push_back(i);
  CHECK(ring.erase_if([](std::int64_t x) { return x % 1000 != 0; }) == kEntries - 1049);
  CHECK(ring.size() == 1049);
  CHECK(ring.capacity() == 8192);  // the least power of two at least 8 x 1,049, above 4,096
  CHECK(ring.front() == 0);
  ring.release();
  CHECK(ring.empty());
  CHECK(ring.capacity() == 0);
}

TEST_CASE("a ring's own entry pushed onto it while it grows is copied before the array moves") {
  Ring<std::int64_t> ring;
  for (std::int64_t i = 0; i < 16; ++i) ring.push_back(100 + i);
  REQUIRE(ring.capacity() == 16);  // full: the next push grows it
  ring.push_back(ring.front());
  CHECK(ring.size() == 17);
  for (int i = 0; i < 16; ++i) ring.pop_front();
  CHECK(ring.front() == 100);
}
