// The write-back cache of DataPath (docs/write-cache.md): blocks of 4 KiB per volume, the
// owner's copy and the peer's mirror, destage by watermarks, FLUSH.
#include <algorithm>
#include <bit>
#include <cstring>

#include "controller/data_path.h"
#include "sim/assert.h"

namespace afasim::controller {

using sim::Status;
using sim::Time;

namespace {
constexpr std::int64_t B = DataPath::kCacheBlock;
}  // namespace

DataPath::CacheBlock* DataPath::cached(Id volume, std::int64_t block) {
  auto it = cache_.find(cache_key(volume, block));
  return it == cache_.end() ? nullptr : &it->second;
}

Id DataPath::owner(Id volume_id) const {
  const VolumeRuntime* v = find_volume(volume_id);
  if (v == nullptr || v->claims == 0) return 0;
  return static_cast<Id>(std::countr_zero(static_cast<unsigned>(v->claims))) + 1;
}

bool DataPath::mirror_reachable(Id c) const {
  return c != 0 && link_up_ && serving(peer_of(c)) && !options_.controllers.test_no_mirror;
}

void DataPath::mark_dirty(VolumeRuntime& v, CacheBlock& b, std::int64_t block) {
  b.dirty = true;
  ++v.dirty_blocks;
  if (const Id o = owner(v.id)) ++ctl(o).dirty_blocks;
  enqueue(v, b, block, true);
}

void DataPath::mark_clean(VolumeRuntime& v, CacheBlock& b, std::int64_t block) {
  b.dirty = false;
  b.destaging_version = 0;
  --v.dirty_blocks;
  const Id o = owner(v.id);
  if (o != 0) --ctl(o).dirty_blocks;
  // The peer drops its copy when it can be told; otherwise its copy is stale and the SSDs
  // hold this version (a survivor skips it, docs/write-cache.md).
  if (mirror_reachable(o)) b.mirrored_version = 0;
  enqueue(v, b, block, false);
}

void DataPath::enqueue(VolumeRuntime& v, CacheBlock& b, std::int64_t block, bool dirty) {
  b.queued = ++fifo_seq_;
  std::deque<FifoEntry>& fifo = dirty ? v.dirty_fifo : v.clean_fifo;
  fifo.push_back(FifoEntry{block, b.queued});
  if (static_cast<std::int64_t>(fifo.size()) > 2 * v.cached_blocks + 64) compact_fifo(v, fifo, dirty);
}

void DataPath::compact_fifo(VolumeRuntime& v, std::deque<FifoEntry>& fifo, bool dirty) {
  std::erase_if(fifo, [&](const FifoEntry& e) {
    const CacheBlock* blk = cached(v.id, e.block);
    return blk == nullptr || blk->queued != e.seq || blk->dirty != dirty;
  });
}

void DataPath::drop_block(VolumeRuntime& v, std::int64_t block, Id c) {
  auto it = cache_.find(cache_key(v.id, block));
  if (it == cache_.end()) return;
  if (it->second.dirty) {
    --v.dirty_blocks;
    if (c != 0) --ctl(c).dirty_blocks;
  }
  --v.cached_blocks;
  if (c != 0) --ctl(c).cached_blocks;
  cache_.erase(it);
}

void DataPath::drop_range(VolumeRuntime& v, std::int64_t first_block, std::int64_t end_block, Id c) {
  if (v.cached_blocks == 0 || first_block >= end_block) return;
  if (end_block - first_block <= static_cast<std::int64_t>(cache_.size())) {
    for (std::int64_t b = first_block; b < end_block && v.cached_blocks > 0; ++b) drop_block(v, b, c);
    return;
  }
  std::vector<std::int64_t> blocks;
  for (const auto& [key, blk] : cache_) {
    if (static_cast<Id>(key >> 40) != v.id) continue;
    const auto b = static_cast<std::int64_t>(key & ((1ULL << 40) - 1));
    if (b >= first_block && b < end_block) blocks.push_back(b);
  }
  for (std::int64_t b : blocks) drop_block(v, b, c);
}

void DataPath::evict_clean(Id c) {
  ControllerRuntime& cr = ctl(c);
  if (cr.cached_blocks <= cache_blocks_cap_ || cr.cached_blocks == cr.dirty_blocks) return;
  for (auto& vp : volumes_) {
    if (!vp || owner(vp->id) != c) continue;
    VolumeRuntime& v = *vp;
    while (cr.cached_blocks > cache_blocks_cap_ && !v.clean_fifo.empty()) {
      const FifoEntry e = v.clean_fifo.front();
      v.clean_fifo.pop_front();
      CacheBlock* blk = cached(v.id, e.block);
      if (blk != nullptr && !blk->dirty && blk->queued == e.seq) drop_block(v, e.block, c);
    }
    if (cr.cached_blocks <= cache_blocks_cap_) return;
  }
}

bool DataPath::cache_read(VolumeRuntime& v, std::int64_t offset, std::int64_t length, std::uint8_t* out, bool copy) {
  if (v.cached_blocks == 0) return false;
  bool all = true;
  const std::int64_t end = offset + length;
  for (std::int64_t b = offset / B; b * B < end; ++b) {
    const CacheBlock* blk = cached(v.id, b);
    if (blk == nullptr) {
      all = false;
      if (!copy) return false;
      continue;
    }
    if (copy && blk->data) {
      const std::int64_t lo = std::max(offset, b * B), hi = std::min(end, (b + 1) * B);
      std::memcpy(out + (lo - offset), blk->data.get() + (lo - b * B), static_cast<std::size_t>(hi - lo));
    }
  }
  return all;
}

Status DataPath::write_back(VolumeRuntime& v, Id c, const HostIo& io, Work& w, std::int64_t& new_blocks) {
  const std::int64_t ext = extent_bytes(v.raid_type);
  const std::int64_t end = io.offset_bytes + io.length_bytes;
  const bool mirrored = mirror_reachable(c);
  for (std::int64_t b = io.offset_bytes / B; b * B < end; ++b) {
    const std::int64_t lo = std::max(io.offset_bytes, b * B), hi = std::min(end, (b + 1) * B);
    auto [it, inserted] = cache_.try_emplace(cache_key(v.id, b));
    CacheBlock& blk = it->second;
    if (inserted) {
      ++v.cached_blocks;
      ++ctl(c).cached_blocks;
      if (has_payload()) blk.data = std::make_shared<std::uint8_t[]>(static_cast<std::size_t>(B));
      if (hi - lo < B) {
        // A partial block is filled from the SSDs first: the cache holds whole blocks.
        Extent& e = extents_[v.map[static_cast<std::size_t>(b * B / ext)]];
        Status st = read_extent(e, b * B % ext, B, blk.data.get(), w);
        if (!st.is_ok()) {
          drop_block(v, b, c);
          return st;
        }
      }
    }
    if (blk.data) {
      if (io.write_data != nullptr)
        std::memcpy(blk.data.get() + (lo - b * B), io.write_data + (lo - io.offset_bytes), static_cast<std::size_t>(hi - lo));
      else
        std::memset(blk.data.get() + (lo - b * B), 0, static_cast<std::size_t>(hi - lo));
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

Status DataPath::write_through(VolumeRuntime& v, Id c, std::int64_t offset, std::int64_t length,
                               const std::uint8_t* data, Work& w) {
  check_writer(v, c);
  std::int64_t lo = offset, hi = offset + length;
  const std::uint8_t* src = data;
  if (v.cached_blocks > 0) {
    // Cached blocks in the range take the new bytes and go to the SSDs whole, so that the
    // SSDs hold their newest version and the cache stays coherent.
    const std::int64_t b0 = offset / B, b1 = (offset + length + B - 1) / B;
    CacheBlock* head = offset % B ? cached(v.id, b0) : nullptr;
    CacheBlock* tail = (offset + length) % B ? cached(v.id, b1 - 1) : nullptr;
    if (head) lo = b0 * B;
    if (tail) hi = b1 * B;
    bool any = head != nullptr || tail != nullptr;
    for (std::int64_t b = b0; b < b1 && !any; ++b) any = cached(v.id, b) != nullptr;
    if (any) {
      if (has_payload()) {
        destage_buf_.resize(static_cast<std::size_t>(hi - lo));
        if (head && head->data) std::memcpy(destage_buf_.data(), head->data.get(), B);
        if (tail && tail->data) std::memcpy(destage_buf_.data() + (hi - lo - B), tail->data.get(), B);
        if (data) std::memcpy(destage_buf_.data() + (offset - lo), data, static_cast<std::size_t>(length));
        else std::memset(destage_buf_.data() + (offset - lo), 0, static_cast<std::size_t>(length));
        src = destage_buf_.data();
      }
      const bool mirrored = mirror_reachable(c);
      for (std::int64_t b = b0; b < b1; ++b) {
        CacheBlock* blk = cached(v.id, b);
        if (blk == nullptr) continue;
        if (blk->data && src) std::memcpy(blk->data.get(), src + (b * B - lo), B);
        blk->version = ++version_counter_;
        if (blk->dirty) mark_clean(v, *blk, b);
        else if (mirrored) blk->mirrored_version = 0;
      }
    }
  }
  const std::int64_t ext = extent_bytes(v.raid_type);
  for (std::int64_t pos = lo; pos < hi;) {
    const std::int64_t idx = pos / ext;
    const std::int64_t within = pos % ext;
    const std::int64_t n = std::min(ext - within, hi - pos);
    const std::uint32_t id = v.map[static_cast<std::size_t>(idx)];
    AFASIM_ASSERT(id != kNoExtent, "write-through to an unallocated extent");
    AFASIM_RETURN_IF_ERROR(write_extent(extents_[id], within, n, src ? src + (pos - lo) : nullptr, w));
    pos += n;
  }
  return Status::ok();
}

void DataPath::flush_volume(VolumeRuntime& v, Id c, const HostIo& io, IoCallback& done, Time now, Time submitted) {
  // FLUSH: every block of the volume dirty now reaches the SSDs before the reply.
  Time last = cores_[static_cast<std::size_t>(c - 1)].serve(now, options_.cost.host_io_ns);
  if (v.destage_until_ns > sim_.now()) last = std::max(last, v.destage_until_ns);
  while (auto t = destage_one(c, &v)) last = std::max(last, *t);
  Status st;
  if (options_.payload == datapac::PayloadKind::kFile)
    for (auto& ssd : ssds_)
      if (ssd->state() == datapac::SsdState::kHealthy) st = ssd->flush_payload();
  if (!st.is_ok()) ++v.stats.errors;
  complete_on(c, io, done, st, submitted, last + options_.cost.host_port_latency_ns);
}

void DataPath::pump_destage(Id c) {
  ControllerRuntime& cr = ctl(c);
  if (!serving(c) || cr.dirty_blocks == 0) return;
  const CacheOptions& o = options_.cache;
  int limit = 0;
  if (cr.mode != CacheMode::kWriteBack || cr.dirty_blocks * 100 > o.high_watermark_percent * cache_blocks_cap_)
    limit = o.destage_ops_max;
  else if (cr.dirty_blocks * 100 > o.low_watermark_percent * cache_blocks_cap_)
    limit = o.destage_ops_trickle;
  while (cr.destages < limit && destage_one(c)) {
  }
}

std::optional<Time> DataPath::destage_one(Id c, VolumeRuntime* only) {
  auto from = [&](VolumeRuntime& v) -> std::optional<Time> {
    while (!v.dirty_fifo.empty()) {
      const FifoEntry e = v.dirty_fifo.front();
      v.dirty_fifo.pop_front();
      CacheBlock* blk = cached(v.id, e.block);
      // Stale: the block was destaged (as part of a neighbour's run), dropped, or cleaned and
      // dirtied again since this entry was queued (its live entry is further back).
      if (blk == nullptr || !blk->dirty || blk->queued != e.seq) continue;
      blk->queued = 0;
      // Already being destaged (a neighbour's run took it): destage_done queues it again if
      // it was written meanwhile.
      if (blk->destaging_version == blk->version) continue;
      return destage_run(c, v, e.block);
    }
    return std::nullopt;
  };
  if (only != nullptr) return from(*only);
  ControllerRuntime& cr = ctl(c);
  const std::size_t n = volumes_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t idx = (cr.destage_cursor + i) % n;
    VolumeRuntime* v = volumes_[idx].get();
    if (v == nullptr || v->dirty_blocks == 0 || owner(v->id) != c) continue;
    if (auto t = from(*v)) {
      cr.destage_cursor = idx + 1;
      return t;
    }
  }
  return std::nullopt;
}

std::optional<Time> DataPath::destage_run(Id c, VolumeRuntime& v, std::int64_t block) {
  // The run: the dirty blocks around `block` in its RAID row (a full row makes a RAID 5
  // full-stripe write), none of them already being destaged.
  const raid::Layout& l = layout(v.raid_type);
  const std::int64_t ext = l.extent_bytes();
  const std::int64_t row = l.row_data_bytes();
  const std::int64_t row_first = (block * B) / row * row / B;
  const std::int64_t row_end = std::min((block * B / row + 1) * row, (block * B / ext + 1) * ext) / B;
  auto ready = [&](std::int64_t b) {
    const CacheBlock* x = cached(v.id, b);
    return x != nullptr && x->dirty && x->destaging_version != x->version;
  };
  std::int64_t first = block, end = block + 1;
  while (first > row_first && ready(first - 1)) --first;
  while (end < row_end && ready(end)) ++end;
  const std::int64_t count = end - first;

  std::size_t slot;
  if (!free_destage_ops_.empty()) {
    slot = free_destage_ops_.back();
    free_destage_ops_.pop_back();
  } else {
    slot = destage_ops_.size();
    destage_ops_.emplace_back();
  }
  DestageOp& op = destage_ops_[slot];
  op.controller = c;
  op.epoch = ctl(c).epoch;
  op.volume_id = v.id;
  op.first_block = first;
  op.versions.clear();
  if (has_payload()) destage_buf_.resize(static_cast<std::size_t>(count * B));
  for (std::int64_t b = first; b < end; ++b) {
    CacheBlock& x = *cached(v.id, b);
    op.versions.push_back(x.version);
    if (x.data) std::memcpy(destage_buf_.data() + (b - first) * B, x.data.get(), B);
  }
  Work& w = destage_work_;
  w.clear();
  check_writer(v, c);
  const std::uint32_t id = v.map[static_cast<std::size_t>(first * B / ext)];
  AFASIM_ASSERT(id != kNoExtent, "dirty cache block of an unallocated extent");
  Extent& e = extents_[id];
  if (!e.lost) {
    Status st = write_extent(e, first * B % ext, count * B, has_payload() ? destage_buf_.data() : nullptr, w);
    if (!st.is_ok())
      emit(Severity::kError, "cache", "volume/" + std::to_string(v.id), "destage failed: " + st.message());
  }
  const CostModel& cost = options_.cost;
  Time t = cores_[static_cast<std::size_t>(c - 1)].serve(
      sim_.now(), static_cast<Time>(w.ops.size()) * cost.backend_op_ns +
                      static_cast<Time>(w.parity_rows) * cost.parity_op_ns + cost.parity_xor_ns(w.xor_bytes));
  const Time done = run_plan(w, t, c);
  for (std::int64_t b = first; b < end; ++b) {
    CacheBlock& x = *cached(v.id, b);
    x.destaging_version = x.version;
    x.destage_done_ns = done;
  }
  v.destage_until_ns = std::max(v.destage_until_ns, done);
  ++ctl(c).destages;
  sim_.at(done, [this, slot] { destage_done(slot); });
  return done;
}

void DataPath::destage_done(std::size_t slot) {
  DestageOp& op = destage_ops_[slot];
  const Id c = op.controller;
  // A controller that failed or lost power since: its completions mean nothing (the bytes
  // are on the SSDs; the blocks stay dirty for whoever holds them).
  const bool valid = op.epoch == ctl(c).epoch;
  if (valid) {
    --ctl(c).destages;
    if (VolumeRuntime* v = find_volume(op.volume_id)) {
      for (std::size_t i = 0; i < op.versions.size(); ++i) {
        const std::int64_t b = op.first_block + static_cast<std::int64_t>(i);
        CacheBlock* x = cached(v->id, b);
        if (x == nullptr) continue;
        if (x->dirty && x->version == op.versions[i]) {
          mark_clean(*v, *x, b);
        } else if (x->dirty && x->destaging_version == op.versions[i]) {
          x->destaging_version = 0;  // written again meanwhile: destage the new version later
          enqueue(*v, *x, b, true);
        }
      }
    }
  }
  free_destage_ops_.push_back(slot);
  if (valid) {
    admit_waiters(c);
    evict_clean(c);
    pump_destage(c);
  }
}

void DataPath::admit_waiters(Id c) {
  ControllerRuntime& cr = ctl(c);
  while (!cr.waiting.empty()) {
    Waiter& w = cr.waiting.front();
    if (cr.dirty_blocks - cr.waiting_blocks + w.new_blocks > cache_blocks_cap_) break;
    cr.waiting_blocks -= w.new_blocks;
    const Time at = std::max(sim_.now(), w.ack_ns);
    if (VolumeRuntime* v = find_volume(w.volume_id)) v->stats.write_latency_ns.record(at - w.submitted);
    HostIo io;
    io.op = IoOp::kWrite;
    io.volume_id = w.volume_id;
    complete_on(c, io, w.done, Status::ok(), w.submitted, at);
    cr.waiting.pop_front();
  }
}

void DataPath::check_writer(const VolumeRuntime& v, Id c) {
  if (!invariants_.enabled()) return;
  if (!((v.claims >> (c - 1)) & 1u))
    invariants_.violation(sim_.now(), "one-writer",
                          "controller " + ctl_name(c) + " writes volume " + std::to_string(v.id) +
                              " without holding its reservation");
  if (std::string bad = check_one_writer(); !bad.empty()) invariants_.violation(sim_.now(), "one-writer", bad);
}

std::string DataPath::check_one_writer() const {
  unsigned up = 0;
  for (Id c = 1; c <= static_cast<Id>(ctl_.size()); ++c)
    if (is_up(ctl(c).state)) up |= 1u << (c - 1);
  for (const auto& v : volumes_)
    if (v && std::popcount(static_cast<unsigned>(v->claims) & up) > 1)
      return "volume " + std::to_string(v->id) + " has two writers (controllers A and B both hold it)";
  return "";
}

void DataPath::destage_all() {
  for (Id c = 1; c <= static_cast<Id>(ctl_.size()); ++c)
    if (serving(c))
      while (destage_one(c)) {
      }
}

std::int64_t DataPath::dirty_bytes() const {
  std::int64_t blocks = 0;
  for (const auto& v : volumes_)
    if (v) blocks += v->dirty_blocks;
  return blocks * B;
}

}  // namespace afasim::controller
