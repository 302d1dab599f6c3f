// A harness for simulation tests of the data path: an ISE 860 G3 with payload `memory`,
// volumes, a verifying writer that remembers which write last touched each 4 KiB block, and
// helpers that run I/O to completion in virtual time. The write cache is 16 MiB per
// controller unless the options say otherwise, so that test-sized volumes exercise destage
// (and RAID writes) all the time, not only the cache.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "controller/array.h"

namespace afasim::testing {

using namespace afasim::controller;

inline constexpr std::int64_t kBlock = 4096;

// The 8 bytes a write `writer` puts at the 8-byte-aligned `offset` of volume `volume`: a
// function of the three, so that the expected content of any block is known from its last
// writer alone.
inline std::uint64_t pattern_word(std::uint64_t writer, Id volume, std::int64_t offset) {
  std::uint64_t x = writer * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(volume) * 0xBF58476D1CE4E5B9ULL ^
                    static_cast<std::uint64_t>(offset >> 3) * 0x94D049BB133111EBULL;
  return x ^ (x >> 29);
}

// Fills `out` (length a multiple of 8, `offset` 8-byte aligned) with writer's pattern.
inline void fill_pattern(std::uint8_t* out, std::int64_t len, std::uint64_t writer, Id volume, std::int64_t offset) {
  for (std::int64_t i = 0; i < len; i += 8) {
    const std::uint64_t w = pattern_word(writer, volume, offset + i);
    std::memcpy(out + i, &w, 8);
  }
}

// A write of [off, +len) of volume `vol` from `data` (which must live until it completes).
inline HostIo write_io(Id vol, std::int64_t off, std::int64_t len, const std::uint8_t* data, bool fua = false) {
  HostIo io;
  io.op = IoOp::kWrite;
  io.volume_id = vol;
  io.offset_bytes = off;
  io.length_bytes = len;
  io.write_data = data;
  io.fua = fua;
  return io;
}

// A block whose last write failed: its contents are not known.
inline constexpr std::uint64_t kUnknownWriter = UINT64_MAX;

struct SimArray {
  config::Catalog catalog = config::Catalog::embedded().value();
  config::SystemPreset preset = catalog.system("ise-860-g3").value();
  std::unique_ptr<sim::Simulator> sim;
  MemoryJournal journal;
  std::unique_ptr<Array> array;
  std::uint64_t seed;

  struct Vol {
    Id id;
    std::int64_t bytes;
    std::vector<std::uint64_t> last_writer;  // per 4 KiB block, 0 = never written
  };
  std::vector<Vol> vols;
  std::uint64_t next_writer = 1;
  std::int64_t read_errors = 0;
  std::int64_t wrong_bytes = 0;
  std::int64_t write_errors = 0;

  explicit SimArray(std::uint64_t s, DataPathOptions dpo = {}, WearLevelingOptions wear = {}) : seed(s) {
    sim = std::make_unique<sim::Simulator>(seed);
    if (dpo.payload == datapac::PayloadKind::kNone) dpo.payload = datapac::PayloadKind::kMemory;
    if (dpo.cache.write_cache_bytes == 0) dpo.cache.write_cache_bytes = 16 << 20;
    ArrayOptions o;
    o.data_path = dpo;
    o.wear = wear;
    auto a = Array::open(*sim, catalog, preset, journal, journal.snapshot(), o);
    REQUIRE(a.is_ok());
    array = std::move(a).value();
    array->invariants().set_enabled(true);
  }

  Id add_volume(const std::string& name, std::int64_t bytes, raid::RaidType t, Provisioning p) {
    VolumeSpec s;
    s.name = name;
    s.capacity_bytes = bytes;
    s.raid_type = t;
    s.provisioning = p;
    auto v = array->create_volume(s);
    REQUIRE(v.is_ok());
    // Volumes over 4 GiB are not tracked block by block (a test fills a pool with one).
    const std::size_t blocks = bytes <= (4LL << 30) ? static_cast<std::size_t>(bytes / kBlock) : 0;
    vols.push_back({v->id, bytes, std::vector<std::uint64_t>(blocks, 0)});
    return v->id;
  }

  // Submits a write of [offset, +len) with a fresh writer's pattern (`fua`: forced unit access,
  // through to the SSDs). The buffer lives until completion.
  void write(Vol& v, std::int64_t offset, std::int64_t len, bool fua = false) {
    const std::uint64_t w = next_writer++;
    auto buf = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(len));
    fill_pattern(buf->data(), len, w, v.id, offset);
    const HostIo io = write_io(v.id, offset, len, buf->data(), fua);
    // Payload is applied at submission: the writer table changes now, in submission order.
    for (std::int64_t b = offset / kBlock; b < (offset + len) / kBlock; ++b) v.last_writer[static_cast<std::size_t>(b)] = w;
    const std::size_t vol_index = static_cast<std::size_t>(&v - vols.data());
    array->submit(io, [this, buf, vol_index, offset, len, w](const IoCompletion& c) {
      if (c.status.is_ok()) return;
      ++write_errors;
      // A failed write acknowledged nothing: its blocks may hold the old or the new bytes
      // (or a mix) until a later write succeeds, so they are not checked.
      auto& writers = vols[vol_index].last_writer;
      for (std::int64_t b = offset / kBlock; b < (offset + len) / kBlock; ++b)
        if (writers[static_cast<std::size_t>(b)] == w) writers[static_cast<std::size_t>(b)] = kUnknownWriter;
    });
  }

  // Reads [offset, +len) and compares with what the writer table says; an error counts as a
  // read error, a differing byte as wrong data.
  // Read buffers are recycled: fresh 1 MiB allocations cost more in page faults than the
  // whole simulation.
  std::vector<std::shared_ptr<std::vector<std::uint8_t>>> spare_buffers;
  std::shared_ptr<std::vector<std::uint8_t>> buffer(std::int64_t len) {
    std::shared_ptr<std::vector<std::uint8_t>> b;
    if (!spare_buffers.empty()) {
      b = std::move(spare_buffers.back());
      spare_buffers.pop_back();
    } else {
      b = std::make_shared<std::vector<std::uint8_t>>();
    }
    b->assign(static_cast<std::size_t>(len), 0xEE);  // a read that fills nothing shows up
    return b;
  }

  // Reads all of `v` in 1 MiB pieces and lets them complete (a second of simulated time);
  // read_errors counts from 0 again.
  void read_check_whole(Vol& v) {
    read_errors = 0;
    for (std::int64_t off = 0; off < v.bytes; off += sim::kMiB) read_check(v, off, sim::kMiB);
    sim->run_until(sim->now() + sim::kSecond);
  }

  void read_check(Vol& v, std::int64_t offset, std::int64_t len) {
    auto buf = buffer(len);
    std::vector<std::uint64_t> writers(v.last_writer.begin() + offset / kBlock,
                                       v.last_writer.begin() + (offset + len) / kBlock);
    HostIo io;
    io.op = IoOp::kRead;
    io.volume_id = v.id;
    io.offset_bytes = offset;
    io.length_bytes = len;
    io.read_buffer = buf->data();
    const Id id = v.id;
    array->submit(io, [this, buf, writers = std::move(writers), id, offset](const IoCompletion& c) {
      struct Recycle {
        SimArray* self;
        std::shared_ptr<std::vector<std::uint8_t>> b;
        ~Recycle() { self->spare_buffers.push_back(std::move(b)); }
      } recycle{this, buf};
      if (!c.status.is_ok()) {
        ++read_errors;
        return;
      }
      std::uint8_t want[kBlock];
      for (std::size_t b = 0; b < writers.size(); ++b) {
        const std::int64_t at = offset + static_cast<std::int64_t>(b) * kBlock;
        if (writers[b] == kUnknownWriter) continue;
        if (writers[b] == 0) std::memset(want, 0, kBlock);
        else fill_pattern(want, kBlock, writers[b], id, at);
        if (std::memcmp(want, buf->data() + b * kBlock, kBlock) != 0) {
          ++wrong_bytes;
          return;
        }
      }
    });
  }

  // Reads back every 1 MiB region that holds a written block (never-written regions are
  // holes or zeros, and cost only memset to check), plus the volume's first MiB.
  void read_all() {
    constexpr std::int64_t kRegion = 1 << 20;
    for (auto& v : vols)
      for (std::int64_t off = 0; off < v.bytes; off += kRegion) {
        const std::int64_t len = std::min<std::int64_t>(kRegion, v.bytes - off);
        bool written = off == 0;
        for (std::int64_t b = off / kBlock; b < (off + len) / kBlock && !written; ++b)
          written = v.last_writer[static_cast<std::size_t>(b)] != 0;
        if (written) read_check(v, off, len);
      }
    sim->run();
  }

  // `n` random writes (and as many verifying reads) of 4 KiB to 256 KiB, aligned to 4 KiB.
  // Half of them fall in the first kHotBytes of the volume: data there is overwritten often,
  // so RAID 5 read-modify-writes meet old data that is not zeros (a parity update that left
  // the old data out shows in the read-back once a member is lost).
  static constexpr std::int64_t kHotBytes = 2 << 20;
  void random_io(sim::Rng& rng, int n) {
    for (int i = 0; i < n; ++i) {
      Vol& v = vols[rng.uniform(vols.size())];
      const std::int64_t blocks = 1 + static_cast<std::int64_t>(rng.uniform(64));
      const bool hot = rng.bernoulli(0.5) && v.bytes >= 2 * kHotBytes;
      const std::int64_t max_start = (hot ? kHotBytes : v.bytes) / kBlock - blocks;
      const std::int64_t start = static_cast<std::int64_t>(rng.uniform(static_cast<std::uint64_t>(max_start + 1)));
      if (rng.bernoulli(0.6)) write(v, start * kBlock, blocks * kBlock);
      else read_check(v, start * kBlock, blocks * kBlock);
      if (i % 16 == 15) sim->run();  // queue depth up to 16
    }
    sim->run();
  }

  // A drive that holds a member of some extent, chosen by `rng`, that is healthy; with
  // `hot_extent`, of a volume's first extent (where random_io overwrites most).
  int used_drive(sim::Rng& rng, bool hot_extent = false) {
    std::vector<int> used;
    for (const auto& v : vols)
      for (const auto& r : array->data_path().extent_records(v.id))
        if (!hot_extent || r.extent_index == 0)
        for (std::size_t m = 0; m < r.members.size(); ++m)
          if (!((r.missing >> m) & 1u) &&
              array->data_path().ssd(r.members[m].drive).state() == datapac::SsdState::kHealthy)
            used.push_back(r.members[m].drive);
    REQUIRE(!used.empty());
    return used[rng.uniform(used.size())];
  }

  std::string invariant_report() { return array->invariants().report(); }
};

// Both controllers' performance-model core time (ns) and DRAM bytes so far
// (controller::Timing): read before and after background work (a rebuild, an extent move, a
// scrub pass) to see what it was charged.
inline sim::Time model_core_ns(const SimArray& a) {
  const controller::Timing& t = a.array->data_path().timing();
  return t.cores_busy_ns(1) + t.cores_busy_ns(2);
}
inline std::int64_t model_memory_bytes(const SimArray& a) {
  const controller::Timing& t = a.array->data_path().timing();
  return t.resources(1).memory.stats().bytes + t.resources(2).memory.stats().bytes;
}

}  // namespace afasim::testing
