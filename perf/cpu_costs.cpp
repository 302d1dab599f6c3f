#include "perf/cpu_costs.h"

#include <string>

namespace afasim::perf {

namespace {
constexpr std::array<std::string_view, static_cast<std::size_t>(CpuOp::kCount)> kNames = {
    "host_read", "host_write", "cache_hit", "backend_read", "backend_write", "mirror", "parity"};
}

std::string_view cpu_op_name(CpuOp op) { return kNames[static_cast<std::size_t>(op)]; }

sim::Status parse_cpu_op(std::string_view name, CpuOp* out) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) {
      *out = static_cast<CpuOp>(i);
      return sim::Status::ok();
    }
  return sim::invalid_argument("unknown CPU operation \"" + std::string(name) +
                               "\" (host_read, host_write, cache_hit, backend_read, backend_write, mirror, parity)");
}

}  // namespace afasim::perf
