#include "sim/slab.h"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

using afasim::sim::Slab;

TEST_CASE("a slab's objects keep their address as it grows, and released ids come back first") {
  Slab<std::int64_t> slab;
  std::vector<std::int64_t*> addresses;
  // Past three chunks of 256, so that growth adds chunks while earlier objects are held.
  for (std::uint32_t i = 0; i < 700; ++i) {
    const std::uint32_t id = slab.acquire();
    CHECK(id == i);
    slab[id] = 1000 + i;
    addresses.push_back(&slab[id]);
  }
  for (std::uint32_t i = 0; i < 700; ++i) {
    CHECK(&slab[i] == addresses[i]);
    CHECK(slab[i] == 1000 + i);
  }
  CHECK(slab.size() == 700);
  CHECK(slab.in_use() == 700);
  slab.release(5);
  slab.release(300);
  CHECK(slab.in_use() == 698);
  CHECK(slab.acquire() == 300);  // last released first
  CHECK(slab[300] == 1300);      // kept as it was left
  CHECK(slab.acquire() == 5);
  CHECK(slab.acquire() == 700);  // then a new one
  CHECK(slab.size() == 701);
}

TEST_CASE("every object of a slab can be released at once; a moved slab hands its released ids over") {
  // The free list has room for every object the slab made (release never allocates): release
  // all 600 of three chunks, and they come back last released first, then new ones.
  Slab<std::int64_t> slab;
  for (std::uint32_t i = 0; i < 600; ++i) CHECK(slab.acquire() == i);
  for (std::uint32_t i = 0; i < 600; ++i) slab.release(i);
  CHECK(slab.in_use() == 0);
  Slab<std::int64_t> moved(std::move(slab));
  CHECK(moved.in_use() == 0);
  CHECK(slab.size() == 0);
  for (std::uint32_t i = 600; i-- > 0;) CHECK(moved.acquire() == i);
  CHECK(moved.acquire() == 600);
  CHECK(moved.in_use() == 601);
  slab = std::move(moved);
  slab.release(17);
  CHECK(slab.in_use() == 600);
  CHECK(slab.acquire() == 17);
}

TEST_CASE("a slab's 64-byte objects each sit in one cache line; a destroyed slab destroys them") {
  // An event's action is 64 bytes: malloc's 16-byte alignment put each across two lines.
  struct alignas(16) Line {
    unsigned char bytes[64];
  };
  Slab<Line> lines;
  for (std::uint32_t i = 0; i < 600; ++i) {
    const std::uint32_t id = lines.acquire();
    CHECK(reinterpret_cast<std::uintptr_t>(&lines[id]) % 64 == 0);
  }
  static int alive = 0;
  struct Counted {
    Counted() { ++alive; }
    ~Counted() { --alive; }
  };
  {
    Slab<Counted> counted;
    for (int i = 0; i < 300; ++i) (void)counted.acquire();
    CHECK(alive == 512);  // two chunks of 256, every object constructed once
  }
  CHECK(alive == 0);
}

TEST_CASE("a slab past 2 MiB takes its chunks from whole huge pages; moves hand its objects over") {
  using afasim::sim::kHugePageBytes;
  // 64-byte objects: 2 MiB is 128 chunks of 256. 100,000 objects (6.1 MiB) is 391 chunks, the
  // last 263 of them from regions of kHugePageBytes.
  struct Line {
    std::uint64_t words[8];
  };
  static int alive = 0;
  struct Counted {
    Line line{};
    Counted() { ++alive; }
    ~Counted() { --alive; }
  };
  constexpr std::uint32_t kObjects = 100'000;
  Slab<Counted> slab;
  std::vector<Counted*> addresses;
  for (std::uint32_t i = 0; i < kObjects; ++i) {
    const std::uint32_t id = slab.acquire();
    slab[id].line.words[0] = i;
    slab[id].line.words[7] = ~std::uint64_t{i};
    addresses.push_back(&slab[id]);
  }
  CHECK(alive == 391 * 256);
  // The chunk after the first 2 MiB starts a region on a huge-page boundary.
  if (afasim::sim::kMapsHugePages) CHECK(reinterpret_cast<std::uintptr_t>(&slab[128 * 256]) % kHugePageBytes == 0);
  Slab<Counted> moved(std::move(slab));
  CHECK(alive == 391 * 256);  // nothing copied, nothing destroyed
  for (std::uint32_t i = 0; i < kObjects; ++i) {
    REQUIRE(&moved[i] == addresses[i]);
    REQUIRE(moved[i].line.words[0] == i);
    REQUIRE(moved[i].line.words[7] == ~std::uint64_t{i});
  }
  Slab<Counted> assigned;
  for (int i = 0; i < 10; ++i) (void)assigned.acquire();
  CHECK(alive == 392 * 256);
  assigned = std::move(moved);  // its own chunk is destroyed, moved's objects come over
  CHECK(alive == 391 * 256);
  CHECK(assigned.size() == kObjects);
  CHECK(&assigned[kObjects - 1] == addresses.back());
  assigned = Slab<Counted>();
  CHECK(alive == 0);
}

TEST_CASE("allocate_lines: a cache line under 2 MiB; from 2 MiB, memory aligned to a huge page") {
  using afasim::sim::allocate_lines;
  using afasim::sim::deallocate_lines;
  using afasim::sim::kHugePageBytes;
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{100}, kHugePageBytes - 1, kHugePageBytes,
                                  kHugePageBytes + 1, 3 * kHugePageBytes + 4096}) {
    CAPTURE(bytes);
    auto* p = static_cast<unsigned char*>(allocate_lines(bytes));
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
    if (afasim::sim::kMapsHugePages && bytes >= kHugePageBytes) CHECK(reinterpret_cast<std::uintptr_t>(p) % kHugePageBytes == 0);
    p[bytes - 1] = 2;  // every byte asked for is writable
    p[0] = 1;
    CHECK(p[0] == 1);
    if (bytes > 1) CHECK(p[bytes - 1] == 2);
    deallocate_lines(p, bytes);
  }
  CHECK_THROWS_AS((void)allocate_lines(~std::size_t{0} - 100), std::bad_alloc);
}

TEST_CASE("a chunk whose construction throws leaves the slab as it was; the next acquire builds it again") {
  static int alive = 0;
  static int throw_at = -1;  // the construction that throws (counted down), -1: none
  struct Fragile {
    Fragile() {
      if (throw_at >= 0 && throw_at-- == 0) throw std::runtime_error("no");
      ++alive;
    }
    Fragile(const Fragile&) = delete;
    ~Fragile() { --alive; }
  };
  {
    Slab<Fragile> slab;
    for (int i = 0; i < 300; ++i) (void)slab.acquire();  // two chunks
    CHECK(alive == 512);
    for (int i = 300; i < 512; ++i) (void)slab.acquire();
    throw_at = 100;  // the third chunk's 101st object
    CHECK_THROWS_AS((void)slab.acquire(), std::runtime_error);
    CHECK(alive == 512);  // the 100 built before the throw were destroyed
    CHECK(slab.size() == 512);
    CHECK(slab.acquire() == 512);  // built again, whole
    CHECK(alive == 768);
  }
  CHECK(alive == 0);
}
