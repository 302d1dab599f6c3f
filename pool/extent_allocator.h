// The extent allocator: hands out chunks of SSD space for RAID extents (docs/capacity.md).
//
// Each SSD's usable space is cut into chunks (16 MiB with the shipped parameters). The first
// `normal_chunks` of an SSD hold data; the next `spare_chunks` are its share of the
// distributed rebuild spare, used only to rebuild a failed SSD's chunks. An extent takes one
// chunk on each of its members' SSDs, all different; a RAID10 extent's pairs straddle the
// two DataPacs. Placement picks the SSDs with the lowest placement score (by default the
// fraction of their chunks in use, so that SSDs fill evenly; the wear leveler installs a
// wear-based score). Ties go to the lower drive id, so placement is deterministic.
//
// Not thread-safe (model thread). All counts are chunks unless the name says bytes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "pool/capacity.h"
#include "raid/members.h"
#include "raid/raid_type.h"
#include "sim/status.h"

namespace afasim::pool {

// Chunks and the member bound are the RAID engine's (raid/members.h).
using raid::ChunkAddr;
using raid::kMaxMembers;

struct DriveSlot {
  int datapac = 0;         // DataPac id (1-based)
  bool usable = true;      // false once failed or removed: nothing new goes there
  std::int64_t normal_chunks = 0;
  std::int64_t spare_chunks = 0;
  std::int64_t free_normal_count = 0;
  std::int64_t free_spare_count = 0;
  // Stacks of chunk indices, lowest on top. They may hold chunks taken by claim(); take()
  // skips those by looking at in_use, which is the truth.
  std::vector<std::int32_t> free_normal;
  std::vector<std::int32_t> free_spare;
  std::vector<std::uint8_t> in_use;  // one per chunk
  std::int64_t used() const { return normal_chunks + spare_chunks - free_normal_count - free_spare_count; }
};

class ExtentAllocator {
 public:
  // drive_datapacs[i] is the DataPac of drive index i; every SSD has `nominal_bytes`.
  ExtentAllocator(const CapacityModel& model, std::int64_t nominal_bytes,
                  const std::vector<int>& drive_datapacs);

  std::int64_t chunk_bytes() const { return chunk_bytes_; }
  int drive_count() const { return static_cast<int>(drives_.size()); }
  const DriveSlot& drive(int index) const { return drives_[static_cast<std::size_t>(index)]; }

  // Chooses members for one extent of `type` among `candidates` (drive indexes of one pool)
  // and takes a normal chunk on each. `data_members` is P pairs for RAID10, k for RAID5/0.
  // kNoSpace when not enough usable SSDs have a free chunk (message says which constraint).
  sim::Result<std::vector<ChunkAddr>> allocate(raid::RaidType type, int data_members,
                                               const std::vector<int>& candidates);
  // Takes exactly these chunks (restoring extents at boot). kConflict if one is taken.
  sim::Status claim(const std::vector<ChunkAddr>& chunks);
  // Returns chunks to the free lists.
  void release(const std::vector<ChunkAddr>& chunks);

  // A chunk to replace a member lost with its SSD: on a usable SSD among `candidates` that
  // holds no other member of the extent (`members`) and, when `datapac` is set, in that
  // DataPac. Spare chunks first, then free normal ones. kNoSpace when none.
  sim::Result<ChunkAddr> allocate_replacement(const std::vector<ChunkAddr>& members,
                                              const std::vector<int>& candidates,
                                              std::optional<int> datapac);

  // A free normal chunk on `drive` (a wear leveler's move target). kNoSpace when the SSD
  // has none, kUnavailable when it is not usable.
  sim::Result<ChunkAddr> allocate_on(int drive);

  // Marks an SSD failed/removed (nothing new placed there) or back in service with all of
  // its chunks free (a replacement SSD). REQUIRES: no extent still uses a chunk on it when
  // reset_drive is called.
  void set_usable(int drive, bool usable) { drives_[static_cast<std::size_t>(drive)].usable = usable; }
  void reset_drive(int drive);

  // Normal chunks free / total on usable SSDs among `candidates`.
  std::int64_t free_normal_chunks(const std::vector<int>& candidates) const;
  std::int64_t total_normal_chunks(const std::vector<int>& candidates) const;
  // How many extents of `distinct` chunks, each on a different SSD, the free normal chunks of
  // the usable SSDs among `candidates` can hold: the largest k with Σ min(free_i, k) ≥ distinct·k
  // (an SSD gives at most one chunk to each of k extents). Less than Σ free / distinct when the
  // free space sits on too few SSDs (after failures and rebuilds: review 41, free_bytes said
  // 5-10 GB more than a fixed volume could take, and the refusal came after seconds of work).
  std::int64_t placeable_extents(const std::vector<int>& candidates, int distinct) const;
  // The same for extents of `type` as allocate() places them (RAID 10 on both mirror_sides).
  std::int64_t placeable_extents(raid::RaidType type, int data_members, const std::vector<int>& candidates) const;

  // Lower is preferred. Default: fraction of the SSD's chunks in use. `prepare`, when given,
  // runs once before each placement asks for its drives' scores: what every score shares is
  // worked out there once, not once per drive (the wear leveler's least wear: O(drives²) per
  // extent made a 20 TB fixed volume take 2.2 s, half of it in the scores).
  using Score = std::function<double(int drive)>;
  void set_placement_score(Score score, std::function<void()> prepare = {}) {
    score_ = std::move(score);
    prepare_ = std::move(prepare);
  }

 private:
  double score(int drive) const;
  // RAID 10's two sides among `candidates`: the lowest DataPac id's SSDs, and the others'.
  // False when the candidates are one DataPac.
  bool mirror_sides(const std::vector<int>& candidates, std::vector<int> (&side)[2]) const;
  std::int32_t take(int drive, bool spare_first);
  // The `count` best usable drives among `from` that have a free normal chunk.
  std::vector<int> best(const std::vector<int>& from, std::size_t count) const;

  std::int64_t chunk_bytes_;
  std::vector<DriveSlot> drives_;
  Score score_;
  std::function<void()> prepare_;
};

}  // namespace afasim::pool
