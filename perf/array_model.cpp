#include "perf/array_model.h"

#include <algorithm>
#include <array>
#include <string>

namespace afasim::perf {

namespace {

ResourceOptions bandwidth(const std::string& name, int servers, std::int64_t bytes_per_second, sim::Time latency_ns = 0) {
  ResourceOptions o;
  o.name = name;
  o.servers = servers;
  o.bytes_per_second = bytes_per_second;
  o.latency_ns = latency_ns;
  return o;
}

// A link's options: its frames can be dropped (fault point link.drop, sim/buggify.h).
ResourceOptions link(const std::string& name, int servers, std::int64_t bytes_per_second, sim::Time latency_ns = 0) {
  ResourceOptions o = bandwidth(name, servers, bytes_per_second, latency_ns);
  o.link = true;
  return o;
}

ResourceOptions servers_only(const std::string& name, int servers) {
  ResourceOptions o;
  o.name = name;
  o.servers = servers;
  return o;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser: stand-in placement of rows on drives
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

ControllerResources::ControllerResources(const ModelParameters& p, int datapacs, const std::string& name)
    : memory(bandwidth(name + ".memory", 1, p.memory_bytes_per_second)),
      mirror_out(link(name + ".mirror", 1, p.mirror_link_bytes_per_second, p.mirror_link_latency_ns)),
      cache(p.read_cache),
      streams(p.streams) {
  if (p.cpu_per_core_queues) {
    for (int i = 0; i < p.cpu_cores; ++i) cores.emplace_back(servers_only(name + ".core" + std::to_string(i), 1));
  } else {
    cores.emplace_back(servers_only(name + ".cores", p.cpu_cores));
  }
  for (int i = 0; i < p.host_ports; ++i) {
    ports_in.emplace_back(link(name + ".fc" + std::to_string(i) + ".in", 1, p.host_port_bytes_per_second, p.host_port_latency_ns));
    ports_out.emplace_back(link(name + ".fc" + std::to_string(i) + ".out", 1, p.host_port_bytes_per_second, p.host_port_latency_ns));
  }
  for (int d = 0; d < datapacs; ++d) {
    const std::string dp = name + ".datapac" + std::to_string(d + 1);
    backend_to.emplace_back(link(dp + ".to", p.backend_lanes, p.backend_lane_bytes_per_second));
    backend_from.emplace_back(link(dp + ".from", p.backend_lanes, p.backend_lane_bytes_per_second));
  }
}

[[gnu::hot]] Resource& ControllerResources::host_core(sim::Rng& rng, double rebalance, sim::Time now) {
  Resource& first = cores[rng.uniform(cores.size())];
  if (cores.size() == 1 || rebalance <= 0 || !rng.bernoulli(rebalance)) return first;
  Resource& second = cores[rng.uniform(cores.size())];
  return second.earliest_start(now) < first.earliest_start(now) ? second : first;
}

[[gnu::hot]] Resource& ControllerResources::least_busy(std::vector<Resource>& rs, sim::Time now) {
  Resource* best = &rs.front();
  sim::Time best_start = best->earliest_start(now);
  for (auto& r : rs)
    if (const sim::Time start = r.earliest_start(now); start < best_start) {
      best = &r;
      best_start = start;
    }
  return *best;
}

ArrayModel::ArrayModel(sim::Simulator& sim, ArrayModelOptions options)
    : sim_(sim), options_(std::move(options)), flow_(sim), rng_(sim.rng("perf.array_model")) {
  geometry_.layout = options_.layout;
  geometry_.data_strips = options_.layout == RowLayout::kRaid5 ? options_.raid5_data_strips : 1;
  geometry_.strip_bytes = options_.strip_bytes;
  for (int c = 0; c < 2; ++c) {
    controllers_.push_back(std::make_unique<ControllerResources>(options_.params, options_.datapacs,
                                                                 c == 0 ? "ctrl-A" : "ctrl-B"));
    coalescers_.emplace_back(geometry_);
  }
  dirty_bytes_.assign(2, 0);
  in_destage_.assign(2, 0);
  waiting_writes_.resize(2);
  const SsdStandIn& s = options_.ssd;
  for (int d = 0; d < drives(); ++d) {
    ResourceOptions r = bandwidth("ssd" + std::to_string(d) + ".read", s.read_units, s.read_bytes_per_second / s.read_units);
    r.ns_per_op = s.read_ns;
    ssd_reads_.emplace_back(r);
    ResourceOptions w = bandwidth("ssd" + std::to_string(d) + ".write", 1, s.write_bytes_per_second);
    w.ns_per_op = s.write_ns;
    ssd_writes_.emplace_back(w);
  }
}

int ArrayModel::drive_of(std::uint64_t volume, std::int64_t row, int member) const {
  const std::uint64_t h = mix(volume * 1'000'003ULL + static_cast<std::uint64_t>(row));
  if (options_.layout == RowLayout::kRaid10) {  // mirror pairs: drive p in DataPac 1, p in DataPac 2
    const int pair = static_cast<int>(h % static_cast<std::uint64_t>(options_.drives_per_datapac));
    return pair + member * options_.drives_per_datapac;
  }
  return static_cast<int>((h + static_cast<std::uint64_t>(member)) % static_cast<std::uint64_t>(drives()));
}

sim::Time ArrayModel::cpu(sim::Time ns) {
  // A core's service time varies (interrupt coalescing, locks, cache misses): a fixed part
  // and an exponential part with mean 1 and standard deviation cv (cpu_service_cv).
  const double cv = options_.params.cpu_service_cv;
  if (cv <= 0 || ns == 0) return ns;
  return static_cast<sim::Time>(static_cast<double>(ns) * (1.0 - cv + cv * rng_.exponential(1.0)));
}

void ArrayModel::submit(std::uint64_t volume, bool write_io, std::int64_t offset, std::int64_t length, Completion done) {
  AFASIM_ASSERT(length > 0 && offset >= 0, "perf::ArrayModel: empty or negative I/O");
  if (write_io)
    write(PendingWrite{volume, offset, length, sim_.now(), std::move(done)});
  else
    read(volume, offset, length, sim_.now(), std::move(done));
}

}  // namespace afasim::perf
