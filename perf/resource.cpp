#include "perf/resource.h"

namespace afasim::perf {

sim::Status ResourceOptions::validate() const {
  const std::string who = name.empty() ? "resource" : name;
  if (servers < 1 || servers > 1024) return sim::invalid_argument(who + ": servers must be 1..1024");
  if (bytes_per_second < 0) return sim::invalid_argument(who + ": bytes_per_second must be >= 0");
  if (ns_per_op < 0) return sim::invalid_argument(who + ": ns_per_op must be >= 0");
  if (latency_ns < 0) return sim::invalid_argument(who + ": latency_ns must be >= 0");
  return sim::Status::ok();
}

Resource::Resource(ResourceOptions options)
    : bytes_per_second_(options.bytes_per_second),
      ns_per_op_(options.ns_per_op),
      latency_ns_(options.latency_ns),
      servers_(std::max(options.servers, 1)),
      link_(options.link),
      options_(std::move(options)) {
  AFASIM_ASSERT(options_.validate().is_ok(), "perf::Resource built from invalid options");
  if (servers_ > 1) more_free_at_.assign(static_cast<std::size_t>(servers_), 0);
}

[[gnu::cold, gnu::noinline]] sim::Time Resource::admit_dropping(sim::Time arrival, std::int64_t bytes, sim::Time service) {
  return book(arrival, bytes, service + sim::link_drop_fault(service));  // resent: the link stays busy
}

double Resource::utilisation(sim::Time elapsed_ns) const {
  if (elapsed_ns <= 0) return 0;
  return static_cast<double>(stats_.busy_ns) / (static_cast<double>(elapsed_ns) * static_cast<double>(servers_));
}

}  // namespace afasim::perf
