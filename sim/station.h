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
#include <memory>

#include "sim/assert.h"
#include "sim/time.h"

namespace afasim::sim {

class Station {
 public:
  // REQUIRES: servers >= 1.
  explicit Station(int servers) : servers_(servers) {
    AFASIM_ASSERT(servers >= 1, "a station needs at least one server");
    if (servers > kInlineServers) more_ = std::make_unique<Time[]>(static_cast<std::size_t>(servers));
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
  // When each server frees: up to kInlineServers inline, beside servers_ and busy_ns_ (an SSD
  // controller's 4 FTL cores are served without a second cache line to fetch), more in more_.
  static constexpr int kInlineServers = 4;
  Time* begin() { return servers_ <= kInlineServers ? inline_ : more_.get(); }
  Time* end() { return begin() + servers_; }
  const Time* begin() const { return servers_ <= kInlineServers ? inline_ : more_.get(); }
  const Time* end() const { return begin() + servers_; }

  // What serve() reads (servers_, inline_, busy_ns_) is the object's first 48 bytes; more_ is
  // a pointer, not a vector, so that the whole object is 56.
  int servers_;
  Time inline_[kInlineServers] = {};
  Time busy_ns_ = 0;
  std::unique_ptr<Time[]> more_;
};

}  // namespace afasim::sim
