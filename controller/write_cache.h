// controller::WriteCache — the write-back cache and its mirror (docs/write-cache.md): blocks
// of 4 KiB per volume in their owner's cache with a copy in the peer's, destage by
// watermarks into the RAID engine, eviction of clean blocks, writes that wait for room, and
// what the controller pair needs of it (a controller lost, a takeover, the mirror rebuilt,
// the vault at power loss).
//
// The cache holds blocks in a hash table (sim::StableMap: lookups on every I/O); whenever an
// order matters (the destage queue after a failure, the vault's records) it follows the
// blocks' keys, never the table's iteration order (docs/architecture.md "Determinism").
//
// Not thread-safe (model thread).
#pragma once

#include <cstdint>
#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "controller/context.h"
#include "controller/io.h"
#include "raid/plan.h"
#include "sim/stable_map.h"

namespace afasim::controller {

class ControllerPair;
class IoOrchestrator;

// A block saved in a controller's vault flash at power loss.
struct VaultRecord {
  Id volume_id;
  std::int64_t block;
  std::uint64_t version;
  std::shared_ptr<std::uint8_t[]> data;
};

// A write-back write acknowledged once the cache has room.
struct CacheWaiter {
  Id volume_id;
  std::int64_t new_blocks;
  sim::Time ack_ns;
  sim::Time submitted;
  IoCallback done;
};

class WriteCache {
 public:
  static constexpr std::int64_t kBlockBytes = 4096;

  WriteCache(ArrayContext& ctx, std::int64_t capacity_blocks);
  // REQUIRES: called once, before any I/O.
  void wire(ControllerPair* pair, IoOrchestrator* io) {
    pair_ = pair;
    io_ = io;
  }

  std::int64_t capacity_bytes() const { return capacity_blocks_ * kBlockBytes; }
  std::int64_t dirty_blocks(Id c) const { return ctl(c).dirty_blocks; }
  std::int64_t cached_blocks(Id c) const { return ctl(c).cached_blocks; }
  std::int64_t dirty_bytes() const;
  // Bytes of payload its blocks hold in memory: with a payload, a dirty block's 4 KiB (a clean
  // one holds none: mark_clean); 0 without. Counts every block (a test's and a status's view).
  std::int64_t payload_bytes() const;

  // --- Host I/O (IoOrchestrator) --------------------------------------------------------
  // Puts a write into controller `c`'s cache and the peer's mirror; fills partial blocks
  // from the SSDs through `plan` (executed here). `new_blocks`: blocks that became dirty.
  sim::Status write_back(VolumeRuntime& v, Id c, const HostIo& io, raid::Plan& plan, std::int64_t& new_blocks);
  // Before a write-through of [offset, +length): cached blocks it touches take the new bytes
  // and go to the SSDs whole. Widens [lo, hi) to whole blocks where a partial block is cached
  // and returns the bytes to write there (a buffer of `plan`'s, or `data` unchanged).
  const std::uint8_t* merge_write_through(VolumeRuntime& v, Id c, std::int64_t offset, std::int64_t length,
                                          const std::uint8_t* data, std::int64_t& lo, std::int64_t& hi,
                                          raid::Plan& plan);
  // After the write-throughs merged since the last call were executed: `written`, their dirty
  // blocks are clean (the SSDs hold them); not, every block they touched is as it was before
  // (bytes, dirty, mirrored).
  void end_write_through(VolumeRuntime& v, bool written);
  // Overlays cached blocks on a read (copy) or checks them; true when every block was cached.
  bool read(VolumeRuntime& v, std::int64_t offset, std::int64_t length, std::uint8_t* out, bool copy);
  // Whether a block of [offset, +length) is cached without its bytes (clean: the SSDs hold
  // them, mark_clean), so that a read must take them from the SSDs. False without a payload.
  bool lacks_bytes(VolumeRuntime& v, std::int64_t offset, std::int64_t length);
  // Whether block `block` (4 KiB, of the volume) is cached with its bytes: a read takes it
  // from here, whatever the SSDs hold beneath.
  bool holds_bytes(const VolumeRuntime& v, std::int64_t block) {
    const Block* blk = v.cache.cached_blocks != 0 ? find(v.id, block) : nullptr;
    return blk != nullptr && blk->data;
  }
  // Calls f(offset, length) -> sim::Status for each run of byte range [offset, end) whose 4 KiB
  // blocks the cache does not hold with their bytes (what must come from the SSDs), runs cut at
  // multiples of `cut_bytes` (an extent: one RAID plan each). Stops at f's first error.
  template <typename F>
  sim::Status for_each_uncached_run(const VolumeRuntime& v, std::int64_t offset, std::int64_t end,
                                    std::int64_t cut_bytes, F&& f) {
    while (offset < end) {
      std::int64_t run_end = std::min(end, (offset / kBlockBytes + 1) * kBlockBytes);
      if (!holds_bytes(v, offset / kBlockBytes)) {
        while (run_end < end && run_end % cut_bytes != 0 && !holds_bytes(v, run_end / kBlockBytes))
          run_end = std::min(end, run_end + kBlockBytes);
        AFASIM_RETURN_IF_ERROR(f(offset, run_end - offset));
      }
      offset = run_end;
    }
    return sim::Status::ok();
  }
  // Whether a new write of `new_blocks` must wait for room; whether the queue of waiting
  // writes is full (the write then fails with kUnavailable); queues a waiting write.
  bool must_wait(Id c, std::int64_t new_blocks) const;
  bool waiting_full(Id c) const { return ctl(c).waiting.size() >= ctx_.options.cache.max_waiting_writes; }
  void add_waiter(Id c, CacheWaiter w);
  // A write of `block` of `volume` is coming: starts loading its index slot. Speed only.
  void prefetch(Id volume, std::int64_t block) const {
    if (volume >= 0 && volume < (Id{1} << 24) - 1 && block >= 0 && block < (std::int64_t{1} << 40))
      blocks_.prefetch(key(volume, block));
  }
  // Destages every dirty block of `v` now; `done` runs when none of its destages is in flight
  // any more (at once if none is).
  void flush(VolumeRuntime& v, Id c, sim::InlineFunction<void(sim::Time)> done);
  void drop_range(VolumeRuntime& v, std::int64_t first_block, std::int64_t end_block, Id c);
  void evict_clean(Id c);
  void pump_destage(Id c);
  void destage_all();

  // --- The controller pair --------------------------------------------------------------
  void recount();
  void controller_stopped(Id c) { ctl(c).destages = 0; }
  // A new owner took `v`: the old owner's clean blocks were in its DRAM only.
  void drop_clean(VolumeRuntime& v);
  // Controller `c` went down: its waiting writes (in the cache and its mirror) are handed to
  // `park`, its DRAM is gone. Returns the dirty bytes lost (no current copy on the peer).
  std::int64_t controller_lost(Id c, bool peer_serving, const std::function<void(CacheWaiter&)>& park);
  // Nothing the survivor holds is mirrored any more (its peer is gone).
  void forget_mirrors();
  // The mirror is rebuilt: every dirty block has a current copy on the peer.
  void mirror_all();
  // Fails every waiting write with `status` (power loss).
  void fail_waiters(const sim::Status& status);
  // What each controller (index c-1) vaults: its own dirty blocks and current copies of its
  // peer's, by (volume, block). `holds[c-1]`: whether controller c's DRAM holds anything.
  std::vector<std::vector<VaultRecord>> vault_records(const std::vector<bool>& holds) const;
  // A vaulted block whose replay into the pool failed (a full host disk) goes back into the
  // cache dirty: reads see it, the destage retries it once a second and a FLUSH fails until
  // it is written (it was dropped: hostile round 18). False when its volume is gone.
  bool restore_vaulted(const VaultRecord& r);
  // DRAM is gone (power off).
  void clear();
  // Marks lost (ArrayContext::lost_data) every dirty block whose current bytes are not on the
  // SSDs (on_ssds) and that no vault in `vaults` holds at its version; returns how many. Before
  // clear() at a power-off (both vaults), and at a stop after destage_all (none: what is still
  // dirty, its destage failed or no controller serves its volume).
  std::int64_t mark_lost_unless_vaulted(std::initializer_list<const std::vector<VaultRecord>*> vaults);

  // REQUIRES: volume < 2^24 - 1, 0 <= block < 2^40 (4 EiB of 4 KiB blocks).
  static std::uint64_t key(Id volume, std::int64_t block) {
    AFASIM_ASSERT(volume >= 0 && volume < (Id{1} << 24) - 1 && block >= 0 &&
                      block < (std::int64_t{1} << 40),
                  "WriteCache: a volume id or block beyond the cache's key");
    return (static_cast<std::uint64_t>(volume) << 40) | static_cast<std::uint64_t>(block);
  }

 private:
  struct Block {
    std::shared_ptr<std::uint8_t[]> data;  // kBlockBytes bytes; null without payload
    std::uint64_t version = 0;
    std::uint64_t queued = 0;              // seq of its live FIFO entry (0: none)
    std::uint64_t mirrored_version = 0;    // the peer's copy (0: none); current when == version
    std::uint64_t destaging_version = 0;   // version an in-flight destage writes (0: none)
    bool dirty = false;
    bool destage_failed = false;  // its last destage's payload write failed: still dirty, retried
  };
  // Whether a dirty block's current bytes are on the SSDs already: a destage moves its bytes
  // when it starts (its completion is timing), so one of this version under way has, unless
  // it failed. Such a block is not lost with the DRAM that holds it.
  static bool on_ssds(const Block& b) { return b.destaging_version == b.version && !b.destage_failed; }
  struct PerController {
    std::int64_t dirty_blocks = 0, cached_blocks = 0;  // its own volumes'
    int destages = 0;                                   // destage operations in flight
    std::deque<CacheWaiter> waiting;
    std::int64_t waiting_blocks = 0;
    std::size_t destage_cursor = 0;
    // After a destage failed, the next pump waits until then (a full host disk is retried once
    // a second, not in a loop); a FLUSH or the stop retries at once.
    sim::Time destage_retry_at = 0;
    // The last age check found blocks older than the age (aged_seq_) that this controller
    // has not destaged yet: the pump below the low watermark looks for them.
    bool aged_left = false;
  };
  struct DestageOp {
    Id controller;
    std::uint64_t epoch;
    Id volume_id;
    std::int64_t first_block;
    std::vector<std::uint64_t> versions;
    bool failed = false;  // its payload write failed: the blocks stay dirty
  };

  PerController& ctl(Id c) { return ctl_[static_cast<std::size_t>(c - 1)]; }
  const PerController& ctl(Id c) const { return ctl_[static_cast<std::size_t>(c - 1)]; }
  Block* find(Id volume, std::int64_t block);
  // Keys of the cached blocks that satisfy `pred(key, block)`, ascending.
  template <typename Pred>
  std::vector<std::uint64_t> sorted_keys(Pred&& pred) const;
  void mark_dirty(VolumeRuntime& v, Block& b, std::int64_t block);
  // The block's version is on the SSDs: clean, and (`drop_bytes`) without its bytes.
  void mark_clean(VolumeRuntime& v, Block& b, std::int64_t block, bool drop_bytes = true);
  void enqueue(VolumeRuntime& v, Block& b, std::int64_t block, bool dirty);
  void compact_fifo(VolumeRuntime& v, sim::Ring<CacheFifoEntry>& fifo, bool dirty);
  void drop_block(VolumeRuntime& v, std::int64_t block, Id c);
  // The write's blocks, in order (a StableMap's objects do not move): what fill_partial found
  // or added, so that write_back does not search for them again.
  using WriteBlocks = boost::container::small_vector<Block*, 4>;
  // Adds the blocks of `io` not cached yet and plans the reads that fill partial ones; `blocks`
  // gets every block of the write. On an error, the blocks it added are dropped again.
  sim::Status fill_partial(VolumeRuntime& v, Id c, const HostIo& io, raid::Plan& plan, WriteBlocks& blocks);
  // Adds to `plan` the read of a whole cached block (its extent is allocated) into `out`.
  sim::Status plan_block_read(VolumeRuntime& v, std::int64_t block, std::uint8_t* out, raid::Plan& plan);
  // With a payload, a cached block without bytes (clean: mark_clean dropped them) gets a buffer
  // again, its bytes read back from the SSDs when `read_back` (a write covering the whole block
  // needs none). Bytes only: the timing model charges no read. On an error the block stays
  // without bytes. Without a payload, or with bytes, nothing.
  sim::Status refill(VolumeRuntime& v, std::int64_t block, Block& blk, bool read_back);
  // Starts one destage (of `only`'s blocks if given); false when there was nothing to destage.
  // Only blocks whose FIFO entry's seq is below `before_seq` (those older than the age).
  bool destage_one(Id c, VolumeRuntime* only = nullptr, std::uint64_t before_seq = kAnySeq);
  bool destage_from(Id c, VolumeRuntime& v, std::uint64_t before_seq = kAnySeq);
  static constexpr std::uint64_t kAnySeq = ~std::uint64_t{0};
  // The age timer (CacheOptions::destage_age_ns): armed while a serving controller holds
  // dirty blocks; each check marks the time and starts the destage of what is older.
  void arm_age_check();
  void age_check();
  bool destage_run(Id c, VolumeRuntime& v, std::int64_t block);
  // A RAID 5 destage that met an unreadable block: the row of `block` as a full-stripe write
  // (the cache's blocks, the rest read from the SSDs), into `plan`. kIoError when the rest of
  // the row cannot be read either.
  sim::Status destage_whole_row(VolumeRuntime& v, raid::Extent& e, std::int64_t block, raid::Plan& plan);
  // destage_whole_row's reads again, block by block, of the row (volume byte `first`) that
  // the cache lacks into `bytes`: a block no member can give is left as zeros and its extent
  // byte offset appended to `lost`; each read's operations are appended to `reads` (timing).
  // Errors other than kIoError are returned.
  sim::Status read_row_around_lost(VolumeRuntime& v, raid::Extent& e, std::int64_t first, std::uint8_t* bytes,
                                   raid::Plan& reads, std::vector<std::int64_t>& lost);
  std::size_t take_destage_slot(Id c, VolumeRuntime& v, std::int64_t first, std::int64_t end);
  void destage_done(std::size_t slot);
  // Runs the FLUSHes of `volume_id` that wait for its destages.
  void release_flushes(Id volume_id);
  void admit_waiters(Id c);

  ArrayContext& ctx_;
  ControllerPair* pair_ = nullptr;
  IoOrchestrator* io_ = nullptr;
  sim::StableMap<Block> blocks_;  // by key(volume, block)
  std::int64_t capacity_blocks_ = 0;
  std::uint64_t version_counter_ = 0;
  std::uint64_t fifo_seq_ = 0;  // last CacheFifoEntry::seq handed out
  // Age checks' marks, oldest first: every FIFO entry with a seq below `seq` was queued at or
  // before `at`. Entries below aged_seq_ were older than the age at the last check (0: none).
  struct AgeMark {
    std::uint64_t seq;
    sim::Time at;
  };
  std::deque<AgeMark> age_marks_;
  std::uint64_t aged_seq_ = 0;
  bool age_check_armed_ = false;
  std::array<PerController, 2> ctl_;
  struct FlushWaiter {
    Id volume_id;
    sim::InlineFunction<void(sim::Time)> done;
  };
  // Counts a destage's payload write (failed: the blocks stay dirty and a FLUSH fails until a
  // later destage of them succeeds); says so once per episode.
  void note_destage(VolumeRuntime& v, std::int64_t first, std::int64_t end, const sim::Status& st);
  // A pump of this controller's destage in a second, not before.
  void retry_destage_later(Id c);
  std::vector<DestageOp> destage_ops_;
  std::vector<FlushWaiter> flush_waiters_;  // FLUSHes waiting for their volume's destages
  std::vector<std::size_t> free_destage_ops_;
  raid::Plan destage_plan_;
  // The cached blocks a write-through merged, as they were: end_write_through.
  struct WriteThroughBlock {
    std::int64_t block;
    bool dirty;     // it held acknowledged bytes not yet on the SSDs
    bool mirrored;  // the peer held its copy
    std::shared_ptr<std::uint8_t[]> before;  // its bytes before the merge (null: it had none)
  };
  std::vector<WriteThroughBlock> write_through_blocks_;
};

template <typename Pred>
inline std::vector<std::uint64_t> WriteCache::sorted_keys(Pred&& pred) const {
  std::vector<std::uint64_t> keys;
  blocks_.for_each([&](std::uint64_t k, const Block& blk) {
    if (pred(k, blk)) keys.push_back(k);
  });
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace afasim::controller
