// raid::Scrubber — the background scrub (docs/raid.md "Scrub"): a rate-limited pass over
// every allocated row of every whole extent that reads all members, repairs from redundancy
// what fails to read (a media error: the SSD's ECC gave up on a block), checks parity and
// mirrors against the data, and reports what it found as events. A pass that ends starts the
// next one `pass_interval_ns` later.
//
// What the verification finds, per 4 KiB block column of a row (Engine::scrub_row):
//   one unreadable block where the layout has redundancy → rebuilt and rewritten (repaired);
//   more than redundancy covers (both RAID10 copies, two blocks of a RAID5 column, RAID0)
//     → reported, left unreadable (reads of it fail: never wrong data);
//   all readable but parity or mirror inconsistent → reported and rewritten from the data
//     (RAID5: parity recomputed; RAID10: the pair's second copy from the first, as md does).
// Degraded extents are skipped: the rebuild restores them first.
//
// Not thread-safe (model thread).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "raid/engine.h"
#include "raid/extent.h"
#include "sim/simulator.h"
#include "sim/status.h"

namespace afasim::raid {

struct ScrubOptions {
  bool enabled = false;
  // Member bytes read per second, > 0. Assumption: 100 MB/s, a quarter of the default rebuild
  // rate: a patrol read is the lowest-priority background work.
  std::int64_t bytes_per_second = 100'000'000;
  // Time from the end of a pass to the start of the next, >= 0. Assumption: a week, the
  // interval of the usual scheduled RAID check (Debian's mdadm checkarray runs monthly;
  // enterprise arrays patrol weekly).
  sim::Time pass_interval_ns = 7 * 86400 * sim::kSecond;
};

struct ScrubStatus {
  bool enabled = false;
  bool running = false;               // a pass is under way (false between passes or while paused)
  std::int64_t passes_completed = 0;
  std::int64_t rows_checked = 0;      // this pass
  std::int64_t rows_total = 0;        // rows of the extents this pass started with
  std::int64_t bytes_read = 0;        // member bytes read, all passes
  std::int64_t media_errors = 0;      // unreadable blocks found, all passes
  std::int64_t repaired = 0;          // of those, rewritten from redundancy
  std::int64_t unrecoverable = 0;     // of those, beyond redundancy (reported)
  std::int64_t mismatches = 0;        // parity / mirror inconsistencies found (and rewritten)
};

// What the scrub needs from the array above it.
class ScrubHost {
 public:
  enum class Level { kInfo, kWarning, kError, kCritical };
  virtual ~ScrubHost() = default;
  // Whether the array serves I/O now (else the scrub waits for resume()).
  virtual bool scrub_allowed() = 0;
  // Times `plan` (one row's reads and repairs) for extent `e` on the array's controllers and
  // SSDs; `done` runs when it is complete (always, after any delay; the plan may be reused
  // once this returns).
  virtual void time_scrub(const Plan& plan, const Extent& e, std::function<void()> done) = 0;
  virtual void scrub_event(Level level, const std::string& object, const std::string& message) = 0;
};

class Scrubber {
 public:
  // kInvalidArgument naming the field out of range.
  static sim::Status validate(const ScrubOptions& options);
  // REQUIRES: validate(options) is ok; everything outlives the scrubber.
  Scrubber(sim::Simulator& sim, Engine& engine, ExtentTable& extents, ScrubHost& host, ScrubOptions options);
  ~Scrubber();

  // Changes the options now: enabling starts a pass, disabling stops the one under way.
  sim::Status set_options(const ScrubOptions& options);
  const ScrubOptions& options() const { return options_; }
  const ScrubStatus& status() const { return status_; }
  // Continues after scrub_allowed() said no (the host calls it when the array is back).
  void resume();

 private:
  static constexpr std::int64_t kRowsPerStep = 16;  // rows verified per event (1 MiB per member at 64 KiB strips)
  void start_pass();
  void schedule(sim::Time at);
  void step();
  // One of the step's rows is timed; the last one schedules the next step.
  void row_timed(std::uint64_t epoch, sim::Time started);
  // Advances the cursor to the next row of a whole extent; false at the end of the pass.
  bool next_row();
  void finish_pass();
  void report(const Extent& e, std::int64_t row, const RowVerdict& v);

  sim::Simulator& sim_;
  Engine& engine_;
  ExtentTable& extents_;
  ScrubHost& host_;
  ScrubOptions options_;
  ScrubStatus status_;
  sim::EventId next_;
  bool waiting_ = false;  // stopped because scrub_allowed() said no
  std::uint64_t epoch_ = 0;  // a step's rows timed after a stop or a new pass are ignored
  int rows_in_flight_ = 0;
  std::int64_t step_bytes_ = 0;
  // next_ is the paced wait for the next step, timed from paced_from_ (a new rate reschedules it).
  bool pacing_ = false;
  sim::Time paced_from_ = 0;
  std::uint32_t extent_ = 0;
  std::int64_t row_ = -1;
  Plan plan_;
  ScrubStatus at_pass_start_;
};

}  // namespace afasim::raid
