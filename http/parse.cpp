#include "http/parse.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>

namespace afasim::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace asio = boost::asio;

void limit_parser(RequestParser& p, const ServerOptions& options) {
  p.header_limit(static_cast<std::uint32_t>(options.header_max_bytes));
  p.body_limit(options.body_max_bytes);
}

Request to_request(bhttp::request<bhttp::string_body>&& m, std::string address, bool tls) {
  Request r;
  r.method = std::string(m.method_string());
  r.target = std::string(m.target());
  for (const auto& f : m) r.headers.add(std::string(f.name_string()), std::string(f.value()));
  r.body = std::move(m.body());
  r.remote_address = std::move(address);
  r.tls = tls;
  return r;
}

std::optional<Response> refusal_for(const boost::system::error_code& ec,
                                    const ServerOptions& options) {
  if (ec == beast::error::timeout || ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
      ec == asio::error::bad_descriptor || ec == asio::error::broken_pipe)
    return std::nullopt;
  if (ec == bhttp::error::header_limit) {
    return problem_response(431, problem::kHeadersTooLarge,
                            "the request's header section is larger than " +
                                std::to_string(options.header_max_bytes) + " bytes",
                            "");
  }
  if (ec == bhttp::error::body_limit) {
    return problem_response(413, problem::kPayloadTooLarge,
                            "the request body is larger than " +
                                std::to_string(options.body_max_bytes) + " bytes",
                            "");
  }
  return problem_response(
      400, problem::kBadRequest,
      "the request is not HTTP/1.1 as this server reads it (" + ec.message() + ")", "");
}

// The codings a header lists ("gzip, chunked"), lower-cased, without spaces; empty ones left out.
static std::vector<std::string> codings(const std::string& value) {
  std::vector<std::string> out;
  std::string coding;
  for (char ch : value + ",") {
    if (ch == ',') {
      if (!coding.empty()) out.push_back(coding);
      coding.clear();
    } else if (ch != ' ' && ch != '\t') {
      coding += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
  }
  return out;
}

// A body in a coding the server does not decode is refused, not read as if it were plain:
// RFC 9112 6.1 (a transfer coding other than chunked: 501) and RFC 9110 15.5.16 (a content
// coding other than identity: 415). Hostile round 14 found "gzip, chunked" taken as chunked.
static std::optional<Response> check_codings(const Request& r, unsigned http_version) {
  if (r.has_header("Transfer-Encoding")) {
    const std::vector<std::string> te = codings(r.header("Transfer-Encoding"));
    for (const std::string& c : te)
      if (c != "chunked")
        return problem_response(501, problem::kNotImplemented,
                                "transfer coding \"" + c.substr(0, 40) +
                                    "\" is not supported: send the body plain or chunked",
                                r.path);
    // Chunked once, on HTTP/1.1: "chunked, chunked", an empty value or an HTTP/1.0 request
    // with one was read as a request without a body, and the body's bytes as the next
    // request on the connection (hostile round 36: a smuggled GET answered). RFC 9112 6.1 and
    // 6.3: faulty framing, a 400 and the connection closed (a refusal is not kept alive).
    if (te.size() != 1 || http_version < 11)
      return problem_response(400, problem::kBadRequest,
                              "Transfer-Encoding must be \"chunked\", once, on an HTTP/1.1 request", r.path);
  }
  if (r.has_header("Content-Encoding"))
    for (const std::string& c : codings(r.header("Content-Encoding")))
      if (c != "identity")
        return problem_response(415, problem::kUnsupportedEncoding,
                                "content coding \"" + c.substr(0, 40) +
                                    "\" is not supported: send the body uncompressed",
                                r.path);
  return std::nullopt;
}

std::optional<Response> cross_site_refusal(const Request& r) {
  if (r.method == "GET" || r.method == "HEAD" || r.method == "OPTIONS") return std::nullopt;
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::string why;
  if (r.has_header("Sec-Fetch-Site")) {
    const std::string site = lower(r.header("Sec-Fetch-Site"));
    if (site == "cross-site" || site == "same-site") why = "Sec-Fetch-Site: " + site;
  }
  // The scheme counts too: an https page is another origin to an http server (review 42).
  if (why.empty() && r.has_header("Origin") &&
      lower(r.header("Origin")) != (r.tls ? "https://" : "http://") + lower(r.header("Host")))
    why = "Origin: " + r.header("Origin").substr(0, 100);
  if (why.empty()) return std::nullopt;
  return problem_response(403, problem::kCrossSite,
                          "a browser sent this request from another site (" +
                              nlohmann::json(why).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                              "); only GET and HEAD are served across sites",
                          r.path);
}

std::optional<Response> precheck(Request& r, unsigned http_version, const ServerOptions& options) {
  if (!split_target(r)) {
    return problem_response(400, problem::kBadRequest,
                            "the request target is not an absolute path with a valid "
                            "percent-encoding",
                            "");
  }
  // One Host (RFC 9112 3.2: more than one is a 400) and at most one Authorization: with two,
  // a proxy that reads the last and this server, which read the first, disagreed about which
  // host was named and who was calling (hostile round 16); Redfish's X-Auth-Token likewise
  // (round 24). If-Match and OData-Version likewise: only the first line was read, so a
  // second If-Match with a stale or malformed tag did not stop a change (hostile review 42);
  // an If-Match list goes in one line.
  for (const char* name : {"Host", "Authorization", "X-Auth-Token", "If-Match", "OData-Version", "Origin", "Sec-Fetch-Site"})
    if (r.headers.count(name) > 1)
      return problem_response(400, problem::kBadRequest,
                              std::string("the request has more than one ") + name + " header", r.path);
  // Both credential headers: a proxy that reads the other would see another caller (review,
  // round 24: a monitor's token beside an admin's Authorization was served as the admin).
  if (r.has_header("Authorization") && r.has_header("X-Auth-Token"))
    return problem_response(400, problem::kBadRequest,
                            "the request has both an Authorization and an X-Auth-Token header: send one", r.path);
  const bool has_host = r.has_header("Host");
  if (!has_host && http_version >= 11)
    return problem_response(400, problem::kBadRequest, "an HTTP/1.1 request needs a Host header",
                            r.path);
  if (has_host && !host_allowed(r.header("Host"), options.allowed_hosts)) {
    // Quoted up to its first character that no host name or address has, at most 100: a line
    // folded onto Host (obsolete folding, merged into its value) was echoed whole, an
    // Authorization header's credentials with it (hostile round 28).
    const std::string& value = r.header("Host");
    const std::size_t host_end = std::min<std::size_t>(
        100, std::find_if_not(value.begin(), value.end(),
                              [](unsigned char c) { return std::isalnum(c) || (c != 0 && std::strchr(".-_:[]%", c) != nullptr); }) -
                 value.begin());
    const std::string host = value.substr(0, host_end);
    return problem_response(421, problem::kMisdirected,
                            "this server does not answer for host " +
                                nlohmann::json(host).dump(-1, ' ', false,
                                                          nlohmann::json::error_handler_t::replace) +
                                (host_end < value.size() ? ", cut at a character no host name has," : "") +
                                " (an IP address, localhost, or a name given with --allowed-hosts)",
                            r.path);
  }
  if (auto refused = cross_site_refusal(r)) return refused;
  return check_codings(r, http_version);
}

ParsedRequest parse_request(std::string_view bytes, const ServerOptions& options) {
  ParsedRequest out;
  RequestParser parser;
  limit_parser(parser, options);
  parser.eager(true);
  boost::system::error_code ec;
  std::size_t used = 0;
  while (!parser.is_done() && used < bytes.size()) {
    const std::size_t n = parser.put(asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    used += n;
    // need_more: every byte there is was offered. Beast's contract is that the next put()
    // brings more than the last one (a server reads first); offering the same tail again
    // asserts in its chunk parser (`make fuzz`: "0\xe1\r\n" after a chunked header).
    if (ec == bhttp::error::need_more) {
      ec = {};
      break;
    }
    if (ec || n == 0) break;
  }
  if (!ec && !parser.is_done() && !parser.got_some()) {
    ec = bhttp::error::end_of_stream;  // no byte at all: a client that went away (Beast asserts
                                       // in put_eof before any byte; `make fuzz` found it)
  } else if (!ec && !parser.is_done()) {
    parser.put_eof(ec);
    if (!ec && !parser.is_done()) ec = bhttp::error::partial_message;
  }
  if (ec) {
    out.refusal = refusal_for(ec, options);
    return out;
  }
  out.version = parser.get().version();
  out.request = to_request(parser.release(), "fuzz", false);
  return out;
}

}  // namespace afasim::http
