// A payload write that fails because the host's file system is full (ENOSPC) fails the host
// I/O with kNoSpace and raises one critical event; the next successful write raises the
// all-clear (issue 14 item 6). The payload stores are swapped for ones that can be told to
// be full (DataPathOptions::wrap_payload, the data path's Env seam).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>

#include "datapac/payload.h"
#include "tests/controller/raid_sim_harness.h"

using namespace afasim;
using namespace afasim::testing;

namespace {

// A memory store whose writes fail as a full file system's do while `full` is set.
class FullableStore : public datapac::PayloadStore {
 public:
  FullableStore(std::unique_ptr<datapac::PayloadStore> inner, std::shared_ptr<std::atomic<bool>> full)
      : PayloadStore(inner->capacity_bytes()), inner_(std::move(inner)), full_(std::move(full)) {}
  datapac::PayloadKind kind() const override { return inner_->kind(); }
  sim::Status write(std::int64_t offset, std::span<const std::uint8_t> data) override {
    if (*full_) return sim::no_space("ssd.payload: write at " + std::to_string(offset) + ": No space left on device");
    return inner_->write(offset, data);
  }
  sim::Status read(std::int64_t offset, std::span<std::uint8_t> out) const override { return inner_->read(offset, out); }
  sim::Status trim(std::int64_t offset, std::int64_t length) override { return inner_->trim(offset, length); }
  bool may_hold_data(std::int64_t offset, std::int64_t length) const override { return inner_->may_hold_data(offset, length); }
  sim::Status flush() override { return inner_->flush(); }
  sim::Status erase_all() override { return inner_->erase_all(); }

 private:
  std::unique_ptr<datapac::PayloadStore> inner_;
  std::shared_ptr<std::atomic<bool>> full_;
};

// Memory payload whose writes fail while `full` is set.
DataPathOptions fullable_payload(std::shared_ptr<std::atomic<bool>> full) {
  DataPathOptions dpo;
  dpo.payload = datapac::PayloadKind::kMemory;
  dpo.wrap_payload = [full](std::unique_ptr<datapac::PayloadStore> inner, const std::string&) {
    return std::unique_ptr<datapac::PayloadStore>(std::make_unique<FullableStore>(std::move(inner), full));
  };
  return dpo;
}

// A FLUSH of volume `v`, run for a simulated second; its status.
sim::Status flush_volume(SimArray& a, Id v) {
  HostIo io;
  io.op = IoOp::kFlush;
  io.volume_id = v;
  sim::Status result = sim::unavailable("never completed");
  a.array->submit(io, [&](const IoCompletion& c) { result = c.status; });
  a.sim->run_until(a.sim->now() + sim::kSecond);
  return result;
}

// 1 MiB of 64 KiB writes into `vol` with the host disk full: cached, acknowledged.
void cache_writes_on_full_disk(SimArray& a, SimArray::Vol& vol, std::atomic<bool>& full) {
  full = true;
  for (std::int64_t off = 0; off < 1 << 20; off += 64 << 10) a.write(vol, off, 64 << 10);
  a.sim->run_until(a.sim->now() + sim::kSecond);
}

// A 4 KiB FUA write (straight to the SSDs' payload, not only into the cache) at `offset`;
// `done` gets its status. `buf` holds its data until it completes.
void submit_fua_write(SimArray& a, Id volume, std::int64_t offset, const std::vector<std::uint8_t>& buf,
                      IoCallback done) {
  HostIo io;
  io.op = IoOp::kWrite;
  io.volume_id = volume;
  io.offset_bytes = offset;
  io.length_bytes = 4096;
  io.fua = true;
  io.write_data = buf.data();
  a.array->submit(io, std::move(done));
}

sim::Status write_through(SimArray& a, Id volume, std::int64_t offset) {
  const std::vector<std::uint8_t> buf(4096, 0x5A);
  sim::Status result = sim::unavailable("never completed");
  submit_fua_write(a, volume, offset, buf, [&](const IoCompletion& c) { result = c.status; });
  a.sim->run_until(a.sim->now() + sim::kSecond);
  return result;
}

int events_with(const Array& a, const std::string& part) {
  int n = 0;
  for (const auto& e : a.events(0, 1000).items) n += e.message.find(part) != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("a full host file system fails writes with kNoSpace and raises one event per episode") {
  auto full = std::make_shared<std::atomic<bool>>(false);
  const DataPathOptions dpo = fullable_payload(full);
  SimArray a(3, dpo);
  const Id v = a.add_volume("v", 1 << 30, raid::RaidType::kRaid10, Provisioning::kThin);
  REQUIRE(write_through(a, v, 0).is_ok());
  *full = true;
  const sim::Status failed = write_through(a, v, 4096);
  CHECK(failed.code() == sim::Code::kNoSpace);
  CHECK(write_through(a, v, 8192).code() == sim::Code::kNoSpace);
  CHECK(events_with(*a.array, "host file system full") == 1);  // once, not once per write
  *full = false;
  CHECK(write_through(a, v, 12288).is_ok());
  CHECK(events_with(*a.array, "host file system has space again") == 1);
}

TEST_CASE("a nearly full host disk, writes failing and succeeding in turn, raises one episode, not one per turn") {
  // Hostile round 25b: "full" and "has space again" alternated five times a simulated second.
  auto full = std::make_shared<std::atomic<bool>>(false);
  const DataPathOptions dpo = fullable_payload(full);
  SimArray a(3, dpo);
  const Id v = a.add_volume("v", 1 << 30, raid::RaidType::kRaid10, Provisioning::kThin);
  REQUIRE(write_through(a, v, 0).is_ok());
  const std::vector<std::uint8_t> buf(4096, 0x5A);
  for (int turn = 0; turn < 10; ++turn) {
    *full = turn % 2 == 0;
    submit_fua_write(a, v, 4096 * (turn + 1), buf, [](const IoCompletion&) {});
    a.sim->run_until(a.sim->now() + 5 * sim::kMillisecond);  // each turn a few ms after the last
  }
  CHECK(events_with(*a.array, "host file system full") == 1);
  CHECK(events_with(*a.array, "host file system has space again") == 0);
  *full = false;
  CHECK(write_through(a, v, 1 << 20).is_ok());  // 100 ms and more after the last ENOSPC
  CHECK(write_through(a, v, 2 << 20).is_ok());
  CHECK(events_with(*a.array, "host file system has space again") == 1);
}

TEST_CASE("a destage that the full host disk fails keeps its blocks dirty, fails the FLUSH, and retries") {
  // Hostile round 17: the failed destage marked the blocks clean and the FLUSH replied
  // success; the acknowledged writes read as zeros after the next start.
  auto full = std::make_shared<std::atomic<bool>>(false);
  const DataPathOptions dpo = fullable_payload(full);
  SimArray a(5, dpo);
  const Id v = a.add_volume("v", 1 << 30, raid::RaidType::kRaid10, Provisioning::kFixed);
  auto& vol = a.vols[0];
  cache_writes_on_full_disk(a, vol, *full);
  CHECK(a.write_errors == 0);
  CHECK(flush_volume(a, v).code() == sim::Code::kNoSpace);
  CHECK(events_with(*a.array, "destage failed") == 1);  // once per episode, not per destage
  // The blocks are still in the cache: reads give the acknowledged data, not the SSDs' zeros.
  a.read_errors = 0;
  a.read_check(vol, 0, 1 << 20);
  a.sim->run_until(a.sim->now() + sim::kSecond);
  CHECK(a.read_errors == 0);
  CHECK(a.wrong_bytes == 0);
  // Space again: the retry (once a second) puts them on the SSDs, and the FLUSH succeeds.
  *full = false;
  a.sim->run_until(a.sim->now() + 2 * sim::kSecond);
  CHECK(flush_volume(a, v).is_ok());
  CHECK(events_with(*a.array, "destage succeeds again") == 1);
}

TEST_CASE("a power cycle on a full host disk keeps the vaulted writes dirty in the cache until they can be written") {
  // Hostile round 18: the vault replay dropped every block whose payload write failed (112 of
  // 128 acknowledged 64 KiB writes read old data), and the volume's FLUSH failed for ever after.
  auto full = std::make_shared<std::atomic<bool>>(false);
  const DataPathOptions dpo = fullable_payload(full);
  SimArray a(7, dpo);
  const Id v = a.add_volume("v", 1 << 30, raid::RaidType::kRaid10, Provisioning::kFixed);
  auto& vol = a.vols[0];
  cache_writes_on_full_disk(a, vol, *full);
  REQUIRE(a.write_errors == 0);
  REQUIRE(a.array->inject_fault({"power_loss"}).is_ok());
  a.sim->run_until(a.sim->now() + 5 * sim::kSecond);
  REQUIRE(a.array->inject_fault({"power_restore"}).is_ok());
  a.sim->run_until(a.sim->now() + 30 * sim::kSecond);  // booted; the replay failed on the full disk
  CHECK(events_with(*a.array, "vault replay of a block failed") == 1);  // once, not per block
  a.read_check(vol, 0, 1 << 20);
  a.sim->run_until(a.sim->now() + sim::kSecond);
  CHECK(a.read_errors == 0);
  CHECK(a.wrong_bytes == 0);  // the cache still holds them
  CHECK(flush_volume(a, v).code() == sim::Code::kNoSpace);
  *full = false;
  a.sim->run_until(a.sim->now() + 2 * sim::kSecond);
  CHECK(flush_volume(a, v).is_ok());  // written by the retry: the FLUSH succeeds again
  CHECK(a.array->data_path().dirty_bytes() == 0);
  a.read_check(vol, 0, 1 << 20);
  a.sim->run_until(a.sim->now() + sim::kSecond);
  CHECK(a.wrong_bytes == 0);
}

TEST_CASE("a WRITE_ZEROES of whole thin extents whose release cannot be committed writes the zeros") {
  // Hostile round 18: on a full host disk the unmap's commit failed, the WRITE_ZEROES answered
  // success and the extent kept its old bytes (also after a restart).
  DataPathOptions dpo;
  dpo.payload = datapac::PayloadKind::kMemory;
  SimArray a(11, dpo);
  const Id v = a.add_volume("v", 1 << 30, raid::RaidType::kRaid10, Provisioning::kThin);
  REQUIRE(write_through(a, v, 0).is_ok());  // 0x5A in the volume's first extent
  const auto submit = [&](HostIo io) {
    io.volume_id = v;
    sim::Status result = sim::unavailable("never completed");
    a.array->submit(io, [&](const IoCompletion& c) { result = c.status; });
    a.sim->run_until(a.sim->now() + sim::kSecond);
    return result;
  };
  a.journal.fail_next_commits(1 << 30);  // the thin map's release cannot be committed
  HostIo zeroes;
  zeroes.op = IoOp::kWriteZeroes;
  zeroes.length_bytes = 1 << 30;  // every extent of the volume, whole
  CHECK(submit(zeroes).is_ok());
  a.journal.fail_next_commits(0);
  std::vector<std::uint8_t> back(4096, 0xEE);
  HostIo read;
  read.op = IoOp::kRead;
  read.length_bytes = 4096;
  read.read_buffer = back.data();
  REQUIRE(submit(read).is_ok());
  CHECK(std::count(back.begin(), back.end(), 0) == 4096);  // it read 0x5A
}

// Review 31 (the write cache that keeps no bytes for clean blocks, and the rebuild): each of
// these lost or showed wrong bytes before its fix.
namespace {
std::vector<std::uint8_t> read_back(SimArray& a, Id v, std::int64_t off, std::int64_t len, sim::Status* st) {
  std::vector<std::uint8_t> back(static_cast<std::size_t>(len), 0xEE);
  HostIo io;
  io.op = IoOp::kRead;
  io.volume_id = v;
  io.offset_bytes = off;
  io.length_bytes = len;
  io.read_buffer = back.data();
  sim::Status result = sim::unavailable("never completed");
  a.array->submit(io, [&](const IoCompletion& c) { result = c.status; });
  a.sim->run_until(a.sim->now() + sim::kSecond);
  if (st) *st = result;
  return back;
}
sim::Status write_at(SimArray& a, Id v, std::int64_t off, std::int64_t len, std::uint8_t byte, bool fua) {
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(len), byte);
  sim::Status result = sim::unavailable("never completed");
  a.array->submit(write_io(v, off, len, buf.data(), fua), [&](const IoCompletion& c) { result = c.status; });
  a.sim->run_until(a.sim->now() + 10 * sim::kMillisecond);
  return result;
}
}  // namespace

TEST_CASE("a write-through that fails after merging a dirty block keeps the block's acknowledged bytes") {
  auto full = std::make_shared<std::atomic<bool>>(false);
  SimArray a(5, fullable_payload(full));
  const Id v = a.add_volume("v", 1 << 30, raid::RaidType::kRaid10, Provisioning::kFixed);
  REQUIRE(write_at(a, v, 0, 4096, 0xAB, false).is_ok());  // write-back, acknowledged, dirty
  REQUIRE(a.array->data_path().dirty_bytes() == 4096);
  *full = true;
  CHECK(write_at(a, v, 0, 512, 0x5A, true).code() == sim::Code::kNoSpace);  // FUA, partial block
  *full = false;
  INFO("dirty bytes after the failed FUA: " << a.array->data_path().dirty_bytes());
  const sim::Status flushed = flush_volume(a, v);
  INFO("FLUSH: " << flushed.to_string());
  sim::Status st;
  auto back = read_back(a, v, 0, 4096, &st);
  REQUIRE(st.is_ok());
  // Bytes 512..4095 were acknowledged (0xAB) and the FUA write never touched them.
  const auto kept = std::count(back.begin() + 512, back.end(), 0xAB);
  INFO("acknowledged bytes read back: " << kept << " of 3584 (first byte there: " << int(back[512]) << ")");
  CHECK(kept == 3584);
}

TEST_CASE("a chunk whose rebuild failed goes back to the pool trimmed: the next extent rebuilt onto it reads no one else's bytes") {
  SimArray a(5);
  constexpr int kSmall = 8;
  std::vector<Id> smalls;
  for (int i = 0; i < kSmall; ++i)
    smalls.push_back(a.add_volume("small" + std::to_string(i), 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kFixed));
  const Id big = a.add_volume("big", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kFixed);
  for (int i = 0; i < kSmall; ++i) a.write(a.vols[static_cast<std::size_t>(i)], 0, 64 << 10);
  a.write(a.vols[kSmall], 0, 4 << 20);
  a.sim->run();
  a.array->destage_all();
  a.sim->run();
  const std::int64_t chunk = a.array->capacity_model().params().chunk_bytes;
  const auto rb = a.array->data_path().extent_records(big).at(0);
  // The drive of big's extent that most small extents share.
  int shared = -1, best = 0;
  for (const auto& n : rb.members) {
    int count = 0;
    for (Id s : smalls) {
      const auto rec = a.array->data_path().extent_records(s).at(0);
      for (const auto& m : rec.members) count += m.drive == n.drive;
    }
    if (count > best) best = count, shared = n.drive;
  }
  INFO("drive " << shared + 1 << " holds members of big and of " << best << " small extents");
  REQUIRE(shared >= 0);
  constexpr std::int64_t kStripR = 64 << 10;
  for (const auto& n : rb.members)
    if (n.drive != shared) {
      FaultSpec f{"corrupt_block", n.drive + 1};
      f.block_offset_bytes = n.offset_bytes(chunk) + 8 * kStripR;
      REQUIRE(a.array->inject_fault(f).is_ok());
      break;
    }
  REQUIRE(a.array->inject_fault({"drive_fail", shared + 1}).is_ok());
  a.sim->run();
  for (const auto& e : a.array->events(0, 100000).items)
    if (e.category == "rebuild") INFO(e.message);
  a.read_errors = a.wrong_bytes = 0;
  for (int i = 0; i < kSmall; ++i)
    for (std::int64_t off = 0; off < 4 << 20; off += 64 << 10) a.read_check(a.vols[static_cast<std::size_t>(i)], off, 64 << 10);
  a.sim->run();
  INFO("small volumes: read errors " << a.read_errors << ", 64 KiB reads with wrong bytes " << a.wrong_bytes);
  CHECK(a.wrong_bytes == 0);
  CHECK(a.invariant_report() == "");
}

TEST_CASE("a write whose fill fails leaves none of its new blocks cached: nothing unwritten is read back") {
  SimArray a(5);
  const Id v = a.add_volume("r10", 64 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kFixed);
  REQUIRE(write_at(a, v, 0, 4096, 0xCD, true).is_ok());    // block 0 on the SSDs, not cached
  REQUIRE(write_at(a, v, 4096, 4096, 0xAB, false).is_ok()); // block 1 cached
  a.array->destage_all();
  a.sim->run();                                              // block 1 clean, its bytes dropped
  const std::int64_t chunk = a.array->capacity_model().params().chunk_bytes;
  const auto rec = a.array->data_path().extent_records(v).at(0);
  for (const auto& m : rec.members) {
    FaultSpec f{"corrupt_block", m.drive + 1};
    f.block_offset_bytes = m.offset_bytes(chunk) + 4096;     // block 1 unreadable on every member
    (void)a.array->inject_fault(f);
  }
  // Block 0 whole, block 1's first 512 bytes: block 0 enters the cache, block 1's refill fails.
  const sim::Status w = write_at(a, v, 0, 4096 + 512, 0x77, false);
  INFO("write-back [0, 4608): " << w.to_string());
  sim::Status st;
  auto back = read_back(a, v, 0, 4096, &st);
  REQUIRE(st.is_ok());
  INFO("block 0 reads 0xCD x" << std::count(back.begin(), back.end(), 0xCD) << ", 0x77 x"
          << std::count(back.begin(), back.end(), 0x77) << ", 0 x" << std::count(back.begin(), back.end(), 0));
  CHECK(std::count(back.begin(), back.end(), 0) == 0);  // old (0xCD) or new (0x77), never zeros
  // A later 512-byte write-back to block 0, destaged: the zeros reach the SSDs.
  REQUIRE(write_at(a, v, 0, 512, 0x12, false).is_ok());
  a.array->destage_all();
  a.sim->run();
  back = read_back(a, v, 512, 512, &st);
  REQUIRE(st.is_ok());
  INFO("after a 512-byte write and destage, block 0 bytes 512..1023 hold 0 x" << std::count(back.begin(), back.end(), 0));
  CHECK(std::count(back.begin(), back.end(), 0) == 0);
}
