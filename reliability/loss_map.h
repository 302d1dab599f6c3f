// Which pairs of failed SSDs lose data, read off the array's own extent placement
// (docs/reliability.md "The layout").
//
// The reliability mode does not assume a layout: it fills a pool of the system with extents
// of one RAID type through the same pool::ExtentAllocator the array uses (same chunk size,
// capacity model and placement rule) and records, for every pair of SSDs (i, j), in how many
// extents losing both loses data:
//   RAID5   any two members of one extent (k+1 chunks on k+1 different SSDs);
//   RAID10  the two members of one mirror pair (members 2p and 2p+1).
// For these layouts a set of failed SSDs loses data exactly when two of them form such a
// pair, so the matrix decides every multiple failure, not just the second.
// Pure function of its inputs; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "config/preset.h"
#include "raid/raid_type.h"
#include "sim/status.h"

namespace afasim::reliability {

struct LossMap {
  raid::RaidType raid_type = raid::RaidType::kRaid5;
  int drives = 0;
  int data_members = 0;                 // RAID5 k, RAID10 mirror pairs per extent
  std::int64_t chunk_bytes = 0;
  // Of each SSD, what the array ever writes: 1 − the capacity model's over-provisioning
  // (docs/capacity.md); the rest is spare area for the SSD's garbage collection.
  double host_span_fraction = 1;
  std::int64_t extents = 0;             // allocated to reach the fill
  std::int64_t normal_chunks_per_drive = 0;
  std::int64_t spare_chunks_per_drive = 0;
  std::vector<int> datapac;             // per drive, 1-based
  std::vector<std::int64_t> used_chunks;  // per drive
  // drives × drives, row-major, symmetric, zero diagonal: extents in which losing both
  // SSDs loses data.
  std::vector<std::int64_t> shared;

  std::int64_t shared_extents(int i, int j) const {
    return shared[static_cast<std::size_t>(i) * static_cast<std::size_t>(drives) + static_cast<std::size_t>(j)];
  }
  // SSDs whose loss together with SSD i loses data.
  int loss_partners(int i) const;
  // Mean of loss_partners over the SSDs.
  double mean_loss_partners() const;
};

// Fills one pool of both DataPacs of `system` with extents of `type` (RAID5 with
// `raid5_data_members` + 1 members, RAID10 with `raid10_pairs` pairs) until `fill` of the
// pool's normal chunks are in use, and returns the map. `fill` in (0, 1].
// Errors: kInvalidArgument for a type other than RAID5 or RAID10, a fill out of range, or a
// member count the system cannot place.
sim::Result<LossMap> build_loss_map(const config::SystemPreset& system, const config::CapacityParams& capacity,
                                    raid::RaidType type, double fill, int raid5_data_members = 4,
                                    int raid10_pairs = 4);

}  // namespace afasim::reliability
