// http::Router — the one table of routes a front end serves: method, path pattern, handler,
// and what the authentication layer requires of the caller.
//
// Patterns are literal segments and "{name}" segments ("/api/v1/volumes/{id}"); a "{name}"
// matches one non-empty segment, which the handler reads with Request::path_param. One
// trailing slash on a request path is ignored. Build the table before the server starts;
// afterwards it is read-only and may be read from any thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "http/message.h"

namespace afasim::http {

// Runs on a server thread; may throw (the server answers 500 and logs it). Handlers of
// routes that are not `never_blocks` run on the worker pool and may block (a call to the
// model thread, a password hash); the others run on an I/O thread and must not.
using Handler = std::function<Response(Request&)>;

struct Route {
  std::string method;   // "GET", "POST", "PUT", "PATCH", "DELETE"
  std::string pattern;  // "/api/v1/volumes/{id}"
  Handler handler;
  // What the caller must be, as the guard (Server::set_guard) reads it: a role name
  // ("monitor", "operator", "admin") or "public" for no authentication at all.
  std::string access = "public";
  // The handler returns at once without blocking (it reads a snapshot): it may run on the
  // I/O thread, which saves two thread hand-offs per request.
  bool never_blocks = false;
};

class Router {
 public:
  void add(Route route);

  struct Match {
    const Route* route = nullptr;       // the route for (method, path), or null
    std::vector<std::string> allowed;   // methods the path has, when route is null
  };
  // Finds the route for r.method (HEAD finds GET) and r.path, filling r.path_params.
  // With no route for the method, `allowed` lists the path's methods (empty: no such path).
  Match match(Request& r) const;

  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
  std::vector<std::vector<std::string>> segments_;  // per route, its pattern split on '/'
};

// "/a/b/" -> {"a", "b"}; empty segments are dropped.
std::vector<std::string> split_path(std::string_view path);

}  // namespace afasim::http
