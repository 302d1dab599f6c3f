#include "perf/read_cache.h"

#include <algorithm>
#include <bit>

#include "sim/assert.h"

namespace afasim::perf {

sim::Status ReadCacheOptions::validate() const {
  if (segment_bytes < 4096 || segment_bytes > (16 << 20) || !std::has_single_bit(static_cast<std::uint64_t>(segment_bytes)))
    return sim::invalid_argument("read cache: segment_bytes must be a power of two, 4 KiB..16 MiB");
  if (capacity_bytes < segment_bytes) return sim::invalid_argument("read cache: capacity_bytes must be >= segment_bytes");
  return sim::Status::ok();
}

ReadCache::ReadCache(ReadCacheOptions options)
    : options_(options),
      segment_shift_(std::countr_zero(static_cast<std::uint64_t>(options.segment_bytes))),
      block_shift_(std::max(12, segment_shift_ - 6)),
      capacity_segments_(options.capacity_bytes / options.segment_bytes) {
  AFASIM_ASSERT(options_.validate().is_ok(), "perf::ReadCache built from invalid options");
  (void)fills_.acquire(kNodeFill);  // fill id 0 means resident: never handed out
  rehash(64);
}

inline ReadCache::Probe ReadCache::probe(const Key& k, std::uint32_t h32) const {
  const std::size_t mask = table_mask_;
  for (std::size_t i = h32 & mask;; i = (i + 1) & mask) {
    const Slot& slot = table_[i];
    if ((slot.node == kNone) || (slot.hash == h32 && nodes_[static_cast<std::size_t>(slot.node)].key == k))
      return Probe{slot.node, static_cast<std::uint32_t>(i)};
  }
}

[[gnu::hot]] void ReadCache::table_insert(std::int32_t node) {
  const std::size_t mask = table_mask_;
  const std::uint32_t h = nodes_[static_cast<std::size_t>(node)].hash;
  std::size_t i = h & mask;
  while (table_[i].node != kNone) i = (i + 1) & mask;
  table_[i] = Slot{node, h};
}

void ReadCache::rehash(std::size_t buckets) {
  AFASIM_ASSERT(buckets <= (std::size_t{1} << 32), "perf::ReadCache: table beyond 2^32 slots");
  table_.assign(buckets, Slot{});
  table_mask_ = buckets - 1;
  for (std::int32_t n = head_; n != kNone; n = nodes_[static_cast<std::size_t>(n)].next) table_insert(n);
}

// Inline: remove (an eviction) and touch (a hit) are its callers, once per read each.
inline void ReadCache::unlink(std::int32_t node) {
  Node& n = nodes_[static_cast<std::size_t>(node)];
  if (n.prev != kNone) nodes_[static_cast<std::size_t>(n.prev)].next = n.next;
  else head_ = n.next;
  if (n.next != kNone) nodes_[static_cast<std::size_t>(n.next)].prev = n.prev;
  else tail_ = n.prev;
  n.prev = n.next = kNone;
}

// Inline (as evict_one) into insert_absent, whose miss path it is: a call apiece saved and
// restored registers (Callgrind: 5,585.0 -> 5,558.5 instructions per read with both).
[[gnu::always_inline]] inline std::size_t ReadCache::remove(std::int32_t node) {
  // Backward-shift deletion: later entries of the probe run move into the hole (their home
  // slot from the stored hash bits: the table is at most 2^32 slots).
  const std::size_t mask = table_mask_;
  std::size_t i = nodes_[static_cast<std::size_t>(node)].hash & mask;
  while (table_[i].node != node) i = (i + 1) & mask;
  for (std::size_t j = (i + 1) & mask; table_[j].node != kNone; j = (j + 1) & mask) {
    const std::size_t home = table_[j].hash & mask;
    // Move table_[j] into the hole at i unless its home lies cyclically in (i, j].
    if (((j - home) & mask) >= ((j - i) & mask)) {
      table_[i] = table_[j];
      i = j;
    }
  }
  table_[i] = Slot{};
  unlink(node);
  --size_;
  return i;
}

void ReadCache::erase(std::int32_t node) {
  (void)remove(node);
  free_node(node);
}

void ReadCache::link_front(std::int32_t node) {
  Node& n = nodes_[static_cast<std::size_t>(node)];
  n.prev = kNone;
  n.next = head_;
  if (head_ != kNone) nodes_[static_cast<std::size_t>(head_)].prev = node;
  head_ = node;
  if (tail_ == kNone) tail_ = node;
}

void ReadCache::touch(std::int32_t node) {
  if (node == head_) return;
  unlink(node);
  link_front(node);
}

inline std::uint64_t ReadCache::blocks_of(std::int64_t segment, std::int64_t offset, std::int64_t length) const {
  const std::int64_t start = segment << segment_shift_;
  const std::int64_t lo = std::max(offset, start) - start;
  const std::int64_t hi = std::min(offset + std::max<std::int64_t>(length, 1), start + options_.segment_bytes) - start;
  const int first = static_cast<int>(lo >> block_shift_);
  const int count = static_cast<int>((hi - 1) >> block_shift_) - first + 1;
  return (count >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1) << first;
}

[[gnu::hot]] CacheLookup ReadCache::lookup(std::uint64_t volume, std::int64_t offset, std::int64_t length) {
  CacheLookup out;
  out.all_present = true;
  const std::int64_t first = offset >> segment_shift_;
  const std::int64_t last = (offset + std::max<std::int64_t>(length, 1) - 1) >> segment_shift_;
  for (std::int64_t s = first; s <= last; ++s) {
    Absent at;
    const std::int32_t n = find(Key{volume, s}, at);
    if (n == kNone) {
      out.all_present = false;
      absent_ = Key{volume, s};
      absent_at_ = at;
      absent_valid_ = true;
      continue;
    }
    touch(n);
    const std::uint64_t need = blocks_of(s, offset, length);
    if ((nodes_[static_cast<std::size_t>(n)].blocks & need) != need) {  // the segment, not these blocks
      out.all_present = false;
      continue;
    }
    const std::uint32_t fill = nodes_[static_cast<std::size_t>(n)].fill;
    if (fill != 0 && std::find(out.fills.begin(), out.fills.end(), fill) == out.fills.end()) out.fills.push_back(fill);
  }
  return out;
}

std::pair<std::int64_t, std::int64_t> ReadCache::unheld_span(std::uint64_t volume, std::int64_t offset,
                                                              std::int64_t length) const {
  const std::int64_t first = offset >> segment_shift_;
  const std::int64_t last = (offset + std::max<std::int64_t>(length, 1) - 1) >> segment_shift_;
  std::int64_t lo = -1, hi = -1;
  for (std::int64_t s = first; s <= last; ++s) {
    const std::int32_t n = find(Key{volume, s});
    const std::uint64_t need = blocks_of(s, offset, length);
    const bool held = n != kNone && (nodes_[static_cast<std::size_t>(n)].fill != 0 ||
                                     (nodes_[static_cast<std::size_t>(n)].blocks & need) == need);
    if (held) continue;
    if (lo < 0) lo = s;
    hi = s;
  }
  if (lo < 0) return {offset, 0};
  const std::int64_t from = std::max(offset, lo << segment_shift_);
  const std::int64_t to = std::min(offset + length, (hi + 1) << segment_shift_);
  return {from, to - from};
}

[[gnu::always_inline]] inline std::int32_t ReadCache::evict_one(std::size_t& emptied) {
  // Every segment is filling (reads larger than the cache in flight): none can go until a
  // fill is done or a resident segment is added, so do not walk the list again meanwhile.
  // (Each insert walked every pinned node: one 4 GiB read took 6.5 s, 100 GiB never ended.)
  if (all_filling_) return kNone;
  // The least recently used segment that is not filling (a fill in flight is pinned).
  for (std::int32_t n = tail_; n != kNone; n = nodes_[static_cast<std::size_t>(n)].prev)
    if (nodes_[static_cast<std::size_t>(n)].fill == 0) {
      emptied = remove(n);
      // The next victims are cold: start loading the new tail's table slot and the node
      // before it now, so that the next eviction (a few µs of simulation later) finds them in
      // the CPU cache. Speed only: nothing here changes what is evicted.
      if (tail_ != kNone) {
        const Node& t = nodes_[static_cast<std::size_t>(tail_)];
        sim::prefetch(&table_[t.hash & table_mask_]);
        if (t.prev != kNone) sim::prefetch(&nodes_[static_cast<std::size_t>(t.prev)]);
      }
      return n;
    }
  all_filling_ = true;
  return kNone;
}

void ReadCache::insert(const Key& k, std::uint64_t blocks) {
  Absent at;
  const std::int32_t found = find(k, at);
  if (found != kNone) {
    touch(found);
    nodes_[static_cast<std::size_t>(found)].blocks |= blocks;
    return;
  }
  insert_absent(k, at, 0, blocks);
}

// Out of line, as free_node: a full cache's insert reuses the one node it evicted and comes
// to neither (their vector growth would make it save registers).
void ReadCache::free_node(std::int32_t node) { free_nodes_.push_back(node); }

std::int32_t ReadCache::new_node() {
  if (!free_nodes_.empty()) {
    const std::int32_t n = free_nodes_.back();
    free_nodes_.pop_back();
    return n;
  }
  AFASIM_ASSERT(nodes_.size() < kNodeFill, "perf::ReadCache: more than 2^31 segments");
  nodes_.emplace_back();
  return static_cast<std::int32_t>(nodes_.size() - 1);
}

// One eviction for insert_absent: the victim (or kNone), with `at` moved to the slot the
// eviction emptied when that slot lies between k's home and the probe's end. An eviction
// empties one slot, the only one it leaves empty that was not: k goes there instead of the
// probe's end, as a new probe from the home would find.
[[gnu::always_inline]] inline std::int32_t ReadCache::evict_for(Absent& at) {
  std::size_t emptied = 0;
  const std::int32_t victim = evict_one(emptied);
  if (victim == kNone) return kNone;
  const std::size_t mask = table_mask_;
  const std::size_t home = at.hash & mask;
  if (((emptied - home) & mask) < ((at.slot - home) & mask)) at.slot = static_cast<std::uint32_t>(emptied);
  return victim;
}

// insert_absent's node `n`, taken out of the table and the LRU list, holds `k` now.
[[gnu::always_inline]] inline std::int32_t ReadCache::place(std::int32_t n, const Key& k, Absent at, std::uint32_t fill,
                                                            std::uint64_t blocks) {
  Node& node = nodes_[static_cast<std::size_t>(n)];
  node.key = k;
  node.fill = fill;
  if (fill == 0) all_filling_ = false;
  node.blocks = blocks;
  node.hash = at.hash;
  link_front(n);
  ++size_;
  if (static_cast<std::size_t>(size_) * 2 > table_mask_ + 1) return rehash_for(n);
  table_[at.slot] = Slot{n, at.hash};
  return n;
}

std::int32_t ReadCache::rehash_for(std::int32_t n) {
  rehash(table_.size() * 2);
  return n;
}

// A full cache's insert (every read miss once the cache has filled) evicts one segment and
// reuses its node. Every other case (the cache not full, every segment filling, or over its
// capacity after reads larger than it) goes to insert_absent_slow, so that this path calls
// nothing but in tail position and saves no registers.
[[gnu::hot]] std::int32_t ReadCache::insert_absent(const Key& k, Absent at, std::uint32_t fill,
                                                   std::uint64_t blocks) {
  if (size_ != capacity_segments_ || all_filling_) return insert_absent_slow(k, at, fill, blocks);
  absent_valid_ = false;
  const std::int32_t n = evict_for(at);
  // Every segment filling (evict_one has set all_filling_): the slow path takes a new node.
  if (n == kNone) return insert_absent_slow(k, at, fill, blocks);
  return place(n, k, at, fill, blocks);
}

std::int32_t ReadCache::insert_absent_slow(const Key& k, Absent at, std::uint32_t fill, std::uint64_t blocks) {
  absent_valid_ = false;
  // Back to the capacity: after reads larger than the cache end, their segments go now. The
  // last node evicted is the one reused (as freeing it and taking the free list's last did).
  std::int32_t n = kNone;
  while (size_ >= capacity_segments_ && !all_filling_) {
    const std::int32_t victim = evict_for(at);
    if (victim == kNone) break;
    if (n != kNone) free_node(n);
    n = victim;
  }
  if (n == kNone) n = new_node();
  return place(n, k, at, fill, blocks);
}

// A segment start_fill found: refreshed, and `need` added to its blocks. True when it must be
// filled for them: they were not all held and no fill is in progress (with one, they come in
// with it — an approximation of when: the other fill's end).
bool ReadCache::take_blocks(std::int32_t found, std::uint64_t need) {
  touch(found);
  Node& node = nodes_[static_cast<std::size_t>(found)];
  const bool held = (node.blocks & need) == need;
  node.blocks |= need;
  return !held && node.fill == 0;
}

[[gnu::hot]] std::uint32_t ReadCache::start_fill(std::uint64_t volume, std::int64_t offset, std::int64_t length) {
  const std::int64_t first = offset >> segment_shift_;
  const std::int64_t last = (offset + std::max<std::int64_t>(length, 1) - 1) >> segment_shift_;
  if (first != last) return start_fill_span(volume, offset, length, first, last);
  // One segment (a random read's): the fill is its node alone (kNodeFill).
  const Key k{volume, first};
  const std::uint64_t need = blocks_of(first, offset, length);
  Absent at = absent_at_;
  const std::int32_t found = absent_valid_ && k == absent_ ? kNone : find(k, at);
  if (found != kNone) {
    if (!take_blocks(found, need)) return 0;
    Node& node = nodes_[static_cast<std::size_t>(found)];
    node.fill = kNodeFill | static_cast<std::uint32_t>(found);
    return node.fill;
  }
  const std::int32_t n = insert_absent(k, at, 0, need);
  const std::uint32_t id = kNodeFill | static_cast<std::uint32_t>(n);
  nodes_[static_cast<std::size_t>(n)].fill = id;
  return id;
}

// Out of line: a random read's fill is one segment (start_fill), and this loop's registers
// would be saved for it.
std::uint32_t ReadCache::start_fill_span(std::uint64_t volume, std::int64_t offset, std::int64_t length,
                                         std::int64_t first, std::int64_t last) {
  const std::uint32_t id = fills_.acquire(kNodeFill);
  fills_[id].live = true;
  fills_[id].segments.clear();
  for (std::int64_t s = first; s <= last; ++s) {
    const Key k{volume, s};
    const std::uint64_t need = blocks_of(s, offset, length);
    Absent at = absent_at_;
    const std::int32_t found = absent_valid_ && k == absent_ ? kNone : find(k, at);
    if (found != kNone) {
      if (take_blocks(found, need)) {
        nodes_[static_cast<std::size_t>(found)].fill = id;
        fills_[id].segments.push_back(found);
      }
      continue;
    }
    fills_[id].segments.push_back(insert_absent(k, at, id, need));
  }
  if (!fills_[id].segments.empty()) return id;
  fills_[id].live = false;
  fills_.release(id);
  return 0;
}

[[gnu::hot]] void ReadCache::fill_done(std::uint32_t fill) {
  if (fill == 0) return;
  all_filling_ = false;  // its segments can go now
  if (fill & kNodeFill) {
    const auto n = static_cast<std::size_t>(fill & ~kNodeFill);
    AFASIM_ASSERT(n < nodes_.size(), "perf::ReadCache: fill_done of no fill");
    std::uint32_t& node_fill = nodes_[n].fill;
    if (node_fill == fill) {  // nobody waited: the segment is resident now
      node_fill = 0;
      return;
    }
    fill = node_fill;  // a read waited on it: the entry wait() gave it
  }
  fill_entry_done(fill);
}

// Out of line: a random read's fill is its node's alone and nobody waits on it (above); the
// entry's waiters made fill_done save registers for every read.
void ReadCache::fill_entry_done(std::uint32_t fill) {
  AFASIM_ASSERT(fill < fills_.size() && fills_[fill].live, "perf::ReadCache: fill_done of no fill");
  // A filling node is pinned (not evicted, not dropped) until its fill is done.
  for (const std::int32_t n : fills_[fill].segments)
    if (nodes_[static_cast<std::size_t>(n)].fill == fill) nodes_[static_cast<std::size_t>(n)].fill = 0;
  std::vector<sim::Action> waiters = std::move(fills_[fill].waiters);
  fills_[fill].waiters.clear();
  fills_[fill].live = false;
  fills_.release(fill);
  for (auto& w : waiters) w();
}

void ReadCache::wait(std::uint32_t fill, sim::Action waiter) {
  if (fill & kNodeFill) {
    const auto n = static_cast<std::size_t>(fill & ~kNodeFill);
    AFASIM_ASSERT(n < nodes_.size() && nodes_[n].fill != 0, "perf::ReadCache: waiting on no fill");
    if (nodes_[n].fill == fill) {  // the first waiter: the fill takes an entry
      const std::uint32_t id = fills_.acquire(kNodeFill);
      fills_[id].live = true;
      fills_[id].segments.assign(1, static_cast<std::int32_t>(n));
      nodes_[n].fill = id;
    }
    fill = nodes_[n].fill;
  }
  AFASIM_ASSERT(fill > 0 && fill < fills_.size() && fills_[fill].live, "perf::ReadCache: waiting on no fill");
  fills_[fill].waiters.push_back(std::move(waiter));
}

void ReadCache::write(std::uint64_t volume, std::int64_t offset, std::int64_t length) {
  const std::int64_t first = offset >> segment_shift_;
  const std::int64_t last = (offset + std::max<std::int64_t>(length, 1) - 1) >> segment_shift_;
  for (std::int64_t s = first; s <= last; ++s) insert(Key{volume, s}, blocks_of(s, offset, length));
}

void ReadCache::drop_volume(std::uint64_t volume) {
  absent_valid_ = false;  // an erase moves slots: where lookup's probe ended may be taken
  for (std::int32_t n = head_; n != kNone;) {
    const Node& node = nodes_[static_cast<std::size_t>(n)];
    const std::int32_t next = node.next;
    if (node.key.volume == volume && node.fill == 0) erase(n);
    n = next;
  }
}

sim::Status StreamOptions::validate() const {
  if (streams_per_volume < 1 || streams_per_volume > 64) return sim::invalid_argument("read-ahead: streams_per_volume must be 1..64");
  if (trigger_ios < 1) return sim::invalid_argument("read-ahead: trigger_ios must be >= 1");
  if (depth_bytes < 0) return sim::invalid_argument("read-ahead: depth_bytes must be >= 0");
  if (max_io_bytes <= 0) return sim::invalid_argument("read-ahead: max_io_bytes must be > 0");
  return sim::Status::ok();
}

// A read continues a stream if it starts where the stream's last read ended, or near there:
// a stream's reads overtake each other at queue depth > 1, and several jobs reading the same
// region in step land just behind its end. A stream of one read (fresh) is continued only by
// a read that starts at its end or overlaps that end: with a tolerance of many reads behind,
// the eight streams of a volume under random 4 KiB reads were "continued" by chance once in
// ~2,000 reads, each declaring a stream and reading 4 MiB ahead (a one-pass random read of
// 1 GiB read 500 MiB ahead and found 19 % of its reads cached). A live stream is continued by
// a read up to kReachLengths (16) of its lengths behind or ahead of its end, never further
// ahead than what was read ahead for it: a random read that lands in the read-ahead window is
// a cache hit, not the stream moving there.
//
// So every window lies within kReachLengths lengths of its stream's end, and a read farther
// than that from every stream's end matches none: a random read nearly always is, and on_read
// finds it with near(), one subtraction and comparison per stream, before match reads a rule.
int StreamDetector::match(std::size_t base, const VolumeStreams& v, std::int64_t offset, std::int64_t length) const {
  const std::int64_t* const next = &next_offset_[base];
  for (int s = 0; s < v.count; ++s) {
    const std::int64_t n = next[s];
    if (offset == n) return s;
    if ((v.fresh >> s & 1) != 0) {
      if (offset >= n - length && offset < n) return s;
      continue;
    }
    if (offset <= n - length * kReachLengths) continue;
    if (offset < std::min(tails_[base + static_cast<std::size_t>(s)].ahead_until, n + length * kReachLengths)) return s;
  }
  return -1;
}

bool StreamDetector::near(const std::int64_t* next, int count, std::int64_t offset, std::int64_t length) {
  // |offset - n| <= reach  <=>  offset - n + reach in [0, 2 reach], one unsigned comparison
  // (offsets and lengths are far below 2^58: no term wraps past the range it is compared with).
  const std::uint64_t reach = static_cast<std::uint64_t>(length) * kReachLengths;
  const std::uint64_t shifted = static_cast<std::uint64_t>(offset) + reach;
  bool any = false;
#pragma GCC unroll 4
  for (int s = 0; s < count; ++s) any |= shifted - static_cast<std::uint64_t>(next[s]) <= 2 * reach;
  return any;
}

std::size_t StreamDetector::add_volume(std::uint64_t volume) {
  std::size_t slot = volumes_.size();
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    volumes_.resize(slot + 1);
    next_offset_.resize(volumes_.size() * per_volume());
    links_.resize(volumes_.size() * per_volume());
    tails_.resize(volumes_.size() * per_volume());
  }
  volumes_[slot] = {};
  slot_of_.acquire(volume) = static_cast<std::uint32_t>(slot + 1);
  return slot;
}

void StreamDetector::drop_volume(std::uint64_t volume) {
  const std::uint32_t* slot = slot_of_.find(volume);
  if (slot == nullptr || *slot == 0) return;
  volumes_[*slot - 1] = {};
  free_slots_.push_back(*slot - 1);
  slot_of_.release(volume);
}

inline void StreamDetector::link_newest(std::size_t base, VolumeStreams& v, int s) {
  Link* const links = &links_[base];
  links[s].older = v.newest;
  links[v.newest].newer = static_cast<std::uint8_t>(s);
  v.newest = static_cast<std::uint8_t>(s);
}

inline void StreamDetector::make_newest(std::size_t base, VolumeStreams& v, int s) {
  if (s == v.newest) return;
  Link* const links = &links_[base];
  const Link l = links[s];
  if (s == v.oldest) {
    v.oldest = l.newer;
  } else {
    links[l.older].newer = l.newer;
  }
  links[l.newer].older = l.older;
  link_newest(base, v, s);
}

// A new stream ending at `end`, in place of the least recently used if every one is live.
inline void StreamDetector::start_stream(std::size_t base, VolumeStreams& v, std::int64_t end) {
  int s;
  if (v.count < options_.streams_per_volume) {
    s = v.count++;
    link_newest(base, v, s);
  } else {
    s = v.oldest;
    make_newest(base, v, s);
  }
  next_offset_[base + static_cast<std::size_t>(s)] = end;
  v.fresh |= std::uint64_t{1} << s;
}

[[gnu::hot]] ReadAhead StreamDetector::on_read(std::uint64_t volume, std::int64_t offset, std::int64_t length) {
  const std::uint32_t* known = slot_of_.find(volume);
  if (known == nullptr || *known == 0) return on_first_read(volume, offset, length);
  const std::size_t slot = *known - 1;
  const std::size_t base = slot * per_volume();
  VolumeStreams& v = volumes_[slot];
  // A read far from every stream's end (nearly every random read) starts a stream here; the
  // rest go on out of line, so that this path calls nothing but in tail position.
  if (near(&next_offset_[base], v.count, offset, length)) return on_near_read(base, v, offset, length);
  start_stream(base, v, offset + length);
  return {};
}

ReadAhead StreamDetector::on_first_read(std::uint64_t volume, std::int64_t offset, std::int64_t length) {
  add_volume(volume);
  return on_read(volume, offset, length);
}

ReadAhead StreamDetector::on_near_read(std::size_t base, VolumeStreams& v, std::int64_t offset, std::int64_t length) {
  const int s = match(base, v, offset, length);
  if (s >= 0) return continue_stream(base, v, s, offset + length);
  start_stream(base, v, offset + length);
  return {};
}

// Out of line: a random read continues no stream (on_read), and this path's registers would
// be saved for it.
ReadAhead StreamDetector::continue_stream(std::size_t base, VolumeStreams& v, int s, std::int64_t end) {
  std::int64_t& next = next_offset_[base + static_cast<std::size_t>(s)];
  make_newest(base, v, s);
  Tail& tail = tails_[base + static_cast<std::size_t>(s)];
  if ((v.fresh >> s & 1) != 0) {
    tail = Tail{next, 1};
    v.fresh &= ~(std::uint64_t{1} << s);
  }
  next = std::max(next, end);
  if (++tail.run_ios == options_.trigger_ios) ++streams_detected_;
  if (tail.run_ios < options_.trigger_ios || options_.depth_bytes == 0) return {};
  // Keep the window at least half full: read ahead again when less than half the depth remains.
  const std::int64_t from = std::max(tail.ahead_until, end);
  if (from - end >= options_.depth_bytes / 2) return {};
  const std::int64_t to = std::min(end + options_.depth_bytes, from + 8 * options_.max_io_bytes);
  tail.ahead_until = to;
  return ReadAhead{from, to - from};
}

}  // namespace afasim::perf
