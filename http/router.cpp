#include "http/router.h"

#include <algorithm>

namespace afasim::http {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    const std::size_t j = path.find('/', i);
    const std::string_view seg = path.substr(i, j == std::string_view::npos ? j : j - i);
    if (!seg.empty()) out.emplace_back(seg);
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

void Router::add(Route route) {
  segments_.push_back(split_path(route.pattern));
  routes_.push_back(std::move(route));
}

namespace {
bool is_param(const std::string& seg) {
  return seg.size() > 2 && seg.front() == '{' && seg.back() == '}';
}

bool matches(const std::vector<std::string>& pattern, const std::vector<std::string>& segs,
             std::vector<std::pair<std::string, std::string>>& params) {
  if (pattern.size() != segs.size()) return false;
  params.clear();
  for (std::size_t i = 0; i < segs.size(); ++i) {
    if (is_param(pattern[i])) {
      params.emplace_back(pattern[i].substr(1, pattern[i].size() - 2), segs[i]);
    } else if (pattern[i] != segs[i]) {
      return false;
    }
  }
  return true;
}
}  // namespace

Router::Match Router::match(Request& r) const {
  Match m;
  // "//" inside a path is not a segment of its own: "/api//v1" is not "/api/v1".
  if (r.path.find("//") != std::string::npos) return m;
  const std::vector<std::string> segs = split_path(r.path);
  const std::string& method = r.method == "HEAD" ? std::string("GET") : r.method;
  std::vector<std::pair<std::string, std::string>> params;
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    if (!matches(segments_[i], segs, params)) continue;
    if (routes_[i].method == method) {
      r.path_params = std::move(params);
      m.route = &routes_[i];
      m.allowed.clear();
      return m;
    }
    if (std::find(m.allowed.begin(), m.allowed.end(), routes_[i].method) == m.allowed.end())
      m.allowed.push_back(routes_[i].method);
  }
  return m;
}

}  // namespace afasim::http
