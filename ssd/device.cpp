#include "ssd/device.h"

#include <algorithm>
#include <cmath>

#include "sim/assert.h"

namespace afasim::ssd {

sim::Result<std::unique_ptr<Device>> Device::create(const config::DeviceSpec& spec,
                                                    const DeviceOptions& options) {
  AFASIM_RETURN_IF_ERROR(FlashSsd::validate(spec.member));
  if (!(options.span_fraction > 0 && options.span_fraction <= 1))
    return sim::invalid_argument("device " + spec.name + ": span fraction must be in (0, 1]");
  if (spec.member_count < 1) return sim::invalid_argument("device " + spec.name + ": no members");
  return std::make_unique<Device>(spec, options);
}

Device::Device(const config::DeviceSpec& spec, const DeviceOptions& options) : spec_(spec) {
  FlashOptions fo;
  fo.start = options.start;
  fo.span_fraction = options.span_fraction;
  for (int i = 0; i < spec.member_count; ++i)
    members_.push_back(std::make_unique<FlashSsd>(spec.member, fo));
  capacity_bytes_ = spec.capacity_bytes();
  if (spec.composition == "raid0")  // whole stripes only
    capacity_bytes_ = spec.member.capacity_bytes / spec.stripe_bytes * spec.stripe_bytes *
                      spec.member_count;
  if (spec.has_switch) {
    up_ns_per_byte_ = 1e9 / static_cast<double>(spec.upstream.bytes_per_second());
    up_in_ = Pipe(static_cast<double>(spec.upstream.bytes_per_second()));
    up_out_ = Pipe(static_cast<double>(spec.upstream.bytes_per_second()));
  }
}

int Device::queue_pairs() const {
  return spec_.member.controller.queue_pairs * member_count();
}

FlashStats Device::total_stats() const {
  FlashStats t;
  for (const auto& m : members_) {
    const FlashStats& s = m->stats();
    t.reads += s.reads;
    t.writes += s.writes;
    t.host_write_bytes += s.host_write_bytes;
    t.host_program_bytes += s.host_program_bytes;
    t.gc_program_bytes += s.gc_program_bytes;
    t.fold_program_bytes += s.fold_program_bytes;
    t.block_erases += s.block_erases;
    t.reads_waited_program += s.reads_waited_program;
    t.reads_waited_erase += s.reads_waited_erase;
    t.reads_suspended += s.reads_suspended;
    t.read_wait_ns += s.read_wait_ns;
  }
  return t;
}

double Device::mean_pe_cycles() const {
  const auto& m = spec_.member;
  const double blocks = static_cast<double>(m.dies()) *
                        static_cast<double>(m.nand.die_bytes / (m.nand.block_bytes * m.nand.planes)) *
                        member_count();
  return static_cast<double>(total_stats().block_erases) / blocks;
}

double Device::pe_spread() const {
  double worst = 1;
  for (const auto& mem : members_) {
    const auto& e = mem->ftl().erase_counts();
    double sum = 0, max = 0;
    for (auto c : e) {
      sum += c;
      max = std::max(max, static_cast<double>(c));
    }
    if (sum > 0) worst = std::max(worst, max / (sum / static_cast<double>(e.size())));
  }
  return worst;
}

void Device::reset(StartState start) {
  for (auto& m : members_) m->reset(start);
  up_in_.reset();
  up_out_.reset();
}

// The members' share of one command: strips of stripe_bytes dealt to consecutive members.
sim::Time Device::schedule_part(sim::Time arrival, Op op, std::int64_t offset,
                                std::int64_t length, sim::Time* first_done) {
  if (members_.size() == 1) {
    const sim::Time done = members_[0]->schedule(arrival, op, offset, length);
    *first_done = done;
    return done;
  }
  const std::int64_t strip = spec_.stripe_bytes;
  const auto n = static_cast<std::int64_t>(members_.size());
  sim::Time last = arrival;
  *first_done = sim::kTimeMax;
  for (std::int64_t pos = offset; pos < offset + length;) {
    const std::int64_t index = pos / strip;
    const std::int64_t chunk = std::min(offset + length, (index + 1) * strip) - pos;
    const std::int64_t member_offset = (index / n) * strip + pos % strip;
    const sim::Time done = members_[static_cast<std::size_t>(index % n)]->schedule(
        arrival, op, member_offset, chunk);
    last = std::max(last, done);
    *first_done = std::min(*first_done, done);
    pos += chunk;
  }
  return last;
}

sim::Result<sim::Time> Device::schedule(sim::Time arrival, Op op, std::int64_t offset,
                                        std::int64_t length) {
  AFASIM_ASSERT(arrival >= 0, "Device::schedule before time 0");
  if (op == Op::kFlush) {
    sim::Time done = arrival;
    for (auto& m : members_) done = std::max(done, m->schedule(arrival, Op::kFlush, 0, 0));
    return done + (spec_.has_switch ? 2 * spec_.switch_latency_ns : 0);
  }
  if (length <= 0)
    return sim::invalid_argument("device " + spec_.name + ": " + std::to_string(length) +
                                 "-byte command");
  if (offset < 0 || offset > capacity_bytes_ - length)
    return sim::Status(sim::Code::kOutOfRange,
                       "device " + spec_.name + ": [" + std::to_string(offset) + ", +" +
                           std::to_string(length) + ") is outside its " +
                           std::to_string(capacity_bytes_) + " bytes");
  if (!spec_.has_switch) {
    sim::Time first;
    return schedule_part(arrival, op, offset, length, &first);
  }
  const sim::Time hop = spec_.switch_latency_ns;
  [[maybe_unused]] const auto up_time = static_cast<sim::Time>(std::ceil(static_cast<double>(length) * up_ns_per_byte_));
  if (op == Op::kWrite) {
    // Data crosses the upstream port first (cut-through: the members start as it arrives).
    const sim::Time up_end = up_in_.transfer(arrival, length);
    sim::Time first;
    const sim::Time done = schedule_part(arrival + hop, op, offset, length, &first);
    return std::max(done, up_end + hop) + hop;
  }
  sim::Time first;
  const sim::Time done = schedule_part(arrival + hop, op, offset, length, &first);
  if (op != Op::kRead) return done + hop;
  // Read data leaves through the upstream port as the members deliver it.
  const sim::Time up_end = std::max(
      up_out_.transfer(first - std::min(first - arrival, up_time / member_count()), length), done);
  return up_end + hop;
}

}  // namespace afasim::ssd
