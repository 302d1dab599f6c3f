// sim::StableMap: lookups, inserts and erases against std::map under random operations, probe
// runs that wrap past the index's end (erase's backward shift across it), references that
// survive growth and other erases, clear, and iteration over exactly the keys present.
#include "sim/stable_map.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "sim/rng.h"

using afasim::sim::StableMap;

namespace {
struct Value {
  std::uint64_t key = 0;
  std::int64_t count = 0;
  std::shared_ptr<int> held;  // released when the key is erased
};
}  // namespace

TEST_CASE("StableMap follows std::map through random inserts, erases and lookups") {
  for (const std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
    CAPTURE(seed);  // the seed that replays a failure
    afasim::sim::Rng rng(seed, "test.stable_map");
    StableMap<Value> map;
    std::map<std::uint64_t, std::int64_t> model;
    for (int op = 0; op < 20'000; ++op) {
      // Keys as the write cache makes them (volume << 40 | block), few enough that inserts and
      // erases keep meeting the same ones; sometimes a dense run of blocks of one volume.
      const std::uint64_t volume = rng.uniform(3);
      const std::uint64_t key = volume << 40 | rng.uniform(op % 1000 < 500 ? 64 : 600);
      switch (rng.uniform(3)) {
        case 0: {
          const auto [v, inserted] = map.try_emplace(key);
          REQUIRE(inserted == (model.count(key) == 0));
          if (inserted) {
            CHECK(v->count == 0);  // value-initialised, whatever the slot held before
            CHECK(v->held == nullptr);
            v->key = key;
          }
          ++v->count;
          ++model[key];
          break;
        }
        case 1:
          REQUIRE(map.erase(key) == (model.erase(key) == 1));
          break;
        default: {
          const Value* v = map.find(key);
          const auto it = model.find(key);
          REQUIRE((v != nullptr) == (it != model.end()));
          if (v != nullptr) {
            CHECK(v->key == key);
            CHECK(v->count == it->second);
          }
        }
      }
      REQUIRE(map.size() == model.size());
    }
    // Every key of the model is found with its count; iteration visits exactly them, once.
    for (const auto& [key, count] : model) CHECK(map.at(key).count == count);
    std::map<std::uint64_t, int> seen;
    map.for_each([&](std::uint64_t key, const Value& v) {
      CHECK(v.key == key);
      ++seen[key];
    });
    CHECK(seen.size() == model.size());
    for (const auto& [key, times] : seen) CHECK(times == 1);
  }
}

TEST_CASE("StableMap: references survive growth and other erases; an erased key's object is "
          "released") {
  StableMap<Value> map;
  std::vector<Value*> refs;
  for (std::uint64_t b = 0; b < 5000; ++b) {  // grows from 16 entries to 16,384
    Value* v = map.try_emplace(7ULL << 40 | b).first;
    v->key = b;
    refs.push_back(v);
  }
  auto token = std::make_shared<int>(1);
  refs[4999]->held = token;
  for (std::uint64_t b = 0; b < 5000; b += 2) CHECK(map.erase(7ULL << 40 | b));
  CHECK(map.size() == 2500);
  for (std::uint64_t b = 1; b < 5000; b += 2) {
    CHECK(map.find(7ULL << 40 | b) == refs[b]);  // the same object, where it was
    CHECK(refs[b]->key == b);
  }
  CHECK(map.find(7ULL << 40 | 4) == nullptr);
  CHECK_FALSE(map.erase(7ULL << 40 | 4));
  CHECK(token.use_count() == 2);
  CHECK(map.erase(7ULL << 40 | 4999));
  CHECK(token.use_count() == 1);  // the erased object let go of what it held
  refs[1]->held = token;
  map.clear();
  CHECK(map.empty());
  CHECK(token.use_count() == 1);  // and so did every cleared one
  CHECK(map.find(7ULL << 40 | 1) == nullptr);
  const auto [again, inserted] = map.try_emplace(7ULL << 40 | 1);
  CHECK(inserted);
  CHECK(again->key == 0);  // a fresh object, not the one cleared
  int visited = 0;
  map.for_each([&](std::uint64_t, const Value&) { ++visited; });
  CHECK(visited == 1);
}

TEST_CASE("StableMap: erase's backward shift across the end of the index") {
  // Keys whose home (the top 4 bits of key x 2^64/phi: the index has 16 entries while it holds
  // at most 8) is 13, 14, 15, 0 or 1, so that probe runs wrap from entry 15 to 0; random sets
  // of them in random order, then each one erased in turn.
  std::vector<std::uint64_t> candidates;
  for (std::uint64_t k = 1; candidates.size() < 24; ++k) {
    const std::uint64_t home = (k * 0x9E3779B97F4A7C15ULL) >> 60;
    if (home >= 13 || home <= 1) candidates.push_back(k);
  }
  afasim::sim::Rng rng(1, "test.stable_map.wrap");
  for (int trial = 0; trial < 300; ++trial) {
    CAPTURE(trial);
    std::vector<std::uint64_t> keys;
    const std::size_t n = 3 + rng.uniform(6);  // 3..8 keys: no growth
    while (keys.size() < n) {
      const std::uint64_t k = candidates[rng.uniform(candidates.size())];
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    for (std::size_t gone = 0; gone < keys.size(); ++gone) {
      StableMap<Value> map;
      for (const std::uint64_t k : keys) map.try_emplace(k).first->key = k;
      REQUIRE(map.erase(keys[gone]));
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const Value* v = map.find(keys[i]);
        if (i == gone) {
          CHECK(v == nullptr);
        } else {
          REQUIRE(v != nullptr);  // still reachable from its home after the shift
          CHECK(v->key == keys[i]);
        }
      }
    }
  }
}
