// perf::ReadCache and perf::StreamDetector — the controller's read cache with sequential
// detection and read-ahead (docs/performance-model.md "Read cache").
//
// ReadCache holds fixed-size segments of volumes, least recently used out first, up to a
// capacity. A segment is resident (its data is in DRAM) or filling (a back-end read or a
// read-ahead is bringing it in: a host read that needs it waits for that fill instead of
// issuing its own). Within a segment only the blocks read or written are held: 64 blocks of
// segment_bytes / 64, at least 4 KiB (64 KiB segments: 16 blocks of 4 KiB). A 4 KiB miss
// reads 4 KiB from the SSDs, so it brings in 4 KiB, not its whole segment. StreamDetector finds sequential streams per volume (several streams per
// volume, as several fio jobs or a database's scans give) and says what to read ahead so that
// a stream's reads find their data already resident or filling.
//
// The sizes are parameters (config/calibration/<system>.json): the spec sheet says the ISE's
// caching is tuned for I/O of 512 B to 1 MB; segment size, capacity, trigger and depth are
// stated assumptions. Not thread-safe.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "sim/action.h"
#include "sim/cache_line_allocator.h"
#include "sim/id_table.h"
#include "sim/prefetch.h"
#include "sim/slab.h"
#include "sim/status.h"

namespace afasim::perf {

struct ReadCacheOptions {
  std::int64_t segment_bytes = 64 << 10;       // power of two, 4 KiB..16 MiB
  std::int64_t capacity_bytes = 4LL << 30;     // >= segment_bytes
  sim::Status validate() const;
};

// What a host read finds in the cache.
struct CacheLookup {
  bool all_present = false;            // every segment resident or filling: no back-end read
  std::vector<std::uint32_t> fills;    // the fills still bringing in its segments (wait on them)
};

class ReadCache {
 public:
  // REQUIRES: options.validate() is ok.
  explicit ReadCache(ReadCacheOptions options);

  // Starts loading the table slot of the segment holding `offset` into the CPU cache (a
  // caller that will look it up after other work). Speed only: no state changes.
  void prefetch(std::uint64_t volume, std::int64_t offset) const {
    sim::prefetch(&table_[hash(Key{volume, offset >> segment_shift_}) & table_mask_]);
  }
  // Fill `fill` (start_fill's id) will be done soon: starts loading what fill_done() writes
  // of a one-segment fill, its node. Speed only.
  void prefetch_fill(std::uint32_t fill) const {
    if (fill & kNodeFill) sim::prefetch(&nodes_[static_cast<std::size_t>(fill & ~kNodeFill)], true);
  }
  // Looks up [offset, offset + length) of `volume` and refreshes the segments it finds.
  CacheLookup lookup(std::uint64_t volume, std::int64_t offset, std::int64_t length);
  // Marks the segments of [offset, offset + length) that are absent as filling under a new
  // fill id (returned), evicting the least recently used resident segments if full. The
  // caller reads them from the back end and calls fill_done(id) when they are in. 0: every
  // segment was resident or filling already (nothing to fill; fill_done(0) does nothing).
  std::uint32_t start_fill(std::uint64_t volume, std::int64_t offset, std::int64_t length);
  // The part of [offset, offset + length) a fill would have to read: from the first to the
  // last segment not held (for these bytes) and not filling, clipped to the range; {offset,
  // 0} when every segment is held or filling. Refreshes nothing.
  std::pair<std::int64_t, std::int64_t> unheld_span(std::uint64_t volume, std::int64_t offset, std::int64_t length) const;
  // The fill is in: its segments become resident; the waiters registered on it run now.
  // REQUIRES: fill is 0 or in progress.
  void fill_done(std::uint32_t fill);
  // Runs `waiter` when `fill` completes. REQUIRES: fill is in progress (as lookup() gave it).
  void wait(std::uint32_t fill, sim::Action waiter);
  // A host write of [offset, offset + length) puts the new data in the cache (resident).
  void write(std::uint64_t volume, std::int64_t offset, std::int64_t length);
  // Forgets the volume's segments (volume deleted).
  void drop_volume(std::uint64_t volume);

  std::int64_t resident_segments() const { return size_; }
  std::int64_t capacity_segments() const { return capacity_segments_; }
  const ReadCacheOptions& options() const { return options_; }

 private:
  // Segments live in a node pool linked into the LRU list by index, and are found through an
  // open-addressing table (linear probing, backward-shift deletion) of node indices: no heap
  // allocation per miss once the pool has grown to the cache's size.
  static constexpr std::int32_t kNone = -1;
  // A fill of one segment (most: a random read's) is named by its node, kNodeFill | index,
  // and takes a Fill entry only when a read waits on it (wait() moves the node to the
  // entry's id): a random read's miss touches no entry at its start or its end.
  static constexpr std::uint32_t kNodeFill = std::uint32_t{1} << 31;
  struct Key {
    std::uint64_t volume;
    std::int64_t segment;
    bool operator==(const Key& o) const { return volume == o.volume && segment == o.segment; }
  };
  struct Node {
    Key key{};
    std::uint32_t fill = 0;  // 0: resident; else its fill (a Fill id, or kNodeFill | index)
    std::int32_t prev = kNone, next = kNone;
    // The low 32 bits of hash(key), kept (in what was padding) so that an eviction finds the
    // victim's home slot without hashing its key again.
    std::uint32_t hash = 0;
    std::uint64_t blocks = 0;  // the segment's blocks held (bit i: block i), resident or filling
  };
  struct Fill {
    boost::container::small_vector<std::int32_t, 4> segments;  // its nodes (pinned while it is live); inline up to 4
    std::vector<sim::Action> waiters;
    bool live = false;
  };
  static std::size_t hash(const Key& k) {
    std::uint64_t x = k.volume * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(k.segment) * 0xBF58476D1CE4E5B9ULL;
    return static_cast<std::size_t>(x ^ (x >> 29));
  }
  // A table slot: the node and the low 32 bits of its key's hash (compared before the key,
  // and the home slot of backward-shift deletion, without touching the node).
  struct Slot {
    std::int32_t node = kNone;
    std::uint32_t hash = 0;
  };
  // Where a probe for an absent key ended: the empty slot at which inserting it goes, while
  // the table does not change (insert_absent follows it through the evictions before it).
  struct Absent {
    std::uint32_t hash = 0;  // low 32 bits of hash(key)
    std::uint32_t slot = 0;
  };
  // What a probe for a key found: its node and slot, or kNone and the empty slot that ended it.
  struct Probe {
    std::int32_t node;
    std::uint32_t slot;
  };
  // Probes for `k`, whose hash(k) has low 32 bits `h32`.
  Probe probe(const Key& k, std::uint32_t h32) const;
  std::int32_t find(const Key& k) const { return probe(k, static_cast<std::uint32_t>(hash(k))).node; }
  // The node holding `k`, or kNone with `absent` set to where its probe ended.
  std::int32_t find(const Key& k, Absent& absent) const {
    const auto h32 = static_cast<std::uint32_t>(hash(k));
    const Probe p = probe(k, h32);
    absent = Absent{h32, p.slot};
    return p.node;
  }
  // Takes `node` out of the table and the LRU list; returns the slot left empty. The caller
  // frees the node.
  std::size_t remove(std::int32_t node);
  void erase(std::int32_t node);
  void table_insert(std::int32_t node);
  void rehash(std::size_t buckets);
  void link_front(std::int32_t node);
  void unlink(std::int32_t node);
  void touch(std::int32_t node);
  // The bits of segment `segment`'s blocks that [offset, offset + length) covers.
  std::uint64_t blocks_of(std::int64_t segment, std::int64_t offset, std::int64_t length) const;
  void insert(const Key& k, std::uint64_t blocks);
  // Inserts `k`, absent as the probe `at` found it (the table unchanged since), holding
  // `blocks`; returns its node.
  std::int32_t insert_absent(const Key& k, Absent at, std::uint32_t fill, std::uint64_t blocks);
  // A node from the free list, or a new one; a node back to the free list.
  [[gnu::noinline]] std::int32_t new_node();
  [[gnu::noinline]] void free_node(std::int32_t node);
  bool take_blocks(std::int32_t found, std::uint64_t need);
  // start_fill of segments [first, last] (first < last) of [offset, offset + length).
  [[gnu::noinline]] std::uint32_t start_fill_span(std::uint64_t volume, std::int64_t offset, std::int64_t length,
                                                  std::int64_t first, std::int64_t last);
  // fill_done of a fill with an entry (several segments, or a read waited on it).
  [[gnu::noinline]] void fill_entry_done(std::uint32_t fill);
  // Removes the least recently used resident segment and returns its node (not yet freed: the
  // insert that evicts reuses it) and in `emptied` the slot it left, or kNone when every
  // segment is filling.
  std::int32_t evict_one(std::size_t& emptied);
  // insert_absent's eviction (see there): the victim, or kNone.
  std::int32_t evict_for(Absent& at);
  // insert_absent but for a full cache's one eviction; the node's part of both; the table
  // doubled (place's rare case), returning `n`.
  [[gnu::noinline]] std::int32_t insert_absent_slow(const Key& k, Absent at, std::uint32_t fill, std::uint64_t blocks);
  std::int32_t place(std::int32_t n, const Key& k, Absent at, std::uint32_t fill, std::uint64_t blocks);
  [[gnu::noinline]] std::int32_t rehash_for(std::int32_t n);

  ReadCacheOptions options_;
  int segment_shift_ = 16;
  int block_shift_ = 12;  // max(12, segment_shift_ - 6)
  std::int64_t capacity_segments_;
  std::vector<Node> nodes_;
  std::vector<std::int32_t> free_nodes_;
  std::vector<Slot> table_;  // size a power of two
  // table_.size() - 1 (rehash sets both): a probe's and an eviction's one load, where the
  // size took two and a shift.
  std::size_t table_mask_ = 0;
  std::int64_t size_ = 0;            // nodes in use
  std::int32_t head_ = kNone, tail_ = kNone;  // head: most recently used
  sim::Slab<Fill> fills_;  // by fill id; 0 is taken at construction, never a fill
  // The last segment lookup() found absent, and where its probe ended, while nothing has been
  // inserted or dropped since: start_fill of a read miss right after its lookup skips a second
  // probe of the table for it, and its insert a third.
  Key absent_{};
  Absent absent_at_{};
  bool absent_valid_ = false;
  // evict_one found every segment filling, and no fill has ended nor resident segment been
  // added since: there is nothing to evict.
  bool all_filling_ = false;
};

struct StreamOptions {
  int streams_per_volume = 8;          // sequential streams tracked per volume, 1..64
  int trigger_ios = 2;                 // back-to-back sequential reads that declare a stream, >= 1
  std::int64_t depth_bytes = 4 << 20;  // how far ahead of the stream the cache reads, >= 0
  std::int64_t max_io_bytes = 1 << 20; // largest back-end read-ahead request, > 0
  sim::Status validate() const;
};

// A range to read ahead: [offset, offset + length) of the volume. length 0: nothing.
struct ReadAhead {
  std::int64_t offset = 0;
  std::int64_t length = 0;
};

class StreamDetector {
 public:
  // REQUIRES: options.validate() is ok.
  explicit StreamDetector(StreamOptions options) : options_(options) {}

  // A host read of [offset, offset + length) of `volume` arrived. Returns what to read ahead
  // now: nothing for a random read or a stream whose window is still deep enough; else the
  // range from the end of what was read ahead to `depth_bytes` past this read, at most
  // max_io_bytes × 8 at once.
  ReadAhead on_read(std::uint64_t volume, std::int64_t offset, std::int64_t length);
  // A read of `volume` is coming: starts loading what every read of it compares (its streams'
  // next offsets) and replaces (their recency links). Speed only.
  void prefetch(std::uint64_t volume) const {
    const std::uint32_t* slot = slot_of_.find(volume);
    if (slot == nullptr || *slot == 0) return;
    const std::size_t base = (*slot - 1) * per_volume();
    for (std::size_t at = 0; at < per_volume(); at += kPerLine) sim::prefetch(&next_offset_[base + at]);
    for (std::size_t at = 0; at < per_volume(); at += kLinksPerLine) sim::prefetch(&links_[base + at]);
  }
  // The volume is gone: its streams' slot is free for another.
  void drop_volume(std::uint64_t volume);
  std::int64_t streams_detected() const { return streams_detected_; }

 private:
  static constexpr std::size_t kPerLine = 64 / sizeof(std::int64_t);
  // A stream's place in its volume's recency list (stream indices; streams_per_volume <= 64).
  struct Link {
    std::uint8_t older = 0, newer = 0;
  };
  static constexpr std::size_t kLinksPerLine = 64 / sizeof(Link);
  // Stream s of the volume in slot v is entry v × streams_per_volume + s of each array below
  // (a volume takes a slot at its first read, slot_of_; the arrays grow with the volumes read,
  // not with their ids: a volume id of a million took 272 bytes for each id below it). What a
  // random read compares and replaces (every stream's next offset; the recency links that name
  // the least recently used) sits in a line and a quarter per volume of eight streams, apart
  // from what only a stream's own reads use (its tail): a random read among 1,000 volumes
  // finds its volume's lines cold, and touched four a read when the four fields of eight
  // streams lay together.
  struct Tail {
    std::int64_t ahead_until = 0;  // read ahead up to here
    int run_ios = 0;
  };
  struct VolumeStreams {
    // Bit s: stream s is as a read that matched none created it (ahead_until == next_offset,
    // run_ios == 1); its Tail is stale until a read matches it.
    std::uint64_t fresh = 0;
    std::uint8_t count = 0;  // streams [0, count) are live, in the order they were created
    // The ends of the live streams' recency list (links_): the least and the most recently
    // created or continued. Both 0 while count is 0, so the first stream links to itself.
    // The list replaces a clock per stream whose least value named the victim (the first such
    // stream, had two been equal): each read stamped one stream with a clock that only grew,
    // so no two live streams had equal clocks, and the list's order is theirs.
    std::uint8_t oldest = 0, newest = 0;
  };
  std::size_t per_volume() const { return static_cast<std::size_t>(options_.streams_per_volume); }
  // The stream of volume `base / per_volume()` that a read of [offset, end) continues, or -1.
  int match(std::size_t base, const VolumeStreams& v, std::int64_t offset, std::int64_t length) const;
  // match()'s windows reach at most this many read lengths either side of a stream's end.
  static constexpr std::int64_t kReachLengths = 16;
  // Whether a read at `offset` lies within kReachLengths × `length` of next[0, count): false
  // means it continues none of those streams. REQUIRES: length >= 0.
  static bool near(const std::int64_t* next, int count, std::int64_t offset, std::int64_t length);
  // Stream s of the volume at `base` becomes its most recently used: link_newest for a stream
  // not in the list yet (just created), make_newest for one in it.
  void link_newest(std::size_t base, VolumeStreams& v, int s);
  void make_newest(std::size_t base, VolumeStreams& v, int s);
  // on_read of a volume's first read (its slot taken), of a read near a stream's end, and
  // the new stream a read that continues none starts.
  [[gnu::cold, gnu::noinline]] ReadAhead on_first_read(std::uint64_t volume, std::int64_t offset, std::int64_t length);
  [[gnu::noinline]] ReadAhead on_near_read(std::size_t base, VolumeStreams& v, std::int64_t offset, std::int64_t length);
  void start_stream(std::size_t base, VolumeStreams& v, std::int64_t end);
  // on_read of a read that continues stream s of the volume at `base`, ending at `end`.
  [[gnu::noinline]] ReadAhead continue_stream(std::size_t base, VolumeStreams& v, int s, std::int64_t end);
  StreamOptions options_;
  std::vector<std::int64_t, sim::CacheLineAllocator<std::int64_t>> next_offset_;  // where the next sequential read starts
  std::vector<Link, sim::CacheLineAllocator<Link>> links_;  // the live streams' recency list
  std::vector<Tail> tails_;
  std::vector<VolumeStreams> volumes_;  // by slot
  sim::IdTable<std::uint32_t> slot_of_;  // by volume id: its slot + 1; 0 (or no page): none yet
  std::vector<std::uint32_t> free_slots_;
  // The slot of a volume read for the first time.
  std::size_t add_volume(std::uint64_t volume);
  std::int64_t streams_detected_ = 0;
};

}  // namespace afasim::perf
