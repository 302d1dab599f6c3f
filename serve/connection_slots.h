// serve::ConnectionSlots — which connections a front end (the NBD target, the HTTP server)
// admits, and whose slot a newcomer may take when every slot is held.
//
// Two bounds, as before: `max_total` connections in all and `max_per_address` from one
// client address. The total alone could be held by a few addresses that never become
// clients (the hostile round of the twenty-sixth session: 4 addresses × 16 silent NBD
// connections, 17 × 64 HTTP connections dripping a header byte, each reopened as soon as
// it was closed, locked every real client out without a credential). So a connection is
// *unsettled* until its front end says it has shown it is a client (`settle`: NBD, it
// reached transmission with an export its host maps; HTTP, a request on it was
// authenticated), and when the total is full a newcomer takes the slot of an unsettled
// connection if
//   - that connection has been open at least `grace` (a real client's handshake or first
//     request finishes well within it, so a newcomer cannot be pushed out before it had
//     its chance), and
//   - its address holds more unsettled connections than the newcomer's address holds
//     connections of any kind (an address can only push out a busier one: holders of many
//     half-open connections lose them first, and they cannot push out a client that holds
//     one or two).
// Of those, the victim is from the address with the most unsettled connections, its oldest.
// A settled connection is never taken. What remains possible: many addresses holding one
// unsettled connection each can still keep the total full for a newcomer that arrives while
// every one of them is younger than `grace` (docs/nbd.md and docs/http-front-end.md,
// "Limits").
//
// Thread-safe (one mutex); the caller closes the evicted connection itself (admit returns
// its id) and calls release() for it as for any other when it ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace afasim::serve {

class ConnectionSlots {
 public:
  using Clock = std::chrono::steady_clock;

  // What admit() decided.
  struct Grant {
    std::uint64_t id = 0;       // the newcomer's slot; 0 when refused
    std::string why;            // when refused: "64 connections already open", ...
    std::uint64_t evicted = 0;  // a connection whose slot the newcomer took: close it
    std::string evicted_address;
  };

  // REQUIRES: 1 <= max_per_address, 1 <= max_total, grace >= 0.
  ConnectionSlots(int max_total, int max_per_address, std::chrono::milliseconds grace);

  // Takes a slot for a connection from `address` at `now`, or refuses it (stopping, the
  // address at its bound, or the total full with no slot to take). Ids start at 1 and grow.
  Grant admit(const std::string& address, Clock::time_point now = Clock::now());
  // From now on connection `id` may be evicted (its front end can close it). Until then
  // it is not a candidate. Unknown ids are ignored.
  void attach(std::uint64_t id);
  // Connection `id` has shown it is a client: it is never evicted. Unknown ids are ignored.
  void settle(std::uint64_t id);
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
  };
  struct PerAddress {
    int total = 0;
    int unsettled = 0;
  };

  // The entry whose slot a newcomer from `address` may take at `now`; end() when none.
  std::map<std::uint64_t, Entry>::iterator pick_victim(const std::string& address,
                                                       Clock::time_point now);
  void forget(std::map<std::uint64_t, Entry>::iterator it);  // REQUIRES: mu_ held

  const int max_total_;
  const int max_per_address_;
  const std::chrono::milliseconds grace_;
  mutable std::mutex mu_;
  std::map<std::uint64_t, Entry> entries_;  // by id: oldest first
  std::unordered_map<std::string, PerAddress> per_address_;
  std::uint64_t next_id_ = 1;
  std::int64_t evictions_ = 0;
  bool stopping_ = false;
};

}  // namespace afasim::serve
