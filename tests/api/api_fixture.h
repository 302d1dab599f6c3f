// Test harness for the ReST API: an ISE 860 G3 Array over a MemoryJournal, its model
// thread (pace none), a RestServer on a free port, and a small HTTP client around
// httplib::Client. Also a minimal OpenAPI-schema checker, so that tests can hold every
// response against api/openapi.json.
#pragma once

#include <doctest/doctest.h>
#include <httplib.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "api/auth.h"
#include "api/rest_server.h"
#include "config/preset.h"
#include "controller/array.h"
#include "controller/journal.h"
#include "controller/telemetry.h"
#include "serve/model_thread.h"
#include "sim/pacer.h"
#include "sim/simulator.h"

namespace afasim::api::testing {

using nlohmann::json;

struct Response {
  int status = 0;
  json body;         // parsed when the body is JSON, else null
  std::string text;  // the raw body
  std::string content_type;
  httplib::Headers headers;
  std::string header(const std::string& key) const {
    auto it = headers.find(key);
    return it == headers.end() ? "" : it->second;
  }
  bool is_problem() const {
    return content_type == "application/problem+json" && body.is_object() &&
           body.contains("type") && body.contains("title") && body.contains("status") &&
           body.contains("detail") && body["status"] == status;
  }
};

// A session for `user` as a login makes it: the password checked (from a test address),
// then the session minted with the check's proof.
inline sim::Result<std::pair<Session, std::string>> login(Auth& auth, const std::string& user,
                                                          const std::string& password) {
  std::string proof;
  REQUIRE(auth.check_password(user, password, "192.0.2.1", &proof) == PasswordCheck::kMatch);
  return auth.create_session(user, proof);
}

// The admin's password in every ApiFixture.
inline constexpr const char* kAdminPassword = "test-admin-password";

class Http {
 public:
  // Sends HTTP Basic credentials for `user` unless `user` is empty (an anonymous client).
  explicit Http(int port, const std::string& user = "admin",
                const std::string& password = kAdminPassword)
      : client_("127.0.0.1", port) {
    client_.set_read_timeout(30, 0);
    client_.set_write_timeout(30, 0);
    if (!user.empty()) client_.set_basic_auth(user.c_str(), password.c_str());
  }
  // Sends `Authorization: Bearer token` instead of Basic credentials.
  void use_bearer(const std::string& token) {
    client_.set_basic_auth("", "");
    client_.set_bearer_token_auth(token.c_str());
  }
  Response get(const std::string& path, const httplib::Headers& h = {}) {
    return wrap(client_.Get(prefix(path), h));
  }
  Response head(const std::string& path) { return wrap(client_.Head(prefix(path))); }
  Response options(const std::string& path) { return wrap(client_.Options(prefix(path))); }
  Response post(const std::string& path, const json& body, const httplib::Headers& h = {}) {
    return post_raw(path, body.dump(), "application/json", h);
  }
  Response post_raw(const std::string& path, const std::string& body,
                    const std::string& content_type, const httplib::Headers& h = {}) {
    return wrap(client_.Post(prefix(path), h, body, content_type));
  }
  Response patch(const std::string& path, const json& body, const httplib::Headers& h = {}) {
    return patch_raw(path, body.dump(), "application/json", h);
  }
  Response patch_raw(const std::string& path, const std::string& body,
                     const std::string& content_type, const httplib::Headers& h = {}) {
    return wrap(client_.Patch(prefix(path), h, body, content_type));
  }
  Response put(const std::string& path, const json& body) {
    return wrap(client_.Put(prefix(path), body.dump(), "application/json"));
  }
  Response del(const std::string& path, const httplib::Headers& h = {}) {
    return wrap(client_.Delete(prefix(path), h));
  }

 private:
  static std::string prefix(const std::string& path) {
    return path.rfind("/api/", 0) == 0 ? path : std::string(kApiPrefix) + path;
  }
  static Response wrap(const httplib::Result& res) {
    Response r;
    REQUIRE_MESSAGE(res, "HTTP request failed: " << httplib::to_string(res.error()));
    r.status = res->status;
    r.text = res->body;
    r.headers = res->headers;
    r.content_type = res->get_header_value("Content-Type");
    if (!r.text.empty()) r.body = json::parse(r.text, nullptr, false);
    if (r.body.is_discarded()) r.body = nullptr;
    return r;
  }
  httplib::Client client_;
};

// One array behind one RestServer, torn down in order.
class ApiFixture {
 public:
  // `tweak` adjusts the server's options (limits, timeouts) before it starts.
  explicit ApiFixture(std::uint64_t seed = 42,
                      const std::function<void(RestServerOptions&)>& tweak = {})
      : sim_(seed) {
    auto catalog = config::Catalog::embedded();
    REQUIRE(catalog);
    catalog_ = std::make_unique<config::Catalog>(std::move(catalog).value());
    auto preset = catalog_->system("ise-860-g3");
    REQUIRE(preset);
    auto array = controller::Array::open(sim_, *catalog_, *preset, journal_, {});
    REQUIRE(array);
    array_ = std::move(array).value();
    controller::TelemetryOptions t;
    t.tick_when_idle = false;  // pace none: time moves only with the tests' requests
    telemetry_ = controller::Telemetry::create(*array_, t).value();
    model_ = std::make_unique<serve::ModelThread>(sim_, sim::Pacer(sim::Pacer::Mode::kNone));
    model_->start();
    log_ = std::make_shared<std::ostringstream>();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_);
    sink->set_pattern("%v");
    RestServerOptions options;
    options.http.port = 0;
    options.system_name = "test-array";
    options.telemetry = telemetry_.get();
    options.http.logger = std::make_shared<spdlog::logger>("api-test", sink);
    AuthOptions auth;
    auth.initial_admin_password = kAdminPassword;
    auth.argon2_passes = 1;  // tests hash many passwords; the product's cost is in AuthOptions
    auth.argon2_memory_kib = 1024;
    auto opened = Auth::open(auth);
    REQUIRE(opened);
    auth_ = std::shared_ptr<Auth>(std::move(opened).value());
    options.auth = auth_;
    if (tweak) tweak(options);
    server_ = std::make_unique<RestServer>(*array_, *model_, options);
    const sim::Status st = server_->start();
    REQUIRE_MESSAGE(st.is_ok(), st.to_string());
    REQUIRE(server_->port() > 0);
  }
  ~ApiFixture() {
    server_->stop();
    model_->stop();
    telemetry_.reset();
  }

  Http client() { return Http(server_->port()); }
  Http anonymous() { return Http(server_->port(), ""); }
  Http client_as(const std::string& user, const std::string& password) {
    return Http(server_->port(), user, password);
  }
  Auth& auth() { return *auth_; }
  RestServer& server() { return *server_; }
  serve::ModelThread& model() { return *model_; }
  controller::MemoryJournal& journal() { return journal_; }
  controller::Array& array() { return *array_; }
  std::string log() const { return log_->str(); }

 private:
  sim::Simulator sim_;
  std::unique_ptr<config::Catalog> catalog_;
  controller::MemoryJournal journal_;
  std::unique_ptr<controller::Array> array_;
  std::unique_ptr<controller::Telemetry> telemetry_;
  std::unique_ptr<serve::ModelThread> model_;
  std::shared_ptr<std::ostringstream> log_;
  std::shared_ptr<Auth> auth_;
  std::unique_ptr<RestServer> server_;
};

// The OpenAPI document the server embeds, parsed.
inline const json& openapi() {
  static const json doc = json::parse(openapi_document());
  return doc;
}

// Follows a local "$ref" ("#/components/schemas/Volume").
inline const json& resolve(const json& node) {
  if (!node.is_object() || !node.contains("$ref")) return node;
  const std::string ref = node["$ref"].get<std::string>();
  REQUIRE_MESSAGE(ref.rfind("#/", 0) == 0, "non-local $ref " << ref);
  return resolve(openapi().at(json::json_pointer(ref.substr(1))));
}

// "" when `v` fits `schema` (the OpenAPI 3.0 subset openapi.json uses), else the first
// mismatch and where it is.
inline std::string schema_mismatch(const json& schema_in, const json& v, const std::string& at) {
  const json& schema = resolve(schema_in);
  if (v.is_null()) {
    return schema.value("nullable", false) ? "" : at + ": null where the schema has no nullable";
  }
  if (schema.contains("oneOf")) {
    int fits = 0;
    for (const auto& s : schema["oneOf"]) fits += schema_mismatch(s, v, at).empty();
    return fits == 1 ? "" : at + ": fits " + std::to_string(fits) + " of oneOf, not 1";
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == v;
    if (!found) return at + ": " + v.dump() + " is not in enum " + schema["enum"].dump();
  }
  const std::string type = schema.value("type", "");
  if (type == "integer" && !v.is_number_integer()) return at + ": not an integer: " + v.dump();
  if (type == "number" && !v.is_number()) return at + ": not a number";
  if (type == "string" && !v.is_string()) return at + ": not a string: " + v.dump();
  if (type == "boolean" && !v.is_boolean()) return at + ": not a boolean";
  if (type == "array") {
    if (!v.is_array()) return at + ": not an array";
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto m = schema_mismatch(schema["items"], v[i], at + "[" + std::to_string(i) + "]");
      if (!m.empty()) return m;
    }
  }
  if (type == "object") {
    if (!v.is_object()) return at + ": not an object";
    const json props = schema.value("properties", json::object());
    for (const auto& r : schema.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) return at + ": missing required " + r.dump();
    }
    for (const auto& [k, child] : v.items()) {
      if (props.contains(k)) {
        auto m = schema_mismatch(props[k], child, at + "." + k);
        if (!m.empty()) return m;
      } else if (schema.value("additionalProperties", true) == false) {
        return at + ": member \"" + k + "\" is not in the schema";
      }
    }
  }
  return "";
}

// Checks `r` against what openapi.json says `method path_template` answers with r.status.
inline void check_conforms(const std::string& method, const std::string& path_template,
                           const Response& r) {
  const json& doc = openapi();
  INFO(method << " " << path_template << " -> " << r.status << " " << r.text.substr(0, 300));
  REQUIRE(doc["paths"].contains(path_template));
  const json& op = doc["paths"][path_template];
  std::string m = method;
  for (char& ch : m) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  REQUIRE(op.contains(m));
  const json& responses = op[m]["responses"];
  const std::string status = std::to_string(r.status);
  REQUIRE_MESSAGE(responses.contains(status), "status " << status << " is not documented");
  const json& resp = resolve(responses[status]);
  if (!resp.contains("content")) {
    CHECK(r.text.empty());
    return;
  }
  REQUIRE_MESSAGE(resp["content"].contains(r.content_type),
                  "content type " << r.content_type << " is not documented");
  const std::string mismatch =
      schema_mismatch(resp["content"][r.content_type]["schema"], r.body, "body");
  CHECK_MESSAGE(mismatch.empty(), mismatch);
}

}  // namespace afasim::api::testing
