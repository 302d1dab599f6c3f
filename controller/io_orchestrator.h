// controller::IoOrchestrator — the route of one host I/O (DESIGN.md "One host write, end to
// end"): the volume's QoS queue (qos/, docs/qos.md), the owning controller (ALUA: I/O that
// arrives at the other one is forwarded over the link), the thin map (pool/: a first write
// allocates), the write cache (write-back, or write-through to RAID), the RAID engine (raid/:
// a plan of member operations), and the timing of that plan on the controller's resources,
// priced by the CostModel. One event at the computed completion time answers the host.
//
// The bytes and the time follow the same plan: a request is planned, the plan executed (its
// payload moved, in event order), then the plan's work priced and timed. A fault between
// submission and completion decides what the completion does: a controller's failure parks
// its in-flight I/O until a survivor owns the volume (the host's multipath retry), a power
// loss fails it with kUnavailable.
//
// Not thread-safe (model thread).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "controller/context.h"
#include "controller/io.h"
#include "qos/scheduler.h"
#include "raid/plan.h"
#include "sim/slab.h"

namespace afasim::controller {

class ControllerPair;
class ExtentMover;
class WriteCache;
struct CacheWaiter;

// How the array runs QoS (docs/qos.md).
struct QosOptions {
  // false: host I/O goes straight to the data path, as before QoS existed — no queues, no
  // reservations, no limits (QoS settings are still stored, validated and admitted). For
  // side-by-side measurements of what the scheduler costs or changes.
  bool enabled = true;
  qos::SchedulerOptions scheduler;
  // Share of a controller's cores that admission control lets reservations (min_iops) take,
  // percent, 1..100. Assumption: 90 leaves a tenth for I/O the cost curve undercharges (RAID 5
  // writes crossing strips, errors, trims) and for the dispatch slack below.
  int reservable_percent = 90;
  // The scheduler hands a controller more I/O while the earliest of its cores frees within
  // this; beyond it, requests wait in the scheduler, where the reservation and limit tags
  // order them. Assumption: 100 µs, a little over two 4 KiB reads of core time — enough that
  // the cores never idle while the first stages of a write (host port, data mover, a few µs)
  // run, short enough that an I/O the scheduler favours starts within ~0.1 ms. Range
  // [0, 100 ms].
  sim::Time dispatch_backlog_ns = 100 * sim::kMicrosecond;
  // Once the backlog has reached dispatch_backlog_ns, the scheduler hands the controller work
  // again when it has fallen by this much, a batch at a time, instead of one command per
  // command finished (one timer event per batch, not per I/O). Assumption: 25 µs, about four
  // 4 KiB reads of core time over six cores; the cores still hold >= 75 µs of work, so none
  // idles. 0: one at a time. Range [0, dispatch_backlog_ns].
  sim::Time dispatch_refill_ns = 25 * sim::kMicrosecond;
  // I/Os one controller may have in the data path at once, whatever the cores' backlog: the
  // bound for workloads whose bottleneck is not the cores (large I/O on the data movers, a slow
  // SSD). Assumption: 256, above the ~40 a saturated controller holds with 4 KiB I/O
  // (142,000 IOPS × ~0.25 ms in the data path) so that it never limits throughput there.
  // Range [1, 1 << 20].
  int outstanding_ios_max = 256;
};

class IoOrchestrator : private qos::Dispatcher {
 public:
  IoOrchestrator(ArrayContext& ctx, ControllerPair& pair, WriteCache& cache, ExtentMover& mover);
  ~IoOrchestrator() override;

  // Creates the QoS scheduler. kInvalidArgument naming the option out of range.
  sim::Status start_qos(const QosOptions& options);
  qos::Scheduler& scheduler() { return *qos_; }
  const qos::Scheduler& scheduler() const { return *qos_; }
  const QosOptions& qos_options() const { return qos_options_; }

  // A host I/O into the model: its volume's QoS queue, then the data path; `done` runs at the
  // simulated completion time, its submit_time the time of this call. A full QoS queue
  // refuses it (kUnavailable, completed at once). Never blocks; `done` never runs inside.
  void submit(const HostIo& io, IoCallback&& done);
  // `io` will be submitted later (Array::hint; fio hints a clone's next I/O as it issues
  // one): starts loading what it will touch first. A write: the write cache's index slot and
  // the read cache's table slot of its first block. A read: its map entry and its volume's
  // lines now, and its extent descriptor, read-cache slot and stream lines at the next hint
  // (hint_read). Speed only.
  void hint(const HostIo& io);
  // Straight to the data path, no QoS (the scheduler's dispatch, and QoS switched off).
  void execute(const HostIo& io, IoCallback&& done) { run(io, std::move(done), ctx_.sim.now()); }
  // Fails every request waiting in the QoS queues with `status`, now.
  void fail_queued(const sim::Status& status);
  // A deleted volume: its QoS queue goes, what waited in it or was parked for an owner fails
  // with `status`.
  void forget_volume(Id volume_id, const sim::Status& status);
  // The volume's QoS queue (and its reservation's share) goes to the controller that owns it
  // now; nothing when no controller does. Called as ownership changes, so that a volume idle
  // through a takeover or failback is counted where it is served (review 30: after failback a
  // volume that sent no I/O kept the survivor's reservations above 100 %).
  void follow_owner(Id volume_id);

  // --- For the cache and the controller pair -----------------------------------------------
  // Completes host I/O served by controller `c` at `at`, unless `c` fails or the power goes
  // first (then it is parked for a survivor, or fails with kUnavailable).
  void complete_on(Id c, Id volume_id, IoCallback& done, sim::Status status, sim::Time submitted, sim::Time at);
  // The same for I/O that started when `c`'s epoch was `epoch` and the power's `power`.
  void complete_on(Id c, std::uint64_t epoch, std::uint64_t power, Id volume_id, IoCallback& done,
                   sim::Status status, sim::Time submitted, sim::Time at);
  // A write in the cache and its mirror whose controller went down: a survivor acknowledges it.
  void park_acknowledged(CacheWaiter& w);
  // Runs or answers the parked I/O whose volume has an owner now.
  void release_parked();
  // Fails every parked I/O with `status` (power loss).
  void fail_parked(const sim::Status& status);
  // Fails the parked I/O of volume `volume_id` with `status` (the volume was deleted).
  void fail_parked(Id volume_id, const sim::Status& status);

 private:
  // One request on its way through the data path.
  struct Request {
    const HostIo& io;
    IoCallback& done;
    sim::Time submitted;
    VolumeRuntime& v;
    Id c;             // the owning controller
    sim::Time start;  // when the owner starts on it (after forwarding)
    sim::Time back;   // the forwarding link's return leg
  };
  // Host I/O waiting: for a volume's owner (takeover pending) — `execute` — or, already done,
  // for its acknowledgement to be sent by a live owner.
  struct Parked {
    HostIo io;
    bool execute = false;
    sim::Status status;
    IoCallback done;
    sim::Time submitted = 0;
  };
  // A read or write whose timing runs on the performance model (controller::Timing): what
  // its completion needs, in a slab indexed by the id its journey's end carries.
  // Two cache lines: of the host I/O, its completion needs only the volume.
  struct InFlight {
    IoCallback done;
    sim::Time submitted = 0, back = 0;
    Id c = 0;
    Id volume_id = 0;
    std::uint64_t epoch = 0, power = 0;
    bool cached = false;
    std::int64_t new_blocks = 0;
  };
  struct PendingIo {
    HostIo io;
    IoCallback done;
    sim::Time submit_time = 0;
    int resource = 0;
  };
  static constexpr std::size_t kMaxParked = 65536;

  // qos::Dispatcher: resources are controllers (index = controller id − 1).
  // The QoS resource of controller `owner`; kSameResource while no controller owns the volume.
  static int qos_resource(Id owner) {
    return owner != 0 ? static_cast<int>(owner - 1) : qos::Scheduler::kSameResource;
  }
  sim::Time ready_time(int resource) override;
  void dispatch(std::uint64_t cookie, int resource) override;
  void finish_io(std::uint64_t cookie, const IoCompletion& done);
  // The callback of queued I/O `cookie`, whose slot is free again (the I/O is refused).
  IoCallback take_pending(std::uint64_t cookie);
  void refuse_io(IoCallback done, sim::Status status);

  void run(const HostIo& io, IoCallback&& done, sim::Time submitted);
  // Checks the range and the volume's health; false (and the request failed) when refused.
  bool admit(Request& r);
  enum class Refusal { kEmpty, kOutOfRange, kVolumeFailed };
  // Fails `r` for `why` (admit's refusals); returns false.
  bool refuse(Request& r, Refusal why);
  void finish(Request& r, sim::Status status, sim::Time at);
  void fail(Request& r, sim::Status status);
  void run_read(Request& r);
  void run_write(Request& r);
  void run_trim(Request& r);
  void run_flush(Request& r);
  // Moves `r` into the in-flight slab (the epochs of now) and returns its id.
  std::uint32_t start_timed(Request& r);
  // A host read of `io` enters the array: starts loading what its plan and the read cache
  // will touch (the extent descriptor, the cache's table slot), cold for a random read.
  // Speed only: no state changes.
  // `owner`: pair_.owner(io.volume_id), which the caller has looked up.
  void prefetch(const HostIo& io, Id owner);
  // hint() of a read, in two steps one hint apart so that neither waits for memory: this
  // read's map entry and its volume's lines are prefetched, and the read hinted before has its
  // extent descriptor prefetched from its map entry, and its read-cache slot and its volume's
  // stream lines from its owner, all loaded by now. A random read's plan
  // waited on that descriptor (and the prefetch at submit, prefetch(), on the map entry) for
  // a tenth of the run's time (perf, docs/performance.md "thirty-ninth session"); a hint
  // comes about an I/O per clone (16 issues at 16 jobs) before its read.
  void hint_read(const HostIo& io);
  // The extent descriptor of entry `index` of `map` (none when past its end or unallocated):
  // prefetch()'s and hint_read()'s last step. Speed only.
  void prefetch_descriptor(const pool::ThinMap::MapView& map, std::size_t index);
  // Plans (no bytes) and starts the read-ahead of [offset, +length) of `v`.
  void plan_read_ahead(VolumeRuntime& v, Id c, std::int64_t offset, std::int64_t length);
  // Completes timed I/O `id` successfully at `at` and frees its slot.
  void complete_timed(std::uint32_t id, sim::Time at);
  void read_timed(std::uint32_t id);
  // After the SSDs failed a read (kIoError): reads into io.read_buffer again, only the 4 KiB
  // blocks the write cache does not hold with their bytes. REQUIRES: payload, a read buffer.
  sim::Status read_around_cache(VolumeRuntime& v, const HostIo& io);
  // Whether a write's rows hold an unreadable block (raid::Engine::rows_have_media_error).
  bool touches_media_error(VolumeRuntime& v, const HostIo& io);
  void write_timed(std::uint32_t id);
  void flush_timed(std::uint32_t id);
  void free_timed(std::uint32_t id);
  // Saves the hardware state (ArrayContext::save_state) when writes changed the lost data
  // since the last time: before a FLUSH's or a FUA write's reply.
  void save_lost_data_changes();
  // Plans a write of [offset, +length) straight to RAID (data null: zeros), keeping cached
  // blocks coherent; the caller executes `plan`.
  sim::Status plan_write_through(VolumeRuntime& v, Id c, std::int64_t offset, std::int64_t length,
                                 const std::uint8_t* data, raid::Plan& plan);
  // Unmaps the whole extents of the range (docs/capacity.md); a fixed volume's are trimmed. A
  // thin extent whose release cannot be committed stays mapped; for a WRITE_ZEROES its zeros are
  // planned into `plan` instead. Errors: plan_write_through's.
  sim::Status unmap(VolumeRuntime& v, const HostIo& io, Id c, raid::Plan& plan);
  void complete(IoCallback& done, sim::Status status, sim::Time submitted, sim::Time at);

  ArrayContext& ctx_;
  ControllerPair& pair_;
  WriteCache& cache_;
  ExtentMover& mover_;
  raid::Plan plan_;  // the plan being built (one at a time: the model is single-threaded)
  raid::Plan ahead_plan_;  // a read-ahead's plan
  raid::Plan bytes_plan_;  // a cache hit's SSD reads of bytes the cache no longer holds (run_read)
  // The read hint_read() last saw: its volume (0: none), map index and offset, for its second
  // step.
  struct HintedRead {
    Id volume_id = 0;
    std::uint32_t index = 0;
    std::int64_t offset_bytes = 0;
  } hinted_read_;
  std::deque<Parked> parked_;
  std::uint64_t lost_changes_saved_ = 0;  // LostBlocks::changes at save_lost_data_changes' last save
  sim::Slab<InFlight> inflight_;  // by the id the timing model's callback names

  // QoS: host I/O waits in the scheduler; its request lives in pending_ (a slab indexed by the
  // scheduler's cookie) from submit() until its completion. The slab holds at most the queued
  // requests (bounded per volume by the scheduler) plus those in the data path (bounded per
  // controller by outstanding_ios_max).
  QosOptions qos_options_;
  std::unique_ptr<qos::Scheduler> qos_;
  sim::Slab<PendingIo> pending_;
  // Per controller (index = controller id − 1), the gate's state, together: each I/O reads and
  // writes it at dispatch, ready_time and completion (as three vectors, two of them of bits,
  // each access was a bit's address worked out from a signed index).
  struct Gate {
    int outstanding = 0;        // I/Os in the data path
    bool waiting_room = false;  // ready_time said "after a completion"
    bool full = false;          // the backlog reached dispatch_backlog_ns
  };
  std::vector<Gate> gates_;
};

}  // namespace afasim::controller
