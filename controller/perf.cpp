#include "controller/perf.h"

#include <algorithm>
#include <cmath>

#include "sim/assert.h"

namespace afasim::controller {

void IoTotals::record(std::int64_t bytes_in, sim::Time latency_ns, bool ok) {
  if (!ok) {
    ++errors;
    return;
  }
  ++ios;
  bytes += bytes_in;
  latency_ns_sum += latency_ns;
  const auto it = std::lower_bound(kLatencyBucketBoundsNs.begin(), kLatencyBucketBoundsNs.end(), latency_ns);
  ++buckets[static_cast<std::size_t>(it - kLatencyBucketBoundsNs.begin())];
}

void PerfCounters::Interval::record(bool write, std::int64_t bytes, sim::Time latency, bool ok) {
  if (!ok) {
    ++errors;
    return;
  }
  if (write) {
    ++write_ios;
    write_bytes += bytes;
  } else {
    ++read_ios;
    read_bytes += bytes;
  }
  latency_ns.record(latency);
}

PerfSample PerfCounters::Interval::close() {
  PerfSample s;
  s.read_ios = read_ios;
  s.write_ios = write_ios;
  s.errors = errors;
  s.read_bytes = read_bytes;
  s.write_bytes = write_bytes;
  if (latency_ns.count() > 0) {
    s.latency_us_mean = static_cast<float>(latency_ns.mean() / 1e3);
    s.latency_us_p99 = static_cast<float>(static_cast<double>(latency_ns.percentile(99)) / 1e3);
    s.latency_us_max = static_cast<float>(static_cast<double>(latency_ns.max()) / 1e3);
  }
  read_ios = write_ios = errors = 0;
  read_bytes = write_bytes = 0;
  latency_ns.clear();
  return s;
}

void PerfCounters::Object::record(bool write, std::int64_t bytes, sim::Time latency, bool ok) {
  open.record(write, bytes, latency, ok);
  (write ? totals.write : totals.read).record(bytes, latency, ok);
}

PerfCounters::PerfCounters(int drive_count) : drives_(static_cast<std::size_t>(drive_count)) {
  AFASIM_ASSERT(drive_count >= 0, "drive count");
}

void PerfCounters::host_io(Id volume_id, Id controller, IoOp op, std::int64_t bytes, sim::Time latency_ns,
                           bool ok) {
  activity();
  const bool data = op == IoOp::kRead || op == IoOp::kWrite;
  if (!data && ok) return;
  const bool write = op != IoOp::kRead;
  if (Object* v = volume(volume_id, true)) v->record(write, bytes, latency_ns, ok);
  if (controller == 1 || controller == 2) controllers_[index(controller)].record(write, bytes, latency_ns, ok);
  array_.record(write, bytes, latency_ns, ok);
}

void PerfCounters::drive_op(int drive, bool write, std::int64_t bytes, sim::Time latency_ns) {
  const auto d = static_cast<std::size_t>(drive);
  if (d < drives_.size()) drives_[d].record(write, bytes, latency_ns, true);
}

const ObjectTotals* PerfCounters::volume_totals(Id volume_id) const {
  const Object* v = volume(volume_id);
  return v == nullptr ? nullptr : &v->totals;
}

PerfSample PerfCounters::close_volume(Id volume_id) {
  Object* v = volume(volume_id, false);
  return v == nullptr ? PerfSample{} : v->open.close();
}

PerfSample PerfCounters::close_controller(Id controller) { return controllers_.at(index(controller)).open.close(); }

PerfSample PerfCounters::close_drive(int drive) { return drives_.at(static_cast<std::size_t>(drive)).open.close(); }

PerfSample PerfCounters::close_array() { return array_.open.close(); }

PerfCounters::Object* PerfCounters::volume(Id volume_id, bool create) {
  if (volume_id < 0) return nullptr;
  const auto id = static_cast<std::uint64_t>(volume_id);
  std::optional<Object>* slot = create ? &volumes_.acquire(id) : volumes_.find(id);
  if (slot == nullptr) return nullptr;
  if (!*slot && create) slot->emplace();
  return *slot ? &**slot : nullptr;
}

void PerfCounters::forget_volume(Id volume_id) {
  if (volume_id >= 0) volumes_.release(static_cast<std::uint64_t>(volume_id));
}

std::vector<Id> PerfCounters::volume_ids() const {
  std::vector<Id> out;
  volumes_.for_each([&](std::uint64_t id, const std::optional<Object>&) { out.push_back(static_cast<Id>(id)); });
  return out;
}

// ---------------------------------------------------------------------------------------

PerfHistory::PerfHistory(std::size_t capacity, sim::Time interval_ns)
    : capacity_(capacity), interval_ns_(interval_ns) {
  AFASIM_ASSERT(capacity >= 1, "a history keeps at least one sample");
  AFASIM_ASSERT(interval_ns > 0, "a history interval is positive");
}

void PerfHistory::Ring::put(std::int64_t row, const PerfSample& s, std::size_t capacity) {
  // A row the object missed (it cannot happen through Telemetry, which samples every
  // object every row) is kept as zeros so that positions stay aligned with the stamps.
  while (end_row <= row) {
    const auto pos = static_cast<std::size_t>(end_row - first_row) % capacity;
    const PerfSample& value = end_row == row ? s : PerfSample{};
    if (pos < samples.size()) samples[pos] = value;
    else samples.push_back(value);
    ++end_row;
  }
}

void PerfHistory::begin(PerfStamp stamp) {
  const auto pos = static_cast<std::size_t>(rows_) % capacity_;
  if (pos < stamps_.size()) stamps_[pos] = stamp;
  else stamps_.push_back(stamp);
  ++rows_;
}

void PerfHistory::add(Key key, const PerfSample& sample) {
  AFASIM_ASSERT(rows_ > 0, "PerfHistory::add before begin");
  const std::int64_t row = rows_ - 1;
  auto [it, inserted] = rings_.try_emplace(key);
  if (inserted) it->second.first_row = it->second.end_row = row;
  if (it->second.end_row > row) return;  // already has this row
  it->second.put(row, sample, capacity_);
}

void PerfHistory::forget(Key key) { rings_.erase(key); }

std::vector<Id> PerfHistory::ids(Kind kind) const {
  std::vector<Id> out;
  for (const auto& [key, ring] : rings_)
    if (key.kind == kind) out.push_back(key.id);
  return out;
}

PerfSeries PerfHistory::series(Key key, std::optional<sim::Time> since_ns, std::size_t limit) const {
  PerfSeries out;
  out.interval_ns = interval_ns_;
  const auto it = rings_.find(key);
  if (it == rings_.end()) return out;
  const Ring& r = it->second;
  const auto cap = static_cast<std::int64_t>(capacity_);
  std::int64_t first = std::max(r.first_row, r.end_row - cap);
  first = std::max(first, r.end_row - static_cast<std::int64_t>(limit));
  for (std::int64_t row = first; row < r.end_row; ++row) {
    const PerfStamp& stamp = stamps_[static_cast<std::size_t>(row % cap)];
    if (since_ns && stamp.time_ns <= *since_ns) continue;
    out.stamps.push_back(stamp);
    out.samples.push_back(r.samples[static_cast<std::size_t>((row - r.first_row) % cap)]);
  }
  return out;
}

std::optional<PerfSample> PerfHistory::latest(Key key) const {
  const auto it = rings_.find(key);
  if (it == rings_.end() || it->second.end_row == it->second.first_row) return std::nullopt;
  const Ring& r = it->second;
  return r.samples[static_cast<std::size_t>((r.end_row - 1 - r.first_row) % static_cast<std::int64_t>(capacity_))];
}

}  // namespace afasim::controller
