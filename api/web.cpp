#include "api/web.h"

namespace afasim::api {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

const char* content_type_of(std::string_view path) {
  if (ends_with(path, ".html")) return "text/html; charset=utf-8";
  if (ends_with(path, ".js")) return "text/javascript; charset=utf-8";
  if (ends_with(path, ".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace

std::optional<WebFile> find_web_file(std::string_view path) {
  if (path == "/") path = "/index.html";
  const auto& files = web_files();
  const auto it = files.find(std::string(path));
  if (it == files.end()) return std::nullopt;
  return WebFile{it->second, content_type_of(path)};
}

}  // namespace afasim::api
