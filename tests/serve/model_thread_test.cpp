// serve::ModelThread under --pace none: virtual time stays with a host that keeps sending,
// moves on through background events when the host goes quiet, and is held again when the
// host comes back (host_io_started).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "serve/model_thread.h"

using namespace afasim;

namespace {

constexpr sim::Time kIoNs = 100 * sim::kMicrosecond;    // each host I/O's simulated latency
constexpr sim::Time kBackgroundNs = 60 * sim::kSecond;  // like the wear leveler's next check

// One host I/O through the model as a front end does it (nbd::detail::start_requests):
// started on the model thread, completed by an event kIoNs later. Returns when it completed.
// `also`, if set, runs in the same closure after the I/O started.
void host_io(sim::Simulator& sim, serve::ModelThread& model, std::function<void()> also = {}) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  model.call([&sim, &model, done, &also] {
    model.host_io_started();
    if (also) also();
    sim.after(kIoNs, [&model, done] {
      model.host_io_completed();
      done->store(true);
    });
  });
  while (!done->load()) std::this_thread::yield();
}

sim::Time clock(sim::Simulator& sim, serve::ModelThread& model) {
  return model.call([&sim] { return sim.now(); });
}

// Waits (wall) up to 10 s for `flag`.
bool wait_for(const std::atomic<bool>& flag) {
  for (int i = 0; i < 1000 && !flag.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return flag.load();
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
  CHECK(clock(sim, model) == 100 * kIoNs);
  CHECK_FALSE(background_ran.load());
  model.stop();
}

TEST_CASE("pace none: a quiet host lets the later events run after the gap, and is held again when it comes back") {
  sim::Simulator sim(1);
  serve::ModelThread model(sim, sim::Pacer(sim::Pacer::Mode::kNone));
  constexpr std::int64_t kGapNs = 500'000'000;  // 0.5 s: the returning host below never pauses this long
  model.set_host_gap_ns(kGapNs);
  std::atomic<bool> background_ran{false};
  std::atomic<std::int64_t> ran_at_wall_ns{0};
  sim.after(kBackgroundNs, [&] {
    ran_at_wall_ns.store(serve::ModelThread::wall_now_ns());
    background_ran.store(true);
  });
  model.start();
  host_io(sim, model);
  const std::int64_t quiet_from = serve::ModelThread::wall_now_ns();
  REQUIRE(wait_for(background_ran));
  // Not before the host had been quiet for the gap (waits only grow under load).
  CHECK(ran_at_wall_ns.load() - quiet_from >= kGapNs);
  CHECK(clock(sim, model) == kBackgroundNs);

  // The host comes back: a background event scheduled with its first I/O waits for it again.
  std::atomic<bool> second_ran{false};
  host_io(sim, model, [&] { sim.after(kBackgroundNs, [&] { second_ran.store(true); }); });
  for (int i = 1; i < 10; ++i) host_io(sim, model);
  CHECK(clock(sim, model) == kBackgroundNs + 10 * kIoNs);
  CHECK_FALSE(second_ran.load());
  REQUIRE(wait_for(second_ran));  // and runs once the host is quiet again
  model.stop();
}

TEST_CASE("pace none: a client polling the model does not hold virtual time past the gap") {
  sim::Simulator sim(1);
  serve::ModelThread model(sim, sim::Pacer(sim::Pacer::Mode::kNone));
  model.set_host_gap_ns(20'000'000);  // 20 ms
  std::atomic<bool> background_ran{false};
  sim.after(kBackgroundNs, [&] { background_ran.store(true); });
  model.start();
  host_io(sim, model);
  // A ReST client asking the model something far more often than once per gap.
  const std::int64_t from = serve::ModelThread::wall_now_ns();
  while (!background_ran.load() && serve::ModelThread::wall_now_ns() - from < 10LL * 1'000'000'000) clock(sim, model);
  CHECK(background_ran.load());
  model.stop();
}
