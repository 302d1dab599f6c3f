// Concurrent clients: handlers on httplib's workers all funnel into the one model thread.
#include <doctest/doctest.h>

#include <mutex>
#include <set>
#include <thread>

#include "api_fixture.h"

namespace afasim::api::testing {
namespace {

TEST_CASE("8 concurrent clients create 50 volumes each: 400 volumes, unique, no 5xx") {
  constexpr int kClients = 8;
  constexpr int kVolumesPerClient = 50;
  ApiFixture fx;
  std::mutex mu;
  std::vector<int> statuses;
  std::set<std::int64_t> ids;
  std::vector<std::thread> threads;
  // The admin's Basic password verified (and remembered) before the clients start: eight
  // first requests at once would need eight hashes, and past
  // AuthOptions::password_hashes_in_progress_max (2) the others are 503 with Retry-After.
  REQUIRE(fx.client().get("/system").status == 200);
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", fx.server().port());
      client.set_basic_auth("admin", kAdminPassword);
      client.set_read_timeout(60, 0);
      for (int i = 0; i < kVolumesPerClient; ++i) {
        const json body = {{"name", "c" + std::to_string(c) + "-v" + std::to_string(i)},
                           {"capacity_bytes", "1GiB"},
                           {"provisioning", i % 5 == 0 ? "fixed" : "thin"}};
        auto res = client.Post("/api/v1/volumes", body.dump(), "application/json");
        std::lock_guard<std::mutex> lock(mu);
        statuses.push_back(res ? res->status : -1);
        if (res && res->status == 201) ids.insert(json::parse(res->body)["id"].get<std::int64_t>());
      }
    });
  }
  for (auto& t : threads) t.join();

  REQUIRE(statuses.size() == kClients * kVolumesPerClient);
  for (int s : statuses) CHECK(s == 201);
  CHECK(ids.size() == kClients * kVolumesPerClient);

  Http http = fx.client();
  Response list = http.get("/volumes?limit=1000");
  REQUIRE(list.status == 200);
  CHECK(list.body["total"] == kClients * kVolumesPerClient);
  std::set<std::string> names;
  std::set<std::int64_t> listed_ids;
  std::int64_t allocated = 0;
  for (const auto& v : list.body["items"]) {
    names.insert(v["name"].get<std::string>());
    listed_ids.insert(v["id"].get<std::int64_t>());
    allocated += v["allocated_bytes"].get<std::int64_t>();
  }
  CHECK(names.size() == kClients * kVolumesPerClient);
  CHECK(listed_ids == ids);
  // One volume in five is fixed; the pool's allocation is exactly theirs.
  Response pool = http.get("/pools/1");
  CHECK(pool.body["capacity"]["allocated_bytes"] == allocated);
  CHECK(pool.body["volume_count"] == kClients * kVolumesPerClient);
  CHECK(allocated > 0);
}

}  // namespace
}  // namespace afasim::api::testing
