// controller::Hardware — what the controllers' work runs on (DESIGN.md "Analytic timing"):
// the SSDs of both DataPacs, each controller's CPU cores, host ports, data mover, its
// backplane links to each DataPac, and the inter-controller link. Every resource is a
// busy-until server: asking it to do work returns when that work completes.
//
// run_plan() times a raid::Plan's member operations (phase 0, then phase 1 once all of phase
// 0 is done) on the backplane links and SSDs of one controller; the cores' share of the work
// is priced by the CostModel (controller/cost_model.h) and served by cores(). This class is
// the seam the performance model (docs/performance-model.md) is built on. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "config/preset.h"
#include "controller/cost_model.h"
#include "controller/objects.h"
#include "datapac/link.h"
#include "datapac/payload.h"
#include "datapac/ssd.h"
#include "pool/capacity.h"
#include "raid/plan.h"
#include "sim/simulator.h"
#include "sim/station.h"

namespace afasim::controller {

// Per-controller counters.
struct ControllerIoStats {
  std::int64_t host_ios = 0, backend_ops = 0, forwarded_ios = 0;
  std::int64_t read_bytes = 0, write_bytes = 0;
};

class PerfCounters;

struct HardwareOptions {
  datapac::PayloadKind payload = datapac::PayloadKind::kNone;
  std::string payload_dir;                    // for kFile: one sparse file per SSD in here
  bool payload_must_exist = false;            // for kFile: the files held data before (SsdOptions)
  std::int64_t memory_page_bytes = 64 << 10;  // for kMemory
  datapac::PayloadWrapper wrap_payload;       // tests: wraps each SSD's store (fault injection)
  bool preconditioned = true;                 // SSDs start in steady state
  CostModel cost;                             // link rates
};

class Hardware {
 public:
  // Builds the SSDs (seeded from the simulator's seed), links and cores of `preset`.
  // kIoError if a payload file cannot be opened, kInvalidArgument for bad SSD options.
  static sim::Result<std::unique_ptr<Hardware>> create(sim::Simulator& sim, const config::SystemPreset& preset,
                                                       const pool::CapacityModel& capacity,
                                                       const HardwareOptions& options);

  int drive_count() const { return static_cast<int>(ssds_.size()); }
  datapac::Ssd& ssd(int drive) { return *ssds_[static_cast<std::size_t>(drive)]; }
  const datapac::Ssd& ssd(int drive) const { return *ssds_[static_cast<std::size_t>(drive)]; }
  int datapac_of(int drive) const { return drive_datapac_[static_cast<std::size_t>(drive)]; }
  const std::vector<int>& drive_datapacs() const { return drive_datapac_; }
  std::vector<datapac::BlockDevice*> block_devices();

  // Times one member operation from controller `c`: the write's bytes cross the backplane
  // to the SSD, the SSD serves it, a read's bytes come back. Counts a back-end op.
  sim::Time backend(sim::Time start, Id c, raid::ChunkAddr addr, std::int64_t offset_in_chunk,
                    std::int64_t length, datapac::SsdOp op);
  // Times one command on SSD `drive` arriving at `arrival` (no backplane): its completion, or
  // `arrival` for a failed drive. Tells the perf counters. (controller::Timing's SSD step.)
  sim::Time ssd_command(sim::Time arrival, int drive, std::int64_t offset, std::int64_t length, datapac::SsdOp op);
  // A read of `drive` at `offset` is coming (an ssd_command after other work): start loading
  // the SSD model's state it touches. Speed only.
  void prefetch_ssd_read(int drive, std::int64_t offset) const {
    ssds_[static_cast<std::size_t>(drive)]->prefetch_read(offset);
  }
  // Times `plan`'s member operations from `start` on controller `c`; returns when the last
  // completes (`start` for an empty plan).
  sim::Time run_plan(const raid::Plan& plan, sim::Time start, Id c);

  sim::Station& cores(Id c) { return cores_[static_cast<std::size_t>(c - 1)]; }
  const sim::Station& cores(Id c) const { return cores_[static_cast<std::size_t>(c - 1)]; }
  // The host port (of controller `c`, in or out) that frees first.
  datapac::Link& host_port_in(Id c) { return least_busy(host_ports_in_[static_cast<std::size_t>(c - 1)]); }
  datapac::Link& host_port_out(Id c) { return least_busy(host_ports_out_[static_cast<std::size_t>(c - 1)]); }
  datapac::Link& data_mover(Id c) { return data_movers_[static_cast<std::size_t>(c - 1)]; }
  // The link from controller `c` to its peer.
  datapac::Link& interconnect(Id c) { return interconnect_[static_cast<std::size_t>(c - 1)]; }
  const datapac::Link& interconnect(Id c) const { return interconnect_[static_cast<std::size_t>(c - 1)]; }
  // Every SSD read and write backend() times goes to `perf` (controller/perf.h), and the host
  // I/O the QoS scheduler completes (IoOrchestrator); nullptr: nowhere. Telemetry sets it.
  void set_perf_counters(PerfCounters* perf) { perf_ = perf; }
  PerfCounters* perf_counters() const { return perf_; }
  ControllerIoStats& stats(Id c) { return controller_stats_[static_cast<std::size_t>(c - 1)]; }
  const ControllerIoStats& stats(Id c) const { return controller_stats_[static_cast<std::size_t>(c - 1)]; }

 private:
  Hardware(const config::SystemPreset& preset, std::int64_t chunk_bytes, const HardwareOptions& options);
  static datapac::Link& least_busy(std::vector<datapac::Link>& links);

  std::int64_t chunk_bytes_;
  std::vector<int> drive_datapac_;
  std::vector<std::unique_ptr<datapac::Ssd>> ssds_;
  // backplane_[controller-1][datapac-1][0 = to SSDs, 1 = from SSDs]
  std::vector<std::array<std::vector<datapac::Link>, 2>> backplane_;
  std::vector<sim::Station> cores_;
  std::vector<std::vector<datapac::Link>> host_ports_in_, host_ports_out_;
  std::vector<datapac::Link> data_movers_;
  std::vector<datapac::Link> interconnect_;  // [0] A→B, [1] B→A
  std::vector<ControllerIoStats> controller_stats_;
  PerfCounters* perf_ = nullptr;  // set_perf_counters
};

// The SSD operation a member operation is.
inline datapac::SsdOp ssd_op(raid::MemberOpKind k) {
  switch (k) {
    case raid::MemberOpKind::kRead: return datapac::SsdOp::kRead;
    case raid::MemberOpKind::kWrite: return datapac::SsdOp::kWrite;
    case raid::MemberOpKind::kTrim: return datapac::SsdOp::kTrim;
  }
  return datapac::SsdOp::kRead;
}

}  // namespace afasim::controller
