#include "ssd/replica_ftl.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "sim/assert.h"

namespace afasim::ssd {

ReplicaFtl::ReplicaFtl(std::int64_t real_user_units, double spare_ratio) {
  AFASIM_ASSERT(real_user_units >= 1 && spare_ratio > 1.01, "ReplicaFtl: bad geometry");
  const auto slots = static_cast<double>(kBlocks) * kUnitsPerBlock;
  // User units such that the replica's physical / user ratio is the drive's.
  const auto wanted = static_cast<std::int64_t>(std::floor(slots / spare_ratio));
  // A drive smaller than the replica maps one to one.
  scale_ = std::max<std::int64_t>(1, (real_user_units + wanted - 1) / wanted);
  user_units_ = std::max<std::int64_t>(1, (real_user_units + scale_ - 1) / scale_);
  user_units_ = std::min(user_units_, wanted);
  reset();
}

void ReplicaFtl::reset() {
  map_.assign(static_cast<std::size_t>(user_units_), -1);
  mapped_bits_.assign((static_cast<std::size_t>(user_units_) + 63) / 64, 0);
  rmap_.assign(static_cast<std::size_t>(kBlocks) * kUnitsPerBlock, -1);
  valid_.assign(kBlocks, 0);
  erases_.assign(kBlocks, 0);
  full_.assign(kBlocks, 0);
  by_valid_.assign(kUnitsPerBlock + 1, {});
  by_valid_count_.assign(kUnitsPerBlock + 1, 0);
  free_.clear();
  for (int b = kBlocks - 1; b >= 0; --b) free_.push_back(b);
  host_ = {};
  gc_ = {};
  host_units_ = gc_units_ = gc_runs_ = 0;
  for (auto& r : recent_) r = {};
  host_at_last_gc_ = 0;
}

double ReplicaFtl::recent_gc_ratio() const {
  std::int64_t host = 0, relocated = 0;
  for (const auto& r : recent_) {
    host += r.host_units;
    relocated += r.relocated;
  }
  return host == 0 ? 0.0 : static_cast<double>(relocated) / static_cast<double>(host);
}

double ReplicaFtl::recent_victim_valid_fraction() const {
  std::int64_t n = 0, relocated = 0;
  for (const auto& r : recent_) {
    if (r.host_units == 0 && r.relocated == 0) continue;
    ++n;
    relocated += r.relocated;
  }
  return n == 0 ? 0.0 : static_cast<double>(relocated) / static_cast<double>(n * kUnitsPerBlock);
}

void ReplicaFtl::open_block(WritePoint& wp) {
  AFASIM_ASSERT(!free_.empty(), "ReplicaFtl: no free block (GC fell behind)");
  wp.block = free_.back();
  free_.pop_back();
  wp.next_slot = 0;
}

void ReplicaFtl::place(std::int64_t u, WritePoint& wp) {
  if (wp.block < 0 || wp.next_slot == kUnitsPerBlock) {
    if (wp.block >= 0) mark_full(wp.block);
    open_block(wp);
  }
  const std::int32_t slot = wp.block * kUnitsPerBlock + wp.next_slot++;
  map_[static_cast<std::size_t>(u)] = slot;
  mapped_bits_[static_cast<std::size_t>(u) / 64] |= std::uint64_t{1} << (static_cast<std::size_t>(u) % 64);
  rmap_[static_cast<std::size_t>(slot)] = static_cast<std::int32_t>(u);
  ++valid_[static_cast<std::size_t>(wp.block)];
}

void ReplicaFtl::trim(std::int64_t u) {
  AFASIM_ASSERT(u >= 0 && u < user_units_, "ReplicaFtl::trim out of range");
  std::int32_t& slot = map_[static_cast<std::size_t>(u)];
  if (slot < 0) return;
  rmap_[static_cast<std::size_t>(slot)] = -1;
  const int block = slot / kUnitsPerBlock;
  std::int32_t& valid = valid_[static_cast<std::size_t>(block)];
  if (full_[static_cast<std::size_t>(block)] != 0) move_full(block, valid, valid - 1);
  --valid;
  slot = -1;
  mapped_bits_[static_cast<std::size_t>(u) / 64] &= ~(std::uint64_t{1} << (static_cast<std::size_t>(u) % 64));
}

void ReplicaFtl::mark_full(int block) {
  const auto b = static_cast<std::size_t>(block);
  full_[b] = 1;
  const auto c = static_cast<std::size_t>(valid_[b]);
  by_valid_[c][b / 64] |= std::uint64_t{1} << (b % 64);
  ++by_valid_count_[c];
}

void ReplicaFtl::move_full(int block, std::int32_t from, std::int32_t to) {
  const auto b = static_cast<std::size_t>(block);
  const std::uint64_t bit = std::uint64_t{1} << (b % 64);
  by_valid_[static_cast<std::size_t>(from)][b / 64] &= ~bit;
  --by_valid_count_[static_cast<std::size_t>(from)];
  if (to < 0) return;  // leaves the full blocks (collected)
  by_valid_[static_cast<std::size_t>(to)][b / 64] |= bit;
  ++by_valid_count_[static_cast<std::size_t>(to)];
}

void ReplicaFtl::write(std::int64_t u, GcWork* gc) {
  AFASIM_ASSERT(u >= 0 && u < user_units_, "ReplicaFtl::write out of range");
  trim(u);
  place(u, host_);
  ++host_units_;
  while (static_cast<int>(free_.size()) < kGcFreeBlocks) collect(gc);
}

void ReplicaFtl::collect(GcWork* gc) {
  // Greedy: the full block with the fewest valid units, the lowest-numbered of those tied
  // (the least count with a full block, then its lowest set bit). A GC runs every few dozen
  // writes; scanning all 1,024 blocks each time was most of a bulk replay's time.
  std::int32_t least = 0;
  while (least <= kUnitsPerBlock && by_valid_count_[static_cast<std::size_t>(least)] == 0) ++least;
  int victim = -1;
  if (least <= kUnitsPerBlock) {
    const auto& words = by_valid_[static_cast<std::size_t>(least)];
    for (int w = 0; w < kBlockWords; ++w) {
      if (words[static_cast<std::size_t>(w)] == 0) continue;
      victim = w * 64 + std::countr_zero(words[static_cast<std::size_t>(w)]);
      break;
    }
  }
  AFASIM_ASSERT(victim >= 0, "ReplicaFtl: nothing to collect");
  AFASIM_ASSERT(least < kUnitsPerBlock, "ReplicaFtl: every block is full of valid data");
  move_full(victim, least, -1);
  const std::size_t base = static_cast<std::size_t>(victim) * kUnitsPerBlock;
  GcRecord& rec = recent_[gc_runs_ % kRecentGcs];
  rec.host_units = host_units_ - host_at_last_gc_;
  rec.relocated = least;
  host_at_last_gc_ = host_units_;
  for (std::size_t i = 0; i < kUnitsPerBlock; ++i) {
    const std::int32_t u = rmap_[base + i];
    if (u < 0) continue;
    rmap_[base + i] = -1;
    --valid_[static_cast<std::size_t>(victim)];
    place(u, gc_);
    ++gc_units_;
    if (gc != nullptr) ++gc->relocated_units;
  }
  full_[static_cast<std::size_t>(victim)] = 0;
  ++erases_[static_cast<std::size_t>(victim)];
  free_.push_back(victim);
  ++gc_runs_;
  if (gc != nullptr) {
    ++gc->victims;
    gc->victim_valid_fraction = static_cast<double>(least) / kUnitsPerBlock;
  }
}

void ReplicaFtl::precondition(std::int64_t span_units, double random_passes, sim::Rng& rng) {
  AFASIM_ASSERT(span_units >= 1 && span_units <= user_units_, "precondition span out of range");
  for (std::int64_t u = 0; u < span_units; ++u) write(u, nullptr);
  const auto n = static_cast<std::int64_t>(random_passes * static_cast<double>(span_units));
  for (std::int64_t i = 0; i < n; ++i)
    write(static_cast<std::int64_t>(rng.uniform(static_cast<std::uint64_t>(span_units))), nullptr);
}

}  // namespace afasim::ssd
