#include "nbd/nbd_connection.h"

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
// The single base:allocation context's id on a connection.
constexpr std::uint32_t kBaseAllocationId = 1;

std::string mib(std::int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

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

void start_requests(controller::Array& array, const ExportInfo& e,
                    std::vector<std::unique_ptr<Request>>& batch) {
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
      r->extents = allocation_map(array, e.volume_id, h.offset, h.length,
                                  (h.flags & n::kCmdFlagReqOne) != 0);
      Mailbox::deliver(std::move(r));
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
    array.submit(io, [r = std::move(r)](const IoCompletion& c) mutable {
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
      room_timer_(socket_.get_executor()),
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
  {
    std::lock_guard<std::mutex> lock(core_->registry_mu);
    core_->registry.erase(id_);
  }
  --core_->connections_active;
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
  }
  if (clean && !closed_) {
    // NBD_CMD_DISC or server stop: every request already read is answered first.
    flush_batch();
    while (!closed_ && requests_in_flight_ > 0) {
      reader_waiting_ = true;
      room_timer_.expires_at(asio::steady_timer::time_point::max());
      error_code ec;
      co_await room_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      reader_waiting_ = false;
    }
  }
  close(disc_received_ ? "client disconnected (NBD_CMD_DISC)" : "connection ended");
  if (in_transmission_) {
    const std::string message =
        "NBD client " + client_address_ + " disconnected from volume \"" + export_->name +
        "\": " + std::to_string(counters_.reads) + " reads (" + mib(counters_.read_bytes) + "), " +
        std::to_string(counters_.writes) + " writes (" + mib(counters_.write_bytes) + "), " +
        std::to_string(counters_.other) + " other, " + std::to_string(counters_.errors) + " errors";
    spdlog::debug("{}: {}", label_, message);
    controller::Array* array = core_->array;
    const std::string object = "volume/" + std::to_string(export_->volume_id);
    core_->model->post([array, object, message] { log_nbd_event(*array, object, message); });
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
  room_timer_.cancel();
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
    rend_ += co_await socket_.async_read_some(
        asio::buffer(rbuf_.data() + rend_, rbuf_.size() - rend_), asio::use_awaitable);
}

asio::awaitable<void> Connection::read_into(std::uint8_t* dst, std::size_t n) {
  const std::size_t have = std::min(n, rend_ - rpos_);
  std::memcpy(dst, rbuf_.data() + rpos_, have);
  rpos_ += have;
  if (have == n) co_return;
  flush_batch();
  co_await asio::async_read(socket_, asio::buffer(dst + have, n - have), asio::use_awaitable);
}

asio::awaitable<void> Connection::discard(std::size_t n) {
  while (n > 0) {
    if (rpos_ == rend_) {
      rpos_ = rend_ = 0;
      flush_batch();
      rend_ = co_await socket_.async_read_some(asio::buffer(rbuf_), asio::use_awaitable);
    }
    const std::size_t k = std::min(n, rend_ - rpos_);
    rpos_ += k;
    n -= k;
  }
}

asio::awaitable<void> Connection::send(std::vector<std::uint8_t> bytes) {
  co_await asio::async_write(socket_, asio::buffer(bytes), asio::use_awaitable);
}

// ---------------------------------------------------------------------------------------
// Handshake

asio::awaitable<bool> Connection::handshake() {
  co_await send(n::server_greeting(n::kFlagFixedNewstyle | n::kFlagNoZeroes));
  co_await fill(4);
  const std::uint32_t client_flags = n::load_u32(buffered().data());
  consume(4);
  if ((client_flags & ~(n::kClientFlagFixedNewstyle | n::kClientFlagNoZeroes)) != 0) {
    ++core_->protocol_errors;
    close("unknown client flags");
    co_return false;
  }
  fixed_newstyle_ = (client_flags & n::kClientFlagFixedNewstyle) != 0;
  no_zeroes_ = (client_flags & n::kClientFlagNoZeroes) != 0;
  for (int count = 0;; ++count) {
    co_await fill(n::kOptionHeaderBytes);
    const std::uint8_t* p = buffered().data();
    const std::uint64_t magic = n::load_u64(p);
    const std::uint32_t option = n::load_u32(p + 8);
    const std::uint32_t length = n::load_u32(p + 12);
    consume(n::kOptionHeaderBytes);
    std::string violation;
    if (magic != n::kIHaveOpt)
      violation = "bad option magic";
    else if (count >= core_->options.max_options)
      violation = "more options than the server takes in one handshake";
    else if (!fixed_newstyle_ && option != static_cast<std::uint32_t>(n::Option::kExportName))
      violation = "an option other than NBD_OPT_EXPORT_NAME without fixed newstyle";
    else if (length > NbdServer::kMaxOptionDataBytes &&
             option == static_cast<std::uint32_t>(n::Option::kExportName))
      violation = "NBD_OPT_EXPORT_NAME longer than the server takes";
    if (!violation.empty()) {
      ++core_->protocol_errors;
      spdlog::warn("{}: handshake: {}; closing", label_, violation);
      close(violation);
      co_return false;
    }
    if (length > NbdServer::kMaxOptionDataBytes) {
      co_await discard(length);
      std::vector<std::uint8_t> out;
      n::append_option_error(out, option, n::kRepErrTooBig,
                             "option data of " + std::to_string(length) +
                                 " bytes; this server takes at most " +
                                 std::to_string(NbdServer::kMaxOptionDataBytes));
      co_await send(std::move(out));
      continue;
    }
    co_await fill(length);
    std::vector<std::uint8_t> data(buffered().begin(), buffered().begin() + length);
    consume(length);
    spdlog::debug("{}: option {} ({} bytes)", label_, n::option_name(option), length);
    if (co_await handle_option(option, data)) co_return true;
    if (closed_) co_return false;
  }
}

asio::awaitable<bool> Connection::handle_option(std::uint32_t option,
                                                std::vector<std::uint8_t>& data) {
  std::vector<std::uint8_t> out;
  switch (static_cast<n::Option>(option)) {
    case n::Option::kExportName:
      co_return co_await reply_export_name(data);
    case n::Option::kAbort:
      n::append_option_reply(out, option, n::kRepAck);
      co_await send(std::move(out));
      close("client sent NBD_OPT_ABORT");
      co_return false;
    case n::Option::kList:
      if (!data.empty()) {
        n::append_option_error(out, option, n::kRepErrInvalid, "NBD_OPT_LIST takes no data");
        co_await send(std::move(out));
      } else {
        co_await reply_list(option);
      }
      co_return false;
    case n::Option::kInfo:
    case n::Option::kGo:
      co_return co_await reply_info(option, data);
    case n::Option::kStructuredReply:
      if (!data.empty())
        n::append_option_error(out, option, n::kRepErrInvalid,
                               "NBD_OPT_STRUCTURED_REPLY takes no data");
      else if (structured_)
        n::append_option_error(out, option, n::kRepErrInvalid, "structured replies are already on");
      else {
        structured_ = true;
        n::append_option_reply(out, option, n::kRepAck);
      }
      co_await send(std::move(out));
      co_return false;
    case n::Option::kListMetaContext:
    case n::Option::kSetMetaContext:
      co_await reply_meta_context(option, data);
      co_return false;
    case n::Option::kStartTls:
      n::append_option_error(out, option, n::kRepErrUnsup, "this server does not offer TLS");
      co_await send(std::move(out));
      co_return false;
    default:
      n::append_option_error(out, option, n::kRepErrUnsup,
                             "option " + std::to_string(option) + " (" +
                                 std::string(n::option_name(option)) + ") is not supported");
      co_await send(std::move(out));
      co_return false;
  }
}

namespace {

// The answer of a look-up on the model thread.
struct Lookup {
  std::optional<ExportInfo> e;
  std::string why;       // when not found
  bool stopped = false;  // the model thread is stopped
};

Lookup find_on_model(ServerCore& core, const std::string& client, const std::string& name) {
  try {
    return core.model->call([&core, &client, &name] {
      Lookup l;
      l.e = find_export(*core.array, client, name);
      if (l.e) return l;
      const controller::Host* h = host_for_client(*core.array, client);
      const std::string which =
          name.empty() ? "no export at LUN 0 (the default export)" : "no export \"" + name + "\"";
      l.why = h == nullptr ? which + ": client " + client + " matches no host's nbd initiator"
                           : which + " mapped to host \"" + h->name + "\" (client " + client + ")";
      return l;
    });
  } catch (const serve::ModelStopped&) {
    Lookup l;
    l.stopped = true;
    l.why = "the array is stopping";
    return l;
  }
}

std::uint16_t transmission_flags(const ExportInfo& e, bool structured) {
  // Multi-conn: every connection reaches the one model and the same payload files, and a
  // FLUSH syncs them all, so a flush on one connection covers writes answered on another.
  std::uint16_t f = n::kFlagHasFlags | n::kFlagSendFlush | n::kFlagSendFua | n::kFlagCanMultiConn;
  f |= e.read_only ? n::kFlagReadOnly : (n::kFlagSendTrim | n::kFlagSendWriteZeroes);
  if (structured) f |= n::kFlagSendDf;
  return f;
}

}  // namespace

asio::awaitable<void> Connection::reply_list(std::uint32_t option) {
  std::vector<ExportInfo> exports;
  bool stopped = false;
  try {
    exports =
        core_->model->call([this] { return visible_exports(*core_->array, client_address_); });
  } catch (const serve::ModelStopped&) {
    stopped = true;
  }
  std::vector<std::uint8_t> out;
  if (stopped) {
    n::append_option_error(out, option, n::kRepErrShutdown, "the array is stopping");
  } else {
    for (const ExportInfo& e : exports) {
      std::vector<std::uint8_t> data;
      n::Writer(data)
          .u32(static_cast<std::uint32_t>(e.name.size()))
          .bytes(e.name)
          .bytes(e.description);
      n::append_option_reply(out, option, n::kRepServer, data);
    }
    n::append_option_reply(out, option, n::kRepAck);
  }
  co_await send(std::move(out));
}

asio::awaitable<bool> Connection::reply_info(std::uint32_t option,
                                             std::span<const std::uint8_t> data) {
  std::vector<std::uint8_t> out;
  auto req = n::parse_info_request(data);
  if (!req.is_ok()) {
    n::append_option_error(out, option, n::kRepErrInvalid, req.status().message());
    co_await send(std::move(out));
    co_return false;
  }
  const Lookup found = find_on_model(*core_, client_address_, req->export_name);
  if (!found.e) {
    n::append_option_error(out, option, found.stopped ? n::kRepErrShutdown : n::kRepErrUnknown,
                           found.why);
    co_await send(std::move(out));
    co_return false;
  }
  const ExportInfo& e = *found.e;
  std::vector<std::uint8_t> info;
  n::Writer(info)
      .u16(n::kInfoExport)
      .u64(static_cast<std::uint64_t>(e.size_bytes))
      .u16(transmission_flags(e, structured_));
  n::append_option_reply(out, option, n::kRepInfo, info);
  const auto asked = [&](std::uint16_t t) {
    return std::find(req->info_types.begin(), req->info_types.end(), t) != req->info_types.end();
  };
  if (asked(n::kInfoName)) {
    info.clear();
    n::Writer(info).u16(n::kInfoName).bytes(e.name);
    n::append_option_reply(out, option, n::kRepInfo, info);
  }
  if (asked(n::kInfoDescription)) {
    info.clear();
    n::Writer(info).u16(n::kInfoDescription).bytes(e.description);
    n::append_option_reply(out, option, n::kRepInfo, info);
  }
  // Sent whether asked or not: the constraints are not the defaults (proto.md "Block size
  // constraints"); a client that did not ask still gets clean EINVALs, never corruption.
  info.clear();
  n::Writer(info)
      .u16(n::kInfoBlockSize)
      .u32(NbdServer::kMinBlockBytes)
      .u32(NbdServer::kPreferredBlockBytes)
      .u32(limits_.max_payload_bytes);
  n::append_option_reply(out, option, n::kRepInfo, info);
  n::append_option_reply(out, option, n::kRepAck);
  co_await send(std::move(out));
  if (option != static_cast<std::uint32_t>(n::Option::kGo)) co_return false;
  limits_.block_status = structured_ && meta_selected_ && meta_export_ == req->export_name;
  enter_transmission(e);
  co_return true;
}

asio::awaitable<bool> Connection::reply_export_name(std::span<const std::uint8_t> data) {
  if (data.size() > n::kMaxStringBytes) {
    ++core_->protocol_errors;
    close("NBD_OPT_EXPORT_NAME with a name over 4096 bytes");
    co_return false;
  }
  const std::string name(data.begin(), data.end());
  const Lookup found = find_on_model(*core_, client_address_, name);
  if (!found.e) {
    // proto.md: the server MUST terminate the session; it cannot say why.
    spdlog::info("{}: NBD_OPT_EXPORT_NAME: {}; closing", label_, found.why);
    close(found.why);
    co_return false;
  }
  std::vector<std::uint8_t> out;
  n::Writer w(out);
  w.u64(static_cast<std::uint64_t>(found.e->size_bytes))
      .u16(transmission_flags(*found.e, structured_));
  if (!no_zeroes_) w.zeros(124);
  co_await send(std::move(out));
  limits_.block_status = structured_ && meta_selected_ && meta_export_ == name;
  enter_transmission(*found.e);
  co_return true;
}

asio::awaitable<void> Connection::reply_meta_context(std::uint32_t option,
                                                     std::span<const std::uint8_t> data) {
  const bool set = option == static_cast<std::uint32_t>(n::Option::kSetMetaContext);
  if (set) {  // a SET replaces the selection even when it fails
    meta_selected_ = false;
    meta_export_.clear();
  }
  std::vector<std::uint8_t> out;
  if (!structured_) {
    n::append_option_error(out, option, n::kRepErrInvalid,
                           "negotiate NBD_OPT_STRUCTURED_REPLY first");
    co_await send(std::move(out));
    co_return;
  }
  auto req = n::parse_meta_context_request(data, NbdServer::kMaxMetaQueries);
  if (!req.is_ok()) {
    const bool too_big = req.status().code() == sim::Code::kOutOfRange;
    n::append_option_error(out, option, too_big ? n::kRepErrTooBig : n::kRepErrInvalid,
                           req.status().message());
    co_await send(std::move(out));
    co_return;
  }
  const Lookup found = find_on_model(*core_, client_address_, req->export_name);
  if (!found.e) {
    n::append_option_error(out, option, found.stopped ? n::kRepErrShutdown : n::kRepErrUnknown,
                           found.why);
    co_await send(std::move(out));
    co_return;
  }
  if (n::meta_queries_name_base_allocation(req->queries, !set)) {
    std::vector<std::uint8_t> ctx;
    n::Writer(ctx).u32(set ? kBaseAllocationId : 0).bytes(n::kBaseAllocation);
    n::append_option_reply(out, option, n::kRepMetaContext, ctx);
    if (set) {
      meta_selected_ = true;
      meta_export_ = req->export_name;
    }
  }
  n::append_option_reply(out, option, n::kRepAck);
  co_await send(std::move(out));
}

void Connection::enter_transmission(ExportInfo e) {
  in_transmission_ = true;
  handshake_timer_.cancel();
  limits_.export_size_bytes = static_cast<std::uint64_t>(e.size_bytes);
  limits_.read_only = e.read_only;
  limits_.structured_replies = structured_;
  const std::string message = "NBD client " + client_address_ + " connected to " + e.description +
                              (structured_ ? ", structured replies" : ", simple replies") +
                              (limits_.block_status ? ", base:allocation" : "");
  spdlog::debug("{}: {}", label_, message);
  controller::Array* array = core_->array;
  const std::string object = "volume/" + std::to_string(e.volume_id);
  core_->model->post([array, object, message] { log_nbd_event(*array, object, message); });
  export_ = std::make_shared<const ExportInfo>(std::move(e));
}

// ---------------------------------------------------------------------------------------
// Transmission

asio::awaitable<void> Connection::transmission() {
  for (;;) {
    if (rend_ - rpos_ < n::kRequestHeaderBytes) co_await fill(n::kRequestHeaderBytes);
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
      if (has_payload) co_await discard(h.length);
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
    if (has_payload) co_await read_into(r->data.get(), h.length);
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
  if (core_->model->post([batch, e, array, id] {
        record_batch(id, *e, *batch);
        start_requests(*array, *e, *batch);
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
  asio::async_write(
      socket_, write_buffers_,
      [self = shared_from_this()](const error_code& ec, std::size_t) { self->on_written(ec); });
}

void Connection::on_written(const error_code& ec) {
  write_in_progress_ = false;
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
}

}  // namespace afasim::nbd::detail
