#include "datapac/ssd.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include "datapac/fault_points.h"
#include "datapac/link.h"
#include "sim/assert.h"

namespace afasim::datapac {
namespace {

// Initial slots of the write buffer's FIFO of undrained writes. The FIFO grows by doubling
// up to its bound, write_buffer_bytes / 4 KiB (every entry holds at least one 4 KiB mapping
// unit and the buffer holds at most write_buffer_bytes), so it reaches its largest size a
// few times per drive and schedule() does not allocate after that; a drive that never fills
// its buffer never pays for the bound (256 KiB for a 64 MiB buffer).
constexpr std::size_t kBufferRingInitialEntries = 64;

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return name != "." && name != "..";
}

sim::Status out_of_range(std::string m) {
  return {sim::Code::kOutOfRange, std::move(m)};
}

}  // namespace

const char* ssd_op_name(SsdOp op) {
  switch (op) {
    case SsdOp::kRead:
      return "read";
    case SsdOp::kWrite:
      return "write";
    case SsdOp::kTrim:
      return "trim";
    case SsdOp::kFlush:
      return "flush";
  }
  return "?";
}

const char* ssd_state_name(SsdState s) {
  switch (s) {
    case SsdState::kHealthy:
      return "healthy";
    case SsdState::kFailed:
      return "failed";
    case SsdState::kRemoved:
      return "removed";
  }
  return "?";
}

sim::Status Ssd::validate(const config::SsdModel& m, const SsdOptions& o) {
  const std::string who = "SSD model \"" + m.name + "\": ";
  if (m.capacity_bytes < kNandPageBytes)
    return sim::invalid_argument(who + "capacity_bytes too small");
  if (m.read_latency_us <= 0 || m.write_latency_us <= 0)
    return sim::invalid_argument(who + "latencies must be positive");
  if (m.random_read_iops <= 0 || m.random_write_iops <= 0)
    return sim::invalid_argument(who + "random IOPS must be positive");
  if (m.seq_read_bytes_per_second <= 0 || m.seq_write_bytes_per_second <= 0)
    return sim::invalid_argument(who + "sequential rates must be positive");
  if (!(m.dwpd > 0) || m.warranty_years <= 0)
    return sim::invalid_argument(who + "dwpd and warranty_years must be positive");
  if (m.raw_nand_bytes <= m.capacity_bytes)
    return sim::invalid_argument(who + "raw_nand_bytes must exceed capacity_bytes");
  if (m.write_buffer_bytes < kMappingUnitBytes || m.write_buffer_bytes >= m.capacity_bytes)
    return sim::invalid_argument(who + "write_buffer_bytes must be in [4096, capacity_bytes)");
  if (!valid_name(o.name))
    return sim::invalid_argument("SSD name \"" + o.name +
                                 "\": 1..64 characters of letters, digits, '.', '_', '-'");
  const std::string me = "SSD " + o.name + ": ";
  if (o.payload == PayloadKind::kMemory &&
      (o.memory_page_bytes < 512 || o.memory_page_bytes > (16 << 20) ||
       (o.memory_page_bytes & (o.memory_page_bytes - 1)) != 0))
    return sim::invalid_argument(me + "memory_page_bytes must be a power of two in [512, 16 MiB]");
  if (o.payload == PayloadKind::kFile && o.payload_directory.empty())
    return sim::invalid_argument(me + "a file payload needs payload_directory");
  if (!(o.host_span_fraction > 0 && o.host_span_fraction <= 1))
    return sim::invalid_argument(me + "host_span_fraction must be in (0, 1]");
  if (!(o.read_jitter_fraction >= 0 && o.read_jitter_fraction <= 0.5))
    return sim::invalid_argument(me + "read_jitter_fraction must be in [0, 0.5]");
  if (o.write_rate_window <= 0)
    return sim::invalid_argument(me + "write_rate_window must be positive");
  return {};
}

sim::Result<std::unique_ptr<Ssd>> Ssd::create(const config::SsdModel& model,
                                              const SsdOptions& options) {
  AFASIM_RETURN_IF_ERROR(validate(model, options));
  auto ssd = std::make_unique<Ssd>(model, options);
  if (!ssd->payload_status().is_ok()) return ssd->payload_status();
  return ssd;
}

Ssd::Ssd(const config::SsdModel& model, const SsdOptions& options)
    : model_(model),
      options_(options),
      rng_(options.seed),
      steady_(options.preconditioned),
      host_rate_(options.write_rate_window > 0 ? options.write_rate_window : sim::kSecond),
      nand_rate_(options.write_rate_window > 0 ? options.write_rate_window : sim::kSecond) {
  const sim::Status valid = validate(model, options);
  AFASIM_ASSERT(valid.is_ok(), valid.message());
  switch (options_.payload) {
    case PayloadKind::kNone:
      payload_ = make_none_store(model_.capacity_bytes);
      break;
    case PayloadKind::kMemory:
      payload_ = make_memory_store(model_.capacity_bytes, options_.memory_page_bytes);
      break;
    case PayloadKind::kFile: {
      const std::string path =
          (std::filesystem::path(options_.payload_directory) / (options_.name + ".payload"))
              .string();
      auto store = open_file_store(path, model_.capacity_bytes);
      if (store.is_ok())
        payload_ = std::move(store).value();
      else
        payload_status_ = store.status();
      break;
    }
  }
  if (options_.wrap_payload && payload_) payload_ = options_.wrap_payload(std::move(payload_), options_.name);

  // Rated endurance in NAND bytes (see endurance_nand_bytes()).
  native_alpha_ =
      static_cast<double>(model_.raw_nand_bytes) / static_cast<double>(model_.capacity_bytes);
  endurance_nand_bytes_ =
      model_.rated_endurance_bytes() * greedy_random_write_amplification(native_alpha_);
  percent_per_nand_byte_ = 100.0 / endurance_nand_bytes_;

  read_q32_ = ns_per_byte_q32(model_.seq_read_bytes_per_second);
  write_q32_ = ns_per_byte_q32(model_.seq_write_bytes_per_second);
  recompute_timing();
  units_.assign(static_cast<std::size_t>(timing_.read_units), 0);
  buffer_ring_.assign(kBufferRingInitialEntries, BufferEntry{0, 0});
}

Ssd::Ssd(Ssd&&) noexcept = default;
Ssd& Ssd::operator=(Ssd&&) noexcept = default;
Ssd::~Ssd() = default;

void Ssd::recompute_timing() {
  const double m = latency_multiplier_;
  SsdTiming& t = timing_;
  t.latency_multiplier = m;
  t.steady_state = steady_;

  // Reads: the QD1 latency is unit time + 4 KiB transfer + a fixed overhead (command
  // decode, FTL lookup, ECC, completion) that pipelines and so occupies no unit. The unit
  // count N and unit time s satisfy Little's law at saturation, N = iops × s, with s as
  // large as the QD1 latency allows: N = ⌊iops × (latency − transfer)⌋, s = N / iops.
  t.read_transfer_4k_ns = fixed_transfer_time(4096, read_q32_);
  const double nand_read_ns =
      static_cast<double>(model_.read_latency_us * sim::kMicrosecond - t.read_transfer_4k_ns);
  const double units = std::floor(static_cast<double>(model_.random_read_iops) * nand_read_ns /
                                  static_cast<double>(sim::kSecond));
  t.read_units = static_cast<int>(std::clamp(units, 1.0, static_cast<double>(kMaxReadUnits)));
  const double unit_ns = std::max(1.0, std::round(static_cast<double>(t.read_units) * sim::kSecond /
                                                  static_cast<double>(model_.random_read_iops)));
  t.read_unit_ns = std::max<sim::Time>(1, std::llround(unit_ns * m));
  const double read_overhead = std::max(0.0, nand_read_ns - unit_ns);
  t.read_overhead_ns = std::llround(read_overhead * m);
  // A read page takes one of N units for s: 1/N of the die array, the drain's share lost.
  read_steal_ns_per_page_ = static_cast<double>(t.read_unit_ns) / t.read_units;

  // Writes: QD1 latency = 4 KiB transfer in + the buffer's acknowledgement overhead.
  t.write_transfer_4k_ns = fixed_transfer_time(4096, write_q32_);
  t.write_overhead_ns = std::llround(
      std::max<double>(0.0, static_cast<double>(model_.write_latency_us * sim::kMicrosecond -
                                                t.write_transfer_4k_ns)) *
      m);
  // Trim and flush update the mapping table or confirm the power-protected buffer: a
  // command round trip with no data, taken as the write latency.
  t.command_ns = std::llround(static_cast<double>(model_.write_latency_us * sim::kMicrosecond) * m);

  // Drain costs per 4 KiB mapping unit. Sequential: the sequential write rate (WA ≈ 1).
  // Random, steady state: the spec's random write IOPS were measured full span with the
  // drive's own spare (WA_native); with more spare (host_span_fraction < 1) WA falls and
  // the same die time programs proportionally more host data: cost ∝ WA / WA_native.
  // Fresh out of the box no GC runs yet: random writes fill erased blocks like sequential.
  t.sequential_drain_ns_per_4k =
      4096.0 * sim::kSecond / static_cast<double>(model_.seq_write_bytes_per_second) * m;
  t.native_write_amplification = greedy_random_write_amplification(native_alpha_);
  const double alpha = native_alpha_ / options_.host_span_fraction;
  const double steady_wa = greedy_random_write_amplification(alpha);
  const double steady_cost = static_cast<double>(sim::kSecond) /
                             static_cast<double>(model_.random_write_iops) * steady_wa /
                             t.native_write_amplification * m;
  if (steady_) {
    t.random_write_amplification = steady_wa;
    t.random_drain_ns_per_4k = steady_cost;
  } else {
    t.random_write_amplification = 1.0;
    t.random_drain_ns_per_4k = std::min(steady_cost, t.sequential_drain_ns_per_4k);
  }
}

// --- Timing ---

sim::Status Ssd::check_access(std::int64_t offset, std::int64_t length) const {
  switch (state()) {
    case SsdState::kHealthy:
      break;
    case SsdState::kFailed:
      return sim::io_error("SSD " + name() + " has failed");
    case SsdState::kRemoved:
      return sim::unavailable("SSD " + name() + " is not present");
  }
  if (offset < 0 || length < 0 || offset > model_.capacity_bytes - length)
    return out_of_range("SSD " + name() + ": [" + std::to_string(offset) + ", +" +
                        std::to_string(length) + ") is outside its " +
                        std::to_string(model_.capacity_bytes) + " bytes");
  return {};
}

sim::Result<sim::Time> Ssd::schedule(sim::Time arrival, SsdOp op, std::int64_t offset,
                                     std::int64_t length) {
  AFASIM_ASSERT(arrival >= 0, "Ssd::schedule before time 0");
  if (op == SsdOp::kFlush) {
    AFASIM_RETURN_IF_ERROR(check_access(0, 0));
    ++counters_.flushes;
    return arrival + timing_.command_ns;
  }
  if (length <= 0) [[unlikely]] {
    AFASIM_RETURN_IF_ERROR(check_access(0, 0));
    return sim::invalid_argument("SSD " + name() + ": " + ssd_op_name(op) + " of " +
                                 std::to_string(length) + " bytes");
  }
  if (state() != SsdState::kHealthy || offset < 0 || offset > model_.capacity_bytes - length)
      [[unlikely]] {
    return check_access(offset, length);
  }
  switch (op) {
    case SsdOp::kRead:
      ++counters_.reads;
      counters_.bytes_read += length;
      return ssd_op_fault(arrival, schedule_read(arrival, offset, length));
    case SsdOp::kWrite:
      ++counters_.writes;
      counters_.bytes_written += length;
      return ssd_op_fault(arrival, schedule_write(arrival, offset, length));
    case SsdOp::kTrim:
      ++counters_.trims;
      counters_.bytes_trimmed += length;
      return arrival + timing_.command_ns;
    case SsdOp::kFlush:
      break;
  }
  AFASIM_ASSERT(false, "unknown SsdOp");
  return arrival;
}

sim::Time Ssd::take_unit(sim::Time arrival, sim::Time duration, sim::Time* end) {
  if (options_.read_jitter_fraction > 0) {
    const double j = options_.read_jitter_fraction;
    duration = std::max<sim::Time>(
        1, std::llround(static_cast<double>(duration) * (1.0 - j + 2.0 * j * rng_.uniform01())));
  }
  // Replace the heap's top (the earliest-free unit) and sift it down.
  const sim::Time start = std::max(arrival, units_[0]);
  const sim::Time value = start + duration;
  const std::size_t n = units_.size();
  std::size_t i = 0;
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && units_[child + 1] < units_[child]) ++child;
    if (units_[child] >= value) break;
    units_[i] = units_[child];
    i = child;
  }
  units_[i] = value;
  *end = value;
  return start;
}

sim::Time Ssd::schedule_read(sim::Time arrival, std::int64_t offset, std::int64_t length) {
  const std::int64_t first_page = offset / kNandPageBytes;
  const std::int64_t pages = (offset + length - 1) / kNandPageBytes - first_page + 1;
  sim::Time first_ready;
  sim::Time nand_done;
  sim::Time first_start;
  if (pages == 1) {
    first_start = take_unit(arrival, timing_.read_unit_ns, &nand_done);
    first_ready = nand_done;
  } else {
    // Spread the pages over up to every unit, greedily to the earliest-free one.
    const std::int64_t k = std::min<std::int64_t>(pages, timing_.read_units);
    const std::int64_t per_unit = pages / k;
    const std::int64_t extra = pages % k;
    first_ready = sim::kTimeMax;
    first_start = sim::kTimeMax;
    nand_done = 0;
    for (std::int64_t i = 0; i < k; ++i) {
      sim::Time end;
      const sim::Time start =
          take_unit(arrival, (per_unit + (i < extra ? 1 : 0)) * timing_.read_unit_ns, &end);
      first_start = std::min(first_start, start);
      first_ready = std::min(first_ready, start + timing_.read_unit_ns);
      nand_done = std::max(nand_done, end);
    }
  }
  // Reads have priority over the buffer's drain but take die time from it.
  if (drain_until_ > first_start)
    drain_until_ += std::llround(static_cast<double>(pages) * read_steal_ns_per_page_);

  // Data leaves through the read stage as pages become ready; the last page still has to
  // cross it after the NAND finishes.
  const sim::Time xfer_start = std::max(first_ready, read_stage_free_);
  const sim::Time xfer_end = xfer_start + fixed_transfer_time(length, read_q32_);
  read_stage_free_ = xfer_end;
  const sim::Time tail =
      nand_done + fixed_transfer_time(std::min(length, kNandPageBytes), read_q32_);
  return std::max(xfer_end, tail) + timing_.read_overhead_ns;
}

double Ssd::sequential_fraction(std::int64_t offset, std::int64_t length) {
  ++stream_clock_;
  // The slot a new stream takes (kWriteStreams): the least recently used entry no longer
  // than this write, else the least recently used of all.
  Stream* lru = &streams_[0];
  Stream* weak = nullptr;
  for (Stream& s : streams_) {
    if (s.next_offset == offset) {
      s.next_offset = offset + length;
      s.last_used = stream_clock_;
      s.run_bytes += length;
      return 1.0;
    }
    if (s.last_used < lru->last_used) lru = &s;
    if (s.run_bytes <= length && (weak == nullptr || s.last_used < weak->last_used)) weak = &s;
  }
  if (weak != nullptr) lru = weak;
  lru->next_offset = offset + length;
  lru->last_used = stream_clock_;
  lru->run_bytes = length;
  return std::clamp(static_cast<double>(length - kMappingUnitBytes) /
                        static_cast<double>(kGcUnitBytes - kMappingUnitBytes),
                    0.0, 1.0);
}

std::int64_t Ssd::add_nand(std::int64_t host_bytes, double sequential) {
  const double factor = sequential + (1.0 - sequential) * timing_.random_write_amplification;
  const double amount = static_cast<double>(host_bytes) * factor + nand_carry_;
  const double whole = std::floor(amount);
  nand_carry_ = amount - whole;
  const auto nand = static_cast<std::int64_t>(whole);
  wear_.nand_bytes_written += nand;
  wear_.percent_endurance_used =
      static_cast<double>(wear_.nand_bytes_written) * percent_per_nand_byte_;
  if (!steady_) {
    // Garbage collection starts once the NAND has been written over once; a write that
    // crosses that point is counted at the fresh rate (at most one write's worth of error).
    nand_since_fresh_ += nand;
    if (nand_since_fresh_ >= model_.raw_nand_bytes) {
      steady_ = true;
      recompute_timing();
    }
  }
  return nand;
}

sim::Time Ssd::schedule_write(sim::Time arrival, std::int64_t offset, std::int64_t length) {
  const std::int64_t units =
      (offset + length - 1) / kMappingUnitBytes - offset / kMappingUnitBytes + 1;
  const std::int64_t buffer_bytes = units * kMappingUnitBytes;
  const double sequential = sequential_fraction(offset, length);
  const auto drain_ns = static_cast<sim::Time>(std::llround(
      static_cast<double>(units) * (sequential * timing_.sequential_drain_ns_per_4k +
                                    (1.0 - sequential) * timing_.random_drain_ns_per_4k)));

  wear_.host_bytes_written += length;
  host_rate_.add(arrival, length);
  nand_rate_.add(arrival, add_nand(buffer_bytes, sequential));

  const std::size_t cap = buffer_ring_.size();
  if (buffer_bytes > model_.write_buffer_bytes) {
    // Larger than the whole buffer: written through once the buffer is empty, draining as
    // the data streams in, acknowledged when it is on NAND.
    const sim::Time admit = std::max({arrival, last_admit_, drain_until_});
    last_admit_ = admit;
    ring_head_ = ring_size_ = 0;
    buffer_used_bytes_ = 0;
    const sim::Time xfer_start = std::max(admit, write_stage_free_);
    const sim::Time xfer_end = xfer_start + fixed_transfer_time(length, write_q32_);
    write_stage_free_ = xfer_end;
    drain_until_ = std::max(xfer_end, xfer_start + drain_ns);
    return drain_until_ + timing_.write_overhead_ns;
  }

  // Admission: FIFO, once the buffer has room for this write.
  sim::Time admit = std::max(arrival, last_admit_);
  while (ring_size_ > 0) {
    const BufferEntry& front = buffer_ring_[ring_head_];
    if (front.drained_at > admit && buffer_used_bytes_ + buffer_bytes <= model_.write_buffer_bytes)
      break;
    admit = std::max(admit, front.drained_at);
    buffer_used_bytes_ -= front.bytes;
    ring_head_ = ring_head_ + 1 == cap ? 0 : ring_head_ + 1;
    --ring_size_;
  }
  last_admit_ = admit;

  const sim::Time xfer_start = std::max(admit, write_stage_free_);
  const sim::Time xfer_end = xfer_start + fixed_transfer_time(length, write_q32_);
  write_stage_free_ = xfer_end;
  drain_until_ = std::max(xfer_end, drain_until_) + drain_ns;

  if (ring_size_ == cap) grow_buffer_ring();
  buffer_ring_[(ring_head_ + ring_size_) % buffer_ring_.size()] =
      BufferEntry{drain_until_, buffer_bytes};
  ++ring_size_;
  buffer_used_bytes_ += buffer_bytes;
  return xfer_end + timing_.write_overhead_ns;
}

void Ssd::grow_buffer_ring() {
  // Bounded: entries hold >= 4 KiB each and at most write_buffer_bytes in all.
  AFASIM_ASSERT(
      static_cast<std::int64_t>(ring_size_) * kMappingUnitBytes <= model_.write_buffer_bytes,
      "write buffer FIFO over its bound");
  std::rotate(buffer_ring_.begin(), buffer_ring_.begin() + static_cast<std::ptrdiff_t>(ring_head_),
              buffer_ring_.end());
  ring_head_ = 0;
  buffer_ring_.resize(buffer_ring_.size() * 2);
}

// --- Payload ---

sim::Status Ssd::write_payload(std::int64_t offset, std::span<const std::uint8_t> data) {
  AFASIM_RETURN_IF_ERROR(check_access(offset, static_cast<std::int64_t>(data.size())));
  if (!payload_status_.is_ok()) return payload_status_;
  if (data.empty()) return {};
  return payload_->write(offset, data);
}

sim::Status Ssd::read_payload(std::int64_t offset, std::span<std::uint8_t> out) const {
  AFASIM_RETURN_IF_ERROR(check_access(offset, static_cast<std::int64_t>(out.size())));
  if (!payload_status_.is_ok()) return payload_status_;
  if (out.empty()) return {};
  AFASIM_RETURN_IF_ERROR(ssd_read_fault(name()));
  return payload_->read(offset, out);
}

sim::Status Ssd::trim_payload(std::int64_t offset, std::int64_t length) {
  AFASIM_RETURN_IF_ERROR(check_access(offset, length));
  if (!payload_status_.is_ok()) return payload_status_;
  if (length == 0) return {};
  return payload_->trim(offset, length);
}

bool Ssd::payload_may_hold_data(std::int64_t offset, std::int64_t length) const {
  if (!check_access(offset, length).is_ok() || !payload_status_.is_ok() || !payload_) return true;
  return payload_->may_hold_data(offset, length);
}

sim::Status Ssd::flush_payload() {
  AFASIM_RETURN_IF_ERROR(check_access(0, 0));
  if (!payload_status_.is_ok()) return payload_status_;
  return payload_->flush();
}

std::int64_t Ssd::payload_memory_bytes() const {
  return payload_ ? payload_->memory_bytes() : 0;
}

// --- State ---

SsdState Ssd::state() const {
  if (!inserted_ || !enclosure_present_) return SsdState::kRemoved;
  return failed_ ? SsdState::kFailed : SsdState::kHealthy;
}

sim::Status Ssd::fail() {
  if (state() == SsdState::kRemoved)
    return sim::precondition_failed("SSD " + name() + " is not present");
  failed_ = true;
  return {};
}

sim::Status Ssd::remove() {
  if (!inserted_) return sim::precondition_failed("SSD " + name() + " is already removed");
  if (!enclosure_present_)
    return sim::precondition_failed("SSD " + name() + ": its DataPac is pulled");
  inserted_ = false;
  return {};
}

sim::Status Ssd::insert() {
  if (!enclosure_present_)
    return sim::precondition_failed("SSD " + name() + ": its DataPac is pulled");
  if (inserted_) return sim::precondition_failed("SSD " + name() + " is already in its slot");
  inserted_ = true;
  return {};
}

sim::Status Ssd::insert_replacement() {
  if (!enclosure_present_)
    return sim::precondition_failed("SSD " + name() + ": its DataPac is pulled");
  if (payload_) AFASIM_RETURN_IF_ERROR(payload_->erase_all());
  failed_ = false;
  inserted_ = true;
  ++incarnation_;
  reset_drive();
  return {};
}

void Ssd::reset_drive() {
  steady_ = false;  // a new drive is fresh out of the box
  std::fill(units_.begin(), units_.end(), 0);
  read_stage_free_ = write_stage_free_ = drain_until_ = last_admit_ = 0;
  ring_head_ = ring_size_ = 0;
  buffer_used_bytes_ = 0;
  streams_ = {};
  stream_clock_ = 0;
  wear_ = {};
  counters_ = {};
  nand_carry_ = 0;
  nand_since_fresh_ = 0;
  host_rate_.reset();
  nand_rate_.reset();
  recompute_timing();
}

void Ssd::set_latency_multiplier(double m) {
  AFASIM_ASSERT(m > 0 && std::isfinite(m), "latency multiplier must be positive and finite");
  latency_multiplier_ = m;
  recompute_timing();
}

// --- Wear ---

sim::Status Ssd::add_bulk_writes(sim::Time start, sim::Time duration, std::int64_t host_bytes,
                                 double sequential_fraction) {
  AFASIM_RETURN_IF_ERROR(check_access(0, 0));
  if (host_bytes < 0 || duration < 0 || start < 0)
    return sim::invalid_argument("SSD " + name() +
                                 ": bulk writes need bytes, start and duration >= 0");
  if (!(sequential_fraction >= 0 && sequential_fraction <= 1))
    return sim::invalid_argument("SSD " + name() + ": sequential_fraction must be in [0, 1]");
  if (host_bytes == 0) return {};
  wear_.host_bytes_written += host_bytes;
  host_rate_.add_span(start, duration, host_bytes);
  std::int64_t nand = 0;
  std::int64_t left = host_bytes;
  while (left > 0) {
    // A fresh drive: the part up to the steady-state transition at WA 1, the rest after it.
    std::int64_t chunk = left;
    if (!steady_) {
      const double factor =
          sequential_fraction + (1.0 - sequential_fraction) * timing_.random_write_amplification;
      const double to_steady =
          static_cast<double>(model_.raw_nand_bytes - nand_since_fresh_) / factor;
      chunk = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(to_steady)), 1, left);
    }
    nand += add_nand(chunk, sequential_fraction);
    left -= chunk;
  }
  nand_rate_.add_span(start, duration, nand);
  return {};
}

sim::Status Ssd::set_host_span_fraction(double fraction) {
  if (!(fraction > 0 && fraction <= 1))
    return sim::invalid_argument("SSD " + name() + ": host_span_fraction must be in (0, 1]");
  options_.host_span_fraction = fraction;
  recompute_timing();
  return {};
}

}  // namespace afasim::datapac
