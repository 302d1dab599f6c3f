#include "serve/connection_slots.h"

#include <algorithm>

#include "sim/assert.h"

namespace afasim::serve {

ConnectionSlots::ConnectionSlots(int max_total, int max_per_address,
                                 std::chrono::milliseconds grace)
    : max_total_(max_total), max_per_address_(max_per_address), grace_(grace) {
  AFASIM_ASSERT(max_total >= 1 && max_per_address >= 1 && grace.count() >= 0,
                "ConnectionSlots: bounds must be positive");
}

void ConnectionSlots::set_trusted(std::function<bool(const std::string&)> trusted) {
  std::lock_guard<std::mutex> lock(mu_);
  trusted_ = std::move(trusted);
}

bool ConnectionSlots::known(const std::string& address, Clock::time_point now) const {
  if (const auto it = proven_.find(address); it != proven_.end() && now - it->second < kProvenTtl)
    return true;
  return trusted_ && trusted_(address);
}

ConnectionSlots::Grant ConnectionSlots::admit(const std::string& address, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  Grant g;
  const auto here = per_address_.find(address);
  const int from_here = here == per_address_.end() ? 0 : here->second.total;
  const bool newcomer_known = known(address, now);
  if (stopping_) {
    g.why = "the server is stopping";
  } else if (from_here >= max_per_address_) {
    g.why = std::to_string(from_here) + " connections already open from this address";
  } else if (static_cast<int>(entries_.size()) >= max_total_) {
    const auto victim = pick_victim(address, newcomer_known, now);
    if (victim == entries_.end()) {
      g.why = std::to_string(max_total_) + " connections already open";
    } else {
      g.evicted = victim->first;
      g.evicted_address = victim->second.address;
      g.close_evicted = std::move(victim->second.close);
      forget(victim);
      ++evictions_;
    }
  }
  if (!g.why.empty()) return g;
  g.id = next_id_++;
  entries_.emplace(g.id, Entry{address, now, false, false, nullptr});
  // Known is asked again at every admission from the address: a day past its last settle, or
  // its host deleted, it is a stranger again; newly mapped, a client (review 29).
  auto [p, added] = per_address_.try_emplace(address);
  p->second.known = newcomer_known;
  ++p->second.total;
  ++p->second.unsettled;
  return g;
}

std::map<std::uint64_t, ConnectionSlots::Entry>::iterator ConnectionSlots::pick_victim(
    const std::string& address, bool newcomer_known, Clock::time_point now) {
  const auto here = per_address_.find(address);
  const int newcomer_unsettled = here == per_address_.end() ? 0 : here->second.unsettled;
  auto best = entries_.end();
  int best_unsettled = 0;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {  // oldest first
    const Entry& e = it->second;
    if (!e.attached || e.settled) continue;
    const PerAddress& p = per_address_.at(e.address);
    if (p.known) continue;  // a known client's connection is never a stranger's to take
    if (!newcomer_known && (now - e.opened < grace_ || p.unsettled <= newcomer_unsettled)) continue;
    if (p.unsettled > best_unsettled) {  // strictly: ties keep the older one
      best = it;
      best_unsettled = p.unsettled;
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

void ConnectionSlots::attach(std::uint64_t id, std::function<void()> close) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const auto it = entries_.find(id); it != entries_.end()) {
    it->second.attached = true;
    it->second.close = std::move(close);
  }
}

void ConnectionSlots::settle(std::uint64_t id, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find(id);
  if (it == entries_.end() || it->second.settled) return;
  it->second.settled = true;
  PerAddress& p = per_address_.at(it->second.address);
  --p.unsettled;
  p.known = true;
  remember_proven(it->second.address, now);
}

void ConnectionSlots::remember_proven(const std::string& address, Clock::time_point now) {
  proven_[address] = now;
  if (proven_.size() <= kProvenMax) return;
  const auto oldest = std::min_element(proven_.begin(), proven_.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
  proven_.erase(oldest);
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

bool LogLimiter::admit(std::int64_t& left_out, ConnectionSlots::Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  const double seconds = std::chrono::duration<double>(now - refilled_at_).count();
  tokens_ = std::min<double>(kBurst, tokens_ + std::max(0.0, seconds) * kPerMinute / 60.0);
  refilled_at_ = now;
  if (tokens_ < 1) {
    ++left_out_;
    return false;
  }
  tokens_ -= 1;
  left_out = left_out_;
  left_out_ = 0;
  return true;
}

std::string LogLimiter::suffix(std::int64_t left_out) {
  return left_out > 0 ? " (and " + std::to_string(left_out) + " more like it not logged)" : "";
}

}  // namespace afasim::serve
