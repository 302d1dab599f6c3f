// Helpers for wear-leveling tests: an ISE 860 G3 with a chosen wear policy, and an open-loop
// skewed writer (a few hot volumes, zipf over blocks within each) that drives it in virtual
// time without payload.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "controller/array.h"

namespace afasim::testing {

using namespace afasim::controller;

struct WearArray {
  config::Catalog catalog = config::Catalog::embedded().value();
  config::SystemPreset preset = catalog.system("ise-860-g3").value();
  std::unique_ptr<sim::Simulator> sim;
  MemoryJournal journal;
  std::unique_ptr<Array> array;

  WearArray(std::uint64_t seed, WearLevelingOptions wear, DataPathOptions dpo = {}) {
    sim = std::make_unique<sim::Simulator>(seed);
    ArrayOptions o;
    // A 16 MiB write cache, as the RAID simulation tests: it reaches its steady state (dirty
    // at the low watermark, destaging as fast as writes arrive) within milliseconds, so the
    // SSD write rates the leveler measures are those of the steady state.
    if (dpo.cache.write_cache_bytes == 0) dpo.cache.write_cache_bytes = 16 << 20;
    o.data_path = dpo;
    o.wear = wear;
    auto a = Array::open(*sim, catalog, preset, journal, journal.snapshot(), o);
    REQUIRE(a.is_ok());
    array = std::move(a).value();
  }

  Id add_volume(const std::string& name, std::int64_t bytes, raid::RaidType t,
                Provisioning p = Provisioning::kFixed) {
    VolumeSpec s;
    s.name = name;
    s.capacity_bytes = bytes;
    s.raid_type = t;
    s.provisioning = p;
    auto v = array->create_volume(s);
    REQUIRE(v.is_ok());
    return v->id;
  }
  const WearLeveler& wear() { return array->wear(); }
};

// Zipf(θ) over `n` ranks by inversion of the exact CDF; rank r's block is scattered over
// the volume with fio's multiplicative hash (workload/distribution.h), so hot blocks are not
// packed at the start.
class ZipfBlocks {
 public:
  ZipfBlocks(std::uint64_t n, double theta, std::uint64_t offset) : n_(n), offset_(offset) {
    cdf_.resize(n);
    double sum = 0;
    for (std::uint64_t i = 0; i < n; ++i)
      cdf_[i] = (sum += std::pow(static_cast<double>(i + 1), -theta));
    for (double& c : cdf_) c /= sum;
  }
  std::uint64_t next(sim::Rng& rng) const {
    const double u = rng.uniform01();
    const auto rank =
        static_cast<std::uint64_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
    return (std::min(rank, n_ - 1) * 0x61C8864680B583EBULL + offset_) % n_;
  }

 private:
  std::uint64_t n_;
  std::uint64_t offset_;
  std::vector<double> cdf_;
};

// Open-loop writes (no reads, no payload): Poisson arrivals at `iops`, each to a volume drawn
// by weight, at a zipf block of `block_bytes` within it.
class SkewedWriter {
 public:
  struct Target {
    Id volume;
    std::int64_t bytes;
    double weight;
  };
  SkewedWriter(WearArray& a, std::vector<Target> targets, double iops, std::int64_t block_bytes,
               double theta, std::uint64_t seed)
      : a_(a),
        targets_(std::move(targets)),
        iops_(iops),
        block_(block_bytes),
        rng_(seed, "test.wear.writer") {
    double sum = 0;
    for (const auto& t : targets_) sum += t.weight;
    double acc = 0;
    for (const auto& t : targets_) {
      cumulative_.push_back(acc += t.weight / sum);
      zipf_.push_back(std::make_unique<ZipfBlocks>(static_cast<std::uint64_t>(t.bytes / block_),
                                                   theta, rng_.next_u64()));
    }
  }
  // Submits writes with arrival times in [now, until) and runs the simulation to `until`.
  void run_until(sim::Time until) {
    sim::Time t = a_.sim->now();
    for (;;) {
      t += static_cast<sim::Time>(rng_.exponential(1e9 / iops_));
      if (t >= until) break;
      a_.sim->run_until(t);
      const double u = rng_.uniform01();
      std::size_t i = 0;
      while (i + 1 < targets_.size() && u > cumulative_[i]) ++i;
      HostIo io;
      io.op = IoOp::kWrite;
      io.volume_id = targets_[i].volume;
      io.offset_bytes = static_cast<std::int64_t>(zipf_[i]->next(rng_)) * block_;
      io.length_bytes = block_;
      a_.array->submit(io, [this](const IoCompletion& c) { errors_ += !c.status.is_ok(); });
      ++submitted_;
    }
    a_.sim->run_until(until);
  }
  std::int64_t submitted() const { return submitted_; }
  std::int64_t errors() const { return errors_; }

 private:
  WearArray& a_;
  std::vector<Target> targets_;
  double iops_;
  std::int64_t block_;
  sim::Rng rng_;
  std::vector<double> cumulative_;
  std::vector<std::unique_ptr<ZipfBlocks>> zipf_;
  std::int64_t submitted_ = 0;
  std::int64_t errors_ = 0;
};

}  // namespace afasim::testing
