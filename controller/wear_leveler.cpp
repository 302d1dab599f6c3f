#include "controller/wear_leveler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/assert.h"

namespace afasim::controller {

using pool::WearPolicy;
using sim::Status;
using sim::Time;

Status WearLeveler::validate(const WearLevelingOptions& o, std::int64_t chunk_bytes) {
  if (!(o.stagger_gap_points > 0 && o.stagger_gap_points <= 90))
    return sim::invalid_argument("wear stagger gap must be in (0, 90] points");
  if (!(o.threshold_points > 0 && o.threshold_points <= 50))
    return sim::invalid_argument("wear threshold must be in (0, 50] points");
  if (o.lookahead <= 0) return sim::invalid_argument("wear lookahead must be positive");
  if (o.check_interval < sim::kMillisecond)
    return sim::invalid_argument("wear check interval must be at least 1 ms");
  if (o.move_bytes_per_second <= 0)
    return sim::invalid_argument("wear leveler move rate must be positive");
  if (o.max_moves_in_flight < 1 || o.max_moves_in_flight > 64)
    return sim::invalid_argument("wear leveler moves in flight must be 1 to 64");
  if (o.move_segment_bytes <= 0 || chunk_bytes % o.move_segment_bytes != 0 ||
      o.move_segment_bytes % 4096 != 0)
    return sim::invalid_argument("wear leveler segment must be a multiple of 4 KiB dividing the " +
                                 std::to_string(chunk_bytes) + "-byte chunk");
  if (!(o.heat_smoothing > 0 && o.heat_smoothing <= 1))
    return sim::invalid_argument("wear heat smoothing must be in (0, 1]");
  if (o.max_moves_per_epoch < 0) return sim::invalid_argument("wear moves per epoch must be >= 0");
  return Status::ok();
}

WearLeveler::WearLeveler(sim::Simulator& sim, const WearLevelerParts& parts,
                         WearLevelingOptions options)
    : sim_(sim),
      hw_(parts.hw),
      thin_(parts.thin),
      mover_(parts.mover),
      preset_(parts.preset),
      options_(std::move(options)) {
  AFASIM_ASSERT(validate(options_, thin_.allocator().chunk_bytes()).is_ok(),
                "wear leveling options out of range");
  incarnations_.resize(static_cast<std::size_t>(hw_.drive_count()));
  for (int d = 0; d < hw_.drive_count(); ++d)
    incarnations_[static_cast<std::size_t>(d)] = hw_.ssd(d).incarnation();
  reset_age_order();
}

WearLeveler::~WearLeveler() {
  sim_.cancel(tick_event_);
  mover_.set_write_wakeup({});
  thin_.allocator().set_placement_score({});
}

void WearLeveler::start() {
  started_ = true;
  last_tick_ = sim_.now();
  if (options_.policy != WearPolicy::kOff)
    thin_.allocator().set_placement_score([this](int drive) { return placement_score(drive); },
                                          [this] { least_past_target_ = least_past_target(); });
  mover_.set_write_wakeup([this] {
    last_tick_ = sim_.now();
    arm(sim_.now() + options_.check_interval);
  });
  mover_.arm_write_wakeup();
}

Status WearLeveler::set_options(const WearLevelingOptions& options) {
  AFASIM_RETURN_IF_ERROR(validate(options, thin_.allocator().chunk_bytes()));
  const bool policy_changed = options.policy != options_.policy;
  options_ = options;
  if (policy_changed)
    reset_age_order();
  else
    offsets_ =
        options_.policy == WearPolicy::kStaggered
            ? pool::staggered_offsets(age_order_, offsets_.size(), options_.stagger_gap_points)
            : std::vector<double>(offsets_.size(), 0.0);
  if (started_) {
    if (options_.policy != WearPolicy::kOff)
      thin_.allocator().set_placement_score([this](int drive) { return placement_score(drive); },
                                            [this] { least_past_target_ = least_past_target(); });
    else
      thin_.allocator().set_placement_score({});
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------
// Drives

bool WearLeveler::in_service(int drive) const {
  return hw_.ssd(drive).state() == datapac::SsdState::kHealthy &&
         thin_.allocator().drive(drive).usable;
}

double WearLeveler::percent_per_nand_byte(int drive) const {
  return 100.0 / hw_.ssd(drive).endurance_nand_bytes();
}

double WearLeveler::nand_per_host_byte() const {
  double host = 0, nand = 0;
  for (int d = 0; d < hw_.drive_count(); ++d) {
    if (!in_service(d)) continue;
    host += static_cast<double>(hw_.ssd(d).wear().host_bytes_written);
    nand += static_cast<double>(hw_.ssd(d).wear().nand_bytes_written);
  }
  if (host > 0) return nand / host;
  return hw_.drive_count() > 0 ? hw_.ssd(0).timing().random_write_amplification : 1.0;
}

void WearLeveler::reset_age_order() {
  const int n = hw_.drive_count();
  const int per_datapac = std::max(1, preset_.datapacs.ssds_per_datapac);
  const int datapacs = std::max(1, preset_.datapacs.count);
  // Youngest first: least worn, then slots interleaved across DataPacs so that each DataPac
  // holds the whole range of offsets (a RAID 10 pair's two SSDs wear alike).
  age_order_.resize(static_cast<std::size_t>(n));
  std::iota(age_order_.begin(), age_order_.end(), 0);
  auto interleaved = [&](int d) { return (d % per_datapac) * datapacs + d / per_datapac; };
  std::stable_sort(age_order_.begin(), age_order_.end(), [&](int a, int b) {
    const double wa = hw_.ssd(a).wear().percent_endurance_used;
    const double wb = hw_.ssd(b).wear().percent_endurance_used;
    if (wa != wb) return wa < wb;
    return interleaved(a) < interleaved(b);
  });
  offsets_ = options_.policy == WearPolicy::kStaggered
                 ? pool::staggered_offsets(age_order_, static_cast<std::size_t>(n),
                                           options_.stagger_gap_points)
                 : std::vector<double>(static_cast<std::size_t>(n), 0.0);
}

double WearLeveler::past_target(int drive) const {
  return std::max(0.0, hw_.ssd(drive).wear().percent_endurance_used - offsets_[static_cast<std::size_t>(drive)]);
}

double WearLeveler::least_past_target() const {
  double least = 0;
  bool any = false;
  for (int d = 0; d < hw_.drive_count(); ++d) {
    if (!in_service(d)) continue;
    least = any ? std::min(least, past_target(d)) : past_target(d);
    any = true;
  }
  return least;
}

double WearLeveler::placement_score(int drive) const {
  const pool::DriveSlot& slot = thin_.allocator().drive(drive);
  const std::int64_t total = slot.normal_chunks + slot.spare_chunks;
  const double fill =
      total == 0 ? 1.0 : static_cast<double>(slot.used()) / static_cast<double>(total);
  // A drive's wear past its target offset (past_target), none while it is below it: on a new
  // staggered array every SSD is below its target and places by fill alone (the leveler opens
  // the gap by moving heat), rather than every new extent going to the few oldest-ranked SSDs.
  // The least of those over the drives in service is the allocator's prepare step's.
  const double a = past_target(drive);
  // Wear first, in steps of a quarter threshold (so that noise does not reorder drives),
  // each step worth 1.25 % of fill; capped at 10 % so that a drive with much endurance left
  // takes more new extents than the others but never runs 10 % fuller than they are.
  const double steps = std::floor(4.0 * std::max(0.0, a - least_past_target_) / options_.threshold_points);
  return fill + std::min(0.10, 0.0125 * steps);
}

DriveWear WearLeveler::drive_wear(int drive) const {
  return drive_wear(drive, pooled_level());
}

WearLeveler::PooledLevel WearLeveler::pooled_level() const {
  PooledLevel p;
  if (options_.policy == WearPolicy::kOff) return p;
  const Time now = sim_.now();
  for (int d = 0; d < hw_.drive_count(); ++d) {
    if (!in_service(d)) continue;
    const datapac::Ssd& ssd = hw_.ssd(d);
    p.total_rate_points_per_s += ssd.nand_write_bytes_per_second(now) * percent_per_nand_byte(d);
    p.level_sum_points += ssd.wear().percent_endurance_used - offsets_[static_cast<std::size_t>(d)];
    ++p.n;
  }
  return p;
}

DriveWear WearLeveler::drive_wear(int drive, const PooledLevel& pooled) const {
  const datapac::Ssd& ssd = hw_.ssd(drive);
  const Time now = sim_.now();
  DriveWear w;
  w.drive = drive;
  w.in_service = in_service(drive);
  w.host_bytes_written = ssd.wear().host_bytes_written;
  w.nand_bytes_written = ssd.wear().nand_bytes_written;
  w.write_amplification = ssd.wear().write_amplification();
  w.percent_endurance_used = ssd.wear().percent_endurance_used;
  w.host_write_bytes_per_second = ssd.host_write_bytes_per_second(now);
  w.nand_write_bytes_per_second = ssd.nand_write_bytes_per_second(now);
  w.target_offset_points = offsets_[static_cast<std::size_t>(drive)];
  const double rate = w.nand_write_bytes_per_second * percent_per_nand_byte(drive);
  if (rate > 0) w.life_at_current_rate_s = std::max(0.0, 100.0 - w.percent_endurance_used) / rate;
  // Pooled: the leveler holds every in-service SSD at a common level L plus its offset; L rises
  // at the array's total rate spread over n SSDs; SSD d reaches 100 % when L + offset_d = 100.
  if (options_.policy != WearPolicy::kOff && w.in_service && pooled.total_rate_points_per_s > 0)
    w.life_leveled_s =
        std::max(0.0, ((100.0 - w.target_offset_points) * pooled.n - pooled.level_sum_points) /
                          pooled.total_rate_points_per_s);
  return w;
}

std::vector<DriveWear> WearLeveler::drive_wear_all() const {
  const PooledLevel pooled = pooled_level();  // once, not per drive: every telemetry sample
  std::vector<DriveWear> out;
  for (int d = 0; d < hw_.drive_count(); ++d) out.push_back(drive_wear(d, pooled));
  return out;
}

WearSummary WearLeveler::summary() const {
  WearSummary s;
  s.policy = options_.policy;
  double sum = 0, adj_lo = 0, adj_hi = 0;
  const PooledLevel pooled = pooled_level();
  for (int d = 0; d < hw_.drive_count(); ++d) {
    const DriveWear w = drive_wear(d, pooled);
    if (!w.in_service) continue;
    const double p = w.percent_endurance_used;
    const double a = p - w.target_offset_points;
    if (s.drives_in_service == 0 || p < s.min_percent) {
      s.min_percent = p;
      s.least_worn_drive = d;
    }
    if (s.drives_in_service == 0 || p > s.max_percent) {
      s.max_percent = p;
      s.most_worn_drive = d;
    }
    adj_lo = s.drives_in_service == 0 ? a : std::min(adj_lo, a);
    adj_hi = s.drives_in_service == 0 ? a : std::max(adj_hi, a);
    sum += p;
    ++s.drives_in_service;
    if (w.life_at_current_rate_s && (!s.projected_life_unleveled_s ||
                                     *w.life_at_current_rate_s < *s.projected_life_unleveled_s))
      s.projected_life_unleveled_s = w.life_at_current_rate_s;
    if (w.life_leveled_s && (!s.projected_life_s || *w.life_leveled_s < *s.projected_life_s))
      s.projected_life_s = w.life_leveled_s;
  }
  if (options_.policy == WearPolicy::kOff) s.projected_life_s = s.projected_life_unleveled_s;
  if (s.drives_in_service > 0) {
    s.mean_percent = sum / s.drives_in_service;
    s.spread_points = s.max_percent - s.min_percent;
    s.adjusted_spread_points = adj_hi - adj_lo;
    if (s.min_percent > 0) s.max_min_ratio = s.max_percent / s.min_percent;
  }
  s.moves = mover_.stats();
  s.fast_forward_moves = ff_moves_;
  s.fast_forward_move_bytes = ff_move_bytes_;
  s.replacements = replacements_;
  return s;
}

// ---------------------------------------------------------------------------------------
// Replacements

void WearLeveler::notice_replacements() {
  for (int d = 0; d < hw_.drive_count(); ++d) {
    const std::uint64_t inc = hw_.ssd(d).incarnation();
    if (inc == incarnations_[static_cast<std::size_t>(d)]) continue;
    incarnations_[static_cast<std::size_t>(d)] = inc;
    if (options_.policy == WearPolicy::kStaggered) {
      // Diff-RAID: the new SSD is the youngest; the ones younger than the old one age a rank.
      age_order_.erase(std::find(age_order_.begin(), age_order_.end(), d));
      age_order_.insert(age_order_.begin(), d);
      offsets_ = pool::staggered_offsets(age_order_, offsets_.size(), options_.stagger_gap_points);
    }
    ReplacementRecord r;
    r.drive = d;
    r.replaced_ns = sim_.now();
    r.spread_at_replacement_points = summary().adjusted_spread_points;
    replacements_.push_back(r);
  }
}

void WearLeveler::update_absorption() {
  bool open = false;
  for (const auto& r : replacements_) open |= !r.absorbed_ns.has_value();
  if (!open) return;
  const WearSummary s = summary();
  if (s.adjusted_spread_points > options_.threshold_points) return;
  for (auto& r : replacements_)
    if (!r.absorbed_ns && in_service(r.drive)) r.absorbed_ns = sim_.now();
}

// ---------------------------------------------------------------------------------------
// Heat and planning

bool WearLeveler::update_heat(Time dt) {
  const auto& extents = thin_.extents();
  if (heat_.size() < extents.size()) heat_.resize(extents.size());
  const double seconds = sim::to_seconds(std::max<Time>(dt, 1));
  const double alpha = options_.heat_smoothing;
  bool warm = false;
  for (std::size_t id = 0; id < extents.size(); ++id) {
    const auto& e = extents[id];
    Heat& h = heat_[id];
    if (e.member_count == 0) {
      if (h.index >= 0) h = Heat{};
      continue;
    }
    if (h.volume_id != e.volume_id || h.index != e.index) {
      h = Heat{};
      h.volume_id = e.volume_id;
      h.index = e.index;
    }
    for (int m = 0; m < e.member_count; ++m) {
      const auto k = static_cast<std::size_t>(m);
      std::int64_t delta = e.written_bytes[k] - h.seen[k];
      if (delta < 0) delta = e.written_bytes[k];
      h.seen[k] = e.written_bytes[k];
      double r = alpha * static_cast<double>(delta) / seconds + (1 - alpha) * h.bytes_per_second[k];
      if (r < 1.0) r = 0;  // under a byte a second: cold (lets the leveler go back to sleep)
      h.bytes_per_second[k] = r;
      warm |= r > 0;
    }
  }
  return warm;
}

std::vector<std::array<double, pool::kMaxMembers>> WearLeveler::heat_rates() const {
  std::vector<std::array<double, pool::kMaxMembers>> out(thin_.extents().size());
  for (std::size_t id = 0; id < out.size() && id < heat_.size(); ++id) {
    const auto& e = thin_.extents()[id];
    if (e.member_count > 0 && heat_[id].volume_id == e.volume_id && heat_[id].index == e.index)
      out[id] = heat_[id].bytes_per_second;
  }
  return out;
}

bool WearLeveler::move_allowed(std::uint32_t extent, int member, int to_drive) const {
  const auto& e = thin_.extents()[extent];
  if (!in_service(to_drive)) return false;
  for (int m = 0; m < e.member_count; ++m)
    if (e.members[static_cast<std::size_t>(m)].drive == to_drive) return false;
  // RAID 10 mirrors straddle the DataPacs: a member stays in its own DataPac.
  if (e.type == raid::RaidType::kRaid10 &&
      hw_.datapac_of(to_drive) != hw_.datapac_of(e.members[static_cast<std::size_t>(member)].drive))
    return false;
  const auto* v = thin_.find(e.volume_id);
  if (v == nullptr) return false;
  return std::find(v->pool_drives.begin(), v->pool_drives.end(), to_drive) != v->pool_drives.end();
}

std::vector<pool::PlannedMove> WearLeveler::plan(
    const std::vector<std::array<double, pool::kMaxMembers>>& rates, int max_moves) const {
  if (options_.policy == WearPolicy::kOff || max_moves <= 0) return {};
  const int n = hw_.drive_count();
  std::vector<pool::LevelingDrive> drives(static_cast<std::size_t>(n));
  const double factor = nand_per_host_byte();
  for (int d = 0; d < n; ++d) {
    auto& ld = drives[static_cast<std::size_t>(d)];
    ld.usable = in_service(d);
    ld.wear_points = hw_.ssd(d).wear().percent_endurance_used;
    ld.target_offset_points = offsets_[static_cast<std::size_t>(d)];
    ld.free_chunks = thin_.allocator().drive(d).free_normal_count;
  }
  std::vector<pool::LevelingMember> members;
  const auto& extents = thin_.extents();
  for (std::size_t id = 0; id < extents.size() && id < rates.size(); ++id) {
    const auto& e = extents[id];
    if (e.member_count == 0 || e.lost) continue;
    for (int m = 0; m < e.member_count; ++m) {
      if (e.is_missing(m)) continue;
      int drive = e.members[static_cast<std::size_t>(m)].drive;
      if (e.moving_member == m) drive = e.move_target.drive;  // count it where it is going
      const double r =
          rates[id][static_cast<std::size_t>(m)] * factor * percent_per_nand_byte(drive);
      drives[static_cast<std::size_t>(drive)].rate_points_per_second += r;
      if (r > 0 && e.moving_member < 0 && e.missing == 0)
        members.push_back({static_cast<std::uint32_t>(id), m, drive, r});
    }
  }
  pool::PlanParams params;
  params.threshold_points = options_.threshold_points;
  params.lookahead_seconds = sim::to_seconds(options_.lookahead);
  params.move_cost_points =
      static_cast<double>(thin_.allocator().chunk_bytes()) * percent_per_nand_byte(0);
  params.max_moves = max_moves;
  return pool::plan_moves(std::move(drives), members, params,
                          [this](const pool::LevelingMember& m, int to) {
                            return move_allowed(m.extent, m.member, to);
                          });
}

// ---------------------------------------------------------------------------------------
// Per-I/O process

void WearLeveler::arm(Time at) {
  if (tick_event_.valid()) return;
  tick_event_ = sim_.at(at, [this] {
    tick_event_ = {};
    tick();
  });
}

void WearLeveler::tick() {
  if (!started_ || fast_forwarding_) return;
  const Time now = sim_.now();
  const bool warm = update_heat(now - last_tick_);
  last_tick_ = now;
  notice_replacements();
  update_absorption();
  const int free_slots = options_.max_moves_in_flight - static_cast<int>(mover_.in_flight());
  if (free_slots > 0) {
    const std::int64_t rate =
        std::max<std::int64_t>(1, options_.move_bytes_per_second / options_.max_moves_in_flight);
    for (const pool::PlannedMove& mv : plan(heat_rates(), free_slots)) {
      auto target = mover_.allocate_target(mv.to_drive);
      if (!target.is_ok()) continue;
      Status st =
          mover_.start(mv.extent, mv.member, *target, rate, options_.move_segment_bytes, {});
      if (!st.is_ok()) mover_.release_chunk(*target);
    }
  }
  if (warm || mover_.in_flight() > 0)
    arm(now + options_.check_interval);
  else
    mover_.arm_write_wakeup();  // asleep until the next host write
}

}  // namespace afasim::controller
