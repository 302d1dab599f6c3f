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
