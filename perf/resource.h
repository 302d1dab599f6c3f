// perf::Resource — one hardware resource of the performance model (docs/performance-model.md):
// k identical servers, each serving one piece of work at a time, in arrival order.
//
// A piece of work costs `ns_per_op + bytes / bytes_per_second` of one server, then
// `latency_ns` of pure delay that occupies nothing (a link's propagation and handshake). The
// resource is timed analytically (the server that frees first takes the work: max(arrival,
// free_at) + service), which is exact FIFO *provided arrivals are presented in time order*.
// The old model broke that by booking work at future times; here it is a contract, checked
// on every call: admit() REQUIRES an arrival no earlier than the previous one, and the
// perf::Flow that drives requests through resources calls admit() from an event at the
// arrival's own time, so nothing is booked ahead of its time. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/assert.h"
#include "sim/buggify.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::perf {

struct ResourceOptions {
  std::string name;                    // for reports: "ctrl-A.cores", "ctrl-A.fc0.in"
  int servers = 1;                     // parallel servers (cores, lanes); >= 1
  std::int64_t bytes_per_second = 0;   // per server; 0: bytes cost nothing here
  sim::Time ns_per_op = 0;             // fixed cost of each piece of work, >= 0
  sim::Time latency_ns = 0;            // delay after service that occupies no server, >= 0
  bool link = false;                   // a link: its frames can be dropped (fault point link.drop)

  // kInvalidArgument naming the field when out of range.
  sim::Status validate() const;
};

// Counters for utilisation and queueing reports.
struct ResourceStats {
  std::int64_t ops = 0;
  std::int64_t bytes = 0;
  sim::Time busy_ns = 0;   // service handed out, all servers
  sim::Time wait_ns = 0;   // time pieces of work spent queued before service
  sim::Time wait_ns_max = 0;
};

// Anything a perf::Flow step can be admitted to: a Resource here, or an adapter the controller
// builds around a device with its own timing (the SSD model of datapac/, whose schedule()
// returns a completion time for work arriving at a time). admit() is called at the work's
// arrival time, in arrival order.
class Server {
 public:
  virtual ~Server() = default;
  // Work of `bytes` plus `extra_service_ns` of server time arriving at `arrival`; returns
  // when it is done. `address`: where on the device the work goes (an SSD's byte offset;
  // ignored by a Resource). REQUIRES: arrival >= every earlier arrival.
  virtual sim::Time admit(sim::Time arrival, std::int64_t bytes, sim::Time extra_service_ns,
                          std::int64_t address) = 0;
};

// 64-byte aligned, its fields in two lines (below): a controller's resources sit side by side
// in vectors, and at 216 bytes each one's admit() touched two or three lines depending on
// where it fell.
class alignas(64) Resource final : public Server {
 public:
  // REQUIRES: options.validate() is ok (the loader checks it; a bad value here is a bug).
  explicit Resource(ResourceOptions options);

  // Service time of a piece of work of `bytes` (no queueing, no latency).
  sim::Time service_ns(std::int64_t bytes) const {
    sim::Time t = ns_per_op_;
    if (bytes_per_second_ > 0 && bytes > 0) t += transfer_ns(bytes);
    return t;
  }

  // Work of `bytes` (plus `extra_service_ns` of server time, e.g. a CPU cost priced
  // elsewhere) arriving at `arrival`; returns when it leaves the resource (service done
  // plus the latency). REQUIRES: arrival >= every earlier arrival (time order).
  // Inline (always: GCC declines, the asserts counting): a random read admits five times, and
  // each call cost more than the booking.
  [[gnu::always_inline]] sim::Time admit(sim::Time arrival, std::int64_t bytes, sim::Time extra_service_ns = 0,
                  std::int64_t /*address*/ = 0) override {
    // The contract that makes busy-until exact FIFO: work is presented in arrival order.
    AFASIM_ASSERT(arrival >= last_arrival_, "perf::Resource: work presented out of arrival order (booked ahead)");
    AFASIM_ASSERT(bytes >= 0 && extra_service_ns >= 0, "perf::Resource: negative work");
    const sim::Time service = service_ns(bytes) + extra_service_ns;
    // Fault points on (a simulation test): a link may lose a frame. Out of line, so that the
    // path every run takes calls nothing.
    if (link_ && sim::Buggify::enabled()) [[unlikely]] return admit_dropping(arrival, bytes, service);
    return book(arrival, bytes, service);
  }

  // When work arriving at `t` would start service (for choosing among parallel resources,
  // such as the host ports of a controller, at the arrival's own time).
  sim::Time earliest_start(sim::Time t) const {
    return std::max(t, servers_ == 1 ? one_free_at_ : *std::min_element(free_begin(), free_end()));
  }

  const ResourceOptions& options() const { return options_; }
  const ResourceStats& stats() const { return stats_; }
  // Busy fraction over `elapsed_ns` of all servers together, 0..1.
  double utilisation(sim::Time elapsed_ns) const;

 private:
  // Books `service` of one server for work arriving at `arrival`; when it leaves.
  sim::Time book(sim::Time arrival, std::int64_t bytes, sim::Time service) {
    last_arrival_ = arrival;
    sim::Time* it = servers_ == 1 ? &one_free_at_ : std::min_element(more_free_at_.data(), more_free_at_.data() + servers_);
    const sim::Time start = std::max(arrival, *it);
    *it = start + service;
    ++stats_.ops;
    stats_.bytes += bytes;
    stats_.busy_ns += service;
    stats_.wait_ns += start - arrival;
    stats_.wait_ns_max = std::max(stats_.wait_ns_max, start - arrival);
    return *it + latency_ns_;
  }
  // admit() with the fault point link.drop (sim/buggify.h) while a test has it on.
  sim::Time admit_dropping(sim::Time arrival, std::int64_t bytes, sim::Time service);

  // When each server frees: one server's inline (most resources have one: no second cache
  // line to fetch on the hot path), more in more_free_at_.
  sim::Time* free_begin() { return servers_ == 1 ? &one_free_at_ : more_free_at_.data(); }
  const sim::Time* free_begin() const { return servers_ == 1 ? &one_free_at_ : more_free_at_.data(); }
  const sim::Time* free_end() const { return free_begin() + servers_; }

  // ceil(bytes / bytes_per_second) in ns. A workload moves a few sizes over and over, so the
  // last size's answer is kept: a 64-bit division is tens of cycles on the hot path.
  sim::Time transfer_ns(std::int64_t bytes) const {
    if (bytes != memo_bytes_) {
      memo_bytes_ = bytes;
      memo_ns_ = (bytes * sim::kSecond + bytes_per_second_ - 1) / bytes_per_second_;
    }
    return memo_ns_;
  }
  // Line 0 (with the vtable pointer): what earliest_start() and a booking read.
  sim::Time one_free_at_ = 0;
  mutable std::int64_t memo_bytes_ = -1;
  mutable sim::Time memo_ns_ = 0;
  std::int64_t bytes_per_second_;
  sim::Time ns_per_op_;
  sim::Time latency_ns_;
  int servers_;
  bool link_;
  // Line 1: what a booking writes, and where more servers' free times are.
  sim::Time last_arrival_ = 0;
  ResourceStats stats_;
  std::vector<sim::Time> more_free_at_;
  ResourceOptions options_;  // cold
};

}  // namespace afasim::perf
