#include "serve/model_thread.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include <spdlog/spdlog.h>

namespace afasim::serve {

namespace {
// Events due within this much wall time are run rather than slept for: a sleep is far
// coarser than that on a general-purpose kernel.
constexpr std::int64_t kSpinThresholdNs = 50'000;
// In `--pace none`, run at most this many events between looks at the inbox (each look
// also happens as soon as the inbox has something).
constexpr int kEventsBetweenInboxChecks = 4096;
// Paced, a catch-up with the wall clock runs for at most this long before the inbox is
// served: past it, virtual time slips behind wall time × --speed (catch_up).
constexpr std::int64_t kCatchUpSliceNs = 1'000'000'000;
}  // namespace

ModelThread::ModelThread(sim::Simulator& sim, sim::Pacer pacer) : sim_(sim), pacer_(pacer) {}

ModelThread::ModelThread(sim::Simulator& sim, Inline) : sim_(sim), pacer_(sim::Pacer::Mode::kNone, 1.0), inline_(true) {}

ModelThread::~ModelThread() { stop(); }

std::int64_t ModelThread::wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void ModelThread::start() {
  if (inline_) return;
  pacer_.start(sim_.now(), wall_now_ns());
  thread_ = std::thread([this] {
    try {
      run();
    } catch (const std::bad_alloc&) {
      // Mid-event, the model's state is half changed: it cannot go on, nor stop cleanly (a
      // clean stop destages what the cache holds, trusting that state). It stops as kill -9
      // would, with a reason instead of std::terminate's abort (hostile round 31): what was
      // FLUSHed or written FUA is on the payload; later writes may be lost, as NBD allows.
      static constexpr char kMessage[] =
          "afasim serve: out of memory in the array model: stopping at once, as kill -9 would (writes "
          "acknowledged since their last FLUSH may be lost). With a payload the write cache holds up to its "
          "size of dirty data in memory per controller, and --payload memory every byte written: give the "
          "process more memory, or use --payload none for performance studies (docs/write-cache.md).\n";
      [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
      std::_Exit(1);
    }
  });
}

void ModelThread::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  space_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
}

bool ModelThread::post(std::function<void()> fn) {
  if (inline_) {
    fn();
    return true;
  }
  std::unique_lock<std::mutex> lock(mu_);
  space_.wait(lock, [this] { return stopping_ || inbox_.size() < kInboxCapacity; });
  if (stopping_) return false;
  inbox_.push_back(std::move(fn));
  inbox_pending_.store(true, std::memory_order_release);
  lock.unlock();
  wake_.notify_one();
  return true;
}

void ModelThread::set_round_hook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(hook_mu_);
  round_hook_ = std::move(hook);
}

void ModelThread::catch_up() {
  const std::int64_t started_ns = wall_now_ns();
  const sim::Time due = pacer_.virtual_at(started_ns);
  while (sim_.now() < due) {
    for (int i = 0; i < kEventsBetweenInboxChecks && sim_.next_event_time() <= due; ++i) sim_.step();
    if (sim_.next_event_time() > due) {
      sim_.run_until(due);
      return;
    }
    const std::int64_t now_ns = wall_now_ns();
    if (now_ns - started_ns < kCatchUpSliceNs) continue;
    // The model is slower than --speed asks (a large rebuild at --speed 100): it had every
    // request wait behind its whole backlog (hostile review 42: a GET answered after 80 s).
    // Virtual time slips instead: anchored again where the model stands.
    const double behind_s = sim::to_seconds(due - sim_.now());
    pacer_.start(sim_.now(), now_ns);
    if (std::int64_t left_out = 0; slip_log_.admit(left_out))
      spdlog::warn("the model is {:.1f} s of virtual time behind the wall clock x --speed: virtual time slips so that "
                   "requests are answered (a lower --speed keeps pace){}",
                   behind_s, LogLimiter::suffix(left_out));
    return;
  }
}

void ModelThread::run() {
  std::deque<std::function<void()>> batch;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      batch.swap(inbox_);
      inbox_pending_.store(false, std::memory_order_relaxed);
    }
    space_.notify_all();
    // Paced, virtual time first catches up with the wall clock: after an idle wait the model
    // still stands at its last event, and a request run there would be stamped in the past and
    // answered before its simulated latency had passed on the wall clock (model review 17:
    // fio over NBD measured a 74 µs median for the array's 179 µs reads).
    if (pacer_.paced() && !batch.empty()) catch_up();
    // Closures run at the model's current time; what they schedule runs in event order.
    // Read only while quiet (a batch cannot make the host quiet), off the busy host's path.
    const sim::Time next_before = host_quiet_ ? sim_.next_event_time() : sim::kTimeMax;
    for (auto& fn : batch) fn();
    batch.clear();
    // A request that gave the quiet array new work (an event earlier than any it had: a fault,
    // the scrub switched on) opens a new quiet spell for it; one that scheduled nothing (a GET,
    // a page polling) does not move the bound.
    if (host_quiet_ && sim_.next_event_time() < next_before) arm_idle_bound(true);

    bool has_more_inbox;
    if (pacer_.paced()) {
      catch_up();  // every event due by now, virtual time up to the wall clock
    } else {
      for (int i = 0; i < kEventsBetweenInboxChecks && !inbox_pending_.load(std::memory_order_acquire) &&
                      !hold_for_host() && !idle_bound_reached() && sim_.step();
           ++i) {
      }
    }
    {
      std::lock_guard<std::mutex> hook_lock(hook_mu_);
      if (round_hook_) round_hook_();
    }

    std::unique_lock<std::mutex> lock(mu_);
    has_more_inbox = !inbox_.empty();
    if (stopping_ && !has_more_inbox) return;
    if (has_more_inbox) continue;
    const sim::Time next = sim_.next_event_time();
    if (next == sim::kTimeMax || idle_bound_reached()) {
      wake_.wait(lock, [this] { return stopping_ || !inbox_.empty(); });
    } else if (pacer_.paced()) {
      const std::int64_t wait_ns = pacer_.wall_at(next) - wall_now_ns();
      if (wait_ns > kSpinThresholdNs)
        wake_.wait_for(lock, std::chrono::nanoseconds(wait_ns - kSpinThresholdNs / 2),
                       [this] { return stopping_ || !inbox_.empty(); });
    } else if (hold_for_host()) {
      wait_for_host(lock);
    }
    // pace none with events pending: loop straight back.
  }
}

void ModelThread::arm_idle_bound(bool new_work) {
  const sim::Time now = sim_.now();
  // Past the limit, a request's work (a fault's vault and restore, a rebuild) still gets a day
  // a request, up to a day short of the ceiling: a state saved at 99.5 years froze every fault
  // (review, round 25). Periodic work stops at the limit.
  const sim::Time limit = new_work ? std::min(std::max(kIdleClockLimitNs, now + sim::kDay), sim::kClockCeiling - sim::kDay)
                                   : kIdleClockLimitNs;
  idle_until_ = std::max(now, std::min(now + kIdleRunNs, limit));
}

void ModelThread::wait_for_host(std::unique_lock<std::mutex>& lock) {
  // pace none, no host I/O in flight, only later events left: the host gets until the
  // deadline to send its next request at this virtual time. A request that comes wakes the
  // thread at once; anything else that comes (a ReST call) is run and the wait goes on to
  // the same deadline.
  // No spinning first: spinning 50 us (yielding) before blocking cut fio's iodepth-1 4K
  // read latency from 183-213 to 175 us, but took the CPU the NBD thread needs at iodepth
  // 32 on 2 cores (bench_nbd 4K random read 1.01/0.90 of nbdkit without it, 0.71/0.66 with).
  // One wait per virtual instant: requests that complete at the instant they came (refused at
  // once while the mains are off or no controller serves) start no new wait, so a host that
  // retries them back to back cannot hold the clock, and with it the vault and boot timers
  // that would end the refusals, for longer than host_gap_ns_ of wall time in all.
  if (sim_.now() != hold_at_) {
    hold_deadline_ns_ = wall_now_ns() + host_gap_ns_;
    hold_at_ = sim_.now();
  }
  const auto deadline = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(hold_deadline_ns_));
  if (!wake_.wait_until(lock, deadline, [this] { return stopping_ || !inbox_.empty(); })) {
    host_quiet_ = true;  // the deadline stays: a later request at this instant gets no new wait
    arm_idle_bound(false);
  }
}

}  // namespace afasim::serve
