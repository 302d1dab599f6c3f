// What an NBD client may see of the array: LUN masking by host and initiator, the exports
// (volumes) a client's host has mapped, and the thin map as base:allocation block status.
//
// LUN masking (docs/nbd.md "Exports and masking"). NBD carries no initiator identity, so
// the target identifies a client by where it connects from: its IP address as text
// ("192.0.2.7", "2001:db8::7"; an IPv4-mapped IPv6 address is given as IPv4), or "unix"
// for a client of the Unix socket. A host's `nbd` initiator address is matched against
// that text: exactly, or as a glob ("10.0.0.*", "*" for any client; fnmatch(3) rules).
// The client belongs to ONE host, as a SAN initiator logs in to one host definition: the
// host with an exact match, else the one whose pattern has the most literal characters,
// ties to the lowest host id. Its exports are that host's mappings; the export name is
// the volume name, and the empty name selects the volume at LUN 0.
//
// Every function reads the Array and so runs on the model thread (controller::Array is
// single-threaded).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/array.h"
#include "nbd/nbd_protocol.h"

namespace afasim::nbd {

// One volume as the client's host sees it.
struct ExportInfo {
  std::string name;  // the volume name
  controller::Id volume_id = 0;
  controller::Id mapping_id = 0;
  controller::Id host_id = 0;
  std::int64_t lun = 0;
  std::int64_t size_bytes = 0;
  bool read_only = false;
  std::string description;  // for NBD_INFO_DESCRIPTION and NBD_REP_SERVER
};

// True when the nbd initiator `pattern` admits a client at `client_address`.
bool initiator_matches(std::string_view pattern, std::string_view client_address);

// Every host's nbd initiator address or pattern, for the connection admission's check of
// who may be a client (serve::ConnectionSlots::set_trusted; the NBD server keeps a copy).
std::vector<std::string> nbd_initiator_patterns(const controller::Array& array);

// The host a client at `client_address` belongs to (rules above); nullptr when no host has
// an nbd initiator that admits it.
const controller::Host* host_for_client(const controller::Array& array,
                                        std::string_view client_address);

// The exports of the client's host, by LUN. Empty when the client belongs to no host.
std::vector<ExportInfo> visible_exports(const controller::Array& array,
                                        std::string_view client_address);

// The export `name` ("" = LUN 0) if the client's host has it mapped.
std::optional<ExportInfo> find_export(const controller::Array& array,
                                      std::string_view client_address, std::string_view name);

// True while mapping `e.mapping_id` still maps the volume to the same host with the same
// access: masking changes take effect at the next request of an open connection.
bool export_still_mapped(const controller::Array& array, const ExportInfo& e);

// base:allocation for [offset, offset + length) of a volume: runs of allocated extents
// (flags 0) and holes (NBD_STATE_HOLE | NBD_STATE_ZERO: an unallocated thin extent reads
// as zeros), coalesced, covering exactly the range; with `first_only`, only the first
// run (NBD_CMD_FLAG_REQ_ONE). REQUIRES: the volume exists, the range lies within it and
// length > 0.
std::vector<proto::BlockDescriptor> allocation_map(const controller::Array& array,
                                                 controller::Id volume_id, std::uint64_t offset,
                                                 std::uint32_t length, bool first_only);

}  // namespace afasim::nbd
