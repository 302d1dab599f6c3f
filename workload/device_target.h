// A bare device (ssd::Device: one SSD, or a switch and its RAID 0 members) behind a host
// NVMe queue model, as `afasim fio JOB --device NAME` and `afasim vdbench PARMFILE --device
// NAME` run it: no array, no cache, no volumes. Every volume name a job file uses is the
// whole device (a job's size must fit it).
//
// Host queue model: the device offers queue_pairs() I/O queue pairs of queue_entries()
// entries each (summed over members for a composite device, whose members the host sees as
// NVMe devices of their own). The host spreads commands over the queue pairs in turn; a
// command that finds its queue full waits, FIFO, in the host until an entry of that queue
// frees (the kernel's blk-mq tag wait). The host's own submission and completion costs are
// inside the device's latency figures (they are measured from the host), so none is added.
//
// Timing only: a read's buffer gets zeros, a write's data is dropped.
// Not thread-safe: belongs to the model thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/simulator.h"
#include "ssd/device.h"
#include "workload/io_target.h"

namespace afasim::workload {

class DeviceTarget final : public IoTarget {
 public:
  DeviceTarget(sim::Simulator& sim, std::unique_ptr<ssd::Device> device);
  std::string name() const override;
  sim::Result<controller::Id> volume(const std::string& volume) const override;
  void submit(const controller::HostIo& io, controller::IoCallback done) override;
  bool keeps_payload() const override { return false; }
  std::string payload_refusal() const override {
    return "a bare device keeps no payload (its model times I/O only); verification needs an "
           "array with memory or file payload";
  }

  ssd::Device& device() { return *device_; }
  std::int64_t capacity_bytes() const { return device_->capacity_bytes(); }
  // What the device did, for reports: {"host_write_bytes" (admitted), "host_program_bytes"
  // (programmed so far), "nand_program_bytes",
  // "write_amplification", "gc_program_bytes", "block_erases", "mean_pe_cycles",
  // "pe_spread", "reads_suspended", "reads_waited_program", "reads_waited_erase",
  // "host_queue_waits"}.
  nlohmann::ordered_json device_stats() const;
  // Commands that waited in the host for a queue entry, since construction.
  std::int64_t host_queue_waits() const { return host_waits_; }

 private:
  struct Pending {
    controller::HostIo io;
    controller::IoCallback done;
    sim::Time submitted;
  };
  void start(int queue, const controller::HostIo& io, controller::IoCallback done,
             sim::Time submitted);
  void finish(int queue);

  sim::Simulator& sim_;
  std::unique_ptr<ssd::Device> device_;
  int queue_entries_ = 1;
  std::vector<int> in_flight_;                 // per queue pair
  std::vector<std::deque<Pending>> waiting_;   // per queue pair, bounded by the job's depth
  int next_queue_ = 0;
  std::int64_t host_waits_ = 0;
};

}  // namespace afasim::workload
