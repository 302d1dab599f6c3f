// http::Request and http::Response — what a handler sees of an HTTP exchange, independent
// of the library that parses and writes it (Boost.Beast today: http/server.h). Endpoints
// (api/, and later Redfish and the manager page) include this header only.
//
// Value types; a Request is read by one handler at a time, a StreamSink is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace afasim::http {

// Header fields in arrival order; names compare case-insensitively (RFC 9110 5.1).
class Headers {
 public:
  // The first value of `name`, or "" when absent.
  const std::string& get(std::string_view name) const;
  bool has(std::string_view name) const;
  // How many fields are named `name` (case-insensitive).
  std::size_t count(std::string_view name) const;
  // Adds a field (a second one with the same name is kept beside the first).
  void add(std::string name, std::string value);
  // Replaces every field named `name` with one.
  void set(std::string name, std::string value);
  void erase(std::string_view name);
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

bool iequals(std::string_view a, std::string_view b);

// Who made a request, as the authentication layer found it (api/auth.h); empty when the
// request carried no credentials or the server has no authentication.
struct Principal {
  std::string user;  // "admin"
  std::string role;  // "admin", "operator", "monitor"
  std::string via;   // "basic", "bearer"
  // Basic: the proof of the verified password (api::Auth), for a session minted from it or
  // a change of it, refused if the password changed after the check. Empty otherwise.
  std::string proof;
};

struct Request {
  std::string method;                // "GET"
  std::string target;                // as sent: "/api/v1/volumes?limit=5"
  std::string path;                  // percent-decoded, without the query: "/api/v1/volumes"
  std::string query;                 // raw, without '?': "limit=5"
  std::vector<std::pair<std::string, std::string>> params;  // decoded query parameters
  Headers headers;
  std::string body;
  std::string remote_address;        // "127.0.0.1", "::1"
  bool tls = false;                  // arrived over HTTPS
  // Filled by the router: the {name} segments of the matched pattern.
  std::vector<std::pair<std::string, std::string>> path_params;
  Principal principal;               // filled by the authentication layer
  // False while the handler runs on an I/O thread (a never_blocks route): a handler that
  // finds it would have to block then throws NeedsWorker, and runs again on a worker.
  bool may_block = true;
  // Set by the connection; called once the guard has admitted an authenticated principal,
  // before the handler runs (its slot then counts as a client's: serve/connection_slots.h).
  std::function<void()> on_authenticated;

  bool has_header(std::string_view name) const { return headers.has(name); }
  const std::string& header(std::string_view name) const { return headers.get(name); }
  // The value of path parameter `name` ("" when the pattern has none).
  const std::string& path_param(std::string_view name) const;
};

// Thrown by a never_blocks route's handler that cannot answer without blocking this time
// (Request::may_block is false): the server runs it again on a worker thread.
struct NeedsWorker {};

// A response body that is written as it is produced (Server-Sent Events, a long listing):
// the server sends the head with chunked transfer coding, then every write() as a chunk.
// Thread-safe. write() returns false once the client is gone, the sink was closed, or more
// than the server's stream buffer bound is waiting to be sent (the connection is then
// closed: a client that does not read cannot make the server hold unbounded memory).
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual bool write(std::string data) = 0;
  // Ends the body (the last chunk); the connection then goes on or closes as usual.
  virtual void close() = 0;
  // True once the client has gone or close() was called.
  virtual bool closed() const = 0;
};

struct Response {
  int status = 200;
  Headers headers;
  std::string body;
  // When set, the body is streamed: the server calls `stream` once, with the sink, after
  // sending the head (on a server thread; it must not block). `body` is then ignored.
  std::function<void(std::shared_ptr<StreamSink>)> stream;

  Response() = default;
  Response(int status_in, std::string body_in, std::string content_type);
};

// Content types used across the front ends.
inline constexpr const char* kJson = "application/json";
inline constexpr const char* kProblemJson = "application/problem+json";

// The reason phrase of `status` ("Unprocessable Content" for 422).
const char* status_title(int status);

// An RFC 9457 problem document response: {type, title, status, detail, instance} plus the
// members of `extra` (an object, or null).
Response problem_response(int status, std::string_view type, std::string_view detail,
                          std::string_view instance, const nlohmann::json& extra = nullptr);

// Problem types the server itself answers with (before a handler runs).
namespace problem {
inline constexpr const char* kBadRequest = "urn:afasim:problem:bad-request";
inline constexpr const char* kNotFound = "urn:afasim:problem:not-found";
inline constexpr const char* kMethodNotAllowed = "urn:afasim:problem:method-not-allowed";
inline constexpr const char* kRequestTimeout = "urn:afasim:problem:request-timeout";
inline constexpr const char* kPayloadTooLarge = "urn:afasim:problem:payload-too-large";
inline constexpr const char* kHeadersTooLarge = "urn:afasim:problem:headers-too-large";
inline constexpr const char* kMisdirected = "urn:afasim:problem:misdirected-request";
inline constexpr const char* kCrossSite = "urn:afasim:problem:cross-site-request";
inline constexpr const char* kTooManyConnections = "urn:afasim:problem:too-many-connections";
inline constexpr const char* kBusy = "urn:afasim:problem:busy";
inline constexpr const char* kInternal = "urn:afasim:problem:internal";
inline constexpr const char* kNotImplemented = "urn:afasim:problem:not-implemented";
inline constexpr const char* kUnsupportedEncoding = "urn:afasim:problem:unsupported-media-type";
}  // namespace problem

// Percent-decoding of a path or query component; '+' becomes ' ' when `plus_is_space`.
// nullopt when a '%' is not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);

// Splits "a=1&b=x%20y" into decoded pairs; nullopt when a component is badly encoded.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view q);

// Fills path, query and params of `r` from r.target. False (r unchanged) when the target is
// not origin-form ("/..."), or is badly percent-encoded, or decodes to a NUL byte.
bool split_target(Request& r);

}  // namespace afasim::http
