// controller::ExtentMover — moves one member of an extent to another chunk in the background
// (docs/wear-leveling.md "Moving an extent"): the wear leveler's tool. The rebuild
// reconstructs a lost member; a move copies a live one, so the member's data is never at
// risk: the old chunk stays the member until the new one holds every byte, and host writes
// during the copy land on both (raid::Extent::move_target, written by the RAID engine).
//
// Not thread-safe (model thread).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "controller/context.h"

namespace afasim::controller {

class ControllerPair;

// Back-end traffic of extent moves (the wear leveler's copies), since the data path started.
struct ExtentMoveStats {
  std::int64_t started = 0;         // moves begun
  std::int64_t completed = 0;       // members switched to their new chunk
  std::int64_t aborted = 0;         // given up: a drive failed, the extent was freed or rebuilt
  std::int64_t bytes_read = 0;      // bytes read from source chunks (per-I/O and fast-forward)
  std::int64_t bytes_written = 0;   // bytes written to target chunks, copies and mirrored host writes
  std::int64_t backend_ops = 0;     // SSD commands the per-I/O copies issued
};

struct MoveInFlight {
  std::uint32_t extent_id = 0;
  int member = -1;
  raid::ChunkAddr from, to;
  std::int64_t copied_bytes = 0;
};

class ExtentMover {
 public:
  using MoveDone = std::function<void(bool switched)>;

  ExtentMover(ArrayContext& ctx, ControllerPair& pair) : ctx_(ctx), pair_(pair) {}
  ~ExtentMover();

  // Moves member `member` of extent `extent_id` to `target` (a free normal chunk the caller
  // took from the allocator on another SSD): `segment_bytes` at a time, each segment read from
  // the old chunk and written to the new one as back-end I/O, paced to `bytes_per_second`.
  // When the last segment is written the member switches to the new chunk in one event, the
  // change is persisted and the old chunk is trimmed and freed. A drive failure, an unmap or a
  // rebuild of the extent aborts the move (the new chunk is freed). `done` runs with true when
  // the member switched, false when the move was aborted. kNotFound for a free extent id;
  // kConflict when the extent is already moving, degraded or lost, or `target` is on an SSD
  // that holds one of its members; kInvalidArgument for a bad rate or segment.
  sim::Status start(std::uint32_t extent_id, int member, raid::ChunkAddr target, std::int64_t bytes_per_second,
                    std::int64_t segment_bytes, MoveDone done);
  // The same move done at once, with no timing (fast-forward: no host I/O runs meanwhile).
  sim::Status move_now(std::uint32_t extent_id, int member, raid::ChunkAddr target);
  // Gives up the move of `extent_id` (no-op when it has none): frees the target chunk.
  void abort(std::uint32_t extent_id, const char* why);
  void abort_on_drive(int drive);

  // A normal chunk on `drive` for a move target; kNoSpace / kUnavailable (allocate_on).
  sim::Result<raid::ChunkAddr> allocate_target(int drive) { return ctx_.thin.allocator().allocate_on(drive); }
  // Trims a chunk and gives it back to the allocator.
  void release_chunk(raid::ChunkAddr chunk);

  const ExtentMoveStats& stats() const { return stats_; }
  std::size_t in_flight() const { return moves_.size(); }
  std::vector<MoveInFlight> moves() const;
  // Bytes the per-I/O moves' copy segments wrote to SSD `drive` (not the host writes
  // mirrored onto a target): the wear leveler leaves them out of a drive's sequential share.
  std::int64_t copy_bytes_to(int drive) const {
    const auto d = static_cast<std::size_t>(drive);
    return d < copy_bytes_.size() ? copy_bytes_[d] : 0;
  }

  // The wear leveler sleeps while no host writes come: the first member write after
  // arm_write_wakeup() calls `wakeup`.
  void set_write_wakeup(std::function<void()> wakeup) { write_wakeup_ = std::move(wakeup); }
  void arm_write_wakeup() { write_wakeup_armed_ = true; }
  // After a plan ran: counts what it mirrored onto move targets, wakes the leveler.
  void plan_executed(const raid::Plan& plan);

 private:
  struct Move {
    std::uint32_t extent = 0;
    int member = -1;
    raid::ChunkAddr from, to;
    std::int64_t copied_bytes = 0;  // [0, copied) of the new chunk holds the member's bytes
    std::int64_t bytes_per_second = 0;
    std::int64_t segment_bytes = 0;
    std::uint64_t serial = 0;  // tells a segment's completion from one of an aborted move
    sim::EventId next;
    MoveDone done;
  };
  Move* find(std::uint32_t extent_id);
  sim::Status check(std::uint32_t extent_id, int member, raid::ChunkAddr target) const;
  void step(std::uint32_t extent_id);
  void segment_done(std::uint32_t extent_id, std::uint64_t serial, sim::Time started);
  void finish(std::uint32_t extent_id);
  void persist(const raid::Extent& e);

  ArrayContext& ctx_;
  ControllerPair& pair_;
  std::vector<Move> moves_;  // in flight; bounded by the leveler's max_moves_in_flight
  ExtentMoveStats stats_;
  std::vector<std::int64_t> copy_bytes_;  // by drive
  std::uint64_t next_serial_ = 0;
  raid::Plan plan_;  // a segment's read and write, reused
  std::function<void()> write_wakeup_;
  bool write_wakeup_armed_ = false;
};

}  // namespace afasim::controller
