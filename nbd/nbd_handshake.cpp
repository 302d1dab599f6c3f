// The NBD handshake of one connection (nbd/nbd_connection.h): the server's greeting, the
// client's options, and the move to transmission.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "config/file_text.h"
#include "nbd/nbd_connection.h"
#include "nbd/nbd_record.h"

// GCC 12 warns that a coroutine's frame has a field of a lambda's or an anonymous
// namespace's type (-Wsubobject-linkage): a false positive for frames, which are never shared
// between translation units. Off for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
#endif

namespace afasim::nbd::detail {

using boost::system::error_code;
namespace n = proto;

// ---------------------------------------------------------------------------------------
// Handshake

asio::awaitable<bool> Connection::handshake() {
  co_await send(n::server_greeting(n::kFlagFixedNewstyle | n::kFlagNoZeroes));
  co_await fill(4);
  const std::uint32_t client_flags = n::load_u32(buffered().data());
  consume(4);
  if ((client_flags & ~(n::kClientFlagFixedNewstyle | n::kClientFlagNoZeroes)) != 0) {
    // Logged as every other handshake violation is (hostile review 42: closed without a word).
    ++core_->protocol_errors;
    if (std::int64_t left_out = 0; core_->handshake_log.admit(left_out))
      spdlog::warn("{}: handshake: unknown client flags 0x{:08x}; closing{}", label_, client_flags,
                   serve::LogLimiter::suffix(left_out));
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
      if (std::int64_t left_out = 0; core_->handshake_log.admit(left_out))
        spdlog::warn("{}: handshake: {}; closing{}", label_, violation, serve::LogLimiter::suffix(left_out));
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
  const auto opt = static_cast<n::Option>(option);
  if (core_->options.tls && core_->options.tls_required && !tls_ && opt != n::Option::kStartTls &&
      opt != n::Option::kAbort) {
    if (opt == n::Option::kExportName) {  // it has no error reply: the session ends
      close("NBD_OPT_EXPORT_NAME before STARTTLS on a server that requires TLS");
      co_return false;
    }
    n::append_option_error(out, option, n::kRepErrTlsReqd,
                           "this server requires TLS: send NBD_OPT_STARTTLS first");
    co_await send(std::move(out));
    co_return false;
  }
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
      co_await start_tls(option, data);
      co_return false;
    default:
      n::append_option_error(out, option, n::kRepErrUnsup,
                             "option " + std::to_string(option) + " (" +
                                 std::string(n::option_name(option)) + ") is not supported");
      co_await send(std::move(out));
      co_return false;
  }
}

asio::awaitable<void> Connection::start_tls(std::uint32_t option,
                                            std::span<const std::uint8_t> data) {
  std::vector<std::uint8_t> out;
  if (!core_->options.tls) {
    n::append_option_error(out, option, n::kRepErrUnsup, "this server does not offer TLS");
  } else if (tls_) {
    n::append_option_error(out, option, n::kRepErrInvalid, "TLS is already on");
  } else if (!data.empty()) {
    n::append_option_error(out, option, n::kRepErrInvalid, "NBD_OPT_STARTTLS takes no data");
  } else if (rpos_ != rend_) {
    // Bytes sent after STARTTLS but before the TLS handshake could be injected by anyone
    // on the path (proto.md: the server MUST NOT act on them).
    ++core_->protocol_errors;
    close("data after NBD_OPT_STARTTLS before the TLS handshake");
    co_return;
  } else {
    n::append_option_reply(out, option, n::kRepAck);
    co_await send(std::move(out));
    tls_ = std::make_unique<asio::ssl::stream<Socket&>>(socket_, *core_->options.tls);
    co_await tls_->async_handshake(asio::ssl::stream_base::server, asio::use_awaitable);
    // What was negotiated in the clear does not carry over (proto.md "TLS support").
    structured_ = false;
    meta_selected_ = false;
    meta_export_.clear();
    spdlog::debug("{}: TLS on ({})", label_, SSL_get_version(tls_->native_handle()));
    co_return;
  }
  co_await send(std::move(out));
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
      core.refresh_initiators(false);
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
    // Clients show the reply's text only when debugging (nbdinfo: "No such file or
    // directory"): the log says which export and why (LUN masking, docs/nbd.md).
    // The name is the client's bytes (up to 4 KiB, any byte): escaped and cut for the log.
    if (std::int64_t left_out = 0; !found.stopped && core_->handshake_log.admit(left_out))
      spdlog::info("{}: {}: {}{}", label_, n::option_name(option),
                   config::printable(found.why.size() > 300 ? found.why.substr(0, 300) + "..." : found.why),
                   serve::LogLimiter::suffix(left_out));
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
    if (std::int64_t left_out = 0; core_->handshake_log.admit(left_out))
      spdlog::info("{}: NBD_OPT_EXPORT_NAME: {}; closing{}", label_, found.why, serve::LogLimiter::suffix(left_out));
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
  core_->slots->settle(id_);  // a client of a mapped export: its slot is never taken
  limits_.export_size_bytes = static_cast<std::uint64_t>(e.size_bytes);
  limits_.read_only = e.read_only;
  limits_.structured_replies = structured_;
  const std::string message = "NBD client " + client_address_ + " connected to " + e.description +
                              (structured_ ? ", structured replies" : ", simple replies") +
                              (limits_.block_status ? ", base:allocation" : "");
  spdlog::debug("{}: {}", label_, message);
  controller::Array* array = core_->array;
  const std::string object = "volume/" + std::to_string(e.volume_id);
  core_->model->post([array, limiter = &core_->event_limiter, object, message] {
    log_nbd_event(*array, *limiter, object, message);
  });
  export_ = std::make_shared<const ExportInfo>(std::move(e));
}

}  // namespace afasim::nbd::detail

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
