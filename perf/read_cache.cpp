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
      capacity_segments_(options.capacity_bytes / options.segment_bytes),
      fills_(1) {
  AFASIM_ASSERT(options_.validate().is_ok(), "perf::ReadCache built from invalid options");
}

void ReadCache::touch(Entry& e) { lru_.splice(lru_.begin(), lru_, e.lru); }

CacheLookup ReadCache::lookup(std::uint64_t volume, std::int64_t offset, std::int64_t length) {
  CacheLookup out;
  out.all_present = true;
  const std::int64_t first = offset >> segment_shift_;
  const std::int64_t last = (offset + std::max<std::int64_t>(length, 1) - 1) >> segment_shift_;
  for (std::int64_t s = first; s <= last; ++s) {
    auto it = map_.find(Key{volume, s});
    if (it == map_.end()) {
      out.all_present = false;
      continue;
    }
    touch(it->second);
    if (it->second.fill != 0 &&
        std::find(out.fills.begin(), out.fills.end(), it->second.fill) == out.fills.end())
      out.fills.push_back(it->second.fill);
  }
  return out;
}

void ReadCache::evict_one() {
  // The least recently used segment that is not filling (a fill in flight is pinned).
  for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) {
    auto e = map_.find(*it);
    if (e->second.fill != 0) continue;
    lru_.erase(std::next(it).base());
    map_.erase(e);
    return;
  }
}

void ReadCache::insert(const Key& k, std::uint32_t fill) {
  auto it = map_.find(k);
  if (it != map_.end()) {
    touch(it->second);
    if (it->second.fill == 0) it->second.fill = fill;
    return;
  }
  if (static_cast<std::int64_t>(lru_.size()) >= capacity_segments_) evict_one();
  lru_.push_front(k);
  map_.emplace(k, Entry{lru_.begin(), fill});
}

std::uint32_t ReadCache::start_fill(std::uint64_t volume, std::int64_t offset, std::int64_t length) {
  std::uint32_t id;
  if (!free_fills_.empty()) {
    id = free_fills_.back();
    free_fills_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(fills_.size());
    fills_.emplace_back();
  }
  Fill& f = fills_[id];
  f.live = true;
  f.segments.clear();
  const std::int64_t first = offset >> segment_shift_;
  const std::int64_t last = (offset + std::max<std::int64_t>(length, 1) - 1) >> segment_shift_;
  for (std::int64_t s = first; s <= last; ++s) {
    const Key k{volume, s};
    auto it = map_.find(k);
    if (it != map_.end()) {  // already resident or filling under another fill
      touch(it->second);
      continue;
    }
    insert(k, id);
    fills_[id].segments.push_back(k);
  }
  return id;
}

void ReadCache::fill_done(std::uint32_t fill) {
  AFASIM_ASSERT(fill > 0 && fill < fills_.size() && fills_[fill].live, "perf::ReadCache: fill_done of no fill");
  for (const Key& k : fills_[fill].segments) {
    auto it = map_.find(k);
    if (it != map_.end() && it->second.fill == fill) it->second.fill = 0;
  }
  std::vector<sim::Action> waiters = std::move(fills_[fill].waiters);
  fills_[fill].waiters.clear();
  fills_[fill].live = false;
  free_fills_.push_back(fill);
  for (auto& w : waiters) w();
}

void ReadCache::wait(std::uint32_t fill, sim::Action waiter) {
  AFASIM_ASSERT(fill > 0 && fill < fills_.size() && fills_[fill].live, "perf::ReadCache: waiting on no fill");
  fills_[fill].waiters.push_back(std::move(waiter));
}

void ReadCache::write(std::uint64_t volume, std::int64_t offset, std::int64_t length) {
  const std::int64_t first = offset >> segment_shift_;
  const std::int64_t last = (offset + std::max<std::int64_t>(length, 1) - 1) >> segment_shift_;
  for (std::int64_t s = first; s <= last; ++s) insert(Key{volume, s}, 0);
}

void ReadCache::drop_volume(std::uint64_t volume) {
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto e = map_.find(*it);
    if (it->volume == volume && e->second.fill == 0) {
      map_.erase(e);
      it = lru_.erase(it);
    } else {
      ++it;
    }
  }
}

sim::Status StreamOptions::validate() const {
  if (streams_per_volume < 1 || streams_per_volume > 64) return sim::invalid_argument("read-ahead: streams_per_volume must be 1..64");
  if (trigger_ios < 1) return sim::invalid_argument("read-ahead: trigger_ios must be >= 1");
  if (depth_bytes < 0) return sim::invalid_argument("read-ahead: depth_bytes must be >= 0");
  if (max_io_bytes <= 0) return sim::invalid_argument("read-ahead: max_io_bytes must be > 0");
  return sim::Status::ok();
}

ReadAhead StreamDetector::on_read(std::uint64_t volume, std::int64_t offset, std::int64_t length) {
  auto& streams = volumes_[volume];
  ++clock_;
  const std::int64_t end = offset + length;
  // A read continues a stream if it starts where the stream's last read ended, or inside the
  // window already read ahead for it (reads of one stream arrive out of order at queue depth > 1).
  Stream* match = nullptr;
  for (auto& s : streams)
    if (s.next_offset >= 0 && (offset == s.next_offset || (offset > s.next_offset - length * 16 && offset < s.ahead_until))) {
      match = &s;
      break;
    }
  if (match == nullptr) {
    if (static_cast<int>(streams.size()) < options_.streams_per_volume) {
      streams.emplace_back();
      match = &streams.back();
    } else {
      match = &*std::min_element(streams.begin(), streams.end(),
                                 [](const Stream& a, const Stream& b) { return a.last_use < b.last_use; });
    }
    *match = Stream{end, end, 1, clock_};
    return {};
  }
  match->last_use = clock_;
  match->next_offset = std::max(match->next_offset, end);
  if (++match->run_ios == options_.trigger_ios) ++streams_detected_;
  if (match->run_ios < options_.trigger_ios || options_.depth_bytes == 0) return {};
  // Keep the window at least half full: read ahead again when less than half the depth remains.
  const std::int64_t from = std::max(match->ahead_until, end);
  if (from - end >= options_.depth_bytes / 2) return {};
  const std::int64_t to = std::min(end + options_.depth_bytes, from + 8 * options_.max_io_bytes);
  match->ahead_until = to;
  return ReadAhead{from, to - from};
}

}  // namespace afasim::perf
