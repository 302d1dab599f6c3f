// controller::Timing — the array's own timing of host I/O and destage on the performance
// model's resources (perf/, docs/performance-model.md): per controller the cores (one queue
// per core), DRAM/DMA bandwidth, the FC host ports, the link to the peer that carries the
// cache mirror, the SAS paths to each DataPac, the read cache with stream detection and
// read-ahead; then the SSDs of Hardware (datapac::Ssd, the SSD model) behind a perf::Server
// adapter. Every step is admitted to its resource from an event at the simulated time the
// request gets there (perf::Flow), so each resource serves its work in arrival order.
//
// The data path decides what happens (the RAID engine's plan, the write cache's blocks; the
// bytes move at submission, as before); Timing decides when: host_read(), host_write(),
// write_through() and destage() start a request's journey and call `done(t)` at the time it
// completes. The parameters come from config/calibration/<system>.json (none in code).
//
// Costs: one event per step that takes time, a slab entry per request (reused), no heap
// allocation per request in steady state. Not thread-safe (model thread).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <deque>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "controller/hardware.h"
#include "controller/objects.h"
#include "perf/array_model.h"
#include "perf/calibration.h"
#include "perf/flow.h"
#include "raid/plan.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/slab.h"

namespace afasim::controller {

// Counters of the timing model, for reports and tests.
struct TimingStats {
  std::int64_t read_cache_hits = 0;     // host reads served from DRAM (read cache or write cache)
  std::int64_t read_ahead_bytes = 0;    // bytes the stream detector had read ahead
  std::int64_t member_ops = 0;          // SSD commands timed (host reads, write-through, destage, read-ahead)
};

class Timing {
 public:
  using Done = perf::Flow::Done;

  // `params`: the loaded calibration's model (REQUIRES: validated by perf::load_calibration).
  Timing(sim::Simulator& sim, Hardware& hw, const perf::ModelParameters& params, int controllers, int datapacs,
         std::int64_t chunk_bytes);
  ~Timing();

  // --- Reads ---------------------------------------------------------------------------
  // What a host read of [offset, +length) of `volume` on controller `c` finds: whether its
  // data is in DRAM (`in_write_cache`: the write cache holds all of it) and what the stream
  // detector wants read ahead (`ahead_*`, length 0: nothing). REQUIRES: a host_read() follows.
  struct ReadStart {
    bool hit = false;
    std::int64_t ahead_offset = 0, ahead_length = 0;
    std::vector<std::uint32_t> fills;  // a hit waits for these fills in progress
  };
  ReadStart begin_read(Id c, Id volume, std::int64_t offset, std::int64_t length, bool in_write_cache);
  // A read of `offset` of `volume` on `c` is coming (begin_read after the QoS gate and the
  // RAID plan): start loading its read-cache slot and the volume's streams. Speed only.
  void prefetch_read(Id c, Id volume, std::int64_t offset) {
    perf::ControllerResources& cr = resources(c);
    cr.cache.prefetch(volume, offset);
    cr.streams.prefetch(volume);
  }
  // A read or write of `offset` of `volume` on `c` is coming: start loading its read-cache slot.
  void prefetch_cache_slot(Id c, Id volume, std::int64_t offset) { resources(c).cache.prefetch(volume, offset); }
  // Reads ahead [offset, +length) of `volume` (the caller's plan of it): its segments fill.
  // The part of a read-ahead window the controller's read cache does not hold or fill yet
  // (perf::ReadCache::unheld_span): {offset, 0} when none.
  std::pair<std::int64_t, std::int64_t> read_ahead_span(Id c, Id volume, std::int64_t offset, std::int64_t length) {
    return resources(c).cache.unheld_span(volume, offset, length);
  }
  void read_ahead(Id c, Id volume, std::int64_t offset, std::int64_t length, const raid::Plan& plan);
  // The host read's journey: FC command, a core, then (a miss) `plan`'s member reads into
  // DRAM or (a hit) waiting for any fill in progress, then DRAM to the HBA and the wire.
  void host_read(Id c, Id volume, std::int64_t offset, std::int64_t length, const ReadStart& start,
                 const raid::Plan& plan, Done&& done);

  // --- Writes --------------------------------------------------------------------------
  // A write-back write: FC in, DMA into DRAM, a core (command and mirroring), DMA out over the
  // link into the peer's DRAM, the acknowledgement. `plan`: fills of partial blocks (read
  // first), usually empty.
  void host_write(Id c, Id volume, std::int64_t offset, std::int64_t length, const raid::Plan& plan, Done&& done);
  // A write-through write: FC in, DMA into DRAM, a core, `plan`'s member operations, the
  // acknowledgement.
  void write_through(Id c, Id volume, std::int64_t offset, std::int64_t length, const raid::Plan& plan, Done done);
  // A destage of `data_bytes` of dirty data: `plan`'s member operations (RAID 5: reads, the
  // parity update on a core and the XOR engine's DRAM traffic, then writes). At most
  // `max_in_flight` of controller `c`'s destages run at once (the cache's destage_ops_max);
  // more wait in arrival order. A FLUSH or destage_all of a full cache issues hundreds of
  // thousands at once: their journeys all in flight passed perf::Flow's bound and aborted.
  void destage(Id c, const raid::Plan& plan, std::int64_t data_bytes, int max_in_flight, Done done);
  // Background RAID work that is not a destage (a rebuild's piece: its survivors' reads, the
  // reconstruction's XOR, the replacement's write): `plan`'s phase 0 member operations, the
  // parity work of its parity_rows and xor_bytes on a core and the XOR engine's DRAM traffic
  // (what phase 1 writes counts as XOR output), then phase 1; each member operation costs a
  // core its SAS command and crosses DRAM, as a destage's do. The caller bounds how many run.
  void background(Id c, const raid::Plan& plan, Done done);
  // Controller `c`'s destages running, and waiting for a place (destage()).
  int destages_running(Id c) const { return destage_queues_[static_cast<std::size_t>(c - 1)].running; }
  std::size_t destages_waiting(Id c) const { return destage_queues_[static_cast<std::size_t>(c - 1)].waiting.size(); }
  // A volume was deleted, or its data changed behind the cache (trim): forget its segments.
  void forget_volume(Id volume);

  // When one of controller `c`'s cores frees for work arriving now (the QoS dispatcher's
  // backlog test), with the cores pulling host commands.
  sim::Time cores_free_at(Id c) const;
  // How controller `c`'s host commands find a core: pulled (the first free core takes each:
  // the QoS gate keeps the cores' queues short and level while a reservation needs it) or
  // pushed (each to its interrupt core, cpu_rebalance_fraction of them to the less busy of
  // two: uneven per-core queues, the latency spread). Pulled at first.
  void set_cores_pull(Id c, bool pull);
  // Core time handed out on controller `c`'s cores so far (utilisation).
  sim::Time cores_busy_ns(Id c) const;
  const TimingStats& stats() const { return stats_; }
  const perf::ModelParameters& params() const { return params_; }
  perf::ControllerResources& resources(Id c) { return *ctl_[static_cast<std::size_t>(c - 1)]; }
  const perf::ControllerResources& resources(Id c) const { return *ctl_[static_cast<std::size_t>(c - 1)]; }
  perf::Flow& flow() { return flow_; }
  const perf::Flow& flow() const { return flow_; }

 private:
  // One SSD command queue as a perf::Server: admit() times the command on the SSD model.
  class SsdPort;
  // A controller's cores as the server of host commands (the first free core takes one).
  class HostCores;
  struct MemberWork {
    std::int64_t address, length;
    int drive;
    std::uint8_t kind;   // raid::MemberOpKind
    std::uint8_t phase;
  };
  // What a request does, in order (Req::program).
  enum Stage : std::uint8_t {
    kReadCommand,  // a core: host read cost and its SAS reads' issue (a miss; a hit's is in host_read)
    kPhase0,       // member operations of phase 0 (reads), in parallel
    kParity,       // RAID 5 parity update: a core, then the XOR engine's DRAM traffic
    kPhase1,       // member operations of phase 1 (writes), in parallel
    kFillDone,     // the read's segments are in the read cache
    kReadOut,      // DRAM to the FC HBA and the wire (one DMA), then the command frame's latency
    kWriteIn,      // FC data in, DMA into DRAM, a core (host write cost, + mirror if cached)
    kMirror,       // DMA out of DRAM over the link into the peer's DRAM, then the ack frame's latency
    kAck,          // the acknowledgement frame's FC latency (write-through)
    kDestageEnd,   // a destage's place frees: its controller's next waiting destage starts
    kEnd
  };
  // A request's stages, then kEnd. Built from a brace list at the call site, where the list
  // is constant: new_req copies 8 bytes (a copy stage by stage from an initializer_list was
  // ~20 instructions per request).
  struct Program {
    std::array<Stage, 8> stages;
    constexpr Program() { stages.fill(kEnd); }
    [[gnu::always_inline]] constexpr Program(std::initializer_list<Stage> list) {  // NOLINT: implicit
      AFASIM_ASSERT(list.size() < stages.size(), "Timing: program too long");
      stages.fill(kEnd);
      std::copy(list.begin(), list.end(), stages.begin());
    }
    Stage operator[](int i) const { return stages[static_cast<std::size_t>(i)]; }
  };
  // Laid out for a random read miss, whose request is cold at each of its events (the SSD
  // read's start and its DMA, read_through and read_through_dma): line 0 what its end runs
  // (the callback, the read-cache fill), line 1 the scalars both events read (its controller,
  // its FC port), line 2 its member operation; 64-byte aligned, as sim::Slab places it. Laid
  // out in declaration order, 224 bytes from a line's start each, a read touched 4 or 5 lines
  // an event (docs/performance.md "thirty-ninth session").
  struct alignas(64) Req {
    Done done;
    std::uint32_t fill = 0;
    int pc = 0;
    Id c = 1;
    std::int64_t length = 0;
    perf::Resource* port_out = nullptr;  // read_through: the FC port its DMA goes out of
    Program program;
    bool reads_issued = false;  // kReadCommand's core posted phase 0's SAS reads
    bool read_out_done = false; // kReadOut folded into the one SSD read's DMA
    bool cached_write = false;
    Id volume = 0;
    sim::Time core_ns = 0;               // write_in: the host write's core time
    std::int64_t parity_rows = 0, xor_memory_bytes = 0;
    // Inline up to two (a host read's one, a RAID 10 write's two): no second allocation to
    // fetch on the request's events.
    boost::container::small_vector<MemberWork, 2> ops;
  };
  std::uint32_t new_req(Id c, std::int64_t length, Done&& done, const Program& program);
  void copy_ops(Req& r, const raid::Plan& plan, std::int64_t data_bytes);
  // Appends `m` to r.ops when they have no room left (copy_ops).
  void push_op_growing(Req& r, const MemberWork& m);
  // Runs request `id`'s stages from its program counter until one waits (then its journey's
  // end calls next(id) again) or the program ends (then done(now)).
  void next(std::uint32_t id);
  // Starts the stage; false when it had nothing to do (the program moves on at once).
  bool start_stage(std::uint32_t id, Stage s);
  bool start_phase(std::uint32_t id, int phase);
  // A phase's operations being started: `n` of them in `phase`, joined by `join` (0 when n is
  // 1), from r.ops[next_op] on.
  struct PhaseStart {
    std::uint32_t id;
    int phase, n;
    bool has_phase1;
    std::uint32_t join;
    std::size_t next_op;
  };
  static constexpr std::size_t kAllStarted = ~std::size_t{0};
  // Journeys in flight at most (half perf::Flow::kMaxJourneys); past it a phase's other
  // operations wait, and are looked at again every kDeferredPollNs.
  static constexpr std::size_t kJourneyBudget = perf::Flow::kMaxJourneys / 2;
  static constexpr sim::Time kDeferredPollNs = 10'000;
  // Starts p's operations from p.next_op; kAllStarted, or the index it stopped at (the budget).
  std::size_t start_ops(const PhaseStart& p);
  void defer_ops(PhaseStart p, std::size_t next_op);
  void arm_deferred_pump();
  // Phase 0's member reads of `r` (what a host read's command core posts); starts loading the
  // SSD model's state each will touch after the core. Speed only.
  int phase0_reads(const Req& r) const;
  // The stages every random read miss and cached write runs, their steps admitted straight
  // from the request rather than through a perf::Flow journey (the same admissions, random
  // draws and events, in the same order); each resumes the program (next) when it ends.
  // kReadCommand: a core maps the host read and posts its `reads` SAS reads (one random draw
  // of the core's service time); then `then` (next(id), or read_one's read-through).
  template <typename F>
  void read_command(std::uint32_t id, int reads, F&& then);
  // A host read miss that is one SSD read of its whole length (RAID 10, a RAID 5 read within
  // a strip): kReadCommand and kPhase0 chained without the program's dispatch.
  void read_one(std::uint32_t id);
  // A phase 0 of one SSD read of the request's whole length (RAID 10, a RAID 5 read within a
  // strip) whose data goes on to the host in the same DMA pass (SAS path, DRAM in and out, the
  // FC port: kReadOut's step folded in): the SSD, then read_through_dma. REQUIRES: one operation.
  // `then` runs when the DMA ends (next(id), or read_one's end).
  template <typename F>
  void read_through(std::uint32_t id, F then);
  template <typename F>
  void read_through_dma(std::uint32_t id, F then);
  // kWriteIn (the FC port and DRAM, then a core: write_core) and kMirror (DRAM, the link and
  // the peer's DRAM, then the acknowledgement frame's latency).
  void write_in(std::uint32_t id);
  void write_core(std::uint32_t id);
  void write_mirror(std::uint32_t id);
  // Runs `f` now if `t` is not later than now, else from an event at `t`.
  template <typename F>
  void at_or_now(sim::Time t, F&& f);
  // kFillDone: the request's read-cache segments are in.
  void fill_done(Req& r);
  void finish_req(std::uint32_t id);
  Done resume(std::uint32_t id) {
    return [this, id](sim::Time) { next(id); };
  }
  // A core's service time: the mean varied by cpu_service_cv (docs/performance-model.md).
  sim::Time cpu(sim::Time ns);
  // Where a host command of `ns` core time on controller `c` runs (HostCores), counted as in
  // transit until it gets there.
  perf::Server& host_command(Id c, sim::Time ns);
  // Controller `c`'s cores as the server of its host commands.
  HostCores& host_cores(Id c) const { return *host_cores_[static_cast<std::size_t>(c - 1)]; }
  int datapac_of(int drive) const { return hw_.datapac_of(drive) - 1; }

  sim::Simulator& sim_;
  Hardware& hw_;
  perf::ModelParameters params_;
  std::int64_t chunk_bytes_;
  perf::Flow flow_;
  sim::Rng rng_;
  sim::Rng core_rng_;  // interrupt cores of pushed host commands
  std::vector<std::unique_ptr<perf::ControllerResources>> ctl_;
  // Per controller: destages running, and those waiting for a place (destage()).
  struct DestageQueue {
    int running = 0;
    std::deque<std::uint32_t> waiting;
  };
  std::vector<DestageQueue> destage_queues_;
  std::vector<std::unique_ptr<SsdPort>> ssd_ports_;  // [drive * 3 + kind]
  std::vector<std::unique_ptr<HostCores>> host_cores_;  // per controller
  // Stable references (a journey may end inside another's start).
  sim::Slab<Req> reqs_;
  // Phases whose other operations wait for the budget, first come first started: at most one
  // per request in flight (a request's phases run one after another).
  std::deque<PhaseStart> deferred_ops_;
  bool deferred_pump_armed_ = false;
  TimingStats stats_;
};

}  // namespace afasim::controller
