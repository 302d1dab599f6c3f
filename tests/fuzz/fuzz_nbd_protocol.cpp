// Fuzz target: the NBD target's parsers of what a client sends (nbd/nbd_protocol.h): the
// option data of INFO/GO and of the meta-context options, and transmission request headers
// with the checks each request passes before it reaches the array. The first byte chooses
// the parser; the rest is its input.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "nbd/nbd_protocol.h"

using namespace afasim::nbd::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      (void)parse_info_request(rest);
      break;
    case 1:
      if (auto m = parse_meta_context_request(rest, 64); m.is_ok())
        (void)meta_queries_name_base_allocation(m->queries, data[0] & 0x80);
      break;
    default: {
      if (rest.size() < kRequestHeaderBytes + 1) return 0;
      auto header = parse_request_header(rest.first<kRequestHeaderBytes>());
      if (!header) return 0;
      const std::uint8_t knobs = rest[kRequestHeaderBytes];
      TransmissionLimits limits;
      limits.export_size_bytes = std::uint64_t{1} << (30 + (knobs & 7));
      limits.read_only = knobs & 8;
      limits.structured_replies = knobs & 16;
      limits.block_status = knobs & 32;
      std::string why;
      (void)check_request(*header, limits, &why);
      break;
    }
  }
  return 0;
}
