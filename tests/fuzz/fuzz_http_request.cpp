// Fuzz target: the HTTP front end's request reading (http/parse.h) as a connection applies
// it: Beast's parser under the server's bounds, the target split and percent-decoding, the
// Host check, and routing against the API's route patterns.
#include <cstdint>
#include <string_view>

#include "http/parse.h"
#include "http/router.h"

namespace {
const afasim::http::Router& api_like_router() {
  static const afasim::http::Router router = [] {
    afasim::http::Router r;
    for (const char* p : {"/api/v1/system", "/api/v1/volumes", "/api/v1/volumes/{id}",
                          "/api/v1/hosts/{id}", "/redfish/v1/Systems/{id}/Storage/{sid}"}) {
      r.add({"GET", p, nullptr});
      r.add({"DELETE", p, nullptr});
    }
    return r;
  }();
  return router;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  afasim::http::ServerOptions options;
  options.header_max_bytes = 4096;
  options.body_max_bytes = 4096;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto parsed = afasim::http::parse_request(bytes, options);
  if (!parsed.request) return 0;
  afasim::http::Request& r = *parsed.request;
  if (afasim::http::precheck(r, parsed.version, options)) return 0;
  (void)api_like_router().match(r);
  (void)r.path_param("id");
  return 0;
}
