#include "controller/extent_mover.h"

#include <algorithm>

#include "controller/controller_pair.h"
#include "sim/assert.h"

namespace afasim::controller {

using raid::ChunkAddr;
using sim::Status;
using sim::Time;

namespace {
std::string extent_name(Id volume, std::int64_t index) {
  return "volume " + std::to_string(volume) + " extent " + std::to_string(index);
}
}  // namespace

ExtentMover::~ExtentMover() {
  for (Move& m : moves_) ctx_.sim.cancel(m.next);
}

void ExtentMover::plan_executed(const raid::Plan& plan) {
  stats_.bytes_written += plan.move_target_bytes;
  if (plan.member_writes && write_wakeup_armed_ && write_wakeup_) {
    write_wakeup_armed_ = false;
    write_wakeup_();
  }
}

std::vector<MoveInFlight> ExtentMover::moves() const {
  std::vector<MoveInFlight> out;
  for (const Move& m : moves_) out.push_back({m.extent, m.member, m.from, m.to, m.copied_bytes});
  return out;
}

void ExtentMover::release_chunk(ChunkAddr chunk) {
  if (!chunk.valid()) return;
  (void)ctx_.raid.trim_chunk(chunk);
  ctx_.thin.allocator().release({chunk});
}

ExtentMover::Move* ExtentMover::find(std::uint32_t extent_id) {
  for (Move& m : moves_)
    if (m.extent == extent_id) return &m;
  return nullptr;
}

Status ExtentMover::check(std::uint32_t extent_id, int member, ChunkAddr target) const {
  const raid::ExtentTable& extents = ctx_.thin.extents();
  if (!extents.holds(extent_id)) return sim::not_found("no extent " + std::to_string(extent_id));
  const raid::Extent& e = extents[extent_id];
  if (member < 0 || member >= e.member_count) return sim::invalid_argument("no member " + std::to_string(member));
  if (e.moving_member >= 0) return sim::conflict(extent_name(e.volume_id, e.index) + " is already moving");
  if (e.missing != 0 || e.lost) return sim::conflict(extent_name(e.volume_id, e.index) + " is degraded");
  for (int m = 0; m < e.member_count; ++m)
    if (e.members[static_cast<std::size_t>(m)].drive == target.drive)
      return sim::conflict("drive " + std::to_string(target.drive + 1) + " already holds a member of " +
                           extent_name(e.volume_id, e.index));
  return Status::ok();
}

Status ExtentMover::start(std::uint32_t extent_id, int member, ChunkAddr target, std::int64_t bytes_per_second,
                          std::int64_t segment_bytes, MoveDone done) {
  AFASIM_RETURN_IF_ERROR(check(extent_id, member, target));
  raid::Extent& e = ctx_.thin.extents()[extent_id];
  if (bytes_per_second <= 0 || segment_bytes <= 0 || ctx_.raid.chunk_bytes() % segment_bytes != 0)
    return sim::invalid_argument("a move needs a positive rate and a segment that divides the chunk");
  Move mv;
  mv.extent = extent_id;
  mv.member = member;
  mv.from = e.members[static_cast<std::size_t>(member)];
  mv.to = target;
  mv.bytes_per_second = bytes_per_second;
  mv.segment_bytes = segment_bytes;
  mv.done = std::move(done);
  mv.serial = ++next_serial_;
  e.moving_member = static_cast<std::int8_t>(member);
  e.move_target = target;
  e.move_copied_bytes = 0;
  moves_.push_back(std::move(mv));
  ++stats_.started;
  moves_.back().next = ctx_.sim.after(0, [this, extent_id] { step(extent_id); });
  return Status::ok();
}

void ExtentMover::step(std::uint32_t extent_id) {
  Move* mv = find(extent_id);
  AFASIM_ASSERT(mv != nullptr, "a move step without its move");
  raid::Extent& e = ctx_.thin.extents()[extent_id];
  const std::int64_t n = mv->segment_bytes;
  // The bytes first: the segment as it is now. Writes planned from here on land on both
  // chunks, so the new chunk never falls behind the old one.
  if (Status st = ctx_.raid.copy_chunk(mv->from, mv->to, mv->copied_bytes, n); !st.is_ok()) {
    abort(extent_id, st.message().c_str());
    return;
  }
  // Then the time: the worker controller reads the old chunk's segment and writes it to the new
  // one (Timing::background: the two SAS commands on its cores, the segment through its DRAM and
  // SAS paths, beside host I/O).
  plan_.clear();
  raid::MemberOp read;
  read.addr = mv->from;
  read.offset_in_chunk = mv->copied_bytes;
  read.length = n;
  read.op = raid::MemberOpKind::kRead;
  plan_.ops.push_back(read);
  raid::MemberOp write = read;
  write.addr = mv->to;
  write.op = raid::MemberOpKind::kWrite;
  write.phase = 1;
  plan_.ops.push_back(write);
  mv->copied_bytes += n;
  e.move_copied_bytes = mv->copied_bytes;
  stats_.bytes_read += n;
  stats_.bytes_written += n;
  stats_.backend_ops += 2;
  if (copy_bytes_.size() < static_cast<std::size_t>(ctx_.hw.drive_count()))
    copy_bytes_.resize(static_cast<std::size_t>(ctx_.hw.drive_count()), 0);
  copy_bytes_[static_cast<std::size_t>(mv->to.drive)] += n;
  ctx_.timing.background(pair_.worker_for(e.volume_id), plan_,
                         [this, extent_id, serial = mv->serial, started = ctx_.sim.now()](Time) {
                           segment_done(extent_id, serial, started);
                         });
}

void ExtentMover::segment_done(std::uint32_t extent_id, std::uint64_t serial, Time started) {
  Move* mv = find(extent_id);
  if (mv == nullptr || mv->serial != serial) return;  // aborted while the segment was in flight
  if (mv->copied_bytes >= ctx_.raid.chunk_bytes()) {
    finish(extent_id);
    return;
  }
  // Paced: the next segment starts when this one is written and the rate allows.
  const Time paced = started + sim::transfer_time(mv->segment_bytes, mv->bytes_per_second);
  mv->next = ctx_.sim.at(std::max(ctx_.sim.now(), paced), [this, extent_id] { step(extent_id); });
}

void ExtentMover::persist(const raid::Extent& e) {
  if (Status p = ctx_.thin.notify(pool::ThinMap::Change::kUpdated, e); !p.is_ok())
    ctx_.emit(Severity::kError, "wear", "volume/" + std::to_string(e.volume_id),
              "could not persist a moved extent: " + p.message());
}

void ExtentMover::finish(std::uint32_t extent_id) {
  Move* mv = find(extent_id);
  AFASIM_ASSERT(mv != nullptr, "finishing a move that is not in flight");
  raid::Extent& e = ctx_.thin.extents()[extent_id];
  AFASIM_ASSERT(e.moving_member == mv->member, "a moving extent forgot its member");
  const ChunkAddr from = mv->from;
  MoveDone done = std::move(mv->done);
  // The switch: one event, so no I/O sees the member half-moved.
  e.members[static_cast<std::size_t>(mv->member)] = mv->to;
  e.moving_member = -1;
  e.move_target = {};
  e.move_copied_bytes = 0;
  moves_.erase(moves_.begin() + (mv - moves_.data()));
  ++stats_.completed;
  persist(e);
  release_chunk(from);
  if (done) done(true);
}

void ExtentMover::abort(std::uint32_t extent_id, const char* why) {
  Move* mv = find(extent_id);
  if (mv == nullptr) return;
  raid::Extent& e = ctx_.thin.extents()[extent_id];
  ctx_.sim.cancel(mv->next);
  e.moving_member = -1;
  e.move_target = {};
  e.move_copied_bytes = 0;
  const ChunkAddr to = mv->to;
  MoveDone done = std::move(mv->done);
  moves_.erase(moves_.begin() + (mv - moves_.data()));
  ++stats_.aborted;
  release_chunk(to);
  ctx_.emit(Severity::kInfo, "wear", "volume/" + std::to_string(e.volume_id),
            "move of " + extent_name(e.volume_id, e.index) + " given up: " + why);
  if (done) done(false);
}

void ExtentMover::abort_on_drive(int drive) {
  std::vector<std::uint32_t> hit;
  for (const Move& m : moves_)
    if (m.from.drive == drive || m.to.drive == drive) hit.push_back(m.extent);
  for (std::uint32_t id : hit) abort(id, "a drive it used left service");
}

Status ExtentMover::move_now(std::uint32_t extent_id, int member, ChunkAddr target) {
  AFASIM_RETURN_IF_ERROR(check(extent_id, member, target));
  raid::Extent& e = ctx_.thin.extents()[extent_id];
  const ChunkAddr from = e.members[static_cast<std::size_t>(member)];
  const std::int64_t chunk = ctx_.raid.chunk_bytes();
  AFASIM_RETURN_IF_ERROR(ctx_.raid.copy_chunk(from, target, 0, chunk));
  e.members[static_cast<std::size_t>(member)] = target;
  ++stats_.started;
  ++stats_.completed;
  stats_.bytes_read += chunk;
  stats_.bytes_written += chunk;
  persist(e);
  release_chunk(from);
  return Status::ok();
}

}  // namespace afasim::controller
