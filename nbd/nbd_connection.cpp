#include "nbd/nbd_connection.h"

#include "config/size.h"
#include "nbd/nbd_record.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

namespace afasim::nbd::detail {

using boost::system::error_code;
using controller::HostIo;
using controller::IoCompletion;
using controller::IoOp;
namespace n = proto;

namespace {

// Replies gathered into one socket write.
constexpr std::size_t kMaxRepliesPerWrite = 64;
constexpr std::size_t kMaxBytesPerWrite = 8 << 20;
// Requests handed to the model in one closure.
constexpr std::size_t kMaxBatch = 64;
// Requests kept for reuse per connection, and the largest buffer kept with one: a pool
// costs at most 32 × 128 KiB = 4 MiB per connection.
constexpr std::size_t kPooledRequests = 32;
constexpr std::uint32_t kPooledBufferBytes = 128 << 10;

void complete(std::unique_ptr<Request> r, const sim::Status& st, sim::Time latency_ns) {
  r->error = n::error_for(st);
  if (r->error != 0) r->message = st.message();
  r->latency_ns = latency_ns;
  Mailbox::deliver(std::move(r));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Model thread

void Mailbox::deliver(std::unique_ptr<Request> r) {
  record_done(*r);
  std::shared_ptr<Mailbox> mb = r->mailbox;  // keeps the mailbox while `r` may go
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mb->mu);
    if (!mb->closed) {
      mb->done.push_back(std::move(r));
      wake = !std::exchange(mb->wake_pending, true);
    }
  }
  r.reset();  // a request for a closed connection is dropped here, outside the lock
  if (!wake) return;
  std::lock_guard<std::mutex> gate(mb->gate->mu);
  if (mb->gate->open) mb->gate->woken.push_back(std::move(mb));
}

void flush_wakes(Gate& gate) {
  std::vector<std::shared_ptr<Mailbox>> woken;
  std::lock_guard<std::mutex> lock(gate.mu);
  woken.swap(gate.woken);
  if (!gate.open) return;
  for (const auto& mb : woken) {
    asio::post(mb->io_executor, [w = mb->connection] {
      if (std::shared_ptr<Connection> c = w.lock()) {
        auto ex = c->executor();
        asio::dispatch(ex, [c = std::move(c)] { c->on_completions(); });
      }
    });
  }
}

// A BLOCK_STATUS is answered from the thin map at once. check_request held it to the export's
// size at connect; the volume may be smaller now (or, in a replay, an edited record may say it
// was larger): refused then, as a read would be.
void start_block_status(controller::Array& array, const ExportInfo& e, std::unique_ptr<Request> r) {
  const n::RequestHeader& h = r->header;
  const controller::Volume* v = array.volume(e.volume_id);
  const auto capacity = v == nullptr ? std::uint64_t{0} : static_cast<std::uint64_t>(v->capacity_bytes);
  if (h.offset > capacity || h.length > capacity - h.offset) {
    complete(std::move(r),
             sim::Status(sim::Code::kOutOfRange, "BLOCK_STATUS [" + std::to_string(h.offset) + ", +" +
                                                     std::to_string(h.length) + ") past the end of volume \"" +
                                                     e.name + "\""),
             0);
    return;
  }
  r->extents = allocation_map(array, e.volume_id, h.offset, h.length, (h.flags & n::kCmdFlagReqOne) != 0);
  Mailbox::deliver(std::move(r));
}

void start_requests(controller::Array& array, const ExportInfo& e,
                    std::vector<std::unique_ptr<Request>>& batch, serve::ModelThread* model) {
  // Masking is checked again for every batch: a mapping deleted while the client is
  // connected takes effect at its next request.
  const bool mapped = export_still_mapped(array, e);
  for (std::unique_ptr<Request>& r : batch) {
    const n::RequestHeader& h = r->header;
    if (!mapped) {
      complete(std::move(r),
               sim::io_error("volume \"" + e.name +
                             "\" is no longer mapped to this client's host; reconnect"),
               0);
      continue;
    }
    const auto cmd = static_cast<n::Command>(h.type);
    if (cmd == n::Command::kBlockStatus) {
      start_block_status(array, e, std::move(r));
      continue;
    }
    HostIo io;
    io.volume_id = e.volume_id;
    io.offset_bytes = static_cast<std::int64_t>(h.offset);
    io.length_bytes = h.length;
    io.fua = (h.flags & n::kCmdFlagFua) != 0;
    switch (cmd) {
      case n::Command::kRead:
        io.op = IoOp::kRead;
        io.read_buffer = r->data.get();
        break;
      case n::Command::kWrite:
        io.op = IoOp::kWrite;
        io.write_data = r->data.get();
        break;
      case n::Command::kTrim:
        io.op = IoOp::kTrim;
        break;
      case n::Command::kWriteZeroes:
        // NO_HOLE: the range must stay allocated, so it is written (a write without data
        // writes zeros); otherwise whole extents are unmapped and the ends zeroed.
        io.op = (h.flags & n::kCmdFlagNoHole) != 0 ? IoOp::kWrite : IoOp::kWriteZeroes;
        break;
      case n::Command::kFlush:
        io.op = IoOp::kFlush;
        io.offset_bytes = 0;
        io.length_bytes = 0;
        break;
      default:
        AFASIM_ASSERT(false, "start_requests: a command check_request should have refused");
    }
    // FUA goes with the I/O: the array writes it through its cache (docs/write-cache.md)
    // and acknowledges it once it is on the SSDs.
    if (model != nullptr) model->host_io_started();
    array.submit(io, [r = std::move(r), model](const IoCompletion& c) mutable {
      if (model != nullptr) model->host_io_completed();
      complete(std::move(r), c.status, c.latency());
    });
  }
}

// ---------------------------------------------------------------------------------------
// Life of a connection

Connection::Connection(std::shared_ptr<ServerCore> core, Socket socket, std::string client_address,
                       std::uint64_t id)
    : core_(std::move(core)),
      socket_(std::move(socket)),
      client_address_(std::move(client_address)),
      id_(id),
      label_("nbd#" + std::to_string(id) + " " + client_address_),
      handshake_timer_(socket_.get_executor()),
      idle_timer_(socket_.get_executor()),
      room_timer_(socket_.get_executor()),
      payload_timer_(socket_.get_executor()),
      write_timer_(socket_.get_executor()),
      rbuf_(kReadBufferBytes) {
  mailbox_ = std::make_shared<Mailbox>(core_->io.get_executor());
  mailbox_->gate = core_->gate;
  mailbox_->connection_id = id;
  limits_.min_block_bytes = NbdServer::kMinBlockBytes;
  limits_.max_payload_bytes = static_cast<std::uint32_t>(core_->options.max_payload_bytes);
}

Connection::~Connection() {
  std::vector<std::unique_ptr<Request>> dropped;
  {
    std::lock_guard<std::mutex> lock(mailbox_->mu);
    mailbox_->closed = true;
    dropped.swap(mailbox_->done);
  }
  core_->leave(id_);
}

asio::awaitable<void> Connection::run() {
  std::shared_ptr<Connection> self = shared_from_this();
  mailbox_->connection = self;
  handshake_timer_.expires_after(core_->options.handshake_timeout);
  handshake_timer_.async_wait([w = std::weak_ptr<Connection>(self)](const error_code& ec) {
    if (ec) return;
    if (auto c = w.lock(); c && !c->in_transmission_) {
      ++c->core_->protocol_errors;
      c->close("handshake not finished within the handshake timeout");
    }
  });
  bool clean = false;
  try {
    if (co_await handshake()) {
      co_await transmission();
      clean = true;
    }
  } catch (const boost::system::system_error& e) {
    if (!closed_)
      spdlog::debug("{}: {}", label_,
                    e.code() == asio::error::eof ? "client closed the connection" : e.what());
    // A client that half-closes (shutdown SHUT_WR) after its requests may still read: the
    // requests already read are answered, as after NBD_CMD_DISC (hostile round 25: they got
    // no reply, though the writes among them had landed). A client that closed both ways
    // makes the first reply fail, which ends the wait. Only at a request boundary: a write
    // whose payload was cut off is counted in flight but will never run (it was dropped).
    clean = e.code() == asio::error::eof && in_transmission_ && waiting_for_header_;
  }
  if (clean && !closed_) {
    // NBD_CMD_DISC, a half-close or server stop: every request already read is answered first.
    // Not for ever: a request the array holds (a volume at max_iops 0) would keep the slot and
    // its buffers after the client had gone (review 41: 16 closed clients locked a host out).
    // No reply within --nbd-io-timeout of the last one ends the wait; the requests still run.
    flush_batch();
    while (!closed_ && requests_in_flight_ > 0) {
      const auto before = requests_in_flight_;
      reader_waiting_ = true;
      room_timer_.expires_after(core_->options.io_timeout);
      error_code ec;
      co_await room_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      reader_waiting_ = false;
      if (!ec && !closed_ && requests_in_flight_ == before) {
        ++core_->connections_io_timed_out;
        spdlog::warn("{}: the client closed its side; {} request(s) got no reply within {} s (--nbd-io-timeout): "
                     "closing the connection, they still run in the array",
                     label_, requests_in_flight_, std::chrono::duration<double>(core_->options.io_timeout).count());
        break;
      }
    }
  }
  close(disc_received_ ? "client disconnected (NBD_CMD_DISC)" : "connection ended");
  if (in_transmission_) {
    const std::string message =
        "NBD client " + client_address_ + " disconnected from volume \"" + export_->name +
        "\": " + std::to_string(counters_.reads) + " reads (" + config::human_bytes(counters_.read_bytes) + "), " +
        std::to_string(counters_.writes) + " writes (" + config::human_bytes(counters_.write_bytes) + "), " +
        std::to_string(counters_.other) + " other, " + std::to_string(counters_.errors) + " errors";
    spdlog::debug("{}: {}", label_, message);
    controller::Array* array = core_->array;
    const std::string object = "volume/" + std::to_string(export_->volume_id);
    core_->model->post([array, limiter = &core_->event_limiter, object, message] {
      log_nbd_event(*array, *limiter, object, message);
    });
  }
}

void Connection::close(std::string_view why) {
  if (closed_) return;
  closed_ = true;
  spdlog::debug("{}: closing: {}", label_, why);
  error_code ec;
  socket_.shutdown(asio::socket_base::shutdown_both, ec);
  socket_.close(ec);
  handshake_timer_.cancel();
  idle_timer_.cancel();
  room_timer_.cancel();
  payload_timer_.cancel();
  write_timer_.cancel();
  std::vector<std::unique_ptr<Request>> dropped;
  {
    std::lock_guard<std::mutex> lock(mailbox_->mu);
    mailbox_->closed = true;
    dropped.swap(mailbox_->done);
  }
  out_queue_.clear();
  batch_.clear();
}

void Connection::begin_shutdown() {
  shutting_down_ = true;
  if (!in_transmission_ || requests_in_flight_ == 0) close("the server is stopping");
}

// ---------------------------------------------------------------------------------------
// Reading

asio::awaitable<void> Connection::fill(std::size_t need) {
  AFASIM_ASSERT(need <= rbuf_.size(), "fill() beyond the read buffer");
  if (rend_ - rpos_ >= need) co_return;
  if (rpos_ == rend_) {
    rpos_ = rend_ = 0;
  } else if (rbuf_.size() - rpos_ < need) {
    std::memmove(rbuf_.data(), rbuf_.data() + rpos_, rend_ - rpos_);
    rend_ -= rpos_;
    rpos_ = 0;
  }
  flush_batch();  // about to wait: what was read goes to the array first
  while (rend_ - rpos_ < need)
    rend_ += co_await read_some(asio::buffer(rbuf_.data() + rend_, rbuf_.size() - rend_));
}

asio::awaitable<void> Connection::read_into(std::uint8_t* dst, std::size_t n) {
  const std::size_t have = std::min(n, rend_ - rpos_);
  std::memcpy(dst, rbuf_.data() + rpos_, have);
  rpos_ += have;
  if (have == n) co_return;
  flush_batch();
  for (std::size_t got = have; got < n;)
    got += co_await read_some(asio::buffer(dst + got, n - got));
}

asio::awaitable<void> Connection::discard(std::size_t n) {
  while (n > 0) {
    if (rpos_ == rend_) {
      rpos_ = rend_ = 0;
      flush_batch();
      rend_ = co_await read_some(asio::buffer(rbuf_));
    }
    const std::size_t k = std::min(n, rend_ - rpos_);
    rpos_ += k;
    n -= k;
  }
}

asio::awaitable<void> Connection::send(std::vector<std::uint8_t> bytes) {
  co_await write_all(asio::buffer(bytes));
}

// ---------------------------------------------------------------------------------------
// Transmission

asio::awaitable<void> Connection::transmission() {
  for (;;) {
    if (rend_ - rpos_ < n::kRequestHeaderBytes) {
      waiting_for_header_ = true;
      arm_idle();
      co_await fill(n::kRequestHeaderBytes);
      waiting_for_header_ = false;
      idle_timer_.cancel();
    }
    const auto header =
        n::parse_request_header(std::span<const std::uint8_t, n::kRequestHeaderBytes>(
            rbuf_.data() + rpos_, n::kRequestHeaderBytes));
    consume(n::kRequestHeaderBytes);
    if (!header) {
      ++core_->protocol_errors;
      spdlog::warn("{}: bad request magic; closing", label_);
      close("bad request magic");
      co_return;
    }
    const n::RequestHeader& h = *header;
    if (h.type == static_cast<std::uint16_t>(n::Command::kDisc)) {
      disc_received_ = true;
      co_return;
    }
    ++core_->requests;
    std::string why;
    std::uint32_t error = n::check_request(h, limits_, &why);
    if (error == 0 && shutting_down_) {
      error = n::kEshutdown;
      why = "the server is stopping";
    }
    const bool has_payload = h.type == static_cast<std::uint16_t>(n::Command::kWrite);
    if (error != 0) {
      if (has_payload) co_await read_payload(h, nullptr);
      co_await wait_for_room(0);
      refuse(h, error, std::move(why));
      continue;
    }
    const bool carries_data =
        has_payload || h.type == static_cast<std::uint16_t>(n::Command::kRead);
    const std::int64_t bytes = carries_data ? h.length : 0;
    co_await wait_for_room(bytes);
    std::unique_ptr<Request> r = take_request(carries_data ? h.length : 0);
    r->header = h;
    r->charged_bytes = bytes;
    count_in_flight(bytes);
    if (has_payload) co_await read_payload(h, r->data.get());
    batch_.push_back(std::move(r));
    if (batch_.size() >= kMaxBatch) flush_batch();
  }
}

asio::awaitable<void> Connection::wait_for_room(std::int64_t bytes) {
  const NbdServerOptions& o = core_->options;
  while (!closed_ &&
         (requests_in_flight_ >= o.max_requests_in_flight ||
          (requests_in_flight_ > 0 && bytes_in_flight_ + bytes > o.max_bytes_in_flight))) {
    flush_batch();
    reader_waiting_ = true;
    room_timer_.expires_at(asio::steady_timer::time_point::max());
    error_code ec;
    co_await room_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    reader_waiting_ = false;
  }
  if (closed_) throw boost::system::system_error(asio::error::operation_aborted);
}

void Connection::count_in_flight(std::int64_t bytes) {
  ++requests_in_flight_;
  bytes_in_flight_ += bytes;
  std::int64_t seen = core_->in_flight_high_water.load();
  while (requests_in_flight_ > seen &&
         !core_->in_flight_high_water.compare_exchange_weak(seen, requests_in_flight_)) {
  }
}

std::unique_ptr<Request> Connection::take_request(std::uint32_t data_bytes) {
  std::unique_ptr<Request> r;
  if (!pool_.empty()) {
    r = std::move(pool_.back());
    pool_.pop_back();
  } else {
    r = std::make_unique<Request>();
    r->mailbox = mailbox_;
  }
  if (data_bytes > r->data_capacity) {
    r->data = std::make_unique_for_overwrite<std::uint8_t[]>(data_bytes);
    r->data_capacity = data_bytes;
  }
  return r;
}

void Connection::recycle(std::unique_ptr<Request> r) {
  if (pool_.size() >= kPooledRequests) return;
  if (r->data_capacity > kPooledBufferBytes) {
    r->data.reset();
    r->data_capacity = 0;
  }
  r->error = 0;
  r->message.clear();
  r->extents.clear();
  r->head.clear();
  r->send_data = false;
  r->charged_bytes = 0;
  r->latency_ns = 0;
  pool_.push_back(std::move(r));
}

void Connection::wake_reader() {
  if (reader_waiting_) room_timer_.cancel();
}

void Connection::refuse(const n::RequestHeader& h, std::uint32_t error, std::string why) {
  ++core_->requests_refused;
  spdlog::debug("{}: {} refused with {}: {}", label_, n::command_name(h.type), n::error_name(error),
                why);
  std::unique_ptr<Request> r = take_request(0);
  r->header = h;
  r->error = error;
  r->message = std::move(why);
  count_in_flight(0);
  finish(std::move(r));
  pump_writes();
}

void Connection::flush_batch() {
  if (batch_.empty()) return;
  auto batch = std::make_shared<std::vector<std::unique_ptr<Request>>>(std::move(batch_));
  batch_.clear();
  controller::Array* array = core_->array;
  std::shared_ptr<const ExportInfo> e = export_;
  const std::uint64_t id = id_;
  serve::ModelThread* model = core_->model;
  if (model->post([batch, e, array, id, model] {
        record_batch(id, *e, *batch);
        start_requests(*array, *e, *batch, model);
      }))
    return;
  for (auto& r : *batch) {
    r->error = n::kEshutdown;
    r->message = "the array model is stopped";
    finish(std::move(r));
  }
  pump_writes();
}

void Connection::on_completions() {
  std::vector<std::unique_ptr<Request>> done;
  {
    std::lock_guard<std::mutex> lock(mailbox_->mu);
    done.swap(mailbox_->done);
    mailbox_->wake_pending = false;
  }
  for (auto& r : done) finish(std::move(r));
  pump_writes();
}

void Connection::finish(std::unique_ptr<Request> r) {
  if (closed_) return;
  const n::RequestHeader& h = r->header;
  const auto cmd = static_cast<n::Command>(h.type);
  r->head.clear();
  if (r->error != 0) {
    ++counters_.errors;
    if (structured_)
      n::append_error_chunk(r->head, h.handle, r->error, r->message);
    else
      n::append_simple_reply(r->head, r->error, h.handle);
  } else if (cmd == n::Command::kRead) {
    ++counters_.reads;
    counters_.read_bytes += h.length;
    if (structured_)
      n::append_offset_data_header(r->head, h.handle, h.offset, h.length);
    else
      n::append_simple_reply(r->head, 0, h.handle);
    r->send_data = true;
  } else {
    if (cmd == n::Command::kWrite) {
      ++counters_.writes;
      counters_.write_bytes += h.length;
    } else {
      ++counters_.other;
    }
    if (cmd == n::Command::kBlockStatus)
      n::append_block_status_chunk(r->head, h.handle, kBaseAllocationId, r->extents);
    else if (structured_)
      n::append_chunk_header(r->head, n::kReplyFlagDone, n::kReplyTypeNone, h.handle, 0);
    else
      n::append_simple_reply(r->head, 0, h.handle);
  }
  out_queue_.push_back(std::move(r));
}

void Connection::pump_writes() {
  if (write_in_progress_ || closed_ || out_queue_.empty()) return;
  writing_.clear();
  write_buffers_.clear();
  std::size_t bytes = 0;
  while (!out_queue_.empty() && writing_.size() < kMaxRepliesPerWrite &&
         bytes < kMaxBytesPerWrite) {
    std::unique_ptr<Request>& r = out_queue_.front();
    write_buffers_.push_back(asio::buffer(r->head));
    bytes += r->head.size();
    if (r->send_data) {
      write_buffers_.push_back(asio::buffer(r->data.get(), r->header.length));
      bytes += r->header.length;
    }
    writing_.push_back(std::move(r));
    out_queue_.pop_front();
  }
  write_in_progress_ = true;
  arm_write_deadline(bytes);
  auto done = [self = shared_from_this()](const error_code& ec, std::size_t) { self->on_written(ec); };
  if (tls_)
    asio::async_write(*tls_, write_buffers_, std::move(done));
  else
    asio::async_write(socket_, write_buffers_, std::move(done));
}

void Connection::on_written(const error_code& ec) {
  write_in_progress_ = false;
  disarm_write_deadline();
  for (auto& r : writing_) {
    --requests_in_flight_;
    bytes_in_flight_ -= r->charged_bytes;
    recycle(std::move(r));
  }
  writing_.clear();
  if (ec) {
    close("writing a reply failed: " + ec.message());
    return;
  }
  wake_reader();
  pump_writes();
  if (shutting_down_ && requests_in_flight_ == 0) close("the server is stopping");
  if (waiting_for_header_ && requests_in_flight_ == 0) arm_idle();
}

}  // namespace afasim::nbd::detail
