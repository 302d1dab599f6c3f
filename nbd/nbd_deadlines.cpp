// The connection's deadlines (docs/nbd.md "Limits"): the idle timeout between requests, and
// the I/O timeout on a WRITE's payload and on each write of replies. Each closes a connection
// whose client stopped: one that holds a slot, or reply buffers, for good otherwise.
#include "config/size.h"
#include "nbd/nbd_connection.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace afasim::nbd::detail {

using boost::system::error_code;
namespace n = proto;

namespace {

// Disarms a deadline timer (see Connection::payload_timer_).
void disarm(asio::steady_timer& t) {
  t.expires_at(asio::steady_timer::time_point::max());
}

// True when `t` fired at its current expiry, not at one since disarmed or moved.
bool expired(const asio::steady_timer& t) {
  return t.expiry() <= asio::steady_timer::clock_type::now();
}

double as_seconds(std::chrono::milliseconds t) {
  return std::chrono::duration<double>(t).count();
}

}  // namespace

template <typename What>
void Connection::arm_io_deadline(asio::steady_timer Connection::*timer, const char* reason, What what) {
  (this->*timer).expires_after(core_->options.io_timeout);
  (this->*timer).async_wait([w = weak_from_this(), timer, reason, what](const error_code& ec) {
    auto c = w.lock();
    if (ec || !c || c->closed_ || !expired((*c).*timer)) return;
    ++c->core_->connections_io_timed_out;
    spdlog::warn("{}: {}", c->label_, what(*c));
    c->close(reason);
  });
}

asio::awaitable<void> Connection::read_payload(const n::RequestHeader& h, std::uint8_t* dst) {
  // The deadline starts here, not at the header: waiting for in-flight room is the
  // server's time, and the client cannot send while the server does not read.
  const bool must_wait = rend_ - rpos_ < h.length;
  if (must_wait) {
    arm_io_deadline(&Connection::payload_timer_, "WRITE payload not received within the I/O timeout",
                    [h](const Connection& c) {
                      return fmt::format(
                          "the payload of a WRITE of {} bytes at offset {} did not arrive in full within {} s "
                          "(--nbd-io-timeout); closing the connection, the write is not applied",
                          h.length, h.offset, as_seconds(c.core_->options.io_timeout));
                    });
  }
  if (dst != nullptr)
    co_await read_into(dst, h.length);
  else
    co_await discard(h.length);
  if (must_wait) disarm(payload_timer_);
}

void Connection::arm_idle() {
  if (requests_in_flight_ > 0 || !batch_.empty()) return;  // the client waits for replies
  idle_timer_.expires_after(core_->options.idle_timeout);
  idle_timer_.async_wait([w = weak_from_this()](const error_code& ec) {
    if (ec) return;  // cancelled: a request arrived
    if (auto c = w.lock()) {
      ++c->core_->connections_idle_closed;
      spdlog::info("{}: idle for {} s with nothing in flight; closing", c->label_,
                   std::chrono::duration_cast<std::chrono::seconds>(c->core_->options.idle_timeout).count());
      c->close("idle timeout");
    }
  });
}

void Connection::arm_write_deadline(std::size_t bytes) {
  arm_io_deadline(&Connection::write_timer_, "replies not taken within the I/O timeout", [bytes](const Connection& c) {
    return fmt::format(
        "the client has not taken {} of replies within {} s (--nbd-io-timeout): it stopped reading; closing "
        "the connection",
        config::human_bytes(static_cast<std::int64_t>(bytes)), as_seconds(c.core_->options.io_timeout));
  });
}

void Connection::disarm_write_deadline() {
  disarm(write_timer_);
}

}  // namespace afasim::nbd::detail
