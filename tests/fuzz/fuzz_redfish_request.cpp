// Fuzz target: the Redfish service's request input (redfish/query.h, redfish/changes.cpp).
// The input's first line is a query string ("$select=Name&$expand=.($levels=2)"): decoded,
// read by parse_query, then $select and $expand applied to a small resource; the rest is the
// body of a POST to Volumes, EndpointGroups and Connections and of a PATCH of volume 1, on
// one ISE 860 G3 array kept across inputs. Every outcome must be a value or a RedfishError
// (Redfish's error shape); nothing may abort.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "controller/array.h"
#include "http/message.h"
#include "redfish/internal.h"
#include "redfish/query.h"

namespace {

using afasim::redfish::json;

afasim::controller::Array& fuzzed_array() {
  static afasim::config::Catalog catalog = afasim::config::Catalog::embedded().value();
  static afasim::sim::Simulator sim{1};
  static afasim::controller::MemoryJournal journal;
  static std::unique_ptr<afasim::controller::Array> array =
      afasim::controller::Array::open(sim, catalog, catalog.system("ise-860-g3").value(), journal, journal.snapshot()).value();
  return *array;
}

template <typename F>
void each(F fn) {
  try {
    fn();
  } catch (const afasim::redfish::RedfishError&) {
  }
}

void fuzz_query(std::string_view query) {
  const auto params = afasim::http::parse_query(query);
  if (!params) return;
  each([&] {
    const afasim::redfish::Query q = afasim::redfish::parse_query("GET", *params);
    const json resource = {{"@odata.id", "/redfish/v1/X"}, {"Name", "x"}, {"Members", {{{"@odata.id", "/redfish/v1/X/1"}}}},
                           {"Links", {{"Pool", {{"@odata.id", "/redfish/v1/P"}}}}}};
    auto resolve = [](const std::string& u) -> std::optional<json> { return json{{"@odata.id", u}, {"Sub", {{"@odata.id", u + "/s"}}}}; };
    (void)afasim::redfish::apply_expand(afasim::redfish::apply_select(resource, q.select), q, resolve);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  fuzz_query(input.substr(0, newline));
  if (newline == std::string_view::npos) return 0;
  afasim::http::Request r;
  r.body = std::string(input.substr(newline + 1));
  afasim::controller::Array& array = fuzzed_array();
  each([&] {
    const json body = afasim::redfish::parse_body(r);
    each([&] { (void)afasim::redfish::create_volume(array, body); });
    each([&] { (void)afasim::redfish::patch_volume(array, "1", body, std::nullopt); });
    each([&] { (void)afasim::redfish::create_endpoint_group(array, body); });
    each([&] { (void)afasim::redfish::create_connection(array, body); });
  });
  return 0;
}
