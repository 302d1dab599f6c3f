// perf::plan_row_destage and perf::WriteCoalescer: full-stripe, read-modify-write and
// reconstruct-write, and rows completed by sequential writes.
#include <doctest/doctest.h>

#include "perf/destage.h"

using namespace afasim;

namespace {
// RAID 5 4+1 with 64 KiB strips (docs/raid.md).
perf::RowGeometry raid5() { return perf::RowGeometry{perf::RowLayout::kRaid5, 4, 64 << 10}; }
}  // namespace

TEST_CASE("RAID 5 full stripe: five strip writes, no reads, parity XORed from the four data strips") {
  const auto d = perf::plan_row_destage(raid5(), 4, 256 << 10);
  CHECK(d.full_stripe);
  CHECK(d.strip_reads == 0);
  CHECK(d.strip_writes == 5);
  CHECK(d.write_bytes == 320 << 10);
  CHECK(d.xor_bytes == 256 << 10);
}

TEST_CASE("RAID 5 4K random write: read-modify-write, two reads and two writes of 4 KiB") {
  const auto d = perf::plan_row_destage(raid5(), 1, 4096);
  CHECK_FALSE(d.full_stripe);
  CHECK(d.strip_reads == 2);
  CHECK(d.strip_writes == 2);
  CHECK(d.read_bytes == 8192);
  CHECK(d.write_bytes == 8192);
}

TEST_CASE("RAID 5 three of four strips dirty: reconstruct-write reads the one clean strip") {
  const auto d = perf::plan_row_destage(raid5(), 3, 3 * (64 << 10) - 4096);
  CHECK(d.strip_reads == 1);
  CHECK(d.strip_writes == 4);
}

TEST_CASE("RAID 10: every dirty strip is written twice, nothing read") {
  const auto d = perf::plan_row_destage(perf::RowGeometry{perf::RowLayout::kRaid10, 1, 64 << 10}, 1, 4096);
  CHECK(d.strip_reads == 0);
  CHECK(d.strip_writes == 2);
  CHECK(d.write_bytes == 8192);
}

TEST_CASE("WriteCoalescer: two sequential 128 KiB writes complete one RAID 5 row") {
  perf::WriteCoalescer c(raid5());
  std::int64_t added = 0;
  CHECK(c.write(7, 0, 128 << 10, &added).empty());
  CHECK(added == 128 << 10);
  const auto full = c.write(7, 128 << 10, 128 << 10);
  REQUIRE(full.size() == 1);
  CHECK(full[0] == 0);
  CHECK(c.partial_rows() == 0);
}

TEST_CASE("WriteCoalescer: partial rows come back oldest first, with their strips and bytes") {
  perf::WriteCoalescer c(raid5());
  (void)c.write(1, 5 * (256 << 10), 4096);               // row 5, strip 0
  (void)c.write(2, 9 * (256 << 10) + (64 << 10), 8192);  // row 9, strip 1
  (void)c.write(1, 5 * (256 << 10) + (192 << 10), 4096);  // row 5 again, strip 3
  std::uint64_t vol = 0;
  std::int64_t row = 0, bytes = 0;
  int strips = 0;
  REQUIRE(c.take_oldest(&vol, &row, &strips, &bytes));
  CHECK(vol == 1);
  CHECK(row == 5);
  CHECK(strips == 2);
  CHECK(bytes == 8192);
  REQUIRE(c.take_oldest(&vol, &row, &strips, &bytes));
  CHECK(vol == 2);
  CHECK(row == 9);
  CHECK_FALSE(c.take_oldest(&vol, &row, &strips, &bytes));
}
