#include "api/rest_record.h"

#include "api/endpoints.h"

namespace afasim::api {

using serve::ByteReader;
using serve::ByteWriter;

namespace {
thread_local const CallScope* current_scope = nullptr;

// The request headers a handler reads.
constexpr const char* kRecordedHeaders[] = {"Content-Type", "If-Match"};
}  // namespace

CallScope::CallScope(const Route& route, const Call& call) : route_(route), call_(call), outer_(current_scope) {
  current_scope = this;
}

CallScope::~CallScope() {
  current_scope = outer_;
}

const CallScope* CallScope::current() {
  return current_scope;
}

void CallScope::record() const {
  serve::Recorder* rec = serve::Recorder::active();
  if (rec == nullptr) return;
  const http::Request& http = call_.http;
  ByteWriter w;
  // The user too: the events the call causes name it (Array::set_actor).
  w.str(route_.method).str(route_.path).str(call_.id_segment).str(http.principal.user).str(http.target);
  w.u32(static_cast<std::uint32_t>(http.params.size()));
  for (const auto& [name, value] : http.params) w.str(name).str(value);
  std::vector<std::pair<std::string, std::string>> headers;
  for (const char* h : kRecordedHeaders)
    if (http.has_header(h)) headers.emplace_back(h, http.header(h));
  w.u32(static_cast<std::uint32_t>(headers.size()));
  for (const auto& [name, value] : headers) w.str(name).str(value);
  w.str(http.body);
  rec->request("rest", w.take());
}

void record_reply(const Reply& reply) {
  serve::Recorder* rec = serve::Recorder::active();
  if (rec == nullptr) return;
  ByteWriter w;
  w.u32(static_cast<std::uint32_t>(reply.status)).u8(reply.revision ? 1 : 0).u64(reply.revision.value_or(0));
  w.str(reply.location);
  const std::string body =
      reply.body.is_null() ? "" : reply.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  w.u64(body.size()).u64(serve::digest64(body));
  rec->outcome("rest.reply", w.take());
}

void record_error(int status, const std::string& detail) {
  if (serve::Recorder* rec = serve::Recorder::active())
    rec->outcome("rest.error", ByteWriter().u32(static_cast<std::uint32_t>(status)).str(detail).take());
}

void log_user_event(controller::Array& array, const std::string& actor, const std::string& object,
                    const std::string& message) {
  if (serve::Recorder* rec = serve::Recorder::active())
    rec->request("user.event", ByteWriter().str(actor).str(object).str(message).take());
  array.set_actor(actor);
  (void)array.log_event(controller::Severity::kInfo, "user", object, message);
  array.set_actor("");
}

namespace {

// The request a recorded call describes, and the route it went to.
struct ReplayedCall {
  http::Request http;
  std::string method, route_path, id_segment;
};

ReplayedCall decode_call(std::string_view payload) {
  ByteReader r(payload);
  ReplayedCall c;
  c.method = r.str();
  c.route_path = r.str();
  c.id_segment = r.str();
  c.http.principal.user = r.str();
  c.http.method = c.method;
  c.http.target = r.str();
  if (!http::split_target(c.http)) throw std::invalid_argument("a recorded call's target is not a path: " + c.http.target);
  c.http.params.clear();  // the recorded ones, as the handler saw them
  for (std::uint32_t n = r.u32(); n > 0; --n) {
    std::string name = r.str();
    c.http.params.emplace_back(std::move(name), r.str());
  }
  for (std::uint32_t n = r.u32(); n > 0; --n) {
    std::string name = r.str();
    c.http.headers.add(std::move(name), r.str());
  }
  if (!c.id_segment.empty()) c.http.path_params.emplace_back("id", c.id_segment);
  c.http.body = r.str();
  return c;
}

}  // namespace

std::map<std::string, ReplayHandler> rest_replay_handlers(controller::Array& array, serve::ModelThread& inline_model,
                                                          SystemIdentity identity) {
  auto endpoints = std::make_shared<Endpoints>(array, inline_model, std::move(identity));
  auto routes = std::make_shared<std::vector<Route>>(endpoints->routes());
  std::map<std::string, ReplayHandler> out;
  out["rest"] = [endpoints, routes](std::string_view payload) {
    const ReplayedCall c = decode_call(payload);
    for (const Route& route : *routes) {
      if (route.method != c.method || route.path != c.route_path) continue;
      const Call call{c.http, c.id_segment};
      const CallScope scope(route, call);
      try {
        (void)route.handler(call);
      } catch (const ApiError&) {
        // Recorded as a rest.error outcome by on_model.
      }
      return;
    }
    throw std::invalid_argument("no route " + c.method + " " + c.route_path);
  };
  out["user.event"] = [&array](std::string_view payload) {
    ByteReader r(payload);
    const std::string actor = r.str(), object = r.str(), message = r.str();
    log_user_event(array, actor, object, message);
  };
  return out;
}

}  // namespace afasim::api
