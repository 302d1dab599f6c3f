// A device a workload runs on bare: one SSD, or N member SSDs behind a PCIe switch composed
// as RAID 0 (the Liqid Element cards), timed analytically like the SSDs inside it.
//
// The switch has one upstream port (a host link of its own generation and width) shared by
// every member, and a cut-through latency each way. RAID 0 splits a command into strips of
// `stripe_bytes` on consecutive members; it completes when its last strip does. Flush goes
// to every member; trim is split like data.
//
// Not thread-safe: belongs to the model thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config/preset.h"
#include "sim/status.h"
#include "sim/time.h"
#include "ssd/flash_ssd.h"

namespace afasim::ssd {

struct DeviceOptions {
  StartState start = StartState::kSteady;
  double span_fraction = 1.0;  // (0, 1], see FlashOptions
};

class Device {
 public:
  // kInvalidArgument naming the member model's problem.
  static sim::Result<std::unique_ptr<Device>> create(const config::DeviceSpec& spec,
                                                     const DeviceOptions& options);
  Device(const config::DeviceSpec& spec, const DeviceOptions& options);

  // Completion time of `op` on [offset, offset + length) arriving at `arrival`.
  // kOutOfRange when the range passes the end or offset < 0; kInvalidArgument for a length
  // <= 0 (read, write, trim).
  sim::Result<sim::Time> schedule(sim::Time arrival, Op op, std::int64_t offset_bytes,
                                  std::int64_t length_bytes);

  const config::DeviceSpec& spec() const { return spec_; }
  std::int64_t capacity_bytes() const { return capacity_bytes_; }
  int member_count() const { return static_cast<int>(members_.size()); }
  const FlashSsd& member(int i) const { return *members_[static_cast<std::size_t>(i)]; }
  FlashSsd& member(int i) { return *members_[static_cast<std::size_t>(i)]; }
  // NVMe I/O queue pairs the host can create (summed over members) and entries per queue.
  int queue_pairs() const;
  int queue_entries() const { return spec_.member.controller.queue_entries; }
  // Host write bytes, NAND program bytes and erases summed over members.
  FlashStats total_stats() const;
  // Wear so far: mean program/erase cycles per block over the members' NAND
  // (multi-plane erases / blocks), and the most worn replica block's share of the mean (the
  // spread greedy GC leaves), 1 when nothing was erased.
  double mean_pe_cycles() const;
  double pe_spread() const;
  void reset(StartState start);

 private:
  sim::Time schedule_part(sim::Time arrival, Op op, std::int64_t offset, std::int64_t length,
                          sim::Time* first_done);

  config::DeviceSpec spec_;
  std::int64_t capacity_bytes_ = 0;
  std::vector<std::unique_ptr<FlashSsd>> members_;
  double up_ns_per_byte_ = 0;
  Pipe up_in_, up_out_;
};

}  // namespace afasim::ssd
