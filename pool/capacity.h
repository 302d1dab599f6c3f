// The capacity model (docs/capacity.md): from SSDs' nominal size to what volumes can use.
//
// Per SSD:   nominal → pre-RAID (minus over-provisioning) → minus the distributed rebuild
//            spare → minus the metadata reserve → rounded down to whole chunks = raw usable.
// Per pool:  raw usable is the sum over its SSDs; a RAID type turns raw bytes into usable
//            bytes (RAID10: ÷ copies; RAID5 k+1: × k/(k+1); RAID0: as is).
// One parameter set (config/models/capacity.json) for every system; no per-model constant.
// Pure functions of their inputs; thread-safe.
#pragma once

#include <cstdint>

#include "config/preset.h"
#include "raid/raid_type.h"

namespace afasim::pool {

// How one SSD's nominal bytes are spent. All in bytes.
struct DriveCapacity {
  std::int64_t nominal_bytes = 0;
  std::int64_t pre_raid_bytes = 0;   // nominal × (1 − over_provisioning_fraction)
  std::int64_t spare_bytes = 0;      // pre_raid × rebuild_spare_fraction
  std::int64_t metadata_bytes = 0;   // metadata_reserve_bytes_per_drive
  std::int64_t raw_usable_bytes = 0; // what is left, in whole chunks
};

struct SystemCapacity {
  std::int64_t pre_raid_bytes = 0;
  std::int64_t raw_usable_bytes = 0;
  std::int64_t usable_raid10_bytes = 0;
  std::int64_t usable_raid5_bytes = 0;
};

class CapacityModel {
 public:
  explicit CapacityModel(const config::CapacityParams& params);

  const config::CapacityParams& params() const { return params_; }
  DriveCapacity drive(std::int64_t nominal_bytes) const;
  // Both DataPacs of `preset` in one pool, as shipped.
  SystemCapacity system(const config::SystemPreset& preset) const;

  // Host bytes per extent, the unit of thin allocation: one RAID 5 stripe of chunks
  // (chunk_bytes × raid5_data_drives; 64 MiB with the shipped parameters).
  std::int64_t extent_bytes() const;
  // SSD bytes one extent of `type` occupies: RAID10 copies × extent, RAID5 (k+1) chunks,
  // RAID0 the extent itself.
  std::int64_t raw_bytes_per_extent(raid::RaidType type) const;

  // Host-visible bytes that `raw_bytes` of SSD space hold under `type`, rounded down.
  std::int64_t usable_from_raw(raid::RaidType type, std::int64_t raw_bytes) const;
  // SSD space consumed by `logical_bytes` of host data under `type`, rounded up.
  std::int64_t raw_from_usable(raid::RaidType type, std::int64_t logical_bytes) const;

 private:
  config::CapacityParams params_;
};

// Bytes to decimal terabytes rounded to one decimal, as the spec sheet prints them.
double to_tb_rounded(std::int64_t bytes);

}  // namespace afasim::pool
