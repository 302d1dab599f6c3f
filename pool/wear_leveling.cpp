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

}  // namespace

std::vector<PlannedMove> plan_moves(std::vector<LevelingDrive> drives,
                                    const std::vector<LevelingMember>& members,
                                    const PlanParams& params, const MoveAllowed& allowed) {
  AFASIM_ASSERT(
      params.threshold_points > 0 && params.lookahead_seconds > 0 && params.move_cost_points >= 0,
      "plan parameters out of range");
  std::vector<PlannedMove> moves;
  const std::size_t n = drives.size();
  std::vector<double> p(n, 0.0);
  std::vector<std::size_t> usable;
  for (std::size_t i = 0; i < n; ++i) {
    const LevelingDrive& d = drives[i];
    if (!d.usable) continue;
    p[i] = d.wear_points - d.target_offset_points +
           d.rate_points_per_second * params.lookahead_seconds;
    usable.push_back(i);
  }
  if (usable.size() < 2 || params.max_moves <= 0) return moves;

  // Each drive's movable members, by rate ascending (ties by extent, member: deterministic).
  std::vector<std::vector<std::size_t>> on(n);
  for (std::size_t k = 0; k < members.size(); ++k) {
    const LevelingMember& m = members[k];
    AFASIM_ASSERT(m.drive >= 0 && static_cast<std::size_t>(m.drive) < n,
                  "member on an unknown drive");
    if (m.rate_points_per_second > 0 && drives[static_cast<std::size_t>(m.drive)].usable)
      on[static_cast<std::size_t>(m.drive)].push_back(k);
  }
  auto by_rate = [&](std::size_t a, std::size_t b) {
    const LevelingMember& x = members[a];
    const LevelingMember& y = members[b];
    if (x.rate_points_per_second != y.rate_points_per_second)
      return x.rate_points_per_second < y.rate_points_per_second;
    return x.extent != y.extent ? x.extent < y.extent : x.member < y.member;
  };
  for (auto& list : on) std::sort(list.begin(), list.end(), by_rate);

  const double H = params.lookahead_seconds;
  // A member's effect on p: its rate over the lookahead.
  auto delta = [&](std::size_t k) { return members[k].rate_points_per_second * H; };
  std::unordered_set<std::uint32_t> planned_extents;

  // The member on `src` whose delta is closest to `want` among those with 0 < delta < limit,
  // allowed to go to `dst`; SIZE_MAX when none.
  auto pick = [&](std::size_t src, std::size_t dst, double want, double limit) -> std::size_t {
    const auto& list = on[src];
    if (list.empty()) return SIZE_MAX;
    // First index whose delta >= want.
    std::size_t hi = static_cast<std::size_t>(
        std::lower_bound(list.begin(), list.end(), want,
                         [&](std::size_t k, double w) { return delta(k) < w; }) -
        list.begin());
    std::size_t lo = hi;  // candidates below: lo - 1, lo - 2, ...
    int tried = 0;
    while (tried < kMembersTried && (lo > 0 || hi < list.size())) {
      std::size_t k;
      // Alternate outward from `want`, nearer side first.
      const bool take_hi =
          hi < list.size() &&
          (lo == 0 || std::abs(delta(list[hi]) - want) <= std::abs(delta(list[lo - 1]) - want));
      if (take_hi)
        k = list[hi++];
      else
        k = list[--lo];
      const double d = delta(k);
      if (!(d > 0 && d < limit)) continue;  // out of range: not a try
      ++tried;
      if (planned_extents.count(members[k].extent)) continue;
      if (allowed(members[k], static_cast<int>(dst))) return k;
    }
    return SIZE_MAX;
  };

  double threshold = params.threshold_points;  // to start; then half of it (hysteresis)
  while (static_cast<int>(moves.size()) < params.max_moves) {
    double lo = p[usable[0]], hi = p[usable[0]], sum = 0;
    for (std::size_t i : usable) {
      lo = std::min(lo, p[i]);
      hi = std::max(hi, p[i]);
      sum += p[i];
    }
    if (hi - lo <= threshold) break;
    threshold = params.threshold_points / 2;
    const double mean = sum / static_cast<double>(usable.size());
    std::vector<std::size_t> srcs, dsts;
    for (std::size_t i : usable) {
      if (p[i] > mean)
        srcs.push_back(i);
      else if (drives[i].free_chunks > 0)
        dsts.push_back(i);
    }
    std::stable_sort(srcs.begin(), srcs.end(),
                     [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
    std::stable_sort(dsts.begin(), dsts.end(),
                     [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
    if (srcs.size() > kPairsEachWay) srcs.resize(kPairsEachWay);
    if (dsts.size() > kPairsEachWay) dsts.resize(kPairsEachWay);
    bool moved = false;
    for (std::size_t src : srcs) {
      for (std::size_t dst : dsts) {
        // The gap the move can close, after the copy's own wear on the target.
        const double gap = p[src] - p[dst] - params.move_cost_points;
        if (gap <= params.threshold_points / 2) break;  // later targets are closer still
        const std::size_t k = pick(src, dst, gap / 2, gap);
        if (k == SIZE_MAX) continue;
        const LevelingMember& m = members[k];
        moves.push_back({m.extent, m.member, static_cast<int>(src), static_cast<int>(dst)});
        planned_extents.insert(m.extent);
        p[src] -= delta(k);
        p[dst] += delta(k) + params.move_cost_points;
        drives[src].free_chunks += 1;
        drives[dst].free_chunks -= 1;
        auto& from = on[src];
        from.erase(std::find(from.begin(), from.end(), k));
        // The member stays planned-for on its new drive only as rate: one move per extent.
        moved = true;
        break;
      }
      if (moved) break;
    }
    if (!moved) break;
  }
  return moves;
}

}  // namespace afasim::pool
