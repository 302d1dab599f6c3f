// The serve runtime: one thread owns the model; other threads reach it through an inbox.
//
// DESIGN.md "Time, threads, determinism": ReST handlers and the NBD server run on their own
// threads and hand the model closures through one thread-safe inbox; the answer comes back
// through a future. The model thread runs the Simulator's events paced to the wall clock by
// a sim::Pacer (`--pace realtime`), or as fast as it can (`--pace none`).
//
// The inbox is bounded (kInboxCapacity closures); at the bound, post() and call() block the
// calling thread until the model catches up (backpressure, never a dropped request). After
// stop(), post() returns false and call() throws ModelStopped. Thread-safe, except start()
// and stop(), which the owning thread calls, set_host_gap_ns() (before start()), and
// host_io_started()/host_io_completed() (the model thread's own closures call them).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "serve/connection_slots.h"
#include "sim/assert.h"
#include "sim/pacer.h"
#include "sim/simulator.h"

namespace afasim::serve {

struct ModelStopped : std::runtime_error {
  ModelStopped() : std::runtime_error("the array model is stopped") {}
};

class ModelThread {
 public:
  static constexpr std::size_t kInboxCapacity = 65536;

  // REQUIRES: sim outlives this object, and nothing else touches it once start() is called.
  ModelThread(sim::Simulator& sim, sim::Pacer pacer);
  // No thread: post() and call() run the closure at once on the calling thread, which owns
  // `sim`. For `afasim replay`, which drives the front ends' model code in batch.
  struct Inline {};
  ModelThread(sim::Simulator& sim, Inline);
  ~ModelThread();
  ModelThread(const ModelThread&) = delete;
  ModelThread& operator=(const ModelThread&) = delete;

  void start();
  // Runs the closures already in the inbox, then stops the thread. Events still pending
  // stay in the Simulator. Idempotent.
  void stop();

  // Queues `fn` to run on the model thread. False once stopped.
  bool post(std::function<void()> fn);

  // Runs `fn` on the model thread and returns its result to the caller (blocking).
  // Throws ModelStopped if the thread is stopped; rethrows what fn throws.
  template <typename F>
  auto call(F&& fn) -> std::invoke_result_t<F> {
    using R = std::invoke_result_t<F>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(fn));
    std::future<R> result = task->get_future();
    if (!post([task] { (*task)(); })) throw ModelStopped();
    return result.get();
  }

  // Registers `hook` to run on the model thread at the end of every round (the inbox's
  // closures, then the events due), before the thread waits; nullptr removes it. For
  // front ends that hand completions back to their own threads: they gather them during
  // the round and wake their thread once per round instead of once per completion. One
  // hook: a second call replaces the first. Thread-safe, but not from inside the hook; after
  // it returns, a replaced or removed hook is not running and will not run again.
  void set_round_hook(std::function<void()> hook);

  // A front end started a host I/O / its completion ran. Model thread only (not thread-safe).
  // With `--pace none`, once the last host I/O in flight completes and only later events
  // are left, the model waits up to kHostGapNs of wall time for the host's next request
  // before it runs them (run()): otherwise every gap between a host's requests lets virtual
  // time race through background events (the wear leveler's next check 60 s on, a telemetry
  // sample every virtual second until then). Other closures (ReST calls) neither start nor
  // extend that wait; after it, events run freely until the next host I/O starts.
  void host_io_started() {
    ++host_ios_in_flight_;
    host_quiet_ = false;
  }
  void host_io_completed() {
    AFASIM_ASSERT(host_ios_in_flight_ > 0, "ModelThread: a host I/O completed that was not started");
    --host_ios_in_flight_;
  }
  // 1 ms, a stated assumption: a host with I/O to do sends its next request well within it
  // (fio at iodepth 1 over loopback completes a 4K read every 183-213 us end to end here,
  // the whole round trip included), so a millisecond without one means it has gone quiet.
  static constexpr std::int64_t kHostGapNs = 1'000'000;
  // Another wait than kHostGapNs (tests). REQUIRES: before start(); gap_ns > 0.
  void set_host_gap_ns(std::int64_t gap_ns) {
    AFASIM_ASSERT(gap_ns > 0, "ModelThread: host gap must be > 0");
    host_gap_ns_ = gap_ns;
  }

  // Once the host is quiet, background events run freely for at most this much virtual
  // time from the instant it went quiet; then the clock waits for the host's next request.
  // 30 days, a stated bound: what a person waits for under --pace none finishes well within
  // it (a rebuild of a 1.6 TB SSD at the default 400 MB/s: 67 min; a scrub pass over a full
  // ISE 860 at 100 MB/s: ~6 days), while a periodic task that never ends (the scrub's weekly
  // passes) no longer runs the clock on without bound (hostile round 25: 7-10 simulated years
  // a wall second, then the clock's overflow aborted the server after ~40 s).
  static constexpr sim::Time kIdleRunNs = 30 * sim::kDay;
  // Nor past this, however many quiet spells there are: a year short of sim::kClockCeiling,
  // the latest clock a saved state may hold, so the array can always be saved and loaded.
  static constexpr sim::Time kIdleClockLimitNs = sim::kClockCeiling - sim::kYear;

  // Wall-clock nanoseconds from the steady clock (the runtime's only clock).
  static std::int64_t wall_now_ns();
  const sim::Pacer& pacer() const { return pacer_; }

 private:
  void run();
  // Paced: runs the events due by the wall clock and moves virtual time up to it, for at most
  // kCatchUpSliceNs (1 s) of wall time; past that virtual time slips (the pacer is anchored
  // again where the model stands, and a warning says so) and the inbox is served.
  void catch_up();
  // --pace none: hold virtual time at now() for the host (host_io_started).
  bool hold_for_host() const {
    return !pacer_.paced() && !inline_ && host_ios_in_flight_ == 0 && !host_quiet_ &&
           sim_.next_event_time() > sim_.now();
  }
  // --pace none, the host quiet: the next event is past this quiet spell's bound (kIdleRunNs,
  // kIdleClockLimitNs), so the model waits for the inbox as when no event is left.
  bool idle_bound_reached() const {
    return !pacer_.paced() && !inline_ && host_ios_in_flight_ == 0 && host_quiet_ &&
           sim_.next_event_time() > idle_until_;
  }
  // idle_until_ from now: kIdleRunNs on, never past kIdleClockLimitNs (nor before now); for a
  // request's `new_work`, at least a day on past that limit, never within a day of
  // sim::kClockCeiling.
  void arm_idle_bound(bool new_work);
  // Waits, `lock` held, for the inbox until this hold's deadline; then the host is quiet.
  void wait_for_host(std::unique_lock<std::mutex>& lock);

  sim::Simulator& sim_;
  sim::Pacer pacer_;
  LogLimiter slip_log_;  // catch_up's warnings
  std::mutex mu_;
  std::condition_variable wake_;        // model thread waits here
  std::condition_variable space_;       // producers wait here when the inbox is full
  std::deque<std::function<void()>> inbox_;
  // inbox_ is not empty: read without the lock after every event, so that a long run of
  // events never keeps a request waiting.
  std::atomic<bool> inbox_pending_{false};
  std::mutex hook_mu_;                 // held while the hook runs: removing it waits for it
  std::function<void()> round_hook_;   // guarded by hook_mu_
  const bool inline_ = false;
  // Model thread only: host I/O in flight; the hold's wall-clock deadline (0: none yet);
  // the host sent nothing until that deadline (events run freely until its next I/O).
  std::int64_t host_ios_in_flight_ = 0;
  std::int64_t hold_deadline_ns_ = 0;
  sim::Time hold_at_ = -1;  // the virtual instant hold_deadline_ns_ was set at
  bool host_quiet_ = false;
  sim::Time idle_until_ = 0;  // while host_quiet_: the latest instant events run at (idle_bound_reached)
  std::int64_t host_gap_ns_ = kHostGapNs;
  bool stopping_ = false;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace afasim::serve
