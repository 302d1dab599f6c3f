#include "controller/telemetry.h"

#include <algorithm>

#include "controller/array.h"

namespace afasim::controller {

sim::Result<std::unique_ptr<Telemetry>> Telemetry::create(Array& array, TelemetryOptions options) {
  if (options.interval_ns < sim::kMillisecond || options.interval_ns > sim::kHour)
    return sim::invalid_argument("telemetry interval must be 1 ms to 1 h");
  if (options.history_samples < 1 || options.history_samples > 1'000'000)
    return sim::invalid_argument("telemetry history must keep 1 to 1,000,000 samples");
  if (!(options.alerts.drive_wear_limit_percent > 0 && options.alerts.drive_wear_limit_percent <= 1000))
    return sim::invalid_argument("drive wear alert limit must be in (0, 1000] %");
  return std::unique_ptr<Telemetry>(new Telemetry(array, std::move(options)));
}

Telemetry::Telemetry(Array& array, TelemetryOptions options)
    : array_(array),
      options_(std::move(options)),
      counters_(array.data_path().drive_count()),
      history_(options_.history_samples, options_.interval_ns),
      alerts_(array, options_.alerts) {
  for (Id c = 1; c <= 2; ++c) cpu_busy_ns_[static_cast<std::size_t>(c - 1)] = array_.data_path().controller_busy_ns(c);
  counters_.set_activity_callback([this] { wake(); });
  array_.set_perf_counters(&counters_);
  array_.set_telemetry_listener([this](const Event& e) { on_event(e); });
  // Idle ticking off: the first host I/O starts the sampler, so that an idle array's clock
  // does not move at all (with --pace none nothing else would move it).
  if (options_.tick_when_idle) schedule_next();
  else counters_.arm_activity();
}

Telemetry::~Telemetry() {
  array_.set_perf_counters(nullptr);
  array_.set_telemetry_listener(nullptr);
  if (ticking_) array_.simulator().cancel(next_);
  if (evaluation_pending_) array_.simulator().cancel(evaluation_);
}

void Telemetry::on_event(const Event& e) {
  // A state change (a drive failed, a volume degraded, a controller came back) is looked at
  // in an event of its own at the same simulated time, after the change has settled, not
  // from inside the commit that logged it; the alerts' own events change nothing.
  if (e.category == AlertMonitor::kCategory || evaluation_pending_) return;
  evaluation_pending_ = true;
  evaluation_ = array_.simulator().at(array_.simulator().now(), [this] {
    evaluation_pending_ = false;
    alerts_.evaluate();
  });
}

void Telemetry::schedule_next() {
  sim::Simulator& sim = array_.simulator();
  const sim::Time i = options_.interval_ns;
  const sim::Time at = (sim.now() / i + 1) * i;
  next_ = sim.at(at, [this] { on_tick(); });
  ticking_ = true;
}

void Telemetry::wake() {
  if (!ticking_) schedule_next();
}

void Telemetry::on_tick() {
  ticking_ = false;
  sample();
  // pending() counts live events; this one has run, so anything left is someone else's.
  if (options_.tick_when_idle || array_.simulator().pending() > 0) {
    schedule_next();
  } else {
    counters_.arm_activity();
  }
}

double Telemetry::controller_cpu_busy_ratio(Id controller) const {
  const auto s = history_.latest({PerfHistory::Kind::kController, controller});
  return s ? s->cpu_busy_ratio : 0.0;
}

void Telemetry::sample() {
  const sim::Time now = array_.simulator().now();
  PerfStamp stamp{now, std::nullopt};
  if (options_.wall_clock_ms) stamp.wall_ms = options_.wall_clock_ms();
  history_.begin(stamp);

  const DataPath& dp = array_.data_path();
  const int cores = array_.preset().controllers.cpu_cores;
  const double capacity_ns = static_cast<double>(cores) * static_cast<double>(options_.interval_ns);
  double busy_sum = 0;
  std::int64_t dirty_sum = 0;
  for (Id c = 1; c <= 2; ++c) {
    PerfSample s = counters_.close_controller(c);
    const sim::Time busy = dp.controller_busy_ns(c);
    sim::Time& last = cpu_busy_ns_[static_cast<std::size_t>(c - 1)];
    // Core time is booked when work is handed to a core, possibly ahead of now: clamp.
    const double ratio = std::clamp(static_cast<double>(busy - last) / capacity_ns, 0.0, 1.0);
    last = busy;
    s.cpu_busy_ratio = static_cast<float>(ratio);
    s.cache_dirty_bytes = dp.controller_info(c).dirty_bytes;
    busy_sum += ratio;
    dirty_sum += s.cache_dirty_bytes;
    history_.add({PerfHistory::Kind::kController, c}, s);
  }
  PerfSample all = counters_.close_array();
  all.cpu_busy_ratio = static_cast<float>(busy_sum / 2);
  all.cache_dirty_bytes = dirty_sum;
  history_.add({PerfHistory::Kind::kArray, 0}, all);

  for (const auto& [id, v] : array_.volumes()) history_.add({PerfHistory::Kind::kVolume, id}, counters_.close_volume(id));
  // Volumes deleted since the last sample: their rings and counters go (an I/O that
  // completed after the delete may have brought its counters back).
  for (const Id id : history_.ids(PerfHistory::Kind::kVolume))
    if (array_.volume(id) == nullptr) history_.forget({PerfHistory::Kind::kVolume, id});
  for (const Id id : counters_.volume_ids())
    if (array_.volume(id) == nullptr) counters_.forget_volume(id);

  for (int d = 0; d < counters_.drive_count(); ++d)
    history_.add({PerfHistory::Kind::kDrive, d}, counters_.close_drive(d));

  alerts_.evaluate();
}

}  // namespace afasim::controller
