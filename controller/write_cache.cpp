// The write-back cache (docs/write-cache.md): blocks, FIFOs, write-back and write-through
// coherence, reads. Destage and the controller pair's side: write_cache_destage.cpp.
#include "controller/write_cache.h"

#include <algorithm>
#include <cstring>

#include "controller/controller_pair.h"
#include "controller/io_orchestrator.h"
#include "controller/state_check.h"
#include "sim/assert.h"

namespace afasim::controller {

// Every volume id an array hands out fits a block's key.
static_assert(kMaxVolumeId < (Id{1} << 24) - 1, "WriteCache::key: the volume ids the array hands out");

using sim::Status;
using sim::Time;

WriteCache::WriteCache(ArrayContext& ctx, std::int64_t capacity_blocks)
    : ctx_(ctx), capacity_blocks_(std::max<std::int64_t>(1, capacity_blocks)) {}

WriteCache::Block* WriteCache::find(Id volume, std::int64_t block) {
  return blocks_.find(key(volume, block));
}

void WriteCache::mark_dirty(VolumeRuntime& v, Block& b, std::int64_t block) {
  b.dirty = true;
  ++v.cache.dirty_blocks;
  if (const Id o = pair_->owner(v.id)) ++ctl(o).dirty_blocks;
  enqueue(v, b, block, true);
}

void WriteCache::mark_clean(VolumeRuntime& v, Block& b, std::int64_t block, bool drop_bytes) {
  b.dirty = false;
  // The SSDs hold this version now: the block keeps its place (hits, eviction order) but not a
  // copy of its bytes (hostile round 31: with a payload the server's memory grew 1 GB per GiB
  // written, to both caches' full size, and a 4 GB machine ran out). A write that needs them
  // back reads them from the SSDs (refill).
  if (drop_bytes) b.data.reset();
  b.destaging_version = 0;
  --v.cache.dirty_blocks;
  const Id o = pair_->owner(v.id);
  if (o != 0) --ctl(o).dirty_blocks;
  // The peer drops its copy when it can be told; otherwise its copy is stale and the SSDs
  // hold this version (a survivor skips it, docs/write-cache.md).
  if (pair_->mirror_reachable(o)) b.mirrored_version = 0;
  enqueue(v, b, block, false);
}

void WriteCache::enqueue(VolumeRuntime& v, Block& b, std::int64_t block, bool dirty) {
  b.queued = ++fifo_seq_;
  sim::Ring<CacheFifoEntry>& fifo = dirty ? v.cache.dirty_fifo : v.cache.clean_fifo;
  fifo.push_back(CacheFifoEntry{block, b.queued});
  if (static_cast<std::int64_t>(fifo.size()) > 2 * v.cache.cached_blocks + 64) compact_fifo(v, fifo, dirty);
}

void WriteCache::compact_fifo(VolumeRuntime& v, sim::Ring<CacheFifoEntry>& fifo, bool dirty) {
  fifo.erase_if([&](const CacheFifoEntry& e) {
    const Block* blk = find(v.id, e.block);
    return blk == nullptr || blk->queued != e.seq || blk->dirty != dirty;
  });
}

void WriteCache::drop_block(VolumeRuntime& v, std::int64_t block, Id c) {
  const Block* blk = find(v.id, block);
  if (blk == nullptr) return;
  if (blk->destage_failed) --v.cache.failed_blocks;
  if (blk->dirty) {
    --v.cache.dirty_blocks;
    if (c != 0) --ctl(c).dirty_blocks;
  }
  --v.cache.cached_blocks;
  if (c != 0) --ctl(c).cached_blocks;
  blocks_.erase(key(v.id, block));
}

void WriteCache::drop_range(VolumeRuntime& v, std::int64_t first_block, std::int64_t end_block, Id c) {
  if (v.cache.cached_blocks == 0 || first_block >= end_block) return;
  if (end_block - first_block <= static_cast<std::int64_t>(blocks_.size())) {
    for (std::int64_t b = first_block; b < end_block && v.cache.cached_blocks > 0; ++b) drop_block(v, b, c);
    return;
  }
  const std::uint64_t lo = key(v.id, first_block), hi = key(v.id, end_block);
  for (std::uint64_t k : sorted_keys([&](std::uint64_t k, const Block&) { return k >= lo && k < hi; }))
    drop_block(v, static_cast<std::int64_t>(k & ((1ULL << 40) - 1)), c);
}

void WriteCache::evict_clean(Id c) {
  PerController& cr = ctl(c);
  if (cr.cached_blocks <= capacity_blocks_ || cr.cached_blocks == cr.dirty_blocks) return;
  // By volume id from the lowest, until the cache is back within its capacity.
  ctx_.volumes.find_cyclic(0, [&](VolumeRuntime& v) {
    if (pair_->owner(v.id) != c) return false;
    while (cr.cached_blocks > capacity_blocks_ && !v.cache.clean_fifo.empty()) {
      const CacheFifoEntry e = v.cache.clean_fifo.front();
      v.cache.clean_fifo.pop_front();
      Block* blk = find(v.id, e.block);
      if (blk != nullptr && !blk->dirty && blk->queued == e.seq) drop_block(v, e.block, c);
    }
    return cr.cached_blocks <= capacity_blocks_;
  });
}

[[gnu::hot]] bool WriteCache::read(VolumeRuntime& v, std::int64_t offset, std::int64_t length, std::uint8_t* out, bool copy) {
  // An empty cache first: the volume's count is a line of its runtime that a read of a volume
  // among many would otherwise fetch from memory for nothing.
  if (blocks_.empty() || v.cache.cached_blocks == 0) return false;
  bool all = true;
  const std::int64_t end = offset + length;
  for (std::int64_t b = offset / kBlockBytes; b * kBlockBytes < end; ++b) {
    const Block* blk = find(v.id, b);
    if (blk == nullptr) {
      all = false;
      if (!copy) return false;
      continue;
    }
    if (copy && blk->data) {
      const std::int64_t lo = std::max(offset, b * kBlockBytes), hi = std::min(end, (b + 1) * kBlockBytes);
      std::memcpy(out + (lo - offset), blk->data.get() + (lo - b * kBlockBytes), static_cast<std::size_t>(hi - lo));
    }
  }
  return all;
}

bool WriteCache::lacks_bytes(VolumeRuntime& v, std::int64_t offset, std::int64_t length) {
  if (!ctx_.has_payload()) return false;
  for (std::int64_t b = offset / kBlockBytes; b * kBlockBytes < offset + length; ++b)
    if (const Block* blk = find(v.id, b); blk != nullptr && !blk->data) return true;
  return false;
}

Status WriteCache::fill_partial(VolumeRuntime& v, Id c, const HostIo& io, raid::Plan& plan, WriteBlocks& blocks) {
  // New blocks enter the cache; a partial one is filled from the SSDs first (the cache holds
  // whole blocks). The fill reads run before the host's bytes are copied in.
  const std::int64_t end = io.offset_bytes + io.length_bytes;
  // Every block this call added, dropped again if a fill fails: one the write covers whole
  // would otherwise stay cached, clean, with bytes nobody wrote (review 31).
  boost::container::small_vector<std::int64_t, 4> added;  // inline: a heap block cost a 4K write ~200 instructions
  bool any_fill = false;
  for (std::int64_t b = io.offset_bytes / kBlockBytes; b * kBlockBytes < end; ++b) {
    const std::int64_t lo = std::max(io.offset_bytes, b * kBlockBytes), hi = std::min(end, (b + 1) * kBlockBytes);
    const auto [entry, inserted] = blocks_.try_emplace(key(v.id, b));
    Block& blk = *entry;
    blocks.push_back(&blk);
    if (!inserted) {
      if (Status st = refill(v, b, blk, hi - lo < kBlockBytes); !st.is_ok()) {
        for (std::int64_t f : added) drop_block(v, f, c);
        return st;
      }
      continue;
    }
    added.push_back(b);
    ++v.cache.cached_blocks;
    ++ctl(c).cached_blocks;
    if (ctx_.has_payload()) blk.data = std::make_shared_for_overwrite<std::uint8_t[]>(static_cast<std::size_t>(kBlockBytes));
    if (hi - lo == kBlockBytes) continue;
    Status st = plan_block_read(v, b, blk.data.get(), plan);
    any_fill = true;
    if (!st.is_ok()) {
      for (std::int64_t f : added) drop_block(v, f, c);
      return st;
    }
  }
  if (!any_fill) return Status::ok();
  Status st = ctx_.execute(plan);
  if (!st.is_ok())
    for (std::int64_t f : added) drop_block(v, f, c);
  return st;
}

Status WriteCache::write_back(VolumeRuntime& v, Id c, const HostIo& io, raid::Plan& plan, std::int64_t& new_blocks) {
  const std::int64_t end = io.offset_bytes + io.length_bytes;
  const bool mirrored = pair_->mirror_reachable(c);
  WriteBlocks blocks;
  AFASIM_RETURN_IF_ERROR(fill_partial(v, c, io, plan, blocks));
  const std::int64_t first = io.offset_bytes / kBlockBytes;
  for (std::int64_t b = first; b * kBlockBytes < end; ++b) {
    const std::int64_t lo = std::max(io.offset_bytes, b * kBlockBytes), hi = std::min(end, (b + 1) * kBlockBytes);
    Block& blk = *blocks[static_cast<std::size_t>(b - first)];
    if (blk.data) {
      if (io.write_data != nullptr)
        std::memcpy(blk.data.get() + (lo - b * kBlockBytes), io.write_data + (lo - io.offset_bytes),
                    static_cast<std::size_t>(hi - lo));
      else
        std::memset(blk.data.get() + (lo - b * kBlockBytes), 0, static_cast<std::size_t>(hi - lo));
    }
    blk.version = ++version_counter_;
    if (!blk.dirty) {
      mark_dirty(v, blk, b);
      ++new_blocks;
    }
    if (mirrored) blk.mirrored_version = blk.version;
  }
  return Status::ok();
}

Status WriteCache::plan_block_read(VolumeRuntime& v, std::int64_t block, std::uint8_t* out, raid::Plan& plan) {
  const std::int64_t ext = ctx_.extent_bytes(v.raid_type());
  raid::Extent& e = ctx_.thin.extents()[v.thin->map[static_cast<std::size_t>(block * kBlockBytes / ext)]];
  return ctx_.raid.plan_read(e, block * kBlockBytes % ext, kBlockBytes, out, plan);
}

Status WriteCache::refill(VolumeRuntime& v, std::int64_t block, Block& blk, bool read_back) {
  if (!ctx_.has_payload() || blk.data) return Status::ok();
  blk.data = std::make_shared_for_overwrite<std::uint8_t[]>(static_cast<std::size_t>(kBlockBytes));
  if (!read_back) return Status::ok();
  // Bytes only: a real cache still held them, so the timing model has no read here.
  raid::Plan plan;
  Status st = plan_block_read(v, block, blk.data.get(), plan);
  if (st.is_ok()) st = ctx_.execute(plan);
  if (!st.is_ok()) blk.data.reset();
  return st;
}

const std::uint8_t* WriteCache::merge_write_through(VolumeRuntime& v, Id c, std::int64_t offset, std::int64_t length,
                                                    const std::uint8_t* data, std::int64_t& lo, std::int64_t& hi,
                                                    raid::Plan& plan) {
  lo = offset;
  hi = offset + length;
  if (v.cache.cached_blocks == 0) return data;
  // Cached blocks in the range take the new bytes and go to the SSDs whole, so that the
  // SSDs hold their newest version and the cache stays coherent.
  const std::int64_t b0 = offset / kBlockBytes, b1 = (offset + length + kBlockBytes - 1) / kBlockBytes;
  Block* head = offset % kBlockBytes ? find(v.id, b0) : nullptr;
  Block* tail = (offset + length) % kBlockBytes ? find(v.id, b1 - 1) : nullptr;
  // A clean head or tail block's bytes went at its destage: back from the SSDs first (one that
  // cannot be read is left out of the write, which then covers the host's range only).
  if (head != nullptr && !refill(v, b0, *head, true).is_ok()) head = nullptr;
  if (tail != nullptr && !refill(v, b1 - 1, *tail, true).is_ok()) tail = nullptr;
  if (head) lo = b0 * kBlockBytes;
  if (tail) hi = b1 * kBlockBytes;
  bool any = head != nullptr || tail != nullptr;
  for (std::int64_t b = b0; b < b1 && !any; ++b) any = find(v.id, b) != nullptr;
  if (!any) return data;
  const std::uint8_t* src = data;
  if (ctx_.has_payload()) {
    std::uint8_t* buf = plan.scratch(hi - lo);
    if (head && head->data) std::memcpy(buf, head->data.get(), kBlockBytes);
    if (tail && tail->data) std::memcpy(buf + (hi - lo - kBlockBytes), tail->data.get(), kBlockBytes);
    if (data) std::memcpy(buf + (offset - lo), data, static_cast<std::size_t>(length));
    else std::memset(buf + (offset - lo), 0, static_cast<std::size_t>(length));
    src = buf;
  }
  const bool mirrored = pair_->mirror_reachable(c);
  for (std::int64_t b = b0; b < b1; ++b) {
    Block* blk = find(v.id, b);
    if (blk == nullptr) continue;
    // A dirty block stays dirty (and its peer's copy counted) until the write-through has put
    // it on the SSDs (end_write_through): the write may fail (a full host disk, an unreadable
    // block), and then the cache holds the only copy of what was acknowledged before (review
    // 31 kept its bytes; review 38: it was marked clean here, so a takeover or an eviction
    // after a failed FUA write lost the acknowledged bytes beside the write's range). Its bytes
    // before the merge are kept too: a write that fails leaves no trace in the cache (review
    // 39: reads returned the failed write's bytes, the acknowledged ones gone).
    WriteThroughBlock w{b, blk->dirty, blk->mirrored_version == blk->version, nullptr};
    if (blk->data && src) {
      w.before = std::make_shared<std::uint8_t[]>(kBlockBytes);
      std::memcpy(w.before.get(), blk->data.get(), kBlockBytes);
      std::memcpy(blk->data.get(), src + (b * kBlockBytes - lo), kBlockBytes);
    }
    write_through_blocks_.push_back(std::move(w));
    blk->version = ++version_counter_;
    if (!blk->dirty && mirrored) blk->mirrored_version = 0;
  }
  return src;
}

void WriteCache::end_write_through(VolumeRuntime& v, bool written) {
  for (WriteThroughBlock& w : write_through_blocks_) {
    Block* blk = find(v.id, w.block);
    if (blk == nullptr) continue;
    if (!written) {
      // As before the write: its bytes, and for a dirty block its peer's copy, which agrees.
      if (w.before) blk->data = std::move(w.before);
      if (w.dirty && w.mirrored) blk->mirrored_version = blk->version;
      continue;
    }
    if (!w.dirty || !blk->dirty) continue;
    if (blk->destage_failed) {  // on the SSDs now: a FLUSH no longer waits for it
      blk->destage_failed = false;
      if (--v.cache.failed_blocks == 0) v.cache.destage_error = sim::Code::kOk;
    }
    mark_clean(v, *blk, w.block, /*drop_bytes=*/false);
  }
  write_through_blocks_.clear();
}

bool WriteCache::must_wait(Id c, std::int64_t new_blocks) const {
  const PerController& cr = ctl(c);
  return new_blocks > 0 && (!cr.waiting.empty() || cr.dirty_blocks - cr.waiting_blocks > capacity_blocks_);
}

void WriteCache::add_waiter(Id c, CacheWaiter w) {
  PerController& cr = ctl(c);
  cr.waiting_blocks += w.new_blocks;
  cr.waiting.push_back(std::move(w));
}

std::int64_t WriteCache::payload_bytes() const {
  std::int64_t blocks = 0;
  blocks_.for_each([&](std::uint64_t, const Block& b) { blocks += b.data != nullptr; });
  return blocks * kBlockBytes;
}

std::int64_t WriteCache::dirty_bytes() const {
  std::int64_t blocks = 0;
  ctx_.volumes.for_each([&](const VolumeRuntime& v) { blocks += v.cache.dirty_blocks; });
  return blocks * kBlockBytes;
}

}  // namespace afasim::controller
