#include "workload/fio_steadystate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "workload/fio_job.h"
#include "workload/fio_job_internal.h"

namespace afasim::workload {

using fio_detail::parse_double;
using fio_detail::quoted;

sim::Status parse_steadystate(std::string_view value, SteadyStateSpec& spec) {
  const auto colon = value.find(':');
  const std::string_view kind = value.substr(0, colon);
  if (kind != "iops" && kind != "iops_slope" && kind != "bw" && kind != "bw_slope") {
    return sim::invalid_argument(quoted(kind) + " is not iops, iops_slope, bw or bw_slope");
  }
  if (colon == std::string_view::npos || colon + 1 == value.size()) {
    return sim::invalid_argument(quoted(value) + ": a limit after the criterion (" + std::string(kind) +
                                 ":10%), as fio asks");
  }
  std::string_view limit = value.substr(colon + 1);
  SteadyStateSpec s = spec;
  s.bandwidth = kind.starts_with("bw");
  s.slope = kind.ends_with("_slope");
  s.percent = limit.ends_with('%');
  if (s.percent) limit.remove_suffix(1);
  if (s.bandwidth && !s.percent) {  // bytes a second, with fio's size units
    auto bytes = parse_fio_size(limit, 1024);
    if (!bytes.is_ok()) return bytes.status();
    s.limit = static_cast<double>(*bytes);
  } else {
    const auto v = parse_double(limit);
    if (!v || !std::isfinite(*v) || *v < 0) return sim::invalid_argument(quoted(limit) + " is not a limit >= 0");
    s.limit = *v;
  }
  spec = s;
  return sim::Status::ok();
}

bool SteadyStateResult::add_sample(std::uint64_t ios, std::uint64_t bytes) {
  const auto window = static_cast<std::size_t>(spec.duration_s);
  const std::uint64_t y = spec.bandwidth ? bytes : ios;
  if (iops.size() == window) {  // the oldest leaves: every other sample's x drops by one
    const std::uint64_t oldest = spec.bandwidth ? bw.front() : iops.front();
    iops.pop_front();
    bw.pop_front();
    sum_y_ -= oldest;
    sum_xy_ -= sum_y_;
    if (max_.front() == oldest) max_.pop_front();
    if (min_.front() == oldest) min_.pop_front();
  }
  sum_xy_ += static_cast<unsigned __int128>(iops.size()) * y;
  sum_y_ += y;
  iops.push_back(ios);
  bw.push_back(bytes);
  while (!max_.empty() && max_.back() < y) max_.pop_back();
  max_.push_back(y);
  while (!min_.empty() && min_.back() > y) min_.pop_back();
  min_.push_back(y);
  if (iops.size() < window) return false;
  const double n = static_cast<double>(window);
  const double sum_y = static_cast<double>(sum_y_);
  const double mean = sum_y / n;
  if (spec.slope) {
    // Least squares over x = 0..n-1 (fio: the samples are taken as evenly spaced); fio's
    // percentage divides by the integer mean.
    const double sum_x = n * (n - 1) / 2, sum_x_sq = (n - 1) * n * (2 * n - 1) / 6;
    slope = window > 1 ? (static_cast<double>(sum_xy_) - sum_x * sum_y / n) / (sum_x_sq - sum_x * sum_x / n) : 0;
    const double int_mean = static_cast<double>(sum_y_ / window);
    criterion = !spec.percent ? slope : int_mean > 0 ? 100.0 * slope / int_mean : slope == 0 ? 0 : INFINITY;
  } else {
    max_deviation = std::max(static_cast<double>(max_.front()) - mean, mean - static_cast<double>(min_.front()));
    criterion = !spec.percent ? max_deviation : mean > 0 ? 100.0 * max_deviation / mean : 0;  // all 0: steady
  }
  attained = std::abs(criterion) < spec.limit;
  return attained;
}

namespace {
std::uint64_t window_mean(const std::deque<std::uint64_t>& v, int duration_s) {
  if (duration_s <= 0) return 0;
  return std::accumulate(v.begin(), v.end(), std::uint64_t{0}) / static_cast<std::uint64_t>(duration_s);
}
}  // namespace

std::uint64_t SteadyStateResult::iops_mean() const { return window_mean(iops, spec.duration_s); }
std::uint64_t SteadyStateResult::bw_mean() const { return window_mean(bw, spec.duration_s); }

std::string SteadyStateResult::criterion_name() const {
  char limit[64];
  std::snprintf(limit, sizeof limit, "%f", static_cast<float>(spec.limit));
  return std::string(spec.bandwidth ? "bw" : "iops") + (spec.slope ? "_slope" : "") + ":" + limit +
         (spec.percent ? "%" : "");
}

namespace fio_detail {

sim::Status check_steadystate_groups(const std::vector<FioJob>& jobs, std::string_view file) {
  // A group's jobs are consecutive (resolve_groups numbers them in file order): each is
  // compared with the one before it.
  for (std::size_t i = 1; i < jobs.size(); ++i) {
    const FioJob& before = jobs[i - 1];
    if (before.group_id != jobs[i].group_id || before.steadystate == jobs[i].steadystate) continue;
    return sim::invalid_argument(std::string(file) + ":" + std::to_string(jobs[i].line) + ": job " + fio_detail::quoted(jobs[i].name) +
                                 ": steadystate options differ from job " + fio_detail::quoted(before.name) +
                                 "'s in its reporting group (fio rejects the job; give every job of the group the same)");
  }
  return sim::Status::ok();
}

}  // namespace fio_detail

}  // namespace afasim::workload
