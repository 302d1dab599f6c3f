// One array lifetime of the reliability mode (simulate.h, docs/reliability.md "The model"):
// the event loop over SSD failures and rebuilds, latent errors and scrub passes, DataPac
// replacements and controller failures. Internal to reliability/: run_reliability builds the
// LifetimeModel once and runs a Lifetime per array.
// Not thread-safe: a Lifetime belongs to one thread; the model is shared read-only.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "reliability/loss_map.h"
#include "reliability/reliability_scenario.h"
#include "reliability/simulate.h"
#include "sim/rng.h"

namespace afasim::reliability::detail {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The fixed inputs of every lifetime.
struct LifetimeModel {
  const ReliabilityScenario* s = nullptr;
  const LossMap* map = nullptr;
  double horizon_h = 0;
  double wear_per_hour = 0;             // fraction of rated endurance per SSD per hour
  std::vector<double> rebuild_h;        // per SSD: its chunk bytes ÷ the rebuild rate
  int rebuild_readers = 1;              // members read per chunk rebuilt (RAID 5: k)
  std::int64_t spare_chunks_per_pack = 0;
};

enum class DriveState { kUp, kRebuilding, kWaitingForSpare, kRetired };

struct Drive {
  DriveState state = DriveState::kUp;
  double fail_h = kInfinity;  // next failure while up
  bool wear_out = false;      // that failure is a wear-out
  double rebuild_start_h = kInfinity;  // when its rebuild begins (after any queued before it)
  double rebuild_end_h = kInfinity;
  std::int64_t latent_errors = 0;
};

class Lifetime {
 public:
  // `out` accumulates the counts of every lifetime run with it.
  Lifetime(const LifetimeModel& m, sim::Rng rng, ReliabilityReport& out);
  // Runs the lifetime; returns its length in hours (to the first loss or the horizon).
  double run();

 private:
  enum class Event { kNone, kDriveFails, kRebuildEnds, kPackReplaced, kLatentError, kScrub, kControllerFails };

  bool handle(Event e, int who, double t);  // true when it lost data
  void next_drive_event();
  void install(int i, double t);
  bool degraded(int i) const;
  double p_shared(int i, int j) const;  // a chunk of j lies in an extent shared with i
  bool drive_failed(int i, double t);
  bool latent_error(double t);
  bool take_spare(int i);
  void start_rebuild(int i, double t);
  void rebuild_done(int i, double t);
  void redistribute(int i);
  void replace_pack(int pack, double t);
  void controller_failed(int c, double t);

  const LifetimeModel& m_;
  const ReliabilityScenario& s_;
  sim::Rng rng_;
  ReliabilityReport& out_;
  int n_ = 0;
  std::vector<Drive> drives_;
  // The loss map as this lifetime changed it: a retired SSD's chunks move to the SSDs whose
  // spare took them, and so do its loss pairs (retire()).
  std::vector<std::int64_t> shared_;
  std::vector<std::int64_t> used_;
  bool drives_changed_ = true;
  double next_drive_h_ = kInfinity;
  Event next_drive_kind_ = Event::kNone;
  int next_drive_ = -1;
  int packs_ = 0;
  std::vector<std::int64_t> spare_;  // per DataPac (1-based), chunks; may go negative
  std::vector<double> pack_replacement_h_;
  double rebuild_free_h_ = 0;
  double latent_rate_h_ = 0;  // latent errors per hour over all SSD slots
  double next_latent_h_ = kInfinity;
  double next_scrub_h_ = kInfinity;
  double controller_fail_h_[2] = {kInfinity, kInfinity};
  double controller_up_h_[2] = {0, 0};
};

}  // namespace afasim::reliability::detail
