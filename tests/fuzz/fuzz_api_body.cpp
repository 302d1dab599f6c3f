// Fuzz target: the API's JSON bodies (api/fields.h): strict parsing, then every typed getter
// a POST or PATCH uses, over the fields of volumes, hosts, faults and QoS policies. Every
// outcome must be a value or an ApiError; nothing may abort.
#include <cstdint>
#include <string_view>

#include "api/fields.h"
#include "api/problem.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using afasim::api::FieldReader;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json doc = afasim::api::parse_body_object(body);
    const FieldReader f(doc,
                        {"name", "capacity_bytes", "pool_id", "raid_type", "provisioning",
                         "preferred_controller", "min_iops", "max_iops", "burst_iops",
                         "initiators", "datapac_ids", "access", "drive", "lun"},
                        {"id"});
    auto each = [&](auto getter) {
      try {
        getter();
      } catch (const afasim::api::ApiError&) {
      }
    };
    each([&] { (void)f.required_string("name"); });
    each([&] { (void)f.size("capacity_bytes"); });
    each([&] { (void)f.integer("pool_id"); });
    each([&] { (void)f.nullable_integer("min_iops"); });
    each([&] { (void)f.raid_type("raid_type"); });
    each([&] { (void)f.provisioning("provisioning"); });
    each([&] { (void)f.controller_id("preferred_controller"); });
    each([&] { (void)f.initiators("initiators"); });
    each([&] { (void)f.integer_array("datapac_ids"); });
    each([&] { (void)f.access("access"); });
    each([&] { (void)f.required_integer("lun"); });
  } catch (const afasim::api::ApiError&) {
  }
  return 0;
}
