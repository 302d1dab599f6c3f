#include <doctest/doctest.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "sim/simulator.h"

using namespace afasim::sim;

TEST_CASE("events run in time order, ties in insertion order") {
  Simulator sim(1);
  std::vector<int> order;
  sim.at(30, [&] { order.push_back(3); });
  sim.at(10, [&] { order.push_back(1); });
  sim.at(20, [&] { order.push_back(2); });
  for (int i = 0; i < 5; ++i) sim.at(20, [&order, i] { order.push_back(100 + i); });
  sim.run();
  CHECK(order == std::vector<int>{1, 2, 100, 101, 102, 103, 104, 3});
  CHECK(sim.now() == 30);
  CHECK(sim.events_executed() == 8);
}

TEST_CASE("an event scheduled at now from inside an event runs after those already queued") {
  Simulator sim(1);
  std::vector<std::string> log;
  sim.at(5, [&] {
    log.push_back("a");
    sim.after(0, [&] { log.push_back("c"); });
  });
  sim.at(5, [&] { log.push_back("b"); });
  sim.run();
  CHECK(log == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("cancelled events never run, and cancel reports whether it did anything") {
  Simulator sim(1);
  int ran = 0;
  auto id = sim.at(10, [&] { ran += 1; });
  sim.at(20, [&] { ran += 10; });
  CHECK(sim.pending() == 2);
  CHECK(sim.cancel(id));
  CHECK_FALSE(sim.cancel(id));
  CHECK(sim.pending() == 1);
  sim.run();
  CHECK(ran == 10);
  CHECK_FALSE(sim.cancel(EventId{}));
}

TEST_CASE("a stale EventId cannot cancel the event that reused its slot") {
  Simulator sim(1);
  int ran = 0;
  auto first = sim.at(1, [&] { ran += 1; });
  sim.run();
  sim.at(5, [&] { ran += 100; });  // reuses the freed slot
  CHECK_FALSE(sim.cancel(first));
  sim.run();
  CHECK(ran == 101);
}

TEST_CASE("run_until stops at the boundary and advances the clock") {
  Simulator sim(1);
  int ran = 0;
  sim.at(100, [&] { ++ran; });
  sim.at(200, [&] { ++ran; });
  sim.at(201, [&] { ++ran; });
  sim.run_until(200);
  CHECK(ran == 2);
  CHECK(sim.now() == 200);
  CHECK(sim.next_event_time() == 201);
  sim.run_until(1000);
  CHECK(ran == 3);
  CHECK(sim.now() == 1000);
  CHECK(sim.next_event_time() == kTimeMax);
}

TEST_CASE("run_events runs at most the count asked, ends at a stop, and says how many ran") {
  Simulator sim(1);
  std::vector<int> order;
  for (int i = 0; i < 10; ++i) sim.at(10 * (i + 1), [&order, i] { order.push_back(i); });
  sim.at(55, [&] { sim.stop(); });  // after the fifth event, before the sixth
  CHECK(sim.run_events(3) == 3);
  CHECK(order == std::vector<int>{0, 1, 2});
  CHECK(sim.now() == 30);
  CHECK(sim.run_events(100) == 3);  // events at 40 and 50, then the stop at 55
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(sim.now() == 55);
  CHECK(sim.run_events(100) == 5);  // a new call forgets the old stop; the queue empties
  CHECK(order.size() == 10);
  CHECK(sim.run_events(100) == 0);
  CHECK(sim.events_executed() == 11);
}

TEST_CASE("large captures fall back to the heap and still run") {
  Simulator sim(1);
  std::array<std::uint64_t, 32> big{};
  big[31] = 7;
  std::uint64_t seen = 0;
  sim.at(1, [big, &seen] { seen = big[31]; });
  sim.run();
  CHECK(seen == 7);
}

// A random workload of self-rescheduling events; the trace must depend only on the seed.
static std::vector<std::pair<Time, int>> random_trace(std::uint64_t seed) {
  Simulator sim(seed);
  Rng rng = sim.rng("test");
  std::vector<std::pair<Time, int>> trace;
  std::function<void(int)> fire = [&](int id) {
    trace.emplace_back(sim.now(), id);
    if (trace.size() < 5000) sim.after(static_cast<Time>(rng.uniform(1000)), [&, id] { fire(id); });
  };
  for (int i = 0; i < 50; ++i) sim.at(static_cast<Time>(rng.uniform(100)), [&, i] { fire(i); });
  sim.run();
  return trace;
}

TEST_CASE("same seed gives the same trace; a different seed a different one") {
  const auto a = random_trace(42);
  const auto b = random_trace(42);
  const auto c = random_trace(43);
  CHECK(a.size() >= 5000);
  CHECK(a == b);
  CHECK(a != c);
  for (std::size_t i = 1; i < a.size(); ++i) REQUIRE(a[i].first >= a[i - 1].first);
}

TEST_CASE("transfer_time rounds up and uses integers") {
  CHECK(transfer_time(4096, 1'000'000'000) == 4096);
  CHECK(transfer_time(1, 3'000'000'000) == 1);  // never zero for a non-zero transfer
  CHECK(transfer_time(0, 1000) == 0);
  // 1 GiB at 5 GB/s (the ISE 800 G3's spec-sheet bandwidth): 0.2147483648 s.
  CHECK(transfer_time(1LL << 30, 5'000'000'000) == 214'748'365);
  CHECK(interval_for_rate(400'000) == 2500);
}

namespace {

// A randomized schedule (many same-time ties, cancels, events that schedule more, negative
// start times) run on `sim`; returns the order the events ran in.
std::vector<int> run_schedule(Simulator& sim, std::uint64_t seed) {
  Rng rng(seed, "schedule");
  std::vector<int> order;
  std::vector<EventId> ids;
  std::function<void(int)> spawn = [&](int tag) {
    order.push_back(tag);
    if (tag < 3000) {
      const Time t = sim.now() + static_cast<Time>(rng.uniform(4)) * 10;  // ties at now and a few steps on
      ids.push_back(sim.at(t, [&spawn, tag] { spawn(tag + 1000); }));
    }
    if (rng.uniform(5) == 0 && !ids.empty()) sim.cancel(ids[static_cast<std::size_t>(rng.uniform(ids.size()))]);
  };
  for (int i = 0; i < 500; ++i)
    ids.push_back(sim.at(sim.now() + static_cast<Time>(rng.uniform(50)), [&spawn, i] { spawn(i); }));
  sim.run();
  return order;
}

}  // namespace

TEST_CASE("renumbering the sequence keeps the order of ties, cancels and all") {
  // Sequence numbers are renumbered (order kept) when they reach the limit; a limit of 7
  // renumbers hundreds of times in this run. Same order as with the default limit, event by
  // event, from a negative start time (the key's time is signed).
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    Simulator reference(seed, -1'000);
    Simulator renumbered(seed, -1'000, 7);
    const std::vector<int> expected = run_schedule(reference, seed);
    CHECK(expected.size() > 1'000);
    CHECK(run_schedule(renumbered, seed) == expected);
    CHECK(renumbered.now() == reference.now());
  }
}
