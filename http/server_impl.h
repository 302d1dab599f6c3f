// Internal to http/: the state a Server shares with its connections (http/session.cpp).
#pragma once

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "http/server.h"
#include "serve/connection_slots.h"

namespace afasim::http {

namespace asio = boost::asio;

// One open connection as the server's registry sees it (to close it at stop()).
class Connection {
 public:
  virtual ~Connection() = default;
  // Closes the socket from the connection's own strand; any thread.
  virtual void close() = 0;
};

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  ServerOptions options;
  Router router;
  Guard guard;
  std::shared_ptr<spdlog::logger> logger;

  asio::io_context io;
  std::optional<asio::thread_pool> workers;
  std::optional<asio::ip::tcp::acceptor> acceptor;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::atomic<int> port{0};
  bool started = false;
  bool stopped = false;

  // Admission counts and whose slot a newcomer may take (serve/connection_slots.h): a
  // connection settles once a request on it is authenticated. Made by the constructor.
  std::optional<serve::ConnectionSlots> slots;
  serve::LogLimiter eviction_log;  // strangers can cause an eviction by the thousand a second
  // Live connections, to close them at stop() or when their slot is taken.
  std::mutex admit_mu;
  std::unordered_map<std::uint64_t, std::weak_ptr<Connection>> registry;

  std::atomic<int> worker_pending{0};
  std::atomic<std::int64_t> connections_accepted{0};
  std::atomic<std::int64_t> connections_refused{0};
  std::atomic<std::int64_t> connections_evicted{0};
  std::atomic<int> active{0};
  std::atomic<std::int64_t> requests{0};
  std::atomic<std::int64_t> requests_timed_out{0};
  std::atomic<std::int64_t> requests_refused{0};

  // Takes a connection slot for `address`; 0 when over a bound (or stopping), else the
  // connection's id; closes the connection whose slot it took, if any. release() gives it
  // back.
  std::uint64_t admit(const std::string& address);
  void release(std::uint64_t id);

  // The response to a complete request: routing, 404/405/OPTIONS, the Host check, the
  // guard and the handler (on a worker unless the route never blocks). Never throws.
  asio::awaitable<Response> respond(Request& r);
  void log_request(const Request& r, int status, std::chrono::steady_clock::time_point start);
};

// Starts serving `socket` (plain or TLS by the server's options) on its strand. `slot` is
// the id admit() returned; the connection releases it when it ends.
void start_connection(std::shared_ptr<Server::Impl> server, asio::ip::tcp::socket socket,
                      std::string address, std::uint64_t slot);

}  // namespace afasim::http
