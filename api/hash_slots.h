// api::HashSlots — a bound on the password hashes api::Auth runs at once
// (AuthOptions::password_hashes_in_progress_max). A hash takes a slot or is refused at once:
// nothing ever waits for a slot, so a flood of password checks cannot hold up the requests
// that need none (a session token, a Basic password verified before).
//
// With max >= 2 the last slot is reserved: a taker with Access::kShared (Auth: a client
// address with a failed login in its current minute) may take a slot only while another
// besides it stays free, so such takers together hold at most max - 1 and never the last
// free one, which only Access::kAll may take. Slots are counted, not named: with max 2 and
// one held by a kAll taker, the free one is the last and kShared is refused. With max == 1
// nothing is reserved: every taker may have the one.
//
// A taker may name itself (a client address): a holder has at most one slot at a time, so one
// address's connections cannot fill the slots with hashes of a password that matches (which
// never counts as a failed login; hostile round 20: one monitor's two connections kept the
// admin's logins at 503 four times in five).
//
// Thread-safe: slots are taken and given back on any thread. A Slot keeps the count it
// belongs to alive, so it may outlive the HashSlots (and the Auth) it came from.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace afasim::api {

class HashSlots {
 public:
  // REQUIRES: max >= 1 (Auth::open checks AuthOptions' range before it makes one).
  explicit HashSlots(int max);

  // Which slots a taker may have: kShared the first max - reserved(), kAll any of the max.
  enum class Access { kShared, kAll };

  // One slot held; given back when the Slot is destroyed, on every way out of the scope that
  // holds it (a return, an exception's unwinding). Move-only; a moved-from Slot holds none.
  struct State;
  class Slot {
   public:
    Slot(Slot&& other) noexcept = default;
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

   private:
    friend class HashSlots;
    Slot(std::shared_ptr<State> state, std::string holder) : state_(std::move(state)), holder_(std::move(holder)) {}
    void give_back() noexcept;
    std::shared_ptr<State> state_;  // null once moved from
    std::string holder_;            // "" when the taker named none
  };

  // A slot, or nullopt at once (without waiting) when every slot `access` may have is held,
  // or when `holder` (not "") holds one already.
  std::optional<Slot> try_take(Access access, const std::string& holder = "");
  // Whether `holder` holds a slot now (an answer for this moment only).
  bool holds(const std::string& holder) const;
  // True when try_take(access) would refuse: an answer for this moment only (a slot may be
  // given back right after), for refusing early what try_take() would refuse.
  bool full(Access access) const;
  int max() const { return max_; }
  // Slots only Access::kAll may take: 1 when max >= 2, else 0.
  int reserved() const { return max_ >= 2 ? 1 : 0; }
  int held() const;

 private:
  // The one test of the bound, used by try_take() and full().
  bool at_max(int held, Access access) const {
    return held >= (access == Access::kAll ? max_ : max_ - reserved());
  }

  int max_;
  std::shared_ptr<State> state_;
};

}  // namespace afasim::api
