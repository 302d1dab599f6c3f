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
  explicit Station(int servers) : servers_(servers) {
    AFASIM_ASSERT(servers >= 1, "a station needs at least one server");
    if (servers > 1) more_.assign(static_cast<std::size_t>(servers), 0);
  }

  // Returns the completion time of `service` ns of work arriving at `arrival`.
  Time serve(Time arrival, Time service) {
    Time* it = std::min_element(begin(), end());
    const Time start = std::max(arrival, *it);
    *it = start + service;
    busy_ns_ += service;
    return *it;
  }

  // When a new arrival at `t` would start.
  Time earliest_start(Time t) const { return std::max(t, *std::min_element(begin(), end())); }
  int servers() const { return servers_; }
  // Total service handed out, for utilisation = busy / (servers × elapsed).
  Time busy_ns() const { return busy_ns_; }

 private:
  // When each server frees: one server's inline (no second cache line to fetch), more in more_.
  Time* begin() { return servers_ == 1 ? &one_ : more_.data(); }
  Time* end() { return begin() + servers_; }
  const Time* begin() const { return servers_ == 1 ? &one_ : more_.data(); }
  const Time* end() const { return begin() + servers_; }

  int servers_;
  Time one_ = 0;
  Time busy_ns_ = 0;
  std::vector<Time> more_;
};

}  // namespace afasim::sim
