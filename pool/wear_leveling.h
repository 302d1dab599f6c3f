// Array-level wear leveling, the decisions (docs/wear-leveling.md): which extent members to
// move from which SSD to which, so that every SSD of the array wears at the same pace (policy
// `even`) or at a deliberate distance from the others (policy `staggered`, Diff-RAID:
// Balakrishnan et al., "Differential RAID: Rethinking RAID for SSD Reliability", EuroSys 2010).
//
// The planner sees each SSD's wear (percent of rated endurance used), the wear rate each
// extent member adds to the SSD that holds it (from measured host writes), and a target
// offset per SSD (0 for `even`). It levels the *projected adjusted wear*
//     p = wear − target_offset + rate × lookahead,
// greedily: while the spread of p passes the threshold, it moves a member from an SSD above
// the mean to one below it, choosing the member whose rate closes about half of their gap
// (a move is only taken when it strictly reduces Σ(p − mean)², so it cannot ping-pong).
// The executor (controller/wear_leveler.h) checks RAID constraints through a callback and
// runs the moves. Pure computation: no clock, no randomness; ties go to the lower index.
//
// Thread-safety: plain functions and values; safe to call from any thread on its own data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"

namespace afasim::pool {

enum class WearPolicy { kOff, kEven, kStaggered };

// "off", "even", "staggered".
const char* wear_policy_name(WearPolicy policy);
// The inverse of wear_policy_name; kInvalidArgument naming the accepted words otherwise.
sim::Result<WearPolicy> parse_wear_policy(std::string_view text);

// One SSD as the planner sees it.
struct LevelingDrive {
  bool usable = false;                // healthy and in service: may give and take members
  double wear_points = 0;             // percent of rated endurance used, >= 0
  double target_offset_points = 0;    // how far ahead of the least-worn it should run (staggered)
  double rate_points_per_second = 0;  // Σ rates of the members it holds (with moves in flight)
  std::int64_t free_chunks = 0;       // normal chunks free for move targets
};

// One extent member that may move.
struct LevelingMember {
  std::uint32_t extent = 0;
  int member = 0;
  int drive = 0;                      // where it is (index into the drives)
  double rate_points_per_second = 0;  // wear it adds to the SSD holding it, > 0
};

struct PlannedMove {
  std::uint32_t extent = 0;
  int member = 0;
  int from_drive = 0;
  int to_drive = 0;
};

struct PlanParams {
  // Leveling starts when max p − min p passes this, and a pair of SSDs closer than half of it
  // is left alone (hysteresis). Points of rated endurance, > 0.
  double threshold_points = 0.5;
  // How far ahead p looks, seconds > 0: a move changes p by the member's rate × lookahead, so
  // the lookahead weighs rates against wear already done. Longer levels rates more (wear
  // converges instead of oscillating), shorter reacts to wear more.
  double lookahead_seconds = 30 * 86400.0;
  // Wear one move adds to its target SSD (its copy), points >= 0: a move must gain more.
  double move_cost_points = 0;
  // At most this many moves, >= 0.
  int max_moves = 0;
};

// Whether `member` may go to SSD `to_drive` (RAID layout, pool, space). The planner calls it
// only for usable drives with free chunks that do not hold the member.
using MoveAllowed = std::function<bool(const LevelingMember& member, int to_drive)>;

// The moves, in the order to run them. At most one move per extent (so that the callback's
// answers, given for the extent as it is now, stay true). Deterministic.
std::vector<PlannedMove> plan_moves(std::vector<LevelingDrive> drives,
                                    const std::vector<LevelingMember>& members,
                                    const PlanParams& params, const MoveAllowed& allowed);

// max − min of (wear − target_offset) over usable drives; 0 with fewer than two.
double adjusted_spread_points(const std::vector<LevelingDrive>& drives);

// Staggered target offsets: the drive at position r of `age_order` (0 = youngest) gets
// gap × r / (n − 1) points; drives not in the order get 0. REQUIRES: indexes in range.
std::vector<double> staggered_offsets(const std::vector<int>& age_order, std::size_t drive_count,
                                      double gap_points);

}  // namespace afasim::pool
