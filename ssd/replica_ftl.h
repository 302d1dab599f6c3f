// The SSD's mapping table and garbage collection, kept at a reduced scale ("replica").
//
// Why a replica: a 4 KiB mapping table of a 16 TB device is 4 G entries. The replica keeps
// the structure that makes write amplification emerge — a page-level map, blocks with valid
// counters, greedy victim choice, separate host and GC write points, per-block erase counts
// — over `kBlocks` blocks of `kUnitsPerBlock` mapping slots, with the drive's own ratio of
// physical to user space. Each replica unit stands for `scale()` consecutive 4 KiB units of
// the real drive (replica unit = real unit / scale), and the drive feeds it one real unit in
// every `scale()` it writes (a deterministic 1-in-S sample, see FlashSsd). Uniform random
// writes over a span of the drive are then uniform random writes over the same fraction of
// the replica, and sequential writes are sequential: greedy garbage collection sees the
// same valid-count distribution it would see on the real drive, and its write
// amplification converges to the one of the real drive as the number of blocks grows
// (docs/ssd-model.md measures it against Xiang & Kurkoski's analytic greedy WA).
//
// Memory: about (kBlocks × kUnitsPerBlock) × 8 bytes (a map and a reverse map of int32):
// 1 MiB per drive, and a bitmap of which units are mapped (<= 16 KiB). O(1) per write except a
// garbage collection, which scans kBlocks blocks for the victim (once per kUnitsPerBlock ×
// (1 − valid fraction) writes).
//
// Not thread-safe; belongs to its FlashSsd.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/prefetch.h"
#include "sim/rng.h"

namespace afasim::ssd {

class ReplicaFtl {
 public:
  static constexpr int kBlocks = 1024;
  static constexpr int kUnitsPerBlock = 128;
  // Garbage collection runs when fewer free blocks than this remain (one is always kept for
  // the GC write point).
  static constexpr int kGcFreeBlocks = 3;

  // `real_user_units`: the drive's user capacity in 4 KiB units; `spare_ratio`: usable NAND
  // (raw less reserved) / user capacity, > 1.
  // REQUIRES: real_user_units >= 1, spare_ratio > 1.01.
  ReplicaFtl(std::int64_t real_user_units, double spare_ratio);

  // What a garbage collection relocated, for the drive to turn into NAND work.
  struct GcWork {
    std::int64_t relocated_units = 0;  // replica units moved (each stands for scale() real)
    int victims = 0;                   // blocks erased
    double victim_valid_fraction = 0;  // of the last victim, [0, 1]
  };

  // Writes replica unit `u` (maps it to the host write point, invalidates its old copy) and
  // runs garbage collection if free blocks fall short, adding what it did to `*gc`.
  // REQUIRES: 0 <= u < user_units().
  void write(std::int64_t u, GcWork* gc);
  // Unmaps `u` (a trim covering the whole replica unit).
  void trim(std::int64_t u);
  // From a bitmap of the map (1 bit per unit: a few KiB per drive that stay in the CPU
  // cache, where the map itself is read at random by every host read).
  bool mapped(std::int64_t u) const { return mapped_in(mapped_bits_.data(), u); }
  // The bitmap mapped() reads, for a caller that keeps its address among its own hot fields
  // (FlashSsd's read path, which then need not load the replica object): mapped_in(
  // mapped_bits(), u) == mapped(u). Valid while the replica lives (its size never changes).
  const std::uint64_t* mapped_bits() const { return mapped_bits_.data(); }
  static bool mapped_in(const std::uint64_t* bits, std::int64_t u) {
    const auto i = static_cast<std::size_t>(u);
    return (bits[i / 64] >> (i % 64)) & 1u;
  }
  // Hints for a caller that knows the units it will write next (a bulk replay): start
  // loading `u`'s map slot, and, once that has arrived, the reverse-map slot its old copy
  // holds. No effect on state; a write then misses the cache less (the map and reverse map,
  // 1 MiB per drive, are read at random).
  void prefetch_map(std::int64_t u) const {
    sim::prefetch(&map_[static_cast<std::size_t>(u)], true);
  }
  void prefetch_mapped(std::int64_t u) const {
    const auto word = static_cast<std::size_t>(u) / 64;
    if (word < mapped_bits_.size()) sim::prefetch(mapped_bits_.data() + word);
  }
  void prefetch_old_copy(std::int64_t u) const {
    const std::int32_t slot = map_[static_cast<std::size_t>(u)];
    if (slot >= 0) sim::prefetch(&rmap_[static_cast<std::size_t>(slot)], true);
  }

  // Preconditioning as SNIA's PTS does it: a sequential fill of the first `span_units`
  // units, then `random_passes` × span_units uniform random writes over them. Runs the real
  // mapping and GC (no timing). REQUIRES: 1 <= span_units <= user_units().
  void precondition(std::int64_t span_units, double random_passes, sim::Rng& rng);

  std::int64_t user_units() const { return user_units_; }
  // Real 4 KiB units per replica unit, >= 1.
  std::int64_t scale() const { return scale_; }
  // True once garbage collection has run (the drive has left fresh-out-of-box).
  bool steady() const { return gc_runs_ > 0; }
  int free_blocks() const { return static_cast<int>(free_.size()); }
  // Replica units written by the host and relocated by GC since construction.
  std::int64_t host_units_written() const { return host_units_; }
  std::int64_t gc_units_relocated() const { return gc_units_; }
  // Erase counts per block: the wear spread the victim choice produces.
  const std::vector<std::int32_t>& erase_counts() const { return erases_; }
  std::int64_t gc_runs() const { return gc_runs_; }
  // Units relocated per host unit written over the last kRecentGcs garbage collections
  // (0 before the first): the drive's current write amplification less one.
  double recent_gc_ratio() const;
  // Valid fraction of the victims of the last kRecentGcs collections (0 before the first).
  double recent_victim_valid_fraction() const;
  static constexpr int kRecentGcs = 256;
  // Back to fresh-out-of-box: everything unmapped, every block erased, counters zero.
  void reset();

 private:
  struct WritePoint {
    int block = -1;
    int next_slot = 0;
  };
  void place(std::int64_t u, WritePoint& wp);
  void open_block(WritePoint& wp);
  void collect(GcWork* gc);

  std::int64_t user_units_ = 0;
  std::int64_t scale_ = 1;
  std::vector<std::int32_t> map_;   // user unit -> slot (block × kUnitsPerBlock + i), -1 unmapped
  std::vector<std::int32_t> rmap_;  // slot -> user unit, -1 invalid
  std::vector<std::uint64_t> mapped_bits_;  // bit u: map_[u] >= 0
  std::vector<std::int32_t> valid_;  // per block
  std::vector<std::int32_t> erases_;
  std::vector<std::uint8_t> full_;   // per block: written to its end and not a write point
  // The full blocks by valid count: bit b of by_valid_[c] is set iff block b is full and
  // holds c valid units (by_valid_count_[c] of them), so the greedy victim, the lowest-
  // numbered full block with the fewest valid units, is found without scanning every block.
  static constexpr int kBlockWords = kBlocks / 64;
  std::vector<std::array<std::uint64_t, kBlockWords>> by_valid_;
  std::vector<std::int32_t> by_valid_count_;
  void mark_full(int block);
  void move_full(int block, std::int32_t from, std::int32_t to);
  std::vector<std::int32_t> free_;   // stack of erased blocks
  WritePoint host_;
  WritePoint gc_;
  std::int64_t host_units_ = 0;
  std::int64_t gc_units_ = 0;
  std::int64_t gc_runs_ = 0;
  struct GcRecord {
    std::int64_t host_units = 0;  // host units written since the collection before
    std::int32_t relocated = 0;
  };
  GcRecord recent_[kRecentGcs] = {};
  std::int64_t host_at_last_gc_ = 0;
};

}  // namespace afasim::ssd
