#include "controller/timing.h"

#include <algorithm>
#include <array>

#include "sim/assert.h"

namespace afasim::controller {

using perf::CpuOp;
using perf::Step;
using sim::Time;

// An SSD's command queue for one kind of command, as a perf::Server: the command is timed by
// the SSD model (datapac::Ssd::schedule) at the time the journey reaches the drive.
class Timing::SsdPort final : public perf::Server {
 public:
  SsdPort(Hardware& hw, int drive, datapac::SsdOp op) : hw_(hw), drive_(drive), op_(op) {}
  [[gnu::hot]] Time admit(Time arrival, std::int64_t bytes, Time /*extra_service_ns*/, std::int64_t address) override {
    return hw_.ssd_command(arrival, drive_, address, bytes, op_);
  }

 private:
  Hardware& hw_;
  int drive_;
  datapac::SsdOp op_;
};

// A controller's cores as one perf::Server for host commands: the command runs on the core
// that can start it first when it gets there — the cores pull host commands from the
// controller's QoS queue (docs/performance-model.md "Host commands and the QoS gate"). What
// is in transit to it (dispatched, not yet at a core) is counted for the gate.
class Timing::HostCores final : public perf::Server {
 public:
  HostCores(perf::ControllerResources& cr, sim::Rng& rng, double rebalance)
      : cr_(cr), rng_(rng), rebalance_(rebalance) {}
  // A host command of `ns` of core time was dispatched: it is on its way to a core.
  void dispatched(Time ns) { transit_ns_ += ns; }
  void set_pull(bool pull) { pull_ = pull; }
  [[gnu::hot]] Time admit(Time arrival, std::int64_t bytes, Time extra_service_ns, std::int64_t address) override {
    transit_ns_ -= extra_service_ns;
    // Pulled: the first core free takes it. Pushed: the core its exchange's interrupt lands
    // on, or for cpu_rebalance_fraction of commands the less busy of that and another.
    perf::Resource& core = pull_ ? perf::ControllerResources::least_busy(cr_.cores, arrival)
                                 : cr_.host_core(rng_, rebalance_, arrival);
    return core.admit(arrival, bytes, extra_service_ns, address);
  }
  // Core time queued or in service on the cores, plus in transit, per core, at `now`.
  Time backlog_ns(Time now) const {
    Time queued = transit_ns_;
    for (const perf::Resource& core : cr_.cores) queued += core.earliest_start(now) - now;
    return queued / static_cast<Time>(cr_.cores.size());
  }

 private:
  perf::ControllerResources& cr_;
  sim::Rng& rng_;
  double rebalance_;
  bool pull_ = true;
  Time transit_ns_ = 0;
};

Timing::Timing(sim::Simulator& sim, Hardware& hw, const perf::ModelParameters& params, int controllers, int datapacs,
               std::int64_t chunk_bytes)
    : sim_(sim), hw_(hw), params_(params), chunk_bytes_(chunk_bytes), flow_(sim), rng_(sim.rng("controller.timing")),
      core_rng_(sim.rng("controller.timing.cores")) {
  destage_queues_.resize(static_cast<std::size_t>(controllers));
  for (int c = 0; c < controllers; ++c) {
    ctl_.push_back(std::make_unique<perf::ControllerResources>(params_, datapacs, "ctrl-" + std::string(1, static_cast<char>('A' + c))));
    host_cores_.push_back(std::make_unique<HostCores>(*ctl_.back(), core_rng_, params_.cpu_rebalance_fraction));
  }
  for (int d = 0; d < hw.drive_count(); ++d) {
    ssd_ports_.push_back(std::make_unique<SsdPort>(hw, d, datapac::SsdOp::kRead));
    ssd_ports_.push_back(std::make_unique<SsdPort>(hw, d, datapac::SsdOp::kWrite));
    ssd_ports_.push_back(std::make_unique<SsdPort>(hw, d, datapac::SsdOp::kTrim));
  }
}

Timing::~Timing() = default;

[[gnu::hot]] Time Timing::cpu(Time ns) {
  // A core's service time varies (interrupt coalescing, locks, cache misses): a fixed part
  // and an exponential part, mean ns, coefficient of variation cpu_service_cv.
  const double cv = params_.cpu_service_cv;
  if (cv <= 0 || ns == 0) return ns;
  return static_cast<Time>(static_cast<double>(ns) * (1.0 - cv + cv * rng_.exponential(1.0)));
}

perf::Server& Timing::host_command(Id c, Time ns) {
  HostCores& cores = host_cores(c);
  cores.dispatched(ns);
  return cores;
}

void Timing::set_cores_pull(Id c, bool pull) { host_cores(c).set_pull(pull); }

Time Timing::cores_free_at(Id c) const {
  // The cores pull host commands, so they stay level: the core time queued on them and on
  // its way to them, spread over the cores, is what a new command would wait for.
  return sim_.now() + host_cores(c).backlog_ns(sim_.now());
}

sim::Time Timing::cores_busy_ns(Id c) const {
  Time busy = 0;
  for (const auto& r : ctl_[static_cast<std::size_t>(c - 1)]->cores) busy += r.stats().busy_ns;
  return busy;
}

// new_req and copy_ops inline at each caller (a host read's and write's are one each): the
// calls and their register saves cost more than the stores.
[[gnu::hot, gnu::always_inline]] inline std::uint32_t Timing::new_req(Id c, std::int64_t length, Done&& done,
                                                                   const Program& program) {
  const std::uint32_t id = reqs_.acquire();
  Req& r = reqs_[id];
  r.done = std::move(done);
  r.c = c;
  r.volume = 0;
  r.cached_write = false;
  r.length = length;
  r.fill = 0;
  r.parity_rows = r.xor_memory_bytes = 0;
  r.reads_issued = false;
  r.read_out_done = false;
  r.ops.clear();
  r.program = program;
  r.pc = 0;
  return id;
}

[[gnu::hot, gnu::always_inline]] inline void Timing::copy_ops(Req& r, const raid::Plan& plan, std::int64_t data_bytes) {
  std::int64_t write_bytes = 0;
  for (const raid::MemberOp& op : plan.ops) {
    const MemberWork m{op.addr.offset_bytes(chunk_bytes_) + op.offset_in_chunk, op.length, op.addr.drive,
                       static_cast<std::uint8_t>(op.op), op.phase};
    // stable_emplace_back is forced inline and never grows (push_back's body is a call GCC
    // inlines or not as the unity batch's size goes: 31 instructions a read when not).
    if (!r.ops.stable_emplace_back(m)) push_op_growing(r, m);
    if (op.op == raid::MemberOpKind::kWrite) write_bytes += op.length;
  }
  r.parity_rows = plan.parity_rows;
  // RAID 5: the XOR engine reads the sources from DRAM and writes the parity into it (what
  // the plan writes beyond the data is parity).
  if (plan.parity_rows > 0) r.xor_memory_bytes = plan.xor_bytes + std::max<std::int64_t>(0, write_bytes - data_bytes);
  stats_.member_ops += static_cast<std::int64_t>(plan.ops.size());
  hw_.stats(r.c).backend_ops += static_cast<std::int64_t>(plan.ops.size());
}

// Out of copy_ops' line: a request's operations outgrow its inline room only for plans of
// more than two (a RAID 5 destage, a large I/O); the growth inline made every call save
// registers for it.
[[gnu::cold, gnu::noinline]] void Timing::push_op_growing(Req& r, const MemberWork& m) { r.ops.push_back(m); }

[[gnu::hot]] void Timing::next(std::uint32_t id) {
  for (;;) {
    Req& r = reqs_[id];
    const Stage s = r.program[r.pc++];
    if (s == kEnd) return finish_req(id);
    if (start_stage(id, s)) return;
  }
}

[[gnu::hot]] void Timing::finish_req(std::uint32_t id) {
  Req& r = reqs_[id];
  // The callback runs from the request, which is freed once it returns (a request started
  // meanwhile takes another id): moving it out first was a copy of its storage and a
  // destruction more per request.
  r.done(sim_.now());
  r.done.reset();
  r.ops.clear();
  reqs_.release(id);
}

[[gnu::hot]] bool Timing::start_phase(std::uint32_t id, int phase) {
  Req& r = reqs_[id];
  int n = 0;
  bool has_phase1 = false;
  for (const MemberWork& m : r.ops) {
    n += m.phase == phase;
    has_phase1 |= m.phase == 1;
  }
  if (n == 0) return false;
  // One branch more than the operations, released once the last is started: no journey that
  // ends at once can finish the request while its operations are being started. One operation
  // needs no join: its journey's end resumes the request (at the same point: it starts last).
  const std::uint32_t join = n == 1 ? 0 : flow_.join(n + 1, resume(id));
  const PhaseStart p{id, phase, n, has_phase1, join, 0};
  if (!deferred_ops_.empty()) defer_ops(p, 0);  // behind the phases already waiting
  else if (const std::size_t stopped = start_ops(p); stopped != kAllStarted) defer_ops(p, stopped);
  return true;
}

[[gnu::hot]] std::size_t Timing::start_ops(const PhaseStart& p) {
  const std::uint32_t id = p.id;
  const int phase = p.phase, n = p.n;
  const bool single = n == 1, has_phase1 = p.has_phase1;
  Req& r = reqs_[id];
  perf::ControllerResources& cr = resources(r.c);
  const auto branch = [&]() -> Done { return single ? resume(id) : flow_.branch_done(p.join); };
  const perf::CpuCosts& costs = params_.cpu;
  for (std::size_t i = p.next_op; i < r.ops.size(); ++i) {
    const MemberWork m = r.ops[i];
    if (m.phase != phase) continue;
    // The journeys in flight stay under the bound perf::Flow holds: the rest of the phase
    // starts as journeys end (hostile round 19: ~12 pipelined 4 GiB NBD WRITE_ZEROES, or fio
    // bs=1g at iodepth 64, planned more strips at once than that and aborted the server).
    if (flow_.in_flight() >= kJourneyBudget) return i;
    const auto dp = static_cast<std::size_t>(datapac_of(m.drive));
    perf::Server* ssd = ssd_ports_[static_cast<std::size_t>(m.drive) * 3 + m.kind].get();
    perf::Resource& core = cr.drive_core(m.drive);
    if (m.kind == static_cast<std::uint8_t>(raid::MemberOpKind::kRead)) {
      // The core issues the SAS command (a host read's core did it with the command:
      // kReadCommand); the SSD; the SAS path back cut through into DRAM (one DMA).
      if (phase == 0 && r.reads_issued && n == 1 && m.length == r.length && !has_phase1) {
        read_through(id, [this, id] { next(id); });  // the one operation: it resumes the request
        continue;
      }
      const Step back{&cr.backend_from[dp], m.length, 0, 0, {&cr.memory, nullptr, nullptr}};
      const Step on_ssd{ssd, m.length, 0, m.address};
      if (phase == 0 && r.reads_issued) {
        const std::array<Step, 2> steps{on_ssd, back};
        flow_.start(steps, branch());
      } else {
        const std::array<Step, 3> steps{Step{&core, 0, cpu(costs.ns(CpuOp::kBackendRead, 1, 0))}, on_ssd, back};
        flow_.start(steps, branch());
      }
    } else {
      // The core; DMA out of DRAM cut through onto the SAS path; the SSD.
      const std::int64_t bytes = m.kind == static_cast<std::uint8_t>(raid::MemberOpKind::kTrim) ? 0 : m.length;
      const std::array<Step, 3> steps{Step{&core, 0, cpu(costs.ns(CpuOp::kBackendWrite, 1, 0))},
                                      Step{&cr.memory, bytes, 0, 0, {&cr.backend_to[dp], nullptr}},
                                      Step{ssd, m.length, 0, m.address}};
      flow_.start(steps, branch());
    }
  }
  if (!single) flow_.branch_done(p.join)(sim_.now());
  return kAllStarted;
}

void Timing::defer_ops(PhaseStart p, std::size_t next_op) {
  p.next_op = next_op;
  deferred_ops_.push_back(p);
  arm_deferred_pump();
}

void Timing::arm_deferred_pump() {
  if (deferred_pump_armed_) return;
  deferred_pump_armed_ = true;
  sim_.at(sim_.now() + kDeferredPollNs, [this] {
    deferred_pump_armed_ = false;
    while (!deferred_ops_.empty() && flow_.in_flight() < kJourneyBudget) {
      PhaseStart p = deferred_ops_.front();
      deferred_ops_.pop_front();
      if (const std::size_t stopped = start_ops(p); stopped != kAllStarted) {
        p.next_op = stopped;
        deferred_ops_.push_front(p);  // first in, first served
      }
    }
    if (!deferred_ops_.empty()) arm_deferred_pump();
  });
}

[[gnu::hot]] int Timing::phase0_reads(const Req& r) const {
  int reads = 0;
  for (const MemberWork& m : r.ops) {
    if (m.phase != 0 || m.kind != static_cast<std::uint8_t>(raid::MemberOpKind::kRead)) continue;
    ++reads;
    hw_.prefetch_ssd_read(m.drive, m.address);  // the SSD model is reached after the core
  }
  return reads;
}

[[gnu::hot]] bool Timing::start_stage(std::uint32_t id, Stage s) {
  Req& r = reqs_[id];
  perf::ControllerResources& cr = resources(r.c);
  const perf::CpuCosts& costs = params_.cpu;
  const Time now = sim_.now();
  switch (s) {
    case kReadCommand:
      // The core that takes the command maps it and posts its SAS reads in the same run
      // (phase 0's member reads then start at the SSDs).
      read_command(id, phase0_reads(r), [this, id] { next(id); });
      return true;
    case kPhase0: return start_phase(id, 0);
    case kPhase1: return start_phase(id, 1);
    case kParity: {
      if (r.parity_rows == 0) return false;
      const int drive = r.ops.empty() ? 0 : r.ops.front().drive;
      const std::array<Step, 2> steps{
          Step{&cr.drive_core(drive), 0, cpu(costs.ns(CpuOp::kParity, r.parity_rows, r.xor_memory_bytes))},
          Step{&cr.memory, r.xor_memory_bytes, 0}};
      flow_.start(steps, resume(id));
      return true;
    }
    case kFillDone:
      fill_done(r);
      return false;
    case kReadOut: {
      if (r.read_out_done) return false;  // folded into the SSD read's DMA (start_phase)
      // DRAM to the FC HBA cut through onto the wire (one DMA), then the command frame's
      // latency (kReadCommand).
      const std::array<Step, 1> steps{
          Step{&cr.memory, r.length, 0, 0, {&cr.port_out(now), nullptr}, params_.host_port_latency_ns}};
      flow_.start(steps, resume(id));
      return true;
    }
    case kWriteIn:
      write_in(id);
      return true;
    case kMirror:
      write_mirror(id);
      return true;
    case kAck:
      // The acknowledgement frame: its FC latency, a pure delay (kReadCommand).
      sim_.at(now + params_.host_port_latency_ns, [this, id] { next(id); });
      return true;
    case kDestageEnd: {
      DestageQueue& q = destage_queues_[static_cast<std::size_t>(r.c - 1)];
      if (q.waiting.empty()) {
        --q.running;
      } else {  // its place goes to the next, started as an event of its own
        const std::uint32_t waiting = q.waiting.front();
        q.waiting.pop_front();
        sim_.at(now, [this, waiting] { next(waiting); });
      }
      return false;
    }
    case kEnd: break;
  }
  return false;
}

// ---------------------------------------------------------------------------------------
// Requests

[[gnu::hot]] Timing::ReadStart Timing::begin_read(Id c, Id volume, std::int64_t offset, std::int64_t length, bool in_write_cache) {
  perf::ControllerResources& cr = resources(c);
  ReadStart rs;
  const perf::CacheLookup look = cr.cache.lookup(volume, offset, length);
  rs.hit = in_write_cache || look.all_present;
  const perf::ReadAhead ra = cr.streams.on_read(volume, offset, length);
  rs.ahead_offset = ra.offset;
  rs.ahead_length = ra.length;
  if (rs.hit && !in_write_cache) rs.fills = look.fills;
  return rs;
}

void Timing::read_ahead(Id c, Id volume, std::int64_t offset, std::int64_t length, const raid::Plan& plan) {
  perf::ControllerResources& cr = resources(c);
  // Every segment of the window already held or coming in with another fill: nothing to read
  // (a stream the detector evicted and declared again asked for its old window, and each
  // host read behind it paid up to 4 MiB of SSD and DRAM work; model review 17: 16 sequential
  // readers on a LUN ran at 4,124 IOPS against 140,623 random).
  const std::uint32_t fill = cr.cache.start_fill(volume, offset, length);
  if (fill == 0) return;
  const std::uint32_t id = new_req(c, length, [](Time) {}, {kPhase0, kFillDone});
  Req& r = reqs_[id];
  r.volume = volume;
  r.fill = fill;
  copy_ops(r, plan, 0);
  stats_.read_ahead_bytes += length;
  next(id);
}

[[gnu::hot]] void Timing::host_read(Id c, Id volume, std::int64_t offset, std::int64_t length, const ReadStart& start,
                       const raid::Plan& plan, Done&& done) {
  if (start.hit) {
    // The command and the fills in progress that bring in its segments, in parallel; then
    // DRAM to the HBA.
    ++stats_.read_cache_hits;
    const std::uint32_t id = new_req(c, length, std::move(done), {kReadOut});
    const std::uint32_t join = flow_.join(1 + static_cast<int>(start.fills.size()), resume(id));
    perf::ControllerResources& cr = resources(c);
    for (std::uint32_t f : start.fills) cr.cache.wait(f, [this, join] { flow_.branch_done(join)(sim_.now()); });
    const perf::CpuCosts& costs = params_.cpu;
    const Time ns = cpu(costs.ns(CpuOp::kHostRead, 1, length) + costs.ns(CpuOp::kCacheHit, 1, length));
    const std::array<Step, 1> steps{Step{&host_command(c, ns), 0, ns}};  // the frame's latency: kReadOut
    flow_.start(steps, flow_.branch_done(join));
    return;
  }
  // A degraded read's reconstruction XOR is priced with its reads (no kParity); phase 1 only
  // when the plan has writes after its reads.
  const bool one = plan.ops.size() == 1 && plan.ops.front().op == raid::MemberOpKind::kRead &&
                   plan.ops.front().phase == 0 && plan.ops.front().length == length;
  // (one: a single phase 0 read, so no phase 1)
  const bool phase1 = !one && std::any_of(plan.ops.begin(), plan.ops.end(), [](const raid::MemberOp& op) { return op.phase == 1; });
  const Program program = phase1 ? Program{kReadCommand, kPhase0, kPhase1, kFillDone, kReadOut}
                                 : Program{kReadCommand, kPhase0, kFillDone, kReadOut};
  const std::uint32_t id = new_req(c, length, std::move(done), program);
  Req& r = reqs_[id];
  r.volume = volume;
  r.fill = resources(c).cache.start_fill(volume, offset, length);
  copy_ops(r, plan, 0);
  r.parity_rows = 0;
  if (one) return read_one(id);
  next(id);
}

[[gnu::hot]] void Timing::fill_done(Req& r) {
  if (r.fill != 0) resources(r.c).cache.fill_done(r.fill);
  r.fill = 0;
}

// The stages below (kReadCommand, a phase's one read-through, kWriteIn, kMirror: what every
// random read miss and cached write runs) admit their steps straight from the request, each at
// its arrival from an event at that time (perf::Flow's contract), as a journey would: the same
// admissions, in the same order, at the same times, and the same events. What a journey adds
// (its 64-byte steps copied into a slab entry, a callback built and moved, an indirect call
// per resource) was the largest single stall of a random read (a third of Flow::advance's
// samples, docs/performance.md "eighth session"). A step that takes no time chains without an
// event, as in Flow. Each resumes the request's program (next) when it ends.
template <typename F>
[[gnu::hot]] inline void Timing::at_or_now(Time t, F&& f) {
  if (t > sim_.now()) sim_.at(t, std::forward<F>(f));
  else f();
}

// kReadCommand: a core maps the command and posts its `reads` SAS reads (one random draw of
// its service time). The command frame's FC latency is a pure delay, taken on the way out
// (kReadOut).
template <typename F>
[[gnu::hot]] void Timing::read_command(std::uint32_t id, int reads, F&& then) {
  Req& r = reqs_[id];
  r.reads_issued = true;
  const perf::CpuCosts& costs = params_.cpu;
  const Time ns =
      cpu(costs.ns(CpuOp::kHostRead, 1, r.length) + costs.ns(CpuOp::kBackendRead, reads, 0));
  HostCores& cores = host_cores(r.c);
  cores.dispatched(ns);
  at_or_now(cores.admit(sim_.now(), 0, ns, 0), std::forward<F>(then));
}

// A host read miss that is one SSD read of its whole length (every RAID 10 4K read): its
// program's kReadCommand and its phase 0 (a read-through) chained without the program's
// dispatch (start_stage, start_phase's count and join).
[[gnu::hot]] void Timing::read_one(std::uint32_t id) {
  Req& r = reqs_[id];
  hw_.prefetch_ssd_read(r.ops.front().drive, r.ops.front().address);  // as phase0_reads does
  // Then the rest of its program, {kFillDone, kReadOut}: the segment is in, and the read out
  // was folded into the read-through's DMA.
  read_command(id, 1, [this, id] {
    read_through(id, [this, id] {
      fill_done(reqs_[id]);
      finish_req(id);
    });
  });
}

// The request's one member read, of its whole length: the SSD read, then its data on to the
// host in the same DMA pass (kReadOut folded in). The FC port is chosen when the SSD read
// starts.
template <typename F>
[[gnu::hot]] void Timing::read_through(std::uint32_t id, F then) {
  Req& r = reqs_[id];
  AFASIM_ASSERT(r.ops.size() == 1, "Timing: a read-through of a request of several operations");
  const MemberWork& m = r.ops.front();
  r.read_out_done = true;
  r.port_out = &resources(r.c).port_out(sim_.now());
  SsdPort& ssd = *ssd_ports_[static_cast<std::size_t>(m.drive) * 3 + m.kind];
  const Time t = ssd.admit(sim_.now(), m.length, 0, m.address);
  at_or_now(t, [this, id, then] { read_through_dma(id, then); });
}

// The SSD read's data cut through the SAS path and DRAM to the FC port, then the command
// frame's latency; its read-cache segment counts as filled when this ends (kFillDone).
template <typename F>
[[gnu::hot]] void Timing::read_through_dma(std::uint32_t id, F then) {
  Req& r = reqs_[id];
  perf::ControllerResources& cr = resources(r.c);
  const std::int64_t length = r.ops.front().length;
  const Time now = sim_.now();
  const auto dp = static_cast<std::size_t>(datapac_of(r.ops.front().drive));
  // The read-cache node the DMA's end marks filled (fill_done), cold after the SSD read.
  cr.cache.prefetch_fill(r.fill);
  Time t = cr.backend_from[dp].admit(now, length);
  t = std::max(t, cr.memory.admit(now, length));
  t = std::max(t, cr.memory.admit(now, length));
  t = std::max(t, r.port_out->admit(now, length));
  at_or_now(t + params_.host_port_latency_ns, then);
}

void Timing::host_write(Id c, Id volume, std::int64_t offset, std::int64_t length, const raid::Plan& plan, Done&& done) {
  resources(c).cache.write(volume, offset, length);
  const std::uint32_t id = new_req(c, length, std::move(done), {kPhase0, kWriteIn, kMirror});
  Req& r = reqs_[id];
  r.cached_write = true;
  copy_ops(r, plan, 0);  // reads filling partial blocks, if any
  next(id);
}

// kWriteIn: the data off the wire cut through into DRAM (one DMA), then a core (host write
// and mirror costs). The core time is drawn, the port chosen and the command counted
// in transit to the cores when the stage starts.
[[gnu::hot]] void Timing::write_in(std::uint32_t id) {
  Req& r = reqs_[id];
  perf::ControllerResources& cr = resources(r.c);
  const perf::CpuCosts& costs = params_.cpu;
  const Time now = sim_.now();
  // kMirror is the write path's firmware work beyond the command, fitted as one residual
  // (cpu_mirror_ns: the RAID 10 4K write figure less the command and two back-end writes):
  // the cache pages and their tracking, and the mirror when there is one. Every write pays it;
  // until model review 17 only cached ones did, and losing the cache (write-through, FUA, a
  // cut link, degraded supercaps) made 4K random writes 28 % faster.
  const Time ns = costs.ns(CpuOp::kHostWrite, 1, r.length) + costs.ns(CpuOp::kMirror, 1, r.length);
  r.core_ns = cpu(ns);
  perf::Resource& port = cr.port_in(now);
  host_cores(r.c).dispatched(r.core_ns);
  Time t = port.admit(now, r.length);
  t = std::max(t, cr.memory.admit(now, r.length));
  at_or_now(t, [this, id] { write_core(id); });
}

// kWriteIn's second step: a core.
[[gnu::hot]] void Timing::write_core(std::uint32_t id) {
  Req& r = reqs_[id];
  const Time t = host_cores(r.c).admit(sim_.now(), 0, r.core_ns, 0);
  at_or_now(t, [this, id] { next(id); });
}

// kMirror: DMA out of DRAM over the link into the peer's DRAM (one cut-through transfer),
// then the acknowledgement frame's FC latency (a pure delay, as kAck).
[[gnu::hot]] void Timing::write_mirror(std::uint32_t id) {
  Req& r = reqs_[id];
  perf::ControllerResources& cr = resources(r.c);
  perf::ControllerResources& peer = resources(r.c == 1 ? 2 : 1);
  const Time now = sim_.now();
  Time t = cr.memory.admit(now, r.length);
  t = std::max(t, cr.mirror_out.admit(now, r.length));
  t = std::max(t, peer.memory.admit(now, r.length));
  at_or_now(t + params_.host_port_latency_ns, [this, id] { next(id); });
}

void Timing::write_through(Id c, Id volume, std::int64_t offset, std::int64_t length, const raid::Plan& plan,
                           Done done) {
  resources(c).cache.write(volume, offset, length);
  const std::uint32_t id = new_req(c, length, std::move(done), {kWriteIn, kPhase0, kParity, kPhase1, kAck});
  copy_ops(reqs_[id], plan, length);
  next(id);
}

void Timing::destage(Id c, const raid::Plan& plan, std::int64_t data_bytes, int max_in_flight, Done done) {
  const std::uint32_t id = new_req(c, data_bytes, std::move(done), {kPhase0, kParity, kPhase1, kDestageEnd});
  copy_ops(reqs_[id], plan, data_bytes);
  DestageQueue& q = destage_queues_[static_cast<std::size_t>(c - 1)];
  if (q.running >= std::max(1, max_in_flight)) {
    q.waiting.push_back(id);
    return;
  }
  ++q.running;
  next(id);
}

void Timing::background(Id c, const raid::Plan& plan, Done done) {
  const std::uint32_t id = new_req(c, 0, std::move(done), {kPhase0, kParity, kPhase1});
  copy_ops(reqs_[id], plan, 0);
  next(id);
}

void Timing::forget_volume(Id volume) {
  for (auto& cr : ctl_) {
    cr->cache.drop_volume(volume);
    cr->streams.drop_volume(volume);
  }
}

}  // namespace afasim::controller
