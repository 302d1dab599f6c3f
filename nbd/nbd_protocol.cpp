#include "nbd/nbd_protocol.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace afasim::nbd::proto {

std::string_view option_name(std::uint32_t option) {
  switch (static_cast<Option>(option)) {
    case Option::kExportName:
      return "NBD_OPT_EXPORT_NAME";
    case Option::kAbort:
      return "NBD_OPT_ABORT";
    case Option::kList:
      return "NBD_OPT_LIST";
    case Option::kStartTls:
      return "NBD_OPT_STARTTLS";
    case Option::kInfo:
      return "NBD_OPT_INFO";
    case Option::kGo:
      return "NBD_OPT_GO";
    case Option::kStructuredReply:
      return "NBD_OPT_STRUCTURED_REPLY";
    case Option::kListMetaContext:
      return "NBD_OPT_LIST_META_CONTEXT";
    case Option::kSetMetaContext:
      return "NBD_OPT_SET_META_CONTEXT";
    case Option::kExtendedHeaders:
      return "NBD_OPT_EXTENDED_HEADERS";
  }
  return "unknown option";
}

std::string_view command_name(std::uint16_t type) {
  switch (static_cast<Command>(type)) {
    case Command::kRead:
      return "NBD_CMD_READ";
    case Command::kWrite:
      return "NBD_CMD_WRITE";
    case Command::kDisc:
      return "NBD_CMD_DISC";
    case Command::kFlush:
      return "NBD_CMD_FLUSH";
    case Command::kTrim:
      return "NBD_CMD_TRIM";
    case Command::kCache:
      return "NBD_CMD_CACHE";
    case Command::kWriteZeroes:
      return "NBD_CMD_WRITE_ZEROES";
    case Command::kBlockStatus:
      return "NBD_CMD_BLOCK_STATUS";
  }
  return "unknown command";
}

std::string_view error_name(std::uint32_t error) {
  switch (error) {
    case 0:
      return "ok";
    case kEperm:
      return "EPERM";
    case kEio:
      return "EIO";
    case kEnomem:
      return "ENOMEM";
    case kEinval:
      return "EINVAL";
    case kEnospc:
      return "ENOSPC";
    case kEoverflow:
      return "EOVERFLOW";
    case kEnotsup:
      return "ENOTSUP";
    case kEshutdown:
      return "ESHUTDOWN";
  }
  return "unknown error";
}

std::uint32_t error_for(const sim::Status& status) {
  switch (status.code()) {
    case sim::Code::kOk:
      return 0;
    case sim::Code::kNoSpace:
      return kEnospc;
    case sim::Code::kOutOfRange:
    case sim::Code::kInvalidArgument:
      return kEinval;
    case sim::Code::kReadOnly:
      return kEperm;
    case sim::Code::kUnavailable:
      return kEshutdown;
    default:
      return kEio;
  }
}

// ---------------------------------------------------------------------------------------
// Encoding

Writer& Writer::u16(std::uint16_t v) {
  out_.push_back(static_cast<std::uint8_t>(v >> 8));
  out_.push_back(static_cast<std::uint8_t>(v));
  return *this;
}
Writer& Writer::u32(std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out_.push_back(static_cast<std::uint8_t>(v >> shift));
  return *this;
}
Writer& Writer::u64(std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8)
    out_.push_back(static_cast<std::uint8_t>(v >> shift));
  return *this;
}
Writer& Writer::bytes(std::string_view s) {
  out_.insert(out_.end(), s.begin(), s.end());
  return *this;
}
Writer& Writer::zeros(std::size_t n) {
  out_.insert(out_.end(), n, 0);
  return *this;
}

std::uint16_t load_u16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}
std::uint32_t load_u32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}
std::uint64_t load_u64(const std::uint8_t* p) {
  return std::uint64_t{load_u32(p)} << 32 | load_u32(p + 4);
}

bool Reader::take(std::size_t n) {
  if (!ok_ || remaining() < n) {
    ok_ = false;
    return false;
  }
  return true;
}
std::uint16_t Reader::u16() {
  if (!take(2)) return 0;
  pos_ += 2;
  return load_u16(in_.data() + pos_ - 2);
}
std::uint32_t Reader::u32() {
  if (!take(4)) return 0;
  pos_ += 4;
  return load_u32(in_.data() + pos_ - 4);
}
std::uint64_t Reader::u64() {
  if (!take(8)) return 0;
  pos_ += 8;
  return load_u64(in_.data() + pos_ - 8);
}
std::string Reader::string(std::size_t n) {
  if (!take(n)) return {};
  std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
  pos_ += n;
  return s;
}

// ---------------------------------------------------------------------------------------
// Handshake

std::vector<std::uint8_t> server_greeting(std::uint16_t handshake_flags) {
  std::vector<std::uint8_t> out;
  Writer(out).u64(kInitPasswd).u64(kIHaveOpt).u16(handshake_flags);
  return out;
}

void append_option_reply(std::vector<std::uint8_t>& out, std::uint32_t option,
                         std::uint32_t reply_type, std::span<const std::uint8_t> data) {
  Writer(out)
      .u64(kOptionReplyMagic)
      .u32(option)
      .u32(reply_type)
      .u32(static_cast<std::uint32_t>(data.size()));
  out.insert(out.end(), data.begin(), data.end());
}

void append_option_error(std::vector<std::uint8_t>& out, std::uint32_t option,
                         std::uint32_t reply_type, std::string_view message) {
  message = message.substr(0, kMaxStringBytes);
  append_option_reply(out, option, reply_type,
                      {reinterpret_cast<const std::uint8_t*>(message.data()), message.size()});
}

sim::Result<InfoRequest> parse_info_request(std::span<const std::uint8_t> data) {
  Reader r(data);
  const std::uint32_t name_bytes = r.u32();
  if (!r.ok() || name_bytes > r.remaining())
    return sim::invalid_argument("the export name length runs past the option data");
  if (name_bytes > kMaxStringBytes)
    return sim::invalid_argument("the export name is longer than 4096 bytes");
  InfoRequest req;
  req.export_name = r.string(name_bytes);
  const std::uint16_t count = r.u16();
  if (!r.ok())
    return sim::invalid_argument("the option data ends before the count of information requests");
  if (r.remaining() != std::size_t{count} * 2)
    return sim::invalid_argument("the option length does not match " + std::to_string(count) +
                                 " information requests");
  // A type asked for twice is answered once: proto.md does not forbid the repeat, and nbdkit
  // serves it (it was NBD_REP_ERR_INVALID until hostile round 31b, the export refused).
  std::set<std::uint16_t> seen;
  for (std::uint16_t i = 0; i < count; ++i) {
    const std::uint16_t type = r.u16();
    if (seen.insert(type).second) req.info_types.push_back(type);
  }
  return req;
}

sim::Result<MetaContextRequest> parse_meta_context_request(std::span<const std::uint8_t> data,
                                                           std::size_t max_queries) {
  Reader r(data);
  const std::uint32_t name_bytes = r.u32();
  if (!r.ok() || name_bytes > r.remaining())
    return sim::invalid_argument("the export name length runs past the option data");
  if (name_bytes > kMaxStringBytes)
    return sim::invalid_argument("the export name is longer than 4096 bytes");
  MetaContextRequest req;
  req.export_name = r.string(name_bytes);
  const std::uint32_t count = r.u32();
  if (!r.ok()) return sim::invalid_argument("the option data ends before the number of queries");
  if (count > max_queries)
    return sim::Status(sim::Code::kOutOfRange, std::to_string(count) +
                                                   " queries; this server takes at most " +
                                                   std::to_string(max_queries));
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t query_bytes = r.u32();
    if (!r.ok() || query_bytes > r.remaining())
      return sim::invalid_argument("query " + std::to_string(i + 1) + " runs past the option data");
    if (query_bytes > kMaxStringBytes)
      return sim::invalid_argument("query " + std::to_string(i + 1) + " is longer than 4096 bytes");
    req.queries.push_back(r.string(query_bytes));
  }
  if (r.remaining() != 0) return sim::invalid_argument("bytes left over after the last query");
  return req;
}

bool meta_queries_name_base_allocation(const std::vector<std::string>& queries, bool listing) {
  if (listing && queries.empty()) return true;
  return std::any_of(queries.begin(), queries.end(), [listing](const std::string& q) {
    return q == kBaseAllocation || (listing && q == "base:");
  });
}

// ---------------------------------------------------------------------------------------
// Transmission

std::optional<RequestHeader> parse_request_header(
    std::span<const std::uint8_t, kRequestHeaderBytes> b) {
  if (load_u32(b.data()) != kRequestMagic) return std::nullopt;
  RequestHeader h;
  h.flags = load_u16(b.data() + 4);
  h.type = load_u16(b.data() + 6);
  h.handle = load_u64(b.data() + 8);
  h.offset = load_u64(b.data() + 16);
  h.length = load_u32(b.data() + 24);
  return h;
}

std::vector<std::uint8_t> encode_request_header(const RequestHeader& h) {
  std::vector<std::uint8_t> out;
  Writer(out).u32(kRequestMagic).u16(h.flags).u16(h.type).u64(h.handle).u64(h.offset).u32(h.length);
  return out;
}

namespace {

// The command flags valid for each command (proto.md "Command flags"). FUA is valid on
// every command once NBD_FLAG_SEND_FUA is offered, which it always is.
std::uint16_t allowed_flags(Command c, const TransmissionLimits& l) {
  switch (c) {
    case Command::kRead:
      return kCmdFlagFua | (l.structured_replies ? kCmdFlagDf : 0);
    case Command::kWriteZeroes:
      return kCmdFlagFua | kCmdFlagNoHole;
    case Command::kBlockStatus:
      return kCmdFlagFua | kCmdFlagReqOne;
    default:
      return kCmdFlagFua;
  }
}

std::string hex(std::uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

std::uint32_t refuse(std::string* why, std::uint32_t error, std::string text) {
  if (why != nullptr) *why = std::move(text);
  return error;
}

}  // namespace

std::uint32_t check_request(const RequestHeader& h, const TransmissionLimits& l, std::string* why) {
  const auto c = static_cast<Command>(h.type);
  switch (c) {
    case Command::kDisc:
      return 0;
    case Command::kRead:
    case Command::kWrite:
    case Command::kFlush:
    case Command::kTrim:
    case Command::kWriteZeroes:
    case Command::kBlockStatus:
      break;
    default:
      return refuse(
          why, kEinval,
          "unknown command " + std::to_string(h.type) +
              (c == Command::kCache ? " (NBD_CMD_CACHE is not offered by this server)" : ""));
  }
  const std::string name(command_name(h.type));
  if (const std::uint16_t bad = h.flags & ~allowed_flags(c, l); bad != 0)
    return refuse(
        why, kEinval,
        name + ": command flags " + hex(bad) + " are unknown or not valid for this command");
  if (c == Command::kBlockStatus && !l.block_status)
    return refuse(why, kEinval, name + " without a metadata context selected during the handshake");
  if (c == Command::kFlush) {
    if (h.offset != 0 || h.length != 0)
      return refuse(why, kEinval, name + ": offset and length must be zero");
    return 0;
  }
  if (h.length == 0) return refuse(why, kEinval, name + ": length 0");
  if (h.offset % l.min_block_bytes != 0 || h.length % l.min_block_bytes != 0)
    return refuse(why, kEinval,
                  name + ": offset and length must be multiples of the " +
                      std::to_string(l.min_block_bytes) + "-byte minimum block size");
  const bool writes = c == Command::kWrite || c == Command::kTrim || c == Command::kWriteZeroes;
  if (writes && l.read_only) return refuse(why, kEperm, name + " on a read-only export");
  // Only commands that carry a payload are bounded by it: WRITE_ZEROES and TRIM of any
  // length within the export are served (nbdcopy zeroes a whole hole in one request).
  const bool bounded = c == Command::kRead || c == Command::kWrite;
  if (bounded && h.length > l.max_payload_bytes)
    return refuse(why, kEinval,
                  name + ": length " + std::to_string(h.length) +
                      " is over the maximum block size of " + std::to_string(l.max_payload_bytes) +
                      " bytes");
  if (h.offset > l.export_size_bytes || h.length > l.export_size_bytes - h.offset) {
    const bool grows = c == Command::kWrite || c == Command::kWriteZeroes;
    return refuse(why, grows ? kEnospc : kEinval,
                  name + ": [" + std::to_string(h.offset) + ", +" + std::to_string(h.length) +
                      ") is past the end of the export (" + std::to_string(l.export_size_bytes) +
                      " bytes)");
  }
  return 0;
}

void append_simple_reply(std::vector<std::uint8_t>& out, std::uint32_t error,
                         std::uint64_t handle) {
  Writer(out).u32(kSimpleReplyMagic).u32(error).u64(handle);
}

void append_chunk_header(std::vector<std::uint8_t>& out, std::uint16_t flags, std::uint16_t type,
                         std::uint64_t handle, std::uint32_t length) {
  Writer(out).u32(kStructuredReplyMagic).u16(flags).u16(type).u64(handle).u32(length);
}

void append_error_chunk(std::vector<std::uint8_t>& out, std::uint64_t handle, std::uint32_t error,
                        std::string_view message) {
  message = message.substr(0, kMaxStringBytes);
  append_chunk_header(out, kReplyFlagDone, kReplyTypeError, handle,
                      static_cast<std::uint32_t>(6 + message.size()));
  Writer(out).u32(error).u16(static_cast<std::uint16_t>(message.size())).bytes(message);
}

void append_offset_data_header(std::vector<std::uint8_t>& out, std::uint64_t handle,
                               std::uint64_t offset, std::uint32_t data_bytes) {
  append_chunk_header(out, kReplyFlagDone, kReplyTypeOffsetData, handle, 8 + data_bytes);
  Writer(out).u64(offset);
}

void append_block_status_chunk(std::vector<std::uint8_t>& out, std::uint64_t handle,
                               std::uint32_t context_id,
                               const std::vector<BlockDescriptor>& descriptors) {
  append_chunk_header(out, kReplyFlagDone, kReplyTypeBlockStatus, handle,
                      static_cast<std::uint32_t>(4 + 8 * descriptors.size()));
  Writer w(out);
  w.u32(context_id);
  for (const BlockDescriptor& d : descriptors) w.u32(d.length_bytes).u32(d.flags);
}

}  // namespace afasim::nbd::proto
