#include "sim/slab.h"

#include <doctest/doctest.h>

#include <cstdint>
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
