// The controller cost model (docs/performance-model.md): what one host I/O costs the
// controllers, whose CPUs — not the 40 SSDs — bound the ISE's IOPS.
//
// Each controller has the preset's cores (2 × 6 cores at 2.2 GHz on the ISE 800 G3), modelled
// as a sim::Station. A host I/O costs its owner `host_io_ns` of one core (SCSI/FC target
// work, cache lookup, completion); each back-end SSD operation `backend_op_ns` (building
// and completing the SAS command, RAID mapping); a write `mirror_ns` (copying it into the
// peer's cache and tracking it); a RAID 5 parity update `parity_op_ns` plus
// `parity_ns_per_kib` per KiB XORed. Bytes also cross each controller's data mover
// (`data_mover_bytes_per_second`: cache DMA, the array's bandwidth ceiling) and a host port.
//
// The four CPU costs are derived, in this order, from four published figures and reused
// unchanged for every workload (derivations in docs/performance-model.md):
//   host_io_ns     12 cores / 400,000 IOPS (spec sheet "up to 400,000 IOPS": the cache-hit
//                  ceiling, no back-end work)                                  = 30.0 µs
//   backend_op_ns  12 cores / 284,000 4K read-miss IOPS − host_io_ns (review: 286,694 RAID5,
//                  281,253 RAID10; their mean)                                 = 12.25 µs
//   mirror_ns      12 cores / 174,572 4K RAID10 writes − host_io − 2 back-end = 14.2 µs
//   parity_op_ns   12 cores / 117,131 4K RAID5 writes − host_io − mirror − 4 back-end
//                  − 8 KiB of XOR at parity_ns_per_kib                         = 7.25 µs
// The other four figures of the review (RAID5/RAID10 read IOPS each, and all four average
// latencies through Little's law at 256 outstanding) are then predictions, which the
// calibration test checks.
#pragma once

#include <cstdint>

#include "raid/plan.h"
#include "sim/time.h"

namespace afasim::controller {

// A planned piece of controller work, as the cost model prices it: the host commands it
// answers, the writes it mirrors into the peer's cache, and the RAID work of its plan (member
// operations, RAID 5 parity rows, bytes XORed). `mirror_bytes` crosses the inter-controller
// link (timed by the link, not the cores); it is here so that one record says what the work
// was.
struct Work {
  std::int64_t host_ios = 0;
  std::int64_t mirrored_writes = 0;
  std::int64_t member_ops = 0;
  std::int64_t parity_rows = 0;
  std::int64_t xor_bytes = 0;
  std::int64_t mirror_bytes = 0;

  // The RAID work of `plan`.
  static Work of(const raid::Plan& plan) {
    Work w;
    w.member_ops = static_cast<std::int64_t>(plan.ops.size());
    w.parity_rows = plan.parity_rows;
    w.xor_bytes = plan.xor_bytes;
    return w;
  }
  // Host commands only (an error, a flush, an acknowledgement sent by a survivor).
  static Work host(std::int64_t ios = 1) {
    Work w;
    w.host_ios = ios;
    return w;
  }
  Work& plus_host(std::int64_t ios = 1) {
    host_ios += ios;
    return *this;
  }
  Work& plus_mirror(std::int64_t bytes) {
    ++mirrored_writes;
    mirror_bytes += bytes;
    return *this;
  }
};

struct CostModel {
  // Core time per host I/O (any size, any op). Source: spec sheet, 400,000 IOPS ceiling.
  sim::Time host_io_ns = 30'000;
  // Core time per back-end SSD operation. Source: StorageReview ISE 860 G3 4K random read.
  sim::Time backend_op_ns = 12'250;
  // Core time per host write to mirror it into the peer controller. Source: the review's
  // RAID 10 4K random write figure.
  sim::Time mirror_ns = 14'200;
  // Core time per RAID 5 row parity update (stripe lock, buffers). Source: the review's
  // RAID 5 4K random write figure.
  sim::Time parity_op_ns = 7'250;
  // Core time per KiB XORed: about 4 GB/s per core with SSE2 on a 2.2 GHz Sandy Bridge-EP
  // class core (assumption; Linux md's xor benchmark reports 4-10 GB/s on such cores).
  sim::Time parity_ns_per_kib = 250;
  // Data mover per controller: the spec sheet's "up to 5 GB/s" for the array, half each.
  std::int64_t data_mover_bytes_per_second = 2'500'000'000;
  // Inter-controller link (cache mirroring, forwarded I/O): PCIe 2.0 x8 non-transparent
  // bridge, ~3.2 GB/s of payload (assumption: ISE G3 controllers mirror over PCIe).
  std::int64_t interconnect_bytes_per_second = 3'200'000'000;
  // One-way latency of the inter-controller link (assumption: a PCIe NTB round trip is
  // a few microseconds).
  sim::Time interconnect_latency_ns = 3'000;
  // Fixed latency of a host port exchange (FC frame handling in the HBA; assumption).
  sim::Time host_port_latency_ns = 10'000;

  // Core time for `bytes` of parity XOR.
  sim::Time parity_xor_ns(std::int64_t bytes) const { return (bytes * parity_ns_per_kib + 1023) / 1024; }

  // Core time of `w`: the one place the controller's CPU cost of any work is computed (host
  // I/O, destage, vault replay, extent moves, and admission control's 4 KiB write).
  sim::Time core_ns(const Work& w) const {
    return w.host_ios * host_io_ns + w.mirrored_writes * mirror_ns + w.member_ops * backend_op_ns +
           w.parity_rows * parity_op_ns + parity_xor_ns(w.xor_bytes);
  }
};

}  // namespace afasim::controller
