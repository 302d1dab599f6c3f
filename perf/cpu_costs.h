// perf::CpuCosts — what each kind of controller work costs one CPU core: a fixed part per
// operation and a part per KiB it touches (copies, checksums, XOR), by operation kind.
//
// These are the model's CPU parameters (docs/performance-model.md "Controller CPU"): each
// comes from config/calibration/<system>.json with its source, a fitted figure or a stated
// assumption; none is in code. Value type, thread-compatible.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sim/status.h"
#include "sim/time.h"

namespace afasim::perf {

// The kinds of controller work the model prices.
enum class CpuOp : int {
  kHostRead = 0,    // a host read command: SCSI/FC target work, cache lookup, completion
  kHostWrite,       // a host write command: the same, plus cache-page allocation
  kCacheHit,        // a read served from cache (replaces no host cost: added to kHostRead)
  kBackendRead,     // one SAS read to an SSD: build, issue, complete, RAID mapping
  kBackendWrite,    // one SAS write to an SSD (destage, RAID 10 copy, parity strip)
  kMirror,          // a write's path beyond the command: its cache pages, their tracking, the mirror (every write)
  kParity,          // one RAID 5 stripe-row parity update: stripe lock, buffers, XOR per KiB
  kCount
};

std::string_view cpu_op_name(CpuOp op);
// kInvalidArgument for a name that is none of cpu_op_name()'s.
sim::Status parse_cpu_op(std::string_view name, CpuOp* out);

struct CpuCost {
  sim::Time ns_per_op = 0;   // >= 0
  sim::Time ns_per_kib = 0;  // >= 0
};

class CpuCosts {
 public:
  void set(CpuOp op, CpuCost c) { costs_[static_cast<std::size_t>(op)] = c; }
  const CpuCost& get(CpuOp op) const { return costs_[static_cast<std::size_t>(op)]; }
  // Core time of `count` operations of kind `op` touching `bytes` in all.
  sim::Time ns(CpuOp op, std::int64_t count, std::int64_t bytes) const {
    const CpuCost& c = get(op);
    return count * c.ns_per_op + (bytes * c.ns_per_kib + 1023) / 1024;
  }

 private:
  std::array<CpuCost, static_cast<std::size_t>(CpuOp::kCount)> costs_{};
};

}  // namespace afasim::perf
