// serve::ModelThread under --pace none: virtual time stays with a host that keeps sending,
// and moves on through background events when the host goes quiet (host_io_started).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "serve/model_thread.h"

using namespace afasim;

namespace {

constexpr sim::Time kIoNs = 100 * sim::kMicrosecond;      // each host I/O's simulated latency
constexpr sim::Time kBackgroundNs = 60 * sim::kSecond;  // like the wear leveler's next check

// One host I/O through the model as a front end does it (nbd::detail::start_requests):
// started on the model thread, completed by an event kIoNs later. Returns when it completed.
void host_io(sim::Simulator& sim, serve::ModelThread& model) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  model.call([&sim, &model, done] {
    model.host_io_started();
    sim.after(kIoNs, [&model, done] {
      model.host_io_completed();
      done->store(true);
    });
  });
  while (!done->load()) std::this_thread::yield();
}

}  // namespace

TEST_CASE("pace none: a host that keeps sending keeps virtual time with its I/O; background events wait") {
  sim::Simulator sim(1);
  serve::ModelThread model(sim, sim::Pacer(sim::Pacer::Mode::kNone));
  model.set_host_gap_ns(10LL * 1'000'000'000);  // no host on a loaded machine pauses this long
  std::atomic<bool> background_ran{false};
  sim.after(kBackgroundNs, [&] { background_ran.store(true); });
  model.start();
  for (int i = 0; i < 100; ++i) host_io(sim, model);
  // Each I/O arrived when the one before it completed, in virtual time too: 100 x 100 us.
  // Without the hold, the first gap ran the background event and the clock read 60 s.
  CHECK(model.call([&] { return sim.now(); }) == 100 * kIoNs);
  CHECK_FALSE(background_ran.load());
  model.stop();
}

TEST_CASE("pace none: when the host goes quiet, the model runs the later events after the gap") {
  sim::Simulator sim(1);
  serve::ModelThread model(sim, sim::Pacer(sim::Pacer::Mode::kNone));
  model.set_host_gap_ns(20'000'000);  // 20 ms
  std::atomic<bool> background_ran{false};
  sim.after(kBackgroundNs, [&] { background_ran.store(true); });
  model.start();
  host_io(sim, model);
  for (int i = 0; i < 1000 && !background_ran.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(background_ran.load());
  CHECK(model.call([&] { return sim.now(); }) == kBackgroundNs);
  model.stop();
}
