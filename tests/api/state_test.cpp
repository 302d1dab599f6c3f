// State that tells the truth (issue 14 item 6). On main at 4676db3, after a power_loss,
// POST /volumes still answered 201 and every volume said "online".
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "tests/api/api_fixture.h"

namespace afasim::api::testing {
namespace {

// Waits (wall clock, the model runs unpaced) until GET /system's state is `want`.
bool wait_for_state(Http& http, const std::string& want) {
  for (int i = 0; i < 500; ++i) {
    if (http.get("/system").body["state"] == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_CASE("while the mains are off: management changes get 503, reads and faults are served") {
  ApiFixture fx;
  Http http = fx.client();
  const Response v = http.post("/volumes", {{"name", "v1"}, {"capacity_bytes", "1GiB"}});
  REQUIRE(v.status == 201);
  REQUIRE(http.post("/faults", {{"type", "power_loss"}}).status == 201);
  REQUIRE(wait_for_state(http, "offline"));

  const Response refused = http.post("/volumes", {{"name", "v2"}, {"capacity_bytes", "1GiB"}});
  CHECK(refused.status == 503);
  CHECK(refused.is_problem());
  CHECK(refused.body["detail"].get<std::string>().find("mains are off") != std::string::npos);
  check_conforms("POST", "/volumes", refused);
  CHECK(http.patch("/volumes/1", {{"name", "renamed"}}).status == 503);
  CHECK(http.del("/volumes/1").status == 503);
  CHECK(http.post("/hosts", {{"name", "h"}}).status == 503);
  // A fault is not a management change: a drive fails while the array is off (a double
  // fault), and is still failed when the array is back.
  const Response failed = http.post("/faults", {{"type", "drive_fail"}, {"drive", 3}});
  CHECK(failed.status == 201);
  check_conforms("POST", "/faults", failed);
  CHECK(http.post("/faults", {{"type", "controller_restore"}, {"controller", 1}}).status == 409);  // not failed

  const Response vol = http.get("/volumes/1");
  CHECK(vol.status == 200);
  CHECK(vol.body["state"] == "offline");  // no controller serves it
  check_conforms("GET", "/volumes/{id}", vol);
  CHECK(http.get("/volumes").body["total"] == 1);  // nothing was created

  CHECK(http.post("/faults", {{"type", "power_restore"}}).status == 201);
  REQUIRE(wait_for_state(http, "online"));
  CHECK(http.get("/volumes/1").body["state"] == "online");
  const Response alerts = http.get("/alerts");
  INFO(alerts.text);
  bool drive_alert = false;  // the failure outlived the power cycle
  for (const auto& a : alerts.body["items"])
    drive_alert = drive_alert || (a["kind"] == "drive_failed" && a["object"] == "drive/3");
  CHECK(drive_alert);
  CHECK(http.post("/volumes", {{"name", "v2"}, {"capacity_bytes", "1GiB"}}).status == 201);
}

TEST_CASE("a volume no controller owns reads offline: during a takeover, then online on the survivor") {
  ApiFixture fx;
  Http http = fx.client();
  REQUIRE(http.post("/volumes", {{"name", "v1"}, {"capacity_bytes", "1GiB"}, {"preferred_controller", "A"}}).status == 201);
  REQUIRE(http.get("/volumes/1").body["owner_controller"] == 1);
  REQUIRE(http.post("/faults", {{"type", "controller_fail"}, {"controller", 1}}).status == 201);
  // B takes A's volumes over 0.8-1.05 s after the failure (docs/controller-states.md); until
  // then the volume has no owner and its I/O waits (hostile round 27: it read "online").
  const Response during = http.get("/volumes/1");
  INFO(during.text);
  if (during.body["owner_controller"].is_null()) CHECK(during.body["state"] == "offline");
  bool taken = false;
  for (int i = 0; i < 500 && !taken; ++i) {
    taken = http.get("/volumes/1").body["owner_controller"] == 2;
    if (!taken) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(taken);
  CHECK(http.get("/volumes/1").body["state"] == "online");  // its data is whole on the survivor
}

TEST_CASE("with both controllers failed: 503 for changes, controller_restore is served") {
  ApiFixture fx;
  Http http = fx.client();
  REQUIRE(http.post("/faults", {{"type", "controller_fail"}, {"controller", 1}}).status == 201);
  REQUIRE(http.post("/faults", {{"type", "controller_fail"}, {"controller", 2}}).status == 201);
  REQUIRE(wait_for_state(http, "offline"));
  const Response refused = http.post("/qos-policies", {{"name", "q"}, {"max_iops", 10}});
  INFO(refused.text);
  CHECK(refused.status == 503);
  CHECK(refused.body["detail"].get<std::string>().find("no controller is active") != std::string::npos);
  CHECK(http.post("/faults", {{"type", "controller_restore"}, {"controller", 1}}).status == 201);
}

}  // namespace
}  // namespace afasim::api::testing
