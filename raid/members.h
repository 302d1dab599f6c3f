// What the RAID engine knows of the devices under it: chunks (a fixed-size piece of one SSD)
// and a small interface that reads, writes and trims byte ranges of a chunk.
//
// The SSDs implement datapac::BlockDevice; DriveMembers turns chunk addresses into device
// byte offsets over them and models the SSDs' media errors (a block whose ECC fails reads as
// kIoError until it is rewritten): the `corrupt_block` fault (docs/faults.md) puts one there
// for the RAID engine to recover from and the scrub to find. Not thread-safe (model thread).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "datapac/block_device.h"
#include "sim/status.h"

namespace afasim::raid {

// Members of one extent at most: RAID5 up to 8+1, RAID10 up to 4 pairs.
inline constexpr int kMaxMembers = 9;

// One chunk: the `chunk`-th chunk-sized piece of drive `drive` (array-wide index, drive id − 1).
struct ChunkAddr {
  std::int32_t drive = -1;
  std::int32_t chunk = -1;
  bool valid() const { return drive >= 0; }
  bool operator==(const ChunkAddr&) const = default;
  std::int64_t offset_bytes(std::int64_t chunk_bytes) const { return std::int64_t{chunk} * chunk_bytes; }
};

// Byte ranges of chunks. Offsets are within the chunk; REQUIRES offset + length <= chunk size.
class MemberStore {
 public:
  virtual ~MemberStore() = default;
  // Errors: kIoError for a media error in the range (the bytes are not returned), or what
  // the device reports (failed, removed, backing file).
  virtual sim::Status read(ChunkAddr chunk, std::int64_t offset, std::span<std::uint8_t> out) const = 0;
  virtual sim::Status write(ChunkAddr chunk, std::int64_t offset, std::span<const std::uint8_t> data) = 0;
  virtual sim::Status trim(ChunkAddr chunk, std::int64_t offset, std::int64_t length) = 0;
  // False only when the range certainly reads as zeros.
  virtual bool may_hold_data(ChunkAddr chunk, std::int64_t offset, std::int64_t length) const = 0;
  // Whether a media error lies in the range (reads of it fail until a write covers it).
  virtual bool has_media_error(ChunkAddr chunk, std::int64_t offset, std::int64_t length) const = 0;
  // True when no block has a media error (the write path's fast test before looking further).
  virtual bool media_errors_none() const = 0;
  // Makes the range, whole media blocks, read as a media error until a write covers it: a
  // rebuild's block that had no readable source (a "punctured" stripe, as hardware RAID
  // calls it), so that reads of it fail instead of returning bytes that were never the data.
  virtual sim::Status mark_unreadable(ChunkAddr chunk, std::int64_t offset, std::int64_t length) = 0;
};

// MemberStore over one BlockDevice per drive index, with media errors.
class DriveMembers final : public MemberStore {
 public:
  // The unit of a media error: one 4 KiB block (the SSDs' mapping unit).
  static constexpr std::int64_t kMediaBlockBytes = 4096;

  // REQUIRES: chunk_bytes > 0; the devices outlive this object.
  DriveMembers(std::vector<datapac::BlockDevice*> drives, std::int64_t chunk_bytes)
      : drives_(std::move(drives)), chunk_bytes_(chunk_bytes) {}

  sim::Status read(ChunkAddr chunk, std::int64_t offset, std::span<std::uint8_t> out) const override;
  sim::Status write(ChunkAddr chunk, std::int64_t offset, std::span<const std::uint8_t> data) override;
  sim::Status trim(ChunkAddr chunk, std::int64_t offset, std::int64_t length) override;
  bool may_hold_data(ChunkAddr chunk, std::int64_t offset, std::int64_t length) const override;
  bool has_media_error(ChunkAddr chunk, std::int64_t offset, std::int64_t length) const override;
  bool media_errors_none() const override { return bad_.empty(); }
  // REQUIRES: offset and length multiples of kMediaBlockBytes.
  sim::Status mark_unreadable(ChunkAddr chunk, std::int64_t offset, std::int64_t length) override;

  // Corrupts the 4 KiB block of drive `drive` at device byte `offset` (rounded down): its
  // bytes are flipped and reads of it fail with a media error until a write covers it.
  // kOutOfRange for a block outside the drive's space, or what the device reports.
  sim::Status corrupt_block(int drive, std::int64_t offset_bytes);
  // Blocks with a media error now, by drive.
  std::int64_t media_error_blocks() const;
  // Forgets the media errors of a drive (a new SSD in its slot).
  void clear_drive(int drive) {
    if (auto d = bad_.find(drive); d != bad_.end()) {
      cleared_ += d->second.size();
      ++changes_;
      bad_.erase(d);
    }
  }
  // Counts the changes to the media errors: added (corrupt_block, mark_unreadable) and cleared
  // (a write or trim covered one). The array saves its hardware state when it moves, so that
  // a kill neither forgets a mark nor brings back one a write healed (review 38: a punctured
  // column rewritten and flushed was unreadable again after a kill).
  std::uint64_t media_error_changes() const { return changes_; }
  // Of those, the blocks cleared.
  std::uint64_t media_errors_cleared() const { return cleared_; }
  // The blocks with a media error, drive → device byte offsets; and one put back as it was
  // (a restart: its bytes are already the corrupted ones, so nothing is flipped).
  const std::map<int, std::set<std::int64_t>>& bad_blocks() const { return bad_; }
  void restore_bad_block(int drive, std::int64_t offset_bytes) { bad_[drive].insert(offset_bytes / kMediaBlockBytes * kMediaBlockBytes); }

 private:
  std::int64_t device_offset(ChunkAddr c, std::int64_t offset) const { return c.offset_bytes(chunk_bytes_) + offset; }
  // The first bad block of `drive` in [begin, end), or -1.
  std::int64_t first_bad(int drive, std::int64_t begin, std::int64_t end) const;
  // Clears the bad blocks wholly inside [begin, end) (a write or trim replaced them).
  void clear_bad(int drive, std::int64_t begin, std::int64_t end);

  std::vector<datapac::BlockDevice*> drives_;
  std::int64_t chunk_bytes_;
  std::map<int, std::set<std::int64_t>> bad_;  // drive → bad block offsets (ordered: deterministic)
  std::uint64_t changes_ = 0;
  std::uint64_t cleared_ = 0;
};

}  // namespace afasim::raid
