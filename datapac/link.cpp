#include "datapac/link.h"

#include <algorithm>
#include <utility>

#include "datapac/fault_points.h"
#include "sim/assert.h"

namespace afasim::datapac {

Link::Link(std::string name, std::int64_t bytes_per_second, sim::Time per_transfer_overhead_ns,
           int lanes)
    : name_(std::move(name)),
      bytes_per_second_(bytes_per_second),
      lane_bytes_per_second_(lanes > 0 ? bytes_per_second / lanes : 0),
      overhead_ns_(per_transfer_overhead_ns) {
  AFASIM_ASSERT(lanes >= 1 && lanes <= 64, "Link needs 1..64 lanes");
  AFASIM_ASSERT(bytes_per_second >= lanes, "Link rate must be at least 1 byte/s per lane");
  AFASIM_ASSERT(per_transfer_overhead_ns >= 0, "Link overhead must not be negative");
  ns_per_byte_q32_ = ns_per_byte_q32(lane_bytes_per_second_);
  lane_free_at_.assign(static_cast<std::size_t>(lanes), 0);
}

sim::Time Link::transfer(sim::Time arrival, std::int64_t bytes) {
  AFASIM_ASSERT(arrival >= 0 && bytes >= 0, "Link::transfer with negative time or size");
  auto lane = lane_free_at_.begin();
  if (lane_free_at_.size() > 1) lane = std::min_element(lane_free_at_.begin(), lane_free_at_.end());
  const sim::Time start = std::max(arrival, *lane);
  sim::Time duration = overhead_ns_ + fixed_transfer_time(bytes, ns_per_byte_q32_);
  duration += link_drop_fault(duration);
  *lane = start + duration;
  bytes_moved_ += bytes;
  ++transfers_;
  busy_ns_ += duration;
  return *lane;
}

double Link::utilisation(sim::Time elapsed) const {
  if (elapsed <= 0) return 0;
  return static_cast<double>(busy_ns_) /
         (static_cast<double>(elapsed) * static_cast<double>(lane_free_at_.size()));
}

sim::Time Link::busy_until() const {
  return *std::max_element(lane_free_at_.begin(), lane_free_at_.end());
}

void Link::reset_counters() {
  bytes_moved_ = 0;
  transfers_ = 0;
  busy_ns_ = 0;
}

}  // namespace afasim::datapac
