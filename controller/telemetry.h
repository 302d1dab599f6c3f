// controller::Telemetry — the array's performance history and alerts, sampled every second
// of simulated time (docs/observability.md).
//
// Constructing it hooks a PerfCounters into the Array's I/O path (Array::set_perf_counters)
// and schedules a sampling event every `interval_ns` of simulated time, aligned on whole
// intervals. Each sample closes the interval of every object into the PerfHistory (the
// array, both controllers with their CPU utilisation and dirty cache, every volume, every
// drive) and then lets the AlertMonitor raise and clear alerts. Alerts are also looked at
// right after every event the array logs (a state change), so a condition shorter than a
// second is still raised and cleared. Destroying it removes the hooks and cancels the events.
//
// With `tick_when_idle` false the sampler does not keep an otherwise empty event queue
// busy (`--pace none`, where virtual time would race ahead through empty seconds): it starts
// with the first host I/O, stops when its event is the only one left, and the next host I/O
// starts it again. Its last event can move the clock up to one interval past the last other
// event; an array that sees no host I/O keeps its clock where it was.
//
// The model never reads a clock: `wall_clock_ms`, when given (serve mode), is the seam
// through which the serve runtime stamps each sample with the wall time too.
//
// Not thread-safe: belongs to the model thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "controller/alerts.h"
#include "controller/perf.h"
#include "sim/simulator.h"
#include "sim/status.h"

namespace afasim::controller {

class Array;

struct TelemetryOptions {
  // Sampling interval, simulated ns, [1 ms, 1 h]. The issue asks for per-second samples.
  sim::Time interval_ns = sim::kSecond;
  // Samples kept per object, [1, 1,000,000]: 3,600 is the last hour at one per second.
  // Memory: about 56 bytes × this × (volumes + drives + 3).
  std::size_t history_samples = 3600;
  // Keep sampling while nothing else is scheduled (serve with --pace realtime: charts
  // show idle seconds as zeros). False for --pace none.
  bool tick_when_idle = true;
  AlertOptions alerts;
  // Unix time in ms for a sample's wall stamp; null: samples carry none.
  std::function<std::int64_t()> wall_clock_ms;
};

class Telemetry {
 public:
  // kInvalidArgument for options out of range. REQUIRES: array outlives the Telemetry, which
  // is created and used on the model thread (or before it starts).
  static sim::Result<std::unique_ptr<Telemetry>> create(Array& array, TelemetryOptions options);
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  const TelemetryOptions& options() const { return options_; }
  const PerfCounters& counters() const { return counters_; }
  const PerfHistory& history() const { return history_; }
  std::vector<Alert> alerts() const { return alerts_.active(); }
  // The newest sample of each controller's CPU utilisation (0 before the first sample).
  double controller_cpu_busy_ratio(Id controller) const;

  // Takes a sample now (tests; the scheduled event calls it too).
  void sample();

 private:
  Telemetry(Array& array, TelemetryOptions options);
  void schedule_next();
  void on_tick();
  void wake();
  void on_event(const Event& e);

  Array& array_;
  TelemetryOptions options_;
  PerfCounters counters_;
  PerfHistory history_;
  AlertMonitor alerts_;
  sim::EventId next_;
  bool ticking_ = false;
  sim::EventId evaluation_;  // alerts looked at after a state change
  bool evaluation_pending_ = false;
  std::array<sim::Time, 2> cpu_busy_ns_{};  // each controller's busy core time at the last sample
};

}  // namespace afasim::controller
