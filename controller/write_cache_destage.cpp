// The write cache's destage (docs/write-cache.md "Destage") and what the controller pair
// asks of the cache: a controller lost, the mirror forgotten or rebuilt, the vault.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "controller/controller_pair.h"
#include "controller/io_orchestrator.h"
#include "controller/write_cache.h"
#include "sim/assert.h"

namespace afasim::controller {

using sim::Status;
using sim::Time;

namespace {
std::int64_t block_of(std::uint64_t key) { return static_cast<std::int64_t>(key & ((1ULL << 40) - 1)); }
Id volume_of(std::uint64_t key) { return static_cast<Id>(key >> 40); }
}  // namespace

// ---------------------------------------------------------------------------------------
// Destage

void WriteCache::pump_destage(Id c) {
  PerController& cr = ctl(c);
  if (!pair_->serving(c) || cr.dirty_blocks == 0 || ctx_.sim.now() < cr.destage_retry_at) return;
  const CacheOptions& o = ctx_.options.cache;
  int limit = 0;
  if (pair_->mode(c) != CacheMode::kWriteBack || cr.dirty_blocks * 100 > o.high_watermark_percent * capacity_blocks_)
    limit = o.destage_ops_max;
  else if (cr.dirty_blocks * 100 > o.low_watermark_percent * capacity_blocks_)
    limit = o.destage_ops_trickle;
  while (cr.destages < limit && destage_one(c)) {
  }
  // Below the low watermark: what the last age check found older than the age.
  while (limit == 0 && cr.aged_left && cr.destages < o.destage_ops_trickle) {
    if (!destage_one(c, nullptr, aged_seq_)) cr.aged_left = false;
  }
  if (o.destage_age_ns > 0 && !age_check_armed_) arm_age_check();
}

void WriteCache::arm_age_check() {
  age_check_armed_ = true;
  ctx_.sim.after(ctx_.options.cache.destage_age_check_ns, [this] { age_check(); });
}

void WriteCache::age_check() {
  age_check_armed_ = false;
  const sim::Time now = ctx_.sim.now();
  if (age_marks_.empty() || age_marks_.back().seq != fifo_seq_ + 1) age_marks_.push_back(AgeMark{fifo_seq_ + 1, now});
  const sim::Time old = now - ctx_.options.cache.destage_age_ns;
  while (age_marks_.size() >= 2 && age_marks_[1].at <= old) age_marks_.pop_front();
  aged_seq_ = age_marks_.front().at <= old ? age_marks_.front().seq : 0;
  bool dirty = false;
  for (Id c = 1; c <= 2; ++c) {
    if (!pair_->serving(c) || ctl(c).dirty_blocks == 0) continue;
    dirty = true;
    ctl(c).aged_left = aged_seq_ > 0;
    pump_destage(c);  // arms the next check
  }
  // Nothing dirty that a serving controller could destage: the timer stops until a pump finds
  // dirty data again (a write, a destage done, a controller back).
  if (dirty && !age_check_armed_) arm_age_check();
}

bool WriteCache::destage_from(Id c, VolumeRuntime& v, std::uint64_t before_seq) {
  while (!v.cache.dirty_fifo.empty()) {
    const CacheFifoEntry e = v.cache.dirty_fifo.front();
    Block* blk = find(v.id, e.block);
    // Stale: the block was destaged (as part of a neighbour's run), dropped, or cleaned and
    // dirtied again since this entry was queued (its live entry is further back).
    const bool live = blk != nullptr && blk->dirty && blk->queued == e.seq;
    if (live && e.seq >= before_seq) return false;  // the oldest left is younger than the age
    v.cache.dirty_fifo.pop_front();
    if (!live) continue;
    blk->queued = 0;
    // Already being destaged (a neighbour's run took it): destage_done queues it again if
    // it was written meanwhile.
    if (blk->destaging_version == blk->version) continue;
    return destage_run(c, v, e.block);
  }
  return false;
}

bool WriteCache::destage_one(Id c, VolumeRuntime* only, std::uint64_t before_seq) {
  if (only != nullptr) return destage_from(c, *only, before_seq);
  PerController& cr = ctl(c);
  // Round robin over the volumes by id, from the one after the last that destaged.
  VolumeRuntime* done = ctx_.volumes.find_cyclic(cr.destage_cursor, [&](VolumeRuntime& v) {
    return v.cache.dirty_blocks != 0 && pair_->owner(v.id) == c && destage_from(c, v, before_seq);
  });
  if (done == nullptr) return false;
  cr.destage_cursor = static_cast<std::size_t>(done->id) + 1;
  return true;
}

std::size_t WriteCache::take_destage_slot(Id c, VolumeRuntime& v, std::int64_t first, std::int64_t end) {
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
  op.epoch = pair_->epoch(c);
  op.volume_id = v.id;
  op.first_block = first;
  op.failed = false;
  op.versions.clear();
  for (std::int64_t b = first; b < end; ++b) op.versions.push_back(find(v.id, b)->version);
  return slot;
}

bool WriteCache::destage_run(Id c, VolumeRuntime& v, std::int64_t block) {
  // The run: the dirty blocks around `block` in its RAID row (a full row makes a RAID 5
  // full-stripe write), none of them already being destaged.
  const raid::Layout& l = ctx_.raid.layout(v.raid_type());
  const std::int64_t ext = l.extent_bytes();
  const std::int64_t row = l.row_data_bytes();
  const std::int64_t row_first = (block * kBlockBytes) / row * row / kBlockBytes;
  const std::int64_t row_end = std::min((block * kBlockBytes / row + 1) * row, (block * kBlockBytes / ext + 1) * ext) / kBlockBytes;
  auto ready = [&](std::int64_t b) {
    const Block* x = find(v.id, b);
    return x != nullptr && x->dirty && x->destaging_version != x->version;
  };
  std::int64_t first = block, end = block + 1;
  while (first > row_first && ready(first - 1)) --first;
  while (end < row_end && ready(end)) ++end;
  const std::int64_t count = end - first;
  const std::size_t slot = take_destage_slot(c, v, first, end);

  raid::Plan& plan = destage_plan_;
  plan.clear();
  std::uint8_t* buf = ctx_.has_payload() ? plan.scratch(count * kBlockBytes) : nullptr;
  if (buf != nullptr)
    for (std::int64_t b = first; b < end; ++b) {
      const Block& x = *find(v.id, b);
      if (x.data) std::memcpy(buf + (b - first) * kBlockBytes, x.data.get(), kBlockBytes);
    }
  pair_->check_writer(v, c);
  const std::uint32_t id = v.thin->map[static_cast<std::size_t>(first * kBlockBytes / ext)];
  AFASIM_ASSERT(id != pool::ThinMap::kNoExtent, "dirty cache block of an unallocated extent");
  raid::Extent& e = ctx_.thin.extents()[id];
  if (!e.lost) {
    Status st = ctx_.raid.plan_write(e, first * kBlockBytes % ext, count * kBlockBytes, buf, plan);
    if (st.is_ok()) st = ctx_.execute(plan);
    if (st.code() == sim::Code::kIoError && buf != nullptr && e.type == raid::RaidType::kRaid5)
      st = destage_whole_row(v, e, first, plan);
    note_destage(v, first, end, st);
    destage_ops_[slot].failed = !st.is_ok();
  }
  for (std::int64_t b = first; b < end; ++b) find(v.id, b)->destaging_version = find(v.id, b)->version;
  ++ctl(c).destages;
  ++v.cache.destages_in_flight;
  // Timed on the performance model (controller/timing.h): the member operations through the
  // cores, DRAM, the SAS paths and the SSDs, in arrival order with host I/O.
  if (plan.ops.empty())
    ctx_.sim.at(ctx_.sim.now(), [this, slot] { destage_done(slot); });
  else
    ctx_.timing.destage(c, plan, count * kBlockBytes, ctx_.options.cache.destage_ops_max,
                        [this, slot](Time) { destage_done(slot); });
  return true;
}

Status WriteCache::destage_whole_row(VolumeRuntime& v, raid::Extent& e, std::int64_t block, raid::Plan& plan) {
  // The run's read-modify-write (or reconstruct-write) met an unreadable block: the whole row
  // goes as a full-stripe write instead, whose parity needs no old data. What the cache holds
  // of the row comes from the cache, the rest is read from the SSDs first. So two rewrites of
  // one column's unreadable blocks (a rebuild's punctured column, each rewritten by a 4 KiB
  // write of its own) reach the SSDs when the rest of the row reads: until 2026-12-06 each
  // needed the other's old block and both waited for ever. The row's other dirty blocks go too
  // (written again at their own destage, now readable); the reads join the plan's timing.
  const raid::Layout& l = ctx_.raid.layout(v.raid_type());
  const std::int64_t row = l.row_data_bytes(), ext = l.extent_bytes();
  const std::int64_t first = block * kBlockBytes / row * row;  // the row's first volume byte
  plan.clear();
  std::uint8_t* bytes = plan.scratch(row);
  raid::Plan reads;
  Status st = for_each_uncached_run(v, first, first + row, ext, [&](std::int64_t pos, std::int64_t n) {
    return ctx_.raid.plan_read(e, pos % ext, n, bytes + (pos - first), reads);
  });
  if (st.is_ok()) st = ctx_.execute(reads);
  // A block the cache lacks that no member can give (two unreadable blocks in one column,
  // all members present: the loss is for good) is written around: the row goes with zeros
  // there, which makes the column whole again, and the volume's block is marked lost
  // (controller/lost_blocks.h), so that its reads, and those of anything rebuilt from it, fail
  // instead of returning the zeros. Until 2026-12-06 such a row's cached blocks waited for
  // ever, FLUSH failing, and a clean stop discarded them. With a member missing the destage
  // still waits: the rebuild decides what is lost.
  std::vector<std::int64_t> lost;  // extent byte offsets of those blocks
  if (st.code() == sim::Code::kIoError && e.missing == 0)
    st = read_row_around_lost(v, e, first, bytes, reads, lost);
  AFASIM_RETURN_IF_ERROR(st);
  read(v, first, row, bytes, /*copy=*/true);  // the cache's blocks over what the SSDs gave
  AFASIM_RETURN_IF_ERROR(ctx_.raid.plan_write(e, first % ext, row, bytes, plan));
  AFASIM_RETURN_IF_ERROR(ctx_.execute(plan));
  plan.ops.insert(plan.ops.end(), reads.ops.begin(), reads.ops.end());
  if (lost.empty()) return Status::ok();
  const std::int64_t extent_first = first / ext * ext;  // the volume byte of the extent's start
  for (std::int64_t at : lost) ctx_.lost_data.mark(v, (extent_first + at) / kBlockBytes);
  ctx_.emit(Severity::kError, "cache", "volume/" + std::to_string(v.id),
            "destage met " + std::to_string(lost.size()) + " block(s) of 4 KiB with no readable source (two " +
                "unreadable blocks in one RAID 5 column), the first at volume byte " +
                std::to_string(extent_first + lost.front()) +
                ": the row's cached writes reached the SSDs around them; their data is lost and they read as an "
                "error until a write covers them");
  return Status::ok();
}

Status WriteCache::read_row_around_lost(VolumeRuntime& v, raid::Extent& e, std::int64_t first, std::uint8_t* bytes,
                                        raid::Plan& reads, std::vector<std::int64_t>& lost) {
  const std::int64_t ext = ctx_.raid.layout(v.raid_type()).extent_bytes();
  const std::int64_t row = ctx_.raid.layout(v.raid_type()).row_data_bytes();
  raid::Plan one;
  return for_each_uncached_run(v, first, first + row, ext, [&](std::int64_t pos, std::int64_t n) -> Status {
    for (std::int64_t at = pos; at < pos + n; at += kBlockBytes) {
      one.clear();
      std::uint8_t* out = bytes + (at - first);
      Status st = ctx_.raid.plan_read(e, at % ext, kBlockBytes, out, one);
      if (st.is_ok()) st = ctx_.execute(one);
      reads.ops.insert(reads.ops.end(), one.ops.begin(), one.ops.end());
      if (st.code() == sim::Code::kIoError) {
        std::memset(out, 0, kBlockBytes);
        lost.push_back(at % ext);
      } else {
        AFASIM_RETURN_IF_ERROR(st);
      }
    }
    return Status::ok();
  });
}

void WriteCache::note_destage(VolumeRuntime& v, std::int64_t first, std::int64_t end, const Status& st) {
  if (st.is_ok()) {
    if (v.cache.failed_blocks == 0) return;
    for (std::int64_t b = first; b < end; ++b)
      if (Block* x = find(v.id, b); x->destage_failed) {
        x->destage_failed = false;
        --v.cache.failed_blocks;
      }
    if (v.cache.failed_blocks == 0) {
      v.cache.destage_error = sim::Code::kOk;
      ctx_.emit(Severity::kInfo, "cache", "volume/" + std::to_string(v.id),
                "destage succeeds again: the volume's acknowledged writes are on the SSDs");
    }
    return;
  }
  // Said once per episode: a full host disk fails every destage until space is freed.
  if (v.cache.failed_blocks == 0)
    ctx_.emit(Severity::kError, "cache", "volume/" + std::to_string(v.id),
              "destage failed: " + st.message() +
                  "; its acknowledged writes stay in the write cache (retried once a second) and a FLUSH fails "
                  "until they reach the SSDs");
  v.cache.destage_error = st.code();
  for (std::int64_t b = first; b < end; ++b)
    if (Block* x = find(v.id, b); !x->destage_failed) {
      x->destage_failed = true;
      ++v.cache.failed_blocks;
    }
}

void WriteCache::retry_destage_later(Id c) {
  PerController& cr = ctl(c);
  if (cr.destage_retry_at > ctx_.sim.now()) return;  // a retry is already due
  cr.destage_retry_at = ctx_.sim.now() + sim::kSecond;
  ctx_.sim.at(cr.destage_retry_at, [this, c] { pump_destage(c); });
}

void WriteCache::destage_done(std::size_t slot) {
  DestageOp& op = destage_ops_[slot];
  const Id c = op.controller;
  // A controller that failed or lost power since: its completions mean nothing (the bytes
  // are on the SSDs; the blocks stay dirty for whoever holds them).
  const bool valid = op.epoch == pair_->epoch(c);
  VolumeRuntime* vol = ctx_.volumes.find(op.volume_id);
  if (vol != nullptr) --vol->cache.destages_in_flight;
  if (vol == nullptr || vol->cache.destages_in_flight == 0) release_flushes(op.volume_id);
  if (valid) {
    --ctl(c).destages;
    if (VolumeRuntime* v = ctx_.volumes.find(op.volume_id)) {
      for (std::size_t i = 0; i < op.versions.size(); ++i) {
        const std::int64_t b = op.first_block + static_cast<std::int64_t>(i);
        Block* x = find(v->id, b);
        if (x == nullptr) continue;
        if (op.failed && x->dirty && x->destaging_version == op.versions[i]) {
          x->destaging_version = 0;  // not on the SSDs: stays dirty, destaged again later
          enqueue(*v, *x, b, true);
        } else if (x->dirty && x->version == op.versions[i]) {
          mark_clean(*v, *x, b);
        } else if (x->dirty && x->destaging_version == op.versions[i]) {
          x->destaging_version = 0;  // written again meanwhile: destage the new version later
          enqueue(*v, *x, b, true);
        }
      }
    }
  }
  free_destage_ops_.push_back(slot);
  if (valid && op.failed) retry_destage_later(c);
  if (valid) {
    admit_waiters(c);
    evict_clean(c);
    pump_destage(c);
  }
}

void WriteCache::admit_waiters(Id c) {
  PerController& cr = ctl(c);
  while (!cr.waiting.empty()) {
    CacheWaiter& w = cr.waiting.front();
    if (cr.dirty_blocks - cr.waiting_blocks + w.new_blocks > capacity_blocks_) break;
    cr.waiting_blocks -= w.new_blocks;
    const Time at = std::max(ctx_.sim.now(), w.ack_ns);
    io_->complete_on(c, w.volume_id, w.done, Status::ok(), w.submitted, at);
    cr.waiting.pop_front();
  }
}

void WriteCache::flush(VolumeRuntime& v, Id c, sim::InlineFunction<void(Time)> done) {
  while (destage_one(c, &v)) {
  }
  if (v.cache.destages_in_flight == 0) return done(ctx_.sim.now());
  flush_waiters_.push_back(FlushWaiter{v.id, std::move(done)});
}

void WriteCache::release_flushes(Id volume_id) {
  for (std::size_t i = 0; i < flush_waiters_.size();) {
    if (flush_waiters_[i].volume_id != volume_id) {
      ++i;
      continue;
    }
    auto done = std::move(flush_waiters_[i].done);
    flush_waiters_.erase(flush_waiters_.begin() + static_cast<std::ptrdiff_t>(i));
    done(ctx_.sim.now());
  }
}

void WriteCache::destage_all() {
  for (Id c = 1; c <= 2; ++c)
    if (pair_->serving(c))
      while (destage_one(c)) {
      }
}

// ---------------------------------------------------------------------------------------
// The controller pair's side

void WriteCache::recount() {
  for (auto& c : ctl_) c.dirty_blocks = c.cached_blocks = 0;
  ctx_.volumes.for_each([&](const VolumeRuntime& v) {
    if (const Id o = pair_->owner(v.id)) {
      ctl(o).dirty_blocks += v.cache.dirty_blocks;
      ctl(o).cached_blocks += v.cache.cached_blocks;
    }
  });
}

void WriteCache::drop_clean(VolumeRuntime& v) {
  // Its dirty blocks the new owner holds as current mirror copies (the move waits for the
  // mirror); its clean ones were in the old owner's DRAM only.
  // Its keys are [key(v.id, 0), key(v.id + 1, 0)); the end computed, not keyed: key() refuses
  // the id past the last (review, round 19: the volume at the ceiling aborted on its first move).
  const std::uint64_t lo = key(v.id, 0), hi = lo + (std::uint64_t{1} << 40);
  for (std::uint64_t k : sorted_keys([&](std::uint64_t k, const Block& b) { return k >= lo && k < hi && !b.dirty; }))
    drop_block(v, block_of(k), 0);
}

std::int64_t WriteCache::controller_lost(Id c, bool peer_serving, const std::function<void(CacheWaiter&)>& park) {
  PerController& cr = ctl(c);
  // Writes waiting for cache room are in the cache and its mirror: the survivor acks them.
  for (CacheWaiter& w : cr.waiting) park(w);
  cr.waiting.clear();
  cr.waiting_blocks = 0;
  // Its DRAM is gone. Its own blocks live on only where the peer holds a current copy; the
  // copies it held of the peer's are gone. In key order: blocks whose destage died with it
  // go back to the destage queue in that order.
  std::int64_t lost = 0;
  std::vector<std::pair<VolumeRuntime*, std::int64_t>> drop;
  for (std::uint64_t k : sorted_keys([](std::uint64_t, const Block&) { return true; })) {
    Block& blk = blocks_.at(k);
    VolumeRuntime* v = ctx_.volumes.find(volume_of(k));
    const std::int64_t b = block_of(k);
    const Id o = pair_->owner(v->id);
    const bool held_by_c = o == c || (o == 0 && !peer_serving);
    if (!held_by_c) {
      blk.mirrored_version = 0;
      continue;
    }
    if (blk.dirty && blk.mirrored_version == blk.version && peer_serving) {
      if (blk.destaging_version != 0) {
        blk.destaging_version = 0;  // its destage died with it
        enqueue(*v, blk, b, true);
      }
      continue;
    }
    if (blk.dirty && !on_ssds(blk)) {
      lost += kBlockBytes;
      ctx_.lost_data.mark(*v, b);  // its reads fail now, not return the SSDs' older bytes
    }
    drop.emplace_back(v, b);
  }
  for (auto& [v, b] : drop) drop_block(*v, b, 0);
  return lost;
}

void WriteCache::forget_mirrors() {
  blocks_.for_each([](std::uint64_t, Block& blk) { blk.mirrored_version = 0; });
}

void WriteCache::mirror_all() {
  blocks_.for_each([](std::uint64_t, Block& blk) {
    if (blk.dirty) blk.mirrored_version = blk.version;
  });
}

void WriteCache::fail_waiters(const Status& status) {
  for (auto& cr : ctl_) {
    for (CacheWaiter& w : cr.waiting) w.done(IoCompletion{status, w.submitted, ctx_.sim.now()});
    cr.waiting.clear();
    cr.waiting_blocks = 0;
  }
}

std::vector<std::vector<VaultRecord>> WriteCache::vault_records(const std::vector<bool>& holds) const {
  // What each controller's DRAM holds: its own dirty blocks, and current copies of its
  // peer's (or, after a failover, of volumes it is taking over). In (volume, block) order.
  std::vector<std::vector<VaultRecord>> records(holds.size());
  for (std::uint64_t k : sorted_keys([](std::uint64_t, const Block& b) { return b.dirty; })) {
    const Block& blk = blocks_.at(k);
    const Id o = pair_->owner(volume_of(k));
    for (Id c = 1; c <= static_cast<Id>(holds.size()); ++c) {
      if (!holds[static_cast<std::size_t>(c - 1)]) continue;
      const bool own = o == c;
      const bool copy = o != c && blk.mirrored_version == blk.version;
      if (own || copy) records[static_cast<std::size_t>(c - 1)].push_back({volume_of(k), block_of(k), blk.version, blk.data});
    }
  }
  return records;
}

std::int64_t WriteCache::mark_lost_unless_vaulted(std::initializer_list<const std::vector<VaultRecord>*> vaults) {
  std::unordered_map<std::uint64_t, std::uint64_t> saved;  // key → the newest version a vault holds
  for (const auto* vault : vaults)
    for (const VaultRecord& r : *vault) {
      std::uint64_t& version = saved[key(r.volume_id, r.block)];
      version = std::max(version, r.version);
    }
  std::int64_t lost = 0;
  for (std::uint64_t k : sorted_keys([](std::uint64_t, const Block& b) { return b.dirty && !on_ssds(b); })) {
    const auto it = saved.find(k);
    if (it != saved.end() && it->second >= blocks_.at(k).version) continue;
    ctx_.lost_data.mark(*ctx_.volumes.find(volume_of(k)), block_of(k));
    ++lost;
  }
  return lost;
}

void WriteCache::clear() {
  blocks_.clear();
  ctx_.volumes.for_each([](VolumeRuntime& v) {
    v.cache.dirty_fifo.release();
    v.cache.clean_fifo.release();
    v.cache.dirty_blocks = v.cache.cached_blocks = 0;
    // The failed blocks went with the rest (into the vault): a FLUSH failed for ever after a
    // power cycle on a full host disk (hostile round 18).
    v.cache.failed_blocks = 0;
    v.cache.destage_error = sim::Code::kOk;
  });
}

bool WriteCache::restore_vaulted(const VaultRecord& r) {
  VolumeRuntime* v = ctx_.volumes.find(r.volume_id);
  if (v == nullptr) return false;
  const auto [entry, inserted] = blocks_.try_emplace(key(v->id, r.block));
  Block& blk = *entry;
  if (!inserted && blk.version >= r.version) return true;  // a newer write of it is cached
  const Id o = pair_->owner(v->id);
  if (inserted) {
    ++v->cache.cached_blocks;
    if (o != 0) ++ctl(o).cached_blocks;
  }
  blk.data = r.data;
  blk.version = std::max(r.version, ++version_counter_);
  if (!blk.dirty) mark_dirty(*v, blk, r.block);
  if (o != 0) retry_destage_later(o);
  return true;
}

}  // namespace afasim::controller
