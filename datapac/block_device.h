// datapac::BlockDevice — the contents of one device as byte ranges: the seam the RAID engine
// (raid/members.h) reaches SSDs through. Timing is not part of it: the controller times SSD
// commands on the SSD model (datapac/ssd.h) separately.
//
// Offsets and lengths are bytes from the device's start. Not thread-safe (model thread).
#pragma once

#include <cstdint>
#include <span>

#include "sim/status.h"

namespace afasim::datapac {

class BlockDevice {
 public:
  virtual ~BlockDevice() = default;
  // Copies `data` to [offset, +size). kUnavailable when the device is failed or removed,
  // kOutOfRange outside it, kIoError when its backing store fails.
  virtual sim::Status write_payload(std::int64_t offset_bytes, std::span<const std::uint8_t> data) = 0;
  // Fills `out` from [offset, +size); never-written and trimmed bytes read as zeros. Errors
  // as write_payload.
  virtual sim::Status read_payload(std::int64_t offset_bytes, std::span<std::uint8_t> out) const = 0;
  // Makes [offset, +length) read as zeros. Errors as write_payload.
  virtual sim::Status trim_payload(std::int64_t offset_bytes, std::int64_t length_bytes) = 0;
  // False only when [offset, +length) certainly reads as zeros (lets a rebuild skip empty
  // space); true when unsure.
  virtual bool payload_may_hold_data(std::int64_t offset_bytes, std::int64_t length_bytes) const = 0;
};

}  // namespace afasim::datapac
