#include "api/hash_slots.h"

#include <utility>

#include "sim/assert.h"

namespace afasim::api {

// What the slots and the Slots taken from them share (a Slot may outlive its HashSlots).
struct HashSlots::State {
  std::atomic<int> held{0};
  std::mutex mu;
  std::set<std::string> holders;  // named takers holding a slot, under mu
};

HashSlots::HashSlots(int max) : max_(max), state_(std::make_shared<State>()) {
  AFASIM_ASSERT(max >= 1, "HashSlots: max must be >= 1");
}

void HashSlots::Slot::give_back() noexcept {
  if (!state_) return;
  if (!holder_.empty()) {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->holders.erase(holder_);
  }
  state_->held.fetch_sub(1);
  state_.reset();
}

HashSlots::Slot& HashSlots::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    give_back();
    state_ = std::move(other.state_);
    holder_ = std::move(other.holder_);
  }
  return *this;
}

HashSlots::Slot::~Slot() { give_back(); }

std::optional<HashSlots::Slot> HashSlots::try_take(Access access, const std::string& holder) {
  std::unique_lock<std::mutex> lock(state_->mu, std::defer_lock);
  if (!holder.empty()) {
    lock.lock();
    if (state_->holders.count(holder) > 0) return std::nullopt;
  }
  int held = state_->held.load();
  do {
    if (at_max(held, access)) return std::nullopt;
  } while (!state_->held.compare_exchange_weak(held, held + 1));
  if (!holder.empty()) state_->holders.insert(holder);
  return Slot(state_, holder);
}

bool HashSlots::holds(const std::string& holder) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->holders.count(holder) > 0;
}

int HashSlots::held() const { return state_->held.load(); }

bool HashSlots::full(Access access) const {
  return at_max(state_->held.load(), access);
}

}  // namespace afasim::api
