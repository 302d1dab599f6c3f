// qos::Scheduler: volumes, their settings and shares, and what the API shows of them
// (the scheduling itself is scheduler.cpp).
#include <algorithm>
#include <cstddef>

#include "qos/scheduler.h"
#include "qos/scheduler_internal.h"
#include "sim/assert.h"

namespace afasim::qos {

using detail::add;
using detail::check_share;
using detail::interval_scaled;
using detail::kIdsBelow;
using detail::kNever;
using sim::Status;
using sim::Time;

namespace {

// Empties a volume's request queue into `cookies`, oldest first.
template <typename Queue>
void take_cookies(Queue& queue, std::vector<std::uint64_t>& cookies) {
  for (; !queue.empty(); queue.pop_front()) cookies.push_back(queue.front().cookie);
}

}  // namespace

Status validate(const Settings& s) {
  auto range = [](const char* field, const std::optional<std::int64_t>& v) -> Status {
    if (v && (*v < 0 || *v > kMaxSettingIops))
      return sim::invalid_argument(std::string(field) + " must be between 0 and " +
                                   std::to_string(kMaxSettingIops) + ", got " + std::to_string(*v));
    return Status::ok();
  };
  AFASIM_RETURN_IF_ERROR(range("min_iops", s.min_iops));
  AFASIM_RETURN_IF_ERROR(range("max_iops", s.max_iops));
  AFASIM_RETURN_IF_ERROR(range("burst_iops", s.burst_iops));
  if (s.min_iops && s.max_iops && *s.min_iops > *s.max_iops)
    return sim::invalid_argument("min_iops (" + std::to_string(*s.min_iops) +
                                 ") exceeds max_iops (" + std::to_string(*s.max_iops) + ")");
  if (s.burst_iops && !s.max_iops) return sim::invalid_argument("burst_iops needs max_iops");
  if (s.burst_iops && *s.burst_iops < *s.max_iops)
    return sim::invalid_argument("max_iops (" + std::to_string(*s.max_iops) +
                                 ") exceeds burst_iops (" + std::to_string(*s.burst_iops) + ")");
  return Status::ok();
}

std::optional<Settings> Scheduler::settings(VolumeId id) const {
  const Volume* v = find(id);
  if (v == nullptr) return std::nullopt;
  return v->settings;
}

std::optional<std::int64_t> Scheduler::share_ppm(VolumeId id) const {
  const Volume* v = find(id);
  if (v == nullptr) return std::nullopt;
  return v->share_ppm;
}

// ---------------------------------------------------------------------------------------
// Volumes

Status Scheduler::add_volume(VolumeId id, int resource, const Settings& settings,
                             std::int64_t share_ppm) {
  if (id < 1 || id >= kIdsBelow)
    return sim::invalid_argument("volume id out of range: " + std::to_string(id));
  if (resource < 0 || resource >= resource_count())
    return sim::invalid_argument("no resource " + std::to_string(resource));
  AFASIM_RETURN_IF_ERROR(validate(settings));
  AFASIM_RETURN_IF_ERROR(check_share(share_ppm));
  if (find(id) != nullptr)
    return sim::conflict("volume " + std::to_string(id) + " is already scheduled");
  Volume& v = volumes_.acquire(static_cast<std::uint64_t>(id));
  v = Volume{};
  const Time now = sim_.now();
  v.id = id;
  v.resource = resource;
  v.set_settings(settings);
  v.share_ppm = share_ppm;
  v.r_clock = v.m_clock = v.b_clock = now;
  enlist(v, 1);
  ++volume_count_;
  return Status::ok();
}

Status Scheduler::update_volume(VolumeId id, const Settings& s, std::int64_t share_ppm) {
  Volume* v = find(id);
  if (v == nullptr) return sim::not_found("volume " + std::to_string(id) + " is not scheduled");
  AFASIM_RETURN_IF_ERROR(validate(s));
  AFASIM_RETURN_IF_ERROR(check_share(share_ppm));
  const Time now = sim_.now();
  unfile(*v, now);
  // A pending interval at the old rate is rescaled to the new one, so that a change takes
  // effect at once rather than after the old interval (a max raised from 1 IOPS must not wait
  // a second).
  auto rescale = [now](Time& clock, const std::optional<std::int64_t>& old_iops,
                       const std::optional<std::int64_t>& new_iops) {
    if (!new_iops) return;
    if (!old_iops || *old_iops <= 0 || *new_iops <= 0) {
      clock = now;  // a new, unblocked or blocked pace starts now
      return;
    }
    if (clock <= now) return;
    const __int128 ahead = static_cast<__int128>(clock - now) * *old_iops / *new_iops;
    clock = ahead > kNever - now ? kNever : now + static_cast<Time>(ahead);
  };
  const Settings old = v->settings;
  rescale(v->r_clock, old.min_iops, s.min_iops);
  rescale(v->m_clock, old.max_iops, s.max_iops);
  rescale(v->b_clock, old.burst_iops, s.burst_iops);
  if (!old.max_iops && s.max_iops) {
    // A limit that did not exist has earned no credit yet.
    v->m_clock = now;
    v->b_clock = now;
    v->credit_ns = 0;
  }
  if (!s.max_iops) v->credit_ns = 0;
  enlist(*v, -1);
  v->set_settings(s);
  v->share_ppm = share_ppm;
  enlist(*v, 1);
  if (!v->queue.empty()) file_head(*v, now);
  pump(v->resource);
  return Status::ok();
}

Status Scheduler::move_volume(VolumeId id, int resource) {
  Volume* v = find(id);
  if (v == nullptr) return sim::not_found("volume " + std::to_string(id) + " is not scheduled");
  if (resource < 0 || resource >= resource_count())
    return sim::invalid_argument("no resource " + std::to_string(resource));
  if (resource != v->resource) move(*v, resource);
  return Status::ok();
}

void Scheduler::move(Volume& v, int resource) {
  const Time now = sim_.now();
  const int old = v.resource;
  unfile(v, now);
  enlist(v, -1);
  v.resource = resource;
  enlist(v, 1);
  if (!v.queue.empty()) file_head(v, now);
  pump(old);
  pump(resource);
}

std::vector<std::uint64_t> Scheduler::remove_volume(VolumeId id) {
  std::vector<std::uint64_t> cookies;
  Volume* v = find(id);
  if (v == nullptr) return cookies;
  unfile(*v, sim_.now());
  enlist(*v, -1);
  queued_total_ -= static_cast<std::int64_t>(v->queue.size());
  take_cookies(v->queue, cookies);
  volumes_.release(static_cast<std::uint64_t>(id));
  --volume_count_;
  return cookies;
}

std::vector<std::uint64_t> Scheduler::drain_volume(VolumeId id) {
  std::vector<std::uint64_t> cookies;
  Volume* v = find(id);
  if (v == nullptr || v->queue.empty()) return cookies;
  unfile(*v, sim_.now());  // its heap entries go stale; a pending wake-up finds nothing to do
  queued_total_ -= static_cast<std::int64_t>(v->queue.size());
  take_cookies(v->queue, cookies);
  v->queued = 0;
  return cookies;
}

void Scheduler::enlist(const Volume& v, int sign) {
  if (!v.has_min()) return;
  Resource& r = resources_[static_cast<std::size_t>(v.resource)];
  r.reserving_volumes += sign;
  r.share_ppm += sign * v.share_ppm;
}

std::int64_t Scheduler::held_divisor_ppm(const Volume& v) const {
  const std::int64_t sum = resources_[static_cast<std::size_t>(v.resource)].share_ppm;
  return v.share_ppm == 0 || sum <= kPartsPerMillion ? kPartsPerMillion : sum;
}

Time Scheduler::reservation_interval(const Volume& v, std::int64_t cost_units) const {
  return interval_scaled(cost_units, *v.settings.min_iops, held_divisor_ppm(v));
}

// ---------------------------------------------------------------------------------------
// Status

Time Scheduler::credit_now(const Volume& v, Time now) const {
  Time credit = v.credit_ns;
  if (v.has_max() && v.queue.empty() && v.m_clock < now) credit += now - v.m_clock;
  return std::min(credit, options_.burst_credit_max_ns);
}

std::optional<VolumeStatus> Scheduler::status(VolumeId id) const {
  const Volume* v = find(id);
  if (v == nullptr) return std::nullopt;
  const Time now = sim_.now();
  VolumeStatus s;
  const std::int64_t sec = now / sim::kSecond;
  if (sec == v->second)
    s.current_iops = v->last_second;
  else if (sec == v->second + 1)
    s.current_iops = v->this_second;
  s.throttled_ns = v->throttled_ns +
                   (v->state == State::kLimited ? std::max<Time>(0, now - v->limited_since) : 0);
  s.burst_credit_ns = v->has_burst() ? credit_now(*v, now) : 0;
  AFASIM_ASSERT(v->queued == static_cast<std::int64_t>(v->queue.size()),
                "qos::Scheduler: queued count out of step with the queue");
  s.queued_ios = v->queued;
  s.dispatched_ios = v->dispatched;
  s.reservation_ios = v->reservation;
  s.burst_ios = v->burst;
  s.completed_ios = v->completed;
  if (v->has_min())
    s.min_iops_held = static_cast<std::int64_t>(static_cast<__int128>(*v->settings.min_iops) * kPartsPerMillion /
                                                held_divisor_ppm(*v));
  return s;
}

}  // namespace afasim::qos
