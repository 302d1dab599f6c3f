// sim::IdTable<T> — per-object state indexed by an id that a counter hands out and never
// reuses (volume ids): as quick to reach as a vector indexed by id, but its memory follows the
// ids in use, not the largest id ever handed out.
//
// The per-volume tables of the data path were vectors of id + 1 entries: an array whose
// counter had reached a million (volumes created and deleted over its life, or a state file
// edited by hand) took ~760 bytes per id once the next volume was read and written, 760 MB,
// and a counter near 2^31 could not be served at all (hostile round 18). Here the entries
// live in pages of kPageSize ids, made when an id of theirs is acquired and freed when the
// last one is released; the page table costs 8 bytes per kPageSize ids up to the largest.
// A lookup is two dependent loads (the page, then the entry) where the vector had one; for a
// thousand volumes the page table is a few cache lines that stay hot. A table of objects holds
// them in its pages (IdTable<VolumeRuntime>, not of unique_ptrs: a third load, of the pointer,
// cold for a volume among many); they keep their address while in use, as a page does.
//
// An entry reads as T{} until acquired and again after release. Not thread-safe.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/assert.h"

namespace afasim::sim {

template <typename T, int kPageBits = 4>
class IdTable {
 public:
  static constexpr std::uint64_t kPageSize = std::uint64_t{1} << kPageBits;

  // The entry of `id`; null when no id of its page is in use (it would read T{}).
  T* find(std::uint64_t id) {
    const std::uint64_t p = id >> kPageBits;
    return p < pages_.size() && pages_[p] ? &pages_[p]->entries[id & kMask] : nullptr;
  }
  const T* find(std::uint64_t id) const { return const_cast<IdTable*>(this)->find(id); }
  // The entry of `id` while it is in use (acquired, not released since); else null. For a
  // table of objects held in place (IdTable<Object>, not of pointers to them: one dependent
  // load less a lookup, the entry's address known from the page's).
  T* find_in_use(std::uint64_t id) {
    const std::uint64_t p = id >> kPageBits;
    if (p >= pages_.size() || !pages_[p]) return nullptr;
    Page& page = *pages_[p];
    return page.in_use.test(id & kMask) ? &page.entries[id & kMask] : nullptr;
  }
  const T* find_in_use(std::uint64_t id) const { return const_cast<IdTable*>(this)->find_in_use(id); }
  // The entry of `id`, in use until release(id) (acquiring it again changes nothing).
  T& acquire(std::uint64_t id) {
    const std::uint64_t p = id >> kPageBits;
    if (p >= pages_.size()) pages_.resize(p + 1);
    if (!pages_[p]) pages_[p] = std::make_unique<Page>();
    Page& page = *pages_[p];
    if (!page.in_use.test(id & kMask)) {
      page.in_use.set(id & kMask);
      ++ids_in_use_;
    }
    return page.entries[id & kMask];
  }
  // Resets `id`'s entry to T{}; its page goes when no id of it is in use. No-op if not in use.
  void release(std::uint64_t id) {
    const std::uint64_t p = id >> kPageBits;
    if (p >= pages_.size() || !pages_[p] || !pages_[p]->in_use.test(id & kMask)) return;
    Page& page = *pages_[p];
    page.entries[id & kMask] = T{};
    page.in_use.reset(id & kMask);
    --ids_in_use_;
    if (page.in_use.none()) pages_[p].reset();
  }
  // f(id, T&) for every id in use, ascending. f may release ids (its own included): an id it
  // releases ahead is not visited. REQUIRES: f acquires none.
  template <typename F>
  void for_each(F&& f) {
    for (std::uint64_t p = 0; p < pages_.size(); ++p)
      for (std::uint64_t i = 0; i < kPageSize && pages_[p]; ++i)
        if (pages_[p]->in_use.test(i)) f((p << kPageBits) | i, pages_[p]->entries[i]);
  }
  template <typename F>
  void for_each(F&& f) const {
    const_cast<IdTable*>(this)->for_each([&](std::uint64_t id, T& t) { f(id, static_cast<const T&>(t)); });
  }
  // Calls f(id, T&) for the ids in use from `start` up, then from 0 up to `start`, until f
  // returns true; returns that id, or kNone. A round-robin cursor's walk: it skips the pages
  // not in use instead of every id below the largest.
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  template <typename F>
  std::uint64_t find_cyclic(std::uint64_t start, F&& f) {
    const std::uint64_t end = pages_.size() << kPageBits;
    if (start >= end) start = 0;
    std::uint64_t found = walk(start, end, f);
    if (found == kNone && start > 0) found = walk(0, start, f);
    return found;
  }
  std::size_t ids_in_use() const { return ids_in_use_; }
  std::size_t pages() const {
    std::size_t n = 0;
    for (const auto& p : pages_) n += p != nullptr;
    return n;
  }

 private:
  static constexpr std::uint64_t kMask = kPageSize - 1;
  struct Page {
    std::bitset<kPageSize> in_use;  // first: find_in_use reads it beside the entry, not after 16
    std::array<T, kPageSize> entries{};
  };
  // The first id in [from, to) in use for which f(id, T&) is true, or kNone.
  template <typename F>
  std::uint64_t walk(std::uint64_t from, std::uint64_t to, F& f) {
    for (std::uint64_t id = from; id < to;) {
      Page* page = pages_[id >> kPageBits].get();
      if (page == nullptr) {
        id = ((id >> kPageBits) + 1) << kPageBits;
        continue;
      }
      if (page->in_use.test(id & kMask) && f(id, page->entries[id & kMask])) return id;
      ++id;
    }
    return kNone;
  }

  std::vector<std::unique_ptr<Page>> pages_;
  std::size_t ids_in_use_ = 0;
};

}  // namespace afasim::sim
