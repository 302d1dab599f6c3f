// The QoS gate in front of the data path (docs/qos.md): host I/O waits in its volume's queue
// of the qos::Scheduler, which dispatches it to the owning controller while that
// controller's cores can take more.
#include <algorithm>

#include "controller/controller_pair.h"
#include "controller/io_orchestrator.h"
#include "controller/perf.h"
#include "qos/cost.h"

namespace afasim::controller {

using sim::Status;

Status IoOrchestrator::start_qos(const QosOptions& options) {
  if (options.reservable_percent < 1 || options.reservable_percent > 100)
    return sim::invalid_argument("qos.reservable_percent must be between 1 and 100, got " +
                                 std::to_string(options.reservable_percent));
  if (options.dispatch_backlog_ns < 0 || options.dispatch_backlog_ns > 100 * sim::kMillisecond)
    return sim::invalid_argument("qos.dispatch_backlog_ns must be between 0 and 100 ms");
  if (options.dispatch_refill_ns < 0 || options.dispatch_refill_ns > options.dispatch_backlog_ns)
    return sim::invalid_argument("qos.dispatch_refill_ns must be between 0 and dispatch_backlog_ns");
  if (options.outstanding_ios_max < 1 || options.outstanding_ios_max > (1 << 20))
    return sim::invalid_argument("qos.outstanding_ios_max must be between 1 and 1048576");
  qos_options_ = options;
  const int controllers = ctx_.preset.controllers.count;
  // What admission control holds back from reservations, the spare phase is sure to get.
  qos::SchedulerOptions scheduler_options = options.scheduler;
  scheduler_options.spare_floor_percent = std::min(99, 100 - options.reservable_percent);
  auto scheduler = qos::Scheduler::create(ctx_.sim, scheduler_options, controllers, *this);
  if (!scheduler.is_ok()) return scheduler.status();
  qos_ = std::move(scheduler).value();
  gates_.assign(static_cast<std::size_t>(controllers), Gate{});
  return Status::ok();
}

[[gnu::hot]] void IoOrchestrator::submit(const HostIo& io, IoCallback&& done) {
  // The owner looked up once for the prefetch and the gate (each looked it up again before).
  const Id owner = pair_.owner(io.volume_id);
  if (!io.hinted) prefetch(io, owner);  // the QoS gate's work below hides the memory latency of the read's plan
  if (!qos_options_.enabled || !pair_.mains_on()) {
    // No mains: the data path refuses it at once (it must not wait in a QoS queue to run after
    // the power comes back).
    execute(io, std::move(done));
    return;
  }
  const std::uint64_t cookie = pending_.acquire();
  PendingIo& p = pending_[static_cast<std::uint32_t>(cookie)];
  p.io = io;
  p.done = std::move(done);
  p.submit_time = ctx_.sim.now();
  const std::int64_t cost = io.op == IoOp::kRead || io.op == IoOp::kWrite ? qos::io_cost_units(io.length_bytes)
                                                                          : qos::kCommandCostUnits;
  // The volume's I/O is gated by the controller that owns it now: the scheduler moves it there
  // first (follow_owner moves it as ownership changes; this catches any change that did not
  // say so).
  Status st = qos_->submit(io.volume_id, cookie, cost, qos_resource(owner));
  if (st.is_ok()) return;
  // No such volume in the scheduler (nothing was queued): the data path refuses it at once.
  if (st.code() == sim::Code::kNotFound) return execute(io, take_pending(cookie));
  refuse_io(take_pending(cookie), std::move(st));
}

void IoOrchestrator::follow_owner(Id volume_id) {
  if (const int resource = qos_resource(pair_.owner(volume_id)); resource != qos::Scheduler::kSameResource)
    (void)qos_->move_volume(volume_id, resource);
}

void IoOrchestrator::fail_queued(const Status& status) {
  ctx_.volumes.for_each([&](VolumeRuntime& v) {
    for (std::uint64_t cookie : qos_->drain_volume(v.id)) {
      refuse_io(take_pending(cookie), status);
    }
  });
}

void IoOrchestrator::forget_volume(Id volume_id, const Status& status) {
  for (std::uint64_t cookie : qos_->remove_volume(volume_id)) {
    refuse_io(take_pending(cookie), status);
  }
  // And its I/O parked for a controller to own it (a takeover under way): no owner comes for a
  // deleted volume, and release_parked put it back in the queue for ever (review 2026-12-07: an
  // NBD client's I/O never completed and held its connection open).
  fail_parked(volume_id, status);
}

IoCallback IoOrchestrator::take_pending(std::uint64_t cookie) {
  const auto id = static_cast<std::uint32_t>(cookie);
  IoCallback cb = std::move(pending_[id].done);
  pending_.release(id);
  return cb;
}

void IoOrchestrator::refuse_io(IoCallback done, Status status) {
  const sim::Time now = ctx_.sim.now();
  ctx_.sim.at(now, [cb = std::move(done), st = std::move(status), now]() mutable {
    cb(IoCompletion{std::move(st), now, now});
  });
}

[[gnu::hot]] sim::Time IoOrchestrator::ready_time(int resource) {
  Gate& gate = gates_[static_cast<std::size_t>(resource)];
  if (gate.outstanding >= qos_options_.outstanding_ios_max) {
    gate.waiting_room = true;
    return sim::kTimeMax;
  }
  // Without a reservation to keep on this controller the scheduler only paces limits: work
  // goes on at once, each command to its interrupt core. With one, the gate keeps the cores'
  // queues short (the reservation phase orders what waits here) and the cores pull: open
  // while their backlog is under dispatch_backlog_ns; once full, open again when it has
  // fallen by dispatch_refill_ns.
  const sim::Time now = ctx_.sim.now();
  const bool reserving = qos_->reserving_volumes(resource) > 0;
  ctx_.timing.set_cores_pull(resource + 1, reserving);
  if (!reserving) {
    gate.full = false;
    return now;
  }
  const sim::Time start = ctx_.timing.cores_free_at(resource + 1);
  const sim::Time high = now + qos_options_.dispatch_backlog_ns;
  if (!gate.full) {
    if (start <= high) return now;
    gate.full = true;
  }
  const sim::Time ready = start - (qos_options_.dispatch_backlog_ns - qos_options_.dispatch_refill_ns);
  if (ready > now) return ready;
  gate.full = false;
  return now;
}

[[gnu::hot]] void IoOrchestrator::dispatch(std::uint64_t cookie, int resource) {
  PendingIo& p = pending_[static_cast<std::uint32_t>(cookie)];
  p.resource = resource;  // the volume's resource: what resource_of() returned here before
  ++gates_[static_cast<std::size_t>(p.resource)].outstanding;
  execute(p.io, [this, cookie](const IoCompletion& done) { finish_io(cookie, done); });
}

[[gnu::hot]] void IoOrchestrator::finish_io(std::uint64_t cookie, const IoCompletion& done) {
  PendingIo& p = pending_[static_cast<std::uint32_t>(cookie)];
  const Id volume_id = p.io.volume_id;
  const int resource = p.resource;
  const sim::Time submitted = p.submit_time;
  if (PerfCounters* perf = ctx_.hw.perf_counters())
    perf->host_io(volume_id, resource + 1, p.io.op, p.io.length_bytes, done.complete_time - submitted,
                  done.status.is_ok());
  Gate& gate = gates_[static_cast<std::size_t>(resource)];
  --gate.outstanding;
  qos_->complete(volume_id);
  if (gate.waiting_room) {
    gate.waiting_room = false;
    qos_->kick(resource);
  }
  // The host's callback runs from the slot, which is freed once it returns (an I/O submitted
  // meanwhile takes another cookie; a cookie only names its slot): moving it out first was a
  // copy of its storage and a destruction more per I/O.
  p.done(IoCompletion{done.status, submitted, done.complete_time});
  p.done.reset();
  pending_.release(static_cast<std::uint32_t>(cookie));
}

}  // namespace afasim::controller
