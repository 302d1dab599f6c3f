// The ReST API's happy paths, end to end over HTTP: every endpoint, capacity accounting,
// ETags, paging, size strings, logging, and the model stopping under it. Every response is
// also held against api/openapi.json (check_conforms).
#include <algorithm>
#include <doctest/doctest.h>

#include <set>

#include "api/problem.h"
#include "api_fixture.h"

namespace afasim::api::testing {
namespace {

// Figures of the ISE 860 G3 preset (config/systems/ise-860-g3.json): 2 DataPacs of 20 SSDs.
constexpr int kDrivesPerDataPac = 20;

json created(Http& http, const std::string& path, const std::string& tmpl, const json& body) {
  Response r = http.post(path, body);
  INFO("POST " << path << " " << body.dump() << " -> " << r.status << " " << r.text);
  REQUIRE(r.status == 201);
  check_conforms("POST", tmpl, r);
  CHECK(r.header("Location") == std::string(kApiPrefix) + path + "/" + r.body["id"].dump());
  CHECK(!r.header("ETag").empty());
  return r.body;
}

json got(Http& http, const std::string& path, const std::string& tmpl) {
  Response r = http.get(path);
  INFO("GET " << path << " -> " << r.status << " " << r.text.substr(0, 300));
  REQUIRE(r.status == 200);
  CHECK(r.content_type == "application/json");
  check_conforms("GET", tmpl, r);
  return r.body;
}

TEST_CASE("GET /system describes the array") {
  ApiFixture fx;
  Http http = fx.client();
  const json s = got(http, "/system", "/system");
  CHECK(s["name"] == "test-array");
  CHECK(s["model"] == "ISE 860 G3");
  CHECK(s["preset"] == "ise-860-g3");
  CHECK(s["state"] == "online");
  CHECK(s["api_version"] == "v1");
  CHECK(s["counts"]["controllers"] == 2);
  CHECK(s["counts"]["datapacs"] == 2);
  CHECK(s["counts"]["drives"] == 2 * kDrivesPerDataPac);
  CHECK(s["counts"]["pools"] == 1);  // first boot: one pool over both DataPacs
  CHECK(s["counts"]["events"] == 1);
  // With one pool, the totals are that pool's figures.
  const json pool = got(http, "/pools/1", "/pools/{id}");
  for (const char* k : {"pre_raid_bytes", "raw_usable_bytes", "usable_bytes", "free_bytes"})
    CHECK(s["capacity"][k] == pool["capacity"][k]);
  CHECK(s["capacity"]["nominal_bytes"].get<std::int64_t>() >
        s["capacity"]["pre_raid_bytes"].get<std::int64_t>());
  // Bodies end with one newline (a prompt after `curl` starts on its own line); so do errors.
  const auto text = http.get("/system").text;
  CHECK(text.back() == '\n');
  CHECK(text[text.size() - 2] == '}');
  CHECK(http.get("/volumes/999").text.back() == '\n');
}

TEST_CASE("controllers and DataPacs with their drives and pool") {
  ApiFixture fx;
  Http http = fx.client();
  const json cs = got(http, "/controllers", "/controllers");
  REQUIRE(cs["total"] == 2);
  CHECK(cs["items"][0]["name"] == "A");
  CHECK(cs["items"][1]["name"] == "B");
  CHECK(cs["items"][0]["state"] == "active");
  CHECK(got(http, "/controllers/2", "/controllers/{id}")["name"] == "B");
  CHECK(http.get("/controllers/3").status == 404);

  const json ds = got(http, "/datapacs", "/datapacs");
  REQUIRE(ds["total"] == 2);
  const json d2 = got(http, "/datapacs/2", "/datapacs/{id}");
  CHECK(d2["pool_id"] == 1);
  REQUIRE(d2["drives"].size() == kDrivesPerDataPac);
  CHECK(d2["drives"][0]["slot"] == 1);
  CHECK(d2["drives"][0]["id"] == kDrivesPerDataPac + 1);  // DataPac 1's drives come first
  CHECK(d2["drives"][0]["state"] == "healthy");
  CHECK(d2["drives"][0]["capacity_bytes"].get<std::int64_t>() > 0);
}

TEST_CASE("volumes: create, read, list, patch, delete, with size strings") {
  ApiFixture fx;
  Http http = fx.client();
  const json v =
      created(http, "/volumes", "/volumes", {{"name", "db01"}, {"capacity_bytes", "100GiB"}});
  CHECK(v["capacity_bytes"] == 107374182400LL);
  CHECK(v["pool_id"] == 1);
  CHECK(v["raid_type"] == "RAID10");  // default where the pool offers it
  CHECK(v["provisioning"] == "thin");
  CHECK(v["allocated_bytes"] == 0);
  CHECK(v["state"] == "online");
  CHECK(v["revision"] == 1);
  const std::string id = v["id"].dump();

  created(http, "/volumes", "/volumes",
          {{"name", "db02"},
           {"capacity_bytes", "2TB"},
           {"raid_type", "RAID5"},
           {"preferred_controller", "B"},
           {"min_iops", 100},
           {"max_iops", 1000},
           {"burst_iops", 2000}});
  const json v3 = created(http, "/volumes", "/volumes",
                          {{"name", "db03"}, {"capacity_bytes", "1.5TiB"}, {"pool_id", 1}});
  CHECK(v3["capacity_bytes"] == 1649267441664LL);

  const json one = got(http, "/volumes/" + id, "/volumes/{id}");
  CHECK(one == v);

  const json list = got(http, "/volumes", "/volumes");
  CHECK(list["total"] == 3);
  CHECK(list["limit"] == 100);
  CHECK(list["offset"] == 0);
  const json page = got(http, "/volumes?limit=1&offset=1", "/volumes");
  CHECK(page["total"] == 3);
  REQUIRE(page["items"].size() == 1);
  CHECK(page["items"][0]["name"] == "db02");
  CHECK(page["items"][0]["preferred_controller"] == 2);
  CHECK(got(http, "/volumes?offset=10", "/volumes")["items"].empty());
  CHECK(got(http, "/volumes?limit=0", "/volumes")["total"] == 3);
  CHECK(got(http, "/volumes?name=db03", "/volumes")["items"][0]["id"] == v3["id"]);
  CHECK(got(http, "/volumes?pool_id=1", "/volumes")["total"] == 3);
  CHECK(got(http, "/volumes?pool_id=2", "/volumes")["total"] == 0);

  Response p = http.patch("/volumes/" + id, {{"name", "db01-renamed"},
                                             {"capacity_bytes", "200GiB"},
                                             {"max_iops", 5000},
                                             {"preferred_controller", 2}});
  REQUIRE(p.status == 200);
  check_conforms("PATCH", "/volumes/{id}", p);
  CHECK(p.body["name"] == "db01-renamed");
  CHECK(p.body["capacity_bytes"] == 214748364800LL);
  CHECK(p.body["max_iops"] == 5000);
  CHECK(p.body["effective_qos"]["max_iops"] == 5000);
  CHECK(p.body["preferred_controller"] == 2);
  CHECK(p.body["revision"] == 2);
  // Echoing immutable fields unchanged is accepted (GET, edit, PATCH).
  Response echo = http.patch(
      "/volumes/" + id,
      {{"pool_id", 1}, {"raid_type", "RAID10"}, {"provisioning", "thin"}, {"max_iops", nullptr}});
  REQUIRE(echo.status == 200);
  CHECK(echo.body["max_iops"].is_null());
  // merge-patch media type is accepted for PATCH.
  Response mp =
      http.patch_raw("/volumes/" + id, R"({"min_iops": 10})", "application/merge-patch+json");
  CHECK(mp.status == 200);

  Response d = http.del("/volumes/" + id);
  CHECK(d.status == 204);
  CHECK(d.text.empty());
  CHECK(http.get("/volumes/" + id).status == 404);
  CHECK(got(http, "/volumes", "/volumes")["total"] == 2);
}

TEST_CASE("capacity adds up: fixed volumes are allocated, thin ones only provisioned") {
  ApiFixture fx;
  Http http = fx.client();
  const json before = got(http, "/pools/1", "/pools/{id}")["capacity"];
  // Both RAID types have 64 MiB extents with the default geometry (docs/capacity.md); the
  // figures below read them from /system rather than assume it.
  const json extents = got(http, "/system", "/system")["extent_bytes"];
  const std::int64_t extent = extents["RAID10"];
  const std::int64_t extent5 = extents["RAID5"];
  REQUIRE(extent > 0);
  REQUIRE(extent5 > 0);
  CHECK(before["provisioned_bytes"] == 0);
  CHECK(before["allocated_bytes"] == 0);
  CHECK(before["free_bytes"]["RAID10"] == before["usable_bytes"]["RAID10"]);

  // 10 GiB fixed RAID10, 3 extents + 1 byte... rounded up to whole extents; 1 TiB thin; 5 GiB
  // fixed RAID5 (not a multiple of the extent: rounds up).
  const std::int64_t gib = 1LL << 30;
  const json f10 = created(http, "/volumes", "/volumes",
                           {{"name", "fixed10"},
                            {"capacity_bytes", 10 * gib},
                            {"provisioning", "fixed"},
                            {"raid_type", "RAID10"}});
  const json thin =
      created(http, "/volumes", "/volumes", {{"name", "thin"}, {"capacity_bytes", "1TiB"}});
  const json f5 = created(http, "/volumes", "/volumes",
                          {{"name", "fixed5"},
                           {"capacity_bytes", 5 * gib + 512},
                           {"provisioning", "fixed"},
                           {"raid_type", "RAID5"}});
  auto round_up = [](std::int64_t b, std::int64_t e) { return (b + e - 1) / e * e; };
  CHECK(f10["allocated_bytes"] == round_up(10 * gib, extent));
  CHECK(thin["allocated_bytes"] == 0);
  CHECK(f5["allocated_bytes"] == round_up(5 * gib + 512, extent5));

  const json cap = got(http, "/pools/1", "/pools/{id}")["capacity"];
  std::int64_t sum_alloc = 0, sum_prov = 0;
  const json volumes = got(http, "/volumes", "/volumes");
  for (const auto& v : volumes["items"]) {
    sum_alloc += v["allocated_bytes"].get<std::int64_t>();
    sum_prov += v["capacity_bytes"].get<std::int64_t>();
  }
  CHECK(cap["allocated_bytes"] == sum_alloc);
  CHECK(cap["provisioned_bytes"] == sum_prov);
  CHECK(sum_prov == 10 * gib + (1LL << 40) + 5 * gib + 512);
  // Raw space (docs/capacity.md, default geometry): a RAID10 extent holds 2 copies, a RAID5
  // 4+1 extent 5/4 of its data.
  const std::int64_t raw = 2 * f10["allocated_bytes"].get<std::int64_t>() +
                           f5["allocated_bytes"].get<std::int64_t>() / 4 * 5;
  CHECK(cap["raw_allocated_bytes"] == raw);
  CHECK(cap["raw_free_bytes"] == cap["raw_usable_bytes"].get<std::int64_t>() - raw);
  // Free space shrank by what the fixed volumes took, counted in whole extents per type.
  const std::int64_t raw_free = cap["raw_free_bytes"];
  // RAID10 takes 4 SSDs in each DataPac, and the RAID5 extents' chunks did not fall evenly on
  // the two: free_bytes is what the allocator can place (review 41), at most the raw figure.
  const std::int64_t free10 = cap["free_bytes"]["RAID10"];
  CHECK(free10 <= raw_free / (2 * extent) * extent);
  CHECK(free10 % extent == 0);
  CHECK(cap["free_bytes"]["RAID5"] == raw_free / (extent5 / 4 * 5) * extent5);
  // A fixed volume one extent larger than free_bytes is refused at once; one of it fits.
  const Response too_big = http.post("/volumes", {{"name", "all"}, {"capacity_bytes", free10 + extent},
                                                  {"provisioning", "fixed"}, {"raid_type", "RAID10"}});
  CHECK(too_big.status == 422);
  const Response all = http.post("/volumes", {{"name", "all"}, {"capacity_bytes", free10},
                                              {"provisioning", "fixed"}, {"raid_type", "RAID10"}});
  REQUIRE(all.status == 201);
  CHECK(got(http, "/pools/1", "/pools/{id}")["capacity"]["free_bytes"]["RAID10"] == 0);
  CHECK(http.del("/volumes/" + all.body["id"].dump()).status == 204);
  CHECK(cap["usable_bytes"] == before["usable_bytes"]);
  // The system's totals follow.
  const json sys = got(http, "/system", "/system");
  CHECK(sys["capacity"]["allocated_bytes"] == sum_alloc);
  CHECK(sys["capacity"]["provisioned_bytes"] == sum_prov);
  CHECK(sys["counts"]["volumes"] == 3);

  // Growing a fixed volume allocates more; deleting it gives everything back.
  Response grow = http.patch("/volumes/" + f10["id"].dump(), {{"capacity_bytes", "20GiB"}});
  REQUIRE(grow.status == 200);
  CHECK(grow.body["allocated_bytes"] == round_up(20 * gib, extent));
  CHECK(http.del("/volumes/" + f10["id"].dump()).status == 204);
  CHECK(http.del("/volumes/" + f5["id"].dump()).status == 204);
  const json after = got(http, "/pools/1", "/pools/{id}")["capacity"];
  CHECK(after["allocated_bytes"] == 0);
  CHECK(after["raw_free_bytes"] == before["raw_free_bytes"]);
  CHECK(after["provisioned_bytes"] == 1LL << 40);
}

TEST_CASE("pools: create from free DataPacs, patch, delete") {
  ApiFixture fx;
  Http http = fx.client();
  const json p1 = got(http, "/pools/1", "/pools/{id}");
  CHECK(p1["datapac_ids"] == json({1, 2}));
  CHECK(p1["raid_types"] == json({"RAID10", "RAID5"}));
  CHECK(p1["space_thresholds_percent"] == json({80, 90, 95}));
  CHECK(http.del("/pools/1").status == 204);
  CHECK(got(http, "/datapacs/1", "/datapacs/{id}")["pool_id"].is_null());

  const json a =
      created(http, "/pools", "/pools",
              {{"name", "left"}, {"datapac_ids", {1}}, {"space_thresholds_percent", {70, 85}}});
  CHECK(a["raid_types"] == json({"RAID5"}));  // RAID10 mirrors across DataPacs
  CHECK(a["space_thresholds_percent"] == json({70, 85}));
  CHECK(a["capacity"]["usable_bytes"].contains("RAID5"));
  CHECK(!a["capacity"]["usable_bytes"].contains("RAID10"));
  const json b = created(http, "/pools", "/pools", {{"name", "right"}, {"datapac_ids", {2}}});
  CHECK(got(http, "/pools", "/pools")["total"] == 2);
  CHECK(got(http, "/pools?name=right", "/pools")["items"][0]["id"] == b["id"]);
  CHECK(got(http, "/datapacs/2", "/datapacs/{id}")["pool_id"] == b["id"]);

  // With two pools a volume must name one; the default RAID type follows the pool.
  Response ambiguous = http.post("/volumes", {{"name", "v"}, {"capacity_bytes", "1GiB"}});
  CHECK(ambiguous.status == 422);
  const json v = created(http, "/volumes", "/volumes",
                         {{"name", "v"}, {"capacity_bytes", "1GiB"}, {"pool_id", a["id"]}});
  CHECK(v["raid_type"] == "RAID5");

  Response patched = http.patch(
      "/pools/" + a["id"].dump(),
      {{"name", "left-renamed"}, {"space_thresholds_percent", {50}}, {"datapac_ids", {1}}});
  REQUIRE(patched.status == 200);
  check_conforms("PATCH", "/pools/{id}", patched);
  CHECK(patched.body["name"] == "left-renamed");
  CHECK(patched.body["volume_count"] == 1);
  CHECK(http.del("/pools/" + b["id"].dump()).status == 204);
}

TEST_CASE("hosts, mappings and LUNs") {
  ApiFixture fx;
  Http http = fx.client();
  const json v1 =
      created(http, "/volumes", "/volumes", {{"name", "v1"}, {"capacity_bytes", "1GiB"}});
  const json v2 =
      created(http, "/volumes", "/volumes", {{"name", "v2"}, {"capacity_bytes", "1GiB"}});
  const json v3 =
      created(http, "/volumes", "/volumes", {{"name", "v3"}, {"capacity_bytes", "1GiB"}});
  const json h = created(http, "/hosts", "/hosts",
                         {{"name", "esx01"},
                          {"description", "rack 4"},
                          {"initiators",
                           {{{"type", "fc"}, {"address", "50014380AABBCCDD"}},
                            {{"type", "iscsi"}, {"address", "iqn.1998-01.com.vmware:esx01"}},
                            {{"type", "nbd"}, {"address", "192.0.2.41"}}}}});
  CHECK(h["initiators"][0]["address"] == "50:01:43:80:aa:bb:cc:dd");  // canonical WWPN
  CHECK(h["mapping_count"] == 0);
  const std::string hid = h["id"].dump();

  const json m0 =
      created(http, "/mappings", "/mappings", {{"volume_id", v1["id"]}, {"host_id", h["id"]}});
  CHECK(m0["lun"] == 0);  // the lowest free LUN
  CHECK(m0["access"] == "read_write");
  const json m7 =
      created(http, "/mappings", "/mappings",
              {{"volume_id", v2["id"]}, {"host_id", h["id"]}, {"lun", 7}, {"access", "read_only"}});
  CHECK(m7["lun"] == 7);
  CHECK(m7["access"] == "read_only");
  const json m1 =
      created(http, "/mappings", "/mappings", {{"volume_id", v3["id"]}, {"host_id", h["id"]}});
  CHECK(m1["lun"] == 1);
  CHECK(got(http, "/mappings/" + m7["id"].dump(), "/mappings/{id}") == m7);
  CHECK(got(http, "/mappings?host_id=" + hid, "/mappings")["total"] == 3);
  CHECK(got(http, "/mappings?volume_id=" + v2["id"].dump(), "/mappings")["items"][0] == m7);
  CHECK(got(http, "/hosts/" + hid, "/hosts/{id}")["mapping_count"] == 3);

  Response p = http.patch(
      "/hosts/" + hid,
      {{"description", "rack 5"}, {"initiators", {{{"type", "nbd"}, {"address", "192.0.2.41"}}}}});
  REQUIRE(p.status == 200);
  check_conforms("PATCH", "/hosts/{id}", p);
  CHECK(p.body["description"] == "rack 5");
  CHECK(p.body["initiators"].size() == 1);
  CHECK(got(http, "/hosts?name=esx01", "/hosts")["total"] == 1);

  CHECK(http.del("/mappings/" + m7["id"].dump()).status == 204);
  CHECK(http.get("/mappings/" + m7["id"].dump()).status == 404);
  CHECK(http.del("/mappings/" + m0["id"].dump()).status == 204);
  CHECK(http.del("/mappings/" + m1["id"].dump()).status == 204);
  CHECK(http.del("/hosts/" + hid).status == 204);
  CHECK(got(http, "/hosts", "/hosts")["total"] == 0);
}

TEST_CASE(
    "QoS admission control: a reservation past a controller's capacity is a 422 with the numbers") {
  // Controller A guarantees 78,602 RAID10 4 KiB IOPS to reservations (docs/qos.md).
  ApiFixture fx;
  Http http = fx.client();
  const json db = created(http, "/volumes", "/volumes",
                          {{"name", "db"},
                           {"capacity_bytes", "1GiB"},
                           {"preferred_controller", 1},
                           {"min_iops", 60000}});
  CHECK(db["qos_status"] == json({{"current_iops", 0},
                                  {"throttled_time_ns", 0},
                                  {"burst_credit_seconds", 0.0},
                                  {"queued_ios", 0},
                                  {"min_iops_held", 60000}}));
  Response r = http.post("/volumes", {{"name", "more"},
                                      {"capacity_bytes", "1GiB"},
                                      {"preferred_controller", 1},
                                      {"min_iops", 21000}});
  INFO(r.text);
  CHECK(r.status == 422);
  CHECK(r.is_problem());
  const std::string detail = r.body["detail"];
  CHECK(detail.find("controller A would need 103.1 %") != std::string::npos);
  CHECK(detail.find("78,602 RAID10") != std::string::npos);
  CHECK(detail.find("volume 1 \"db\" 60,000 RAID10 (76.3 %)") != std::string::npos);
  // A policy change that would overload it is refused the same way; the policy is unchanged.
  const json q =
      created(http, "/qos-policies", "/qos-policies", {{"name", "p"}, {"min_iops", 1000}});
  Response attach = http.patch("/volumes/" + db["id"].dump(),
                               {{"qos_policy_id", q["id"]}, {"min_iops", nullptr}});
  REQUIRE(attach.status == 200);
  Response raise = http.patch("/qos-policies/" + q["id"].dump(), {{"min_iops", 80000}});
  CHECK(raise.status == 422);
  CHECK(got(http, "/qos-policies/" + q["id"].dump(), "/qos-policies/{id}")["min_iops"] == 1000);
}

TEST_CASE("QoS policies and the effective QoS of their volumes") {
  ApiFixture fx;
  Http http = fx.client();
  const json q =
      created(http, "/qos-policies", "/qos-policies",
              {{"name", "gold"}, {"min_iops", 1000}, {"max_iops", 10000}, {"burst_iops", 20000}});
  CHECK(q["volume_count"] == 0);
  const std::string qid = q["id"].dump();
  const json v = created(
      http, "/volumes", "/volumes",
      {{"name", "v"}, {"capacity_bytes", "1GiB"}, {"qos_policy_id", q["id"]}, {"max_iops", 5000}});
  CHECK(v["qos_policy_id"] == q["id"]);
  // The volume's own max wins; the rest comes from the policy.
  CHECK(v["effective_qos"] ==
        json({{"min_iops", 1000}, {"max_iops", 5000}, {"burst_iops", 20000}}));
  CHECK(got(http, "/volumes?qos_policy_id=" + qid, "/volumes")["total"] == 1);
  CHECK(got(http, "/qos-policies/" + qid, "/qos-policies/{id}")["volume_count"] == 1);

  Response p = http.patch("/qos-policies/" + qid, {{"min_iops", 2000}, {"name", "platinum"}});
  REQUIRE(p.status == 200);
  check_conforms("PATCH", "/qos-policies/{id}", p);
  CHECK(got(http, "/volumes/" + v["id"].dump(), "/volumes/{id}")["effective_qos"]["min_iops"] ==
        2000);
  CHECK(got(http, "/qos-policies?name=platinum", "/qos-policies")["total"] == 1);
  // A patch that changes nothing keeps the revision (and other clients' If-Match).
  const auto revision = p.body["revision"];
  for (const json& same : {json::object(), json({{"min_iops", 2000}}), json({{"name", "platinum"}})}) {
    Response r = http.patch("/qos-policies/" + qid, same);
    INFO(same.dump());
    CHECK(r.status == 200);
    CHECK(r.body["revision"] == revision);
  }
  CHECK(http.del("/qos-policies/" + qid).status == 409);  // still attached
  Response detach = http.patch("/volumes/" + v["id"].dump(), {{"qos_policy_id", nullptr}});
  REQUIRE(detach.status == 200);
  CHECK(detach.body["qos_policy_id"].is_null());
  CHECK(detach.body["effective_qos"] ==
        json({{"min_iops", nullptr}, {"max_iops", 5000}, {"burst_iops", nullptr}}));
  CHECK(http.del("/qos-policies/" + qid).status == 204);
}

TEST_CASE("events are newest first and paged") {
  ApiFixture fx;
  Http http = fx.client();
  for (int i = 0; i < 5; ++i)
    created(http, "/volumes", "/volumes",
            {{"name", "e" + std::to_string(i)}, {"capacity_bytes", "1GiB"}});
  const json all = got(http, "/events", "/events");
  CHECK(all["total"] == 6);  // the first-boot event and five creations
  REQUIRE(all["items"].size() == 6);
  CHECK(all["items"][0]["message"].get<std::string>().find("\"e4\"") != std::string::npos);
  CHECK(all["items"][0]["category"] == "volume");
  CHECK(all["items"][5]["category"] == "system");
  for (std::size_t i = 1; i < all["items"].size(); ++i)
    CHECK(all["items"][i - 1]["id"].get<std::int64_t>() >
          all["items"][i]["id"].get<std::int64_t>());
  const json page = got(http, "/events?limit=2&offset=1", "/events");
  REQUIRE(page["items"].size() == 2);
  CHECK(page["items"][0] == all["items"][1]);
  CHECK(page["total"] == 6);
  CHECK(got(http, "/events?offset=1000000", "/events")["items"].empty());
}

TEST_CASE("ETags: If-None-Match gives 304, If-Match guards PATCH and DELETE") {
  ApiFixture fx;
  Http http = fx.client();
  const json v = created(http, "/volumes", "/volumes", {{"name", "v"}, {"capacity_bytes", "1GiB"}});
  const std::string path = "/volumes/" + v["id"].dump();
  Response g = http.get(path);
  const std::string etag = g.header("ETag");
  REQUIRE(etag.size() > 2);
  CHECK(etag.front() == '"');
  CHECK(etag.rfind("\"1-", 0) == 0);  // "<revision>-<digest>"

  Response nm = http.get(path, {{"If-None-Match", etag}});
  CHECK(nm.status == 304);
  CHECK(nm.text.empty());
  CHECK(http.get(path, {{"If-None-Match", "\"other\""}}).status == 200);
  CHECK(http.get(path, {{"If-None-Match", "W/" + etag}}).status == 304);  // weak comparison

  Response p = http.patch(path, {{"name", "v2"}}, {{"If-Match", etag}});
  REQUIRE(p.status == 200);
  const std::string etag2 = p.header("ETag");
  CHECK(etag2 != etag);
  CHECK(etag2.rfind("\"2-", 0) == 0);
  CHECK(http.get(path, {{"If-None-Match", etag}}).status == 200);  // changed since

  Response stale = http.patch(path, {{"name", "v3"}}, {{"If-Match", etag}});
  CHECK(stale.status == 412);
  CHECK(stale.is_problem());
  CHECK(http.patch(path, {{"name", "v3"}}, {{"If-Match", "\"x\", " + etag2}}).status == 200);
  CHECK(http.patch(path, {{"name", "v4"}}, {{"If-Match", "*"}}).status == 200);
  CHECK(http.del(path, {{"If-Match", etag2}}).status == 412);
  CHECK(http.del(path, {{"If-Match", "W/\"4\""}}).status == 412);  // weak never matches
  const std::string current = http.get(path).header("ETag");
  CHECK(http.del(path, {{"If-Match", current}}).status == 204);
  CHECK(http.del(path, {{"If-Match", "*"}}).status == 404);
}

TEST_CASE("HEAD, OPTIONS, 405 with Allow, 404 outside the API") {
  ApiFixture fx;
  Http http = fx.client();
  Response h = http.head("/pools/1");
  CHECK(h.status == 200);
  CHECK(!h.header("ETag").empty());
  CHECK(h.text.empty());
  Response o = http.options("/volumes/1");
  CHECK(o.status == 204);
  CHECK(o.header("Allow") == "GET, HEAD, PATCH, DELETE, OPTIONS");
  Response put = http.put("/volumes", json::object());
  CHECK(put.status == 405);
  CHECK(put.is_problem());
  CHECK(put.header("Allow") == "GET, HEAD, POST, OPTIONS");
  CHECK(http.patch("/mappings/1", json::object()).status == 405);
  CHECK(http.del("/system").status == 405);
  CHECK(http.get("/api/v2/system").status == 404);
  CHECK(http.get("/").is_problem());
  CHECK(http.get("/api/v1").status == 404);
  CHECK(http.get("/api/v1x/system").status == 404);
  CHECK(http.get("/volumes/").status == 200);  // a trailing slash is forgiven
}

TEST_CASE("GET /openapi.json serves the embedded document") {
  ApiFixture fx;
  Http http = fx.client();
  const json doc = got(http, "/openapi.json", "/openapi.json");
  CHECK(doc == openapi());
  CHECK(doc["openapi"].get<std::string>().rfind("3.", 0) == 0);
}

TEST_CASE("one log line per request: method, path, status, duration") {
  ApiFixture fx;
  Http http = fx.client();
  http.get("/system");
  http.post("/volumes", {{"name", "v"}, {"capacity_bytes", "1GiB"}});
  http.get("/volumes/99");
  // httplib logs after it has written the response, on the worker that served it: stopping
  // joins the workers, so every line is in before the log is read, but two workers may
  // write their lines in either order (seen on CI), so each line is looked for by prefix.
  fx.server().stop();
  std::istringstream lines(fx.log());
  std::vector<std::string> request_lines;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ReST API v1 listening", 0) != 0) request_lines.push_back(line);
  }
  REQUIRE(request_lines.size() == 3);
  const auto lines_starting = [&](std::string_view prefix) {
    return std::count_if(request_lines.begin(), request_lines.end(),
                         [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
  };
  CHECK(lines_starting("GET /api/v1/system 200 ") == 1);
  CHECK(lines_starting("POST /api/v1/volumes 201 ") == 1);
  CHECK(lines_starting("GET /api/v1/volumes/99 404 ") == 1);
  for (const auto& l : request_lines) CHECK(l.size() > 3);
  for (const auto& l : request_lines) CHECK(l.substr(l.size() - 3) == " ms");
}

TEST_CASE("a journal that cannot commit gives 503 and changes nothing") {
  ApiFixture fx;
  Http http = fx.client();
  fx.model().call([&] { fx.journal().fail_next_commits(1); });
  Response r = http.post("/volumes", {{"name", "v"}, {"capacity_bytes", "1GiB"}});
  CHECK(r.status == 503);
  CHECK(r.is_problem());
  CHECK(r.body["type"] == problem::kUnavailable);
  CHECK(got(http, "/volumes", "/volumes")["total"] == 0);
  CHECK(http.post("/volumes", {{"name", "v"}, {"capacity_bytes", "1GiB"}}).status == 201);
}

TEST_CASE("a stopped model gives 503 problem documents, not a hang or a crash") {
  ApiFixture fx;
  Http http = fx.client();
  fx.model().stop();
  Response r = http.get("/system");
  CHECK(r.status == 503);
  CHECK(r.is_problem());
  CHECK(http.post("/volumes", {{"name", "v"}, {"capacity_bytes", "1GiB"}}).status == 503);
  // Errors found before the model is reached stay what they are.
  CHECK(http.post_raw("/volumes", "{", "application/json").status == 400);
}

TEST_CASE("RestServer options are checked and a port in use is reported") {
  ApiFixture fx;
  RestServerOptions bad;
  bad.http.port = 70000;
  CHECK_THROWS_AS(RestServer(fx.array(), fx.model(), bad), std::invalid_argument);
  RestServerOptions taken;
  taken.http.port = fx.server().port();
  taken.http.logger = std::make_shared<spdlog::logger>("quiet");
  RestServer second(fx.array(), fx.model(), taken);
  const sim::Status st = second.start();
  CHECK(st.code() == sim::Code::kUnavailable);
  CHECK(fx.server().base_url() == "http://127.0.0.1:" + std::to_string(fx.server().port()));
}

}  // namespace
}  // namespace afasim::api::testing

namespace afasim::api::testing {

TEST_CASE("faults: a drive failed through the API shows in /faults, /datapacs and the rebuild") {
  ApiFixture fx;
  Http http = fx.client();
  // Something to rebuild: a fixed volume has extents on every SSD.
  REQUIRE(http.post("/volumes", {{"name", "v"}, {"capacity_bytes", "64GiB"}, {"provisioning", "fixed"}}).status == 201);
  const Response r = http.post("/faults", {{"type", "drive_fail"}, {"drive", 7}});
  REQUIRE(r.status == 201);
  CHECK(r.header("Location") == "/api/v1/faults/1");
  CHECK(r.body["type"] == "drive_fail");
  CHECK(r.body["drive"] == 7);
  check_conforms("POST", "/faults", r);
  const json list = got(http, "/faults", "/faults");
  CHECK(list["total"] == 1);
  CHECK(got(http, "/faults/1", "/faults/{id}")["result"] == "applied");
  // An id not in this run's list says the list is per run and how an earlier run's fault is
  // undone (a new user's tour: after a restart `fault clear 4` said only "no fault 4").
  const Response missing = http.get("/faults/99");
  CHECK(missing.status == 404);
  CHECK(missing.body["detail"].get<std::string>().find("no fault 99 in this run") == 0);
  CHECK(missing.body["detail"].get<std::string>().find("injecting its recovery") != std::string::npos);
  CHECK(got(http, "/datapacs/1", "/datapacs/{id}")["drives"][6]["state"] == "failed");
  // With pace none the model runs the rebuild as fast as it can, between requests (each
  // request takes the model thread between two events): poll until it is done; the event
  // log tells how it went.
  json sys = got(http, "/system", "/system");
  for (int i = 0; i < 10000 && sys["rebuild"].value("active", true); ++i) sys = got(http, "/system", "/system");
  CHECK(sys["rebuild"]["active"] == false);
  bool started = false, completed = false;
  const json events = got(http, "/events?limit=1000", "/events");
  for (const json& e : events["items"]) {
    const std::string m = e["message"];
    started |= m.rfind("rebuild of drive 7 started", 0) == 0;
    completed |= m.rfind("rebuild of drive 7 complete", 0) == 0;
  }
  CHECK(started);
  CHECK(completed);
  // A slow drive and back.
  CHECK(http.post("/faults", {{"type", "drive_slow"}, {"drive", 8}, {"latency_multiplier", 4.5}}).status == 201);
  // The drive is healthy and says it is slowed (a new user saw only "healthy").
  const json slowed = got(http, "/datapacs/1", "/datapacs/{id}")["drives"][7];
  CHECK(slowed["state"] == "healthy");
  CHECK(slowed["latency_multiplier"] == 4.5);
  CHECK(http.post("/faults", {{"type", "drive_restore_speed"}, {"drive", 8}}).status == 201);
  CHECK(got(http, "/datapacs/1", "/datapacs/{id}")["drives"][7]["latency_multiplier"] == 1.0);
  // Replace the failed drive.
  CHECK(http.post("/faults", {{"type", "drive_replace"}, {"drive", 7}}).status == 201);
  CHECK(got(http, "/datapacs/1", "/datapacs/{id}")["drives"][6]["state"] == "healthy");
  // A slowed drive that fails reads failed, not slowed (review 27: it kept its multiplier).
  CHECK(http.post("/faults", {{"type", "drive_slow"}, {"drive", 9}, {"latency_multiplier", 3}}).status == 201);
  CHECK(http.post("/faults", {{"type", "drive_fail"}, {"drive", 9}}).status == 201);
  const json failed = got(http, "/datapacs/1", "/datapacs/{id}")["drives"][8];
  CHECK(failed["state"] == "failed");
  CHECK(failed["latency_multiplier"] == 1.0);
}

TEST_CASE("faults: bad requests get the right 4xx and inject nothing") {
  ApiFixture fx;
  Http http = fx.client();
  struct Case {
    json body;
    int status;
  };
  const Case cases[] = {
      {{{"type", "meteor_strike"}, {"drive", 1}}, 422},                  // unknown type
      {{{"drive", 1}}, 400},                                             // no type
      {{{"type", 7}, {"drive", 1}}, 400},                                // type of the wrong type
      {{{"type", "drive_fail"}, {"drive", 0}}, 404},                     // no such drive
      {{{"type", "drive_fail"}, {"drive", 41}}, 404},                    // past the last drive
      {{{"type", "drive_fail"}, {"drive", "seven"}}, 400},               // drive of the wrong type
      {{{"type", "drive_fail"}, {"drive", 1}, {"colour", "red"}}, 400},  // unknown field
      {{{"type", "drive_replace"}, {"drive", 3}}, 409},  // replacing a healthy drive
      {{{"type", "drive_slow"}, {"drive", 3}, {"latency_multiplier", 0.5}}, 422},  // < 1
      {{{"type", "drive_slow"}, {"drive", 3}, {"latency_multiplier", "x"}}, 400},
      {{{"type", "drive_fail"}, {"drive", 2}, {"id", 5}}, 422},  // read-only field
      // kFaultTypes: every field of the type is required, no other applies.
      {{{"type", "drive_fail"}}, 400},                      // no drive
      {{{"type", "drive_fail"}, {"drive", nullptr}}, 400},  // null is no drive
      {{{"type", "controller_fail"}}, 400},                 // no controller
      {{{"type", "drive_slow"}, {"drive", 10}}, 400},       // no multiplier
      {{{"type", "drive_fail"}, {"drive", 7}, {"controller", 1}}, 400},
      {{{"type", "link_cut"}, {"controller", 1}}, 400},
      {{{"type", "power_loss"}, {"drive", 1}}, 400},
      {{{"type", "drive_restore_speed"}, {"drive", 1}, {"latency_multiplier", 2}}, 400},
      {{{"type", "controller_fail"}, {"controller", 3}}, 404},  // no such controller
      // Does not apply now: the drive is at normal speed.
      {{{"type", "drive_restore_speed"}, {"drive", 4}}, 409},
  };
  for (const Case& c : cases) {
    const Response r = http.post("/faults", c.body);
    INFO(c.body.dump() << " -> " << r.status << " " << r.text);
    CHECK(r.status == c.status);
    CHECK(r.is_problem());
  }
  CHECK(got(http, "/faults", "/faults")["total"] == 0);
  // Failing the same drive twice: the second is a conflict; so is slowing a failed drive.
  REQUIRE(http.post("/faults", {{"type", "drive_fail"}, {"drive", 5}}).status == 201);
  CHECK(http.post("/faults", {{"type", "drive_fail"}, {"drive", 5}}).status == 409);
  CHECK(http.post("/faults", {{"type", "drive_slow"}, {"drive", 5}, {"latency_multiplier", 5}})
            .status == 409);
  CHECK(got(http, "/faults", "/faults")["total"] == 1);
}

TEST_CASE(
    "faults: the detail names the missing or misplaced field; an unknown type is echoed short") {
  ApiFixture fx;
  Http http = fx.client();
  auto detail = [&](const json& body) {
    const Response r = http.post("/faults", body);
    INFO(body.dump() << " -> " << r.status << " " << r.text);
    CHECK(r.is_problem());
    return r.body.value("detail", std::string());
  };
  CHECK(detail({{"type", "drive_fail"}}) ==
        "missing required field drive (drive_fail needs the drive's id)");
  CHECK(detail({{"type", "controller_fail"}}) ==
        "missing required field controller (controller_fail needs the controller: 1 or 2, or \"A\" "
        "or \"B\")");
  CHECK(detail({{"type", "drive_slow"}, {"drive", 10}}) ==
        "missing required field latency_multiplier (drive_slow needs a number from 1 to 1000)");
  CHECK(detail({{"type", "drive_fail"}, {"drive", 7}, {"controller", 1}}) ==
        "controller does not apply to drive_fail");
  CHECK(detail({{"type", "link_cut"}, {"controller", 1}}) ==
        "controller does not apply to link_cut");
  const std::string huge(5000, 'q');
  const Response r = http.post("/faults", {{"type", huge}});
  CHECK(r.status == 422);
  CHECK(r.text.size() < 1000);
  CHECK(r.body["detail"].get<std::string>().rfind(
            "type: unknown fault type \"" + std::string(50, 'q'), 0) == 0);
  CHECK(got(http, "/faults", "/faults")["total"] == 0);
}

TEST_CASE(
    "faults: controllers by name A and B; a slow drive's event reads x5; restoring normal speed is "
    "409") {
  ApiFixture fx;
  Http http = fx.client();
  Response r = http.post("/faults", {{"type", "controller_fail"}, {"controller", "B"}});
  REQUIRE(r.status == 201);
  CHECK(r.body["controller"] == 2);
  CHECK(http.post("/faults", {{"type", "controller_fail"}, {"controller", 2}}).status == 409);
  r = http.post("/faults", {{"type", "controller_restore"}, {"controller", "B"}});
  CHECK(r.status == 201);
  CHECK(r.header("Location") == "/api/v1/faults/2");
  REQUIRE(http.post("/faults", {{"type", "drive_slow"}, {"drive", 10}, {"latency_multiplier", 5}})
              .status == 201);
  bool slowed = false;
  const json page = got(http, "/events?limit=1000", "/events");
  for (const json& e : page["items"]) slowed |= e["message"] == "drive 10 slowed: latency x5";
  CHECK_MESSAGE(slowed, page.dump(1));
  REQUIRE(http.post("/faults", {{"type", "drive_restore_speed"}, {"drive", 10}}).status == 201);
  // Events about drive 10, before and after the refused request (the total alone moved with
  // controller B's boot, which the model runs between requests).
  auto drive_events = [&] {
    std::int64_t n = 0;
    const json page = got(http, "/events?limit=1000", "/events");
    for (const json& e : page["items"]) n += e["message"].get<std::string>().find("drive 10 ") != std::string::npos;
    return n;
  };
  const std::int64_t events = drive_events();
  CHECK(events == 2);  // slowed, and back to normal speed
  r = http.post("/faults", {{"type", "drive_restore_speed"}, {"drive", 10}});
  CHECK(r.status == 409);
  CHECK(r.body["detail"] == "drive 10 is at normal speed");
  CHECK(drive_events() == events);  // no spurious event
  CHECK(got(http, "/faults", "/faults")["total"] == 4);
}

TEST_CASE("request bodies with a key given twice are refused, wherever the key is") {
  ApiFixture fx;
  Http http = fx.client();
  // nlohmann would keep the last: this would cut the power.
  Response r =
      http.post_raw("/faults", R"({"type": "link_cut", "type": "power_loss"})", "application/json");
  CHECK(r.status == 400);
  CHECK(r.is_problem());
  CHECK(r.body["detail"] == "the request body has the key \"type\" twice; give each member once");
  CHECK(got(http, "/faults", "/faults")["total"] == 0);
  CHECK(got(http, "/system", "/system")["power"]["mains"] == "on");
  // Nested: the second initiator's type.
  r = http.post_raw("/hosts",
                    R"({"name": "h", "initiators": [{"type": "nbd", "address": "192.0.2.1"},)"
                    R"( {"type": "nbd", "address": "192.0.2.2", "type": "fc"}]})",
                    "application/json");
  CHECK(r.status == 400);
  CHECK(r.body["detail"] ==
        "the request body has the key \"initiators[1].type\" twice; give each member once");
  CHECK(got(http, "/hosts", "/hosts")["total"] == 0);
  // A PATCH too.
  r = http.post("/volumes", {{"name", "v"}, {"capacity_bytes", "1GiB"}});
  REQUIRE(r.status == 201);
  r = http.patch_raw("/volumes/1", R"({"max_iops": 100, "max_iops": 200})",
                     "application/merge-patch+json");
  CHECK(r.status == 400);
  CHECK(got(http, "/volumes/1", "/volumes/{id}")["max_iops"].is_null());
  // The same key in two different objects is fine.
  r = http.post_raw(
      "/hosts",
      R"({"name": "h", "initiators": [{"type": "nbd", "address": "192.0.2.1"}, {"type": "nbd", "address": "192.0.2.2"}]})",
      "application/json");
  CHECK(r.status == 201);
}

}  // namespace afasim::api::testing

namespace afasim::api::testing {

TEST_CASE("wear: /system has the array's wear summary and projected life, /datapacs/{id} each drive's wear") {
  ApiFixture fx;
  Http http = fx.client();
  const json sys = got(http, "/system", "/system");
  const json& w = sys["wear"];
  CHECK(w["policy"] == "even");
  CHECK(w["drives_in_service"] == 40);
  CHECK(w["threshold_points"] == 0.5);
  CHECK(w["max_min_ratio"].is_null());  // nothing written yet: every SSD at 0 %
  CHECK(w["projected_life_s"].is_null());
  CHECK(w["moves"]["completed"] == 0);
  const json dp = got(http, "/datapacs/2", "/datapacs/{id}");
  REQUIRE(dp["drives"].size() == 20);
  for (const json& d : dp["drives"]) {
    CHECK(d["wear"]["percent_endurance_used"] == 0.0);
    CHECK(d["wear"]["write_amplification"] == 1.0);
    CHECK(d["wear"]["life_at_current_rate_s"].is_null());
  }
}

TEST_CASE("scrub: GET shows it off; PATCH switches it on with a rate; bad values are refused") {
  ApiFixture fx;
  Http http = fx.client();
  json s = got(http, "/scrub", "/scrub");
  CHECK(s["enabled"] == false);
  CHECK(s["bytes_per_second"] == 100000000);  // raid::ScrubOptions' default
  Response r = http.patch("/scrub", {{"enabled", true}, {"bytes_per_second", "200MB"}});
  REQUIRE(r.status == 200);
  CHECK(r.body["enabled"] == true);
  CHECK(r.body["bytes_per_second"] == 200000000);
  CHECK(got(http, "/scrub", "/scrub")["enabled"] == true);
  CHECK(http.patch("/scrub", {{"enabled", "yes"}}).status == 400);
  // Zero, negative or beyond 64 bits: well-formed but impossible, 422 whatever its spelling
  // (was 400 for 0 and -1 but 422 for "-5MiB"); an unreadable size stays a 400.
  for (const json& rate : {json(0), json(-1), json("0"), json("-5MiB"), json(1e30)})
    CHECK_MESSAGE(http.patch("/scrub", {{"bytes_per_second", rate}}).status == 422, rate.dump());
  CHECK(http.patch("/scrub", {{"bytes_per_second", "fast"}}).status == 400);
  CHECK(got(http, "/scrub", "/scrub")["bytes_per_second"] == 200000000);  // unchanged by the refusals
  CHECK(http.patch("/scrub", {{"passes_completed", 3}}).status == 422);  // read-only, as elsewhere
  CHECK(http.patch("/scrub", {{"enabled", false}}).body["enabled"] == false);
}

}  // namespace afasim::api::testing
