#include "redfish/record.h"

#include <memory>
#include <stdexcept>
#include <vector>

#include "http/router.h"

namespace afasim::redfish {

using serve::ByteReader;
using serve::ByteWriter;

namespace {
// The request headers a change's handler reads (parse_body, parse_if_match).
constexpr const char* kRecordedHeaders[] = {"Content-Type", "If-Match"};
}  // namespace

void record_request(const http::Request& r) {
  serve::Recorder* rec = serve::Recorder::active();
  if (rec == nullptr) return;
  ByteWriter w;
  // The user too: the events the change causes name it (Array::set_actor).
  w.str(r.method).str(r.path).str(r.principal.user);
  std::vector<std::pair<std::string, std::string>> headers;
  for (const char* h : kRecordedHeaders)
    if (r.has_header(h)) headers.emplace_back(h, r.header(h));
  w.u32(static_cast<std::uint32_t>(headers.size()));
  for (const auto& [name, value] : headers) w.str(name).str(value);
  w.str(r.body);
  rec->request("redfish", w.take());
}

void record_reply(int status, const json& body) {
  serve::Recorder* rec = serve::Recorder::active();
  if (rec == nullptr) return;
  const std::string text =
      body.is_null() ? "" : body.dump(-1, ' ', false, json::error_handler_t::replace);
  rec->outcome("redfish.reply", ByteWriter()
                                    .u32(static_cast<std::uint32_t>(status))
                                    .u64(text.size())
                                    .u64(serve::digest64(text))
                                    .take());
}

void record_error(const RedfishError& e) {
  if (serve::Recorder* rec = serve::Recorder::active())
    rec->outcome("redfish.error", ByteWriter()
                                      .u32(static_cast<std::uint32_t>(e.status))
                                      .str(e.message_id)
                                      .str(e.message)
                                      .take());
}

namespace {

// The request a recorded change describes.
http::Request decode_request(std::string_view payload) {
  ByteReader in(payload);
  http::Request r;
  r.method = in.str();
  r.path = in.str();
  r.target = r.path;
  r.principal.user = in.str();
  for (std::uint32_t n = in.u32(); n > 0; --n) {
    std::string name = in.str();
    r.headers.add(std::move(name), in.str());
  }
  r.body = in.str();
  return r;
}

}  // namespace

std::map<std::string, api::ReplayHandler> redfish_replay_handlers(controller::Array& array,
                                                                  serve::ModelThread& inline_model,
                                                                  ServiceOptions options) {
  options.auth = nullptr;
  options.events = nullptr;
  auto service = std::make_shared<Service>(array, inline_model, std::move(options));
  auto changes = std::make_shared<http::Router>();
  for (http::Route& route : service->routes())
    if (route.method != "GET") changes->add(std::move(route));
  std::map<std::string, api::ReplayHandler> out;
  out["redfish"] = [service, changes](std::string_view payload) {
    http::Request r = decode_request(payload);
    const http::Router::Match m = changes->match(r);
    if (m.route == nullptr)
      throw std::invalid_argument("no Redfish route " + r.method + " " + r.path);
    // Its answer, or the Redfish error it turned into, was recorded by the change itself.
    (void)m.route->handler(r);
  };
  return out;
}

}  // namespace afasim::redfish
