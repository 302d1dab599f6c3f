// The NBD wire format and request checks of nbd/nbd_protocol.h, against proto.md.
#include "nbd/nbd_protocol.h"
#include "tests/nbd/nbd_test_client.h"

#include <doctest/doctest.h>

using namespace afasim;
using namespace afasim::nbd::proto;
using namespace afasim::nbd::testing;

namespace {

TransmissionLimits limits(std::uint64_t size = 1 << 30) {
  TransmissionLimits l;
  l.export_size_bytes = size;
  l.min_block_bytes = 512;
  l.max_payload_bytes = 32 << 20;
  l.structured_replies = true;
  l.block_status = true;
  return l;
}

std::uint32_t check(std::uint16_t type, std::uint64_t offset, std::uint32_t length,
                    std::uint16_t flags = 0, TransmissionLimits l = limits()) {
  RequestHeader h;
  h.type = type;
  h.offset = offset;
  h.length = length;
  h.flags = flags;
  std::string why;
  const std::uint32_t e = check_request(h, l, &why);
  CHECK((e == 0) == why.empty());
  return e;
}

constexpr auto kDisc = static_cast<std::uint16_t>(Command::kDisc);

}  // namespace

TEST_CASE("constants are proto.md's values") {
  // Magic numbers and values as proto.md lists them ("NBDMAGIC", "IHAVEOPT", ...).
  CHECK(kInitPasswd == 0x4e42444d41474943ULL);
  CHECK(kIHaveOpt == 0x49484156454F5054ULL);
  CHECK(kOptionReplyMagic == 0x3e889045565a9ULL);
  CHECK(kRequestMagic == 0x25609513u);
  CHECK(kSimpleReplyMagic == 0x67446698u);
  CHECK(kStructuredReplyMagic == 0x668e33efu);
  CHECK(static_cast<int>(Option::kListMetaContext) == 9);
  CHECK(static_cast<int>(Option::kSetMetaContext) == 10);
  CHECK(kRepErrUnknown == (1u << 31) + 6);
  CHECK(kRepErrTooBig == (1u << 31) + 9);
  CHECK(kReplyTypeError == (1u << 15) + 1);
  CHECK(kEperm == 1);
  CHECK(kEio == 5);
  CHECK(kEinval == 22);
  CHECK(kEnospc == 28);
  CHECK(kEoverflow == 75);
  CHECK(kEshutdown == 108);
}

TEST_CASE("big-endian encoding round-trips and a short read fails") {
  std::vector<std::uint8_t> out;
  Writer(out).u16(0x0102).u32(0x03040506).u64(0x0708090a0b0c0d0eULL).bytes("hi");
  CHECK(out == std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 'h', 'i'});
  Reader r(out);
  CHECK(r.u16() == 0x0102);
  CHECK(r.u32() == 0x03040506u);
  CHECK(r.u64() == 0x0708090a0b0c0d0eULL);
  CHECK(r.string(2) == "hi");
  CHECK(r.ok());
  CHECK(r.u32() == 0);
  CHECK_FALSE(r.ok());
}

TEST_CASE("request header: 28 bytes, wrong magic is refused") {
  RequestHeader h;
  h.flags = kCmdFlagFua;
  h.type = kWrite;
  h.handle = 0xfeedfacecafebeefULL;
  h.offset = 1ULL << 40;
  h.length = 4096;
  auto bytes = encode_request_header(h);
  REQUIRE(bytes.size() == kRequestHeaderBytes);
  auto back = parse_request_header(
      std::span<const std::uint8_t, kRequestHeaderBytes>(bytes.data(), kRequestHeaderBytes));
  REQUIRE(back);
  CHECK(back->flags == h.flags);
  CHECK(back->type == h.type);
  CHECK(back->handle == h.handle);
  CHECK(back->offset == h.offset);
  CHECK(back->length == h.length);
  bytes[0] ^= 1;
  CHECK_FALSE(parse_request_header(
      std::span<const std::uint8_t, kRequestHeaderBytes>(bytes.data(), kRequestHeaderBytes)));
}

TEST_CASE("check_request: what a request may be, error by error") {
  const std::uint64_t size = 1 << 30;
  CHECK(check(kRead, 0, 4096) == 0);
  CHECK(check(kWrite, size - 512, 512) == 0);
  CHECK(check(kTrim, 0, 0xfffffe00u, 0, limits(8ULL << 30)) ==
        0);  // TRIM has no payload: no maximum
  CHECK(check(kStatus, 0, 0xfffffe00u, 0, limits(8ULL << 30)) == 0);
  CHECK(check(kFlush, 0, 0) == 0);
  CHECK(check(kDisc, 5, 7, 0xffff) == 0);  // DISC always ends the connection

  SUBCASE("unknown commands, NBD_CMD_CACHE included") {
    CHECK(check(42, 0, 4096) == kEinval);
    CHECK(check(kCache, 0, 4096) == kEinval);
  }
  SUBCASE("flags unknown or not valid for the command") {
    CHECK(check(kRead, 0, 4096, 1 << 7) == kEinval);
    CHECK(check(kWrite, 0, 4096, kCmdFlagReqOne) == kEinval);
    CHECK(check(kRead, 0, 4096, kCmdFlagNoHole) == kEinval);
    CHECK(check(kZero, 0, 4096, kCmdFlagFastZero) == kEinval);  // fast zero is not offered
    CHECK(check(kZero, 0, 4096, kCmdFlagNoHole | kCmdFlagFua) == 0);
    CHECK(check(kStatus, 0, 4096, kCmdFlagReqOne) == 0);
    CHECK(check(kFlush, 0, 0, kCmdFlagFua) == 0);  // FUA is valid on every command
    auto simple = limits();
    simple.structured_replies = false;
    CHECK(check(kRead, 0, 4096, kCmdFlagDf, simple) == kEinval);
    CHECK(check(kRead, 0, 4096, kCmdFlagDf) == 0);
  }
  SUBCASE("BLOCK_STATUS needs a context") {
    auto l = limits();
    l.block_status = false;
    CHECK(check(kStatus, 0, 4096, 0, l) == kEinval);
  }
  SUBCASE("FLUSH with an offset or a length") {
    CHECK(check(kFlush, 512, 0) == kEinval);
    CHECK(check(kFlush, 0, 512) == kEinval);
  }
  SUBCASE("zero length and unaligned") {
    CHECK(check(kRead, 0, 0) == kEinval);
    CHECK(check(kWrite, 0, 0) == kEinval);
    CHECK(check(kRead, 1, 4096) == kEinval);
    CHECK(check(kRead, 0, 4095) == kEinval);
  }
  SUBCASE("read-only exports refuse WRITE, TRIM, WRITE_ZEROES with EPERM") {
    auto ro = limits();
    ro.read_only = true;
    CHECK(check(kWrite, 0, 4096, 0, ro) == kEperm);
    CHECK(check(kTrim, 0, 4096, 0, ro) == kEperm);
    CHECK(check(kZero, 0, 4096, 0, ro) == kEperm);
    CHECK(check(kRead, 0, 4096, 0, ro) == 0);
    CHECK(check(kFlush, 0, 0, 0, ro) == 0);
  }
  SUBCASE("longer than the maximum payload") {
    CHECK(check(kRead, 0, (32 << 20) + 512) == kEinval);
    CHECK(check(kWrite, 0, (32 << 20) + 512) == kEinval);
    CHECK(check(kRead, 0, 32 << 20) == 0);
  }
  SUBCASE("WRITE_ZEROES and TRIM of any length within the export (issue 14)") {
    // main at 4676db3 refused a WRITE_ZEROES over 32 MiB with EINVAL: nbdcopy of a sparse
    // image failed at its first large hole.
    CHECK(check(kZero, 0, (32 << 20) + 512) == 0);
    CHECK(check(kZero, 512, static_cast<std::uint32_t>(size - 512)) == 0);
    CHECK(check(kTrim, 0, static_cast<std::uint32_t>(size)) == 0);
    CHECK(check(kZero, size - (64 << 20), 64 << 20) == 0);
    CHECK(check(kZero, size - (64 << 20), (64 << 20) + 512) == kEnospc);
  }
  SUBCASE("past the end: ENOSPC for writes (proto.md \"Error values\"), EINVAL otherwise") {
    CHECK(check(kRead, size, 512) == kEinval);
    CHECK(check(kRead, size - 512, 1024) == kEinval);
    CHECK(check(kTrim, size - 512, 1024) == kEinval);
    CHECK(check(kStatus, size, 512) == kEinval);
    CHECK(check(kWrite, size - 512, 1024) == kEnospc);
    CHECK(check(kZero, size, 512) == kEnospc);
    // An offset near 2^64 must not wrap around into range.
    CHECK(check(kRead, ~0ULL - 511, 1024) == kEinval);
  }
}

TEST_CASE("NBD_OPT_INFO / NBD_OPT_GO data") {
  std::vector<std::uint8_t> d;
  Writer(d).u32(4).bytes("vol1").u16(2).u16(kInfoBlockSize).u16(kInfoName);
  auto r = parse_info_request(d);
  REQUIRE(r.is_ok());
  CHECK(r->export_name == "vol1");
  CHECK(r->info_types == std::vector<std::uint16_t>{kInfoBlockSize, kInfoName});

  SUBCASE("name length past the data") {
    std::vector<std::uint8_t> bad;
    Writer(bad).u32(40).bytes("vol1").u16(0);
    CHECK_FALSE(parse_info_request(bad).is_ok());
  }
  SUBCASE("count does not match the length") {
    std::vector<std::uint8_t> bad;
    Writer(bad).u32(4).bytes("vol1").u16(3).u16(kInfoName);
    CHECK_FALSE(parse_info_request(bad).is_ok());
  }
  SUBCASE("the same information twice: answered once (as nbdkit does; proto.md does not forbid it)") {
    std::vector<std::uint8_t> twice;
    Writer(twice).u32(0).u16(3).u16(kInfoName).u16(kInfoBlockSize).u16(kInfoName);
    auto req = parse_info_request(twice);
    REQUIRE(req.is_ok());
    CHECK(req->info_types == std::vector<std::uint16_t>{kInfoName, kInfoBlockSize});
  }
  SUBCASE("empty data") {
    CHECK_FALSE(parse_info_request({}).is_ok());
  }
}

TEST_CASE("meta context data and base:allocation queries") {
  std::vector<std::uint8_t> d;
  Writer(d).u32(3).bytes("vol").u32(2).u32(15).bytes("base:allocation").u32(9).bytes("qemu:junk");
  auto r = parse_meta_context_request(d, 64);
  REQUIRE(r.is_ok());
  CHECK(r->export_name == "vol");
  CHECK(r->queries == std::vector<std::string>{"base:allocation", "qemu:junk"});
  CHECK(meta_queries_name_base_allocation(r->queries, false));

  CHECK(meta_queries_name_base_allocation({}, true));                // LIST with no query: all
  CHECK_FALSE(meta_queries_name_base_allocation({}, false));         // SET with no query: none
  CHECK(meta_queries_name_base_allocation({"base:"}, true));         // wildcard when listing
  CHECK_FALSE(meta_queries_name_base_allocation({"base:"}, false));  // ignored when setting
  CHECK_FALSE(meta_queries_name_base_allocation({"base:other", "x-foo:bar"}, false));

  SUBCASE("too many queries → TOO_BIG") {
    std::vector<std::uint8_t> many;
    Writer(many).u32(0).u32(65);
    CHECK(parse_meta_context_request(many, 64).status().code() == sim::Code::kOutOfRange);
  }
  SUBCASE("a query running past the data") {
    std::vector<std::uint8_t> bad;
    Writer(bad).u32(0).u32(1).u32(100).bytes("base:");
    CHECK(parse_meta_context_request(bad, 64).status().code() == sim::Code::kInvalidArgument);
  }
  SUBCASE("bytes left over") {
    std::vector<std::uint8_t> bad;
    Writer(bad).u32(0).u32(0).bytes("x");
    CHECK(parse_meta_context_request(bad, 64).status().code() == sim::Code::kInvalidArgument);
  }
}

TEST_CASE("replies: simple, structured chunks, errors, block status") {
  std::vector<std::uint8_t> out;
  append_simple_reply(out, kEio, 7);
  CHECK(out.size() == kSimpleReplyHeaderBytes);
  CHECK(load_u32(out.data()) == kSimpleReplyMagic);
  CHECK(load_u32(out.data() + 4) == kEio);
  CHECK(load_u64(out.data() + 8) == 7);

  out.clear();
  append_error_chunk(out, 9, kEnospc, "full");
  CHECK(out.size() == kStructuredReplyHeaderBytes + 6 + 4);
  CHECK(load_u16(out.data() + 4) == kReplyFlagDone);
  CHECK(load_u16(out.data() + 6) == kReplyTypeError);
  CHECK(load_u32(out.data() + 16) == 10);
  CHECK(load_u32(out.data() + 20) == kEnospc);
  CHECK(load_u16(out.data() + 24) == 4);

  out.clear();
  append_error_chunk(out, 9, kEio, std::string(10000, 'x'));  // a message is at most 4096 bytes
  CHECK(load_u16(out.data() + 24) == 4096);

  out.clear();
  append_block_status_chunk(out, 3, 1, {{1 << 20, 0}, {2 << 20, kStateHole | kStateZero}});
  CHECK(load_u16(out.data() + 6) == kReplyTypeBlockStatus);
  CHECK(load_u32(out.data() + 16) == 4 + 16);
  CHECK(load_u32(out.data() + 20) == 1);
  CHECK(load_u32(out.data() + 24) == 1u << 20);
  CHECK(load_u32(out.data() + 36) == 3);

  out.clear();
  append_offset_data_header(out, 3, 4096, 512);
  CHECK(out.size() == kStructuredReplyHeaderBytes + 8);
  CHECK(load_u32(out.data() + 16) == 8 + 512);
  CHECK(load_u64(out.data() + 20) == 4096);
}

TEST_CASE("array outcomes map to NBD errors") {
  CHECK(error_for(sim::Status::ok()) == 0);
  CHECK(error_for(sim::no_space("x")) == kEnospc);
  CHECK(error_for(sim::io_error("x")) == kEio);
  CHECK(error_for(sim::Status(sim::Code::kOutOfRange, "x")) == kEinval);
  CHECK(error_for(sim::invalid_argument("x")) == kEinval);
  CHECK(error_for(sim::Status(sim::Code::kReadOnly, "x")) == kEperm);
  CHECK(error_for(sim::unavailable("x")) == kEshutdown);
  CHECK(error_for(sim::not_found("x")) == kEio);
}
