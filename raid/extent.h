// raid::Extent — one RAID extent: which chunks hold its members, which of them are lost, and
// a member being copied to a new chunk; raid::ExtentTable holds every extent of the array by
// id (the thin map, pool/thin_map.h, maps volume extents to these ids).
//
// Not thread-safe (model thread).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "raid/members.h"
#include "raid/raid_type.h"
#include "sim/assert.h"
#include "sim/prefetch.h"

namespace afasim::raid {

struct Extent {
  RaidType type = RaidType::kRaid10;
  std::uint8_t member_count = 0;  // 0: a free slot of the table
  std::uint16_t missing = 0;      // bit i: member i's chunk is lost (awaiting rebuild)
  bool lost = false;              // more members lost than the layout tolerates
  // The thin map's back-reference (volume id, extent index in the volume): names the extent
  // in messages and tells a reused slot from the extent a background task started on.
  std::int64_t volume_id = 0;
  std::int64_t index = 0;
  std::array<ChunkAddr, kMaxMembers> members{};
  // A member being copied to a new chunk (the extent mover, docs/wear-leveling.md), -1 when
  // none: writes to the member below `move_copied_bytes` also go to `move_target`.
  std::int8_t moving_member = -1;
  ChunkAddr move_target;
  std::int64_t move_copied_bytes = 0;
  // Host bytes written to each member since allocation (the wear leveler's heat).
  std::array<std::int64_t, kMaxMembers> written_bytes{};

  bool is_free() const { return member_count == 0; }
  bool is_missing(int m) const { return (missing >> m) & 1u; }
  bool degraded() const { return !lost && missing != 0; }
  std::vector<ChunkAddr> member_list() const { return {members.begin(), members.begin() + member_count}; }
};

// Whether losing the members in `missing` loses data under `type` (RAID0: any; RAID5: two or
// more; RAID10: both members of a pair).
bool beyond_redundancy(RaidType type, std::uint16_t missing, int members);

// Every extent of the array, by id. Ids of freed extents are reused (lowest last freed first).
class ExtentTable {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  // Stores `e` (REQUIRES: member_count > 0) and returns its id.
  std::uint32_t add(const Extent& e);
  // Frees the slot. REQUIRES: it holds an extent.
  void remove(std::uint32_t id);
  Extent& operator[](std::uint32_t id) { return extents_[id]; }
  const Extent& operator[](std::uint32_t id) const { return extents_[id]; }
  // Slots, free ones included: ids run from 0 to size() − 1.
  std::size_t size() const { return extents_.size(); }
  bool holds(std::uint32_t id) const { return id < extents_.size() && !extents_[id].is_free(); }
  // Starts loading extent `id`'s type and members into the CPU cache (a caller that will plan
  // on it after other work). Speed only. REQUIRES: id < size().
  void prefetch(std::uint32_t id) const {
    const Extent& e = extents_[id];
    sim::prefetch(&e.type);
    sim::prefetch(&e.members[kMaxMembers / 2]);
    sim::prefetch(&e.members[kMaxMembers - 1]);
  }
  std::uint32_t id_of(const Extent& e) const { return static_cast<std::uint32_t>(&e - extents_.data()); }

 private:
  std::vector<Extent> extents_;
  std::vector<std::uint32_t> free_ids_;
};

}  // namespace afasim::raid
