// ArrayModel's read path: host command, cache lookup, read-ahead, back-end reads.
#include <algorithm>
#include <array>

#include "perf/array_model.h"

namespace afasim::perf {

void ArrayModel::read(std::uint64_t volume, std::int64_t offset, std::int64_t length, sim::Time arrival, Completion done) {
  const int c = owner(volume);
  ControllerResources& cr = controller(c);
  const CacheLookup look = cr.cache.lookup(volume, offset, length);
  const ReadAhead ra = cr.streams.on_read(volume, offset, length);
  if (ra.length > 0) fill(c, volume, ra.offset, ra.length, cr.cache.start_fill(volume, ra.offset, ra.length));
  const sim::Time now = sim_.now();
  const CpuCosts& costs = options_.params.cpu;
  std::array<Step, 2> cmd{Step{&cr.port_in(now), 0, 0}, Step{&cr.host_core(rng_, options_.params.cpu_rebalance_fraction, now), 0, 0}};
  if (look.all_present) {
    ++cache_hits_;
    cmd[1].extra_service_ns = cpu(costs.ns(CpuOp::kHostRead, 1, length) + costs.ns(CpuOp::kCacheHit, 1, length));
    // The read completes when its host command is done and every fill it needs is in.
    const int branches = 1 + static_cast<int>(look.fills.size());
    const std::uint32_t join = flow_.join(branches, [this, c, length, arrival, d = std::move(done)](sim::Time) mutable {
      read_from_cache(c, length, arrival, std::move(d));
    });
    for (std::uint32_t f : look.fills) cr.cache.wait(f, [this, join] { flow_.branch_done(join)(sim_.now()); });
    flow_.start(cmd, flow_.branch_done(join));
    return;
  }
  cmd[1].extra_service_ns = cpu(costs.ns(CpuOp::kHostRead, 1, length));
  const std::uint32_t fill_id = cr.cache.start_fill(volume, offset, length);
  flow_.start(cmd, [this, c, volume, offset, length, arrival, fill_id, d = std::move(done)](sim::Time) mutable {
    backend_reads(c, volume, offset, length, [this, c, length, arrival, fill_id, d = std::move(d)](sim::Time) mutable {
      controller(c).cache.fill_done(fill_id);
      read_from_cache(c, length, arrival, std::move(d));
    });
  });
}

void ArrayModel::read_from_cache(int c, std::int64_t length, sim::Time arrival, Completion done) {
  ControllerResources& cr = controller(c);
  // DRAM to the FC HBA, then the wire.
  const std::array<Step, 2> out{Step{&cr.memory, length, 0}, Step{&cr.port_out(sim_.now()), length, 0}};
  flow_.start(out, [arrival, length, d = std::move(done)](sim::Time t) mutable {
    d(IoRecord{false, length, t - arrival});
  });
}

void ArrayModel::fill(int c, std::uint64_t volume, std::int64_t offset, std::int64_t length, std::uint32_t fill_id) {
  backend_reads(c, volume, offset, length, [this, c, fill_id](sim::Time) { controller(c).cache.fill_done(fill_id); });
}

// Reads [offset, offset + length) from the members, one back-end read per strip piece, all in
// parallel: core time to issue it, the SSD, the SAS path back, DMA into DRAM.
void ArrayModel::backend_reads(int c, std::uint64_t volume, std::int64_t offset, std::int64_t length, Flow::Done done) {
  ControllerResources& cr = controller(c);
  const std::int64_t strip = geometry_.strip_bytes;
  const std::int64_t row_bytes = strip * geometry_.data_strips;
  struct Piece {
    int drive;
    std::int64_t bytes;
  };
  std::vector<Piece> pieces;
  for (std::int64_t pos = offset; pos < offset + length;) {
    const std::int64_t piece_end = std::min(offset + length, (pos / strip + 1) * strip);
    const std::int64_t row = pos / row_bytes;
    const int member = static_cast<int>((pos % row_bytes) / strip);
    int drive = drive_of(volume, row, member);
    if (options_.layout == RowLayout::kRaid10) {  // read the copy whose SSD frees first
      const int other = drive_of(volume, row, 1);
      if (ssd_read(other).earliest_start(sim_.now()) < ssd_read(drive).earliest_start(sim_.now())) drive = other;
    }
    pieces.push_back({drive, piece_end - pos});
    pos = piece_end;
  }
  const std::uint32_t join = flow_.join(static_cast<int>(pieces.size()), std::move(done));
  const sim::Time op_ns = options_.params.cpu.ns(CpuOp::kBackendRead, 1, 0);
  for (const Piece& p : pieces) {
    const std::array<Step, 4> steps{Step{&cr.drive_core(p.drive), 0, cpu(op_ns)}, Step{&ssd_read(p.drive), p.bytes, 0},
                                    Step{&cr.backend_from[static_cast<std::size_t>(datapac_of(p.drive))], p.bytes, 0},
                                    Step{&cr.memory, p.bytes, 0}};
    flow_.start(steps, flow_.branch_done(join));
  }
}

}  // namespace afasim::perf
