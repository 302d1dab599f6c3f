// controller::ArraySnapshot — the array's state as plain immutable values, taken on the model
// thread (Array::snapshot()) and published as shared_ptr<const ArraySnapshot>: another
// thread (an API view, a metrics exporter) reads it without touching the model. Nothing in
// it points into the model.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "controller/controller_pair.h"
#include "controller/extent_mover.h"
#include "controller/objects.h"
#include "controller/rebuilder.h"
#include "controller/wear_leveler.h"
#include "raid/engine.h"
#include "raid/scrub.h"
#include "sim/time.h"

namespace afasim::controller {

// Capacity of one pool (Swordfish words, DESIGN.md). Bytes.
struct PoolCapacity {
  std::int64_t pre_raid_bytes = 0;       // Σ SSDs' pre-RAID bytes
  std::int64_t raw_usable_bytes = 0;     // Σ SSDs' raw usable bytes (docs/capacity.md)
  std::int64_t raw_allocated_bytes = 0;  // SSD space held by allocated extents, RAID included
  std::int64_t raw_free_bytes = 0;       // raw_usable − raw_allocated
  std::int64_t provisioned_bytes = 0;    // Σ volumes' capacity_bytes (thin and fixed)
  std::int64_t allocated_bytes = 0;      // Σ volumes' allocated extents × extent_bytes
  // What raw_usable / raw_free hold for each RAID type this pool offers.
  std::map<raid::RaidType, std::int64_t> usable_bytes;
  std::map<raid::RaidType, std::int64_t> free_bytes;
};

// One volume's state in the data path.
struct VolumeView {
  Id id = 0;
  VolumeState state = VolumeState::kOnline;  // online, degraded, failed
  Id owner_controller = 0;                   // 0 while none owns it (takeover pending, array off)
  std::int64_t allocated_bytes = 0;          // allocated extents × extent bytes
  std::int64_t read_ops = 0, write_ops = 0, other_ops = 0, errors = 0;
  std::int64_t read_bytes = 0, write_bytes = 0;
};

struct ArraySnapshot {
  sim::Time time_ns = 0;  // simulated time it was taken
  std::vector<ControllerInfo> controllers;
  PowerStatus power;
  std::vector<DriveInfo> drives;
  std::vector<DriveWear> drive_wear;  // by drive index
  std::map<Id, PoolCapacity> pools;
  std::vector<VolumeView> volumes;    // by id
  RebuildStatus rebuild;
  raid::ScrubStatus scrub;
  raid::EngineStats raid;
  ExtentMoveStats moves;
  WearSummary wear;
  std::int64_t dirty_bytes = 0;
};

}  // namespace afasim::controller
