// A bandwidth-limited FIFO stage: a SAS wide port of a DataPac's backplane, a host port, the
// inter-controller link.
//
// Analytic "busy-until" model (no events of its own): transfer() reserves the earliest-free
// lane for the bytes and returns when they have been moved; the caller schedules its own
// completion event at that time. Transfers are served in call order, so a caller that
// reserves a transfer starting in the future delays every later call on that lane even if
// their arrival is earlier (the usual approximation of busy-until models; callers reserve in
// time order). O(lanes) per call, no allocation.
//
// Not thread-safe: a Link belongs to the model thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.h"

namespace afasim::datapac {

class Link {
 public:
  // `bytes_per_second` is the aggregate payload rate of the link per direction; it is split
  // evenly over `lanes` lanes (a SAS x4 wide port: 4 lanes, one transfer on one lane at a
  // time, as a SAS connection runs on one phy). `per_transfer_overhead_ns` occupies the lane
  // before the bytes (framing, arbitration); 0 when the endpoints' latency figures already
  // include it.
  // REQUIRES: bytes_per_second >= lanes, per_transfer_overhead_ns >= 0, 1 <= lanes <= 64.
  Link(std::string name, std::int64_t bytes_per_second, sim::Time per_transfer_overhead_ns = 0,
       int lanes = 1);

  // Reserves the earliest-free lane for `bytes` arriving at `arrival` and returns when the
  // transfer ends: max(arrival, lane free) + overhead + bytes / lane rate (rounded up to
  // whole ns). REQUIRES: arrival >= 0, bytes >= 0.
  sim::Time transfer(sim::Time arrival, std::int64_t bytes);

  const std::string& name() const { return name_; }
  std::int64_t bytes_per_second() const { return bytes_per_second_; }
  std::int64_t lane_bytes_per_second() const { return lane_bytes_per_second_; }
  int lanes() const { return static_cast<int>(lane_free_at_.size()); }
  sim::Time per_transfer_overhead_ns() const { return overhead_ns_; }

  // Counters since construction (or reset_counters()).
  std::int64_t bytes_moved() const { return bytes_moved_; }
  std::int64_t transfers() const { return transfers_; }
  // Sum over lanes of the time each lane was reserved.
  sim::Time busy_ns() const { return busy_ns_; }
  // busy_ns / (elapsed × lanes): the fraction of the link's capacity used over `elapsed`.
  // 0 when elapsed <= 0.
  double utilisation(sim::Time elapsed) const;
  // The time the last reserved lane becomes free (when an idle link could start a transfer
  // on every lane).
  sim::Time busy_until() const;
  void reset_counters();

 private:
  std::string name_;
  std::int64_t bytes_per_second_;
  std::int64_t lane_bytes_per_second_;
  sim::Time overhead_ns_;
  // ns per byte in 32.32 fixed point, so that transfer() multiplies instead of dividing.
  std::uint64_t ns_per_byte_q32_;
  std::vector<sim::Time> lane_free_at_;
  std::int64_t bytes_moved_ = 0;
  std::int64_t transfers_ = 0;
  sim::Time busy_ns_ = 0;
};

// Duration of `bytes` at a rate given as ns per byte in 32.32 fixed point, rounded up to a
// whole ns (so a non-zero transfer never takes zero time).
inline sim::Time fixed_transfer_time(std::int64_t bytes, std::uint64_t ns_per_byte_q32) {
  const unsigned __int128 p = static_cast<unsigned __int128>(bytes) * ns_per_byte_q32;
  return static_cast<sim::Time>((p + 0xFFFFFFFFu) >> 32);
}

// ns per byte in 32.32 fixed point for `bytes_per_second`, rounded down, so that a transfer
// whose exact duration is a whole number of ns gets exactly that and any other rounds up to
// the next ns; the rate's relative error is below 1e-8 for rates up to 100 GB/s.
// REQUIRES: 0 < bytes_per_second <= 1e15.
inline std::uint64_t ns_per_byte_q32(std::int64_t bytes_per_second) {
  const unsigned __int128 num = static_cast<unsigned __int128>(sim::kSecond) << 32;
  return static_cast<std::uint64_t>(num / static_cast<unsigned __int128>(bytes_per_second));
}

}  // namespace afasim::datapac
