#include "nbd/nbd_server.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <optional>
#include <thread>

#include "nbd/nbd_connection.h"

namespace afasim::nbd {

using boost::system::error_code;
using detail::Connection;
using detail::ServerCore;
using detail::Socket;
namespace asio = boost::asio;

struct NbdServer::Impl {
  std::shared_ptr<ServerCore> core = std::make_shared<ServerCore>();
  std::optional<asio::ip::tcp::acceptor> tcp;
  std::optional<asio::local::stream_protocol::acceptor> local;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::mutex threads_mu;
  std::condition_variable threads_done_cv;
  int threads_running = 0;
  int port = 0;
  bool started = false;
  bool stopped = false;
};

namespace {

// The client's address as LUN masking matches it (nbd/nbd_exports.h).
std::string peer_address(Socket& socket) {
  error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  char text[INET6_ADDRSTRLEN] = {};
  const sockaddr* sa = ep.data();
  if (sa->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof text);
  } else if (sa->sa_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a))
      inet_ntop(AF_INET, &a.s6_addr[12], text, sizeof text);
    else
      inet_ntop(AF_INET6, &a, text, sizeof text);
  } else {
    return "unix";
  }
  return text;
}

void admit(const std::shared_ptr<ServerCore>& core, Socket socket, bool is_unix) {
  const std::string address = is_unix ? "unix" : peer_address(socket);
  std::string why;
  const std::uint64_t id = core->admit(address, why);
  if (id == 0) {
    if (std::int64_t left_out = 0; core->admission_log.admit(left_out))
      spdlog::warn("nbd: refusing a connection from {}: {}{}", address, why, serve::LogLimiter::suffix(left_out));
    error_code ec;
    socket.close(ec);
    return;
  }
  if (!is_unix) {
    error_code ec;
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
  }
  auto c = std::make_shared<Connection>(core, std::move(socket), address, id);
  {
    std::lock_guard<std::mutex> lock(core->registry_mu);
    core->registry[id] = c;
  }
  core->slots->attach(id, [w = std::weak_ptr<Connection>(c)] {
    if (auto victim = w.lock()) {
      auto ex = victim->executor();
      asio::post(ex, [victim = std::move(victim)] {
        victim->close("its slot was given to a newcomer: every slot was held");
      });
    }
  });
  spdlog::debug("nbd#{}: accepted from {}", id, address);
  asio::co_spawn(
      c->executor(), [c]() { return c->run(); }, asio::detached);
}

template <typename Acceptor>
asio::awaitable<void> accept_loop(std::shared_ptr<ServerCore> core, Acceptor& acceptor,
                                  bool is_unix) {
  for (;;) {
    Socket socket(asio::make_strand(core->io));
    error_code ec;
    co_await acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      // Out of file descriptors and the like: wait a little rather than spin.
      spdlog::warn("nbd: accept failed: {}", ec.message());
      asio::steady_timer pause(core->io, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    admit(core, std::move(socket), is_unix);
  }
}

sim::Status check_options(const NbdServerOptions& o) {
  auto bad = [](const std::string& what) { return sim::invalid_argument("nbd: " + what); };
  if (o.host.empty() && o.unix_socket_path.empty())
    return bad("neither a TCP address nor a Unix socket to listen on");
  if (o.port < 0 || o.port > 65535) return bad("port must be 0..65535");
  if (o.io_threads < 1 || o.io_threads > 64) return bad("io_threads must be 1..64");
  if (o.max_connections < 1 || o.max_connections > 4096)
    return bad("max_connections must be 1..4096");
  if (o.max_connections_per_address < 1 || o.max_connections_per_address > 4096)
    return bad("max_connections_per_address must be 1..4096");
  if (o.eviction_grace < std::chrono::milliseconds(0) || o.eviction_grace > std::chrono::hours(1))
    return bad("eviction_grace must be 0..1 h");
  if (o.idle_timeout < std::chrono::seconds(1) || o.idle_timeout > std::chrono::hours(24))
    return bad("idle_timeout must be 1 s..24 h");
  if (o.io_timeout < std::chrono::milliseconds(100) || o.io_timeout > std::chrono::hours(1))
    return bad("io_timeout must be 100 ms..1 h");
  if (o.max_payload_bytes < (64 << 10) || o.max_payload_bytes > (256 << 20) ||
      o.max_payload_bytes % 512 != 0)
    return bad("max_payload_bytes must be a multiple of 512 in [64 KiB, 256 MiB]");
  if (o.max_requests_in_flight < 1 || o.max_requests_in_flight > 65536)
    return bad("max_requests_in_flight must be 1..65536");
  if (o.max_bytes_in_flight < o.max_payload_bytes)
    return bad("max_bytes_in_flight must be >= max_payload_bytes");
  if (o.handshake_timeout < std::chrono::milliseconds(100) ||
      o.handshake_timeout > std::chrono::hours(1))
    return bad("handshake_timeout must be 100 ms..1 h");
  if (o.max_options < 1 || o.max_options > 65536) return bad("max_options must be 1..65536");
  if (o.unix_socket_path.size() >= sizeof(sockaddr_un::sun_path))
    return bad("the Unix socket path is longer than " +
               std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
  return sim::Status::ok();
}

sim::Status listen_tcp(NbdServer::Impl& impl, const NbdServerOptions& o) {
  const std::string where = o.host + ":" + std::to_string(o.port);
  error_code ec;
  asio::ip::tcp::resolver resolver(impl.core->io);
  auto results = resolver.resolve(
      o.host, std::to_string(o.port),
      asio::ip::tcp::resolver::passive | asio::ip::tcp::resolver::numeric_service, ec);
  if (ec || results.empty())
    return sim::unavailable("nbd: cannot resolve " + where + ": " +
                            (ec ? ec.message() : "no address"));
  const asio::ip::tcp::endpoint ep = results.begin()->endpoint();
  auto& a = impl.tcp.emplace(impl.core->io);
  if (a.open(ep.protocol(), ec); !ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    impl.tcp.reset();
    const std::string hint = ec == asio::error::address_in_use
                                 ? ": another program (another afasim serve?) holds the port; give another with "
                                   "--nbd-listen HOST:PORT (port 0: any free one; none: no TCP)"
                                 : "";
    return sim::unavailable("nbd: cannot listen on " + where + ": " + ec.message() + hint);
  }
  impl.port = a.local_endpoint().port();
  return sim::Status::ok();
}

sim::Status listen_unix(NbdServer::Impl& impl, const std::string& path) {
  error_code ec;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return sim::unavailable("nbd: " + path + " exists and is not a socket");
    asio::local::stream_protocol::socket probe(impl.core->io);
    probe.connect(asio::local::stream_protocol::endpoint(path), ec);
    if (!ec) return sim::unavailable("nbd: another server is listening on " + path);
    ::unlink(path.c_str());  // a stale socket from a server that did not stop cleanly
  }
  auto& a = impl.local.emplace(impl.core->io);
  const asio::local::stream_protocol::endpoint ep(path);
  if (a.open(ep.protocol(), ec); !ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    impl.local.reset();
    return sim::unavailable("nbd: cannot listen on " + path + ": " + ec.message());
  }
  return sim::Status::ok();
}

}  // namespace

NbdServer::NbdServer(controller::Array& array, serve::ModelThread& model, NbdServerOptions options)
    : impl_(std::make_shared<Impl>()) {
  impl_->core->array = &array;
  impl_->core->model = &model;
  impl_->core->options = std::move(options);
}

NbdServer::~NbdServer() {
  stop();
}

sim::Status NbdServer::start() {
  Impl& impl = *impl_;
  AFASIM_ASSERT(!impl.started, "NbdServer::start called twice");
  const NbdServerOptions& o = impl.core->options;
  AFASIM_RETURN_IF_ERROR(check_options(o));
  impl.core->slots.emplace(o.max_connections, std::min(o.max_connections_per_address, o.max_connections),
                           o.eviction_grace);
  // A client whose address a host's nbd initiator names comes before any stranger.
  impl.core->slots->set_trusted([core = impl.core.get()](const std::string& a) { return core->matches_initiator(a); });
  impl.core->model->post([core = impl.core] { core->refresh_initiators(true); });
  if (!o.host.empty()) AFASIM_RETURN_IF_ERROR(listen_tcp(impl, o));
  if (!o.unix_socket_path.empty()) {
    if (sim::Status st = listen_unix(impl, o.unix_socket_path); !st.is_ok()) {
      impl.tcp.reset();
      return st;
    }
  }
  impl.started = true;
  if (impl.tcp)
    asio::co_spawn(impl.core->io, accept_loop(impl.core, *impl.tcp, false), asio::detached);
  if (impl.local)
    asio::co_spawn(impl.core->io, accept_loop(impl.core, *impl.local, true), asio::detached);
  // Completions come back to the Asio threads once per model round, and the admission's copy
  // of the hosts' nbd initiators is kept fresh (nbd_connection.h).
  impl.core->model->set_round_hook([gate = impl.core->gate, core = impl.core.get()] {
    detail::flush_wakes(*gate);
    core->refresh_initiators(false);
  });
  impl.work.emplace(impl.core->io.get_executor());
  impl.threads_running = o.io_threads;
  for (int i = 0; i < o.io_threads; ++i) {
    impl.threads.emplace_back([&impl] {
      pthread_setname_np(pthread_self(), "afasim-nbd");  // in top -H, perf and bench_nbd
      impl.core->io.run();
      std::lock_guard<std::mutex> lock(impl.threads_mu);
      --impl.threads_running;
      impl.threads_done_cv.notify_all();
    });
  }
  spdlog::info("nbd: listening on {}{}{}", impl.tcp ? o.host + ":" + std::to_string(impl.port) : "",
               impl.tcp && impl.local ? " and " : "", impl.local ? o.unix_socket_path : "");
  return sim::Status::ok();
}

void NbdServer::stop(std::chrono::milliseconds drain_timeout) {
  Impl& impl = *impl_;
  if (!impl.started || impl.stopped) return;
  impl.stopped = true;
  const std::shared_ptr<ServerCore>& core = impl.core;

  // 1. No new connections; every open one finishes what it has in flight.
  asio::post(core->io, [&impl] {
    error_code ec;
    if (impl.tcp) impl.tcp->close(ec);
    if (impl.local) impl.local->close(ec);
  });
  auto for_each_connection = [&core](auto fn) {
    std::lock_guard<std::mutex> lock(core->registry_mu);
    for (auto& [id, weak] : core->registry)
      if (auto c = weak.lock()) {
        auto ex = c->executor();
        asio::post(ex, [c = std::move(c), fn] { fn(*c); });
      }
  };
  core->slots->stop();
  for_each_connection([](Connection& c) { c.begin_shutdown(); });
  const auto deadline = std::chrono::steady_clock::now() + drain_timeout;
  while (core->connections_active.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));

  // 2. Nothing more from the model thread; whatever is still open is closed.
  core->model->set_round_hook(nullptr);
  std::vector<std::shared_ptr<detail::Mailbox>> woken;
  {
    std::lock_guard<std::mutex> lock(core->gate->mu);
    core->gate->open = false;
    woken.swap(core->gate->woken);
  }
  for_each_connection([](Connection& c) { c.close("the server is stopping"); });
  impl.work.reset();
  {
    // With every socket closed the io_context runs out of work; a stuck handler is cut off.
    std::unique_lock<std::mutex> lock(impl.threads_mu);
    if (!impl.threads_done_cv.wait_for(lock, std::chrono::seconds(2),
                                       [&impl] { return impl.threads_running == 0; }))
      core->io.stop();
  }
  for (auto& t : impl.threads) t.join();
  impl.threads.clear();
  impl.tcp.reset();
  impl.local.reset();
  if (!core->options.unix_socket_path.empty()) ::unlink(core->options.unix_socket_path.c_str());
  spdlog::info("nbd: stopped ({} connections served, {} refused)",
               core->connections_accepted.load(), core->connections_refused.load());
}

int NbdServer::port() const {
  return impl_->port;
}

const NbdServerOptions& NbdServer::options() const {
  return impl_->core->options;
}

NbdServerStats NbdServer::stats() const {
  const ServerCore& c = *impl_->core;
  NbdServerStats s;
  s.connections_accepted = c.connections_accepted.load();
  s.connections_refused = c.connections_refused.load();
  s.connections_active = c.connections_active.load();
  s.connections_idle_closed = c.connections_idle_closed.load();
  s.connections_evicted = c.connections_evicted.load();
  s.connections_io_timed_out = c.connections_io_timed_out.load();
  s.requests = c.requests.load();
  s.requests_refused = c.requests_refused.load();
  s.protocol_errors = c.protocol_errors.load();
  s.requests_in_flight_high_water = c.in_flight_high_water.load();
  return s;
}

}  // namespace afasim::nbd
