// serve::ModelThread::set_round_hook, which the NBD target uses to wake its Asio thread once
// per model round instead of once per completion.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "serve/model_thread.h"

using namespace afasim;

TEST_CASE(
    "the round hook runs on the model thread after a round's closures and events, until removed") {
  sim::Simulator sim(1);
  serve::ModelThread model(sim, sim::Pacer(sim::Pacer::Mode::kNone));
  std::vector<int> order;  // touched on the model thread only
  std::atomic<int> hook_runs{0};
  model.set_round_hook([&] {
    order.push_back(0);
    ++hook_runs;
  });
  model.start();
  // One closure that schedules three events: the hook comes after all of them.
  model.call([&] {
    order.push_back(1);
    for (int i = 0; i < 3; ++i) sim.after(1000 * (i + 1), [&order] { order.push_back(2); });
  });
  // A later call may take the model thread before the events run (pace none checks the
  // inbox between events), so wait until all three have run.
  std::vector<int> seen;
  for (int tries = 0; tries < 100000; ++tries) {
    seen = model.call([&] { return order; });
    if (std::count(seen.begin(), seen.end(), 2) == 3) break;
  }
  REQUIRE(std::count(seen.begin(), seen.end(), 2) == 3);
  // From the closure on: the closure, then its three events and the hooks of the rounds
  // that ran them; the round that ran the last event ended with the hook.
  std::string tail;
  for (auto it = std::find(seen.begin(), seen.end(), 1); it != seen.end(); ++it)
    tail += std::to_string(*it);
  INFO("closure (1), events (2), hooks (0) from the closure on: " << tail);
  const auto last_event = tail.rfind('2');
  REQUIRE(last_event != std::string::npos);
  CHECK(tail.find('0', last_event) == last_event + 1);
  CHECK(tail.find_first_not_of("02", 1) == std::string::npos);
  model.set_round_hook(nullptr);
  const int after_removal = hook_runs.load();
  for (int i = 0; i < 5; ++i) model.call([] {});
  CHECK(hook_runs.load() == after_removal);
  model.stop();
}
