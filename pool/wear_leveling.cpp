#include "pool/wear_leveling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

#include "sim/assert.h"

namespace afasim::pool {

const char* wear_policy_name(WearPolicy policy) {
  switch (policy) {
    case WearPolicy::kOff:
      return "off";
    case WearPolicy::kEven:
      return "even";
    case WearPolicy::kStaggered:
      return "staggered";
  }
  return "even";
}

sim::Result<WearPolicy> parse_wear_policy(std::string_view text) {
  for (WearPolicy p : {WearPolicy::kOff, WearPolicy::kEven, WearPolicy::kStaggered})
    if (text == wear_policy_name(p)) return p;
  return sim::invalid_argument("wear policy \"" + std::string(text) +
                               "\" is not one of off, even, staggered");
}

double adjusted_spread_points(const std::vector<LevelingDrive>& drives) {
  double lo = 0, hi = 0;
  int n = 0;
  for (const LevelingDrive& d : drives) {
    if (!d.usable) continue;
    const double a = d.wear_points - d.target_offset_points;
    lo = n == 0 ? a : std::min(lo, a);
    hi = n == 0 ? a : std::max(hi, a);
    ++n;
  }
  return n < 2 ? 0.0 : hi - lo;
}

std::vector<double> staggered_offsets(const std::vector<int>& age_order, std::size_t drive_count,
                                      double gap_points) {
  std::vector<double> out(drive_count, 0.0);
  const std::size_t n = age_order.size();
  for (std::size_t r = 0; r < n; ++r) {
    AFASIM_ASSERT(age_order[r] >= 0 && static_cast<std::size_t>(age_order[r]) < drive_count,
                  "drive out of range");
    out[static_cast<std::size_t>(age_order[r])] =
        n < 2 ? 0.0 : gap_points * static_cast<double>(r) / static_cast<double>(n - 1);
  }
  return out;
}

namespace {

// How many candidate sources / targets / members one step looks at: enough to find a move
// on a 40-SSD array, bounded so that a plan stays O(moves × small).
constexpr std::size_t kPairsEachWay = 8;
constexpr int kMembersTried = 48;

// One planning run of plan_moves: the projected wear of every drive, each drive's movable
// members by rate, and the moves chosen so far.
class Planner {
 public:
  Planner(std::vector<LevelingDrive> drives, const std::vector<LevelingMember>& members, const PlanParams& params,
          const MoveAllowed& allowed)
      : drives_(std::move(drives)), members_(members), params_(params), allowed_(allowed),
        p_(drives_.size(), 0.0), on_(drives_.size()) {}

  std::vector<PlannedMove> run() {
    project();
    if (usable_.size() < 2 || params_.max_moves <= 0) return moves_;
    sort_members();
    double threshold = params_.threshold_points;  // to start; then half of it (hysteresis)
    while (static_cast<int>(moves_.size()) < params_.max_moves && round(threshold))
      threshold = params_.threshold_points / 2;
    return moves_;
  }

 private:
  // A member's effect on p: its rate over the lookahead.
  double delta(std::size_t k) const { return members_[k].rate_points_per_second * params_.lookahead_seconds; }

  void project() {
    for (std::size_t i = 0; i < drives_.size(); ++i) {
      const LevelingDrive& d = drives_[i];
      if (!d.usable) continue;
      p_[i] = d.wear_points - d.target_offset_points + d.rate_points_per_second * params_.lookahead_seconds;
      usable_.push_back(i);
    }
  }

  // Each drive's movable members, by rate ascending (ties by extent, member: deterministic).
  void sort_members() {
    for (std::size_t k = 0; k < members_.size(); ++k) {
      const LevelingMember& m = members_[k];
      AFASIM_ASSERT(m.drive >= 0 && static_cast<std::size_t>(m.drive) < drives_.size(), "member on an unknown drive");
      if (m.rate_points_per_second > 0 && drives_[static_cast<std::size_t>(m.drive)].usable)
        on_[static_cast<std::size_t>(m.drive)].push_back(k);
    }
    auto by_rate = [&](std::size_t a, std::size_t b) {
      const LevelingMember& x = members_[a];
      const LevelingMember& y = members_[b];
      if (x.rate_points_per_second != y.rate_points_per_second)
        return x.rate_points_per_second < y.rate_points_per_second;
      return x.extent != y.extent ? x.extent < y.extent : x.member < y.member;
    };
    for (auto& list : on_) std::sort(list.begin(), list.end(), by_rate);
  }

  // The member on `src` whose delta is closest to `want` among those with 0 < delta < limit,
  // allowed to go to `dst`; SIZE_MAX when none.
  std::size_t pick(std::size_t src, std::size_t dst, double want, double limit) const {
    const auto& list = on_[src];
    if (list.empty()) return SIZE_MAX;
    // First index whose delta >= want.
    std::size_t hi = static_cast<std::size_t>(
        std::lower_bound(list.begin(), list.end(), want, [&](std::size_t k, double w) { return delta(k) < w; }) -
        list.begin());
    std::size_t lo = hi;  // candidates below: lo - 1, lo - 2, ...
    int tried = 0;
    while (tried < kMembersTried && (lo > 0 || hi < list.size())) {
      // Alternate outward from `want`, nearer side first.
      const bool take_hi = hi < list.size() &&
                           (lo == 0 || std::abs(delta(list[hi]) - want) <= std::abs(delta(list[lo - 1]) - want));
      const std::size_t k = take_hi ? list[hi++] : list[--lo];
      const double d = delta(k);
      if (!(d > 0 && d < limit)) continue;  // out of range: not a try
      ++tried;
      if (planned_extents_.count(members_[k].extent)) continue;
      if (allowed_(members_[k], static_cast<int>(dst))) return k;
    }
    return SIZE_MAX;
  }

  // The drives above the mean (most worn first) and those below it with room (least first),
  // at most kPairsEachWay each; false when the spread is within `threshold`.
  bool candidates(double threshold, std::vector<std::size_t>& srcs, std::vector<std::size_t>& dsts) const {
    double lo = p_[usable_[0]], hi = p_[usable_[0]], sum = 0;
    for (std::size_t i : usable_) {
      lo = std::min(lo, p_[i]);
      hi = std::max(hi, p_[i]);
      sum += p_[i];
    }
    if (hi - lo <= threshold) return false;
    const double mean = sum / static_cast<double>(usable_.size());
    for (std::size_t i : usable_) {
      if (p_[i] > mean) srcs.push_back(i);
      else if (drives_[i].free_chunks > 0) dsts.push_back(i);
    }
    std::stable_sort(srcs.begin(), srcs.end(), [&](std::size_t a, std::size_t b) { return p_[a] > p_[b]; });
    std::stable_sort(dsts.begin(), dsts.end(), [&](std::size_t a, std::size_t b) { return p_[a] < p_[b]; });
    if (srcs.size() > kPairsEachWay) srcs.resize(kPairsEachWay);
    if (dsts.size() > kPairsEachWay) dsts.resize(kPairsEachWay);
    return true;
  }

  // Plans one move; false when there is none to make.
  bool round(double threshold) {
    std::vector<std::size_t> srcs, dsts;
    if (!candidates(threshold, srcs, dsts)) return false;
    for (std::size_t src : srcs) {
      for (std::size_t dst : dsts) {
        // The gap the move can close, after the copy's own wear on the target.
        const double gap = p_[src] - p_[dst] - params_.move_cost_points;
        if (gap <= params_.threshold_points / 2) break;  // later targets are closer still
        const std::size_t k = pick(src, dst, gap / 2, gap);
        if (k == SIZE_MAX) continue;
        take(k, src, dst);
        return true;
      }
    }
    return false;
  }

  void take(std::size_t k, std::size_t src, std::size_t dst) {
    const LevelingMember& m = members_[k];
    moves_.push_back({m.extent, m.member, static_cast<int>(src), static_cast<int>(dst)});
    planned_extents_.insert(m.extent);
    p_[src] -= delta(k);
    p_[dst] += delta(k) + params_.move_cost_points;
    drives_[src].free_chunks += 1;
    drives_[dst].free_chunks -= 1;
    auto& from = on_[src];
    from.erase(std::find(from.begin(), from.end(), k));
    // The member stays planned-for on its new drive only as rate: one move per extent.
  }

  std::vector<LevelingDrive> drives_;
  const std::vector<LevelingMember>& members_;
  const PlanParams& params_;
  const MoveAllowed& allowed_;
  std::vector<double> p_;
  std::vector<std::size_t> usable_;
  std::vector<std::vector<std::size_t>> on_;
  std::unordered_set<std::uint32_t> planned_extents_;  // looked up only: order never matters
  std::vector<PlannedMove> moves_;
};

}  // namespace

std::vector<PlannedMove> plan_moves(std::vector<LevelingDrive> drives, const std::vector<LevelingMember>& members,
                                    const PlanParams& params, const MoveAllowed& allowed) {
  AFASIM_ASSERT(params.threshold_points > 0 && params.lookahead_seconds > 0 && params.move_cost_points >= 0,
                "plan parameters out of range");
  return Planner(std::move(drives), members, params, allowed).run();
}

}  // namespace afasim::pool
