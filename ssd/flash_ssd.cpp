#include "ssd/flash_ssd.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include "sim/assert.h"
#include "sim/prefetch.h"
#include "sim/rng.h"
#include "ssd/flash_ssd_internal.h"

namespace afasim::ssd {

using detail::kUnitBytes;
using detail::mix64;

namespace {

// A die's operation kinds (DieOp::op_kind).
constexpr std::uint8_t kOpNone = 0;
constexpr std::uint8_t kOpProgram = 1;
constexpr std::uint8_t kOpErase = 2;

sim::Time scaled(std::int64_t ns, double m) {
  return std::max<sim::Time>(0, std::llround(static_cast<double>(ns) * m));
}

// Preconditioned replicas are the same for every drive of a model (the preconditioning
// pattern is seeded by the model's name, not the drive), so each is built once per process
// and copied: an array of 40 drives starts in milliseconds, not seconds.
double spare_ratio_of(const config::SsdModel& m) {
  const double usable = static_cast<double>(m.raw_nand_bytes) * (1.0 - m.reserved_fraction);
  return usable / static_cast<double>(m.capacity_bytes);
}

const ReplicaFtl& replica_template(const config::SsdModel& m, StartState start,
                                   double span_fraction) {
  using Key = std::tuple<std::string, std::int64_t, std::int64_t, double, double, int>;
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<const ReplicaFtl>> cache;
  const Key key{m.name, m.capacity_bytes, m.raw_nand_bytes, m.reserved_fraction, span_fraction,
                static_cast<int>(start)};
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it == cache.end()) {
    auto fresh = std::make_unique<ReplicaFtl>(m.capacity_bytes / kUnitBytes, spare_ratio_of(m));
    if (start != StartState::kFresh) {
      const std::int64_t span = std::clamp<std::int64_t>(
          std::llround(span_fraction * static_cast<double>(fresh->user_units())), 1,
          fresh->user_units());
      sim::Rng rng(0x5eed, "precondition/" + m.name);
      fresh->precondition(span, start == StartState::kSteady ? 2.0 : 0.0, rng);
    }
    it = cache.emplace(key, std::move(fresh)).first;
  }
  return *it->second;
}

std::unique_ptr<ReplicaFtl> make_replica(const config::SsdModel& m, StartState start,
                                         double span_fraction) {
  return std::make_unique<ReplicaFtl>(replica_template(m, start, span_fraction));
}

}  // namespace

double FlashSsd::steady_random_write_amplification(const config::SsdModel& model,
                                                   double span_fraction) {
  return 1.0 + replica_template(model, StartState::kSteady, span_fraction).recent_gc_ratio();
}

const char* start_state_name(StartState s) {
  switch (s) {
    case StartState::kFresh: return "fresh";
    case StartState::kFilled: return "filled";
    case StartState::kSteady: return "steady";
  }
  return "?";
}

sim::Result<StartState> parse_start_state(const std::string& s) {
  if (s == "fresh") return StartState::kFresh;
  if (s == "filled") return StartState::kFilled;
  if (s == "steady") return StartState::kSteady;
  return sim::invalid_argument("start state \"" + s + "\": expected fresh, filled or steady");
}

double FlashStats::write_amplification() const {
  return host_program_bytes == 0 ? 1.0
                                 : static_cast<double>(nand_program_bytes()) /
                                       static_cast<double>(host_program_bytes);
}

sim::Status FlashSsd::validate(const config::SsdModel& m) {
  const std::string who = "SSD model \"" + m.name + "\": ";
  if (m.capacity_bytes < 16 * kUnitBytes) return sim::invalid_argument(who + "capacity too small");
  if (m.dies() < 1 || m.nand.page_bytes % kUnitBytes != 0 || m.nand.planes < 1 ||
      m.nand.program_pages < 1)
    return sim::invalid_argument(who + "NAND geometry incomplete");
  if (m.nand.read_ns <= 0 || m.nand.program_ns <= 0 || m.nand.erase_ns <= 0)
    return sim::invalid_argument(who + "NAND times must be positive");
  if (m.nand.channel_bytes_per_second <= 0 || m.host.bytes_per_second() <= 0)
    return sim::invalid_argument(who + "channel and host link rates must be positive");
  if (m.controller.cores < 1) return sim::invalid_argument(who + "controller needs a core");
  const double usable = static_cast<double>(m.raw_nand_bytes) * (1.0 - m.reserved_fraction);
  if (usable <= static_cast<double>(m.capacity_bytes) * 1.02)
    return sim::invalid_argument(who + "NAND less reserved must exceed capacity by 2 %");
  if (m.write_buffer_bytes < m.nand.program_unit_bytes())
    return sim::invalid_argument(who + "write buffer smaller than one program unit");
  if (m.nand.slc_cache_bytes > 0 && (m.nand.slc_program_ns <= 0 || m.nand.slc_read_ns <= 0))
    return sim::invalid_argument(who + "an SLC cache needs slc_program_ns and slc_read_ns");
  return {};
}

FlashSsd::FlashSsd(const config::SsdModel& model, const FlashOptions& options)
    : model_(model), options_(options) {
  const sim::Status ok = validate(model);
  AFASIM_ASSERT(ok.is_ok(), ok.message());
  AFASIM_ASSERT(options.span_fraction > 0 && options.span_fraction <= 1, "span_fraction");
  derive_timing();
  reset(options_.start);
}

FlashSsd::~FlashSsd() = default;
FlashSsd::FlashSsd(FlashSsd&&) noexcept = default;
FlashSsd& FlashSsd::operator=(FlashSsd&&) noexcept = default;

void FlashSsd::derive_timing() {
  const double m = latency_multiplier_;
  const auto& c = model_.controller;
  const auto& n = model_.nand;
  read_cmd_ns_ = scaled(c.read_command_ns, m);
  write_cmd_ns_ = scaled(c.write_command_ns, m);
  read_ovh_ns_ = scaled(c.read_overhead_ns, m);
  write_ovh_ns_ = scaled(c.write_overhead_ns, m);
  t_read_ = std::max<sim::Time>(1, scaled(n.read_ns, m));
  t_prog_ = std::max<sim::Time>(1, scaled(n.program_ns, m));
  t_erase_ = std::max<sim::Time>(1, scaled(n.erase_ns, m));
  t_suspend_ = scaled(n.suspend_ns, m);
  t_slc_prog_ = scaled(n.slc_program_ns, m);
  t_slc_read_ = scaled(n.slc_read_ns, m);
  tlc_unit_ = n.program_unit_bytes();
  slc_unit_ = n.page_bytes * n.planes;
  units_per_page_ = n.page_bytes / kUnitBytes;
  page_div_ = sim::Divisor(n.page_bytes);
  dies_div_ = sim::Divisor(model_.dies());
  channels_div_ = sim::Divisor(model_.geometry.channels);
  erase_per_byte_ = 1.0 / static_cast<double>(n.block_bytes * n.planes);
  host_latency_ns_ = model_.host.latency_ns;
  capacity_bytes_ = model_.capacity_bytes;
  slc_cache_bytes_ = n.slc_cache_bytes;
}

void FlashSsd::reset_state() {
  replica_unit_div_ = sim::Divisor(ftl_->scale() * kUnitBytes);
  mapped_bits_ = ftl_->mapped_bits();
  cores_ = sim::Station(model_.controller.cores);
  dies_.assign(static_cast<std::size_t>(model_.dies()), Die{});
  die_ops_.assign(dies_.size(), DieOp{});
  die_data_ = dies_.data();
  channels_.assign(static_cast<std::size_t>(model_.geometry.channels),
                   Pipe(static_cast<double>(model_.nand.channel_bytes_per_second)));
  channel_data_ = channels_.data();
  link_in_ = Pipe(static_cast<double>(model_.host.bytes_per_second()));
  link_out_ = Pipe(static_cast<double>(model_.host.bytes_per_second()));
  if (model_.controller.write_path_bytes_per_second > 0)
    write_path_ = Pipe(static_cast<double>(model_.controller.write_path_bytes_per_second));
  next_die_ = 0;
  buffer_used_ = host_pending_ = 0;
  last_admit_ = 0;
  admitted_.clear();
  admitted_bytes_ = booked_bytes_ = 0;
  releases_ = {};
  slc_used_ = 0;
  gc_debt_ = 0;
  committed_nand_ = 0;
  update_gc_rate();
  ftl_carry_ = 0;
  bulk_cursor_ = 0;
  bulk_replayed_ = 0;
  stats_ = {};
}

void FlashSsd::reset(StartState start) {
  options_.start = start;
  ftl_ = make_replica(model_, start, options_.span_fraction);
  reset_state();
  // A drive in steady state is in the middle of a sustained write workload: its SLC cache
  // (if any) is full.
  // Its dies are at different points of their erase cycles.
  if (start == StartState::kSteady) {
    slc_used_ = model_.nand.slc_cache_bytes;
    for (std::size_t d = 0; d < dies_.size(); ++d)
      die_ops_[d].erase_debt = static_cast<double>(mix64(d + 1) % 1024) / 1024.0;
  }
}

void FlashSsd::set_latency_multiplier(double m) {
  AFASIM_ASSERT(m > 0 && std::isfinite(m), "latency multiplier must be positive and finite");
  latency_multiplier_ = m;
  derive_timing();
}

void FlashSsd::set_span_fraction(double f) {
  AFASIM_ASSERT(f > 0 && f <= 1, "span_fraction must be in (0, 1]");
  options_.span_fraction = f;
}

double FlashSsd::ftl_write_amplification() const {
  const auto host = ftl_->host_units_written();
  if (host == 0 || !ftl_->steady()) return 1.0;
  return static_cast<double>(host + ftl_->gc_units_relocated()) / static_cast<double>(host);
}

// --- Commands ---

sim::Time FlashSsd::schedule_other(sim::Time arrival, Op op, std::int64_t offset,
                                   std::int64_t length) {
  switch (op) {
    case Op::kRead:
      AFASIM_ASSERT(false, "FlashSsd::schedule_other of a read");
      return arrival;
    case Op::kWrite:
      ++stats_.writes;
      return schedule_write(cores_.serve(arrival, write_cmd_ns_), offset, length);
    case Op::kTrim: {
      const sim::Time t = cores_.serve(arrival, write_cmd_ns_);
      const std::int64_t s = ftl_->scale() * kUnitBytes;
      const std::int64_t first = (offset + s - 1) / s;
      const std::int64_t end = std::min((offset + length) / s, ftl_->user_units());
      for (std::int64_t u = first; u < end; ++u) ftl_->trim(u);
      return t + write_ovh_ns_ + host_latency_ns_;
    }
    case Op::kFlush:
      return schedule_flush(cores_.serve(arrival, write_cmd_ns_));
  }
  return arrival;
}

[[gnu::always_inline]] inline int FlashSsd::die_of_page(std::int64_t page) const {
  // Pages are striped over the dies a stripe at a time, each stripe rotated by a hash of its
  // index: a sequential run touches every die once per stripe, random pages spread evenly.
  AFASIM_ASSERT(page >= 0, "FlashSsd: a negative page");
  const auto p = static_cast<std::uint64_t>(page);
  const std::uint64_t stripe = static_cast<std::uint64_t>(dies_div_.div(page));
  return static_cast<int>(dies_div_.mod_unsigned(p + mix64(stripe)));  // the sum taken modulo 2^64
}

[[gnu::hot]] void FlashSsd::prefetch_read(std::int64_t offset) const {
  const int d = die_of_page(page_div_.div(offset));
  sim::prefetch(&die_data_[d]);
  channel_data_[channels_div_.mod(d)].prefetch();
  link_out_.prefetch();
  // The mapped bit's word (a prefetch of an address past the bitmap, a unit beyond the
  // replica's, loads nothing and never faults).
  sim::prefetch(mapped_bits_ + static_cast<std::size_t>(replica_unit_div_.div(offset)) / 64);
}

// Inline into schedule_read, its only caller.
[[gnu::always_inline]] inline sim::Time FlashSsd::read_on_die(int d, sim::Time t) {
  Die& die = die_data_[d];
  sim::Time start;
  // Whether the last operation booked on the die is a program or erase. A die with none
  // booked since the reset has op_end 0, so this differs from its op_end == busy_until only
  // when busy_until is 0 too, and then busy_until <= t takes the first branch.
  const bool op_last = die.op_end == die.busy_until;
  if (die.busy_until <= t) {
    start = t;
  } else if (op_last && die.op_start > t && std::max(t, die.read_until) + t_read_ <= die.op_start) {
    start = std::max(t, die.read_until);  // fits before a booked program starts
  } else if (op_last && die.op_start > t) {
    // A program booked ahead that has not started: the read goes first, the program moves.
    start = std::max(t, die.read_until);
    const sim::Time shift = start + t_read_ - die.op_start;
    die.op_start += shift;
    die.op_end += shift;
    die.busy_until = die.op_end;
  } else if (op_last && ((die_ops_[static_cast<std::size_t>(d)].op_kind == kOpProgram &&
                          model_.nand.program_suspend) ||
                         (die_ops_[static_cast<std::size_t>(d)].op_kind == kOpErase &&
                          model_.nand.erase_suspend))) {
    // Suspend the operation in progress; back-to-back reads share one suspension.
    const sim::Time s = std::max(t, die.read_until);
    start = s + (s > die.read_until ? t_suspend_ : 0);
    die.op_end += start + t_read_ - s;
    die.busy_until = die.op_end;
    ++stats_.reads_suspended;
  } else {
    if (op_last)
      ++(die_ops_[static_cast<std::size_t>(d)].op_kind == kOpErase ? stats_.reads_waited_erase
                                                                    : stats_.reads_waited_program);
    start = die.busy_until;
  }
  const sim::Time end = start + t_read_;
  die.read_until = end;
  die.busy_until = std::max(die.busy_until, end);
  stats_.read_wait_ns += start - t;
  return end;
}

sim::Time FlashSsd::channel_transfer(int channel, sim::Time at, std::int64_t bytes,
                                     bool background) {
  return channels_[static_cast<std::size_t>(channel)].transfer(at, bytes, background);
}

[[gnu::hot]] sim::Time FlashSsd::schedule_read(sim::Time t, std::int64_t offset, std::int64_t length) {
  advance(t);
  sim::Time first_ready = sim::kTimeMax;
  sim::Time last_ready = t;
  std::int64_t last_bytes = length;
  if (!ReplicaFtl::mapped_in(mapped_bits_, replica_unit_div_.div(offset)) &&
      !ReplicaFtl::mapped_in(mapped_bits_, replica_unit_div_.div(offset + length - 1))) {
    // Never written (or trimmed): the controller answers zeros without touching the NAND.
    first_ready = last_ready = t;
  } else {
    const std::int64_t page_bytes = page_div_.value();
    for (std::int64_t pos = offset; pos < offset + length;) {
      const std::int64_t page = page_div_.div(pos);
      const std::int64_t chunk = std::min(offset + length, (page + 1) * page_bytes) - pos;
      const int d = die_of_page(page);
      const sim::Time sensed = read_on_die(d, t);
      const sim::Time moved = channel_data_[channels_div_.mod(d)].transfer(sensed, chunk);
      first_ready = std::min(first_ready, moved);
      if (moved >= last_ready) {
        last_ready = moved;
        last_bytes = chunk;
      }
      pos += chunk;
    }
  }
  // ECC decode and DMA per chunk (pipelined), then the host link; the link streams data as
  // chunks become ready, the last one crosses it after it is decoded.
  const sim::Time streamed = link_out_.transfer(first_ready + read_ovh_ns_, length);
  const sim::Time link_end =
      std::max(streamed, last_ready + read_ovh_ns_ + link_out_.time_of(last_bytes));
  return link_end + host_latency_ns_;
}

void FlashSsd::update_gc_rate() {
  gc_ratio_ = ftl_->recent_gc_ratio();
  // Pages read per relocated byte: a page holding k units of which a fraction v is valid
  // is read whole if any unit in it is, so reads per relocated unit are
  // (1 − (1 − v)^k) / (k v) (valid data scattered uniformly, as random writes leave it).
  const double k = static_cast<double>(units_per_page_);
  const double v = std::clamp(ftl_->recent_victim_valid_fraction(), 1e-3, 1.0);
  gc_read_pages_per_byte_ = (1.0 - std::pow(1.0 - v, k)) / (k * v) / kUnitBytes;
}

void FlashSsd::feed_ftl(std::int64_t first_unit, std::int64_t units) {
  const std::int64_t scale = ftl_->scale();
  ReplicaFtl::GcWork gc;
  // One real unit in `scale` reaches the replica: the one at which the carry wraps.
  for (std::int64_t next = scale - ftl_carry_; next <= units; next += scale) {
    const std::int64_t real = first_unit + next - 1;
    ftl_->write(std::min(real / scale, ftl_->user_units() - 1), &gc);
  }
  ftl_carry_ = (ftl_carry_ + units) % scale;
  if (gc.victims > 0) update_gc_rate();
  // The real drive collects continuously as it writes: the replica's recent ratio of
  // relocated to host data, applied to every host byte, is the work owed (next_unit says when).
  gc_debt_ += gc_ratio_ * static_cast<double>(units * kUnitBytes);
  committed_nand_ += (1.0 + gc_ratio_) * static_cast<double>(units * kUnitBytes);
}

sim::Time FlashSsd::schedule_write(sim::Time t, std::int64_t offset, std::int64_t length) {
  advance(t);
  const std::int64_t first_unit = offset / kUnitBytes;
  const std::int64_t units = (offset + length - 1) / kUnitBytes - first_unit + 1;
  const std::int64_t bytes = units * kUnitBytes;
  feed_ftl(first_unit, units);
  stats_.host_write_bytes += bytes;

  // Admission into the buffer, in call order, once it has room.
  sim::Time admit = std::max(t, last_admit_);
  const std::int64_t cap = std::max(model_.write_buffer_bytes, bytes);
  for (;;) {
    pop_releases(admit);
    if (buffer_used_ + bytes <= cap) break;
    if (!releases_.empty()) {
      // The dies that come free before the next release do what is owed meanwhile (the
      // collection ahead of the buffered data among it), as the drive's flusher would.
      const sim::Time next_release = releases_.top().at;
      advance(next_release);
      admit = std::max(admit, next_release);
      continue;
    }
    // Everything buffered is still waiting for a die: book the next unit now.
    const Unit u = next_unit(true);
    AFASIM_ASSERT(u != Unit::kNone, "write buffer full with nothing to program");
    next_die_ = earliest_die();
    book_unit(u, admit);
  }
  last_admit_ = admit;
  buffer_used_ += bytes;
  host_pending_ += bytes;
  admitted_bytes_ += bytes;
  admitted_.push_back({admitted_bytes_, admit});

  sim::Time ready = link_in_.transfer(admit, length);
  if (model_.controller.write_path_bytes_per_second > 0)
    ready = std::max(ready, write_path_.transfer(admit, bytes));
  // Buffered data waits for the next call's flusher; a write the buffer cannot hold twice
  // over is programmed at once.
  advance(ready);
  return ready + write_ovh_ns_ + host_latency_ns_;
}

sim::Time FlashSsd::schedule_flush(sim::Time t) {
  advance(t);
  if (model_.power_loss_protection || buffer_used_ == 0)
    return t + write_ovh_ns_ + host_latency_ns_;
  // A volatile buffer: everything in it must reach NAND (a partial unit is padded), its host
  // data first; the collection owed waits (below), so the flush does not wait for it.
  while (host_pending_ > 0) {
    host_pending_ = std::max(host_pending_, slc_unit_);
    book_unit(Unit::kHost, std::max(t, next_host_ready()));  // not before it was admitted
  }
  // Collection is deferred at most by what a full buffer's data owes (the most the
  // full-buffer admission lets pile up); beyond it, it goes on the dies behind this flush. A
  // flush after every write at queue depth 64 let it pile up for as long as the flushes came
  // (an SSD engineer's review, 2026-12-07), and writes after them then waited ~2 s for it.
  const double deferrable = gc_ratio_ * static_cast<double>(model_.write_buffer_bytes) + static_cast<double>(tlc_unit_);
  while (gc_debt_ > deferrable) book_unit(Unit::kGc, t);
  sim::Time done = t;
  while (!releases_.empty()) {
    done = std::max(done, releases_.top().at);
    buffer_used_ -= releases_.top().bytes;
    releases_.pop();
  }
  buffer_used_ = std::max<std::int64_t>(0, buffer_used_);
  return done + write_ovh_ns_ + host_latency_ns_;
}

void FlashSsd::pop_releases(sim::Time t) {
  while (!releases_.empty() && releases_.top().at <= t) {
    buffer_used_ -= releases_.top().bytes;
    releases_.pop();
  }
}

// --- The flusher ---

[[gnu::always_inline]] inline FlashSsd::Unit FlashSsd::next_unit(bool forced) const {
  const bool slc = slc_cache_bytes_ > 0 && slc_used_ + slc_unit_ <= slc_cache_bytes_;
  const std::int64_t host_unit = slc ? slc_unit_ : tlc_unit_;
  const auto unit = static_cast<double>(tlc_unit_);
  // The collection owed for host data already programmed goes first, that owed for data still
  // in the buffer after it, so the two interleave in proportion. All the debt first (it is
  // owed as bytes are admitted) made a burst that filled the buffer owe all its collection at
  // once, programmed before any host unit freed buffer space: tens of ms with no write
  // completing, p99.99 26.5 ms at a 419 us mean on the PBlaze5 (an SSD engineer's review,
  // 2026-12-07). Owed only as host data is programmed instead, a die the next host unit could
  // not use yet (its bytes not admitted) had no collection to do and sat idle.
  if (gc_debt_ - gc_ratio_ * static_cast<double>(host_pending_) >= unit) return Unit::kGc;
  if (host_pending_ >= host_unit) return Unit::kHost;
  if (forced && host_pending_ > 0) return Unit::kHost;
  if (gc_debt_ >= unit) return Unit::kGc;  // nothing else to program: collect ahead
  if (host_pending_ == 0 && slc_used_ >= tlc_unit_) return Unit::kFold;
  return Unit::kNone;
}

// Inline: under a read-only load nothing is owed, found without a call per read.
[[gnu::always_inline]] inline void FlashSsd::advance(sim::Time t) {
  const Unit u = next_unit(false);
  if (u != Unit::kNone) book_owed(u, t);
}

void FlashSsd::book_owed(Unit u, sim::Time t) {
  const int n = static_cast<int>(dies_.size());
  for (;; u = next_unit(false)) {
    if (u == Unit::kNone) return;
    sim::Time ready = u == Unit::kHost ? next_host_ready() : 0;
    if (ready > t) {
      if (gc_debt_ < static_cast<double>(tlc_unit_)) return;
      u = Unit::kGc;  // the host unit's bytes are not admitted yet: the die collects ahead
      ready = 0;
    }
    // The next die of the stripe that is free by t (a die busy with a long erase or garbage
    // collection is skipped, as a controller writes to the dies that are ready).
    int d = next_die_;
    int tried = 0;
    while (tried < n && dies_[static_cast<std::size_t>(d)].busy_until > t) {
      d = d + 1 == n ? 0 : d + 1;
      ++tried;
    }
    if (tried == n) return;
    next_die_ = d;
    book_unit(u, ready);
  }
}

std::int64_t FlashSsd::next_host_unit_bytes() const {
  const bool slc = slc_cache_bytes_ > 0 && slc_used_ + slc_unit_ <= slc_cache_bytes_;
  return std::min(host_pending_, slc ? slc_unit_ : tlc_unit_);
}

sim::Time FlashSsd::next_host_ready() const {
  // The admission holding the unit's last byte (admissions are in time order); past the last
  // admitted byte (a flush pads the unit) the latest one.
  const std::int64_t last = std::min(booked_bytes_ + next_host_unit_bytes(), admitted_bytes_);
  const auto it = std::lower_bound(admitted_.begin(), admitted_.end(), last,
                                   [](const Admitted& a, std::int64_t byte) { return a.end < byte; });
  return it == admitted_.end() ? last_admit_ : it->at;
}

void FlashSsd::consume_admitted(std::int64_t bytes) {
  booked_bytes_ = std::min(booked_bytes_ + bytes, admitted_bytes_);
  while (!admitted_.empty() && admitted_.front().end <= booked_bytes_) admitted_.pop_front();
}

int FlashSsd::earliest_die() const {
  int best = next_die_;
  for (int d = 0; d < static_cast<int>(dies_.size()); ++d)
    if (dies_[static_cast<std::size_t>(d)].busy_until < dies_[static_cast<std::size_t>(best)].busy_until)
      best = d;
  return best;
}

void FlashSsd::book_unit(Unit kind, sim::Time ready) {
  const int d = next_die_;
  next_die_ = (next_die_ + 1) % static_cast<int>(dies_.size());
  Die& die = dies_[static_cast<std::size_t>(d)];
  DieOp& die_op = die_ops_[static_cast<std::size_t>(d)];
  const int channel = d % model_.geometry.channels;
  sim::Time start = std::max(ready, die.busy_until);
  std::uint8_t kind_code = kOpProgram;
  sim::Time erase_part = 0;
  if (die_op.erase_debt >= 1.0) {
    die_op.erase_debt -= 1.0;
    erase_part = t_erase_;
    kind_code = kOpErase;
    ++stats_.block_erases;
  }
  sim::Time op_start = start;
  sim::Time end = op_start;  // every kind below sets it (kNone stops); GCC with a profile cannot tell
  std::int64_t unit = tlc_unit_;
  switch (kind) {
    case Unit::kHost: {
      const bool slc = slc_cache_bytes_ > 0 && slc_used_ + slc_unit_ <= slc_cache_bytes_;
      unit = std::min(host_pending_, slc ? slc_unit_ : tlc_unit_);
      host_pending_ -= unit;
      consume_admitted(unit);
      const sim::Time loaded = channel_transfer(channel, start + erase_part, unit, true);
      end = loaded + (slc ? t_slc_prog_ : t_prog_);
      if (slc) slc_used_ += unit;
      stats_.host_program_bytes += unit;
      releases_.push(Release{end, unit});
      if (!slc && ftl_->steady()) die_op.erase_debt += static_cast<double>(unit) * erase_per_byte_;
      break;
    }
    case Unit::kGc: {
      unit = tlc_unit_;
      gc_debt_ -= static_cast<double>(unit);
      const double pages = static_cast<double>(unit) * gc_read_pages_per_byte_;
      const auto reads = static_cast<sim::Time>(std::ceil(pages));
      const sim::Time sensed = start + erase_part + reads * t_read_;
      // Relocated data goes out to the controller (ECC) and back, twice over the channel, as
      // background traffic: host transfers keep priority on the bus (ssd/pipe.h).
      const sim::Time loaded = channel_transfer(channel, sensed, 2 * unit, true);
      end = loaded + t_prog_;
      stats_.gc_program_bytes += unit;
      die_op.erase_debt += static_cast<double>(unit) * erase_per_byte_;
      break;
    }
    case Unit::kFold: {
      unit = std::min(slc_used_, tlc_unit_);
      slc_used_ -= unit;
      const sim::Time sensed =
          start + erase_part + static_cast<sim::Time>(model_.nand.program_pages) * t_slc_read_;
      const sim::Time loaded = channel_transfer(channel, sensed, 2 * unit, true);
      end = loaded + t_prog_;
      stats_.fold_program_bytes += unit;
      // The SLC blocks emptied and the TLC block filled are both erased once per cycle.
      die_op.erase_debt += 2.0 * static_cast<double>(unit) * erase_per_byte_;
      break;
    }
    case Unit::kNone:
      AFASIM_ASSERT(false, "book_unit(kNone)");
      return;
  }
  die_op.op_kind = kind_code;
  die.op_start = op_start;
  die.op_end = end;
  die.busy_until = end;
}

}  // namespace afasim::ssd
