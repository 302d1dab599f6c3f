// controller::LostWrites — acknowledged writes the array lost, so that reads of them fail
// instead of returning the older bytes the SSDs still hold (docs/faults.md "Lost writes").
//
// A write acknowledged from the write cache is lost when no copy of it is left: its owner
// controller failed before the peer held a current mirror of it and before its destage (two
// controller failures within a takeover), or its destage kept failing until a stop. The SSDs
// then hold the block's previous bytes; returning them would be wrong data without an error.
// A storage array marks such blocks ("lost data", "pinned cache") and fails reads of them until
// the host writes them again; so does afasim, per 4 KiB block of the write cache.
//
// The marks live beside each volume (VolumeRuntime::lost_blocks), are saved with the array's
// hardware state (meta "hardware", "volume V lost FIRST COUNT" lines, controller/hardware_state.cpp)
// and go with the volume when it is deleted. Model thread only.
#pragma once

#include <cstdint>

namespace afasim::controller {

struct VolumeRuntime;

class LostWrites {
 public:
  static constexpr std::int64_t kBlockBytes = 4096;  // the write cache's block (WriteCache::kBlockBytes)

  // Marks block `block` (of kBlockBytes) of `v` lost.
  void mark(VolumeRuntime& v, std::int64_t block);
  // Forgets the lost blocks that [offset, +length) bytes of `v` cover wholly: a write, trim or
  // write-zeroes of them was accepted. Cheap when no block of the array is lost.
  void clear(VolumeRuntime& v, std::int64_t offset, std::int64_t length) {
    if (blocks_ != 0) clear_range(v, offset, length);
  }
  // Whether [offset, +length) bytes of `v` touch a lost block; the first such block's byte
  // offset in `first_lost_byte`. Cheap when no block of the array is lost (every host read asks).
  bool touches(const VolumeRuntime& v, std::int64_t offset, std::int64_t length, std::int64_t& first_lost_byte) const {
    return blocks_ != 0 && find_in(v, offset, length, first_lost_byte);
  }
  // Forgets `v`'s marks (the volume is being deleted).
  void forget(VolumeRuntime& v);

  // Lost blocks over all volumes.
  std::int64_t blocks() const { return blocks_; }
  // Moves with every mark and every clear: the array saves its hardware state when it has.
  std::uint64_t changes() const { return changes_; }

 private:
  void clear_range(VolumeRuntime& v, std::int64_t offset, std::int64_t length);
  bool find_in(const VolumeRuntime& v, std::int64_t offset, std::int64_t length, std::int64_t& first_lost_byte) const;

  std::int64_t blocks_ = 0;
  std::uint64_t changes_ = 0;
};

}  // namespace afasim::controller
