// The background scrub (docs/raid.md "Scrub") over seeds, with payload: blocks corrupted at
// random (media errors: reads of them fail until rewritten), some in pairs that defeat the
// redundancy. The scrub must repair every block redundancy covers, report the others, and a
// read-back afterwards must return either the right bytes or an error, never wrong bytes.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "perf/calibration.h"
#include "tests/controller/raid_sim_harness.h"
#include "sim/units.h"
#include "tests/seed_count.h"

using namespace afasim;
using namespace afasim::testing;

namespace {

constexpr std::int64_t kStrip = 64 << 10;  // DataPathOptions::strip_bytes
constexpr std::int64_t kMediaBlock = raid::DriveMembers::kMediaBlockBytes;

// A corrupted block: extent (volume), member, row, 4 KiB column within the strip.
struct Spot {
  std::size_t volume;  // index into SimArray::vols
  int member;
  std::int64_t row;
  std::int64_t column;
  auto key() const { return std::tuple(volume, row, column, member); }
  bool operator<(const Spot& o) const { return key() < o.key(); }
};

// What the scrub should find: per (volume, row, column), the members corrupted there.
struct Expectation {
  std::int64_t covered = 0;    // blocks redundancy covers (one per RAID5 column / mirror pair)
  std::int64_t uncovered = 0;  // blocks beyond it
  std::set<std::int64_t> lost_host_blocks;  // per volume index × 2^40 + host 4 KiB block
};

Expectation expect(const SimArray& a, const std::set<Spot>& spots, const std::vector<raid::RaidType>& types) {
  std::map<std::tuple<std::size_t, std::int64_t, std::int64_t>, std::set<int>> columns;
  for (const Spot& s : spots) columns[{s.volume, s.row, s.column}].insert(s.member);
  Expectation x;
  const std::int64_t chunk = a.array->capacity_model().params().chunk_bytes;
  for (const auto& [where, members] : columns) {
    const auto [vol, row, column] = where;
    const raid::RaidType type = types[vol];
    // Host block of member m at this row and column, or -1 for a parity block.
    auto host_block = [&](int m) -> std::int64_t {
      if (type == raid::RaidType::kRaid10) return ((row * 4 + m / 2) * kStrip + column * kMediaBlock) / kBlock;
      const raid::Layout l = raid::Layout::raid5(4, kStrip, chunk);
      for (int j = 0; j < 4; ++j)
        if (l.data_member(row, j) == m) return ((row * 4 + j) * kStrip + column * kMediaBlock) / kBlock;
      return -1;
    };
    std::vector<std::vector<int>> groups;  // members that cover each other
    if (type == raid::RaidType::kRaid5) groups.push_back({members.begin(), members.end()});
    else
      for (int m : members) {
        if (m % 2 == 1 && members.count(m - 1)) continue;
        groups.push_back(members.count(m ^ 1) ? std::vector<int>{m & ~1, m | 1} : std::vector<int>{m});
      }
    for (const auto& g : groups) {
      if (g.size() == 1) {
        ++x.covered;
        continue;
      }
      x.uncovered += static_cast<std::int64_t>(g.size());
      for (int m : g)
        if (const std::int64_t b = host_block(m); b >= 0) x.lost_host_blocks.insert(static_cast<std::int64_t>(vol) << 40 | b);
    }
  }
  return x;
}

void scrub_sweep(std::uint64_t seed) {
  SimArray a(seed);
  sim::Rng rng(seed, "test.scrub");
  const std::vector<raid::RaidType> types = {raid::RaidType::kRaid5, raid::RaidType::kRaid10};
  a.add_volume("r5", 64 * sim::kMiB, types[0], Provisioning::kFixed);   // one extent each
  a.add_volume("r10", 64 * sim::kMiB, types[1], Provisioning::kFixed);
  for (auto& v : a.vols)
    for (std::int64_t off = 0; off < v.bytes; off += sim::kMiB) a.write(v, off, sim::kMiB);
  a.sim->run();
  a.array->destage_all();
  a.sim->run();

  // Corrupt 1..8 blocks, a third of them with a partner in the same column (another RAID5
  // member, or the mirror) that redundancy cannot cover.
  std::set<Spot> spots;
  const int n = 1 + static_cast<int>(rng.uniform(8));
  for (int i = 0; i < n; ++i) {
    const std::size_t vol = rng.uniform(2);
    Spot s{vol, static_cast<int>(rng.uniform(types[vol] == raid::RaidType::kRaid5 ? 5 : 8)),
           static_cast<std::int64_t>(rng.uniform(256)), static_cast<std::int64_t>(rng.uniform(kStrip / kMediaBlock))};
    spots.insert(s);
    if (rng.bernoulli(1.0 / 3)) {
      Spot p = s;
      p.member = types[vol] == raid::RaidType::kRaid5 ? (s.member + 1 + static_cast<int>(rng.uniform(4))) % 5 : s.member ^ 1;
      spots.insert(p);
    }
  }
  const std::int64_t chunk = a.array->capacity_model().params().chunk_bytes;
  for (const Spot& s : spots) {
    const auto record = a.array->data_path().extent_records(a.vols[s.volume].id).at(0);
    const raid::ChunkAddr c = record.members[static_cast<std::size_t>(s.member)];
    FaultSpec f{"corrupt_block", c.drive + 1};
    f.block_offset_bytes = c.offset_bytes(chunk) + s.row * kStrip + s.column * kMediaBlock;
    REQUIRE(a.array->inject_fault(f).is_ok());
  }
  const Expectation x = expect(a, spots, types);

  raid::ScrubOptions scrub;
  scrub.enabled = true;
  scrub.bytes_per_second = 1'000'000'000;
  REQUIRE(a.array->set_scrub_options(scrub).is_ok());
  const sim::Time deadline = a.sim->now() + 60 * sim::kSecond;
  while (a.array->data_path().scrub_status().passes_completed == 0 && a.sim->now() < deadline)
    a.sim->run_until(a.sim->now() + 100 * sim::kMillisecond);
  const raid::ScrubStatus st = a.array->data_path().scrub_status();
  scrub.enabled = false;
  REQUIRE(a.array->set_scrub_options(scrub).is_ok());

  INFO("replay with seed " << seed << "; " << spots.size() << " corrupted blocks, " << x.covered << " covered");
  REQUIRE(st.passes_completed == 1);
  CHECK(st.media_errors == x.covered + x.uncovered);
  CHECK(st.repaired == x.covered);
  CHECK(st.unrecoverable == x.uncovered);
  CHECK(st.mismatches == 0);

  // Read back every block: the repaired ones read without any read repair (the scrub
  // rewrote them); the lost ones fail; no byte is ever wrong.
  const std::int64_t repairs_before = a.array->data_path().raid_stats().read_repairs;
  std::int64_t failed_blocks = 0;
  for (std::size_t vol = 0; vol < a.vols.size(); ++vol)
    for (std::int64_t off = 0; off < a.vols[vol].bytes; off += sim::kMiB) {
      std::int64_t errors = a.read_errors;
      a.read_check(a.vols[vol], off, sim::kMiB);
      a.sim->run();
      if (a.read_errors == errors) continue;
      for (std::int64_t b = off / kBlock; b < (off + sim::kMiB) / kBlock; ++b) {  // which blocks
        errors = a.read_errors;
        a.read_check(a.vols[vol], b * kBlock, kBlock);
        a.sim->run();
        if (a.read_errors > errors) {
          ++failed_blocks;
          CHECK(x.lost_host_blocks.count(static_cast<std::int64_t>(vol) << 40 | b) == 1);
        }
      }
    }
  CHECK(failed_blocks == static_cast<std::int64_t>(x.lost_host_blocks.size()));
  CHECK(a.wrong_bytes == 0);
  CHECK(a.array->data_path().raid_stats().read_repairs == repairs_before);
  CHECK(a.invariant_report() == "");
}

}  // namespace

TEST_CASE("scrub over seeds: every corrupted block redundancy covers is repaired, the rest reported, never wrong data") {
  const int seeds = seed_count(12);
  for (int s = 1; s <= seeds; ++s) scrub_sweep(static_cast<std::uint64_t>(s));
}

namespace {

// A 64 MiB fixed RAID 5 volume whose first MiB is written and destaged (on the SSDs).
Id destaged_r5(SimArray& a) {
  const Id r5 = a.add_volume("r5", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kFixed);
  a.write(a.vols[0], 0, sim::kMiB);
  a.sim->run();
  a.array->destage_all();
  a.sim->run();
  return r5;
}

// Where data strip `k` of row 0 of the volume's first extent lives.
raid::ChunkAddr row0_strip(SimArray& a, Id vol, int k) {
  const auto record = a.array->data_path().extent_records(vol).at(0);
  const raid::Layout l = raid::Layout::raid5(4, kStrip, a.array->capacity_model().params().chunk_bytes);
  return record.members[static_cast<std::size_t>(l.data_member(0, k))];
}

// Makes the block of host offset 8 KiB unreadable: data strip 0 of row 0, 8 KiB in.
void corrupt_8k(SimArray& a, Id vol) {
  const raid::ChunkAddr c = row0_strip(a, vol, 0);
  FaultSpec f{"corrupt_block", c.drive + 1};
  f.block_offset_bytes = c.offset_bytes(a.array->capacity_model().params().chunk_bytes) + 8192;
  REQUIRE(a.array->inject_fault(f).is_ok());
}

}  // namespace

TEST_CASE("a host read of a corrupted block is served from redundancy and repairs it") {
  SimArray a(5);
  corrupt_8k(a, destaged_r5(a));
  a.read_check(a.vols[0], 0, 64 * 1024);
  a.sim->run();
  CHECK(a.read_errors == 0);
  CHECK(a.wrong_bytes == 0);
  CHECK(a.array->data_path().raid_stats().read_repairs == 1);
  // Repaired: a second read needs no reconstruction.
  a.read_check(a.vols[0], 0, 64 * 1024);
  a.sim->run();
  CHECK(a.array->data_path().raid_stats().read_repairs == 1);
  CHECK(a.wrong_bytes == 0);
}

TEST_CASE("a rebuild that cannot read a survivor is reported incomplete, not complete") {
  // Hostile round 31b: a RAID 5 member's drive failed while another member held an
  // unreadable block; the rebuild's one chunk failed ("rebuild of a chunk failed: ...") and
  // the rebuild then said "complete: 0.02 GB in 0.0 s, 391 MB/s", the volume still degraded.
  SimArray a(5);
  const Id r5 = destaged_r5(a);
  corrupt_8k(a, r5);
  const int lost = row0_strip(a, r5, 1).drive;
  REQUIRE(a.array->inject_fault({"drive_fail", lost + 1}).is_ok());
  a.sim->run();
  std::vector<std::string> rebuild;
  for (const auto& e : a.array->events(0, 100000).items)
    if (e.category == "rebuild" && e.object == "drive/" + std::to_string(lost + 1)) rebuild.push_back(e.message);
  // The rebuild's last word: "complete: ...", "ended: ..." or "incomplete: ...".
  std::string last;
  for (const std::string& m : rebuild)
    if (m.find(" complete: ") != std::string::npos || m.find(" incomplete: ") != std::string::npos ||
        m.find(" ended: ") != std::string::npos)
      last = m;
  CAPTURE(last);
  CHECK(last.find("rebuild of drive " + std::to_string(lost + 1) + " incomplete: 0.00 GB rebuilt, 0.02 GB could not be "
                  "reconstructed (a surviving SSD could not be read); those volumes stay degraded") == 0);
  CHECK(a.array->volume_state(r5) == VolumeState::kDegraded);
}

TEST_CASE("a media error survives a restart: its bytes stay flipped, so reads still go to redundancy") {
  // Hostile round 17: the mark lived in memory only; after a restart the flipped bytes were
  // served as data, without an error.
  const std::string dir = (std::filesystem::temp_directory_path() / ("afasim-media-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  DataPathOptions file;
  file.payload = datapac::PayloadKind::kFile;
  file.payload_dir = dir;
  SimArray a(5, file);
  const Id r5 = a.add_volume("r5", 64 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kFixed);
  std::vector<std::uint8_t> written(64 * 1024, 0xA5), back(64 * 1024, 0);
  HostIo w;
  w.op = IoOp::kWrite;
  w.volume_id = r5;
  w.length_bytes = 64 * 1024;
  w.fua = true;  // on the SSDs before the ack
  w.write_data = written.data();
  bool ok = false;
  a.array->submit(w, [&](const IoCompletion& c) { ok = c.status.is_ok(); });
  a.sim->run();
  REQUIRE(ok);
  const auto record = a.array->data_path().extent_records(r5).at(0);
  const raid::Layout l = raid::Layout::raid5(4, kStrip, a.array->capacity_model().params().chunk_bytes);
  const raid::ChunkAddr c = record.members[static_cast<std::size_t>(l.data_member(0, 0))];
  FaultSpec f{"corrupt_block", c.drive + 1};
  f.block_offset_bytes = c.offset_bytes(a.array->capacity_model().params().chunk_bytes) + 8192;
  REQUIRE(a.array->inject_fault(f).is_ok());
  // Power back on: a new array over the same payload files and journal.
  sim::Simulator sim2(5);
  ArrayOptions o;
  o.data_path = file;
  auto again = Array::open(sim2, a.catalog, a.preset, a.journal, a.journal.snapshot(), o);
  REQUIRE(again.is_ok());
  CHECK((*again)->data_path().media_errors().size() == 1);
  HostIo r;
  r.op = IoOp::kRead;
  r.volume_id = r5;
  r.length_bytes = 64 * 1024;
  r.read_buffer = back.data();
  ok = false;
  (*again)->submit(r, [&](const IoCompletion& done) { ok = done.status.is_ok(); });
  sim2.run();
  CHECK(ok);
  CHECK(back == written);  // rebuilt from parity, not the flipped 0x5A
  CHECK((*again)->data_path().raid_stats().read_repairs == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("corrupt_block is refused without payload and on a drive out of service") {
  config::Catalog catalog = config::Catalog::embedded().value();
  sim::Simulator sim(1);
  MemoryJournal journal;
  auto array = Array::open(sim, catalog, catalog.system("ise-860-g3").value(), journal, journal.snapshot()).value();
  CHECK(array->inject_fault({"corrupt_block", 3}).status().code() == sim::Code::kConflict);
  CHECK(array->inject_fault({"corrupt_block", 99}).status().code() == sim::Code::kNotFound);
}

TEST_CASE(
    "a scrub pass reaches its set rate, and each RAID 5 row costs the worker controller its SAS "
    "reads, the parity check and the DRAM crossings") {
  SimArray a(5);
  a.add_volume("r5", sim::kGiB, raid::RaidType::kRaid5, Provisioning::kFixed);
  a.sim->run();
  const controller::Timing& t = a.array->data_path().timing();
  const auto core_ns = [&] { return model_core_ns(a); };
  const auto memory_bytes = [&] { return model_memory_bytes(a); };
  const sim::Time core_before = core_ns();
  const std::int64_t memory_before = memory_bytes();

  // 400 MB/s of member reads: below the ~2.3 GB/s at which a RAID 5 row's two DRAM crossings
  // per byte read (in from the SAS path, through the XOR) fill the worker's 4.68 GB/s.
  raid::ScrubOptions scrub;
  scrub.enabled = true;
  scrub.bytes_per_second = 400'000'000;
  const sim::Time start = a.sim->now();
  REQUIRE(a.array->set_scrub_options(scrub).is_ok());
  while (a.array->data_path().scrub_status().passes_completed == 0 && a.sim->now() < start + 60 * sim::kSecond)
    a.sim->step();
  const sim::Time end = a.sim->now();
  const raid::ScrubStatus st = a.array->data_path().scrub_status();
  scrub.enabled = false;
  REQUIRE(a.array->set_scrub_options(scrub).is_ok());
  REQUIRE(st.passes_completed == 1);

  // 1 GiB of RAID 5 4+1: 4,096 stripe rows of five 64 KiB strips.
  const std::int64_t rows = 4096;
  CHECK(st.rows_checked == rows);
  CHECK(st.bytes_read == rows * 5 * kStrip);
  // Paced per step of 16 rows; the pass ends when the step after the last finds no row.
  CHECK(static_cast<double>(st.bytes_read) / sim::to_seconds(end - start) == doctest::Approx(400e6).epsilon(0.01));

  // Per row (docs/raid.md "Scrub"): five SAS reads and one parity check over the row's 320
  // KiB on the worker's cores, priced by the calibration's CPU costs
  // (config/calibration/ise-860-g3.json); DRAM: the five strips in, the XOR engine's 320 KiB.
  const perf::CpuCosts& cpu = t.params().cpu;
  const double per_row_ns = static_cast<double>(5 * cpu.ns(perf::CpuOp::kBackendRead, 1, 0) +
                                                cpu.ns(perf::CpuOp::kParity, 1, 5 * kStrip));
  // Each core step's service varies around its mean (cpu_service_cv 0.2): over 24,576 steps
  // the mean holds to well under 2 %.
  CHECK(static_cast<double>(core_ns() - core_before) == doctest::Approx(per_row_ns * rows).epsilon(0.02));
  CHECK(memory_bytes() - memory_before == rows * 10 * kStrip);
}

TEST_CASE("a new scrub rate paces the step already waiting (hostile round 36: it kept the old rate)") {
  SimArray a(5);
  a.add_volume("r5", sim::kGiB, raid::RaidType::kRaid5, Provisioning::kFixed);
  a.sim->run();
  raid::ScrubOptions scrub;
  scrub.enabled = true;
  scrub.bytes_per_second = 1;  // a step of 16 rows of 320 KiB would wait ~61 days
  REQUIRE(a.array->set_scrub_options(scrub).is_ok());
  const sim::Time start = a.sim->now();
  a.sim->run_until(start + sim::kSecond);
  const std::int64_t slow = a.array->data_path().scrub_status().rows_checked;
  CHECK(slow == 16);  // the first step, then the wait
  scrub.bytes_per_second = 400'000'000;
  REQUIRE(a.array->set_scrub_options(scrub).is_ok());
  // At 400 MB/s the rest of the pass (4,096 rows of five 64 KiB strips, 1.34 GB) takes ~3.4 s.
  a.sim->run_until(a.sim->now() + 5 * sim::kSecond);
  CHECK(a.array->data_path().scrub_status().passes_completed == 1);
  scrub.enabled = false;
  REQUIRE(a.array->set_scrub_options(scrub).is_ok());
}

TEST_CASE("scrub options out of range are refused naming the field") {
  raid::ScrubOptions o;
  o.bytes_per_second = 0;
  CHECK(raid::Scrubber::validate(o).message() == "scrub.bytes_per_second must be positive, got 0");
  o.bytes_per_second = 1;
  o.pass_interval_ns = -1;
  CHECK(raid::Scrubber::validate(o).message() == "scrub.pass_interval must be from 0 to 10 years");
  // The next pass is scheduled from a clock that may stand at 100 years (round 25: a pass
  // interval of centuries would overflow the clock's 292).
  o.pass_interval_ns = 10 * sim::kYear + 1;
  CHECK(raid::Scrubber::validate(o).message() == "scrub.pass_interval must be from 0 to 10 years");
  o.pass_interval_ns = 10 * sim::kYear;
  CHECK(raid::Scrubber::validate(o).is_ok());
}
