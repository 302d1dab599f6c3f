#include "pool/capacity.h"

#include <cmath>

#include "sim/assert.h"

namespace afasim::pool {

CapacityModel::CapacityModel(const config::CapacityParams& params) : params_(params) {
  AFASIM_ASSERT(params.chunk_bytes > 0, "chunk_bytes must be positive");
  AFASIM_ASSERT(params.raid10_copies >= 2, "RAID10 needs at least two copies");
  AFASIM_ASSERT(params.raid5_data_drives >= 2, "RAID5 needs at least two data drives");
}

DriveCapacity CapacityModel::drive(std::int64_t nominal_bytes) const {
  DriveCapacity d;
  d.nominal_bytes = nominal_bytes;
  d.pre_raid_bytes = static_cast<std::int64_t>(
      std::floor(static_cast<double>(nominal_bytes) * (1.0 - params_.over_provisioning_fraction)));
  d.spare_bytes = static_cast<std::int64_t>(
      std::ceil(static_cast<double>(d.pre_raid_bytes) * params_.rebuild_spare_fraction));
  d.metadata_bytes = params_.metadata_reserve_bytes_per_drive;
  const std::int64_t left = d.pre_raid_bytes - d.spare_bytes - d.metadata_bytes;
  d.raw_usable_bytes = left > 0 ? left / params_.chunk_bytes * params_.chunk_bytes : 0;
  return d;
}

SystemCapacity CapacityModel::system(const config::SystemPreset& preset) const {
  const DriveCapacity d = drive(preset.ssd.capacity_bytes);
  SystemCapacity s;
  s.pre_raid_bytes = d.pre_raid_bytes * preset.drive_count();
  s.raw_usable_bytes = d.raw_usable_bytes * preset.drive_count();
  // A RAID type the system cannot place offers nothing, as its pool does not offer it
  // (controller::Array::raid_types_offered): RAID 10 mirrors across DataPacs, 4 SSDs in each for
  // one extent; a RAID 5 extent needs a chunk on each of k + 1 SSDs (hostile round 16: a 2-SSD preset showed 1.8 TB of
  // RAID 5 where every write failed for lack of space).
  // The shipped geometry: a RAID 10 extent is extent_bytes / chunk_bytes (= raid5_data_drives)
  // mirror pairs, one SSD of each pair in each of two DataPacs.
  const int drives = preset.drive_count();
  if (preset.datapacs.count >= 2 && preset.datapacs.ssds_per_datapac >= params_.raid5_data_drives)
    s.usable_raid10_bytes = usable_from_raw(raid::RaidType::kRaid10, s.raw_usable_bytes);
  if (drives >= params_.raid5_data_drives + params_.raid5_parity_drives)
    s.usable_raid5_bytes = usable_from_raw(raid::RaidType::kRaid5, s.raw_usable_bytes);
  return s;
}

std::int64_t CapacityModel::usable_from_raw(raid::RaidType type, std::int64_t raw_bytes) const {
  const __int128 raw = raw_bytes;
  switch (type) {
    case raid::RaidType::kRaid0: return raw_bytes;
    case raid::RaidType::kRaid10: return static_cast<std::int64_t>(raw / params_.raid10_copies);
    case raid::RaidType::kRaid5: {
      const int k = params_.raid5_data_drives;
      return static_cast<std::int64_t>(raw * k / (k + params_.raid5_parity_drives));
    }
  }
  return 0;
}

std::int64_t CapacityModel::raw_from_usable(raid::RaidType type, std::int64_t logical_bytes) const {
  const __int128 logical = logical_bytes;
  switch (type) {
    case raid::RaidType::kRaid0: return logical_bytes;
    case raid::RaidType::kRaid10: return static_cast<std::int64_t>(logical * params_.raid10_copies);
    case raid::RaidType::kRaid5: {
      const int k = params_.raid5_data_drives;
      const int n = k + params_.raid5_parity_drives;
      return static_cast<std::int64_t>((logical * n + k - 1) / k);
    }
  }
  return 0;
}

std::int64_t CapacityModel::extent_bytes() const {
  return params_.chunk_bytes * params_.raid5_data_drives;
}

std::int64_t CapacityModel::raw_bytes_per_extent(raid::RaidType type) const {
  switch (type) {
    case raid::RaidType::kRaid0: return extent_bytes();
    case raid::RaidType::kRaid10: return extent_bytes() * params_.raid10_copies;
    case raid::RaidType::kRaid5:
      return params_.chunk_bytes * (params_.raid5_data_drives + params_.raid5_parity_drives);
  }
  return 0;
}

double to_tb_rounded(std::int64_t bytes) {
  return std::round(static_cast<double>(bytes) / 1e11) / 10.0;
}

}  // namespace afasim::pool
