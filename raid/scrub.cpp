#include "raid/scrub.h"

#include <algorithm>
#include <cstdio>

namespace afasim::raid {

using sim::Status;
using sim::Time;

Status Scrubber::validate(const ScrubOptions& o) {
  if (o.bytes_per_second <= 0)
    return sim::invalid_argument("scrub.bytes_per_second must be positive, got " + std::to_string(o.bytes_per_second));
  // At most 10 years: the next pass is scheduled from a clock that may stand at sim::kClockCeiling.
  if (o.pass_interval_ns < 0 || o.pass_interval_ns > 10 * sim::kYear)
    return sim::invalid_argument("scrub.pass_interval must be from 0 to 10 years");
  return Status::ok();
}

Scrubber::Scrubber(sim::Simulator& sim, Engine& engine, ExtentTable& extents, ScrubHost& host, ScrubOptions options)
    : sim_(sim), engine_(engine), extents_(extents), host_(host), options_(options) {
  status_.enabled = options_.enabled;
  if (options_.enabled) start_pass();
}

Scrubber::~Scrubber() { sim_.cancel(next_); }

Status Scrubber::set_options(const ScrubOptions& options) {
  AFASIM_RETURN_IF_ERROR(validate(options));
  const bool was = options_.enabled;
  options_ = options;
  status_.enabled = options.enabled;
  if (options.enabled && !was) {
    start_pass();
  } else if (options.enabled && was && pacing_) {
    // A new rate paces the step waiting for it now (hostile round 36: after 1 B/s, a step
    // waited hours at the old rate though the rate had been raised).
    schedule(std::max(sim_.now(), paced_from_ + sim::transfer_time(step_bytes_, options_.bytes_per_second)));
  } else if (!options.enabled && was) {
    sim_.cancel(next_);
    next_ = {};
    pacing_ = false;
    ++epoch_;
    rows_in_flight_ = 0;
    status_.running = false;
    waiting_ = false;
  }
  return Status::ok();
}

void Scrubber::resume() {
  if (!waiting_ || !options_.enabled) return;
  waiting_ = false;
  schedule(sim_.now());
}

void Scrubber::start_pass() {
  ++epoch_;
  rows_in_flight_ = 0;
  extent_ = 0;
  row_ = -1;
  status_.running = true;
  status_.rows_checked = 0;
  status_.rows_total = 0;
  for (std::size_t id = 0; id < extents_.size(); ++id)
    if (!extents_[static_cast<std::uint32_t>(id)].is_free())
      status_.rows_total += engine_.layout(extents_[static_cast<std::uint32_t>(id)].type).rows();
  at_pass_start_ = status_;
  schedule(sim_.now());
}

void Scrubber::schedule(Time at) {
  sim_.cancel(next_);
  next_ = sim_.at(at, [this] {
    next_ = {};
    pacing_ = false;
    step();
  });
}

bool Scrubber::next_row() {
  while (extent_ < extents_.size()) {
    const Extent& e = extents_[extent_];
    if (!e.is_free() && e.missing == 0 && !e.lost && row_ + 1 < engine_.layout(e.type).rows()) {
      ++row_;
      return true;
    }
    ++extent_;
    row_ = -1;
  }
  return false;
}

void Scrubber::step() {
  if (!options_.enabled) return;
  if (!host_.scrub_allowed()) {
    waiting_ = true;  // resume() continues where the pass stopped
    return;
  }
  std::int64_t bytes = 0;
  int rows = 0;
  for (; rows < kRowsPerStep; ++rows) {
    if (!next_row()) break;
    Extent& e = extents_[extent_];
    plan_.clear();
    engine_.plan_scrub_row(e, row_, plan_);
    const RowVerdict v = engine_.scrub_row(e, row_, plan_);
    for (const MemberOp& op : plan_.ops)
      if (op.op == MemberOpKind::kRead) bytes += op.length;
    ++rows_in_flight_;
    host_.time_scrub(plan_, e, [this, epoch = epoch_, started = sim_.now()] { row_timed(epoch, started); });
    ++status_.rows_checked;
    if (v.media_errors > 0 || v.mismatches > 0) report(e, row_, v);
  }
  status_.bytes_read += bytes;
  step_bytes_ = bytes;
  if (rows == 0) finish_pass();  // the pass ends once its last rows are timed (row_timed)
}

void Scrubber::row_timed(std::uint64_t epoch, Time started) {
  if (epoch != epoch_ || --rows_in_flight_ > 0) return;
  if (extent_ >= extents_.size()) {
    finish_pass();
    return;
  }
  // Paced: the next piece starts when this one is done and the rate allows.
  schedule(std::max(sim_.now(), started + sim::transfer_time(step_bytes_, options_.bytes_per_second)));
  pacing_ = true;
  paced_from_ = started;
}

void Scrubber::report(const Extent& e, std::int64_t row, const RowVerdict& v) {
  status_.media_errors += v.media_errors;
  status_.repaired += v.repaired;
  status_.unrecoverable += v.unrecoverable;
  status_.mismatches += v.mismatches;
  char buf[160];
  std::snprintf(buf, sizeof buf, "scrub of volume %lld extent %lld row %lld: ", static_cast<long long>(e.volume_id),
                static_cast<long long>(e.index), static_cast<long long>(row));
  std::string msg = buf;
  if (v.unrecoverable > 0)
    msg += std::to_string(v.unrecoverable) + " unreadable block(s) beyond what " + std::string(raid_type_name(e.type)) +
           " redundancy covers: reads of them fail";
  else if (v.repaired > 0)
    msg += std::to_string(v.repaired) + " unreadable block(s) rebuilt from redundancy and rewritten";
  if (v.mismatches > 0)
    msg += (v.unrecoverable + v.repaired > 0 ? "; " : "") + std::to_string(v.mismatches) +
           " inconsistent block(s) rewritten from the data";
  msg += " (" + v.detail + ")";
  const ScrubHost::Level level = v.unrecoverable > 0 ? ScrubHost::Level::kError : ScrubHost::Level::kWarning;
  host_.scrub_event(level, "volume/" + std::to_string(e.volume_id), msg);
}

void Scrubber::finish_pass() {
  ++status_.passes_completed;
  status_.running = false;
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "scrub pass %lld complete: %lld rows checked, %lld unreadable block(s) found, %lld repaired, "
                "%lld beyond redundancy, %lld inconsistent",
                static_cast<long long>(status_.passes_completed), static_cast<long long>(status_.rows_checked),
                static_cast<long long>(status_.media_errors - at_pass_start_.media_errors),
                static_cast<long long>(status_.repaired - at_pass_start_.repaired),
                static_cast<long long>(status_.unrecoverable - at_pass_start_.unrecoverable),
                static_cast<long long>(status_.mismatches - at_pass_start_.mismatches));
  host_.scrub_event(ScrubHost::Level::kInfo, "", buf);
  sim_.cancel(next_);
  pacing_ = false;
  next_ = sim_.at(sim_.now() + options_.pass_interval_ns, [this] {
    next_ = {};
    if (options_.enabled) start_pass();
  });
}

}  // namespace afasim::raid
