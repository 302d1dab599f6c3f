#include "serve/connection_slots.h"

#include "sim/assert.h"

namespace afasim::serve {

ConnectionSlots::ConnectionSlots(int max_total, int max_per_address,
                                 std::chrono::milliseconds grace)
    : max_total_(max_total), max_per_address_(max_per_address), grace_(grace) {
  AFASIM_ASSERT(max_total >= 1 && max_per_address >= 1 && grace.count() >= 0,
                "ConnectionSlots: bounds must be positive");
}

ConnectionSlots::Grant ConnectionSlots::admit(const std::string& address, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  Grant g;
  const auto here = per_address_.find(address);
  const int from_here = here == per_address_.end() ? 0 : here->second.total;
  if (stopping_) {
    g.why = "the server is stopping";
  } else if (from_here >= max_per_address_) {
    g.why = std::to_string(from_here) + " connections already open from this address";
  } else if (static_cast<int>(entries_.size()) >= max_total_) {
    const auto victim = pick_victim(address, now);
    if (victim == entries_.end()) {
      g.why = std::to_string(max_total_) + " connections already open";
    } else {
      g.evicted = victim->first;
      g.evicted_address = victim->second.address;
      forget(victim);
      ++evictions_;
    }
  }
  if (!g.why.empty()) return g;
  g.id = next_id_++;
  entries_.emplace(g.id, Entry{address, now, false, false});
  PerAddress& p = per_address_[address];
  ++p.total;
  ++p.unsettled;
  return g;
}

std::map<std::uint64_t, ConnectionSlots::Entry>::iterator ConnectionSlots::pick_victim(
    const std::string& address, Clock::time_point now) {
  const auto here = per_address_.find(address);
  const int newcomer_holds = here == per_address_.end() ? 0 : here->second.total;
  auto best = entries_.end();
  int best_unsettled = newcomer_holds;  // a victim's address must hold more than this
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {  // oldest first
    const Entry& e = it->second;
    if (!e.attached || e.settled || now - e.opened < grace_) continue;
    const int unsettled = per_address_.at(e.address).unsettled;
    if (unsettled > best_unsettled) {  // strictly: ties keep the older one
      best = it;
      best_unsettled = unsettled;
    }
  }
  return best;
}

void ConnectionSlots::forget(std::map<std::uint64_t, Entry>::iterator it) {
  const auto p = per_address_.find(it->second.address);
  AFASIM_ASSERT(p != per_address_.end(), "ConnectionSlots: an entry without its address");
  --p->second.total;
  if (!it->second.settled) --p->second.unsettled;
  if (p->second.total == 0) per_address_.erase(p);
  entries_.erase(it);
}

void ConnectionSlots::attach(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const auto it = entries_.find(id); it != entries_.end()) it->second.attached = true;
}

void ConnectionSlots::settle(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find(id);
  if (it == entries_.end() || it->second.settled) return;
  it->second.settled = true;
  --per_address_.at(it->second.address).unsettled;
}

void ConnectionSlots::release(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const auto it = entries_.find(id); it != entries_.end()) forget(it);
}

void ConnectionSlots::stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
}

int ConnectionSlots::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(entries_.size());
}

std::int64_t ConnectionSlots::evictions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return evictions_;
}

}  // namespace afasim::serve
