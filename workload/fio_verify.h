// The data pattern of fio's verify= in afasim: what a verifying job writes, and the check of
// what it reads back (docs/workloads.md "verify").
//
// Every 512-byte sector of a volume has one expected content, a function of the run's seed,
// the volume and the sector's byte offset: an 8-byte header (mix64 of the three) followed by
// a xorshift stream seeded from it. A write of any size and alignment carries exactly the
// sectors' contents, so overlapping writes of verifying jobs agree, and a read of what was
// written matches byte for byte; anything else (zeros of a hole or a trim, another job's
// data, a lost or misplaced write) does not. fio stores a checksum and header in each block
// instead; the failure it catches are the same, the report names the first bad byte.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace afasim::workload {

inline constexpr std::int64_t kVerifySectorBytes = 512;

// The pattern key of one volume in one run.
std::uint64_t verify_volume_key(std::uint64_t run_seed, std::string_view volume_name);

// Fills `out` (length_bytes bytes) with the expected content of [offset, offset + length).
// Any alignment: each byte is its sector's byte. REQUIRES: offset >= 0, length >= 0.
void fill_verify_pattern(std::uint64_t volume_key, std::int64_t offset_bytes,
                         std::int64_t length_bytes, std::uint8_t* out);

// Compares `data` with the expected content; nullopt when equal, else the offset (in the
// volume) of the first byte that differs.
std::optional<std::int64_t> check_verify_pattern(std::uint64_t volume_key, std::int64_t offset_bytes,
                                                 std::int64_t length_bytes, const std::uint8_t* data);

}  // namespace afasim::workload
