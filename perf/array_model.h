// perf::ArrayModel — the performance model of a dual-controller array on its own: host reads
// and writes go through the resources of perf::ControllerResources and a stand-in back end,
// step by step in virtual time (perf::Flow), with the read cache, read-ahead, mirrored write
// cache, write coalescing and destage (docs/performance-model.md).
//
// This is the mechanism in one place, testable without the controller classes: the
// controller pair (issue 11) instantiates the same ControllerResources and path builders,
// with the raid/ engine's plans and the SSD model of datapac/ in place of the stand-ins here
// (`SsdStandIn`: k parallel units with a service time and a bandwidth, and `stripe_of`: a
// hash placement of rows on drives). Every host I/O is timed from its arrival to its
// completion through queues served in arrival order; nothing is reserved ahead of time.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "perf/calibration.h"
#include "perf/destage.h"
#include "perf/flow.h"
#include "perf/read_cache.h"
#include "perf/resource.h"
#include "sim/histogram.h"
#include "sim/rng.h"
#include "sim/simulator.h"

namespace afasim::perf {

// An SSD as the array model sees it until the SSD model is wired in (assumption values:
// config/ssds/xio-g3-sas-1600gb.json's read latency, IOPS and bandwidth).
struct SsdStandIn {
  int read_units = 12;                      // 130,000 IOPS × 90 µs ≈ 12 reads in flight
  sim::Time read_ns = 90'000;
  std::int64_t read_bytes_per_second = 1'000'000'000;
  sim::Time write_ns = 28'500;              // 1 / 35,000 IOPS steady-state writes
  std::int64_t write_bytes_per_second = 700'000'000;
};

struct ArrayModelOptions {
  ModelParameters params;
  RowLayout layout = RowLayout::kRaid10;
  int datapacs = 2;
  int drives_per_datapac = 20;
  int raid5_data_strips = 4;                      // RAID 5 4+1 (docs/raid.md)
  std::int64_t strip_bytes = 64 << 10;            // assumption, as raid/'s default layout
  std::int64_t write_cache_bytes = 4LL << 30;     // dirty data per controller (docs/write-cache.md)
  double destage_high_watermark = 0.5;            // destage partial rows above this fill
  SsdStandIn ssd;
};

// Per-controller resources (docs/performance-model.md "Resources").
class ControllerResources {
 public:
  ControllerResources(const ModelParameters& p, int datapacs, const std::string& name);
  // The cores: one queue per core (cpu_per_core_queues: each FC exchange queue and each SAS
  // completion queue bound to one core, as lockless storage firmware does), or one shared
  // queue served by all of them.
  std::vector<Resource> cores;
  Resource memory;
  Resource mirror_out;  // this controller → its peer
  std::vector<Resource> ports_in, ports_out;
  std::vector<Resource> backend_to, backend_from;  // per DataPac
  ReadCache cache;
  StreamDetector streams;
  // The host port that would start work arriving now soonest (a host multipaths over the
  // owner's ports: ALUA active/optimised).
  Resource& port_in(sim::Time now) { return least_busy(ports_in, now); }
  // The core that runs a host command: the core its exchange's interrupt lands on (random),
  // or, for a fraction `rebalance` of commands, the less busy of that core and another
  // (cpu_rebalance_fraction: the firmware's work stealing).
  Resource& host_core(sim::Rng& rng, double rebalance, sim::Time now);
  // The core that issues and completes SAS commands to `drive`.
  Resource& drive_core(int drive) { return cores[static_cast<std::size_t>(drive) % cores.size()]; }
  Resource& port_out(sim::Time now) { return least_busy(ports_out, now); }
  // The one of `rs` that would start work arriving at `now` first (the lowest index on ties).
  static Resource& least_busy(std::vector<Resource>& rs, sim::Time now);
};

struct IoRecord {
  bool write = false;
  std::int64_t bytes = 0;
  sim::Time latency_ns = 0;
};

class ArrayModel {
 public:
  using Completion = sim::InlineFunction<void(const IoRecord&)>;

  // REQUIRES: options valid (built from a loaded Calibration).
  ArrayModel(sim::Simulator& sim, ArrayModelOptions options);

  // A host I/O on `volume` (owned by controller volume % 2: ALUA) arrives now; `done` runs
  // when it completes. REQUIRES: length > 0, offset >= 0.
  void submit(std::uint64_t volume, bool write, std::int64_t offset, std::int64_t length, Completion done);

  ControllerResources& controller(int c) { return *controllers_[static_cast<std::size_t>(c)]; }
  Resource& ssd_read(int drive) { return ssd_reads_[static_cast<std::size_t>(drive)]; }
  std::int64_t dirty_bytes(int c) const { return dirty_bytes_[static_cast<std::size_t>(c)]; }
  std::int64_t cache_hits() const { return cache_hits_; }
  std::int64_t full_stripe_destages() const { return full_stripe_destages_; }
  std::int64_t partial_destages() const { return partial_destages_; }
  Flow& flow() { return flow_; }

 private:
  struct PendingWrite {
    std::uint64_t volume;
    std::int64_t offset, length;
    sim::Time arrival;
    Completion done;
  };
  int owner(std::uint64_t volume) const { return static_cast<int>(volume % 2); }
  int drives() const { return options_.datapacs * options_.drives_per_datapac; }
  int datapac_of(int drive) const { return drive / options_.drives_per_datapac; }
  // Drive holding strip `member` of row `row` of `volume` (stand-in placement).
  int drive_of(std::uint64_t volume, std::int64_t row, int member) const;
  sim::Time cpu(sim::Time ns);
  void read(std::uint64_t volume, std::int64_t offset, std::int64_t length, sim::Time arrival, Completion done);
  void read_from_cache(int c, std::int64_t length, sim::Time arrival, Completion done);
  void fill(int c, std::uint64_t volume, std::int64_t offset, std::int64_t length, std::uint32_t fill_id);
  void backend_reads(int c, std::uint64_t volume, std::int64_t offset, std::int64_t length, Flow::Done done);
  void write(PendingWrite w);
  void start_write(PendingWrite w);
  void admit_waiting_writes(int c);
  void destage_row(int c, std::uint64_t volume, std::int64_t row, int dirty_strips, std::int64_t dirty_bytes);
  void member_ops(int c, std::uint64_t volume, std::int64_t row, int count, std::int64_t bytes_each, bool is_write,
                  Flow::Done done);

  sim::Simulator& sim_;
  ArrayModelOptions options_;
  RowGeometry geometry_;
  Flow flow_;
  sim::Rng rng_;
  std::vector<std::unique_ptr<ControllerResources>> controllers_;
  std::vector<Resource> ssd_reads_, ssd_writes_;
  std::vector<WriteCoalescer> coalescers_;
  std::vector<std::int64_t> dirty_bytes_;   // per controller: accepted, not yet destaged
  std::vector<std::int64_t> in_destage_;    // of which being destaged now
  std::vector<std::deque<PendingWrite>> waiting_writes_;  // bounded by the host's outstanding I/O
  std::int64_t cache_hits_ = 0, full_stripe_destages_ = 0, partial_destages_ = 0;
};

}  // namespace afasim::perf
