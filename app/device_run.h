// A bare-device run's pieces for the CLI: the simulator and the device behind the host NVMe
// queue model (workload/device_target.h).
#pragma once

#include <memory>

#include "sim/simulator.h"
#include "workload/device_target.h"

namespace afasim::app {

struct DeviceRun {
  explicit DeviceRun(std::uint64_t seed) : sim(seed) {}
  sim::Simulator sim;
  std::unique_ptr<workload::DeviceTarget> target;
};

}  // namespace afasim::app
