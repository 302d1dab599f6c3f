#include <doctest/doctest.h>

#include "config/preset.h"
#include "pool/capacity.h"
#include "pool/extent_allocator.h"

using namespace afasim;

namespace {
const config::Catalog& catalog() {
  static const config::Catalog c = config::Catalog::embedded().value();
  return c;
}
}  // namespace

// The nine figures of the X-IO ISE 800 G3 series spec sheet's capacity table (decimal TB,
// one decimal): ISE 820 G3 6.4 / 2.7 / 4.3, ISE 850 G3 25.6 / 11.4 / 18.3,
// ISE 860 G3 51.2 / 22.9 / 36.6 (pre-RAID / RAID 10 / RAID 5).
TEST_CASE("one capacity model gives all nine figures of the ISE 800 G3 spec sheet") {
  struct Row {
    const char* system;
    double pre_raid_tb, raid10_tb, raid5_tb;
  };
  const Row rows[] = {{"ise-820-g3", 6.4, 2.7, 4.3},
                      {"ise-850-g3", 25.6, 11.4, 18.3},
                      {"ise-860-g3", 51.2, 22.9, 36.6}};
  const pool::CapacityModel model(catalog().capacity());
  for (const Row& row : rows) {
    INFO(row.system);
    const auto preset = catalog().system(row.system).value();
    const auto cap = model.system(preset);
    CHECK(pool::to_tb_rounded(cap.pre_raid_bytes) == doctest::Approx(row.pre_raid_tb));
    CHECK(pool::to_tb_rounded(cap.usable_raid10_bytes) == doctest::Approx(row.raid10_tb));
    CHECK(pool::to_tb_rounded(cap.usable_raid5_bytes) == doctest::Approx(row.raid5_tb));
    // The preset files carry the same table, with its source; they must agree with it.
    REQUIRE(preset.published_capacity.present);
    CHECK(preset.published_capacity.pre_raid_tb == doctest::Approx(row.pre_raid_tb));
    CHECK(preset.published_capacity.raid10_tb == doctest::Approx(row.raid10_tb));
    CHECK(preset.published_capacity.raid5_tb == doctest::Approx(row.raid5_tb));
  }
}

TEST_CASE("a 1.6 TB SSD's bytes are spent as docs/capacity.md says") {
  const pool::CapacityModel model(catalog().capacity());
  const auto d = model.drive(1'600'000'000'000);
  CHECK(d.pre_raid_bytes == 1'280'000'000'000);  // 80 % of nominal (spec sheet)
  CHECK(d.spare_bytes == 128'000'000'000);       // 10 % of pre-RAID
  CHECK(d.metadata_bytes == 8LL << 30);
  CHECK(d.raw_usable_bytes % (16LL << 20) == 0);
  CHECK(d.raw_usable_bytes <= d.pre_raid_bytes - d.spare_bytes - d.metadata_bytes);
  CHECK(d.pre_raid_bytes - d.spare_bytes - d.metadata_bytes - d.raw_usable_bytes < (16LL << 20));
}

TEST_CASE("raw and usable conversions round the safe way") {
  const pool::CapacityModel model(catalog().capacity());
  using raid::RaidType;
  CHECK(model.raw_from_usable(RaidType::kRaid10, 1000) == 2000);
  CHECK(model.raw_from_usable(RaidType::kRaid5, 4000) == 5000);
  CHECK(model.raw_from_usable(RaidType::kRaid5, 4001) == 5002);  // rounded up
  CHECK(model.usable_from_raw(RaidType::kRaid5, 5001) == 4000);  // rounded down
  CHECK(model.usable_from_raw(RaidType::kRaid0, 777) == 777);
  // A tiny SSD whose reserves exceed it has nothing usable, never a negative size.
  CHECK(model.drive(1'000'000'000).raw_usable_bytes == 0);
}

TEST_CASE("a RAID type the system cannot place shows no capacity (hostile round 16)") {
  const pool::CapacityModel model(catalog().capacity());
  auto preset = catalog().system("ise-860-g3").value();
  // The shipped geometry (docs/capacity.md, docs/raid.md): a RAID 5 extent is 4+1 chunks on 5
  // SSDs; a RAID 10 extent 4 mirror pairs, 4 SSDs in each of the two DataPacs.
  preset.datapacs.ssds_per_datapac = 2;  // 4 SSDs
  const auto four = model.system(preset);
  CHECK(four.raw_usable_bytes > 0);
  CHECK(four.usable_raid5_bytes == 0);
  CHECK(four.usable_raid10_bytes == 0);
  preset.datapacs.ssds_per_datapac = 3;  // 6 SSDs: RAID 5 fits, RAID 10 not (3 a DataPac)
  CHECK(model.system(preset).usable_raid5_bytes == model.system(preset).raw_usable_bytes * 4 / 5);
  CHECK(model.system(preset).usable_raid10_bytes == 0);
  preset.datapacs.ssds_per_datapac = 4;
  CHECK(model.system(preset).usable_raid10_bytes == model.system(preset).raw_usable_bytes / 2);
  preset.datapacs.count = 1;  // RAID 10 mirrors across DataPacs
  CHECK(model.system(preset).usable_raid10_bytes == 0);
  CHECK(model.system(preset).usable_raid5_bytes == 0);  // 4 SSDs
}

// Review 41: after drive failures free_bytes counted chunks, not where they were, so a fixed
// volume of the figure failed after seconds of work. placeable_extents is what the allocator
// can really place: checked here against the allocator itself, run until it refuses.
TEST_CASE("placeable extents: what the allocator places when the free chunks sit on too few SSDs") {
  const pool::CapacityModel model(catalog().capacity());
  const std::vector<int> datapacs{1, 1, 1, 1, 1, 2, 2, 2, 2, 2};
  const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (const raid::RaidType type : {raid::RaidType::kRaid10, raid::RaidType::kRaid5}) {
    pool::ExtentAllocator a(model, 20'000'000'000, datapacs);
    const std::int64_t per_drive = a.drive(0).free_normal_count;
    REQUIRE(per_drive > 100);
    // RAID 10: drives 0-2 of DataPac 1 nearly full (a side keeps 2 empty SSDs of the 4 an
    // extent needs); RAID 5: drives 0-5 (4 empty SSDs of 5). The rest empty.
    const bool raid10 = type == raid::RaidType::kRaid10;
    for (int d = 0; d < (raid10 ? 3 : 6); ++d)
      for (std::int64_t i = 0; i < per_drive - 10; ++i) REQUIRE(a.allocate_on(d).is_ok());
    const std::vector<int> side1{0, 1, 2, 3, 4}, side2{5, 6, 7, 8, 9};
    const std::int64_t placeable =
        raid10 ? std::min(a.placeable_extents(side1, 4), a.placeable_extents(side2, 4)) : a.placeable_extents(all, 5);
    // By chunks alone (what free_bytes counted), many more.
    const std::int64_t by_chunks = a.free_normal_chunks(all) / (raid10 ? 8 : 5);
    CAPTURE(placeable);
    CAPTURE(by_chunks);
    CHECK(placeable < by_chunks);
    std::int64_t placed = 0;
    while (a.allocate(type, 4, all).is_ok()) ++placed;  // 4 pairs, or 4 data + parity
    CHECK(placed == placeable);
  }
  pool::ExtentAllocator fresh(model, 20'000'000'000, datapacs);  // balanced: every chunk places
  CHECK(fresh.placeable_extents(all, 5) == fresh.free_normal_chunks(all) / 5);
  const std::vector<int> four{0, 1, 2, 5};
  CHECK(fresh.placeable_extents(four, 5) == 0);  // fewer SSDs than members
}
