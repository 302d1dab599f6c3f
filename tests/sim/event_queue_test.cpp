// sim::EventQueue against a reference (a std::set of the same keys): every pop must return
// the smallest key left, whichever part of the queue (the near heap, a wheel bucket, the far
// heap) holds it.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "sim/event_queue.h"
#include "sim/rng.h"

using namespace afasim::sim;

namespace {

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
constexpr std::uint64_t kBucketNs = std::uint64_t{1} << EventQueue::kBucketShift;
constexpr std::uint64_t kWheelNs = kBucketNs * EventQueue::kBuckets;

struct Order {
  bool operator()(const EventKey& a, const EventKey& b) const { return a < b; }
};

// Pushes and pops `ops` times at random, keys `delay(rng)` after the last popped time, and
// checks each pop against the reference. Returns the number of keys popped.
template <typename Delay>
int check_against_reference(std::uint64_t seed, std::uint64_t start, int ops, Delay delay) {
  Rng rng(seed);
  EventQueue queue(start);
  std::set<EventKey, Order> reference;
  std::uint64_t now = start, sequence = 0;
  int popped = 0;
  for (int i = 0; i < ops; ++i) {
    if (reference.empty() || rng.uniform(100) < 52) {
      const EventKey key{now + delay(rng), sequence++ << 28 | rng.uniform(1 << 20)};
      queue.push(key);
      reference.insert(key);
    } else {
      REQUIRE(queue.top().order() == reference.begin()->order());
      const EventKey key = queue.pop();
      REQUIRE(key.order() == reference.begin()->order());
      REQUIRE(key.time >= now);
      now = key.time;
      reference.erase(reference.begin());
      ++popped;
    }
    REQUIRE(queue.size() == reference.size());
  }
  while (!reference.empty()) {
    REQUIRE(queue.pop().order() == reference.begin()->order());
    reference.erase(reference.begin());
    ++popped;
  }
  CHECK(queue.empty());
  return popped;
}

}  // namespace

TEST_CASE("keys pop in (time, sequence) order from the near heap, the wheel and the far heap") {
  // Delays of a simulated I/O (within a bucket, a few buckets, an SSD read's ~0.1 ms), timers
  // past the wheel's 4.2 ms and ties at the same nanosecond, from a negative start time (the
  // key's time has its sign bit flipped) and from zero.
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    for (std::uint64_t start : {kSignBit - 1'000'000, kSignBit}) {
      const int popped = check_against_reference(seed, start, 20'000, [](Rng& rng) -> std::uint64_t {
        switch (rng.uniform(6)) {
          case 0: return 0;                                 // now: a tie with what runs now
          case 1: return rng.uniform(kBucketNs);           // the current bucket
          case 2: return rng.uniform(8 * kBucketNs);       // the next few
          case 3: return rng.uniform(150'000);             // an SSD read
          case 4: return kWheelNs - 2 + rng.uniform(4);    // either side of the wheel's end
          default: return rng.uniform(3 * kWheelNs);       // past it: the far heap
        }
      });
      CHECK(popped > 9'000);
    }
  }
}

TEST_CASE("a burst of keys in one bucket, and keys many wheel turns apart") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    CAPTURE(seed);
    // 256 keys within a microsecond (the bench's bare-kernel baseline), then sparse keys a
    // whole number of wheel turns later, which land in the same bucket index.
    check_against_reference(seed, kSignBit, 5'000, [](Rng& rng) -> std::uint64_t {
      return rng.uniform(3) == 0 ? rng.uniform(5) * kWheelNs + rng.uniform(2) : rng.uniform(kBucketNs / 4);
    });
  }
  // The same bucket index a turn apart: the later key must not be taken for the earlier one.
  EventQueue queue(kSignBit);
  queue.push(EventKey{kSignBit + kWheelNs + 5 * kBucketNs, 1});
  queue.push(EventKey{kSignBit + 5 * kBucketNs, 2});
  queue.push(EventKey{kSignBit + 2 * kWheelNs + 5 * kBucketNs, 3});
  CHECK(queue.pop().sequence_slot == 2);
  CHECK(queue.pop().sequence_slot == 1);
  CHECK(queue.pop().sequence_slot == 3);
  CHECK(queue.empty());
}

TEST_CASE("for_each visits every key once, and clear empties all three parts") {
  EventQueue queue(kSignBit);
  std::multiset<std::uint64_t> pushed, seen;
  const std::uint64_t delays[] = {0, 3, kBucketNs + 7, 40 * kBucketNs, kWheelNs - 1, kWheelNs, 7 * kWheelNs};
  std::uint64_t sequence = 0;
  for (std::uint64_t d : delays) {
    queue.push(EventKey{kSignBit + d, sequence});
    pushed.insert(sequence++);
  }
  queue.for_each([&](const EventKey& key) { seen.insert(key.sequence_slot); });
  CHECK(seen == pushed);
  CHECK(queue.size() == std::size(delays));
  queue.clear();
  CHECK(queue.empty());
  int visited = 0;
  queue.for_each([&](const EventKey&) { ++visited; });
  CHECK(visited == 0);
  // Usable after clear: keys at the time of the last pop (none) or later.
  queue.push(EventKey{kSignBit + 2 * kBucketNs, 9});
  queue.push(EventKey{kSignBit + 1, 8});
  CHECK(queue.pop().sequence_slot == 8);
  CHECK(queue.pop().sequence_slot == 9);
}
