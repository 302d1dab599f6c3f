// serve::ConnectionSlots — which connections a front end (the NBD target, the HTTP server)
// admits, and whose slot a newcomer may take when every slot is held.
//
// Two bounds: `max_total` connections in all and `max_per_address` from one client address.
// The total alone could be held by a few addresses that never become clients (hostile round
// 28b: 4 addresses × 16 silent NBD connections, 17 × 64 HTTP connections dripping a header
// byte, each reopened as soon as it was closed, locked every real client out without a
// credential). So a connection is *unsettled* until its front end says it has shown it is a
// client (`settle`: NBD, it reached transmission with an export its host maps; HTTP, a request
// on it was authenticated), and an address that settled a connection in the last
// kProvenTtl is *proven* (kProvenMax addresses remembered, the oldest forgotten first); a front
// end may also name addresses it trusts before they connect (`set_trusted`: NBD, those that
// match a host's nbd initiator).
//
// When the total is full, a newcomer may take the slot of an unsettled connection (attached,
// not settled) whose address is neither proven nor trusted:
//   - a newcomer from a proven or trusted address takes one at once, whatever its age: a
//     known client comes before any stranger (hostile round 29, F1: with more addresses than
//     slots, each reconnecting the moment it was refused, strangers took each other's slots
//     and kept every new client out);
//   - any other newcomer only one open at least `grace` (a real client's handshake or first
//     request finishes well within it), from an address holding more unsettled connections
//     than the newcomer's holds (an address can only push out a busier one).
// Of the candidates, the victim is from the address with the most unsettled connections, its
// oldest. A settled connection, and an unsettled one of a proven or trusted address, is never
// taken. What remains (docs/nbd.md "Limits", docs/http-front-end.md "Bounds"): strangers with
// more addresses than there are slots can keep out other strangers, among them a client's very
// first connection to an HTTP server since it started.
//
// Thread-safe (one mutex; `trusted` is called under it); the caller closes the evicted
// connection with the `close` it attached (admit hands it back) and calls release() for it as
// for any other.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace afasim::serve {

class ConnectionSlots {
 public:
  using Clock = std::chrono::steady_clock;
  // How long an address that settled a connection stays proven, and how many are remembered.
  // Assumption: a day covers an admin's or a host's working pattern; 4,096 addresses cover a
  // site's hosts and admins with room to spare.
  static constexpr std::chrono::hours kProvenTtl{24};
  static constexpr std::size_t kProvenMax = 4096;

  // What admit() decided.
  struct Grant {
    std::uint64_t id = 0;       // the newcomer's slot; 0 when refused
    std::string why;            // when refused: "64 connections already open", ...
    std::uint64_t evicted = 0;  // a connection whose slot the newcomer took
    std::string evicted_address;
    std::function<void()> close_evicted;  // its attach()'s `close`: call it (outside any lock)
  };

  // REQUIRES: 1 <= max_per_address, 1 <= max_total, grace >= 0.
  ConnectionSlots(int max_total, int max_per_address, std::chrono::milliseconds grace);

  // Addresses the front end trusts as clients before they settle (null: none). Called under
  // the table's lock, so it must be quick and must not call back.
  void set_trusted(std::function<bool(const std::string& address)> trusted);

  // Takes a slot for a connection from `address` at `now`, or refuses it (stopping, the
  // address at its bound, or the total full with no slot to take). Ids start at 1 and grow.
  Grant admit(const std::string& address, Clock::time_point now = Clock::now());
  // From now on connection `id` may be evicted, and `close` closes it (from any thread;
  // handed back in the Grant that takes its slot). Until then it is not a candidate. Unknown
  // ids are ignored.
  void attach(std::uint64_t id, std::function<void()> close = nullptr);
  // Connection `id` has shown it is a client: it is never evicted, and its address is proven
  // from `now`. Unknown ids are ignored.
  void settle(std::uint64_t id, Clock::time_point now = Clock::now());
  // Gives back `id`'s slot (a connection that was evicted already gave it). Idempotent.
  void release(std::uint64_t id);
  // Every admit from now on is refused ("the server is stopping").
  void stop();

  int active() const;
  std::int64_t evictions() const;

 private:
  struct Entry {
    std::string address;
    Clock::time_point opened;
    bool attached = false;
    bool settled = false;
    std::function<void()> close;
  };
  struct PerAddress {
    int total = 0;
    int unsettled = 0;
    bool known = false;  // proven or trusted at its latest admission, or settled since
  };

  bool known(const std::string& address, Clock::time_point now) const;  // proven or trusted
  // The entry whose slot a newcomer from `address` (known: proven or trusted) may take at
  // `now`; end() when none.
  std::map<std::uint64_t, Entry>::iterator pick_victim(const std::string& address, bool newcomer_known,
                                                       Clock::time_point now);
  void forget(std::map<std::uint64_t, Entry>::iterator it);  // REQUIRES: mu_ held
  void remember_proven(const std::string& address, Clock::time_point now);

  const int max_total_;
  const int max_per_address_;
  const std::chrono::milliseconds grace_;
  mutable std::mutex mu_;
  std::function<bool(const std::string&)> trusted_;
  std::map<std::uint64_t, Entry> entries_;  // by id: oldest first
  std::unordered_map<std::string, PerAddress> per_address_;
  std::unordered_map<std::string, Clock::time_point> proven_;  // address → last settle
  std::uint64_t next_id_ = 1;
  std::int64_t evictions_ = 0;
  bool stopping_ = false;
};

// How many of a kind of log line reach the log: kBurst at once, then kPerMinute a minute; the
// ones left out are counted and the count goes with the next one logged. Lines that strangers
// can cause by the thousand a second (a refused connection, an eviction, a handshake that names
// no export) wrote 1-1.6 MB/s of log (hostile round 29, F3). Wall clock; thread-safe.
class LogLimiter {
 public:
  static constexpr int kBurst = 20;
  static constexpr int kPerMinute = 60;
  // Whether to log now; `left_out` receives how many were left out since the last one logged.
  bool admit(std::int64_t& left_out, ConnectionSlots::Clock::time_point now = ConnectionSlots::Clock::now());
  // " (and N more like it not logged)" for N > 0, else "".
  static std::string suffix(std::int64_t left_out);

 private:
  std::mutex mu_;
  double tokens_ = kBurst;
  ConnectionSlots::Clock::time_point refilled_at_{};
  std::int64_t left_out_ = 0;
};

}  // namespace afasim::serve
