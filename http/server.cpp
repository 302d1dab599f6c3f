#include "http/server.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "http/server_impl.h"

// GCC 12 warns that a coroutine's frame has a field of a lambda's or an anonymous
// namespace's type (-Wsubobject-linkage): a false positive for frames, which are never shared
// between translation units. Off for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
#endif

namespace afasim::http {

using boost::system::error_code;

namespace {

void check_options(const ServerOptions& o) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("http::ServerOptions: " + m); };
  auto in = [](auto v, auto lo, auto hi) { return v >= lo && v <= hi; };
  using std::chrono::milliseconds;
  const auto ten_min = milliseconds(600'000);
  if (o.host.empty()) fail("host is empty");
  if (!in(o.port, 0, 65535)) fail("port must be 0..65535");
  if (!in(o.io_threads, 1, 64)) fail("io_threads must be 1..64");
  if (!in(o.worker_threads, 1, 256)) fail("worker_threads must be 1..256");
  if (!in(o.worker_queue_max, 1, 65536)) fail("worker_queue_max must be 1..65536");
  if (!in(o.max_connections, 1, 65536)) fail("max_connections must be 1..65536");
  if (!in(o.max_connections_per_address, 1, o.max_connections))
    fail("max_connections_per_address must be 1..max_connections");
  if (o.eviction_grace < std::chrono::milliseconds(0) || o.eviction_grace > std::chrono::hours(1))
    fail("eviction_grace must be 0..1 h");
  if (!in(o.header_max_bytes, std::size_t{1} << 10, std::size_t{1} << 20))
    fail("header_max_bytes must be 1 KiB..1 MiB");
  if (!in(o.body_max_bytes, std::size_t{1} << 10, std::size_t{64} << 20))
    fail("body_max_bytes must be 1 KiB..64 MiB");
  for (auto t : {o.request_timeout, o.idle_timeout, o.write_timeout})
    if (!in(t, milliseconds(100), ten_min)) fail("timeouts must be 100 ms..10 min");
  if (!in(o.stream_buffer_max_bytes, std::size_t{64} << 10, std::size_t{1} << 30))
    fail("stream_buffer_max_bytes must be 64 KiB..1 GiB");
}

// The client's address: dotted IPv4 (also for v4-mapped IPv6), else IPv6 text.
std::string peer_address(const asio::ip::tcp::socket& socket) {
  error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  const auto a = ep.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).to_string();
  return a.to_string();
}

asio::awaitable<void> accept_loop(std::shared_ptr<Server::Impl> s) {
  for (;;) {
    asio::ip::tcp::socket socket(asio::make_strand(s->io));
    error_code ec;
    co_await s->acceptor->async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !s->acceptor->is_open()) co_return;
    if (ec) {
      // Out of file descriptors and the like: wait a little rather than spin.
      s->logger->warn("http: accept failed: {}", ec.message());
      asio::steady_timer pause(s->io, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    std::string address = peer_address(socket);
    const std::uint64_t slot = s->admit(address);
    if (slot == 0) {
      socket.close(ec);
      continue;
    }
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    start_connection(s, std::move(socket), std::move(address), slot);
  }
}

// Runs `fn` on the worker pool and resumes the awaiting coroutine on its own executor.
template <typename Fn>
asio::awaitable<Response> on_worker(asio::thread_pool& pool, Fn fn) {
  co_return co_await asio::co_spawn(
      pool.get_executor(), [fn = std::move(fn)]() mutable -> asio::awaitable<Response> {
        co_return fn();
      },
      asio::use_awaitable);
}

Response allow_response(const std::vector<std::string>& allowed) {
  std::string allow;
  for (const auto& m : allowed) {
    allow += (allow.empty() ? "" : ", ") + m;
    if (m == "GET") allow += ", HEAD";
  }
  allow += ", OPTIONS";
  Response res;
  res.headers.set("Allow", allow);
  return res;
}

}  // namespace

std::uint64_t Server::Impl::admit(const std::string& address) {
  const serve::ConnectionSlots::Grant g = slots->admit(address);
  if (g.id == 0) {
    ++connections_refused;
    logger->debug("http: refusing a connection from {}: {}", address, g.why);
    return 0;
  }
  ++active;
  ++connections_accepted;
  if (g.evicted != 0) {
    ++connections_evicted;
    if (std::int64_t left_out = 0; eviction_log.admit(left_out))
      logger->warn("http: every connection slot was held: closing a connection from {} that has "
                   "made no authenticated request, for a connection from {}{}",
                   g.evicted_address, address, serve::LogLimiter::suffix(left_out));
    if (g.close_evicted) g.close_evicted();
  }
  return g.id;
}

void Server::Impl::release(std::uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(admit_mu);
    registry.erase(id);
  }
  slots->release(id);
  --active;
}

void Server::Impl::log_request(const Request& r, int status,
                               std::chrono::steady_clock::time_point start) {
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  // "POST /api/v1/volumes 201 admin 0.174 ms": the user is "-" without authentication.
  logger->info("{} {} {} {} {:.3f} ms", r.method, r.path, status,
               r.principal.user.empty() ? "-" : r.principal.user, ms);
}

asio::awaitable<Response> Server::Impl::respond(Request& r) {
  ++requests;
  const Router::Match m = router.match(r);
  if (m.route == nullptr) {
    if (m.allowed.empty())
      co_return problem_response(404, problem::kNotFound, "no resource at " + r.path, r.path);
    Response res = allow_response(m.allowed);
    if (r.method == "OPTIONS") {
      res.status = 204;
      co_return res;
    }
    const std::string allow = res.headers.get("Allow");
    Response p = problem_response(405, problem::kMethodNotAllowed,
                                  r.method + " is not allowed on " + r.path + "; allowed: " + allow,
                                  r.path);
    p.headers.set("Allow", allow);
    co_return p;
  }
  const Route& route = *m.route;
  auto run = [this, &r, &route](bool may_block) {
    try {
      Response deny;
      const Verdict v = guard ? guard(r, route, may_block, deny) : Verdict::kAllow;
      if (v == Verdict::kDeny) return std::optional<Response>(std::move(deny));
      if (v == Verdict::kNeedsWorker) return std::optional<Response>();
      r.may_block = may_block;
      if (!r.principal.user.empty() && r.on_authenticated) r.on_authenticated();
      return std::optional<Response>(route.handler(r));
    } catch (const NeedsWorker&) {
      return std::optional<Response>();
    } catch (const std::exception& e) {
      logger->error("{} {}: unexpected exception: {}", r.method, r.path, e.what());
      return std::optional<Response>(
          problem_response(500, problem::kInternal, "internal error", r.path));
    }
  };
  if (route.never_blocks) {
    if (auto res = run(false)) co_return std::move(*res);
  }
  if (worker_pending.load() >= options.worker_queue_max) {
    ++requests_refused;
    Response busy = problem_response(503, problem::kBusy,
                                     "every worker is busy and " +
                                         std::to_string(options.worker_queue_max) +
                                         " requests are waiting; retry shortly",
                                     r.path);
    busy.headers.set("Retry-After", "1");
    co_return busy;
  }
  ++worker_pending;
  Response res = co_await on_worker(*workers, [&run, this] {
    --worker_pending;
    auto out = run(true);
    return out ? std::move(*out)
               : problem_response(500, problem::kInternal, "the guard could not decide", "");
  });
  co_return res;
}

bool host_allowed(std::string_view host, const std::vector<std::string>& allowed) {
  std::string name;
  if (!host.empty() && host.front() == '[') {
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    in6_addr a6{};
    return inet_pton(AF_INET6, std::string(host.substr(1, close - 1)).c_str(), &a6) == 1;
  }
  const std::size_t colon = host.rfind(':');
  name = std::string(host.substr(0, colon));
  if (name.empty()) return false;
  in_addr a4{};
  if (inet_pton(AF_INET, name.c_str(), &a4) == 1) return true;
  if (iequals(name, "localhost")) return true;
  for (const auto& a : allowed)
    if (a == "*" || iequals(a, name)) return true;
  return false;
}

Server::Server(ServerOptions options, Router router) : impl_(std::make_shared<Impl>()) {
  check_options(options);
  impl_->options = std::move(options);
  impl_->router = std::move(router);
  impl_->slots.emplace(impl_->options.max_connections, impl_->options.max_connections_per_address,
                       impl_->options.eviction_grace);
  impl_->logger = impl_->options.logger ? impl_->options.logger : spdlog::default_logger();
}

Server::~Server() {
  stop();
}

void Server::set_guard(Guard guard) {
  impl_->guard = std::move(guard);
}

sim::Status Server::start() {
  Impl& s = *impl_;
  if (s.started) return sim::conflict("the HTTP server is already started");
  const std::string where = s.options.host + ":" + std::to_string(s.options.port);
  error_code ec;
  const auto address = asio::ip::make_address(s.options.host, ec);
  if (ec) return sim::unavailable("cannot listen on " + where + ": not an IP address");
  const asio::ip::tcp::endpoint ep(address, static_cast<unsigned short>(s.options.port));
  auto& a = s.acceptor.emplace(s.io);
  if (a.open(ep.protocol(), ec); !ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    s.acceptor.reset();
    const std::string hint = ec == asio::error::address_in_use
                                 ? ": another program (another afasim serve?) holds the port; give another with "
                                   "--listen HOST:PORT (port 0: any free one)"
                                 : "";
    return sim::unavailable("cannot listen on " + where + " (" + ec.message() + ")" + hint);
  }
  s.port = a.local_endpoint().port();
  s.started = true;
  s.workers.emplace(static_cast<std::size_t>(s.options.worker_threads));
  asio::co_spawn(s.io, accept_loop(impl_), asio::detached);
  s.work.emplace(s.io.get_executor());
  for (int i = 0; i < s.options.io_threads; ++i) {
    s.threads.emplace_back([&s] {
      pthread_setname_np(pthread_self(), "afasim-http");
      s.io.run();
    });
  }
  return sim::Status::ok();
}

void Server::stop() {
  Impl& s = *impl_;
  if (!s.started || s.stopped) return;
  s.stopped = true;
  asio::post(s.io, [&s] {
    error_code ec;
    s.acceptor->close(ec);
  });
  std::vector<std::shared_ptr<Connection>> open;
  s.slots->stop();
  {
    std::lock_guard<std::mutex> lock(s.admit_mu);
    for (auto& [id, weak] : s.registry)
      if (auto c = weak.lock()) open.push_back(std::move(c));
  }
  for (auto& c : open) c->close();
  open.clear();
  // Handlers already running finish (they may be waiting for the model thread).
  s.workers->join();
  s.work.reset();
  s.io.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  s.acceptor.reset();
}

int Server::port() const {
  return impl_->port.load();
}

std::string Server::base_url() const {
  const std::string& h = impl_->options.host;
  const std::string host = h.find(':') != std::string::npos ? "[" + h + "]" : h;
  return std::string(impl_->options.tls ? "https" : "http") + "://" + host + ":" +
         std::to_string(port());
}

const Router& Server::router() const {
  return impl_->router;
}

ServerStats Server::stats() const {
  const Impl& s = *impl_;
  ServerStats out;
  out.connections_accepted = s.connections_accepted.load();
  out.connections_refused = s.connections_refused.load();
  out.connections_evicted = s.connections_evicted.load();
  out.connections_active = s.active.load();
  out.requests = s.requests.load();
  out.requests_timed_out = s.requests_timed_out.load();
  out.requests_refused = s.requests_refused.load();
  return out;
}

}  // namespace afasim::http

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
