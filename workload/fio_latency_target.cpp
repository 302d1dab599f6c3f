#include "workload/fio_latency_target.h"

#include <charconv>
#include <string>

#include "sim/assert.h"

namespace afasim::workload {

sim::Status parse_latency_percentile(std::string_view value, double& percentile) {
  std::string_view v = value;
  if (!v.empty() && v.back() == '%') v.remove_suffix(1);
  double p = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), p);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size())
    return sim::invalid_argument("\"" + std::string(value) + "\" is not a percentage (0 to 100)");
  if (!(p >= 0 && p <= 100))
    return sim::invalid_argument("\"" + std::string(value) + "\": must be between 0 and 100");
  percentile = p;
  return sim::Status::ok();
}

LatencyTargetSearch::LatencyTargetSearch(const LatencyTargetSpec& spec, int iodepth)
    : spec_(spec), iodepth_(iodepth) {
  AFASIM_ASSERT(spec.enabled() && iodepth >= 1, "LatencyTargetSearch: no target or no depth");
}

void LatencyTargetSearch::reset(sim::Time now, std::uint64_t completed) {
  end_run_ = false;
  depth_ = 1;
  high_ = iodepth_;
  low_ = 1;
  new_cycle(now, completed);
}

void LatencyTargetSearch::new_cycle(sim::Time now, std::uint64_t completed) {
  window_start_ = now;
  window_ios_ = completed;
  late_ios_ = 0;
}

LatencyTargetSearch::Step LatencyTargetSearch::on_late_io() {
  if (spec_.percentile == 100.0) return ramp_down();
  ++late_ios_;
  return Step::kNone;
}

LatencyTargetSearch::Step LatencyTargetSearch::check(sim::Time now, std::uint64_t completed) {
  // fio compares whole microseconds (utime_since_now against latency_window, in µs).
  if ((now - window_start_) / sim::kMicrosecond < spec_.window_ns / sim::kMicrosecond) return Step::kNone;
  const std::uint64_t ios = completed - window_ios_;
  // fio: (ios - failed) / ios in doubles; a window without an I/O is 0/0, which is no success.
  const double success = static_cast<double>(ios - late_ios_) / static_cast<double>(ios) * 100.0;
  if (success >= spec_.percentile) {
    const Step step = ramp_up();
    if (step == Step::kNone) new_cycle(now, completed);
    return step;
  }
  const Step step = ramp_down();
  return step == Step::kFatal ? Step::kNone : step;  // fio ignores it here: the window goes on
}

LatencyTargetSearch::Step LatencyTargetSearch::ramp_down() {
  if (depth_ == 1) return Step::kFatal;
  high_ = depth_;
  if (depth_ == low_) --low_;
  depth_ = (depth_ + low_) / 2;
  stable_count_ = 0;
  // fio quiesces (every I/O in flight completes), then starts a new window.
  return Step::kQuiesce;
}

LatencyTargetSearch::Step LatencyTargetSearch::ramp_up() {
  const int before = depth_;
  low_ = depth_;
  // One below the bound that failed, and it keeps holding: raise the bound by one every
  // third success in a row (fio's latency_stable_count), so the depth can creep up.
  if (depth_ + 1 == high_ && ++stable_count_ >= 3) {
    ++high_;
    stable_count_ = 0;
  }
  // Doubling until the first failure, then bisecting below the bound it set.
  depth_ = high_ != iodepth_ ? (depth_ + high_) / 2 : depth_ * 2;
  if (depth_ > iodepth_) depth_ = iodepth_;
  if (!spec_.run && depth_ == before) {
    if (end_run_) return Step::kDone;
    end_run_ = true;
    return Step::kFinalRun;  // the caller drains, resets and then starts the window
  }
  return Step::kNone;
}

}  // namespace afasim::workload
