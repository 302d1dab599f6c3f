// controller::Rebuilder — the rebuild of a failed SSD's chunks into distributed spare space
// (docs/faults.md "Rebuild"): one drive at a time, extent by extent, in pieces paced to
// `rebuild_bytes_per_second`. The bytes come from the RAID engine (raid::Engine::
// rebuild_member, a copy of the mirror or the XOR of the survivors); the member switches to
// its replacement chunk in one event. The rebuild pauses while the array is off or no
// controller serves, and continues after.
//
// Not thread-safe (model thread).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "controller/context.h"
#include "raid/plan.h"

namespace afasim::controller {

class ControllerPair;
class ExtentMover;

struct RebuildStatus {
  bool active = false;
  int drive = -1;                 // drive index being rebuilt (the failed one)
  std::int64_t total_bytes = 0;   // chunk bytes to rebuild
  std::int64_t done_bytes = 0;     // rebuilt, or no longer needing it (freed, lost, rebuilt meanwhile)
  // Chunk bytes no SSD could take (no spare space where the RAID type may place them): their
  // extents stay degraded; not counted in done_bytes, so a stalled rebuild ends below 100 %.
  std::int64_t stalled_bytes = 0;
  // Of done_bytes, chunk bytes whose extent was lost meanwhile (more members gone than its
  // RAID type tolerates): nothing was rebuilt for them, so neither the rate nor "complete"
  // counts them (hostile round 25b: a rebuild cut short by a second failure was reported
  // complete at 2,992 MB/s against a 400 MB/s limit).
  std::int64_t lost_bytes = 0;
  // Of done_bytes, chunk bytes that could not be reconstructed (a surviving SSD could not be
  // read): their extents stay degraded, and "complete" does not count them (hostile round
  // 31b: a rebuild whose only chunk failed was "complete: 0.02 GB in 0.0 s, 391 MB/s").
  std::int64_t failed_bytes = 0;
  // 4 KiB blocks rebuilt as unreadable: their sources held a media error (a block beside the
  // failed drive's that its redundancy needed), so the replacement reads them as errors until
  // a write covers them; their extents regain redundancy everywhere else.
  std::int64_t unreadable_blocks = 0;
  sim::Time started_ns = 0;
  // Time the rebuild spent paused (array off or no controller serving), not counted in its
  // duration; paused_since_ns is when the current pause began (-1: running).
  sim::Time paused_ns = 0;
  sim::Time paused_since_ns = -1;
  // When this rebuild completed, every chunk rebuilt; -1 while it runs, and for one that ended
  // with chunks lost, unreadable or stalled (a sweep's rebuild duration is completed −
  // started − paused: a rebuild whose extents were all lost read as "0.000 s", hostile
  // review 42).
  sim::Time completed_ns = -1;
  // Progress: the chunks rebuilt, or rebuilt meanwhile or freed, of all; chunks lost or not
  // reconstructed do not count (they made a rebuild of lost extents "100 %" at once and "40 %
  // done" 0.04 s into a 400 MB/s one, hostile review 42), so such a rebuild ends below 100 %.
  double percent() const {
    return total_bytes == 0 ? 100.0 : 100.0 * (done_bytes - lost_bytes - failed_bytes) / total_bytes;
  }
};

class Rebuilder {
 public:
  Rebuilder(ArrayContext& ctx, ControllerPair& pair, ExtentMover& mover) : ctx_(ctx), pair_(pair), mover_(mover) {}

  const RebuildStatus& status() const { return status_; }
  // Drive `drive` lost members that redundancy covers: queue its rebuild.
  void drive_lost(int drive);
  // After a restart: queues a rebuild for every drive that extents are still missing
  // members on (a rebuild the stop interrupted, or one never started) and starts the first.
  // Returns how many drives were queued.
  int resume_interrupted();
  // Pauses the rebuild in progress (an event, once per pause); resume() continues it.
  void pause(const std::string& why);
  void resume();
  // New space for rebuilt chunks (a drive replaced): drives whose chunks stalled for want of
  // it are queued again, now or, while a rebuild runs, when it ends (hostile review 42: a
  // stalled RAID 10 rebuild stayed stalled after its DataPac's drives were replaced, until a
  // restart, and the next failure in the other DataPac failed the volume).
  void space_added();

 private:
  // The chunk being rebuilt: its extent (and the identity it had, in case the slot is
  // reused), the lost member, where it goes, and how many pieces are done.
  struct Chunk {
    std::uint32_t extent;
    Id volume_id;
    std::int64_t index;
    int member;
    raid::ChunkAddr replacement;
    std::int64_t piece;
  };
  // Rebuild I/O moves in pieces of one strip (64 KiB by default): a RAID 5 piece is one stripe
  // row (its survivors' strips read, XORed, the lost strip written), as a RAID engine rebuilds
  // stripe by stripe; pieces of host-I/O size interleave with host I/O on the SSDs, the cores
  // and DRAM instead of holding them for a megabyte at a time.
  std::int64_t piece_bytes() const;
  // Pieces in flight at once (assumption: 16 strips, the megabyte a rebuilder typically keeps
  // queued), so that the pacing, not one piece's round trip, sets the rate. Until 2026-12-04
  // one 1 MiB piece went at a time, which capped every rebuild on the ISE 860 G3 at ~285 MB/s
  // whatever limit was set.
  static constexpr int kPiecesInFlight = 16;

  void schedule_next(sim::Time at);
  void start();
  void next();
  void complete();
  // Picks the next extent to rebuild and its replacement chunk; false when none is left.
  bool next_chunk();
  // Gives the chunk back when its extent went away, was lost, or its target SSD failed.
  bool drop_stale_chunk();
  // Starts one piece on the worker controller's timing model (controller::Timing::
  // background): the survivors' reads, for RAID 5 the XOR, the replacement's write.
  void start_piece(const raid::Extent& e, int m, raid::ChunkAddr replacement, std::int64_t offset,
                   std::int64_t length);
  // The bytes move, and the member switches, in one event.
  void switch_member(raid::Extent& e);
  // One error event naming the extent's blocks that were rebuilt as unreadable.
  void report_unreadable(const raid::Extent& e, const std::vector<std::int64_t>& unreadable);
  void report_progress();
  // "; volume 3 stays degraded", "; volumes 3, 5 and 9 stay degraded" (the first 10 named).
  std::string degraded_volumes_text() const;

  ArrayContext& ctx_;
  ControllerPair& pair_;
  ExtentMover& mover_;
  RebuildStatus status_;
  std::vector<int> queue_;               // failed drives waiting for their rebuild
  std::vector<std::uint32_t> extents_;   // extents left for the current drive
  std::optional<Chunk> chunk_;
  std::set<std::uint64_t> left_degraded_;  // volumes with a chunk stalled or not reconstructed
  int progress_reported_ = 0;
  bool paused_ = false;       // the array lost power mid-rebuild
  std::uint64_t epoch_ = 0;   // bumped at each resume: older scheduled pieces are void
  int in_flight_ = 0;         // pieces started and not yet written
  bool waiting_ = false;      // the chain waits for a piece to be written (a place, or the end)
  bool space_added_ = false;  // space_added() while a rebuild ran: retry stalled drives after it
  raid::Plan plan_;           // the piece being started (reused)
};

}  // namespace afasim::controller
