// A verifying writer for simulation tests that lose power or controllers: it knows, for
// every 4 KiB block, the writes submitted to it in order and which were acknowledged, and
// reads every written block back to count acknowledged writes lost. Used by
// power_sim_test.cpp and double_fault_test.cpp.
#pragma once

#include <algorithm>
#include <memory>

#include "sim/rng.h"
#include "sim/units.h"
#include "tests/controller/raid_sim_harness.h"

namespace afasim::testing {

// A verifying writer that knows, for every 4 KiB block, the writes submitted to it in order
// and which were acknowledged: after a power cut a block may hold its last acknowledged
// write or any write submitted after it, nothing older.
struct Tracker {
  SimArray& a;
  std::vector<std::vector<std::vector<std::uint64_t>>> history;  // [volume][block] → writers
  std::vector<char> acked{0};                                    // by writer
  std::int64_t errors = 0;
  sim::Time max_latency = 0;
  // Writes slower than this waited out a controller's outage (parked): when the first and
  // the last of them completed.
  static constexpr sim::Time kParkedLatency = 200 * sim::kMillisecond;
  sim::Time parked_first = sim::kTimeMax, parked_last = 0;
  struct Parked {
    std::size_t vi;
    std::int64_t offset, len;
  };
  std::vector<Parked> parked;  // the parked writes, in completion order
  sim::Time last_latency = 0;  // of the write that completed last

  explicit Tracker(SimArray& array) : a(array) {
    for (const auto& v : a.vols) history.emplace_back(static_cast<std::size_t>(v.bytes / kBlock));
  }

  void write(std::size_t vi, std::int64_t offset, std::int64_t len) {
    const auto& v = a.vols[vi];
    const std::uint64_t w = a.next_writer++;
    acked.push_back(0);
    auto buf = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(len));
    fill_pattern(buf->data(), len, w, v.id, offset);
    for (std::int64_t b = offset / kBlock; b < (offset + len) / kBlock; ++b)
      history[vi][static_cast<std::size_t>(b)].push_back(w);
    a.array->submit(write_io(v.id, offset, len, buf->data()), [this, buf, w, vi, offset, len](const IoCompletion& c) {
      if (c.status.is_ok()) acked[w] = 1;
      else ++errors;
      max_latency = std::max(max_latency, c.latency());
      last_latency = c.latency();
      if (c.latency() > kParkedLatency) {
        parked_first = std::min(parked_first, c.complete_time);
        parked_last = std::max(parked_last, c.complete_time);
        parked.push_back(Parked{vi, offset, len});
      }
    });
  }

  // 12 batches of 16 random writes, each run to completion (the caches fill and destage),
  // then a burst of 32 left in flight for a random moment of up to 400 µs: where a test
  // cuts the power.
  void fill_then_burst(sim::Rng& rng) {
    for (int batch = 0; batch < 12; ++batch) {
      random_writes(rng, 16);
      a.sim->run();
    }
    random_writes(rng, 32);
    a.sim->run_until(a.sim->now() + static_cast<sim::Time>(rng.uniform(400'000)));
  }

  void random_writes(sim::Rng& rng, int n) {
    for (int i = 0; i < n; ++i) {
      const std::size_t vi = rng.uniform(a.vols.size());
      const std::int64_t blocks = 1 + static_cast<std::int64_t>(rng.uniform(64));
      const std::int64_t start =
          static_cast<std::int64_t>(rng.uniform(static_cast<std::uint64_t>(a.vols[vi].bytes / kBlock - blocks + 1)));
      write(vi, start * kBlock, blocks * kBlock);
    }
  }

  // Reads every written block back; returns how many hold something other than their last
  // acknowledged write or a later one (a lost acknowledged write), counting read errors too.
  // With `unreadable`: a failed read is read again block by block, and the blocks that fail
  // are counted there instead (lost writes the array marked: an error, not wrong bytes).
  std::int64_t lost_blocks(std::int64_t* unreadable = nullptr) {
    auto lost = std::make_shared<std::int64_t>(0);
    for (std::size_t vi = 0; vi < a.vols.size(); ++vi) {
      auto failed = std::make_shared<std::vector<std::int64_t>>();  // the MiBs whose read failed
      for (std::int64_t off = 0; off < a.vols[vi].bytes; off += sim::kMiB) {
        // Only the MiBs that hold a written block are compared below: skip the others' reads.
        const auto& blocks = history[vi];
        const auto first = blocks.begin() + off / kBlock, last = first + sim::kMiB / kBlock;
        if (std::all_of(first, last, [](const auto& writers) { return writers.empty(); })) continue;
        check_range(vi, off, sim::kMiB, [lost, failed, off, unreadable] {
          if (unreadable != nullptr) failed->push_back(off);
          else *lost += sim::kMiB / kBlock;
        }, lost);
      }
      a.sim->run();
      for (std::int64_t off : *failed) {
        for (std::int64_t b = off; b < off + sim::kMiB; b += kBlock)
          if (!history[vi][static_cast<std::size_t>(b / kBlock)].empty())
            check_range(vi, b, kBlock, [unreadable] { ++*unreadable; }, lost);
        a.sim->run();
      }
    }
    return *lost;
  }

 private:
  // Reads [off, +len) of volume `vi` and adds to *lost the written blocks that hold neither
  // their last acknowledged write nor a later one; a failed read calls on_error instead.
  template <typename OnError>
  void check_range(std::size_t vi, std::int64_t off, std::int64_t len, OnError on_error,
                   const std::shared_ptr<std::int64_t>& lost) {
    const Id id = a.vols[vi].id;
    // Not zero-filled: the read writes all of it (zeroing 1 MiB buffers was 30 % of the test).
    auto buf = std::make_shared_for_overwrite<std::uint8_t[]>(static_cast<std::size_t>(len));
    HostIo io;
    io.op = IoOp::kRead;
    io.volume_id = id;
    io.offset_bytes = off;
    io.length_bytes = len;
    io.read_buffer = buf.get();
    a.array->submit(io, [this, buf, vi, id, off, len, lost, on_error](const IoCompletion& c) {
      if (!c.status.is_ok()) return on_error();
      std::uint8_t want[kBlock];
      for (std::int64_t b = 0; b < len / kBlock; ++b) {
        const auto& writers = history[vi][static_cast<std::size_t>(off / kBlock + b)];
        if (writers.empty()) continue;
        std::size_t k = writers.size();  // the last acknowledged one, or none
        for (std::size_t i = writers.size(); i-- > 0;)
          if (acked[writers[i]]) {
            k = i;
            break;
          }
        const std::uint8_t* got = buf.get() + b * kBlock;
        bool ok = false;
        if (k == writers.size()) {  // nothing acknowledged: zeros are fine too
          std::memset(want, 0, kBlock);
          ok = std::memcmp(want, got, kBlock) == 0;
          k = 0;
        }
        for (std::size_t i = k; i < writers.size() && !ok; ++i) {
          fill_pattern(want, kBlock, writers[i], id, off + b * kBlock);
          ok = std::memcmp(want, got, kBlock) == 0;
        }
        if (!ok) ++*lost;
      }
    });
  }
};

inline void add_volumes(SimArray& a) {
  // Volumes alternate preferred controllers (A, B, A, B): both caches hold dirty data.
  a.add_volume("r10-thin", 48 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
  a.add_volume("r5-thin", 48 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kThin);
  a.add_volume("r5-fixed", 32 * sim::kMiB, raid::RaidType::kRaid5, Provisioning::kFixed);
  a.add_volume("r10-fixed", 32 * sim::kMiB, raid::RaidType::kRaid10, Provisioning::kThin);
}

}  // namespace afasim::testing
