// controller::WearLeveler — array-level wear leveling at run time (docs/wear-leveling.md).
//
// What it does, on top of the data path's parts (it reads and acts only through
// WearLevelerParts: the SSDs' wear, the extents and the allocator, the extent mover):
// - accounting: each SSD's wear (NAND bytes with write amplification, percent of rated
//   endurance used, recent rates) and each extent member's heat (host bytes written to it);
// - placement: installs a wear-aware score in the extent allocator, so that new extents go
//   to the SSDs with the most endurance left, within the RAID layout's constraints;
// - leveling, per I/O: every `check_interval` while host writes come, it plans moves with
//   pool::plan_moves and runs them through ExtentMover::start (back-end I/O paced to
//   `move_bytes_per_second`, host I/O to a moving extent stays correct);
// - fast-forward: for horizons of years, fast_forward() advances wear in epochs from the
//   per-extent write rates measured since begin_measurement(), leveling between epochs;
// - projections: when each SSD, and so the array, reaches 100 % of its rated endurance at
//   the current rates, with the leveler (pooled wear) and without it (rates frozen);
// - replacements: a new SSD (0 % wear) is noticed and the time until the spread is back
//   under the threshold is recorded.
// Sleeps while no host writes come (no events pending), so Simulator::run() still returns.
//
// Not thread-safe: belongs to the model thread with the data path.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "config/preset.h"
#include "controller/extent_mover.h"
#include "controller/hardware.h"
#include "pool/thin_map.h"
#include "pool/wear_leveling.h"
#include "sim/simulator.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::controller {

struct WearLevelingOptions {
  pool::WearPolicy policy = pool::WearPolicy::kEven;
  // Staggered: the wear distance between the youngest and the oldest SSD, points of rated
  // endurance, (0, 90]. Diff-RAID's point is a gap that outlasts a replacement cycle;
  // 10 points is the figure.
  double stagger_gap_points = 10;
  // Leveling starts when the spread of projected wear passes this many points of rated
  // endurance, (0, 50]. Assumption: half a point, small beside the 10 % (ratio 1.10) the
  // array promises after years, large beside the wear a day adds.
  double threshold_points = 0.5;
  // How far ahead the planner projects wear from current rates, > 0 (pool::PlanParams).
  // Assumption: 30 days, long enough to level rates rather than chase wear, short beside
  // a drive's life.
  sim::Time lookahead = 30 * 86400 * sim::kSecond;
  // Per-I/O mode: how often the leveler measures heat and plans, >= 1 ms.
  sim::Time check_interval = 60 * sim::kSecond;
  // The leveler's back-end copy rate, all moves together, bytes/s > 0. Each moved byte is
  // read once and written once. Assumption: 64 MB/s, a sixth of the default rebuild rate
  // (controller/data_path.h): leveling is background work, well under 1 % of the 40 SSDs'
  // back-end bandwidth.
  std::int64_t move_bytes_per_second = 64'000'000;
  // Moves in flight at once, [1, 64] (the bound of DataPath's move list).
  int max_moves_in_flight = 2;
  // A move copies this much per step, > 0, dividing the chunk. 1 MiB: large sequential SSD
  // commands, small beside the 16 MiB chunk.
  std::int64_t move_segment_bytes = 1 << 20;
  // Weight of the last interval in a member's heat (exponential moving average), (0, 1].
  double heat_smoothing = 0.5;
  // Fast-forward: at most this many moves per epoch, >= 0 (besides the rate limit).
  int max_moves_per_epoch = 4096;
};

// One SSD's wear as the API and reports show it.
struct DriveWear {
  int drive = 0;            // index (drive id − 1)
  bool in_service = false;  // healthy and in its slot
  std::int64_t host_bytes_written = 0;
  std::int64_t nand_bytes_written = 0;
  double write_amplification = 1;  // NAND / host, lifetime of this SSD
  double percent_endurance_used = 0;
  double host_write_bytes_per_second = 0;  // recent (the SSD's rate window, or the last epoch)
  double nand_write_bytes_per_second = 0;
  double target_offset_points = 0;  // staggered: planned lead over the youngest SSD
  // Seconds until 100 % at the SSD's current rate (no leveling); nullopt with no writes.
  std::optional<double> life_at_current_rate_s;
  // Seconds until 100 % with the leveler holding wear together (pooled rates); nullopt
  // with no writes or with the policy off.
  std::optional<double> life_leveled_s;
};

// A replaced SSD and how long the leveler took to absorb it.
struct ReplacementRecord {
  int drive = 0;
  sim::Time replaced_ns = 0;             // when the leveler noticed the new SSD
  std::optional<sim::Time> absorbed_ns;  // when the spread was back under the threshold
  double spread_at_replacement_points = 0;
};

struct WearSummary {
  pool::WearPolicy policy = pool::WearPolicy::kEven;
  int drives_in_service = 0;
  double min_percent = 0, max_percent = 0, mean_percent = 0;
  double spread_points = 0;             // max − min
  double adjusted_spread_points = 0;    // of wear − target offset (= spread for `even`)
  std::optional<double> max_min_ratio;  // max / min; nullopt while the least worn is at 0
  int most_worn_drive = -1, least_worn_drive = -1;
  // The array's life: until the first SSD reaches 100 %.
  std::optional<double> projected_life_s;            // with the policy in force
  std::optional<double> projected_life_unleveled_s;  // at each SSD's current rate, no moves
  ExtentMoveStats moves;                             // per-I/O and fast-forward moves together
  std::int64_t fast_forward_moves = 0;
  std::int64_t fast_forward_move_bytes = 0;
  std::vector<ReplacementRecord> replacements;
};

// The narrow interface the leveler works through (no access to the rest of the data path).
struct WearLevelerParts {
  Hardware& hw;               // SSD wear, DataPacs
  pool::ThinMap& thin;        // extents (heat, members), the allocator (placement, free chunks)
  ExtentMover& mover;         // moves, copy traffic, the write wakeup
  const config::SystemPreset& preset;
};

class WearLeveler {
 public:
  // kInvalidArgument naming the field out of range.
  static sim::Status validate(const WearLevelingOptions& options, std::int64_t chunk_bytes);
  // REQUIRES: validate(options) is ok; sim and data_path outlive the leveler.
  WearLeveler(sim::Simulator& sim, const WearLevelerParts& parts, WearLevelingOptions options);
  WearLeveler(const WearLeveler&) = delete;
  WearLeveler& operator=(const WearLeveler&) = delete;
  ~WearLeveler();

  // Installs the placement score and starts the per-I/O process (asleep until a write).
  void start();
  const WearLevelingOptions& options() const { return options_; }
  // Changes the options now (a policy switch keeps the wear done). kInvalidArgument as
  // validate(); nothing changes then.
  sim::Status set_options(const WearLevelingOptions& options);

  // --- Accounting and projections ---------------------------------------------------
  DriveWear drive_wear(int drive) const;
  std::vector<DriveWear> drive_wear_all() const;
  WearSummary summary() const;
  std::size_t moves_in_flight() const { return mover_.in_flight(); }

  // --- Fast-forward -------------------------------------------------------------------
  // Marks the start of the window whose per-extent write rates fast_forward() will use.
  void begin_measurement();
  bool measuring() const { return measure_start_.has_value(); }
  // Advances the simulation to `until` in epochs of `epoch`: each epoch, the leveler plans
  // and makes its moves (at once, up to the rate limit × epoch), every SSD gets the epoch's
  // writes from the measured rates of the members it holds (Ssd::add_bulk_writes), then
  // the simulator runs to the epoch's end (timeline events, rebuilds). `observer` (may be
  // empty) runs after each epoch. No host I/O may be submitted meanwhile. An epoch that
  // starts while `serving` (may be empty: always) is false, the array off or no controller
  // in service, adds no host writes and makes no moves: nothing reaches the SSDs then.
  // The rates are those measured since begin_measurement(); a fast-forward with no window
  // open (or an empty one) reuses the previous fast-forward's rates.
  // kPreconditionFailed when no rates were ever measured; kInvalidArgument for
  // until <= now or epoch <= 0.
  using EpochObserver = std::function<void(sim::Time epoch_end)>;
  sim::Status fast_forward(sim::Time until, sim::Time epoch, const EpochObserver& observer = {},
                           const std::function<bool()>& serving = {});

 private:
  struct Heat {
    Id volume_id = 0;  // identity of the extent the slot's numbers belong to
    std::int64_t index = -1;
    std::array<std::int64_t, pool::kMaxMembers> seen{};        // written_bytes at the last tick
    std::array<double, pool::kMaxMembers> bytes_per_second{};  // smoothed heat
  };

  void arm(sim::Time at);
  void tick();
  // Updates heat_ from the extents' counters over `dt`; true if any member is warm.
  bool update_heat(sim::Time dt);
  // Plans with the given member rates (bytes/s per extent id and member).
  std::vector<pool::PlannedMove> plan(
      const std::vector<std::array<double, pool::kMaxMembers>>& rates, int max_moves) const;
  bool move_allowed(std::uint32_t extent, int member, int to_drive) const;
  void notice_replacements();
  void update_absorption();
  void reset_age_order();
  double percent_per_nand_byte(int drive) const;
  // The pooled leveling state of the in-service SSDs now (drive_wear's life_leveled_s): the
  // sum of their wear rates and of their levels (wear minus offset), and how many there are.
  // Computed once for all drives by drive_wear_all() and summary().
  struct PooledLevel {
    double total_rate_points_per_s = 0;  // percentage points of rated endurance per second
    double level_sum_points = 0;
    int n = 0;
  };
  PooledLevel pooled_level() const;
  DriveWear drive_wear(int drive, const PooledLevel& pooled) const;
  double nand_per_host_byte() const;
  bool in_service(int drive) const;
  // The allocator's placement score: fill, plus a step per quarter threshold of wear past
  // the least worn drive's (least_past_target_, set by the allocator's prepare step).
  double placement_score(int drive) const;
  double past_target(int drive) const;  // wear above the drive's target offset, points; ≥ 0
  double least_past_target() const;     // the least past_target of the drives in service
  std::vector<std::array<double, pool::kMaxMembers>> heat_rates() const;

  sim::Simulator& sim_;
  Hardware& hw_;
  pool::ThinMap& thin_;
  ExtentMover& mover_;
  const config::SystemPreset& preset_;
  WearLevelingOptions options_;
  bool started_ = false;
  bool fast_forwarding_ = false;
  sim::EventId tick_event_;
  sim::Time last_tick_ = 0;
  std::vector<Heat> heat_;      // by extent id
  std::vector<int> age_order_;  // staggered: youngest first
  std::vector<double> offsets_;
  double least_past_target_ = 0;  // least_past_target() as of the allocator's last prepare
  std::vector<std::uint64_t> incarnations_;
  std::vector<ReplacementRecord> replacements_;
  std::int64_t ff_moves_ = 0;
  std::int64_t ff_move_bytes_ = 0;

  // Fast-forward's parts: one epoch's moves (returns how many), one epoch's wear, the end.
  int ff_level(int budget, std::vector<double>& host, std::vector<double>& seq_bytes);
  sim::Status ff_wear(sim::Time t, sim::Time span, std::vector<double>& host, std::vector<double>& seq_bytes);
  void ff_finish();
  // Turns the open measurement window into ff_rates_ / ff_sequential_ and closes it.
  void measure_rates();

  // Measurement window for fast-forward, and the rates it gave.
  bool have_rates_ = false;
  std::vector<std::array<double, pool::kMaxMembers>>
      ff_rates_;  // host bytes/s by extent id, member
  std::vector<std::array<double, pool::kMaxMembers>> ff_sequential_;  // sequential fraction
  std::optional<sim::Time> measure_start_;
  std::vector<Heat> measure_base_;  // written_bytes at the start, by extent id
  std::vector<std::int64_t> measure_host_, measure_sequential_;  // per drive at the start
  std::vector<std::int64_t> measure_copy_;  // per drive: move copy bytes at the start
};

}  // namespace afasim::controller
