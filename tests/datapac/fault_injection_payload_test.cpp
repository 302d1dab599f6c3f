// datapac/fault_injection_payload.h over a memory store: failed writes change nothing, a
// drop undoes exactly what the last flush did not cover, corruption inverts a range.
#include <doctest/doctest.h>

#include <vector>

#include "datapac/fault_injection_payload.h"

using namespace afasim;
using datapac::FaultInjectionPayloadStore;

namespace {
constexpr std::int64_t kCapacity = 1 << 20;

std::vector<std::uint8_t> bytes(std::size_t n, std::uint8_t v) { return std::vector<std::uint8_t>(n, v); }

std::vector<std::uint8_t> read(const FaultInjectionPayloadStore& s, std::int64_t off, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  REQUIRE(s.read(off, out).is_ok());
  return out;
}
}  // namespace

TEST_CASE("fail_next_writes: the next n writes and trims fail with kIoError and change nothing") {
  FaultInjectionPayloadStore s(datapac::make_memory_store(kCapacity, 4096));
  REQUIRE(s.write(0, bytes(4096, 1)).is_ok());
  s.fail_next_writes(2);
  CHECK(s.write(0, bytes(4096, 2)).code() == sim::Code::kIoError);
  CHECK(s.trim(0, 4096).code() == sim::Code::kIoError);
  CHECK(read(s, 0, 4096) == bytes(4096, 1));
  CHECK(s.writes_failed() == 2);
  CHECK(s.write(0, bytes(4096, 3)).is_ok());  // the third goes through
  CHECK(read(s, 0, 4096) == bytes(4096, 3));
  s.fail_next_reads(1);
  std::vector<std::uint8_t> out(16);
  CHECK(s.read(0, out).code() == sim::Code::kIoError);
  CHECK(s.read(0, out).is_ok());
}

TEST_CASE("drop_unsynced undoes the writes and trims after the last flush, newest first, and nothing before") {
  FaultInjectionPayloadStore s(datapac::make_memory_store(kCapacity, 4096));
  REQUIRE(s.write(0, bytes(8192, 0xA)).is_ok());
  REQUIRE(s.flush().is_ok());
  CHECK(s.unsynced_bytes() == 0);
  REQUIRE(s.write(4096, bytes(8192, 0xB)).is_ok());  // overlaps the synced data and beyond
  REQUIRE(s.write(6144, bytes(100, 0xC)).is_ok());   // overwrites an unsynced write
  REQUIRE(s.trim(0, 4096).is_ok());
  CHECK(s.unsynced_bytes() == 8192 + 100 + 4096);
  REQUIRE(s.drop_unsynced().is_ok());
  CHECK(read(s, 0, 8192) == bytes(8192, 0xA));
  CHECK(read(s, 8192, 4096) == bytes(4096, 0));
  CHECK(s.unsynced_bytes() == 0);
}

TEST_CASE("corrupt inverts every byte of the range and nothing else") {
  FaultInjectionPayloadStore s(datapac::make_memory_store(kCapacity, 4096));
  REQUIRE(s.write(0, bytes(4096, 0x0F)).is_ok());
  REQUIRE(s.corrupt(100, 10).is_ok());
  const auto after = read(s, 0, 4096);
  for (std::size_t i = 0; i < after.size(); ++i) {
    CAPTURE(i);
    CHECK(after[i] == (i >= 100 && i < 110 ? 0xF0 : 0x0F));
  }
}
