// nbd::detail::ConnectionEventLimiter — how many of a client's connect and disconnect events
// reach the array's event log. Internal to nbd/.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace afasim::nbd::detail {

// How many connection events of one client address reach the event log: kBurst at once, then
// one a simulated second; the others are counted, and the count goes with the next one logged.
// An NBD client needs no credentials, and one that only connected and disconnected wrote 517
// events a second to afasim.db (6 GB a day) and pushed every other event out of the filtered
// views within minutes (hostile round 19). Keyed by the message's "NBD client ADDRESS" (the
// live server and a replay log the same messages at the same simulated times). Model thread.
class ConnectionEventLimiter {
 public:
  static constexpr int kBurst = 64;
  // The message to log (with the count left out before it), or "" to leave it out.
  std::string admit(const std::string& message, std::int64_t now_ns);

 private:
  struct Bucket {
    std::int64_t tokens = kBurst;
    std::int64_t refilled_at_ns = 0;
    std::int64_t left_out = 0;
  };
  std::map<std::string, Bucket> by_client_;
};

}  // namespace afasim::nbd::detail
