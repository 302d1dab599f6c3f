// Thin provisioning against the extent allocator: allocation on first write, "no space" only
// for writes that need a new extent, TRIM giving whole extents back, and the pool's capacity
// figures agreeing with the allocator.
#include <doctest/doctest.h>

#include "tests/controller/raid_sim_harness.h"
#include "sim/units.h"

using namespace afasim;
using namespace afasim::testing;

namespace {


sim::Status run_io(SimArray& a, IoOp op, Id volume, std::int64_t offset, std::int64_t len) {
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(len), 0x5A);
  HostIo io;
  io.op = op;
  io.volume_id = volume;
  io.offset_bytes = offset;
  io.length_bytes = len;
  if (op == IoOp::kWrite) io.write_data = buf.data();
  if (op == IoOp::kRead) io.read_buffer = buf.data();
  sim::Status result = sim::unavailable("never completed");
  a.array->submit(io, [&](const IoCompletion& c) { result = c.status; });
  a.sim->run();
  return result;
}

// Pool figures must equal what the allocator holds.
void check_capacity_agrees(SimArray& a) {
  const auto cap = a.array->pool_capacity(1);
  const auto& dp = a.array->data_path();
  std::int64_t used_chunks = 0, normal_chunks = 0;
  for (int d = 0; d < dp.drive_count(); ++d) {
    const auto& slot = dp.allocator().drive(d);
    if (!slot.usable) continue;
    used_chunks += slot.used();
    normal_chunks += slot.normal_chunks;
  }
  CHECK(cap.raw_allocated_bytes == used_chunks * dp.allocator().chunk_bytes());
  CHECK(cap.raw_usable_bytes == normal_chunks * dp.allocator().chunk_bytes());
  std::int64_t allocated = 0;
  for (const auto& [id, v] : a.array->volumes()) allocated += dp.allocated_extents(id) * dp.extent_bytes(v.raid_type);
  CHECK(cap.allocated_bytes == allocated);
}

}  // namespace

TEST_CASE("a full pool refuses only writes that need a new extent; TRIM gives extents back") {
  SimArray a(1);
  const auto& dp = a.array->data_path();
  const std::int64_t ext = dp.extent_bytes(raid::RaidType::kRaid5);
  // A fixed RAID 5 volume takes all but three extents' worth of the pool.
  const auto cap0 = a.array->pool_capacity(1);
  const std::int64_t free5 = cap0.free_bytes.at(raid::RaidType::kRaid5);
  const Id big = a.add_volume("big", free5 - 3 * ext, raid::RaidType::kRaid5, Provisioning::kFixed);
  CHECK(a.array->pool_capacity(1).free_bytes.at(raid::RaidType::kRaid5) == 3 * ext);
  check_capacity_agrees(a);
  // The 80, 90 and 95 % thresholds were all crossed, each once.
  int threshold_events = 0;
  for (const auto& e : a.array->events(0, 100).items) threshold_events += e.category == "pool";
  CHECK(threshold_events >= 3);

  const Id thin = a.add_volume("thin", 16 * ext, raid::RaidType::kRaid5, Provisioning::kThin);
  for (int i = 0; i < 3; ++i) CHECK(run_io(a, IoOp::kWrite, thin, i * ext, 4096).is_ok());
  CHECK(dp.allocated_extents(thin) == 3);
  CHECK(a.array->pool_capacity(1).free_bytes.at(raid::RaidType::kRaid5) == 0);
  // A write into a fourth extent: no space, and nothing allocated.
  const sim::Status full = run_io(a, IoOp::kWrite, thin, 3 * ext, 4096);
  CHECK(full.code() == sim::Code::kNoSpace);
  CHECK(dp.allocated_extents(thin) == 3);
  // A write spanning an allocated and a new extent is refused whole.
  CHECK(run_io(a, IoOp::kWrite, thin, 3 * ext - 4096, 8192).code() == sim::Code::kNoSpace);
  // Overwrites of allocated extents, and reads of anything, keep working.
  CHECK(run_io(a, IoOp::kWrite, thin, ext + 8 * sim::kMiB, 64 * 1024).is_ok());
  CHECK(run_io(a, IoOp::kWrite, big, 0, 1 * sim::kMiB).is_ok());
  CHECK(run_io(a, IoOp::kRead, thin, 10 * ext, 4096).is_ok());
  CHECK(run_io(a, IoOp::kRead, thin, 0, 4096).is_ok());
  // A TRIM of part of an extent frees nothing; of a whole extent, frees it.
  CHECK(run_io(a, IoOp::kTrim, thin, 0, ext / 2).is_ok());
  CHECK(dp.allocated_extents(thin) == 3);
  CHECK(run_io(a, IoOp::kTrim, thin, ext, ext).is_ok());
  CHECK(dp.allocated_extents(thin) == 2);
  CHECK_FALSE(dp.is_allocated(thin, ext));
  CHECK(a.array->pool_capacity(1).free_bytes.at(raid::RaidType::kRaid5) == ext);
  // The freed extent takes the write that was refused.
  CHECK(run_io(a, IoOp::kWrite, thin, 3 * ext, 4096).is_ok());
  check_capacity_agrees(a);
  // The journal saw the extents come and go: a restart would map the same ones.
  std::int64_t persisted = 0;
  for (const auto& r : a.journal.snapshot().extents) persisted += r.volume_id == thin;
  CHECK(persisted == dp.allocated_extents(thin));
}

TEST_CASE("a trimmed extent reads as zeros; WRITE_ZEROES of whole thin extents unmaps them") {
  SimArray a(2);
  const Id v = a.add_volume("t", 256 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  auto& vol = a.vols[0];
  a.write(vol, 0, 256 * 1024);
  a.write(vol, 64 * sim::kMiB, 256 * 1024);
  a.sim->run();
  CHECK(a.array->data_path().allocated_extents(v) == 2);
  CHECK(run_io(a, IoOp::kWriteZeroes, v, 64 * sim::kMiB, 64 * sim::kMiB).is_ok());
  CHECK(a.array->data_path().allocated_extents(v) == 1);
  for (std::int64_t b = 64 * sim::kMiB / kBlock; b < 128 * sim::kMiB / kBlock; ++b) vol.last_writer[static_cast<std::size_t>(b)] = 0;
  // WRITE_ZEROES of part of an extent writes zeros there.
  CHECK(run_io(a, IoOp::kWriteZeroes, v, 4096, 8192).is_ok());
  vol.last_writer[1] = vol.last_writer[2] = 0;
  a.read_check(vol, 0, 1 * sim::kMiB);
  a.read_check(vol, 64 * sim::kMiB, 1 * sim::kMiB);
  a.sim->run();
  CHECK(a.read_errors == 0);
  CHECK(a.wrong_bytes == 0);
}

TEST_CASE("I/O outside the volume or of zero length is refused before anything happens") {
  SimArray a(3);
  const Id v = a.add_volume("t", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  CHECK(run_io(a, IoOp::kWrite, v, 64 * sim::kMiB - 4096, 8192).code() == sim::Code::kOutOfRange);
  CHECK(run_io(a, IoOp::kRead, v, -4096, 4096).code() == sim::Code::kOutOfRange);
  CHECK(run_io(a, IoOp::kRead, v, 0, 0).code() == sim::Code::kInvalidArgument);
  CHECK(run_io(a, IoOp::kRead, 999, 0, 4096).code() == sim::Code::kNotFound);
  CHECK(a.array->data_path().allocated_extents(v) == 0);
}
