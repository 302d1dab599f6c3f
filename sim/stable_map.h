// sim::StableMap<T> — a hash map from 64-bit keys to objects that never move: what the write
// cache keeps per cached block, looked up several times on every write.
//
// std::unordered_map held them before (issue 16's profile of 4K random RAID 5 writes: 30 %
// of the time in its lookups, a prime modulus per probe and a pointer chase per node, then
// its rehashes and a node allocation per new block). Here the index is open addressing with
// linear probing and backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, algorithm R): keys
// and 32-bit slot numbers side by side in one array (16 bytes an entry, four to a cache
// line), at most half full, so a lookup reads one line most of the time; a key's home is the
// high bits of key × 2^64/φ (Fibonacci hashing), which spreads keys that differ in their low
// bits (block numbers) as well as in their high ones (volume ids). The objects live in a
// sim::Slab: a reference stays valid until its key is erased, whatever else is inserted or
// erased. Growth doubles the index and reinserts its entries (no object moves).
//
// Iteration (for_each) follows the index, an order that depends on the history of inserts and
// erases: a caller to whom order matters sorts the keys (the write cache does).
//
// Memory: 16 bytes of index per entry, the index between a quarter and a half full as it grows
// (32-64 bytes per object; while it doubles, the old array too), plus the object in its slab.
// clear() keeps both.
// Not thread-safe.
#pragma once

#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/assert.h"
#include "sim/prefetch.h"
#include "sim/slab.h"

namespace afasim::sim {

template <typename T>
class StableMap {
 public:
  // The one key the map cannot hold (it marks an empty entry).
  static constexpr std::uint64_t kReservedKey = ~std::uint64_t{0};

  StableMap() : entries_(kMinEntries), shift_(64 - std::countr_zero(kMinEntries)) {}
  StableMap(const StableMap&) = delete;
  StableMap& operator=(const StableMap&) = delete;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The object of `key`, or null. REQUIRES: key != kReservedKey.
  T* find(std::uint64_t key) {
    AFASIM_ASSERT(key != kReservedKey, "sim::StableMap: the reserved key");
    for (std::size_t i = home(key);; i = next(i)) {
      const Entry& e = entries_[i];
      if (e.key == key) return &objects_[e.slot];
      if (e.key == kReservedKey) return nullptr;
    }
  }
  const T* find(std::uint64_t key) const { return const_cast<StableMap*>(this)->find(key); }
  // Starts loading the index line where a lookup of `key` begins. Speed only.
  void prefetch(std::uint64_t key) const { sim::prefetch(&entries_[home(key)]); }
  // The object of `key`. REQUIRES: present.
  T& at(std::uint64_t key) {
    T* t = find(key);
    AFASIM_ASSERT(t != nullptr, "sim::StableMap::at: no such key");
    return *t;
  }
  const T& at(std::uint64_t key) const { return const_cast<StableMap*>(this)->at(key); }
  // The object of `key` and true if it was absent (it is then value-initialised).
  // REQUIRES: key != kReservedKey.
  std::pair<T*, bool> try_emplace(std::uint64_t key) {
    AFASIM_ASSERT(key != kReservedKey, "sim::StableMap: the reserved key");
    if ((size_ + 1) * 2 > entries_.size()) grow();
    std::size_t i = home(key);
    for (; entries_[i].key != kReservedKey; i = next(i))
      if (entries_[i].key == key) return {&objects_[entries_[i].slot], false};
    const std::uint32_t slot = objects_.acquire();
    objects_[slot] = T{};
    entries_[i] = Entry{key, slot};
    ++size_;
    return {&objects_[slot], true};
  }
  // Erases `key` (its object is reset and its slot reused); false if absent.
  // REQUIRES: key != kReservedKey.
  bool erase(std::uint64_t key) {
    AFASIM_ASSERT(key != kReservedKey, "sim::StableMap: the reserved key");
    std::size_t i = home(key);
    for (; entries_[i].key != key; i = next(i))
      if (entries_[i].key == kReservedKey) return false;
    release(entries_[i].slot);
    // Backward shift: later entries of the probe run move into the hole unless their home
    // lies cyclically in (hole, their place].
    const std::size_t mask = entries_.size() - 1;
    for (std::size_t j = next(i); entries_[j].key != kReservedKey; j = next(j)) {
      if (((j - home(entries_[j].key)) & mask) >= ((j - i) & mask)) {
        entries_[i] = entries_[j];
        i = j;
      }
    }
    entries_[i] = Entry{};
    --size_;
    return true;
  }
  // Erases every key (the index keeps its size, the slab its objects for reuse).
  void clear() {
    for (Entry& e : entries_) {
      if (e.key != kReservedKey) release(e.slot);
      e = Entry{};
    }
    size_ = 0;
  }
  // Calls f(key, object) for every key, in the index's order. REQUIRES: f neither inserts
  // nor erases.
  template <typename F>
  void for_each(F&& f) {
    for (const Entry& e : entries_)
      if (e.key != kReservedKey) f(e.key, objects_[e.slot]);
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const Entry& e : entries_)
      if (e.key != kReservedKey) f(e.key, static_cast<const T&>(objects_[e.slot]));
  }

 private:
  static constexpr std::size_t kMinEntries = 16;
  struct Entry {
    std::uint64_t key = kReservedKey;
    std::uint32_t slot = 0;
  };
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  std::size_t next(std::size_t i) const { return (i + 1) & (entries_.size() - 1); }
  void release(std::uint32_t slot) {
    objects_[slot] = T{};  // what it held (a block's data) goes now, not when the slot is reused
    objects_.release(slot);
  }
  void grow() {
    AFASIM_ASSERT(entries_.size() <= (std::size_t{1} << 62), "sim::StableMap: too many keys");
    std::vector<Entry, CacheLineAllocator<Entry>> old(entries_.size() * 2);
    old.swap(entries_);
    --shift_;
    for (const Entry& e : old) {
      if (e.key == kReservedKey) continue;
      std::size_t i = home(e.key);
      while (entries_[i].key != kReservedKey) i = next(i);
      entries_[i] = e;
    }
  }

  std::vector<Entry, CacheLineAllocator<Entry>> entries_;  // size a power of two, at most half full; huge pages from 2 MiB
  int shift_;                   // 64 - log2(entries_.size())
  std::size_t size_ = 0;
  Slab<T> objects_;
};

}  // namespace afasim::sim
