// api::HashSlots — a bound on the password hashes api::Auth runs at once
// (AuthOptions::password_hashes_in_progress_max). A hash takes a slot or is refused at once:
// nothing ever waits for a slot, so a flood of password checks cannot hold up the requests
// that need none (a session token, a Basic password verified before).
//
// Thread-safe: slots are taken and given back on any thread. A Slot keeps the count it
// belongs to alive, so it may outlive the HashSlots (and the Auth) it came from.
#pragma once

#include <atomic>
#include <memory>
#include <optional>

namespace afasim::api {

class HashSlots {
 public:
  // REQUIRES: max >= 1 (Auth::open checks AuthOptions' range before it makes one).
  explicit HashSlots(int max);

  // One slot held; given back when the Slot is destroyed, on every way out of the scope that
  // holds it (a return, an exception's unwinding). Move-only; a moved-from Slot holds none.
  class Slot {
   public:
    Slot(Slot&& other) noexcept = default;
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

   private:
    friend class HashSlots;
    explicit Slot(std::shared_ptr<std::atomic<int>> held) : held_(std::move(held)) {}
    std::shared_ptr<std::atomic<int>> held_;  // null once moved from
  };

  // A slot, or nullopt at once (without waiting) when `max` are held.
  std::optional<Slot> try_take();
  // True when every slot is held: an answer for this moment only (one may be given back
  // right after), for refusing early what try_take() would refuse.
  bool full() const;
  int max() const { return max_; }
  int held() const { return held_->load(); }

 private:
  // The one test of the bound, used by try_take() and full().
  bool at_max(int held) const { return held >= max_; }

  int max_;
  std::shared_ptr<std::atomic<int>> held_;
};

}  // namespace afasim::api
