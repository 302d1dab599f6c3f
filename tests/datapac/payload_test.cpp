// Payload stores: none, memory and file, through the Ssd's payload calls.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <numeric>
#include <vector>

#include "datapac/ssd.h"
#include "test_support.h"

using namespace afasim;
using namespace afasim::datapac;
using namespace afasim::datapac::testing;

namespace {

// A fresh directory under the system's temporary directory, removed at scope end.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path =
        std::filesystem::temp_directory_path() /
        ("afasim-datapac-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// A small SSD model (64 MiB) so that file stores stay small; timing is irrelevant here.
config::SsdModel small_model() {
  auto m = preset_ssd("xio-g3-sas-200gb");
  m.capacity_bytes = 64 << 20;
  m.raw_nand_bytes = 80 << 20;
  m.write_buffer_bytes = 1 << 20;
  return m;
}

std::unique_ptr<Ssd> make(PayloadKind kind, const std::string& dir = "",
                          const std::string& name = "p0") {
  SsdOptions o;
  o.name = name;
  o.payload = kind;
  o.payload_directory = dir;
  auto ssd = Ssd::create(small_model(), o);
  REQUIRE(ssd.is_ok());
  return std::move(ssd).value();
}

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 31 + (i >> 8));
  return v;
}

std::vector<std::uint8_t> read(Ssd& ssd, std::int64_t offset, std::size_t n) {
  std::vector<std::uint8_t> out(n, 0xEE);
  REQUIRE(ssd.read_payload(offset, out).is_ok());
  return out;
}

bool zeros(const std::vector<std::uint8_t>& v) {
  return std::all_of(v.begin(), v.end(), [](std::uint8_t b) { return b == 0; });
}

// The same round-trip checks for any store that keeps bytes.
void check_round_trips(Ssd& ssd) {
  // Unaligned, across 64 KiB page boundaries: [65,530, +200,000) spans 4 pages.
  const auto a = pattern(200'000, 1);
  REQUIRE(ssd.write_payload(65'530, a).is_ok());
  CHECK(read(ssd, 65'530, a.size()) == a);
  // A read straddling written and never-written space: zeros where nothing was written.
  const auto around = read(ssd, 65'000, 1'000);
  CHECK(zeros(std::vector<std::uint8_t>(around.begin(), around.begin() + 530)));
  CHECK(std::equal(around.begin() + 530, around.end(), a.begin()));
  // Overwrite a few bytes in the middle; the rest stays.
  const auto b = pattern(7, 99);
  REQUIRE(ssd.write_payload(131'071, b).is_ok());
  auto expect = a;
  std::copy(b.begin(), b.end(), expect.begin() + (131'071 - 65'530));
  CHECK(read(ssd, 65'530, a.size()) == expect);
  // Trim an unaligned range in the middle: it reads as zeros, its neighbours do not change.
  REQUIRE(ssd.trim_payload(100'001, 70'000).is_ok());
  std::fill(expect.begin() + (100'001 - 65'530), expect.begin() + (170'001 - 65'530), 0);
  CHECK(read(ssd, 65'530, a.size()) == expect);
  // The last byte of the SSD, and a range one byte past the end.
  const std::int64_t cap = ssd.capacity_bytes();
  const std::vector<std::uint8_t> one{0x42};
  REQUIRE(ssd.write_payload(cap - 1, one).is_ok());
  CHECK(read(ssd, cap - 1, 1) == one);
  CHECK(ssd.write_payload(cap, one).code() == sim::Code::kOutOfRange);
  CHECK(ssd.trim_payload(cap - 10, 11).code() == sim::Code::kOutOfRange);
  std::vector<std::uint8_t> two(2);
  CHECK(ssd.read_payload(cap - 1, two).code() == sim::Code::kOutOfRange);
  CHECK(ssd.read_payload(-1, two).code() == sim::Code::kOutOfRange);
  // Trim everything: all zeros.
  REQUIRE(ssd.trim_payload(0, cap).is_ok());
  CHECK(zeros(read(ssd, 65'530, a.size())));
  CHECK(zeros(read(ssd, cap - 1, 1)));
  CHECK(ssd.flush_payload().is_ok());
}

}  // namespace

TEST_CASE("memory payload: round trips at any offset, zeros where never written or trimmed") {
  auto ssd = make(PayloadKind::kMemory);
  check_round_trips(*ssd);
  CHECK(ssd->payload_memory_bytes() == 0);  // the whole-SSD trim freed every page
}

TEST_CASE("memory payload holds only the pages written, and frees trimmed pages") {
  auto ssd = make(PayloadKind::kMemory);
  CHECK(ssd->payload_memory_bytes() == 0);
  // Zeros into never-written space allocate nothing.
  REQUIRE(ssd->write_payload(0, std::vector<std::uint8_t>(1 << 20, 0)).is_ok());
  CHECK(ssd->payload_memory_bytes() == 0);
  // 1 byte at the end of page 0 and 1 byte at the start of page 1: two 64 KiB pages.
  REQUIRE(ssd->write_payload(65'535, std::vector<std::uint8_t>{1, 2}).is_ok());
  CHECK(ssd->payload_memory_bytes() == 2 * 65'536);
  // Trimming page 1's only non-zero byte frees it; page 0 keeps its byte.
  REQUIRE(ssd->trim_payload(65'536, 1).is_ok());
  CHECK(ssd->payload_memory_bytes() == 65'536);
  REQUIRE(ssd->trim_payload(0, 65'536).is_ok());
  CHECK(ssd->payload_memory_bytes() == 0);
}

TEST_CASE("none payload stores nothing and reads zeros, with the same range checks") {
  auto ssd = make(PayloadKind::kNone);
  REQUIRE(ssd->write_payload(10, pattern(100, 3)).is_ok());
  CHECK(zeros(read(*ssd, 10, 100)));
  CHECK(ssd->write_payload(ssd->capacity_bytes(), pattern(1, 0)).code() == sim::Code::kOutOfRange);
  CHECK(ssd->payload_memory_bytes() == 0);
}

TEST_CASE("file payload: round trips, a sparse file of the SSD's size, reopened with its data") {
  TempDir dir;
  {
    auto ssd = make(PayloadKind::kFile, dir.path.string());
    check_round_trips(*ssd);
    REQUIRE(ssd->write_payload(1'000'003, pattern(5000, 7)).is_ok());
    REQUIRE(ssd->flush_payload().is_ok());
  }
  const auto file = dir.path / "p0.payload";
  REQUIRE(std::filesystem::exists(file));
  CHECK(std::filesystem::file_size(file) == static_cast<std::uintmax_t>(64 << 20));
  // Reopen: the bytes are there.
  auto again = make(PayloadKind::kFile, dir.path.string());
  CHECK(read(*again, 1'000'003, 5000) == pattern(5000, 7));
  CHECK(zeros(read(*again, 0, 4096)));
  // A replacement drive empties the file.
  REQUIRE(again->insert_replacement().is_ok());
  CHECK(zeros(read(*again, 1'000'003, 5000)));
  CHECK(std::filesystem::file_size(file) == static_cast<std::uintmax_t>(64 << 20));
}

TEST_CASE("file payload: a file of another size or a missing directory is refused") {
  TempDir dir;
  {
    auto other = small_model();
    other.capacity_bytes = 32 << 20;
    SsdOptions o;
    o.name = "p1";
    o.payload = PayloadKind::kFile;
    o.payload_directory = dir.path.string();
    REQUIRE(Ssd::create(other, o).is_ok());
  }
  SsdOptions o;
  o.name = "p1";
  o.payload = PayloadKind::kFile;
  o.payload_directory = dir.path.string();
  auto wrong = Ssd::create(small_model(), o);
  REQUIRE_FALSE(wrong.is_ok());
  CHECK(wrong.status().code() == sim::Code::kPreconditionFailed);
  CHECK(wrong.status().message().find("p1.payload") != std::string::npos);
  // The constructor path keeps the drive usable for timing and reports on payload calls.
  o.payload_directory = (dir.path / "no-such-dir").string();
  Ssd ssd(small_model(), o);
  CHECK(ssd.payload_status().code() == sim::Code::kIoError);
  CHECK(ssd.schedule(0, SsdOp::kRead, 0, 4096).is_ok());
  std::vector<std::uint8_t> out(16);
  CHECK(ssd.read_payload(0, out).code() == sim::Code::kIoError);
}

TEST_CASE("parse_payload_kind takes the three names and refuses others") {
  CHECK(*parse_payload_kind("memory") == PayloadKind::kMemory);
  CHECK(*parse_payload_kind("file") == PayloadKind::kFile);
  CHECK(*parse_payload_kind("none") == PayloadKind::kNone);
  CHECK(parse_payload_kind("disk").status().code() == sim::Code::kInvalidArgument);
  CHECK(std::string(payload_kind_name(PayloadKind::kMemory)) == "memory");
}
