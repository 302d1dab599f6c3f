// The wear-leveling planner (pool/wear_leveling.h): which members move where, on small
// hand-made arrays whose right answer can be worked out on paper.
#include "pool/wear_leveling.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

using namespace afasim;
using pool::LevelingDrive;
using pool::LevelingMember;

namespace {

constexpr double kDay = 86400.0;

pool::PlanParams params(double threshold, int max_moves) {
  pool::PlanParams p;
  p.threshold_points = threshold;
  p.lookahead_seconds = 10 * kDay;
  p.max_moves = max_moves;
  return p;
}

LevelingDrive drive(double wear, double rate = 0, std::int64_t free = 100) {
  LevelingDrive d;
  d.usable = true;
  d.wear_points = wear;
  d.rate_points_per_second = rate;
  d.free_chunks = free;
  return d;
}

const pool::MoveAllowed kAnywhere = [](const LevelingMember&, int) { return true; };

}  // namespace

TEST_CASE("policy names round-trip and unknown words are refused with the accepted list") {
  for (auto p : {pool::WearPolicy::kOff, pool::WearPolicy::kEven, pool::WearPolicy::kStaggered})
    CHECK(pool::parse_wear_policy(pool::wear_policy_name(p)).value() == p);
  auto bad = pool::parse_wear_policy("uneven");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("off, even, staggered") != std::string::npos);
}

TEST_CASE("under the threshold nothing moves") {
  // Spread of projected wear: 0.4 points (wear 1.0 vs 1.4, no rates), threshold 0.5.
  std::vector<LevelingDrive> drives = {drive(1.0), drive(1.4)};
  std::vector<LevelingMember> members = {{1, 0, 1, 1e-7}};
  CHECK(pool::plan_moves(drives, members, params(0.5, 10), kAnywhere).empty());
}

TEST_CASE("the member that closes half the gap moves from the most to the least worn drive") {
  // Drive 0 at 3 points with three members of 0.2, 1.0 and 2.0 points over the lookahead;
  // drive 1 at 0. p = 3 + 3.2 = 6.2 vs 0: gap 6.2, half of it 3.1 -> the 2.0-point member is
  // the closest that still reduces the maximum (any member < 6.2 does).
  const double per_point = 1.0 / (10 * kDay);
  std::vector<LevelingDrive> drives = {drive(3.0, 3.2 * per_point), drive(0.0)};
  std::vector<LevelingMember> members = {
      {10, 0, 0, 0.2 * per_point}, {11, 1, 0, 1.0 * per_point}, {12, 2, 0, 2.0 * per_point}};
  const auto moves = pool::plan_moves(drives, members, params(0.5, 1), kAnywhere);
  REQUIRE(moves.size() == 1);
  CHECK(moves[0].extent == 12);
  CHECK(moves[0].member == 2);
  CHECK(moves[0].from_drive == 0);
  CHECK(moves[0].to_drive == 1);
}

TEST_CASE("a member too hot to help stays put: no ping-pong") {
  // One member whose rate alone is 5 points over the lookahead, the drives 1 point apart:
  // moving it would make the target 4 points worse than the source is now.
  const double per_point = 1.0 / (10 * kDay);
  std::vector<LevelingDrive> drives = {drive(1.0, 5 * per_point), drive(5.0)};
  std::vector<LevelingMember> members = {{1, 0, 0, 5 * per_point}};
  CHECK(pool::plan_moves(drives, members, params(0.5, 10), kAnywhere).empty());
}

TEST_CASE("the constraint callback is obeyed and the next target is tried") {
  const double per_point = 1.0 / (10 * kDay);
  std::vector<LevelingDrive> drives = {drive(4.0, 2 * per_point), drive(0.0), drive(0.5)};
  std::vector<LevelingMember> members = {{7, 0, 0, 2 * per_point}};
  // Drive 1 (least worn) already holds a member of extent 7.
  const auto moves = pool::plan_moves(drives, members, params(0.5, 5),
                                      [](const LevelingMember&, int to) { return to != 1; });
  REQUIRE(moves.size() == 1);
  CHECK(moves[0].to_drive == 2);
}

TEST_CASE("a full drive takes nothing; an unusable drive neither gives nor takes") {
  const double per_point = 1.0 / (10 * kDay);
  std::vector<LevelingDrive> drives = {drive(4.0, 2 * per_point), drive(0.0, 0, /*free=*/0),
                                       drive(0.0)};
  drives[2].usable = false;
  std::vector<LevelingMember> members = {{7, 0, 0, 2 * per_point}};
  CHECK(pool::plan_moves(drives, members, params(0.5, 5), kAnywhere).empty());
}

TEST_CASE("many warm members level four drives to within the threshold, one move per extent") {
  // Four drives, all the heat on drive 0: 40 members of 0.25 points each (10 points). The
  // mean is 2.5 points per drive; the plan should leave every drive within 0.5 of it.
  const double per_point = 1.0 / (10 * kDay);
  std::vector<LevelingDrive> drives = {drive(0, 10 * per_point), drive(0), drive(0), drive(0)};
  std::vector<LevelingMember> members;
  for (std::uint32_t i = 0; i < 40; ++i) members.push_back({i, 0, 0, 0.25 * per_point});
  const auto moves = pool::plan_moves(drives, members, params(0.5, 100), kAnywhere);
  std::vector<double> p = {10, 0, 0, 0};
  std::set<std::uint32_t> extents;
  for (const auto& m : moves) {
    p[static_cast<std::size_t>(m.from_drive)] -= 0.25;
    p[static_cast<std::size_t>(m.to_drive)] += 0.25;
    CHECK(extents.insert(m.extent).second);
  }
  const auto [lo, hi] = std::minmax_element(p.begin(), p.end());
  CHECK(*hi - *lo <= 0.5);
  CHECK(moves.size() <= 32);  // 7.5 points must leave drive 0: 30 moves, a few more at most
}

TEST_CASE("staggered offsets run linearly from the youngest to the oldest") {
  const auto o = pool::staggered_offsets({3, 0, 2, 1}, 4, 9.0);
  CHECK(o[3] == doctest::Approx(0));
  CHECK(o[0] == doctest::Approx(3));
  CHECK(o[2] == doctest::Approx(6));
  CHECK(o[1] == doctest::Approx(9));
  // With offsets as targets, drives exactly at their offsets have no adjusted spread.
  std::vector<LevelingDrive> drives;
  for (int d = 0; d < 4; ++d) {
    drives.push_back(drive(5 + o[static_cast<std::size_t>(d)]));
    drives.back().target_offset_points = o[static_cast<std::size_t>(d)];
  }
  CHECK(pool::adjusted_spread_points(drives) == doctest::Approx(0));
}
