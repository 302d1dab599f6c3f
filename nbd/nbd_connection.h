// Internal to nbd/: one NBD client connection (handshake, then transmission) and the
// state the server shares with its connections. Not a public interface; see nbd_server.h.
//
// Threads: a Connection lives on its socket's strand (an Asio thread). The model thread
// touches only Mailbox (under its mutex) and the Requests it was handed; it never holds a
// Connection. Requests carry their own buffers, so a completion that arrives after the
// client has gone writes into memory that still exists and is then dropped.
#pragma once

// clang-format off
#include <utility>  // before Boost.Asio 1.74's awaitable.hpp, which uses std::exchange
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
// clang-format on

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "controller/array.h"
#include "serve/connection_slots.h"
#include "serve/model_thread.h"
#include "nbd/connection_event_limiter.h"
#include "nbd/nbd_exports.h"
#include "nbd/nbd_protocol.h"
#include "nbd/nbd_server.h"

namespace afasim::nbd::detail {

namespace asio = boost::asio;
using Socket = asio::generic::stream_protocol::socket;

class Connection;

// The connection's read buffer. fill() never needs more than this at once (the largest
// option data, NbdServer::kMaxOptionDataBytes, is 64 KiB).
inline constexpr std::size_t kReadBufferBytes = 256 << 10;

// The single base:allocation context's id on a connection.
inline constexpr std::uint32_t kBaseAllocationId = 1;

struct Mailbox;

// The model thread's way back to the Asio threads. Closed when the server stops: after that
// nothing is posted to its io_context, which may be gone. The model thread checks it
// (under `mu`) before every post.
struct Gate {
  std::mutex mu;
  bool open = true;
  // Mailboxes that received completions during the current model round; the round hook
  // wakes each once (flush_wakes), so a burst of completions costs one wake-up.
  std::vector<std::shared_ptr<Mailbox>> woken;
};
// Model thread, end of a round: posts one wake-up per mailbox in `gate.woken`.
void flush_wakes(Gate& gate);

// What the server and its connections share; outlives both (held by shared_ptr).
struct ServerCore {
  controller::Array* array = nullptr;
  serve::ModelThread* model = nullptr;
  NbdServerOptions options;
  asio::io_context io;
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();

  std::atomic<std::int64_t> connections_accepted{0}, connections_refused{0}, connections_active{0};
  std::atomic<std::int64_t> requests{0}, requests_refused{0}, protocol_errors{0};
  std::atomic<std::int64_t> in_flight_high_water{0}, connections_idle_closed{0};
  std::atomic<std::int64_t> connections_io_timed_out{0};
  std::atomic<std::uint64_t> next_connection_id{1};
  ConnectionEventLimiter event_limiter;  // model thread only

  std::atomic<std::int64_t> connections_evicted{0};

  // The admission counts and whose slot a newcomer may take (serve/connection_slots.h);
  // made by NbdServer::start from the options.
  std::optional<serve::ConnectionSlots> slots;
  // Log lines strangers can cause by the thousand a second, each kind its own budget
  // (serve/connection_slots.h): refused and evicted connections; handshakes that break the
  // protocol or name no export (a mapped host's "why was my export refused" among them).
  serve::LogLimiter admission_log;
  serve::LogLimiter handshake_log;
  // The hosts' nbd initiators as of the last refresh (model thread, at most once a wall
  // second, from the round hook and each handshake's look-up): an address matching one is
  // trusted by `slots` before it settles.
  std::mutex initiators_mu;
  std::vector<std::string> nbd_initiators;
  std::chrono::steady_clock::time_point initiators_refreshed_at{};  // model thread
  // Model thread: refreshes `nbd_initiators` when `force` or a second has passed.
  void refresh_initiators(bool force);
  // Any thread: whether `address` matches an nbd initiator of the last refresh.
  bool matches_initiator(const std::string& address);
  // Live connections, to close them at stop() or when their slot is taken.
  std::mutex registry_mu;
  std::map<std::uint64_t, std::weak_ptr<Connection>> registry;

  // Accept: takes a slot for `address` (0 when over a bound or stopping: the reason in
  // `why`), else a new connection id; closes the connection whose slot it took, if any.
  // leave() gives the slot back.
  std::uint64_t admit(const std::string& address, std::string& why);
  void leave(std::uint64_t id);
};

// One transmission request from header to reply. Owned by exactly one party at a time:
// the connection, then the model (inside the array's completion callback), then the
// mailbox, then the connection's write queue.
struct Request {
  proto::RequestHeader header;
  std::unique_ptr<std::uint8_t[]> data;  // WRITE payload, or the READ buffer
  std::uint32_t data_capacity = 0;       // bytes `data` holds (requests are reused)
  bool send_data = false;                // the reply carries `data` (a successful READ)
  std::int64_t charged_bytes = 0;        // counted against the connection's in-flight bytes
  std::uint32_t error = 0;
  std::string message;                        // why, for an error chunk
  std::vector<proto::BlockDescriptor> extents;  // BLOCK_STATUS result
  sim::Time latency_ns = 0;
  std::shared_ptr<Mailbox> mailbox;
  std::vector<std::uint8_t> head;  // reply bytes sent before `data`
};

// Where the model thread leaves finished requests for a connection.
struct Mailbox {
  std::mutex mu;
  std::vector<std::unique_ptr<Request>> done;
  bool wake_pending = false;  // a wake-up is posted and not yet run
  bool closed = false;        // the connection is gone: drop what arrives
  std::uint64_t connection_id = 0;  // the connection's id (session records name it)
  asio::io_context::executor_type io_executor;
  std::weak_ptr<Connection> connection;
  std::shared_ptr<Gate> gate;

  explicit Mailbox(asio::io_context::executor_type ex) : io_executor(std::move(ex)) {}
  // Model thread: queues `r`; the connection is woken at the end of the model's round.
  static void deliver(std::unique_ptr<Request> r);
};

// Runs `batch` on the model thread: each request into Array::submit (or answered there:
// BLOCK_STATUS, unmapped export), completions to their mailboxes. `model`: told of each I/O
// submitted and completed (ModelThread::host_io_started); null in batch replay.
void start_requests(controller::Array& array, const ExportInfo& e,
                    std::vector<std::unique_ptr<Request>>& batch, serve::ModelThread* model = nullptr);

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<ServerCore> core, Socket socket, std::string client_address,
             std::uint64_t id);
  ~Connection();

  // The connection's whole life; spawned on the socket's strand.
  asio::awaitable<void> run();
  // Strand: closes the socket now (hard disconnect). Idempotent.
  void close(std::string_view why);
  // Strand: server stop. Requests in flight finish; new ones get ESHUTDOWN; the connection
  // closes when nothing is in flight.
  void begin_shutdown();
  // Strand: the mailbox has finished requests.
  void on_completions();

  std::uint64_t id() const { return id_; }
  Socket::executor_type executor() { return socket_.get_executor(); }

 private:
  struct Counters {
    std::int64_t reads = 0, writes = 0, other = 0, read_bytes = 0, write_bytes = 0, errors = 0;
  };

  // Handshake (returns true when transmission starts).
  asio::awaitable<bool> handshake();
  asio::awaitable<bool> handle_option(std::uint32_t option, std::vector<std::uint8_t>& data);
  asio::awaitable<void> reply_list(std::uint32_t option);
  asio::awaitable<bool> reply_info(std::uint32_t option, std::span<const std::uint8_t> data);
  asio::awaitable<bool> reply_export_name(std::span<const std::uint8_t> data);
  asio::awaitable<void> reply_meta_context(std::uint32_t option,
                                           std::span<const std::uint8_t> data);
  asio::awaitable<void> send(std::vector<std::uint8_t> bytes);
  // NBD_OPT_STARTTLS: acknowledges, then runs the TLS handshake; every byte after is TLS.
  asio::awaitable<void> start_tls(std::uint32_t option, std::span<const std::uint8_t> data);
  // The socket's bytes, through TLS once it is on.
  template <typename Buffers>
  asio::awaitable<std::size_t> read_some(const Buffers& b) {
    if (tls_) co_return co_await tls_->async_read_some(b, asio::use_awaitable);
    co_return co_await socket_.async_read_some(b, asio::use_awaitable);
  }
  template <typename Buffers>
  asio::awaitable<void> write_all(const Buffers& b) {
    if (tls_)
      co_await asio::async_write(*tls_, b, asio::use_awaitable);
    else
      co_await asio::async_write(socket_, b, asio::use_awaitable);
  }
  // Looks an export up on the model thread; nullopt also when the model is stopped.
  std::optional<ExportInfo> lookup_export(const std::string& name);
  void enter_transmission(ExportInfo e);

  // Buffered reading.
  asio::awaitable<void> fill(std::size_t n);  // at least n bytes buffered; throws at EOF
  std::span<const std::uint8_t> buffered() const { return {rbuf_.data() + rpos_, rend_ - rpos_}; }
  void consume(std::size_t n) { rpos_ += n; }
  asio::awaitable<void> read_into(std::uint8_t* dst, std::size_t n);
  asio::awaitable<void> discard(std::size_t n);

  // Transmission.
  asio::awaitable<void> transmission();
  asio::awaitable<void> wait_for_room(std::int64_t bytes);
  // Reads WRITE `h`'s payload into `dst`, or drops it when `dst` is null (a refused WRITE).
  // What is not buffered yet must arrive within io_timeout, else the connection is closed
  // and this throws: a payload cut short is never handed to the array.
  asio::awaitable<void> read_payload(const proto::RequestHeader& h, std::uint8_t* dst);
  // Arms idle_timer_ when nothing is in flight: no request within idle_timeout closes the
  // connection. Disarmed when a request header arrives.
  void arm_idle();
  void refuse(const proto::RequestHeader& h, std::uint32_t error, std::string why);
  void flush_batch();
  void finish(std::unique_ptr<Request> r);  // builds the reply and queues it
  void pump_writes();
  // Arms write_timer_ for the socket write of `bytes` of replies just started: a client
  // that has not taken them within io_timeout is closed. Disarmed by on_written.
  void arm_write_deadline(std::size_t bytes);
  void disarm_write_deadline();
  // Arms `timer` (a member) for io_timeout. When it expires at that time (not disarmed or
  // moved) on a connection still open: counted in connections_io_timed_out, a warning
  // "LABEL: what(*this)", and closed for `reason`. (nbd_deadlines.cpp only.)
  template <typename What>
  void arm_io_deadline(asio::steady_timer Connection::*timer, const char* reason, What what);
  void on_written(const boost::system::error_code& ec);
  void maybe_close_after_drain();
  void wake_reader();
  void count_in_flight(std::int64_t bytes);
  // A request from the connection's pool (or a new one) with room for `data_bytes`.
  std::unique_ptr<Request> take_request(std::uint32_t data_bytes);
  void recycle(std::unique_ptr<Request> r);

  std::shared_ptr<ServerCore> core_;
  Socket socket_;
  std::unique_ptr<asio::ssl::stream<Socket&>> tls_;  // after STARTTLS
  std::string client_address_;
  std::uint64_t id_;
  std::string label_;  // "nbd#7 127.0.0.1", for logs
  bool closed_ = false;
  bool shutting_down_ = false;
  asio::steady_timer handshake_timer_;
  asio::steady_timer idle_timer_;  // armed while transmission waits with nothing in flight
  asio::steady_timer room_timer_;  // the reader waits on it for in-flight room
  // Armed while a WRITE's payload is awaited, and while a socket write of replies is under
  // way (io_timeout). Disarmed by setting the expiry to never, so a handler that was
  // already queued when it was disarmed sees a future expiry and does nothing.
  asio::steady_timer payload_timer_;
  asio::steady_timer write_timer_;
  bool reader_waiting_ = false;
  bool waiting_for_header_ = false;  // transmission waits for the next request header

  std::vector<std::uint8_t> rbuf_;
  std::size_t rpos_ = 0, rend_ = 0;

  // Negotiated state.
  bool fixed_newstyle_ = false;
  bool no_zeroes_ = false;
  bool structured_ = false;
  std::string meta_export_;     // export named by the last SET_META_CONTEXT
  bool meta_selected_ = false;  // it selected base:allocation
  std::shared_ptr<const ExportInfo> export_;
  proto::TransmissionLimits limits_;
  bool in_transmission_ = false;
  bool disc_received_ = false;

  std::shared_ptr<Mailbox> mailbox_;
  std::vector<std::unique_ptr<Request>> batch_;  // read, not yet handed to the model
  int requests_in_flight_ = 0;
  std::int64_t bytes_in_flight_ = 0;
  std::deque<std::unique_ptr<Request>> out_queue_;
  std::vector<std::unique_ptr<Request>> writing_;
  std::vector<asio::const_buffer> write_buffers_;
  std::vector<std::unique_ptr<Request>> pool_;  // answered requests kept for reuse (bounded)
  bool write_in_progress_ = false;
  Counters counters_;
};

}  // namespace afasim::nbd::detail
