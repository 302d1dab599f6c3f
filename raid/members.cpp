#include "raid/members.h"

#include <string>
#include <vector>

#include "sim/assert.h"

namespace afasim::raid {

std::int64_t DriveMembers::first_bad(int drive, std::int64_t begin, std::int64_t end) const {
  auto d = bad_.find(drive);
  if (d == bad_.end()) return -1;
  auto it = d->second.upper_bound(begin - kMediaBlockBytes);  // first block that may reach past `begin`
  return it != d->second.end() && *it < end ? *it : -1;
}

void DriveMembers::clear_bad(int drive, std::int64_t begin, std::int64_t end) {
  auto d = bad_.find(drive);
  if (d == bad_.end()) return;
  auto it = d->second.lower_bound(begin);
  while (it != d->second.end() && *it + kMediaBlockBytes <= end) {
    it = d->second.erase(it);
    ++changes_;
    ++cleared_;
  }
  if (d->second.empty()) bad_.erase(d);
}

sim::Status DriveMembers::read(ChunkAddr chunk, std::int64_t offset, std::span<std::uint8_t> out) const {
  const std::int64_t at = device_offset(chunk, offset);
  if (!bad_.empty()) {
    const std::int64_t bad = first_bad(chunk.drive, at, at + static_cast<std::int64_t>(out.size()));
    if (bad >= 0)
      return sim::io_error("media error on drive " + std::to_string(chunk.drive + 1) + " at byte " +
                           std::to_string(bad));
  }
  return drives_[static_cast<std::size_t>(chunk.drive)]->read_payload(at, out);
}

sim::Status DriveMembers::write(ChunkAddr chunk, std::int64_t offset, std::span<const std::uint8_t> data) {
  const std::int64_t at = device_offset(chunk, offset);
  AFASIM_RETURN_IF_ERROR(drives_[static_cast<std::size_t>(chunk.drive)]->write_payload(at, data));
  if (!bad_.empty()) clear_bad(chunk.drive, at, at + static_cast<std::int64_t>(data.size()));
  return sim::Status::ok();
}

sim::Status DriveMembers::trim(ChunkAddr chunk, std::int64_t offset, std::int64_t length) {
  const std::int64_t at = device_offset(chunk, offset);
  AFASIM_RETURN_IF_ERROR(drives_[static_cast<std::size_t>(chunk.drive)]->trim_payload(at, length));
  if (!bad_.empty()) clear_bad(chunk.drive, at, at + length);
  return sim::Status::ok();
}

bool DriveMembers::may_hold_data(ChunkAddr chunk, std::int64_t offset, std::int64_t length) const {
  const std::int64_t at = device_offset(chunk, offset);
  // A bad block is not "certainly zeros": a rebuild or scrub must look at it.
  if (!bad_.empty() && first_bad(chunk.drive, at, at + length) >= 0) return true;
  return drives_[static_cast<std::size_t>(chunk.drive)]->payload_may_hold_data(at, length);
}

bool DriveMembers::has_media_error(ChunkAddr chunk, std::int64_t offset, std::int64_t length) const {
  const std::int64_t at = device_offset(chunk, offset);
  return !bad_.empty() && first_bad(chunk.drive, at, at + length) >= 0;
}

sim::Status DriveMembers::mark_unreadable(ChunkAddr chunk, std::int64_t offset, std::int64_t length) {
  AFASIM_ASSERT(offset % kMediaBlockBytes == 0 && length % kMediaBlockBytes == 0, "mark_unreadable: not whole blocks");
  const std::int64_t at = device_offset(chunk, offset);
  // Zeros beneath the mark: were the mark ever lost, the block would read as a hole, never
  // as another block's bytes.
  AFASIM_RETURN_IF_ERROR(drives_[static_cast<std::size_t>(chunk.drive)]->trim_payload(at, length));
  for (std::int64_t b = at; b < at + length; b += kMediaBlockBytes) bad_[chunk.drive].insert(b);
  ++changes_;
  return sim::Status::ok();
}

sim::Status DriveMembers::corrupt_block(int drive, std::int64_t offset_bytes) {
  if (drive < 0 || drive >= static_cast<int>(drives_.size()))
    return sim::Status(sim::Code::kOutOfRange, "no drive " + std::to_string(drive + 1));
  const std::int64_t at = offset_bytes / kMediaBlockBytes * kMediaBlockBytes;
  datapac::BlockDevice& dev = *drives_[static_cast<std::size_t>(drive)];
  std::vector<std::uint8_t> block(static_cast<std::size_t>(kMediaBlockBytes));
  AFASIM_RETURN_IF_ERROR(dev.read_payload(at, block));
  for (auto& b : block) b = static_cast<std::uint8_t>(~b);  // what a read that ignored the ECC would see
  AFASIM_RETURN_IF_ERROR(dev.write_payload(at, block));
  bad_[drive].insert(at);
  ++changes_;
  return sim::Status::ok();
}

std::int64_t DriveMembers::media_error_blocks() const {
  std::int64_t n = 0;
  for (const auto& [drive, blocks] : bad_) n += static_cast<std::int64_t>(blocks.size());
  return n;
}

}  // namespace afasim::raid
