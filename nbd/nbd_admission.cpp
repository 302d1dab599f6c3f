// nbd::detail::ServerCore's admission (nbd/nbd_connection.h): the connection slots, the
// eviction of a stranger's connection for a newcomer, and the copy of the hosts' nbd
// initiators that says who is a client before the handshake (serve/connection_slots.h).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "nbd/nbd_connection.h"

namespace afasim::nbd::detail {

std::uint64_t ServerCore::admit(const std::string& address, std::string& why) {
  const serve::ConnectionSlots::Grant g = slots->admit(address);
  if (g.id == 0) {
    why = g.why;
    ++connections_refused;
    return 0;
  }
  ++connections_active;
  ++connections_accepted;
  if (g.evicted != 0) {
    ++connections_evicted;
    if (std::int64_t left_out = 0; admission_log.admit(left_out))
      spdlog::warn("nbd: every connection slot was held: closing nbd#{} from {}, still in its "
                   "handshake, for a connection from {}{}",
                   g.evicted, g.evicted_address, address, serve::LogLimiter::suffix(left_out));
    if (g.close_evicted) g.close_evicted();
  }
  return g.id;
}

void ServerCore::refresh_initiators(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - initiators_refreshed_at < std::chrono::seconds(1)) return;
  initiators_refreshed_at = now;
  std::vector<std::string> patterns = nbd_initiator_patterns(*array);
  std::lock_guard<std::mutex> lock(initiators_mu);
  nbd_initiators = std::move(patterns);
}

bool ServerCore::matches_initiator(const std::string& address) {
  std::lock_guard<std::mutex> lock(initiators_mu);
  return std::any_of(nbd_initiators.begin(), nbd_initiators.end(),
                     [&address](const std::string& p) { return initiator_matches(p, address); });
}

void ServerCore::leave(std::uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    registry.erase(id);
  }
  slots->release(id);
  --connections_active;
}

}  // namespace afasim::nbd::detail
