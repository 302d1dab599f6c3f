// sim::IdTable: entries against std::map under random acquires and releases over ids far apart
// (a counter that reached millions), pages made and freed with the ids in them, the cyclic walk
// a round-robin cursor takes, and for_each in id order.
#include "sim/id_table.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>
#include <array>

#include "sim/rng.h"

using afasim::sim::IdTable;

TEST_CASE("IdTable follows std::map through random acquires, releases and lookups, pages following the ids in use") {
  for (const std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
    CAPTURE(seed);  // the seed that replays a failure
    afasim::sim::Rng rng(seed, "test.id_table");
    IdTable<std::unique_ptr<std::int64_t>> table;
    std::map<std::uint64_t, std::int64_t> model;
    for (int op = 0; op < 20'000; ++op) {
      // Mostly a few hundred low ids (neighbours share pages), sometimes one near 2^24.
      const std::uint64_t id = rng.uniform(10) == 0 ? (1 << 24) - 1 - rng.uniform(40) : 1 + rng.uniform(300);
      if (rng.uniform(2) == 0) {
        auto& slot = table.acquire(id);
        if (!slot) slot = std::make_unique<std::int64_t>(op);
        model.try_emplace(id, *slot);
      } else {
        table.release(id);
        model.erase(id);
      }
      const std::uint64_t probe = rng.uniform(2) == 0 ? id : 1 + rng.uniform(300);
      auto* found = table.find(probe);
      const auto it = model.find(probe);
      REQUIRE((found != nullptr && *found) == (it != model.end()));
      if (it != model.end()) REQUIRE(**found == it->second);
      // find_in_use answers from the page's in-use bits, not from the entry's value.
      REQUIRE((table.find_in_use(probe) != nullptr) == (it != model.end()));
      if (it != model.end()) REQUIRE(table.find_in_use(probe) == found);
    }
    REQUIRE(table.ids_in_use() == model.size());
    std::set<std::uint64_t> pages;
    for (const auto& [id, value] : model) pages.insert(id / decltype(table)::kPageSize);
    CHECK(table.pages() == pages.size());  // a page whose ids were all released is gone
    std::map<std::uint64_t, std::int64_t> walked;
    table.for_each([&](std::uint64_t id, const std::unique_ptr<std::int64_t>& v) { walked.emplace(id, *v); });
    CHECK(walked == model);
  }
}

TEST_CASE("IdTable: an id of a million takes one page, not a table of a million entries") {
  IdTable<std::array<std::int64_t, 16>> table;  // 128 bytes an id
  table.acquire(1'000'000)[3] = 7;
  CHECK(table.pages() == 1);
  CHECK(table.find(1'000'000)->at(3) == 7);
  CHECK(table.find(1'000'001) != nullptr);  // the same page: reads as T{}
  CHECK(table.find(1'000'001)->at(3) == 0);
  CHECK(table.find(999'999) == nullptr);  // the page before: none
  CHECK(table.find(5) == nullptr);  // no page there
  table.release(1'000'000);
  CHECK(table.pages() == 0);
  CHECK(table.find(1'000'000) == nullptr);
}

TEST_CASE("IdTable::find_cyclic walks the ids in use from the cursor round to it, skipping empty pages") {
  IdTable<int> table;
  for (const std::uint64_t id : {3ULL, 17ULL, 18ULL, 900ULL, 70'000ULL}) table.acquire(id) = static_cast<int>(id);
  std::vector<std::uint64_t> seen;
  const auto all = [&](std::uint64_t id, int& v) {
    CHECK(static_cast<std::uint64_t>(v) == id);
    seen.push_back(id);
    return false;
  };
  CHECK(table.find_cyclic(18, all) == decltype(table)::kNone);
  CHECK(seen == std::vector<std::uint64_t>{18, 900, 70'000, 3, 17});
  seen.clear();
  CHECK(table.find_cyclic(70'001, all) == decltype(table)::kNone);  // past the last: from 0
  CHECK(seen == std::vector<std::uint64_t>{3, 17, 18, 900, 70'000});
  CHECK(table.find_cyclic(19, [](std::uint64_t id, int&) { return id % 2 == 1; }) == 3);  // wraps to find it
  table.release(3);
  CHECK(table.find_cyclic(19, [](std::uint64_t id, int&) { return id % 2 == 1; }) == 17);
}

TEST_CASE("IdTable::for_each visits every id in use while its callback releases them, pages included") {
  IdTable<int> table;
  for (const std::uint64_t id : {1ULL, 2ULL, 15ULL, 16ULL, 40ULL}) table.acquire(id) = 1;
  std::vector<std::uint64_t> seen;
  table.for_each([&](std::uint64_t id, int&) {
    seen.push_back(id);
    table.release(id);  // the last of a page frees it under the walk
  });
  CHECK(seen == std::vector<std::uint64_t>{1, 2, 15, 16, 40});
  CHECK(table.pages() == 0);
  CHECK(table.ids_in_use() == 0);
}

TEST_CASE("IdTable: objects held in place keep their address while in use, as ids around them come and go") {
  // The data path's per-volume tables hold their objects in the pages (a lookup loads no
  // pointer): a VolumeRuntime or a thin volume is referred to by address while in use.
  IdTable<std::array<std::int64_t, 8>> table;
  std::array<std::int64_t, 8>& kept = table.acquire(5);
  kept[0] = 55;
  for (std::uint64_t id = 6; id < 5'000; ++id) table.acquire(id)[0] = static_cast<std::int64_t>(id);  // the page table grows
  for (std::uint64_t id = 6; id < 5'000; id += 2) table.release(id);
  CHECK(table.find_in_use(5) == &kept);
  CHECK(kept[0] == 55);
  CHECK(table.find_in_use(6) == nullptr);   // released: its page (ids 0-15) is still there
  CHECK(table.find(6) != nullptr);          // find() gives the entry's place all the same
  CHECK(table.find(6)->at(0) == 0);         // reset to T{}
  CHECK(table.find_in_use(7)->at(0) == 7);
  CHECK(table.find_in_use(100'000) == nullptr);  // beyond the page table
}
