// Moving one member of an extent to another chunk: the wear leveler's tool
// (docs/wear-leveling.md "Moving an extent"). The rebuild reconstructs a lost member; a move
// copies a live one, so the member's data is never at risk: the old chunk stays the member
// until the new one holds every byte, and host writes during the copy land on both.
#include <algorithm>
#include <cstring>

#include "controller/data_path.h"
#include "sim/assert.h"

namespace afasim::controller {

using pool::ChunkAddr;
using sim::Status;
using sim::Time;

namespace {
std::string extent_name(Id volume, std::int64_t index) {
  return "volume " + std::to_string(volume) + " extent " + std::to_string(index);
}
}  // namespace

const std::array<std::int64_t, pool::kMaxMembers>* DataPath::member_write_bytes(
    std::uint32_t extent_id) const {
  if (extent_id >= extents_.size() || extents_[extent_id].member_count == 0) return nullptr;
  return &extents_[extent_id].written_bytes;
}

std::vector<DataPath::MoveInFlight> DataPath::moves() const {
  std::vector<MoveInFlight> out;
  for (const ExtentMove& m : moves_)
    out.push_back({m.extent, m.member, m.from, m.to, m.copied_bytes});
  return out;
}

void DataPath::release_chunk(ChunkAddr chunk) {
  if (!chunk.valid()) return;
  if (has_payload())
    (void)ssds_[static_cast<std::size_t>(chunk.drive)]->trim_payload(
        chunk.offset_bytes(allocator_.chunk_bytes()), allocator_.chunk_bytes());
  allocator_.release({chunk});
}

DataPath::ExtentMove* DataPath::find_move(std::uint32_t extent_id) {
  for (ExtentMove& m : moves_)
    if (m.extent == extent_id) return &m;
  return nullptr;
}

Status DataPath::copy_chunk_payload(ChunkAddr from, ChunkAddr to, std::int64_t offset,
                                    std::int64_t length) {
  if (!has_payload()) return Status::ok();
  const std::int64_t chunk = allocator_.chunk_bytes();
  const datapac::Ssd& src = *ssds_[static_cast<std::size_t>(from.drive)];
  datapac::Ssd& dst = *ssds_[static_cast<std::size_t>(to.drive)];
  // The target chunk was trimmed when it was freed: ranges that read as zeros at the source
  // need no bytes moved.
  std::vector<std::uint8_t>& buf = scratch_[2];
  const std::int64_t piece = options_.strip_bytes;
  if (static_cast<std::int64_t>(buf.size()) < piece) buf.resize(static_cast<std::size_t>(piece));
  for (std::int64_t pos = offset; pos < offset + length; pos += piece) {
    const std::int64_t n = std::min(piece, offset + length - pos);
    if (!src.payload_may_hold_data(from.offset_bytes(chunk) + pos, n)) continue;
    AFASIM_RETURN_IF_ERROR(src.read_payload(from.offset_bytes(chunk) + pos,
                                            {buf.data(), static_cast<std::size_t>(n)}));
    AFASIM_RETURN_IF_ERROR(
        dst.write_payload(to.offset_bytes(chunk) + pos, {buf.data(), static_cast<std::size_t>(n)}));
  }
  return Status::ok();
}

Status DataPath::check_move(std::uint32_t extent_id, int member, ChunkAddr target) const {
  if (extent_id >= extents_.size() || extents_[extent_id].member_count == 0)
    return sim::not_found("no extent " + std::to_string(extent_id));
  const Extent& e = extents_[extent_id];
  if (member < 0 || member >= e.member_count)
    return sim::invalid_argument("no member " + std::to_string(member));
  if (e.moving_member >= 0)
    return sim::conflict(extent_name(e.volume_id, e.index) + " is already moving");
  if (e.missing != 0 || e.lost)
    return sim::conflict(extent_name(e.volume_id, e.index) + " is degraded");
  for (int m = 0; m < e.member_count; ++m)
    if (e.members[static_cast<std::size_t>(m)].drive == target.drive)
      return sim::conflict("drive " + std::to_string(target.drive + 1) +
                           " already holds a member of " + extent_name(e.volume_id, e.index));
  return Status::ok();
}

Status DataPath::start_member_move(std::uint32_t extent_id, int member, ChunkAddr target,
                                   std::int64_t bytes_per_second, std::int64_t segment_bytes,
                                   MoveDone done) {
  AFASIM_RETURN_IF_ERROR(check_move(extent_id, member, target));
  Extent& e = extents_[extent_id];
  if (bytes_per_second <= 0 || segment_bytes <= 0 || allocator_.chunk_bytes() % segment_bytes != 0)
    return sim::invalid_argument(
        "a move needs a positive rate and a segment that divides the chunk");
  ExtentMove mv;
  mv.extent = extent_id;
  mv.member = member;
  mv.from = e.members[static_cast<std::size_t>(member)];
  mv.to = target;
  mv.bytes_per_second = bytes_per_second;
  mv.segment_bytes = segment_bytes;
  mv.done = std::move(done);
  e.moving_member = static_cast<std::int8_t>(member);
  moves_.push_back(std::move(mv));
  ++move_stats_.started;
  moves_.back().next = sim_.after(0, [this, extent_id] { move_step(extent_id); });
  return Status::ok();
}

void DataPath::move_step(std::uint32_t extent_id) {
  ExtentMove* mv = find_move(extent_id);
  AFASIM_ASSERT(mv != nullptr, "a move step without its move");
  const Extent& e = extents_[extent_id];
  const std::int64_t n = mv->segment_bytes;
  // The bytes first: the segment as it is now. Writes submitted from here on land on both
  // chunks (write_move_target), so the new chunk never falls behind the old one.
  if (Status st = copy_chunk_payload(mv->from, mv->to, mv->copied_bytes, n); !st.is_ok()) {
    abort_move(extent_id, st.message().c_str());
    return;
  }
  // Then the time: the controller issues a read of the old chunk and a write of the new one.
  Id c = owner(e.volume_id);  // as the rebuild: the volume's owner, else a serving controller
  if (c == 0) c = serving(1) ? 1 : 2;
  const Time issued =
      cores_[static_cast<std::size_t>(c - 1)].serve(sim_.now(), 2 * options_.cost.backend_op_ns);
  const Time read = backend(issued, c, mv->from, mv->copied_bytes, n, datapac::SsdOp::kRead);
  const Time written = backend(read, c, mv->to, mv->copied_bytes, n, datapac::SsdOp::kWrite);
  mv->copied_bytes += n;
  move_stats_.bytes_read += n;
  move_stats_.bytes_written += n;
  move_stats_.backend_ops += 2;
  if (move_copy_bytes_.size() < ssds_.size()) move_copy_bytes_.resize(ssds_.size(), 0);
  move_copy_bytes_[static_cast<std::size_t>(mv->to.drive)] += n;
  // Paced: the next segment starts when this one is written and the rate allows.
  const Time paced = sim_.now() + sim::transfer_time(n, mv->bytes_per_second);
  const Time next = std::max(written, paced);
  if (mv->copied_bytes >= allocator_.chunk_bytes())
    mv->next = sim_.at(written, [this, extent_id] { finish_move(extent_id); });
  else
    mv->next = sim_.at(next, [this, extent_id] { move_step(extent_id); });
}

void DataPath::finish_move(std::uint32_t extent_id) {
  ExtentMove* mv = find_move(extent_id);
  AFASIM_ASSERT(mv != nullptr, "finishing a move that is not in flight");
  Extent& e = extents_[extent_id];
  AFASIM_ASSERT(e.moving_member == mv->member, "a moving extent forgot its member");
  const ChunkAddr from = mv->from;
  MoveDone done = std::move(mv->done);
  // The switch: one event, so no I/O sees the member half-moved.
  e.members[static_cast<std::size_t>(mv->member)] = mv->to;
  e.moving_member = -1;
  moves_.erase(moves_.begin() + (mv - moves_.data()));
  ++move_stats_.completed;
  if (Status p = notify_extent(ExtentChange::kUpdated, e); !p.is_ok())
    emit(Severity::kError, "wear", "volume/" + std::to_string(e.volume_id),
         "could not persist a moved extent: " + p.message());
  release_chunk(from);
  if (done) done(true);
}

void DataPath::abort_move(std::uint32_t extent_id, const char* why) {
  ExtentMove* mv = find_move(extent_id);
  if (mv == nullptr) return;
  Extent& e = extents_[extent_id];
  sim_.cancel(mv->next);
  e.moving_member = -1;
  const ChunkAddr to = mv->to;
  MoveDone done = std::move(mv->done);
  moves_.erase(moves_.begin() + (mv - moves_.data()));
  ++move_stats_.aborted;
  release_chunk(to);
  emit(Severity::kInfo, "wear", "volume/" + std::to_string(e.volume_id),
       "move of " + extent_name(e.volume_id, e.index) + " given up: " + why);
  if (done) done(false);
}

void DataPath::abort_moves_on_drive(int drive) {
  std::vector<std::uint32_t> hit;
  for (const ExtentMove& m : moves_)
    if (m.from.drive == drive || m.to.drive == drive) hit.push_back(m.extent);
  for (std::uint32_t id : hit) abort_move(id, "a drive it used left service");
}

Status DataPath::write_move_target(Extent& e, std::int64_t offset, std::int64_t length,
                                   const std::uint8_t* src, Work& w) {
  ExtentMove* mv = find_move(id_of(e));
  AFASIM_ASSERT(mv != nullptr, "a moving member without its move");
  // Only the part already copied: the copy carries the rest when it gets there.
  const std::int64_t end = std::min(offset + length, mv->copied_bytes);
  if (end <= offset) return Status::ok();
  w.ops.push_back({mv->to, offset, end - offset, datapac::SsdOp::kWrite, 1});
  move_stats_.bytes_written += end - offset;
  if (!has_payload()) return Status::ok();
  return ssds_[static_cast<std::size_t>(mv->to.drive)]->write_payload(
      mv->to.offset_bytes(allocator_.chunk_bytes()) + offset,
      {src, static_cast<std::size_t>(end - offset)});
}

Status DataPath::move_member_now(std::uint32_t extent_id, int member, ChunkAddr target) {
  AFASIM_RETURN_IF_ERROR(check_move(extent_id, member, target));
  Extent& e = extents_[extent_id];
  const ChunkAddr from = e.members[static_cast<std::size_t>(member)];
  AFASIM_RETURN_IF_ERROR(copy_chunk_payload(from, target, 0, allocator_.chunk_bytes()));
  e.members[static_cast<std::size_t>(member)] = target;
  ++move_stats_.started;
  ++move_stats_.completed;
  move_stats_.bytes_read += allocator_.chunk_bytes();
  move_stats_.bytes_written += allocator_.chunk_bytes();
  if (Status p = notify_extent(ExtentChange::kUpdated, e); !p.is_ok())
    emit(Severity::kError, "wear", "volume/" + std::to_string(e.volume_id),
         "could not persist a moved extent: " + p.message());
  release_chunk(from);
  return Status::ok();
}

}  // namespace afasim::controller
