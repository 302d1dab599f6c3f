#include "nbd/connection_event_limiter.h"

#include <algorithm>

namespace afasim::nbd::detail {

std::string ConnectionEventLimiter::admit(const std::string& message, std::int64_t now_ns) {
  constexpr std::int64_t kRefillNs = 1'000'000'000;
  // "NBD client 10.0.0.7 connected to ...": the first three words name the client.
  std::size_t end = message.find(' ');
  for (int word = 1; word < 3 && end != std::string::npos; ++word) end = message.find(' ', end + 1);
  if (by_client_.size() > 4096)  // forget the clients whose bucket is full again
    std::erase_if(by_client_, [&](const auto& kv) {
      return kv.second.left_out == 0 && kv.second.tokens + (now_ns - kv.second.refilled_at_ns) / kRefillNs >= kBurst;
    });
  Bucket& b = by_client_[message.substr(0, end)];
  if (const std::int64_t gained = (now_ns - b.refilled_at_ns) / kRefillNs; gained > 0) {
    b.tokens = std::min<std::int64_t>(kBurst, b.tokens + gained);
    b.refilled_at_ns += gained * kRefillNs;
  }
  if (b.tokens == 0) {
    ++b.left_out;
    return "";
  }
  --b.tokens;
  if (b.left_out == 0) return message;
  const std::string out = message + " (" + std::to_string(b.left_out) +
                          " connection events of this client before it were left out of the log: more than " +
                          std::to_string(kBurst) + " at once, or one a second)";
  b.left_out = 0;
  return out;
}

}  // namespace afasim::nbd::detail
