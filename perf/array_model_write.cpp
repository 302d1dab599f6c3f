// ArrayModel's write path: host data into the owner's cache, mirrored to the peer, acknowledged;
// coalesced per stripe row and destaged (full stripes at once, partial rows under pressure).
#include <algorithm>
#include <array>

#include "perf/array_model.h"

namespace afasim::perf {

void ArrayModel::write(PendingWrite w) {
  const int c = owner(w.volume);
  auto& cap_wait = waiting_writes_[static_cast<std::size_t>(c)];
  // The write cache is full: the write waits, in arrival order, until destage makes room.
  if (!cap_wait.empty() || dirty_bytes_[static_cast<std::size_t>(c)] + w.length > options_.write_cache_bytes) {
    cap_wait.push_back(std::move(w));
    return;
  }
  start_write(std::move(w));
}

void ArrayModel::start_write(PendingWrite w) {
  const int c = owner(w.volume);
  ControllerResources& cr = controller(c);
  ControllerResources& peer = controller(1 - c);
  dirty_bytes_[static_cast<std::size_t>(c)] += w.length;  // reserved now, trued up at the ack
  cr.cache.write(w.volume, w.offset, w.length);
  const sim::Time now = sim_.now();
  const CpuCosts& costs = options_.params.cpu;
  // FC in, DMA into DRAM, the core's command and mirroring work, DMA out of DRAM over the link
  // into the peer's DRAM; the acknowledgement goes back over a host port.
  const std::array<Step, 7> steps{
      Step{&cr.port_in(now), w.length, 0}, Step{&cr.memory, w.length, 0},
      Step{&cr.host_core(rng_, options_.params.cpu_rebalance_fraction, now), 0,
           cpu(costs.ns(CpuOp::kHostWrite, 1, w.length) + costs.ns(CpuOp::kMirror, 1, w.length))},
      Step{&cr.memory, w.length, 0}, Step{&cr.mirror_out, w.length, 0}, Step{&peer.memory, w.length, 0},
      Step{&cr.port_out(now), 0, 0}};
  flow_.start(steps, [this, c, w = std::move(w)](sim::Time t) mutable {
    std::int64_t added = 0;
    const auto full = coalescers_[static_cast<std::size_t>(c)].write(w.volume, w.offset, w.length, &added);
    dirty_bytes_[static_cast<std::size_t>(c)] -= w.length - added;
    for (std::int64_t row : full)
      destage_row(c, w.volume, row, geometry_.data_strips, geometry_.strip_bytes * geometry_.data_strips);
    // Above the watermark, destage the oldest partial rows (random writes reach the SSDs here).
    const auto high = static_cast<std::int64_t>(options_.destage_high_watermark * static_cast<double>(options_.write_cache_bytes));
    while (dirty_bytes_[static_cast<std::size_t>(c)] - in_destage_[static_cast<std::size_t>(c)] > high) {
      std::uint64_t volume = 0;
      std::int64_t row = 0, bytes = 0;
      int strips = 0;
      if (!coalescers_[static_cast<std::size_t>(c)].take_oldest(&volume, &row, &strips, &bytes)) break;
      destage_row(c, volume, row, strips, bytes);
    }
    w.done(IoRecord{true, w.length, t - w.arrival});
  });
}

void ArrayModel::admit_waiting_writes(int c) {
  auto& q = waiting_writes_[static_cast<std::size_t>(c)];
  while (!q.empty() && dirty_bytes_[static_cast<std::size_t>(c)] + q.front().length <= options_.write_cache_bytes) {
    PendingWrite w = std::move(q.front());
    q.pop_front();
    // Admitted now: its wait for room counts in its latency (arrival kept).
    start_write(std::move(w));
  }
}

void ArrayModel::destage_row(int c, std::uint64_t volume, std::int64_t row, int dirty_strips, std::int64_t dirty_bytes) {
  const RowDestage d = plan_row_destage(geometry_, dirty_strips, dirty_bytes);
  d.full_stripe ? ++full_stripe_destages_ : ++partial_destages_;
  in_destage_[static_cast<std::size_t>(c)] += dirty_bytes;
  const CpuCosts& costs = options_.params.cpu;
  sim::Time core_ns = costs.ns(CpuOp::kBackendWrite, d.strip_writes, 0) + costs.ns(CpuOp::kBackendRead, d.strip_reads, 0);
  if (geometry_.layout == RowLayout::kRaid5) core_ns += costs.ns(CpuOp::kParity, 1, d.xor_bytes);
  auto finish = [this, c, dirty_bytes](sim::Time) {
    dirty_bytes_[static_cast<std::size_t>(c)] -= dirty_bytes;
    in_destage_[static_cast<std::size_t>(c)] -= dirty_bytes;
    admit_waiting_writes(c);
  };
  // The core's work; for RAID 5 the XOR engine then reads the sources from DRAM and writes the
  // parity into it (memory traffic: xor_bytes + one strip's worth of parity per row).
  const std::int64_t parity_bytes = d.strip_writes > 0 ? d.write_bytes / d.strip_writes : 0;
  const std::int64_t xor_memory = geometry_.layout == RowLayout::kRaid5 ? d.xor_bytes + parity_bytes : 0;
  ControllerResources& cr = controller(c);
  const std::array<Step, 1> core{Step{&cr.drive_core(drive_of(volume, row, 0)), 0, cpu(core_ns)}};
  const std::array<Step, 2> core_xor{core[0], Step{&cr.memory, xor_memory, 0}};
  auto writes = [this, c, volume, row, d, finish = std::move(finish)](sim::Time) mutable {
    member_ops(c, volume, row, d.strip_writes, d.write_bytes / d.strip_writes, true, std::move(finish));
  };
  if (d.strip_reads == 0) {
    xor_memory > 0 ? flow_.start(core_xor, std::move(writes)) : flow_.start(core, std::move(writes));
    return;
  }
  // Old data and parity (RMW) or the clean strips (reconstruct) first, then the XOR, the writes.
  flow_.start(core, [this, c, volume, row, d, xor_memory, w = std::move(writes)](sim::Time) mutable {
    member_ops(c, volume, row, d.strip_reads, d.read_bytes / d.strip_reads, false,
               [this, c, xor_memory, w = std::move(w)](sim::Time) mutable {
                 const std::array<Step, 1> x{Step{&controller(c).memory, xor_memory, 0}};
                 flow_.start(x, std::move(w));
               });
  });
}

// `count` member operations of a row in parallel, `bytes_each`: a write is DMA out of DRAM,
// the SAS path, the SSD; a read the SSD, the SAS path back, DMA into DRAM.
void ArrayModel::member_ops(int c, std::uint64_t volume, std::int64_t row, int count, std::int64_t bytes_each,
                            bool is_write, Flow::Done done) {
  ControllerResources& cr = controller(c);
  const std::uint32_t join = flow_.join(count, std::move(done));
  bytes_each = std::max<std::int64_t>(1, bytes_each);
  for (int m = 0; m < count; ++m) {
    const int member = geometry_.layout == RowLayout::kRaid10 ? m % 2 : m;
    const int drive = drive_of(volume, row, member);
    const auto dp = static_cast<std::size_t>(datapac_of(drive));
    if (is_write) {
      const std::array<Step, 3> steps{Step{&cr.memory, bytes_each, 0}, Step{&cr.backend_to[dp], bytes_each, 0},
                                      Step{&ssd_writes_[static_cast<std::size_t>(drive)], bytes_each, 0}};
      flow_.start(steps, flow_.branch_done(join));
    } else {
      const std::array<Step, 3> steps{Step{&ssd_read(drive), bytes_each, 0}, Step{&cr.backend_from[dp], bytes_each, 0},
                                      Step{&cr.memory, bytes_each, 0}};
      flow_.start(steps, flow_.branch_done(join));
    }
  }
}

}  // namespace afasim::perf
