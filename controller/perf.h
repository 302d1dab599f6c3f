// controller::PerfCounters and PerfHistory — what the array did, per second and in total,
// per volume, controller and drive (docs/observability.md).
//
// PerfCounters is the target of two one-line hooks in the I/O path: IoOrchestrator::finish_io
// reports every host I/O as the host saw it (QoS wait included), Hardware::backend every
// SSD command with the SSD's own service time. It keeps
//   - the open interval of each object (I/Os, bytes, errors, a latency histogram), closed
//     into one PerfSample per object by close_interval(), and
//   - running totals since the counters were created (what GET /metrics shows as
//     Prometheus counters and histograms), never reset.
// PerfHistory keeps the closed samples: a bounded ring per object, one sample per interval,
// all objects aligned on one ring of timestamps. Memory is bounded by capacity ×
// (objects + 1) samples; a full ring drops its oldest sample.
//
// Not thread-safe: both belong to the model thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "controller/io.h"
#include "controller/objects.h"
#include "sim/histogram.h"
#include "sim/id_table.h"
#include "sim/time.h"

namespace afasim::controller {

// One interval of one object. Counts are of I/Os completed in the interval; latency figures
// are of the successful ones (0 when there were none). cpu_busy_ratio and cache_dirty_bytes
// are filled for controllers and the array only.
struct PerfSample {
  std::uint32_t read_ios = 0;
  std::uint32_t write_ios = 0;
  std::uint32_t errors = 0;
  float cpu_busy_ratio = 0;  // busy core time ÷ (cores × interval), 0..1
  std::int64_t read_bytes = 0;
  std::int64_t write_bytes = 0;
  float latency_us_mean = 0;
  float latency_us_p99 = 0;
  float latency_us_max = 0;
  std::int64_t cache_dirty_bytes = 0;  // at the end of the interval
};

// Upper bounds of the Prometheus latency histogram buckets, in ns (+Inf is implied). From
// 50 µs (below the fastest 4 KiB read the model times, ~90 µs through the controller) to
// 10 s (an I/O parked through a controller takeover), about three buckets per decade.
inline constexpr std::array<sim::Time, 16> kLatencyBucketBoundsNs = {
    50'000,     100'000,     200'000,     500'000,       1'000'000,     2'000'000,
    5'000'000,  10'000'000,  20'000'000,  50'000'000,    100'000'000,   200'000'000,
    500'000'000, 1'000'000'000, 2'000'000'000, 10'000'000'000};

// Totals since the counters were created, of one object and one direction (read or write).
struct IoTotals {
  std::int64_t ios = 0;     // successful completions
  std::int64_t bytes = 0;   // their bytes
  std::int64_t errors = 0;  // failed completions
  sim::Time latency_ns_sum = 0;
  // buckets[i]: successful I/Os with latency <= kLatencyBucketBoundsNs[i] (not cumulative:
  // one count per bucket; the exposition accumulates them). buckets.back() counts the rest.
  std::array<std::int64_t, kLatencyBucketBoundsNs.size() + 1> buckets{};
  void record(std::int64_t bytes, sim::Time latency_ns, bool ok);
};

// Read and write totals of one object.
struct ObjectTotals {
  IoTotals read, write;
};

class PerfCounters {
 public:
  // `drive_count` drives (indexes 0..drive_count−1), controllers 1 and 2.
  explicit PerfCounters(int drive_count);

  // Hook: a host I/O on `volume_id` through controller `controller` (1 or 2; 0 when none
  // served it) completed after `latency_ns`, successfully or not. Reads and writes count;
  // trims, write-zeroes and flushes count only as errors when they fail.
  void host_io(Id volume_id, Id controller, IoOp op, std::int64_t bytes, sim::Time latency_ns, bool ok);
  // Hook: SSD `drive` (index) served a command of `bytes` in `latency_ns` (its own queueing
  // and service, links excluded). `write` false for reads (trims and flushes are not passed).
  void drive_op(int drive, bool write, std::int64_t bytes, sim::Time latency_ns);

  // Called once on the first hook after arm_activity() (a sampler that stopped ticking while
  // the model was idle starts again).
  void set_activity_callback(std::function<void()> callback) { on_activity_ = std::move(callback); }
  void arm_activity() { activity_armed_ = true; }

  // Totals; absent objects have none yet.
  const ObjectTotals* volume_totals(Id volume_id) const;
  const ObjectTotals& controller_totals(Id controller) const { return controllers_.at(index(controller)).totals; }
  const ObjectTotals& drive_totals(int drive) const { return drives_.at(static_cast<std::size_t>(drive)).totals; }
  const ObjectTotals& array_totals() const { return array_.totals; }
  int drive_count() const { return static_cast<int>(drives_.size()); }

  // The open interval of each object as a sample, which is then cleared. Volumes that have
  // seen no I/O since the last close get an all-zero sample when asked for.
  PerfSample close_volume(Id volume_id);
  PerfSample close_controller(Id controller);
  PerfSample close_drive(int drive);
  PerfSample close_array();
  // Forgets a deleted volume's interval and totals.
  void forget_volume(Id volume_id);
  // Volumes with counters, ascending.
  std::vector<Id> volume_ids() const;

 private:
  struct Interval {
    std::uint32_t read_ios = 0, write_ios = 0, errors = 0;
    std::int64_t read_bytes = 0, write_bytes = 0;
    sim::Histogram latency_ns;
    void record(bool write, std::int64_t bytes, sim::Time latency_ns, bool ok);
    PerfSample close();
  };
  struct Object {
    Interval open;
    ObjectTotals totals;
    void record(bool write, std::int64_t bytes, sim::Time latency_ns, bool ok);
  };
  static std::size_t index(Id controller) { return static_cast<std::size_t>(controller - 1); }
  void activity() {
    if (activity_armed_) {
      activity_armed_ = false;
      if (on_activity_) on_activity_();
    }
  }

  // The volume's counters, or null. `create`: made on first use.
  Object* volume(Id volume_id, bool create);
  const Object* volume(Id volume_id) const { return const_cast<PerfCounters*>(this)->volume(volume_id, false); }

  // By volume id: a page and an entry per host I/O, where a map walked ~10 cold nodes with
  // 1,000 volumes.
  sim::IdTable<std::optional<Object>> volumes_;
  std::array<Object, 2> controllers_;
  std::vector<Object> drives_;
  Object array_;
  std::function<void()> on_activity_;
  bool activity_armed_ = false;
};

// When one interval ended: simulated time, and the wall clock then when there is one.
struct PerfStamp {
  sim::Time time_ns = 0;
  std::optional<std::int64_t> wall_ms;  // Unix time in ms (serve mode); nullopt in batch
};

// A time series of one object, oldest first.
struct PerfSeries {
  sim::Time interval_ns = 0;
  std::vector<PerfStamp> stamps;
  std::vector<PerfSample> samples;  // same length as stamps
};

// What PerfHistory keeps of each object: one ring of samples per object, one of stamps.
class PerfHistory {
 public:
  // REQUIRES: capacity >= 1 samples per object; interval_ns > 0.
  PerfHistory(std::size_t capacity, sim::Time interval_ns);

  enum class Kind { kArray, kController, kVolume, kDrive };
  struct Key {
    Kind kind = Kind::kArray;
    Id id = 0;  // controller id, volume id, drive index; 0 for the array
    auto operator<=>(const Key&) const = default;
  };

  // Starts a new interval row stamped `stamp`; then add() one sample per object.
  void begin(PerfStamp stamp);
  void add(Key key, const PerfSample& sample);
  // Drops an object's ring (a deleted volume).
  void forget(Key key);

  // The samples of `key` whose interval ended after `since_ns` (all when nullopt), at most
  // the newest `limit`. Empty for an unknown key.
  PerfSeries series(Key key, std::optional<sim::Time> since_ns, std::size_t limit) const;
  bool has(Key key) const { return rings_.count(key) != 0; }
  // The ids of the objects of `kind` that have a ring, ascending.
  std::vector<Id> ids(Kind kind) const;
  std::size_t capacity() const { return capacity_; }
  sim::Time interval_ns() const { return interval_ns_; }
  // Rows begun so far (also those dropped from the rings).
  std::int64_t rows() const { return rows_; }
  // The newest sample of `key`, nullopt when it has none.
  std::optional<PerfSample> latest(Key key) const;

 private:
  // Row r of an object lives at samples[(r − first_row) % capacity], for the rows in
  // [max(first_row, end_row − capacity), end_row); stamps likewise at stamps_[r % capacity].
  struct Ring {
    std::int64_t first_row = 0;
    std::int64_t end_row = 0;
    std::vector<PerfSample> samples;  // grows to capacity, then wraps
    void put(std::int64_t row, const PerfSample& s, std::size_t capacity);
  };
  std::size_t capacity_;
  sim::Time interval_ns_;
  std::vector<PerfStamp> stamps_;
  std::int64_t rows_ = 0;
  std::map<Key, Ring> rings_;
};

}  // namespace afasim::controller
