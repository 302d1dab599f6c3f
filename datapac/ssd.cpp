#include "datapac/ssd.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include "datapac/fault_points.h"
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
  AFASIM_RETURN_IF_ERROR(ssd::FlashSsd::validate(m));
  if (!(m.dwpd > 0) || m.warranty_years <= 0)
    return sim::invalid_argument("SSD model \"" + m.name + "\": dwpd and warranty_years must be positive");
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
    : capacity_bytes_(model.capacity_bytes),
      read_ns_(model.nand.read_ns),
      program_ns_(model.nand.program_ns),
      host_rate_(options.write_rate_window > 0 ? options.write_rate_window : sim::kSecond),
      nand_rate_(options.write_rate_window > 0 ? options.write_rate_window : sim::kSecond),
      model_(model),
      options_(options) {
  const sim::Status valid = validate(model, options);
  AFASIM_ASSERT(valid.is_ok(), valid.message());
  write_run_end_.fill(-1);
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
      auto store = open_file_store(path, model_.capacity_bytes, options_.payload_must_exist);
      if (store.is_ok())
        payload_ = std::move(store).value();
      else
        payload_status_ = store.status();
      break;
    }
  }
  ssd::FlashOptions fo;
  fo.start = options_.preconditioned ? ssd::StartState::kSteady : ssd::StartState::kFresh;
  fo.span_fraction = options_.host_span_fraction;
  flash_ = std::make_unique<ssd::FlashSsd>(model_, fo);
  if (options_.wrap_payload && payload_) payload_ = options_.wrap_payload(std::move(payload_), options_.name);

  // Rated endurance in NAND bytes (see endurance_nand_bytes()).
  endurance_nand_bytes_ = model_.rated_endurance_bytes() *
                          ssd::FlashSsd::steady_random_write_amplification(model_, 1.0);
  percent_per_nand_byte_ = 100.0 / endurance_nand_bytes_;
  refresh_timing();
}

void Ssd::refresh_timing() {
  timing_.native_write_amplification = ssd::FlashSsd::steady_random_write_amplification(model_, 1.0);
  timing_.steady_state = flash_->steady_state();
  timing_.random_write_amplification =
      timing_.steady_state
          ? ssd::FlashSsd::steady_random_write_amplification(model_, options_.host_span_fraction)
          : 1.0;
  timing_.latency_multiplier = latency_multiplier_;
}

Ssd::Ssd(Ssd&&) noexcept = default;
Ssd& Ssd::operator=(Ssd&&) noexcept = default;
Ssd::~Ssd() = default;

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

sim::Result<sim::Time> Ssd::schedule_checked(sim::Time arrival, SsdOp op, std::int64_t offset,
                                             std::int64_t length) {
  AFASIM_ASSERT(arrival >= 0, "Ssd::schedule before time 0");
  if (op == SsdOp::kFlush) {
    AFASIM_RETURN_IF_ERROR(check_access(0, 0));
    ++counters_.flushes;
    return flash_->schedule(arrival, ssd::Op::kFlush, 0, 0);
  }
  if (length <= 0) [[unlikely]] {
    AFASIM_RETURN_IF_ERROR(check_access(0, 0));
    return sim::invalid_argument("SSD " + name() + ": " + ssd_op_name(op) + " of " +
                                 std::to_string(length) + " bytes");
  }
  if (!accepts(offset, length)) [[unlikely]] return check_access(offset, length);
  switch (op) {
    case SsdOp::kRead:
      return schedule_read(arrival, offset, length);
    case SsdOp::kWrite: {
      ++counters_.writes;
      counters_.bytes_written += length;
      const bool was_steady = flash_->steady_state();
      const sim::Time done = ssd_op_fault(flash_->schedule(arrival, ssd::Op::kWrite, offset, length),
                                          program_ns_);
      wear_.host_bytes_written += length;
      note_write_run(offset, length);
      host_rate_.add(arrival, length);
      nand_rate_.add(arrival, count_nand());
      if (!was_steady && flash_->steady_state()) refresh_timing();
      return done;
    }
    case SsdOp::kTrim:
      ++counters_.trims;
      counters_.bytes_trimmed += length;
      return flash_->schedule(arrival, ssd::Op::kTrim, offset, length);
    case SsdOp::kFlush:
      break;
  }
  AFASIM_ASSERT(false, "unknown SsdOp");
  return arrival;
}

std::int64_t Ssd::count_nand() {
  const double committed = flash_->nand_bytes_committed();
  const auto added = static_cast<std::int64_t>(std::floor(committed - nand_committed_));
  nand_committed_ += static_cast<double>(added);
  wear_.nand_bytes_written += added;
  wear_.percent_endurance_used =
      static_cast<double>(wear_.nand_bytes_written) * percent_per_nand_byte_;
  return added;
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
  flash_->reset(ssd::StartState::kFresh);  // a new drive is fresh out of the box
  wear_ = {};
  counters_ = {};
  nand_committed_ = 0;
  host_rate_.reset();
  nand_rate_.reset();
  write_run_end_.fill(-1);
  sequential_bytes_written_ = 0;
  refresh_timing();
}

void Ssd::set_latency_multiplier(double m) {
  AFASIM_ASSERT(m > 0 && std::isfinite(m), "latency multiplier must be positive and finite");
  latency_multiplier_ = m;
  flash_->set_latency_multiplier(m);
  refresh_timing();
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
  const bool was_steady = flash_->steady_state();
  wear_.host_bytes_written += host_bytes;
  sequential_bytes_written_ += std::llround(sequential_fraction * static_cast<double>(host_bytes));
  host_rate_.add_span(start, duration, host_bytes);
  const std::int64_t nand = flash_->add_bulk_writes(host_bytes, sequential_fraction);
  wear_.nand_bytes_written += nand;
  wear_.percent_endurance_used =
      static_cast<double>(wear_.nand_bytes_written) * percent_per_nand_byte_;
  nand_rate_.add_span(start, duration, nand);
  if (!was_steady && flash_->steady_state()) refresh_timing();
  return {};
}

void Ssd::note_write_run(std::int64_t offset, std::int64_t length) {
  for (std::int64_t& end : write_run_end_) {
    if (end == offset) {
      end = offset + length;
      sequential_bytes_written_ += length;
      return;
    }
  }
  write_run_end_[static_cast<std::size_t>(next_write_run_)] = offset + length;
  next_write_run_ = (next_write_run_ + 1) % kWriteRuns;
}

sim::Status Ssd::set_host_span_fraction(double fraction) {
  if (!(fraction > 0 && fraction <= 1))
    return sim::invalid_argument("SSD " + name() + ": host_span_fraction must be in (0, 1]");
  options_.host_span_fraction = fraction;
  flash_->set_span_fraction(fraction);
  refresh_timing();
  return {};
}

}  // namespace afasim::datapac
