// pool::ThinMap — the thin map (DESIGN.md "One host write", step 4): each volume's extents
// (volume offset → RAID extent id in the raid::ExtentTable), allocate-on-write from the
// extent allocator, release on unmap, and the health counts of each volume's extents.
//
// A thin volume allocates an extent the first time a write touches it; a fixed (thick)
// volume allocates all of them when it is attached or grown. Releasing an extent trims its
// chunks (the next extent on them must read zeros, never another volume's data) and gives
// them back to the allocator. Two hooks reach the layers above: the extent listener
// persists changes (a refusal fails the allocation), the release hook runs before an extent
// is freed (the extent mover gives up a move of it).
//
// Not thread-safe (model thread). Sizes in bytes; ids as in controller/objects.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "pool/extent_allocator.h"
#include "pool/extent_record.h"
#include "raid/engine.h"
#include "raid/extent.h"
#include "sim/id_table.h"
#include "sim/status.h"

namespace afasim::pool {

// The health of a volume's data, from its extents.
enum class DataHealth { kOnline, kDegraded, kFailed };

// The first cache line holds what every host I/O reads (the map, the capacity it checks,
// the RAID type that picks the extent size, the lost-data test of admission); with many
// active volumes each I/O finds its volume cold, so that is one line from memory, not two.
struct alignas(64) ThinVolume {
  std::vector<std::uint32_t> map;  // extent id per volume extent, raid::ExtentTable::kNone if none
  std::int64_t capacity_bytes = 0;
  std::int64_t lost_extents = 0;      // extents that lost more members than the layout tolerates
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  bool fixed = false;  // fixed (thick) provisioning: every extent allocated up front
  std::int64_t id = 0;
  std::int64_t allocated = 0;
  std::int64_t degraded_extents = 0;  // extents missing a member redundancy covers
  std::int64_t degraded_members = 0;  // members missing from those extents (awaiting rebuild)
  std::vector<int> pool_drives;    // drive indexes of the pool's DataPacs
  DataHealth health() const {
    return lost_extents > 0 ? DataHealth::kFailed : degraded_extents > 0 ? DataHealth::kDegraded : DataHealth::kOnline;
  }
};

class ThinMap {
 public:
  static constexpr std::uint32_t kNoExtent = raid::ExtentTable::kNone;
  enum class Change { kAllocated, kUpdated, kReleased };
  using Listener = std::function<sim::Status(Change change, const ExtentRecord& record)>;

  // REQUIRES: the engine outlives the map.
  ThinMap(const CapacityModel& capacity, std::int64_t ssd_nominal_bytes, const std::vector<int>& drive_datapacs,
          raid::Engine& engine);

  void set_listener(Listener listener) { listener_ = std::move(listener); }
  void set_release_hook(std::function<void(std::uint32_t extent_id)> hook) { release_hook_ = std::move(hook); }

  // Host bytes per extent of `type`, the unit of thin allocation; SSD bytes it occupies.
  std::int64_t extent_bytes(raid::RaidType type) const { return engine_.layout(type).extent_bytes(); }
  const sim::Divisor& extent_divisor(raid::RaidType type) const { return engine_.layout(type).extent_divisor(); }
  std::int64_t raw_bytes_per_extent(raid::RaidType type) const {
    return engine_.layout(type).member_count() * allocator_.chunk_bytes();
  }

  // Makes volume `v.id` known, its map sized from its capacity. With `allocate_fixed`, a
  // fixed volume takes all its extents now; kNoSpace (nothing allocated, not attached) when
  // they do not fit.
  sim::Status attach(ThinVolume v, bool allocate_fixed);
  // Grows the map (a fixed volume allocates the new extents, all or nothing: kNoSpace).
  // kNotFound, kUnprocessable for a shrink.
  sim::Status grow(std::int64_t volume_id, std::int64_t capacity_bytes);
  // Releases the extents past `capacity_bytes` (undoes a grow whose commit failed).
  void shrink(std::int64_t volume_id, std::int64_t capacity_bytes);
  // Releases every extent of the volume and forgets it.
  void detach(std::int64_t volume_id);
  // Puts back a persisted extent (boot). kConflict if it does not fit the map or its chunks
  // are taken.
  sim::Status restore(const ExtentRecord& record);
  std::vector<ExtentRecord> records(std::int64_t volume_id) const;
  ExtentRecord record_of(const raid::Extent& e) const;

  // Allocates the missing extents under [offset, +length), all or nothing: kNoSpace (or the
  // listener's refusal) and nothing stays allocated.
  sim::Status allocate_range(ThinVolume& v, std::int64_t offset, std::int64_t length);
  // Frees extent `id` (trimmed, chunks back to the allocator, unmapped from its volume).
  void release(std::uint32_t id);
  // Tells the listener; its error is returned (the caller decides what it means).
  sim::Status notify(Change change, const raid::Extent& e) const;
  // After `e.missing` / `e.lost` changed from `was_missing` / `was_lost`: updates its
  // volume's health counts.
  void update_health(const raid::Extent& e, std::uint16_t was_missing, bool was_lost);

  ThinVolume* find(std::int64_t volume_id) {
    return volume_id > 0 ? volumes_.find_in_use(static_cast<std::uint64_t>(volume_id)) : nullptr;
  }
  // Where volume `volume_id`'s thin volume is or would be, for a prefetch (null: no id of its
  // page in use); reads nothing of the volume's own.
  const ThinVolume* address(std::int64_t volume_id) const {
    return volume_id > 0 ? volumes_.find(static_cast<std::uint64_t>(volume_id)) : nullptr;
  }
  const ThinVolume* find(std::int64_t volume_id) const { return const_cast<ThinMap*>(this)->find(volume_id); }
  // Where a volume's map entries are, from a table by volume id kept beside the volumes:
  // reading it touches no line of the volume's own, so a caller that prefetches for a read of
  // a volume among many can load the map entry and the volume's lines at once instead of one
  // after the other. {nullptr, 0} for an unknown volume. Valid until the volume's map next
  // changes size (attach, grow, shrink, detach; all through resize_map): not to be kept.
  struct alignas(16) MapView {
    const std::uint32_t* extent_ids = nullptr;  // the map: extent id per volume extent
    std::uint32_t extent_count = 0;             // entries, one per extent_bytes(raid_type)
    raid::RaidType raid_type = raid::RaidType::kRaid10;
  };
  static_assert(sizeof(MapView) == 16, "a MapView in one cache line: 4 per line, none across");
  MapView map_view(std::int64_t volume_id) const {
    const MapView* view = volume_id > 0 ? map_views_.find(static_cast<std::uint64_t>(volume_id)) : nullptr;
    return view != nullptr ? *view : MapView{};
  }
  // The extent covering `offset` of the volume, or nullptr (unallocated, unknown).
  raid::Extent* extent_at(const ThinVolume& v, std::int64_t offset);
  bool is_allocated(std::int64_t volume_id, std::int64_t offset_bytes) const;
  // Attached volumes, by id.
  template <typename F>
  void for_each_volume(F&& f) {
    volumes_.for_each([&](std::uint64_t, ThinVolume& v) { f(v); });
  }

  raid::ExtentTable& extents() { return extents_; }
  const raid::ExtentTable& extents() const { return extents_; }
  ExtentAllocator& allocator() { return allocator_; }
  const ExtentAllocator& allocator() const { return allocator_; }
  // Pool accounting (drives = the pool's drive indexes): usable is the usable SSDs' normal
  // chunks and their spare chunks that hold rebuilt members; allocated, their chunks in use;
  // so usable − allocated is the free normal chunks, all that allocation takes from.
  std::int64_t raw_usable_bytes(const std::vector<int>& drives) const;
  std::int64_t raw_allocated_bytes(const std::vector<int>& drives) const;
  // Extents of `type` the allocator can still place on `drives` (ExtentAllocator::
  // placeable_extents): RAID 10 a member on each of its pairs' SSDs in each of the first two
  // DataPacs (the allocator's two sides), RAID 5 its members on different SSDs.
  std::int64_t placeable_extents(raid::RaidType type, const std::vector<int>& drives) const;

 private:
  std::uint32_t place(ThinVolume& v, std::int64_t index, const std::vector<ChunkAddr>& members,
                      std::uint16_t missing);
  sim::Result<std::uint32_t> allocate(ThinVolume& v, std::int64_t index);
  // Sizes `v`'s map to `entries` (new entries kNoExtent) and its entry of map_views_ with it:
  // the only way a map changes size, so that map_view() is never stale.
  void resize_map(ThinVolume& v, std::size_t entries);

  raid::Engine& engine_;
  ExtentAllocator allocator_;
  raid::ExtentTable extents_;
  // By volume id: the lookup is on every I/O's path.
  sim::IdTable<ThinVolume> volumes_;  // in the table's pages: a lookup loads no pointer
  sim::IdTable<MapView> map_views_;  // by volume id, as volumes_ (map_view(), resize_map())
  Listener listener_;
  std::function<void(std::uint32_t)> release_hook_;
};

}  // namespace afasim::pool
