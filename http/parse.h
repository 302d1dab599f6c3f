// Internal to http/ (and its fuzz target): how a request is read and checked before it is
// routed, shared by the server's connections (http/session.cpp) and tests/fuzz.
#pragma once

#include <boost/beast/http.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "http/message.h"
#include "http/server.h"

namespace afasim::http {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// Applies the server's header and body bounds to `p` (body_limit holds for chunked bodies:
// Beast counts decoded body bytes).
void limit_parser(RequestParser& p, const ServerOptions& options);

// The parsed message as a handler sees it (path, query and params not yet split).
Request to_request(boost::beast::http::request<boost::beast::http::string_body>&& m,
                   std::string address, bool tls);

// What to answer a request that could not be read: 431, 413 or 400. nullopt when there is
// nobody to answer (the client closed, reset, or the deadline closed the socket).
std::optional<Response> refusal_for(const boost::system::error_code& ec,
                                    const ServerOptions& options);

// A browser's request from another site that could change something: a method other than
// GET, HEAD and OPTIONS with `Sec-Fetch-Site: cross-site` or `same-site`, or an `Origin`
// whose host and port are not the request's Host (`null` included). The 403 to send, or
// nullopt. Such a "simple" request needs no preflight, so any page a user opened could make
// it with the Basic credentials the browser holds (hostile review 42: 64 cross-site POST
// /sessions used up admin's sessions for 8 hours); curl and the CLI send neither header.
std::optional<Response> cross_site_refusal(const Request& r);

// Splits the target and checks Host (HTTP/1.1 needs one; it must be allowed) and
// cross_site_refusal. The answer to send instead of routing (400, 403, 421), or nullopt to
// route the request.
std::optional<Response> precheck(Request& r, unsigned http_version, const ServerOptions& options);

// Reads one request from `bytes` all at once, as a connection would (for tests and fuzzing).
struct ParsedRequest {
  std::optional<Request> request;   // complete and within the bounds
  std::optional<Response> refusal;  // a bad or too large request
  unsigned version = 11;
};
ParsedRequest parse_request(std::string_view bytes, const ServerOptions& options);

}  // namespace afasim::http
