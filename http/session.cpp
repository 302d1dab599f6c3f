// One HTTP connection: read a request under its deadline, answer it, repeat while the
// client keeps the connection alive (http/server.h gives the bounds).
#include <spdlog/spdlog.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <deque>

#include "http/parse.h"
#include "http/server_impl.h"

namespace afasim::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// After refusing a request (413 and the like), how much of its body is read and dropped.
constexpr std::size_t kDrainAfterRefusalBytes = 16 << 20;

auto redirect(error_code& ec) {
  return asio::redirect_error(asio::use_awaitable, ec);
}

// The streamed body's queue, shared by the producer (any thread) and the connection's
// coroutine (its strand). The timer is the coroutine's wake-up: write() cancels it.
class Sink : public StreamSink, public std::enable_shared_from_this<Sink> {
 public:
  Sink(asio::any_io_executor strand, std::size_t max_bytes)
      : strand_(strand), timer_(strand), max_bytes_(max_bytes) {
    timer_.expires_at(asio::steady_timer::time_point::max());
  }
  bool write(std::string data) override {
    bool accepted = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_ || gone_) return false;
      if (queued_bytes_ + data.size() > max_bytes_) {
        gone_ = true;  // the client does not keep up: the connection is closed
      } else {
        queued_bytes_ += data.size();
        queue_.push_back(std::move(data));
        accepted = true;
      }
    }
    wake();
    return accepted;
  }
  void close() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    wake();
  }
  bool closed() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_ || gone_;
  }
  void set_gone() {
    std::lock_guard<std::mutex> lock(mu_);
    gone_ = true;
  }
  // The client closed the connection (or spoke while it was being streamed to): the body
  // is over, and the producer's next write() and closed() say so at once.
  void peer_gone() {
    set_gone();
    wake();
  }
  // On the strand: what is queued, and whether the body is over (closed or gone).
  std::deque<std::string> take(bool& closed, bool& gone) {
    std::lock_guard<std::mutex> lock(mu_);
    std::deque<std::string> out;
    out.swap(queue_);
    queued_bytes_ = 0;
    closed = closed_;
    gone = gone_;
    return out;
  }
  asio::steady_timer& timer() { return timer_; }
  // On the strand, just before waiting: whether there is something to do already (a write()
  // or close() whose wake-up ran while the coroutine was busy writing, and was lost).
  bool ready() const {
    std::lock_guard<std::mutex> lock(mu_);
    return !queue_.empty() || closed_ || gone_;
  }

 private:
  void wake() {
    asio::post(strand_, [self = shared_from_this()] { self->timer_.cancel(); });
  }

  asio::any_io_executor strand_;
  asio::steady_timer timer_;
  const std::size_t max_bytes_;
  mutable std::mutex mu_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  bool closed_ = false;
  bool gone_ = false;
};

template <typename Stream>
class Session : public Connection, public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <typename... Args>
  Session(std::shared_ptr<Server::Impl> server, std::string address, std::uint64_t slot,
          Args&&... stream_args)
      : server_(std::move(server)),
        opts_(server_->options),
        address_(std::move(address)),
        slot_(slot),
        stream_(std::forward<Args>(stream_args)...) {}
  ~Session() override { server_->release(slot_); }

  // The strand the connection's coroutine runs on (start_connection): every touch of the
  // socket and of a stream's wake-up timer happens there.
  void set_strand(asio::any_io_executor strand) { strand_ = std::move(strand); }

  void close() override {
    asio::post(strand_, [self = this->shared_from_this()] {
      error_code ec;
      beast::get_lowest_layer(self->stream_).socket().close(ec);
    });
  }

  asio::awaitable<void> run() {
    constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;
    if constexpr (kTls) {
      error_code ec;
      lowest().expires_after(opts_.request_timeout);
      // The first bytes decide: a TLS record (0x16, a handshake) goes to the handshake, which
      // takes them as already read; a request line (a method's capital letter) is plain HTTP
      // sent to the HTTPS port, and gets a plain 400 saying so before the close (hostile round
      // 31: it got no answer at all, curl's "Empty reply from server").
      std::array<char, 1024> first;
      const std::size_t n = co_await lowest().async_read_some(asio::buffer(first), redirect(ec));
      if (ec || n == 0) co_return;
      if (first[0] != 0x16) {
        if (first[0] >= 'A' && first[0] <= 'Z') co_await refuse_plain_http();
        co_return;
      }
      co_await stream_.async_handshake(asio::ssl::stream_base::server, asio::buffer(first.data(), n), redirect(ec));
      if (ec) co_return;
    }
    bool first = true;
    for (;;) {
      if (!co_await wait_for_request(first)) co_return;
      first = false;
      const auto start = Clock::now();
      std::optional<Request> req = co_await read_request();
      if (!req) co_return;
      lowest().expires_never();  // the handler takes what it takes; the write has its own bound
      Response res = co_await answer(*req);
      if (res.status >= 400 && opts_.reshape_error) opts_.reshape_error(*req, res);
      server_->log_request(*req, res.status, start);
      const bool keep = keep_alive_ && !refused_;
      if (!co_await write_response(*req, res, keep)) co_return;
      if (!keep) break;
    }
    co_await shut_down();
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  // A plain HTTP request on the HTTPS port: a plain 400 that says so, then the close.
  asio::awaitable<void> refuse_plain_http() {
    static const std::string kBody = "This port speaks HTTPS: use https:// (afasim serve was started with --tls).\n";
    static const std::string kAnswer = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                       "Connection: close\r\nContent-Length: " + std::to_string(kBody.size()) +
                                       "\r\n\r\n" + kBody;
    ++server_->requests_refused;
    error_code ec;
    co_await asio::async_write(lowest(), asio::buffer(kAnswer), redirect(ec));
    // What the client sent past the bytes read goes unread: closing on it would reset the
    // connection and could discard the answer before the client read it (hostile round 31).
    co_await close_send_and_drain(ec);
  }

  // Waits for the first byte of the next request: the idle bound between requests, the
  // request bound for the first one. False when the client went or stayed silent.
  asio::awaitable<bool> wait_for_request(bool first) {
    if (buffer_.size() > 0) co_return true;
    lowest().expires_after(first ? opts_.request_timeout : opts_.idle_timeout);
    error_code ec;
    const std::size_t n = co_await stream_.async_read_some(buffer_.prepare(4096), redirect(ec));
    if (ec) co_return false;
    buffer_.commit(n);
    co_return true;
  }

  // Reads one whole request under request_timeout (from its first byte). On a bad,
  // too large or too slow request, answers it if it can and returns nullopt (close).
  asio::awaitable<std::optional<Request>> read_request() {
    lowest().expires_after(opts_.request_timeout);
    RequestParser parser;
    limit_parser(parser, opts_);
    error_code ec;
    co_await bhttp::async_read_header(stream_, buffer_, parser, redirect(ec));
    const auto header_fields = std::distance(parser.get().begin(), parser.get().end());
    if (!ec && parser.get()[bhttp::field::expect] == "100-continue" && !parser.is_done()) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      co_await asio::async_write(stream_, asio::buffer(kContinue), redirect(ec));
    }
    if (!ec && !parser.is_done()) co_await bhttp::async_read(stream_, buffer_, parser, redirect(ec));
    if (ec) {
      co_await refuse(ec);
      co_return std::nullopt;
    }
    // Beast adds a chunked body's trailer fields to the header's: an Authorization or Host
    // sent after the body would decide the caller while a proxy saw the header's (RFC 9110
    // 6.5.1: not to be merged; hostile round 24). A trailer is refused.
    if (std::distance(parser.get().begin(), parser.get().end()) != header_fields) {  // a trailer
      co_await refuse_with(problem_response(400, problem::kBadRequest,
                                            "the request has trailer fields after its chunked body; send every "
                                            "field in the header section",
                                            ""));
      co_return std::nullopt;
    }
    keep_alive_ = parser.get().keep_alive();
    version_ = parser.get().version();
    co_return to_request(parser.release(), address_, !std::is_same_v<Stream, beast::tcp_stream>);
  }

  // A request that could not be read: 431, 413 or 400 when the client can still hear it.
  asio::awaitable<void> refuse(const error_code& ec) {
    if (ec == beast::error::timeout) ++server_->requests_timed_out;
    std::optional<Response> res = refusal_for(ec, opts_);
    if (!res) co_return;  // nobody to answer
    co_await refuse_with(std::move(*res));
  }

  asio::awaitable<void> refuse_with(Response res) {
    ++server_->requests_refused;
    Request r;
    r.method = "-";
    r.path = "-";
    server_->log_request(r, res.status, Clock::now());
    keep_alive_ = false;
    if (co_await write_response(r, res, false)) co_await shut_down(kDrainAfterRefusalBytes);
  }

  asio::awaitable<Response> answer(Request& r) {
    if (std::optional<Response> refused = precheck(r, version_, opts_)) {
      ++server_->requests_refused;
      refused_ = true;  // a client that sends a bad target or Host is not kept
      co_return std::move(*refused);
    }
    // A client that authenticated keeps its slot when every slot is held: settled as the
    // guard admits it, before the handler runs (a POST applied, then its connection taken,
    // would leave the client unsure whether it was: review 29).
    r.on_authenticated = [server = server_.get(), slot = slot_] { server->slots->settle(slot); };
    co_return co_await server_->respond(r);
  }

  template <typename Message>
  void put_headers(Message& m, const Response& res, bool keep) {
    for (const auto& [k, v] : res.headers.fields()) m.insert(k, v);
    // On every answer: no other site may frame the page (its Delete and fault buttons under
    // decoys: clickjacking), and no browser guesses a type the server did not send (hostile
    // round 31 found neither header).
    if (!res.headers.has("X-Frame-Options")) m.insert("X-Frame-Options", "DENY");
    if (!res.headers.has("Content-Security-Policy")) m.insert("Content-Security-Policy", "frame-ancestors 'none'");
    if (!res.headers.has("X-Content-Type-Options")) m.insert("X-Content-Type-Options", "nosniff");
    m.keep_alive(keep);
  }

  // Writes `res` (a HEAD gets the head only). False when the client is gone.
  asio::awaitable<bool> write_response(const Request& req, Response& res, bool keep) {
    if (res.stream && req.method != "HEAD") co_return co_await write_stream(res, keep);
    bhttp::response<bhttp::string_body> m{static_cast<bhttp::status>(res.status), version_};
    put_headers(m, res, keep);
    if (req.method == "HEAD") {
      m.content_length(res.body.size());
    } else {
      m.body() = std::move(res.body);
      m.prepare_payload();
    }
    lowest().expires_after(opts_.write_timeout);
    error_code ec;
    co_await bhttp::async_write(stream_, m, redirect(ec));
    co_return !ec;
  }

  asio::awaitable<bool> write_stream(Response& res, bool keep) {
    bhttp::response<bhttp::empty_body> m{static_cast<bhttp::status>(res.status), version_};
    put_headers(m, res, keep);
    m.chunked(true);
    bhttp::response_serializer<bhttp::empty_body> sr{m};
    lowest().expires_after(opts_.write_timeout);
    error_code ec;
    co_await bhttp::async_write_header(stream_, sr, redirect(ec));
    if (ec) co_return false;
    // On the connection's strand: a write() from another thread wakes this coroutine through
    // it, so that the wake-up cannot slip in between the queue check and the wait.
    auto sink = std::make_shared<Sink>(strand_, opts_.stream_buffer_max_bytes);
    watch_peer(sink);
    res.stream(sink);
    for (;;) {
      bool closed = false, gone = false;
      std::deque<std::string> chunks = sink->take(closed, gone);
      if (gone) break;
      for (auto& c : chunks) {
        if (c.empty()) continue;
        lowest().expires_after(opts_.write_timeout);
        co_await asio::async_write(stream_, bhttp::make_chunk(asio::buffer(c)), redirect(ec));
        if (ec) break;
      }
      if (ec) break;
      if (closed) {
        co_await asio::async_write(stream_, bhttp::make_chunk_last(), redirect(ec));
        co_return !ec;
      }
      if (sink->ready()) continue;
      lowest().expires_never();
      co_await sink->timer().async_wait(redirect(ec));  // woken by write() or close()
      ec = {};
    }
    sink->set_gone();
    co_return false;
  }

  // A streaming client sends nothing after its request, so the socket turning readable means
  // it closed the connection or spoke out of turn; either ends the stream at once, freeing its
  // slot (the event bus's bounds) without waiting for the next keep-alive write to fail (15 s).
  // An end of stream may also be a half-close (`nc -N`) by a client still reading (review,
  // round 25): two comments 100 ms apart tell them apart, since a closed peer answers the first
  // with a reset and the second write then fails. Peeks only: no byte is consumed.
  void watch_peer(const std::shared_ptr<Sink>& sink) {
    lowest().socket().async_wait(
        asio::ip::tcp::socket::wait_read,
        asio::bind_executor(strand_, [self = this->shared_from_this(), weak = std::weak_ptr<Sink>(sink)](error_code ec) {
          auto s = weak.lock();
          if (!s || ec) return;
          // A peek that never blocks: Asio's own receive() on this socket (non-blocking
          // inside Asio, blocking to its user) polls with no timeout when nothing is there, so
          // a wake-up with no byte waiting parked an I/O thread inside this stream, which went
          // silent (review of the redfish_clients flake, 2026-12-06). Nothing there: watch again.
          char byte = 0;
          const ssize_t n = ::recv(self->lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return self->watch_peer(s);
          if (n != 0) return s->peer_gone();  // a byte out of turn, or an error
          s->write(": \n\n");  // end of stream: closed, or half-closed by a client still reading
          auto probe = std::make_shared<asio::steady_timer>(self->strand_, std::chrono::milliseconds(100));
          probe->async_wait([probe, weak](error_code) {
            if (auto again = weak.lock()) again->write(": \n\n");
          });
        }));
  }

  // Ends the connection. `drain_bytes`: how much the client may still be sending that is
  // read and dropped first (for up to 2 s), so that closing does not reset the connection
  // before the client has read our last answer (a client that uploads a body too large
  // often reads only once it has sent all of it).
  asio::awaitable<void> shut_down(std::size_t drain_bytes = 64 << 10) {
    error_code ec;
    if constexpr (!std::is_same_v<Stream, beast::tcp_stream>) {
      lowest().expires_after(std::chrono::seconds(1));
      co_await stream_.async_shutdown(redirect(ec));
    }
    co_await close_send_and_drain(ec, drain_bytes);
  }

  // Our side of the TCP connection closed, then up to `drain_bytes` the client still sends
  // read and dropped for up to 2 s (none when `ec` is already set).
  asio::awaitable<void> close_send_and_drain(error_code& ec, std::size_t drain_bytes = 64 << 10) {
    lowest().socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    lowest().expires_after(std::chrono::seconds(2));
    char sink[16384];
    for (std::size_t read = 0; read < drain_bytes && !ec;)
      read += co_await lowest().async_read_some(asio::buffer(sink), redirect(ec));
  }

  std::shared_ptr<Server::Impl> server_;
  const ServerOptions& opts_;
  std::string address_;
  std::uint64_t slot_;
  asio::any_io_executor strand_;
  Stream stream_;
  beast::flat_buffer buffer_{opts_.header_max_bytes + 4096};
  bool keep_alive_ = false;
  bool refused_ = false;
  unsigned version_ = 11;
};

}  // namespace

void start_connection(std::shared_ptr<Server::Impl> server, asio::ip::tcp::socket socket,
                      std::string address, std::uint64_t slot) {
  // One strand per connection: the coroutine, its Sink's wake-ups and close() never run at
  // once on two I/O threads.
  const asio::any_io_executor strand = asio::make_strand(socket.get_executor());
  auto launch = [&](auto session) {
    session->set_strand(strand);
    {
      std::lock_guard<std::mutex> lock(server->admit_mu);
      server->registry[slot] = session;
    }
    server->slots->attach(slot, [w = std::weak_ptr<Connection>(session)] {
      if (auto victim = w.lock()) victim->close();  // posts to its strand
    });
    asio::co_spawn(strand, [session]() { return session->run(); }, asio::detached);
  };
  if (server->options.tls) {
    using S = Session<beast::ssl_stream<beast::tcp_stream>>;
    launch(std::make_shared<S>(server, std::move(address), slot,
                               beast::tcp_stream(std::move(socket)), *server->options.tls));
  } else {
    using S = Session<beast::tcp_stream>;
    launch(std::make_shared<S>(server, std::move(address), slot, std::move(socket)));
  }
}

}  // namespace afasim::http
