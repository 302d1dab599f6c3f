#include "ssd/pipe.h"

#include <algorithm>
#include <cmath>

#include "sim/assert.h"

namespace afasim::ssd {

Pipe::Pipe(double bytes_per_second, sim::Time keep)
    : keep_(static_cast<std::int32_t>(keep)), ns_per_byte_(1e9 / bytes_per_second) {
  AFASIM_ASSERT(bytes_per_second > 0 && keep > 0 && keep <= INT32_MAX, "Pipe: bad rate or keep");
}

void Pipe::reset() {
  latest_ = 0;
  fg_.clear();
  all_.clear();
  all_is_fg_ = true;
  overcommit_ns_ = 0;
}

// Most transfers come after every span booked: appended, without a search.
[[gnu::always_inline]] inline void Pipe::add(Spans& spans, sim::Time start, sim::Time end) {
  if (spans.size() == 0 || (spans.end() - 1)->end < start) {
    spans.v.push_back(Span{start, end});
    if (spans.size() > kMaxSpans) merge_oldest(spans);
  } else {
    add_reaching_last(spans, start, end);
  }
}

void Pipe::add_reaching_last(Spans& spans, sim::Time start, sim::Time end) {
  // First span that ends at or after `start` (it may touch or overlap the new one): the last
  // one, or the one before it (looked at first), or one found by a binary search.
  Span* it;
  if (spans.size() == 1 || (spans.end() - 2)->end < start) it = spans.end() - 1;
  else it = std::lower_bound(spans.begin(), spans.end(), start, [](const Span& s, sim::Time t) { return s.end < t; });
  Span* last = it;
  while (last != spans.end() && last->start <= end) {
    start = std::min(start, last->start);
    end = std::max(end, last->end);
    ++last;
  }
  const auto at = spans.v.begin() + (it - spans.v.data());
  if (last != it) {  // the merged span takes the first one's place
    *it = Span{start, end};
    spans.v.erase(at + 1, at + (last - it));
  } else {
    spans.v.insert(at, Span{start, end});
  }
  if (spans.size() > kMaxSpans) merge_oldest(spans);
}

void Pipe::merge_oldest(Spans& spans) {
  // The oldest two become one, their gap counted busy.
  spans.v[spans.head + 1].start = spans.v[spans.head].start;
  ++spans.head;
  // And the prefix given up is freed here too, as forget() frees its own: a pipe that only
  // ever carries background transfers (a write-only load's program data) never forgets, and
  // its spans grew without bound, ~1.6 KB per 1 MiB written (hostile round 28: a server's
  // RSS grew 70 MB with every 96 GiB of zero-writes). O(1) amortized; the spans kept are
  // the same.
  if (spans.head >= kMaxSpans) compact(spans);
}

void Pipe::compact(Spans& spans) {
  spans.v.erase(spans.v.begin(), spans.v.begin() + static_cast<std::ptrdiff_t>(spans.head));
  spans.head = 0;
}

sim::Time Pipe::overlap(Spans& spans, sim::Time start, sim::Time end) {
  if (spans.size() == 0 || (spans.end() - 1)->end <= start) return 0;
  const Span* it = std::lower_bound(spans.begin(), spans.end(), start,
                                    [](const Span& s, sim::Time t) { return s.end <= t; });
  sim::Time covered = 0;
  for (; it != spans.end() && it->start < end; ++it) covered += std::min(end, it->end) - std::max(start, it->start);
  return covered;
}

[[gnu::always_inline]] inline void Pipe::forget(Spans& spans) const {
  spans.head = first_kept(spans, latest_ - keep_);
  // Compact once the forgotten prefix is as long as the bound: O(1) amortized per span.
  if (spans.head >= kMaxSpans) compact(spans);
}

// A piece of the transfer, [start, end), booked in the lists its class uses.
[[gnu::always_inline]] inline void Pipe::book(sim::Time start, sim::Time end, bool background) {
  if (!background) {
    add(fg_, start, end);
    if (!all_is_fg_) overcommit_ns_ += overlap(all_, start, end);
  }
  if (!all_is_fg_) add(all_, start, end);
}

sim::Time Pipe::transfer_any(sim::Time ready, std::int64_t bytes, bool background) {
  AFASIM_ASSERT(bytes >= 0 && ready >= 0, "Pipe::transfer of negative bytes or time");
  if (!background && ready > latest_) {
    latest_ = ready;
    forget(fg_);
    if (!all_is_fg_) forget(all_);
  }
  if (background && all_is_fg_) {  // the classes part: both lists kept from now on
    all_ = fg_;
    all_is_fg_ = false;
  }
  Spans& busy = background ? all_ : fg_;
  if (bytes != memo_bytes_) {
    memo_need_ = time_of(bytes);
    memo_bytes_ = bytes;
  }
  auto need = memo_need_;
  if (background && need > 0) {
    // Time foreground transfers took from background ones already booked (below) is owed:
    // the next background transfer takes that much longer, so that over time the stage
    // carries no more than its rate (a read-heavy mix otherwise got its reads on top of the writes'
    // full program bandwidth: model review 30).
    need += overcommit_ns_;
    overcommit_ns_ = 0;
  }
  if (need == 0) return ready;
  // Usually the stage is idle from `ready` on (no span booked ends after it): the transfer
  // takes one piece from `ready`, as the loop below would place it with no span ahead.
  if (busy.size() == 0 || (busy.end() - 1)->end <= ready) {
    book(ready, ready + need, background);
    return ready + need;
  }
  return transfer_around(busy, ready, need, background);
}

sim::Time Pipe::transfer_around(const Spans& busy, sim::Time ready, sim::Time need, bool background) {
  // The pieces of idle time the transfer takes, earliest first (at most four), from the first
  // span that ends after `ready`.
  Span pieces[4];
  int count = 0;
  sim::Time t = ready;
  const Span* const end = busy.v.data() + busy.v.size();
  const Span* it = std::lower_bound(busy.v.data() + busy.head, end, ready, [](const Span& s, sim::Time x) { return s.end <= x; });
  while (need > 0) {
    if (it == end || count == 3) {  // the rest in one piece after everything booked
      if (it != end) t = std::max(t, (end - 1)->end);
      pieces[count++] = {t, t + need};
      t += need;
      need = 0;
    } else if (it->start > t) {
      const sim::Time take = std::min(it->start - t, need);
      pieces[count++] = {t, t + take};
      t += take;
      need -= take;
    } else {
      t = std::max(t, it->end);
      ++it;
    }
  }
  for (int i = 0; i < count; ++i) book(pieces[i].start, pieces[i].end, background);
  return pieces[count - 1].end;
}

}  // namespace afasim::ssd
