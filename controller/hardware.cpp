#include "controller/hardware.h"

#include <algorithm>

#include "controller/perf.h"
#include "sim/assert.h"

namespace afasim::controller {

using sim::Time;

sim::Result<std::unique_ptr<Hardware>> Hardware::create(sim::Simulator& sim, const config::SystemPreset& preset,
                                                        const pool::CapacityModel& capacity,
                                                        const HardwareOptions& options) {
  std::unique_ptr<Hardware> hw(new Hardware(preset, capacity.params().chunk_bytes, options));
  for (std::size_t i = 0; i < hw->drive_datapac_.size(); ++i) {
    const int datapac = hw->drive_datapac_[i];
    const int slot = static_cast<int>(i) % preset.datapacs.ssds_per_datapac + 1;
    datapac::SsdOptions so;
    so.name = "dp" + std::to_string(datapac) + "-ssd" + (slot < 10 ? "0" : "") + std::to_string(slot);
    so.preconditioned = options.preconditioned;
    so.payload = options.payload;
    so.memory_page_bytes = options.memory_page_bytes;
    so.payload_directory = options.payload_dir;
    so.payload_must_exist = options.payload_must_exist;
    so.wrap_payload = options.wrap_payload;
    // The array never writes the fifth of each SSD it keeps back: extra spare area for
    // the SSD's garbage collection (docs/capacity.md, docs/ssd-model.md).
    so.host_span_fraction = 1.0 - capacity.params().over_provisioning_fraction;
    so.seed = sim::mix64(sim.seed() ^ (i + 1));
    auto ssd = datapac::Ssd::create(preset.ssd, so);
    if (!ssd.is_ok()) return ssd.status();
    hw->ssds_.push_back(std::move(ssd).value());
  }
  return hw;
}

Hardware::Hardware(const config::SystemPreset& preset, std::int64_t chunk_bytes, const HardwareOptions& options)
    : chunk_bytes_(chunk_bytes) {
  for (int d = 0; d < preset.datapacs.count; ++d)
    for (int s = 0; s < preset.datapacs.ssds_per_datapac; ++s) drive_datapac_.push_back(d + 1);
  const auto& bp = preset.datapacs.backplane;
  const auto& hp = preset.controllers.host_ports;
  for (int c = 0; c < preset.controllers.count; ++c) {
    const std::string cn(1, static_cast<char>('A' + c));
    std::array<std::vector<datapac::Link>, 2> links;
    for (int d = 0; d < preset.datapacs.count; ++d) {
      const std::string dn = std::to_string(d + 1);
      links[0].emplace_back("ctrl" + cn + "->dp" + dn, bp.lanes_per_controller * bp.lane_bytes_per_second, 0,
                            bp.lanes_per_controller);
      links[1].emplace_back("dp" + dn + "->ctrl" + cn, bp.lanes_per_controller * bp.lane_bytes_per_second, 0,
                            bp.lanes_per_controller);
    }
    backplane_.push_back(std::move(links));
    cores_.emplace_back(preset.controllers.cpu_cores);
    std::vector<datapac::Link> in, out;
    for (int p = 0; p < hp.count_per_controller; ++p) {
      in.emplace_back("ctrl" + cn + "-port" + std::to_string(p + 1) + "-in", hp.payload_bytes_per_second);
      out.emplace_back("ctrl" + cn + "-port" + std::to_string(p + 1) + "-out", hp.payload_bytes_per_second);
    }
    host_ports_in_.push_back(std::move(in));
    host_ports_out_.push_back(std::move(out));
    data_movers_.emplace_back("ctrl" + cn + "-data-mover", options.cost.data_mover_bytes_per_second);
    interconnect_.emplace_back("ctrl" + cn + "->peer", options.cost.interconnect_bytes_per_second);
  }
  controller_stats_.resize(static_cast<std::size_t>(preset.controllers.count));
}

std::vector<datapac::BlockDevice*> Hardware::block_devices() {
  std::vector<datapac::BlockDevice*> out;
  for (auto& s : ssds_) out.push_back(s.get());
  return out;
}

datapac::Link& Hardware::least_busy(std::vector<datapac::Link>& links) {
  return *std::min_element(links.begin(), links.end(), [](const datapac::Link& a, const datapac::Link& b) {
    return a.busy_until() < b.busy_until();
  });
}

[[gnu::hot]] Time Hardware::ssd_command(Time arrival, int drive, std::int64_t offset, std::int64_t length, datapac::SsdOp op) {
  auto done = ssds_[static_cast<std::size_t>(drive)]->schedule(arrival, op, offset, length);
  // A failed SSD answers at once; the RAID layer has already routed around lost members,
  // so an error here is an SSD that failed under an operation planned before: the time
  // still counts, the data was placed before the failure.
  if (perf_ != nullptr && done.is_ok() && (op == datapac::SsdOp::kRead || op == datapac::SsdOp::kWrite))
    perf_->drive_op(drive, op == datapac::SsdOp::kWrite, length, *done - arrival);
  return done.is_ok() ? *done : arrival;
}

Time Hardware::backend(Time start, Id c, raid::ChunkAddr addr, std::int64_t offset_in_chunk, std::int64_t length,
                       datapac::SsdOp op) {
  const auto dp = static_cast<std::size_t>(drive_datapac_[static_cast<std::size_t>(addr.drive)] - 1);
  auto& links = backplane_[static_cast<std::size_t>(c - 1)];
  const std::int64_t offset = addr.offset_bytes(chunk_bytes_) + offset_in_chunk;
  Time t = start;
  if (op == datapac::SsdOp::kWrite) t = links[0][dp].transfer(t, length);
  t = ssd_command(t, addr.drive, offset, length, op);
  if (op == datapac::SsdOp::kRead) t = links[1][dp].transfer(t, length);
  ++controller_stats_[static_cast<std::size_t>(c - 1)].backend_ops;
  return t;
}

Time Hardware::run_plan(const raid::Plan& plan, Time start, Id c) {
  Time phase0_done = start;
  for (const auto& op : plan.ops)
    if (op.phase == 0)
      phase0_done = std::max(phase0_done, backend(start, c, op.addr, op.offset_in_chunk, op.length, ssd_op(op.op)));
  Time done = phase0_done;
  for (const auto& op : plan.ops)
    if (op.phase == 1)
      done = std::max(done, backend(phase0_done, c, op.addr, op.offset_in_chunk, op.length, ssd_op(op.op)));
  return done;
}

}  // namespace afasim::controller
