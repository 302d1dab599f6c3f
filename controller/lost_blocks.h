// controller::LostBlocks — volume data the array lost, so that reads of it fail instead of
// returning bytes that are not the data (docs/faults.md "Lost data").
//
// Two ways lose a volume's data while its SSDs still return bytes for it:
// - an acknowledged write with no copy left: its owner controller failed before the peer held
//   a current mirror of it and before its destage (two controller failures within a
//   takeover), a power loss whose vaults did not save it, or a stop that could not destage it.
//   The SSDs hold the block's older bytes;
// - a block with no readable source (two unreadable blocks of one RAID 5 column) that a
//   destage had to write around (WriteCache::destage_whole_row): the SSDs hold zeros there.
// A storage array marks such blocks ("lost data", "pinned cache", a punctured stripe) and
// fails reads of them until the host writes them again; so does afasim, per 512-byte sector,
// grouped by the write cache's 4 KiB block.
//
// The marks are kept by volume id, are saved with the array's
// hardware state (meta "hardware", "volume V lost FIRST COUNT [SECTORS]" lines,
// controller/hardware_state.cpp) and go with the volume when it is deleted. Model thread only.
#pragma once

#include <cstdint>
#include <map>

namespace afasim::controller {

struct VolumeRuntime;

class LostBlocks {
 public:
  static constexpr std::int64_t kBlockBytes = 4096;   // the write cache's block (WriteCache::kBlockBytes)
  static constexpr std::int64_t kSectorBytes = 512;   // the host's unit of I/O
  static constexpr int kSectors = static_cast<int>(kBlockBytes / kSectorBytes);
  static constexpr std::uint8_t kWholeBlock = 0xff;   // a block's sector mask with every sector lost
  // The most blocks a saved state may bring back (Array's restore refuses more): four times a
  // whole ISE write cache (4 GiB a controller, 16 GiB of DRAM / 4: config/systems), ~260 MB of
  // marks. A hand-edited line of 2^28 blocks took 4 GB and ended the start (hostile round 41).
  static constexpr std::int64_t kMaxRestoredBlocks = std::int64_t{1} << 22;

  // Marks the sectors of block `block` (of kBlockBytes) of `v` that lie within the volume
  // lost; `sectors` (bit i: sector i) restricts them.
  void mark(VolumeRuntime& v, std::int64_t block, std::uint8_t sectors = kWholeBlock);
  // Forgets the lost sectors [offset, +length) bytes of `v` cover wholly: a write, trim or
  // write-zeroes of them was accepted. Cheap when nothing of the array is lost.
  void clear(VolumeRuntime& v, std::int64_t offset, std::int64_t length) {
    if (blocks_ != 0) clear_range(v, offset, length);
  }
  // Whether [offset, +length) bytes of `v` touch a lost sector; the first such sector's byte
  // offset in `first_lost_byte`. Cheap when nothing of the array is lost (every host read asks).
  bool touches(const VolumeRuntime& v, std::int64_t offset, std::int64_t length, std::int64_t& first_lost_byte) const {
    return blocks_ != 0 && find_in(v, offset, length, first_lost_byte);
  }
  // Forgets `v`'s marks (the volume is being deleted).
  void forget(VolumeRuntime& v);

  // Blocks with a lost sector, over all volumes.
  std::int64_t blocks() const { return blocks_; }
  // Moves with every mark and every clear: the array saves its hardware state when it has.
  std::uint64_t changes() const { return changes_; }
  // Lost bytes of volume `volume_id` (its lost sectors × kSectorBytes).
  std::int64_t bytes(std::int64_t volume_id) const;
  // Volume id → (4 KiB block → its lost sectors, bit i: the i-th 512 bytes), by id and block.
  using Sectors = std::map<std::int64_t, std::uint8_t>;
  const std::map<std::int64_t, Sectors>& by_volume() const { return volumes_; }

 private:
  void clear_range(VolumeRuntime& v, std::int64_t offset, std::int64_t length);
  bool find_in(const VolumeRuntime& v, std::int64_t offset, std::int64_t length, std::int64_t& first_lost_byte) const;

  std::map<std::int64_t, Sectors> volumes_;  // only volumes with a lost sector
  std::int64_t blocks_ = 0;
  std::uint64_t changes_ = 0;
};

}  // namespace afasim::controller
