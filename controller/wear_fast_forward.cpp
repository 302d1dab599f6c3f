// WearLeveler's fast-forward (docs/wear-leveling.md "Fast-forward"): the measured window's
// per-member rates, then epochs of moves and bulk writes.
#include <algorithm>
#include <cmath>

#include "controller/wear_leveler.h"

namespace afasim::controller {

using sim::Status;
using sim::Time;

void WearLeveler::begin_measurement() {
  const auto& extents = thin_.extents();
  measure_start_ = sim_.now();
  measure_base_.assign(extents.size(), Heat{});
  for (std::size_t id = 0; id < extents.size(); ++id) {
    const auto& e = extents[id];
    if (e.member_count == 0) continue;
    measure_base_[id].volume_id = e.volume_id;
    measure_base_[id].index = e.index;
    measure_base_[id].seen = e.written_bytes;
  }
  measure_host_.assign(static_cast<std::size_t>(hw_.drive_count()), 0);
  measure_sequential_.assign(static_cast<std::size_t>(hw_.drive_count()), 0);
  measure_copy_.assign(static_cast<std::size_t>(hw_.drive_count()), 0);
  for (int d = 0; d < hw_.drive_count(); ++d) {
    measure_host_[static_cast<std::size_t>(d)] = hw_.ssd(d).wear().host_bytes_written;
    measure_sequential_[static_cast<std::size_t>(d)] = hw_.ssd(d).sequential_bytes_written();
    measure_copy_[static_cast<std::size_t>(d)] = mover_.copy_bytes_to(d);
  }
}

void WearLeveler::measure_rates() {
  const auto& extents = thin_.extents();
  const int n = hw_.drive_count();
  const double window_s = sim::to_seconds(sim_.now() - *measure_start_);
  // Each SSD's sequential fraction over the window: the host bytes that continued one of its
  // recent write runs (datapac::Ssd::sequential_bytes_written). Not from the window's NAND /
  // host bytes: a few seconds of sequential writes barely move a drive preconditioned with
  // random ones off its random write amplification (its blocks still hold scattered old data
  // to collect), so 1 MiB streams read as all random and were fast-forwarded at the random WA,
  // 1.43x the wear (model review 28). Replayed as sequential, the replica's WA falls towards 1
  // as the stream overwrites the drive, as a real drive's does. The copies of moves in flight
  // meanwhile are left out (sequential runs): fast-forward counts its own copies, and the σ
  // found here applies to the members' host writes only.
  std::vector<double> drive_sequential(static_cast<std::size_t>(n), 0.0);
  for (int d = 0; d < n; ++d) {
    const auto k = static_cast<std::size_t>(d);
    const auto copy = static_cast<double>(mover_.copy_bytes_to(d) - measure_copy_[k]);
    const auto host =
        static_cast<double>(hw_.ssd(d).wear().host_bytes_written - measure_host_[k]) - copy;
    const auto sequential =
        static_cast<double>(hw_.ssd(d).sequential_bytes_written() - measure_sequential_[k]) - copy;
    if (host > 0) drive_sequential[k] = std::clamp(sequential / host, 0.0, 1.0);
  }
  // Each member's measured rate (host bytes/s) and sequential fraction (its SSD's).
  ff_rates_.assign(extents.size(), {});
  ff_sequential_.assign(extents.size(), {});
  for (std::size_t id = 0; id < extents.size(); ++id) {
    const auto& e = extents[id];
    if (e.member_count == 0) continue;
    const bool same = id < measure_base_.size() && measure_base_[id].volume_id == e.volume_id &&
                      measure_base_[id].index == e.index;
    for (int m = 0; m < e.member_count; ++m) {
      const auto k = static_cast<std::size_t>(m);
      const std::int64_t base = same ? measure_base_[id].seen[k] : 0;
      ff_rates_[id][k] =
          static_cast<double>(std::max<std::int64_t>(0, e.written_bytes[k] - base)) / window_s;
      ff_sequential_[id][k] = drive_sequential[static_cast<std::size_t>(e.members[k].drive)];
    }
  }
  have_rates_ = true;
  measure_start_.reset();
}

int WearLeveler::ff_level(int budget, std::vector<double>& host, std::vector<double>& seq_bytes) {
  const std::int64_t chunk = thin_.allocator().chunk_bytes();
  const double per_move_bytes_per_second =
      static_cast<double>(options_.move_bytes_per_second) / options_.max_moves_in_flight;
  int made = 0;
  for (const pool::PlannedMove& mv : plan(ff_rates_, budget)) {
    auto target = mover_.allocate_target(mv.to_drive);
    if (!target.is_ok()) continue;
    if (Status st = mover_.move_now(mv.extent, mv.member, *target); !st.is_ok()) {
      mover_.release_chunk(*target);
      continue;
    }
    // The copy: a sequential chunk written on the target (reads do not wear). Per I/O, a
    // move lasts chunk / per-move rate, and the host writes to the member's copied part
    // (half of them, on average) land on both chunks: the target gets those too.
    const auto to = static_cast<std::size_t>(mv.to_drive);
    const double copy_s = static_cast<double>(chunk) / per_move_bytes_per_second;
    const double mirrored = ff_rates_[mv.extent][static_cast<std::size_t>(mv.member)] * copy_s / 2;
    host[to] += static_cast<double>(chunk) + mirrored;
    seq_bytes[to] += static_cast<double>(chunk);
    ++ff_moves_;
    ++made;
    ff_move_bytes_ += chunk;
  }
  return made;
}

Status WearLeveler::ff_wear(Time t, Time span, std::vector<double>& host,
                            std::vector<double>& seq_bytes) {
  // The epoch's host writes, where each member is now.
  const auto& extents = thin_.extents();
  const double span_s = sim::to_seconds(span);
  for (std::size_t id = 0; id < extents.size(); ++id) {
    const auto& e = extents[id];
    if (e.member_count == 0 || e.lost) continue;
    for (int m = 0; m < e.member_count; ++m) {
      const auto k = static_cast<std::size_t>(m);
      if (e.is_missing(m) || ff_rates_[id][k] <= 0) continue;
      const double bytes = ff_rates_[id][k] * span_s;
      const auto d = static_cast<std::size_t>(e.members[k].drive);
      host[d] += bytes;
      seq_bytes[d] += bytes * ff_sequential_[id][k];
    }
  }
  Status result;
  for (int d = 0; d < hw_.drive_count(); ++d) {
    const auto k = static_cast<std::size_t>(d);
    if (host[k] <= 0 || hw_.ssd(d).state() != datapac::SsdState::kHealthy) continue;
    const auto bytes = static_cast<std::int64_t>(std::llround(host[k]));
    Status st =
        hw_.ssd(d).add_bulk_writes(t, span, bytes, std::clamp(seq_bytes[k] / host[k], 0.0, 1.0));
    if (!st.is_ok()) result = st;
  }
  return result;
}

void WearLeveler::ff_finish() {
  const auto& extents = thin_.extents();
  notice_replacements();
  update_absorption();
  fast_forwarding_ = false;
  last_tick_ = sim_.now();
  // The heat counters restart from here (fast-forward wrote no host bytes).
  for (std::size_t id = 0; id < heat_.size() && id < extents.size(); ++id)
    if (extents[id].member_count > 0 && heat_[id].volume_id == extents[id].volume_id &&
        heat_[id].index == extents[id].index)
      heat_[id].seen = extents[id].written_bytes;
  mover_.arm_write_wakeup();
}

Status WearLeveler::fast_forward(Time until, Time epoch, const EpochObserver& observer,
                                 const std::function<bool()>& serving) {
  if (until <= sim_.now()) return sim::invalid_argument("fast-forward must end after now");
  if (epoch <= 0) return sim::invalid_argument("fast-forward epochs must be positive");
  if (measure_start_ && sim_.now() > *measure_start_) measure_rates();
  if (!have_rates_)
    return sim::precondition_failed(
        "fast-forward needs write rates: begin_measurement(), then host I/O, first");
  const auto& extents = thin_.extents();
  const int n = hw_.drive_count();
  auto& rates = ff_rates_;
  auto& sequential = ff_sequential_;

  fast_forwarding_ = true;
  sim_.cancel(tick_event_);
  tick_event_ = {};
  const std::int64_t chunk = thin_.allocator().chunk_bytes();
  std::vector<double> host(static_cast<std::size_t>(n)), seq_bytes(static_cast<std::size_t>(n));
  Status result;
  double budget_moves = 0;
  for (Time t = sim_.now(); t < until && result.is_ok();) {
    const Time span = std::min(epoch, until - t);
    notice_replacements();
    update_absorption();
    std::fill(host.begin(), host.end(), 0.0);
    std::fill(seq_bytes.begin(), seq_bytes.end(), 0.0);
    // Leveling between epochs, within the copy rate over the epoch (a fraction of a move
    // left over carries to the next epoch; unused budget does not pile up).
    budget_moves =
        std::min(budget_moves + static_cast<double>(options_.move_bytes_per_second) *
                                    sim::to_seconds(span) / static_cast<double>(chunk),
                 budget_moves + std::max(1.0, static_cast<double>(options_.max_moves_per_epoch)));
    const int budget =
        static_cast<int>(std::min<double>(options_.max_moves_per_epoch, std::floor(budget_moves)));
    const bool off = serving && !serving();  // or both controllers failed: nothing reaches an SSD
    const int made = off ? 0 : ff_level(budget, host, seq_bytes);
    budget_moves = std::min(budget_moves - made, 1.0);
    if (Status st = off ? Status::ok() : ff_wear(t, span, host, seq_bytes); !st.is_ok())
      result = st;
    sim_.run_until(t + span);  // timeline actions, rebuilds, moves already in flight
    t += span;
    // Extents allocated by a rebuild keep their member's rate: rates follow the extent id.
    if (rates.size() < extents.size()) {
      rates.resize(extents.size());
      sequential.resize(extents.size());
    }
    if (observer) observer(t);
  }
  ff_finish();
  return result;
}

}  // namespace afasim::controller
