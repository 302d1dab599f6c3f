// The NBD wire protocol (NetworkBlockDevice doc/proto.md): constants, the byte layout of
// handshake messages, requests and replies, and the checks a request must pass before it
// reaches the array. Pure functions over bytes: no sockets, no threads, no array.
//
// Every multi-byte field on the wire is big-endian ("network byte order", proto.md
// "Conventions"). Thread-safe (no state).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"

namespace afasim::nbd::proto {

// --- Magic numbers (proto.md "Handshake", "Transmission") ------------------------------
inline constexpr std::uint64_t kInitPasswd = 0x4e42444d41474943ULL;  // "NBDMAGIC"
inline constexpr std::uint64_t kIHaveOpt = 0x49484156454f5054ULL;    // "IHAVEOPT"
inline constexpr std::uint64_t kOptionReplyMagic = 0x0003e889045565a9ULL;
inline constexpr std::uint32_t kRequestMagic = 0x25609513;
inline constexpr std::uint32_t kSimpleReplyMagic = 0x67446698;
inline constexpr std::uint32_t kStructuredReplyMagic = 0x668e33ef;

// --- Handshake flags (server, 16 bits) and client flags (32 bits) -----------------------
inline constexpr std::uint16_t kFlagFixedNewstyle = 1 << 0;
inline constexpr std::uint16_t kFlagNoZeroes = 1 << 1;
inline constexpr std::uint32_t kClientFlagFixedNewstyle = 1 << 0;
inline constexpr std::uint32_t kClientFlagNoZeroes = 1 << 1;

// --- Transmission flags (16 bits) -------------------------------------------------------
inline constexpr std::uint16_t kFlagHasFlags = 1 << 0;
inline constexpr std::uint16_t kFlagReadOnly = 1 << 1;
inline constexpr std::uint16_t kFlagSendFlush = 1 << 2;
inline constexpr std::uint16_t kFlagSendFua = 1 << 3;
inline constexpr std::uint16_t kFlagRotational = 1 << 4;
inline constexpr std::uint16_t kFlagSendTrim = 1 << 5;
inline constexpr std::uint16_t kFlagSendWriteZeroes = 1 << 6;
inline constexpr std::uint16_t kFlagSendDf = 1 << 7;
inline constexpr std::uint16_t kFlagCanMultiConn = 1 << 8;
inline constexpr std::uint16_t kFlagSendCache = 1 << 10;
inline constexpr std::uint16_t kFlagSendFastZero = 1 << 11;

// --- Options ----------------------------------------------------------------------------
enum class Option : std::uint32_t {
  kExportName = 1,
  kAbort = 2,
  kList = 3,
  kStartTls = 5,
  kInfo = 6,
  kGo = 7,
  kStructuredReply = 8,
  kListMetaContext = 9,
  kSetMetaContext = 10,
  kExtendedHeaders = 11,
};

// --- Option reply types -----------------------------------------------------------------
inline constexpr std::uint32_t kRepAck = 1;
inline constexpr std::uint32_t kRepServer = 2;
inline constexpr std::uint32_t kRepInfo = 3;
inline constexpr std::uint32_t kRepMetaContext = 4;
inline constexpr std::uint32_t kRepErrUnsup = 0x80000001;
inline constexpr std::uint32_t kRepErrPolicy = 0x80000002;
inline constexpr std::uint32_t kRepErrInvalid = 0x80000003;
inline constexpr std::uint32_t kRepErrPlatform = 0x80000004;
inline constexpr std::uint32_t kRepErrTlsReqd = 0x80000005;
inline constexpr std::uint32_t kRepErrUnknown = 0x80000006;
inline constexpr std::uint32_t kRepErrShutdown = 0x80000007;
inline constexpr std::uint32_t kRepErrBlockSizeReqd = 0x80000008;
inline constexpr std::uint32_t kRepErrTooBig = 0x80000009;

// --- NBD_INFO types (NBD_OPT_INFO / NBD_OPT_GO) -----------------------------------------
inline constexpr std::uint16_t kInfoExport = 0;
inline constexpr std::uint16_t kInfoName = 1;
inline constexpr std::uint16_t kInfoDescription = 2;
inline constexpr std::uint16_t kInfoBlockSize = 3;

// --- Commands and command flags ---------------------------------------------------------
enum class Command : std::uint16_t {
  kRead = 0,
  kWrite = 1,
  kDisc = 2,
  kFlush = 3,
  kTrim = 4,
  kCache = 5,
  kWriteZeroes = 6,
  kBlockStatus = 7,
};
inline constexpr std::uint16_t kCmdFlagFua = 1 << 0;
inline constexpr std::uint16_t kCmdFlagNoHole = 1 << 1;
inline constexpr std::uint16_t kCmdFlagDf = 1 << 2;
inline constexpr std::uint16_t kCmdFlagReqOne = 1 << 3;
inline constexpr std::uint16_t kCmdFlagFastZero = 1 << 4;

// --- Structured reply chunk types and flags ---------------------------------------------
inline constexpr std::uint16_t kReplyFlagDone = 1 << 0;
inline constexpr std::uint16_t kReplyTypeNone = 0;
inline constexpr std::uint16_t kReplyTypeOffsetData = 1;
inline constexpr std::uint16_t kReplyTypeOffsetHole = 2;
inline constexpr std::uint16_t kReplyTypeBlockStatus = 5;
inline constexpr std::uint16_t kReplyTypeError = 0x8001;
inline constexpr std::uint16_t kReplyTypeErrorOffset = 0x8002;

// --- base:allocation (proto.md "Metadata querying") -------------------------------------
inline constexpr std::string_view kBaseAllocation = "base:allocation";
inline constexpr std::uint32_t kStateHole = 1 << 0;
inline constexpr std::uint32_t kStateZero = 1 << 1;

// --- Error values (proto.md "Error values"; the Linux errno numbers) --------------------
inline constexpr std::uint32_t kEperm = 1;
inline constexpr std::uint32_t kEio = 5;
inline constexpr std::uint32_t kEnomem = 12;
inline constexpr std::uint32_t kEinval = 22;
inline constexpr std::uint32_t kEnospc = 28;
inline constexpr std::uint32_t kEoverflow = 75;
inline constexpr std::uint32_t kEnotsup = 95;
inline constexpr std::uint32_t kEshutdown = 108;

// --- Sizes ------------------------------------------------------------------------------
inline constexpr std::size_t kOptionHeaderBytes = 16;  // magic, option, length
inline constexpr std::size_t kRequestHeaderBytes = 28;
inline constexpr std::size_t kSimpleReplyHeaderBytes = 16;
inline constexpr std::size_t kStructuredReplyHeaderBytes = 20;
// proto.md "Conventions": a string MUST be no longer than 4096 bytes.
inline constexpr std::size_t kMaxStringBytes = 4096;

std::string_view option_name(std::uint32_t option);
std::string_view command_name(std::uint16_t type);
std::string_view error_name(std::uint32_t error);

// The NBD error value for an array outcome (sim::Status code):
//   kNoSpace → ENOSPC; kIoError, kNotFound → EIO; kOutOfRange, kInvalidArgument → EINVAL;
//   kReadOnly → EPERM; kUnavailable → ESHUTDOWN; anything else → EIO. 0 for ok.
std::uint32_t error_for(const sim::Status& status);

// --- Big-endian encoding ----------------------------------------------------------------

// Appends big-endian fields to a byte vector.
class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  Writer& u16(std::uint16_t v);
  Writer& u32(std::uint32_t v);
  Writer& u64(std::uint64_t v);
  Writer& bytes(std::string_view s);
  Writer& zeros(std::size_t n);

 private:
  std::vector<std::uint8_t>& out_;
};

// Reads big-endian fields from a byte span; every read past the end fails (ok() turns
// false and the value is 0), so a parser checks ok() once at the end.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  std::uint16_t u16();
  std::uint32_t u32();
  std::uint64_t u64();
  // `n` bytes as a string; fails when fewer remain.
  std::string string(std::size_t n);
  bool ok() const { return ok_; }
  std::size_t remaining() const { return in_.size() - pos_; }

 private:
  bool take(std::size_t n);
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

std::uint16_t load_u16(const std::uint8_t* p);
std::uint32_t load_u32(const std::uint8_t* p);
std::uint64_t load_u64(const std::uint8_t* p);

// --- Handshake messages -----------------------------------------------------------------

// S: NBDMAGIC, IHAVEOPT, handshake flags (18 bytes).
std::vector<std::uint8_t> server_greeting(std::uint16_t handshake_flags);
// One option reply: magic, option, reply type, length, data.
void append_option_reply(std::vector<std::uint8_t>& out, std::uint32_t option,
                         std::uint32_t reply_type, std::span<const std::uint8_t> data = {});
// An error option reply whose data is a message for a person (truncated to 4096 bytes).
void append_option_error(std::vector<std::uint8_t>& out, std::uint32_t option,
                         std::uint32_t reply_type, std::string_view message);

// The data of NBD_OPT_INFO and NBD_OPT_GO: export name, then the NBD_INFO types asked for.
struct InfoRequest {
  std::string export_name;
  std::vector<std::uint16_t> info_types;
};
// kInvalidArgument (→ NBD_REP_ERR_INVALID) when the lengths do not add up to the option
// length, the name is over 4096 bytes, or an information type is asked for twice.
sim::Result<InfoRequest> parse_info_request(std::span<const std::uint8_t> data);

// The data of NBD_OPT_LIST_META_CONTEXT and NBD_OPT_SET_META_CONTEXT.
struct MetaContextRequest {
  std::string export_name;
  std::vector<std::string> queries;
};
// kInvalidArgument when a length runs past the option data, leaves bytes over, or a
// string is over 4096 bytes; kOutOfRange (→ NBD_REP_ERR_TOO_BIG) for more than
// `max_queries` queries.
sim::Result<MetaContextRequest> parse_meta_context_request(std::span<const std::uint8_t> data,
                                                           std::size_t max_queries);

// The contexts a query list names among those this server has (only base:allocation):
// for LIST, no queries or the query "base:" lists it; for both, "base:allocation" names it.
// Queries in other namespaces are ignored (proto.md: MUST ignore unknown namespaces).
bool meta_queries_name_base_allocation(const std::vector<std::string>& queries, bool listing);

// --- Transmission -----------------------------------------------------------------------

struct RequestHeader {
  std::uint16_t flags = 0;
  std::uint16_t type = 0;
  std::uint64_t handle = 0;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};
// Decodes the 28-byte request header; nullopt when the magic is wrong (the stream cannot
// be trusted after that: the connection must be dropped).
std::optional<RequestHeader> parse_request_header(
    std::span<const std::uint8_t, kRequestHeaderBytes> bytes);
// Encodes a request header (for clients and tests).
std::vector<std::uint8_t> encode_request_header(const RequestHeader& h);

// What the connection negotiated and what the export allows: the facts a request is
// checked against.
struct TransmissionLimits {
  std::uint64_t export_size_bytes = 0;
  std::uint32_t min_block_bytes = 512;
  std::uint32_t max_payload_bytes = 32 << 20;
  bool read_only = false;
  bool structured_replies = false;
  bool block_status = false;  // base:allocation was selected for this export
};

// The checks of proto.md, in this order, for a request whose header is valid:
//   unknown command (NBD_CMD_CACHE included: not offered)        → EINVAL
//   a flag that is unknown, not valid for the command, or for a
//   feature not negotiated (DF without structured replies,
//   FAST_ZERO, which is not offered)                            → EINVAL
//   BLOCK_STATUS without a selected meta context                  → EINVAL
//   FLUSH with a nonzero offset or length                         → EINVAL
//   length 0 (any command but FLUSH and DISC)                     → EINVAL
//   offset or length not a multiple of the minimum block size     → EINVAL
//   WRITE, TRIM, WRITE_ZEROES on a read-only export               → EPERM
//   READ, WRITE longer than the maximum payload                   → EINVAL
//   (WRITE_ZEROES and TRIM may be as long as the export)
//   a range past the end: WRITE, WRITE_ZEROES → ENOSPC, others    → EINVAL
// Returns 0 when the request may go to the array, else the error, with `why` set to a
// sentence for the client. DISC always passes.
std::uint32_t check_request(const RequestHeader& h, const TransmissionLimits& limits,
                            std::string* why);

// The 16-byte simple reply header.
void append_simple_reply(std::vector<std::uint8_t>& out, std::uint32_t error, std::uint64_t handle);
// A structured reply chunk header (20 bytes); the caller appends `length` payload bytes.
void append_chunk_header(std::vector<std::uint8_t>& out, std::uint16_t flags, std::uint16_t type,
                         std::uint64_t handle, std::uint32_t length);
// A complete NBD_REPLY_TYPE_ERROR chunk with DONE set (message truncated to 4096 bytes).
void append_error_chunk(std::vector<std::uint8_t>& out, std::uint64_t handle, std::uint32_t error,
                        std::string_view message);
// The header of an NBD_REPLY_TYPE_OFFSET_DATA chunk with DONE set, through the offset: the
// caller sends `data_bytes` of data after it.
void append_offset_data_header(std::vector<std::uint8_t>& out, std::uint64_t handle,
                               std::uint64_t offset, std::uint32_t data_bytes);

// One base:allocation descriptor.
struct BlockDescriptor {
  std::uint32_t length_bytes = 0;
  std::uint32_t flags = 0;
  bool operator==(const BlockDescriptor&) const = default;
};
// A complete NBD_REPLY_TYPE_BLOCK_STATUS chunk with DONE set. REQUIRES: descriptors non-empty.
void append_block_status_chunk(std::vector<std::uint8_t>& out, std::uint64_t handle,
                               std::uint32_t context_id,
                               const std::vector<BlockDescriptor>& descriptors);

}  // namespace afasim::nbd::proto
