#include "perf/flow.h"

#include <algorithm>

namespace afasim::perf {

[[gnu::hot]] std::uint32_t Flow::open(std::span<const Step> steps) {
  AFASIM_ASSERT(steps.size() <= static_cast<std::size_t>(kMaxSteps), "perf::Flow: too many steps in one journey");
  for (const Step& s : steps) AFASIM_ASSERT(s.resource != nullptr, "perf::Flow: a step without a resource");
  std::uint32_t id;
  auto take = [&](auto& slab, std::uint32_t tag) -> Journey& {
    const std::uint32_t index = slab.acquire(kMaxJourneys);
    auto& entry = slab[index];
    std::copy(steps.begin(), steps.end(), entry.steps.begin());
    id = index | tag;
    return entry;
  };
  Journey& j = steps.size() <= static_cast<std::size_t>(kShortSteps) ? take(short_journeys_, 0)
                                                                       : take(long_journeys_, kLongBit);
  j.count = static_cast<int>(steps.size());
  j.next = 0;
  return id;
}

Flow::Journey& Flow::journey(std::uint32_t id, const Step*& steps) {
  if (id & kLongBit) {
    auto& j = long_journeys_[id & ~kLongBit];
    steps = j.steps.data();
    return j;
  }
  auto& j = short_journeys_[id];
  steps = j.steps.data();
  return j;
}

void Flow::release(std::uint32_t id) {
  if (id & kLongBit) long_journeys_.release(id & ~kLongBit);
  else short_journeys_.release(id);
}

[[gnu::hot]] void Flow::advance(std::uint32_t id) {
  const sim::Time now = sim_.now();
  for (;;) {
    const Step* steps;
    Journey& j = journey(id, steps);
    if (j.next == j.count) {
      Done done = std::move(j.done);
      release(id);
      done(now);
      return;
    }
    const Step& s = steps[j.next++];
    sim::Time t = s.resource->admit(now, s.bytes, s.extra_service_ns, s.address);
    for (Resource* r : s.with)
      if (r != nullptr) t = std::max(t, r->admit(now, s.bytes));
    t += s.delay_ns;
    if (t > now) {
      ++events_;
      sim_.at(t, [this, id] { advance(id); });
      return;
    }
  }
}

std::uint32_t Flow::join(int branches, Done done) {
  AFASIM_ASSERT(branches >= 1, "perf::Flow: a join of no branches");
  const std::uint32_t id = joins_.acquire(kMaxJourneys);
  joins_[id].remaining = branches;
  joins_[id].done = std::move(done);
  return id;
}

Flow::Done Flow::branch_done(std::uint32_t join_id) {
  return [this, join_id](sim::Time) { arrive(join_id); };
}

void Flow::arrive(std::uint32_t join_id) {
  JoinState& s = joins_[join_id];
  AFASIM_ASSERT(s.remaining > 0, "perf::Flow: a join finished twice");
  if (--s.remaining > 0) return;
  Done done = std::move(s.done);
  joins_.release(join_id);
  done(sim_.now());
}

}  // namespace afasim::perf
