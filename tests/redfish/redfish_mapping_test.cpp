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
  Service::reshape_deny(r, deny);
  CHECK(deny.status == 401);
  const json body = json::parse(deny.body);
  CHECK(body["error"]["code"] == "Base.1.22.NoValidSession");
  CHECK(body["error"]["message"].get<std::string>().find("no credentials") != std::string::npos);
  CHECK(deny.headers.get("WWW-Authenticate").rfind("Basic realm=", 0) == 0);
  http::Response forbidden = http::problem_response(403, "about:blank", "needs operator", r.path);
  Service::reshape_deny(r, forbidden);
  CHECK(json::parse(forbidden.body)["error"]["@Message.ExtendedInfo"][0]["MessageId"] == "Base.1.22.InsufficientPrivilege");
  http::Request api;
  api.path = "/api/v1/volumes";
  http::Response untouched = http::problem_response(401, "about:blank", "no credentials", api.path);
  const std::string before = untouched.body;
  Service::reshape_deny(api, untouched);
  CHECK(untouched.body == before);
  r.path = "/redfishy";  // a prefix, not the service
  http::Response other = http::problem_response(401, "about:blank", "x", r.path);
  Service::reshape_deny(r, other);
  CHECK(other.body.find("\"error\"") == std::string::npos);
}
