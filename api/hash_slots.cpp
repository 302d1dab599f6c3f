#include "api/hash_slots.h"

#include <utility>

#include "sim/assert.h"

namespace afasim::api {

HashSlots::HashSlots(int max) : max_(max), held_(std::make_shared<std::atomic<int>>(0)) {
  AFASIM_ASSERT(max >= 1, "HashSlots: max must be >= 1");
}

HashSlots::Slot& HashSlots::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    if (held_) held_->fetch_sub(1);
    held_ = std::move(other.held_);
  }
  return *this;
}

HashSlots::Slot::~Slot() {
  if (held_) held_->fetch_sub(1);
}

std::optional<HashSlots::Slot> HashSlots::try_take(Access access) {
  int held = held_->load();
  do {
    if (at_max(held, access)) return std::nullopt;
  } while (!held_->compare_exchange_weak(held, held + 1));
  return Slot(held_);
}

bool HashSlots::full(Access access) const {
  return at_max(held_->load(), access);
}

}  // namespace afasim::api
