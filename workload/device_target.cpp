#include "workload/device_target.h"

#include <algorithm>
#include <cstring>

#include "sim/assert.h"

namespace afasim::workload {

DeviceTarget::DeviceTarget(sim::Simulator& sim, std::unique_ptr<ssd::Device> device)
    : sim_(sim), device_(std::move(device)) {
  AFASIM_ASSERT(device_ != nullptr, "DeviceTarget needs a device");
  queue_entries_ = std::max(1, device_->queue_entries() - 1);  // NVMe: one entry stays empty
  const int pairs = std::max(1, device_->queue_pairs());
  in_flight_.assign(static_cast<std::size_t>(pairs), 0);
  waiting_.resize(static_cast<std::size_t>(pairs));
}

nlohmann::ordered_json DeviceTarget::device_stats() const {
  const ssd::FlashStats t = device_->total_stats();
  nlohmann::ordered_json j;
  j["host_write_bytes"] = t.host_write_bytes;
  j["host_program_bytes"] = t.host_program_bytes;
  j["nand_program_bytes"] = t.nand_program_bytes();
  j["write_amplification"] = t.write_amplification();
  j["gc_program_bytes"] = t.gc_program_bytes;
  j["block_erases"] = t.block_erases;
  j["mean_pe_cycles"] = device_->mean_pe_cycles();
  j["pe_spread"] = device_->pe_spread();
  j["reads_suspended"] = t.reads_suspended;
  j["reads_waited_program"] = t.reads_waited_program;
  j["reads_waited_erase"] = t.reads_waited_erase;
  j["host_queue_waits"] = host_waits_;
  return j;
}

std::string DeviceTarget::name() const { return device_->spec().name; }

sim::Result<controller::Id> DeviceTarget::volume(const std::string&) const { return 1; }

void DeviceTarget::submit(const controller::HostIo& io, controller::IoCallback done) {
  const int q = next_queue_;
  next_queue_ = (next_queue_ + 1) % static_cast<int>(in_flight_.size());
  if (in_flight_[static_cast<std::size_t>(q)] >= queue_entries_) {
    ++host_waits_;
    waiting_[static_cast<std::size_t>(q)].push_back(Pending{io, std::move(done), sim_.now()});
    return;
  }
  start(q, io, std::move(done), sim_.now());
}

void DeviceTarget::start(int q, const controller::HostIo& io, controller::IoCallback done,
                         sim::Time submitted) {
  ssd::Op op = ssd::Op::kRead;
  switch (io.op) {
    case controller::IoOp::kRead: op = ssd::Op::kRead; break;
    case controller::IoOp::kWrite:
    case controller::IoOp::kWriteZeroes: op = ssd::Op::kWrite; break;
    case controller::IoOp::kTrim: op = ssd::Op::kTrim; break;
    case controller::IoOp::kFlush: op = ssd::Op::kFlush; break;
  }
  auto at = device_->schedule(sim_.now(), op, io.offset_bytes, io.length_bytes);
  if (io.op == controller::IoOp::kRead && io.read_buffer != nullptr && io.length_bytes > 0)
    std::memset(io.read_buffer, 0, static_cast<std::size_t>(io.length_bytes));
  ++in_flight_[static_cast<std::size_t>(q)];
  controller::IoCompletion c;
  c.submit_time = submitted;
  sim::Time when = sim_.now();
  if (at.is_ok())
    when = *at;
  else
    c.status = at.status();
  sim_.at(when, [this, q, c, done = std::move(done)]() mutable {
    c.complete_time = sim_.now();
    finish(q);
    done(c);
  });
}

void DeviceTarget::finish(int q) {
  --in_flight_[static_cast<std::size_t>(q)];
  auto& w = waiting_[static_cast<std::size_t>(q)];
  if (w.empty()) return;
  Pending p = std::move(w.front());
  w.pop_front();
  start(q, p.io, std::move(p.done), p.submitted);
}

}  // namespace afasim::workload
