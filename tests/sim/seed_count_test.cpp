// tests/seed_count.h: AFASIM_SEEDS must name at least one seed (issue 11: "0" and garbage ran
// zero seeds and passed).
#include <doctest/doctest.h>

#include <cstdlib>
#include <stdexcept>

#include "tests/seed_count.h"

using afasim::testing::parse_seed_count;
using afasim::testing::seed_count;

TEST_CASE("AFASIM_SEEDS: 1..1,000,000 accepted; 0, negatives, garbage, blanks refused") {
  CHECK(parse_seed_count("1") == 1);
  CHECK(parse_seed_count("200") == 200);
  CHECK(parse_seed_count("1000000") == 1'000'000);
  for (const char* bad : {"0", "00", "-1", "", " 5", "5 ", "abc", "12x", "1e3", "1000001",
                          "99999999999999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_seed_count(bad).has_value());
  }
}

TEST_CASE("seed_count: the default without AFASIM_SEEDS, divided never below 1; a bad value throws") {
  ::unsetenv("AFASIM_SEEDS");
  CHECK(seed_count(100) == 100);
  CHECK(seed_count(100, 4) == 25);
  ::setenv("AFASIM_SEEDS", "3", 1);
  CHECK(seed_count(100) == 3);
  CHECK(seed_count(100, 4) == 1);
  ::setenv("AFASIM_SEEDS", "0", 1);
  CHECK_THROWS_WITH_AS(seed_count(100), doctest::Contains("AFASIM_SEEDS"), std::invalid_argument);
  ::setenv("AFASIM_SEEDS", "lots", 1);
  CHECK_THROWS_AS(seed_count(100), std::invalid_argument);
  ::unsetenv("AFASIM_SEEDS");
}
