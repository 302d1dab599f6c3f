// The Redfish mapping of afasim's objects (redfish/resources.cpp, docs/swordfish.md), its
// error shape and its ETags, on an ISE 860 G3 Array with no server and no model thread.
#include <doctest/doctest.h>

#include <memory>

#include "controller/array.h"
#include "redfish/internal.h"
#include "redfish/service.h"
#include "sim/time.h"
#include "sim/units.h"

using namespace afasim;
using namespace afasim::redfish;

namespace {

struct MappingFixture {
  config::Catalog catalog = config::Catalog::embedded().value();
  config::SystemPreset preset = catalog.system("ise-860-g3").value();
  sim::Simulator sim{7};
  controller::MemoryJournal journal;
  std::unique_ptr<controller::Array> array;

  MappingFixture() { array = controller::Array::open(sim, catalog, preset, journal, journal.snapshot()).value(); }

  controller::Volume make(const std::string& name, controller::Provisioning p, raid::RaidType t) {
    controller::VolumeSpec s;
    s.name = name;
    s.capacity_bytes = 8 * sim::kGiB;
    s.provisioning = p;
    s.raid_type = t;
    return array->create_volume(s).value();
  }
  json vol(const controller::Volume& v) { return volume(*array, std::to_string(v.id)); }
  // The RedfishError create_volume answers `body` with (a failed check when it creates one).
  RedfishError create_refusal(const json& body) {
    try {
      create_volume(*array, body);
    } catch (const RedfishError& e) {
      return e;
    }
    FAIL("no error for " << body.dump());
    return RedfishError(0, "", "");
  }
  json drv(controller::Id id) {
    const controller::DriveInfo* d = array->drive(id);
    REQUIRE(d != nullptr);
    return drive(*array, datapac_chassis_id(d->datapac_id), std::to_string(id));
  }
};

json status(const char* state, const char* health) { return {{"State", state}, {"Health", health}}; }

}  // namespace

TEST_CASE("Capacity: a thin volume allocates nothing until written, a fixed one its whole size") {
  MappingFixture f;
  const json thin = f.vol(f.make("thin", controller::Provisioning::kThin, raid::RaidType::kRaid5));
  const json fixed = f.vol(f.make("fixed", controller::Provisioning::kFixed, raid::RaidType::kRaid10));
  CHECK(thin["CapacityBytes"] == 8 * sim::kGiB);
  CHECK(thin["Capacity"]["Data"]["ProvisionedBytes"] == 8 * sim::kGiB);
  CHECK(thin["Capacity"]["Data"]["AllocatedBytes"] == 0);
  CHECK(thin["ProvisioningPolicy"] == "Thin");
  CHECK(thin["RAIDType"] == "RAID5");
  // A Fixed volume's extents are allocated when it is made: its size, rounded up to extents
  // (8 GiB is a whole number of extents of either RAID type).
  CHECK(fixed["Capacity"]["Data"]["AllocatedBytes"] == 8 * sim::kGiB);
  CHECK(fixed["Capacity"]["Data"]["ConsumedBytes"] == fixed["Capacity"]["Data"]["AllocatedBytes"]);
  CHECK(fixed["ProvisioningPolicy"] == "Fixed");
}

TEST_CASE("a failed drive: the drive Critical, its pool's volumes Degraded/Warning with a Rebuild, then OK") {
  MappingFixture f;
  const controller::Volume v = f.make("v", controller::Provisioning::kFixed, raid::RaidType::kRaid5);
  CHECK(f.vol(v)["Status"] == status("Enabled", "OK"));
  CHECK(f.drv(7)["Status"] == status("Enabled", "OK"));
  controller::FaultSpec fail;
  fail.type = "drive_fail";
  fail.drive = 7;
  REQUIRE(f.array->inject_fault(fail).is_ok());
  CHECK(f.drv(7)["Status"] == status("UnavailableOffline", "Critical"));
  const json degraded = f.vol(v);
  CHECK(degraded["Status"] == status("Degraded", "Warning"));
  REQUIRE(f.array->data_path().rebuild_status().active);
  CHECK(degraded["Operations"][0]["Operation"] == "Rebuild");
  CHECK(storage(*f.array)["Status"]["Health"] == "Warning");
  // The rebuild runs in simulated time; once it ends the volume is whole again.
  for (int s = 0; s < 3600 && f.array->data_path().rebuild_status().active; ++s) f.sim.run_until(f.sim.now() + sim::kSecond);
  REQUIRE_FALSE(f.array->data_path().rebuild_status().active);
  const json rebuilt = f.vol(v);
  CHECK(rebuilt["Status"] == status("Enabled", "OK"));
  CHECK_FALSE(rebuilt.contains("Operations"));
}

TEST_CASE("the volume's ETag changes when the volume changes, and only then") {
  MappingFixture f;
  const controller::Volume v = f.make("v", controller::Provisioning::kThin, raid::RaidType::kRaid10);
  const std::string before = f.vol(v)["@odata.etag"];
  CHECK(f.vol(v)["@odata.etag"] == before);
  controller::VolumePatch p;
  p.name = "renamed";
  REQUIRE(f.array->update_volume(v.id, p).is_ok());
  const std::string after = f.vol(v)["@odata.etag"];
  CHECK(after != before);
  CHECK(after.rfind("\"2-", 0) == 0);  // the revision leads: the volume's second revision
  // Same revision, different body (another digest): still a different tag.
  CHECK(etag_for(2, json{{"Name", "a"}}) != etag_for(2, json{{"Name", "b"}}));
}

TEST_CASE("errors are Redfish's shape with a Base.1.22 message") {
  const json e = error_body(RedfishError(400, "PropertyUnknown", "bad", {"#/Foo"}));
  REQUIRE(e.contains("error"));
  CHECK(e["error"]["code"] == "Base.1.22.PropertyUnknown");
  CHECK(e["error"]["message"] == "bad");
  const json& info = e["error"]["@Message.ExtendedInfo"][0];
  CHECK(info["MessageId"] == "Base.1.22.PropertyUnknown");
  CHECK(info["MessageSeverity"] == "Warning");
  CHECK(info["RelatedProperties"] == json::array({"#/Foo"}));
  CHECK(error_body(RedfishError(503, "ServiceTemporarilyUnavailable", "off"))["error"]["@Message.ExtendedInfo"][0]["MessageSeverity"] ==
        "Critical");
  // A model error maps to its HTTP status.
  CHECK(from_status(sim::Status(sim::Code::kNoSpace, "full")).status == 507);
  CHECK(from_status(sim::Status(sim::Code::kConflict, "mapped")).message_id == "ResourceInUse");
}

TEST_CASE("a body with a member twice or nested too deep is refused, as /api/v1 refuses it") {
  // Hostile round 31: Redfish took the last of two members, so {"RoleId": "ReadOnly",
  // "RoleId": "Administrator"} made an Administrator where /api/v1 answers 400; and it parsed
  // 520,000 levels of nesting where /api/v1 stops at 32.
  auto refusal = [](const std::string& body) {
    http::Request r;
    r.body = body;
    try {
      parse_body(r);
    } catch (const RedfishError& e) {
      return e;
    }
    FAIL("no error for " << body);
    return RedfishError(0, "", "");
  };
  const RedfishError twice = refusal(R"({"UserName": "x", "RoleId": "ReadOnly", "RoleId": "Administrator"})");
  CHECK(twice.status == 400);
  CHECK(twice.message_id == "MalformedJSON");
  CHECK(twice.message == "The request body has the property \"RoleId\" twice; give each property once.");
  CHECK(refusal(R"({"Oem": {"Afasim": {"QoS": {"MaxIOPS": 10, "MaxIOPS": 5000}}}})").message.find("MaxIOPS") != std::string::npos);
  const RedfishError deep = refusal("{\"a\": " + std::string(40, '[') + std::string(40, ']') + "}");
  CHECK(deep.message == "The request body is nested deeper than 32 levels.");
  CHECK(refusal("{\"a\": 1e400}").message_id == "MalformedJSON");
  CHECK(refusal("").message_id == "MalformedJSON");
  http::Request ok;
  ok.body = R"({"Name": "v", "Oem": {"Afasim": {"QoS": {"MaxIOPS": 10}}}})";
  CHECK(parse_body(ok)["Oem"]["Afasim"]["QoS"]["MaxIOPS"] == 10);
  // A NUL in a client's value stays in the message (what() stopped at it).
  const std::string with_nul("the value 'x\0y<b>' is bad", 24);
  CHECK(error_body(RedfishError(400, "PropertyValueFormatError", with_nul))["error"]["message"] == with_nul);
}

TEST_CASE("If-Match is a list of ETags compared strongly (RFC 9110 13.1.1)") {
  // Hostile round 31: W/"<current>" matched, and "x", "<current>" was refused (412) because
  // only the first tag was read; a tag afasim did not make in the list was 400.
  auto parsed = [](const std::string& value) {
    http::Request r;
    r.headers.set("If-Match", value);
    return parse_if_match(r);
  };
  const std::string current = etag_for(7, json{{"a", 1}});  // "7-<digest>"
  CHECK_FALSE(parse_if_match(http::Request{}).has_value());  // no header: no precondition
  CHECK_FALSE(parsed("*").has_value());
  CHECK(parsed(current)->matches(7));
  CHECK_FALSE(parsed(current)->matches(6));
  CHECK_FALSE(parsed("W/" + current)->matches(7));  // weak: never matches If-Match
  CHECK(parsed("\"0-0000000000000000\", " + current)->matches(7));
  CHECK(parsed(current + ",\"0-0000000000000000\"")->matches(7));
  CHECK(parsed("\"bogus\", " + current)->matches(7));
  CHECK_FALSE(parsed("\"bogus\"")->matches(7));
  // RFC 9110 5.6.1: empty list elements are accepted.
  CHECK(parsed(current + ",")->matches(7));
  CHECK(parsed(" , \"x\", ," + current)->matches(7));
  for (const std::string& bad : {std::string("7"), std::string("\"7"), current + " junk", std::string(""), std::string(","),
                                 current + ", *", std::string("*junk")}) {
    CAPTURE(bad);
    try {
      parsed(bad);
      FAIL("accepted");
    } catch (const RedfishError& e) {
      CHECK(e.status == 400);
      CHECK(e.message_id == "HeaderInvalid");
    }
  }
}

TEST_CASE("CreateFailedMissingReqProperties names only the required properties that are missing") {
  // Hostile round 14: {"Name": "x"} was told that Name and CapacityBytes were missing.
  MappingFixture f;
  const auto refusal = [&](const json& body) { return f.create_refusal(body); };
  const RedfishError one = refusal({{"Name", "x"}});
  CHECK(one.status == 400);
  CHECK(one.message_id == "CreateFailedMissingReqProperties");
  CHECK(std::string(one.what()) ==
        "The create operation failed because the required property CapacityBytes was missing from the request.");
  CHECK(one.related == std::vector<std::string>{"#/CapacityBytes"});
  const RedfishError both = refusal(json::object());
  CHECK(std::string(both.what()) ==
        "The create operation failed because the required properties Name and CapacityBytes were missing from the "
        "request.");
  CHECK(both.related == std::vector<std::string>{"#/Name", "#/CapacityBytes"});
  try {
    require_members({{"A", 1}}, {"A", "B", "C", "D"});
    FAIL("no error");
  } catch (const RedfishError& e) {
    CHECK(std::string(e.what()) ==
          "The create operation failed because the required properties B, C and D were missing from the request.");
  }
  require_members({{"A", 1}}, {"A"});  // all there: nothing thrown
}

TEST_CASE("PropertyUnknown shows an odd property name as a JSON string and escapes its pointer") {
  // Before: {"/": 1} answered 'The property / is not in the list ...' with RelatedProperties
  // "#//" (the member "" of the member ""), and {"Oem": {"/": 1}} 'The property Oem// ...'.
  MappingFixture f;
  const auto refusal = [&](const json& body) { return f.create_refusal(body); };
  const std::string rest = " is not in the list of valid properties for the resource.";
  const RedfishError slash = refusal({{"/", 1}});
  CHECK(slash.status == 400);
  CHECK(slash.message_id == "PropertyUnknown");
  CHECK(std::string(slash.what()) == "The property \"/\"" + rest);
  CHECK(slash.related == std::vector<std::string>{"#/~1"});
  const RedfishError tilde =
      refusal({{"Name", "t"}, {"CapacityBytes", 1 << 30}, {"Oem", {{"a/~b", 1}}}});
  CHECK(std::string(tilde.what()) == "The property Oem/\"a/~b\"" + rest);
  CHECK(tilde.related == std::vector<std::string>{"#/Oem/a~1~0b"});
  CHECK(std::string(refusal({{"", 1}}).what()) == "The property \"\"" + rest);
  CHECK(std::string(refusal({{"Colour", 1}}).what()) ==
        "The property Colour" + rest);  // plain: bare
  const RedfishError patch = [&] {
    const controller::Volume v =
        f.make("p", controller::Provisioning::kThin, raid::RaidType::kRaid10);
    try {
      patch_volume(*f.array, std::to_string(v.id), {{"a b", 1}}, std::nullopt);
    } catch (const RedfishError& e) {
      return e;
    }
    return RedfishError(0, "", "");
  }();
  CHECK(std::string(patch.what()) == "The property \"a b\"" + rest);
  CHECK(patch.related == std::vector<std::string>{"#/a b"});
}

TEST_CASE("a 401 or 403 under /redfish is in Redfish's error shape; elsewhere it stays problem+json") {
  http::Request r;
  r.path = "/redfish/v1/Systems";
  http::Response deny = http::problem_response(401, "about:blank", "no credentials", r.path);
  Service::reshape_error(r, deny);
  CHECK(deny.status == 401);
  const json body = json::parse(deny.body);
  CHECK(body["error"]["code"] == "Base.1.22.NoValidSession");
  CHECK(body["error"]["message"].get<std::string>().find("no credentials") != std::string::npos);
  CHECK(deny.headers.get("WWW-Authenticate").rfind("Basic realm=", 0) == 0);
  http::Response forbidden = http::problem_response(403, "about:blank", "needs operator", r.path);
  Service::reshape_error(r, forbidden);
  CHECK(json::parse(forbidden.body)["error"]["@Message.ExtendedInfo"][0]["MessageId"] == "Base.1.22.InsufficientPrivilege");
  http::Request api;
  api.path = "/api/v1/volumes";
  http::Response untouched = http::problem_response(401, "about:blank", "no credentials", api.path);
  const std::string before = untouched.body;
  Service::reshape_error(api, untouched);
  CHECK(untouched.body == before);
  r.path = "/redfishy";  // a prefix, not the service
  http::Response other = http::problem_response(401, "about:blank", "x", r.path);
  Service::reshape_error(r, other);
  CHECK(other.body.find("\"error\"") == std::string::npos);
}

TEST_CASE("the front end's own errors under /redfish are in Redfish's error shape too: 404, 405, 400, 421") {
  // Hostile round 31: the router's 404 and 405 and a precheck's 400 and 421 came as /api/v1's
  // problem+json, though docs/swordfish.md says every error is Redfish's shape.
  http::Request r;
  r.path = "/redfish/v1/NoSuchThing";
  http::Response missing = http::problem_response(404, "about:blank", "no resource at /redfish/v1/NoSuchThing", r.path);
  Service::reshape_error(r, missing);
  CHECK(missing.status == 404);
  CHECK(missing.headers.get("Content-Type").rfind("application/json", 0) == 0);
  CHECK(json::parse(missing.body)["error"]["code"] == "Base.1.22.ResourceMissingAtURI");
  CHECK(json::parse(missing.body)["error"]["message"] == "The resource at the URI '/redfish/v1/NoSuchThing' was not found.");
  http::Response put = http::problem_response(405, "about:blank", "PUT is not allowed here", r.path);
  put.headers.set("Allow", "GET, HEAD, PATCH");
  Service::reshape_error(r, put);
  CHECK(json::parse(put.body)["error"]["code"] == "Base.1.22.OperationNotAllowed");
  CHECK(put.headers.get("Allow") == "GET, HEAD, PATCH");
  http::Response host = http::problem_response(421, "about:blank", "Host x.example is not this server", r.path);
  Service::reshape_error(r, host);
  CHECK(host.status == 421);
  CHECK(json::parse(host.body)["error"]["message"] == "Host x.example is not this server");
  // An answer already in Redfish's shape is left as it is (the hook sees every error).
  const std::string redfish_body = host.body;
  Service::reshape_error(r, host);
  CHECK(host.body == redfish_body);
}

TEST_CASE("a link or Oem id naming nothing is 400 ResourceMissingAtURI naming the property, not 404 (hostile review 42)") {
  // The array's "no pool 99" came back as 404 ResourceNotFound, which reads as the Volumes
  // collection being gone; a malformed link was already 400 ResourceMissingAtURI.
  MappingFixture f;
  const json pool_link = {{"@odata.id", "/redfish/v1/Storage/1/StoragePools/99"}};
  const RedfishError pool = f.create_refusal({{"Name", "v"}, {"CapacityBytes", sim::kGiB}, {"Links", {{"ProvidingStoragePool", pool_link}}}});
  CHECK(pool.status == 400);
  CHECK(pool.message_id == "ResourceMissingAtURI");
  CHECK(pool.related == std::vector<std::string>{"#/Links/ProvidingStoragePool"});
  const RedfishError policy = f.create_refusal({{"Name", "v"}, {"CapacityBytes", sim::kGiB}, {"Oem", {{"Afasim", {{"QosPolicyId", 99}}}}}});
  CHECK(policy.status == 400);
  CHECK(policy.related == std::vector<std::string>{"#/Oem/Afasim/QosPolicyId"});
  const controller::Volume v = f.make("v1", controller::Provisioning::kThin, raid::RaidType::kRaid10);
  try {
    patch_volume(*f.array, std::to_string(v.id), {{"Oem", {{"Afasim", {{"QosPolicyId", 99}}}}}}, std::nullopt);
    FAIL("no error");
  } catch (const RedfishError& e) {
    CHECK(e.status == 400);
    CHECK(e.message_id == "ResourceMissingAtURI");
  }
}

TEST_CASE("a pool holding a volume that lost data is Critical, whatever its drives (hostile review 42)") {
  // Its drives replaced, the pool read OK/Enabled while a volume of it had failed.
  MappingFixture f;
  const controller::Volume v = f.make("v", controller::Provisioning::kFixed, raid::RaidType::kRaid5);
  CHECK(storage_pool(*f.array, "1")["Status"] == status("Enabled", "OK"));
  const auto records = f.array->data_path().extent_records(v.id);
  const int d1 = records.front().members[0].drive, d2 = records.front().members[1].drive;
  for (int d : {d1, d2}) {
    controller::FaultSpec fail;
    fail.type = "drive_fail";
    fail.drive = d + 1;
    REQUIRE(f.array->inject_fault(fail).is_ok());
  }
  REQUIRE(f.array->volume_state(v.id) == controller::VolumeState::kFailed);
  for (int d : {d1, d2}) {
    controller::FaultSpec replace;
    replace.type = "drive_replace";
    replace.drive = d + 1;
    REQUIRE(f.array->inject_fault(replace).is_ok());
  }
  CHECK(storage_pool(*f.array, "1")["Status"] == status("Enabled", "Critical"));
}
