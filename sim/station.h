// A service station of `servers` identical FIFO servers, timed analytically (busy-until).
//
// serve(arrival, service) gives the work to the server that frees up first and returns when
// it completes: max(arrival, free_at) + service. No events of its own: the caller schedules
// what happens at the returned time. Exact for FIFO arrivals in time order; when arrivals
// are presented slightly out of order the later-presented one queues behind, which is the
// approximation the I/O engine accepts for speed (docs/performance-model.md). Used for
// controller CPU cores. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/assert.h"
#include "sim/time.h"

namespace afasim::sim {

class Station {
 public:
  // REQUIRES: servers >= 1.
  explicit Station(int servers) : free_at_(static_cast<std::size_t>(servers), 0) {
    AFASIM_ASSERT(servers >= 1, "a station needs at least one server");
  }

  // Returns the completion time of `service` ns of work arriving at `arrival`.
  Time serve(Time arrival, Time service) {
    auto it = std::min_element(free_at_.begin(), free_at_.end());
    const Time start = std::max(arrival, *it);
    *it = start + service;
    busy_ns_ += service;
    return *it;
  }

  // When a new arrival at `t` would start.
  Time earliest_start(Time t) const { return std::max(t, *std::min_element(free_at_.begin(), free_at_.end())); }
  int servers() const { return static_cast<int>(free_at_.size()); }
  // Total service handed out, for utilisation = busy / (servers × elapsed).
  Time busy_ns() const { return busy_ns_; }

 private:
  std::vector<Time> free_at_;
  Time busy_ns_ = 0;
};

}  // namespace afasim::sim
