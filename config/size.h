// Size syntax shared by the management API and scenario files: "100GiB", "2TB", "512",
// "1.5TiB". (The same parser as api/size.h on the api branch, moved to this low layer so
// that workload/ can use it too; api::parse_size should forward here.)
//
// A size is a non-negative decimal number, optionally with a fraction, optionally followed
// (after at most one space) by a unit, case-insensitive:
//   B; binary KiB MiB GiB TiB PiB EiB (and the one-letter K M G T P E, as qemu-img and fio
//   read them); decimal kB/KB MB GB TB PB EB.
// The result must be a whole number of bytes ("1.5KiB" = 1536 is; "1.3B" is not).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/status.h"

namespace afasim::config {

// Longest size string accepted, in characters.
inline constexpr std::size_t kSizeStringMaxChars = 64;

// Parses `text` into bytes.
// Errors: kInvalidArgument when `text` is not of the syntax above (empty, unknown unit,
// exponent, hex, thousands separators, longer than kSizeStringMaxChars);
// kUnprocessable when it is well-formed but unusable: negative ("-5GiB"), not a whole
// number of bytes, or beyond what an int64 holds.
sim::Result<std::int64_t> parse_size(std::string_view text);

// `bytes` for people, in binary units: "512 B", "1.50 TiB" (`decimals` digits after the
// point above 1 KiB, 0..6). For messages and reports, not for parsing back.
std::string human_bytes(std::int64_t bytes, int decimals = 2);

// An exact count of bytes in words, for messages: "1 byte", "0 bytes", "512 bytes".
std::string byte_count(std::int64_t bytes);

}  // namespace afasim::config
