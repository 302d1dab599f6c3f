// Issue 2's acceptance through the real binary: provision through ReST, stop and start
// `afasim serve`, find everything with the same ids, and capacity that adds up.
#include <doctest/doctest.h>
#include <httplib.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include "store/sqlite_store.h"
#include "tests/integration/serve_process.h"

using nlohmann::json;
using afasim::testing::ServeProcess;
using afasim::testing::TempStateDir;

namespace {

#include <fstream>

// The admin's password, as the first start wrote it into the state directory.
std::string admin_password(const std::string& state) {
  std::ifstream in(state + "/admin-password");
  std::string password;
  std::getline(in, password);
  return password;
}

struct Client {
  httplib::Client http;
  Client(int port, const std::string& state) : http("127.0.0.1", port) {
    http.set_basic_auth("admin", admin_password(state));
  }
  json post(const std::string& path, const json& body, int want = 201) {
    auto r = http.Post(("/api/v1" + path).c_str(), body.dump(), "application/json");
    REQUIRE(r);
    INFO("POST " << path << " " << body.dump() << " -> " << r->status << " " << r->body);
    REQUIRE(r->status == want);
    return json::parse(r->body);
  }
  json get(const std::string& path) {
    auto r = http.Get(("/api/v1" + path).c_str());
    REQUIRE(r);
    REQUIRE(r->status == 200);
    return json::parse(r->body);
  }
};

// The objects a restart must bring back, ids and all (without values that change with
// simulated time).
json inventory(Client& c) {
  json out;
  for (const char* kind : {"/volumes", "/hosts", "/mappings", "/qos-policies", "/pools"}) {
    json items = c.get(std::string(kind) + "?limit=1000")["items"];
    out[kind] = items;
  }
  return out;
}

// Runs `afasim serve --state STATE ARGS` (within 30 s: a server that took the state would run
// until stopped); its exit code and its log.
std::pair<int, std::string> serve_once(const std::string& state, const std::string& args) {
  const std::string log = state + ".once.log";
  const std::string cmd = "timeout 30 " + std::string(std::getenv("AFASIM_BINARY")) + " serve --state " + state +
                          " " + args + " > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  return {WEXITSTATUS(rc), ss.str()};
}

}  // namespace

TEST_CASE("provisioned objects survive a stop and start of afasim serve, ids and all") {
  TempStateDir dir;
  const std::string state = dir.path() + "/state";
  json before;
  std::vector<std::int64_t> volume_ids;
  {
    ServeProcess serve(state, {"--pace", "none"});
    Client c(serve.port(), state);
    const json gold = c.post("/qos-policies", {{"name", "gold"}, {"min_iops", 10000}, {"max_iops", 50000}, {"burst_iops", 80000}});
    volume_ids.push_back(c.post("/volumes", {{"name", "thin-a"}, {"capacity_bytes", "2TiB"}, {"raid_type", "RAID10"}})["id"]);
    volume_ids.push_back(c.post("/volumes", {{"name", "thin-b"}, {"capacity_bytes", "500GB"}, {"raid_type", "RAID5"},
                                             {"qos_policy_id", gold["id"]}})["id"]);
    volume_ids.push_back(c.post("/volumes", {{"name", "fixed-a"}, {"capacity_bytes", "100GiB"}, {"raid_type", "RAID10"},
                                             {"provisioning", "fixed"}})["id"]);
    volume_ids.push_back(c.post("/volumes", {{"name", "fixed-b"}, {"capacity_bytes", 64424509440}, {"raid_type", "RAID5"},
                                             {"provisioning", "fixed"}, {"min_iops", 5000}})["id"]);
    const json host = c.post("/hosts", {{"name", "esx01"},
                                        {"initiators", json::array({{{"type", "fc"}, {"address", "21:00:00:24:ff:4b:8a:10"}},
                                                                    {{"type", "iscsi"}, {"address", "iqn.1998-01.com.vmware:esx01"}}})}});
    c.post("/mappings", {{"volume_id", volume_ids[0]}, {"host_id", host["id"]}, {"lun", 0}});
    c.post("/mappings", {{"volume_id", volume_ids[2]}, {"host_id", host["id"]}});
    // Capacity adds up: fixed volumes allocated, thin ones only provisioned.
    const json pool = c.get("/pools/1");
    const std::int64_t fixed_bytes = 100LL << 30;
    const std::int64_t fixed_b = 64424509440;  // 60 GiB, a whole number of 64 MiB extents
    CHECK(pool["capacity"]["allocated_bytes"] == fixed_bytes + fixed_b);
    CHECK(pool["capacity"]["provisioned_bytes"] == (2LL << 40) + 500'000'000'000LL + fixed_bytes + fixed_b);
    CHECK(pool["capacity"]["raw_allocated_bytes"] == 2 * fixed_bytes + fixed_b / 4 * 5);
    before = inventory(c);
    CHECK(serve.stop() == 0);
    CHECK(serve.log().find("stopped cleanly") != std::string::npos);
  }
  {
    ServeProcess serve(state, {"--pace", "none"});
    Client c(serve.port(), state);
    const json after = inventory(c);
    CHECK(after == before);
    // The next volume gets a new id, after the ones that exist.
    const json v = c.post("/volumes", {{"name", "after-restart"}, {"capacity_bytes", "1GiB"}});
    CHECK(v["id"] == volume_ids.back() + 1);
    // The event log carries on from where it was.
    const json events = c.get("/events?limit=1");
    CHECK(events["total"].get<int>() >= 9);
  }
  {
    // Another preset on the same state is refused, and says why.
    const auto [code, log] = serve_once(state, "--system ise-850-g3 --listen 127.0.0.1:0");
    CHECK(code == 1);
    CHECK(log.find("this state belongs to an ise-860-g3 array, not an ise-850-g3 one") != std::string::npos);
    // A run with the data in memory (or nowhere) on an array whose data is in payload files
    // would change its volumes without their bytes, and the next file run would read the
    // bytes from before where that run acknowledged writes: refused.
    const auto [memory, memory_log] = serve_once(state, "--payload memory --listen 127.0.0.1:0");
    INFO(memory_log);
    CHECK(memory == 1);
    CHECK(memory_log.find("keeps its volumes' data in " + state + "/payload (it was started with --payload file); "
                          "start it with --payload file") != std::string::npos);
  }
  {
    // The reverse (hostile round 16): the database says the array kept its data in payload
    // files, but they are gone or emptied. They were recreated blank and the volumes served
    // zeros, online, without a word; now the start is refused, naming the file.
    std::filesystem::rename(state + "/payload", state + "/payload.away");
    const auto [missing, missing_log] = serve_once(state, "--listen 127.0.0.1:0");
    INFO(missing_log);
    CHECK(missing == 1);
    CHECK(missing_log.find(state + "/payload/dp1-ssd01.payload is missing, but it held this SSD's data (the volumes "
                                   "would read as zeros): restore the payload directory") != std::string::npos);
    std::filesystem::remove_all(state + "/payload");
    std::filesystem::rename(state + "/payload.away", state + "/payload");
    std::filesystem::resize_file(state + "/payload/dp2-ssd07.payload", 0);
    const auto [empty, empty_log] = serve_once(state, "--listen 127.0.0.1:0");
    INFO(empty_log);
    CHECK(empty == 1);
    CHECK(empty_log.find(state + "/payload/dp2-ssd07.payload is empty") != std::string::npos);
  }
  {
    // An emptied database beside the SSD images is not a first start: a new array would hand
    // out chunks that still hold the old volumes' bytes (hostile round 14). Refused, saying
    // why, with the images left as they were.
    { std::ofstream truncate(state + "/afasim.db", std::ios::trunc); }
    std::remove((state + "/afasim.db-wal").c_str());
    std::remove((state + "/afasim.db-shm").c_str());
    const auto images = [&] {
      int n = 0;
      for (const auto& e : std::filesystem::directory_iterator(state + "/payload")) n += e.path().extension() == ".payload";
      return n;
    };
    const int before_images = images();
    REQUIRE(before_images > 0);
    const auto [code, log] = serve_once(state, "--listen 127.0.0.1:0");
    INFO(log);
    CHECK(code == 1);
    CHECK(log.find("afasim.db holds no array (it is missing or empty) but " + state + "/payload holds " +
                        std::to_string(before_images) + " SSD image(s) of an earlier one") != std::string::npos);
    CHECK(images() == before_images);
  }
}

TEST_CASE("a database deleted or emptied beside the users of an earlier start is refused, not a new array") {
  // Hostile round 28: with afasim.db removed (or truncated to nothing) but users.json and
  // admin-password still there, serve started a brand-new array: every volume, host, mapping
  // and event gone without a word, and the old admin password still let scripts in. (With
  // --payload file the SSD images refuse such a start already: the test above.)
  TempStateDir dir;
  const std::string state = dir.path() + "/state";
  {
    ServeProcess serve(state, {"--pace", "none", "--payload", "none"});
    Client c(serve.port(), state);
    c.post("/volumes", {{"name", "kept"}, {"capacity_bytes", "1GiB"}, {"raid_type", "RAID10"}});
    CHECK(serve.stop() == 0);
  }
  const std::string users = state + "/users.json";
  REQUIRE(std::filesystem::exists(users));
  for (const bool truncate : {false, true}) {
    INFO((truncate ? "truncated" : "deleted"));
    if (truncate) std::ofstream(state + "/afasim.db", std::ios::trunc);
    else std::filesystem::remove(state + "/afasim.db");
    std::filesystem::remove(state + "/afasim.db-wal");
    std::filesystem::remove(state + "/afasim.db-shm");
    const auto [code, log] = serve_once(state, "--payload none --listen 127.0.0.1:0");
    INFO(log);
    CHECK(code == 1);
    CHECK(log.find("afasim.db holds no array (it is missing or empty) but users.json of an earlier one is there") !=
          std::string::npos);
    CHECK(std::filesystem::exists(users));
  }
  // Moved aside as the message says: a new array starts.
  std::filesystem::rename(users, state + "/users.json.old");
  std::filesystem::rename(state + "/admin-password", state + "/admin-password.old");
  ServeProcess serve(state, {"--pace", "none", "--payload", "none"});
  Client c(serve.port(), state);
  CHECK(c.get("/volumes")["items"].empty());
  CHECK(serve.stop() == 0);
}

TEST_CASE("a first start cut short is made again, not refused as an array whose database was lost") {
  // Hostile round 17: serve killed in its first ~0.2 s (while it makes the 40 SSD images, before
  // the database says "initialized") left a directory every later start refused, advising to
  // restore afasim.db from a backup that never existed. The state as such a start leaves it:
  // the database with only the first-start mark, and some of the images.
  TempStateDir dir;
  const std::string state = dir.path() + "/state";
  {
    auto store = afasim::store::SqliteStore::open(state);
    REQUIRE(store.is_ok());
    afasim::controller::ChangeSet mark;
    mark.meta["first_start"] = "1";
    REQUIRE((*store)->commit(mark).is_ok());
  }
  std::filesystem::create_directories(state + "/payload");
  for (const char* image : {"dp1-ssd01.payload", "dp1-ssd02.payload", "dp1-ssd03.payload"})
    std::ofstream(state + "/payload/" + image) << "x";
  {
    ServeProcess serve(state, {"--pace", "none"});
    Client c(serve.port(), state);
    CHECK(c.get("/system")["counts"]["drives"] == 40);
    CHECK(serve.stop() == 0);
  }
  // Without the mark (a database emptied beside the images of a real array) it is refused as
  // before (hostile round 14).
  {
    auto store = afasim::store::SqliteStore::open(dir.path() + "/other");
    REQUIRE(store.is_ok());
  }
  std::filesystem::create_directories(dir.path() + "/other/payload");
  std::ofstream(dir.path() + "/other/payload/dp1-ssd01.payload") << "x";
  const auto [code, log] = serve_once(dir.path() + "/other", "--listen 127.0.0.1:0");
  CHECK(code == 1);
  CHECK(log.find("afasim.db holds no array") != std::string::npos);
}

TEST_CASE("an afasim.db edited into ids in use or a media error past the SSD is refused at start with exit 1") {
  // Hostile round 18 finding 5: next_id.volume set to 1 aborted the server (SIGABRT) at the next
  // volume create; a media error past the SSD was accepted. Now the start is refused, naming the
  // meta key and what is wrong, and nothing is served.
  TempStateDir dir;
  const std::string state = dir.path() + "/state";
  {
    ServeProcess serve(state, {"--pace", "none"});
    Client c(serve.port(), state);
    c.post("/volumes", {{"name", "a"}, {"capacity_bytes", "256MiB"}});
    CHECK(serve.stop() == 0);
  }
  const auto edit = [&](const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((state + "/afasim.db").c_str(), &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  };
  edit("UPDATE meta SET value = '1' WHERE key = 'next_id.volume'");
  {
    const auto [code, log] = serve_once(state, "--listen 127.0.0.1:0");
    INFO(log);
    CHECK(code == 1);
    CHECK(log.find("state directory " + state + ": state: meta next_id.volume is 1, not above the largest id in "
                   "table volumes (1)") != std::string::npos);
    CHECK(log.find("assertion") == std::string::npos);
  }
  edit("UPDATE meta SET value = '2' WHERE key = 'next_id.volume'");
  edit("INSERT OR REPLACE INTO meta VALUES ('hardware', 'drive 1 bad 9223372036854775807')");
  {
    const auto [code, log] = serve_once(state, "--listen 127.0.0.1:0");
    INFO(log);
    CHECK(code == 1);
    CHECK(log.find("meta hardware line \"drive 1 bad 9223372036854775807\": byte 9223372036854775807 is past the "
                   "end of drive 1") != std::string::npos);
  }
}
