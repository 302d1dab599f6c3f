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
  const std::vector<int> seen = model.call([&] { return order; });
  // Rounds before the closure may have run the hook already; from the closure on: the
  // closure, its three events, then the hook.
  std::string tail;
  for (auto it = std::find(seen.begin(), seen.end(), 1); it != seen.end(); ++it)
    tail += std::to_string(*it);
  CHECK(tail.substr(0, 5) == "12220");
  model.set_round_hook(nullptr);
  const int after_removal = hook_runs.load();
  for (int i = 0; i < 5; ++i) model.call([] {});
  CHECK(hook_runs.load() == after_removal);
  model.stop();
}
