#include "datapac/link.h"

#include <doctest/doctest.h>

using namespace afasim;
using datapac::Link;

TEST_CASE("a link moves bytes at its rate, back to back in call order") {
  // 1,000,000 bytes at 1 GB/s take exactly 1 ms: 1000 of them queued at t=0 end at 1 s.
  Link link("test", 1'000'000'000);
  sim::Time end = 0;
  for (int i = 0; i < 1000; ++i) end = link.transfer(0, 1'000'000);
  CHECK(end == sim::kSecond);
  CHECK(link.bytes_moved() == 1'000'000'000);
  CHECK(link.transfers() == 1000);
  CHECK(link.utilisation(sim::kSecond) == doctest::Approx(1.0));
  CHECK(link.utilisation(2 * sim::kSecond) == doctest::Approx(0.5));
  // An arrival after the link went idle starts at its arrival.
  CHECK(link.transfer(3 * sim::kSecond, 1000) == 3 * sim::kSecond + 1000);
  CHECK(link.busy_until() == 3 * sim::kSecond + 1000);
}

TEST_CASE("a 4-lane wide port runs four transfers at a time, each at one lane's rate") {
  // 4 lanes × 1.2 GB/s (SAS-3 x4): 1.2 MB on one lane takes 1 ms.
  Link link("x4", 4 * 1'200'000'000LL, 0, 4);
  CHECK(link.lanes() == 4);
  CHECK(link.lane_bytes_per_second() == 1'200'000'000);
  for (int i = 0; i < 4; ++i) CHECK(link.transfer(0, 1'200'000) == sim::kMillisecond);
  CHECK(link.transfer(0, 1'200'000) == 2 * sim::kMillisecond);
  CHECK(link.utilisation(2 * sim::kMillisecond) == doctest::Approx(5.0 / 8.0));
}

TEST_CASE("a link's per-transfer overhead is paid before the bytes, and rounding goes up") {
  Link link("ovh", 3'000'000'000, 500);
  // 1 byte at 3 GB/s is 1/3 ns: rounds up to 1 ns, after 500 ns of overhead.
  CHECK(link.transfer(0, 1) == 501);
  CHECK(link.transfer(0, 0) == 1001);
  link.reset_counters();
  CHECK(link.bytes_moved() == 0);
  CHECK(link.busy_ns() == 0);
}
