// Helpers shared by the datapac tests: the preset SSD models and a closed-loop driver.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "config/preset.h"
#include "datapac/ssd.h"
#include "sim/rng.h"
#include "sim/simulator.h"

namespace afasim::datapac::testing {

inline constexpr std::int64_t k4K = 4096;

// An SSD of `model`; fails the test when the model or options are refused.
inline std::unique_ptr<Ssd> make_ssd(const config::SsdModel& model, SsdOptions options = {}) {
  auto ssd = Ssd::create(model, options);
  REQUIRE(ssd.is_ok());
  return std::move(ssd).value();
}

// The SSD model of config/ssds/NAME.json, as the array loads it.
inline config::SsdModel preset_ssd(const std::string& name = "xio-g3-sas-1600gb") {
  auto cat = config::Catalog::embedded();
  REQUIRE(cat.is_ok());
  return cat->ssds().at(name);
}

// A closed loop of `queue_depth` outstanding commands against one SSD, driven by
// sim::Simulator events: each completion issues the next command at its completion time.
// Counts completions and their latencies inside [measure_from, measure_to).
class ClosedLoop {
 public:
  // Chooses each command: (op, offset, length) from the loop's random stream.
  struct Command {
    SsdOp op;
    std::int64_t offset_bytes;
    std::int64_t length_bytes;
  };
  using Chooser = std::function<Command(sim::Rng&)>;

  ClosedLoop(Ssd& ssd, int queue_depth, Chooser chooser, std::uint64_t seed = 1)
      : ssd_(ssd),
        queue_depth_(queue_depth),
        chooser_(std::move(chooser)),
        sim_(seed),
        rng_(sim_.rng("closed-loop")) {}

  // Runs until `end`, measuring from `measure_from`.
  void run(sim::Time measure_from, sim::Time end) {
    measure_from_ = measure_from;
    end_ = end;
    for (int i = 0; i < queue_depth_; ++i) issue();
    sim_.run_until(end);
  }

  double ops_per_second() const {
    return static_cast<double>(completed_) / sim::to_seconds(end_ - measure_from_);
  }
  double bytes_per_second() const {
    return static_cast<double>(bytes_) / sim::to_seconds(end_ - measure_from_);
  }
  double mean_latency_us() const {
    return completed_ == 0 ? 0 : sim::to_us(latency_sum_) / static_cast<double>(completed_);
  }
  std::int64_t completed() const { return completed_; }
  sim::Simulator& simulator() { return sim_; }

 private:
  void issue() {
    const Command c = chooser_(rng_);
    const sim::Time start = sim_.now();
    auto done = ssd_.schedule(start, c.op, c.offset_bytes, c.length_bytes);
    REQUIRE(done.is_ok());
    const std::int64_t length = c.length_bytes;
    sim_.at(*done, [this, start, length] {
      if (sim_.now() >= measure_from_ && sim_.now() < end_) {
        ++completed_;
        bytes_ += length;
        latency_sum_ += sim_.now() - start;
      }
      if (sim_.now() < end_) issue();
    });
  }

  Ssd& ssd_;
  int queue_depth_;
  Chooser chooser_;
  sim::Simulator sim_;
  sim::Rng rng_;
  sim::Time measure_from_ = 0;
  sim::Time end_ = 0;
  std::int64_t completed_ = 0;
  std::int64_t bytes_ = 0;
  sim::Time latency_sum_ = 0;
};

// A uniformly random, `size`-aligned command of `size` bytes over the whole SSD.
inline ClosedLoop::Chooser random_commands(const Ssd& ssd, SsdOp op, std::int64_t size) {
  const std::int64_t slots = ssd.capacity_bytes() / size;
  return [op, size, slots](sim::Rng& rng) {
    return ClosedLoop::Command{op, static_cast<std::int64_t>(rng.uniform(slots)) * size, size};
  };
}

// Back-to-back `size`-byte commands from offset 0 on.
inline ClosedLoop::Chooser sequential_commands(SsdOp op, std::int64_t size) {
  auto next = std::make_shared<std::int64_t>(0);
  return [op, size, next](sim::Rng&) {
    const std::int64_t offset = *next;
    *next += size;
    return ClosedLoop::Command{op, offset, size};
  };
}

}  // namespace afasim::datapac::testing
