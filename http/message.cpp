#include "http/message.h"

#include <boost/beast/http/status.hpp>
#include <cctype>

namespace afasim::http {

namespace {
const std::string kEmpty;

int hex_value(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}
}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

const std::string& Headers::get(std::string_view name) const {
  for (const auto& [k, v] : fields_)
    if (iequals(k, name)) return v;
  return kEmpty;
}

std::size_t Headers::count(std::string_view name) const {
  std::size_t n = 0;
  for (const auto& [k, v] : fields_) n += iequals(k, name);
  return n;
}

bool Headers::has(std::string_view name) const {
  for (const auto& f : fields_)
    if (iequals(f.first, name)) return true;
  return false;
}

void Headers::add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

void Headers::set(std::string name, std::string value) {
  erase(name);
  add(std::move(name), std::move(value));
}

void Headers::erase(std::string_view name) {
  std::erase_if(fields_, [&](const auto& f) { return iequals(f.first, name); });
}

const std::string& Request::path_param(std::string_view name) const {
  for (const auto& [k, v] : path_params)
    if (k == name) return v;
  return kEmpty;
}

Response::Response(int status_in, std::string body_in, std::string content_type)
    : status(status_in), body(std::move(body_in)) {
  if (!content_type.empty()) headers.set("Content-Type", std::move(content_type));
}

const char* status_title(int status) {
  // RFC 9110 renamed 413 and 422; Beast's table predates it.
  if (status == 413) return "Content Too Large";
  if (status == 422) return "Unprocessable Content";
  const auto text = boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
  return text.empty() || text == "<unknown-status>" ? "Unknown" : text.data();
}

Response problem_response(int status, std::string_view type, std::string_view detail,
                          std::string_view instance, const nlohmann::json& extra) {
  nlohmann::json doc{{"type", type},
                     {"title", status_title(status)},
                     {"status", status},
                     {"detail", detail},
                     {"instance", instance}};
  if (extra.is_object())
    for (const auto& [k, v] : extra.items()) doc[k] = v;
  return Response(status, doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + '\n',
                  kProblemJson);
}

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (ch == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view q) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!q.empty()) {
    const std::size_t amp = q.find('&');
    const std::string_view part = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (part.empty()) continue;
    const std::size_t eq = part.find('=');
    auto name = percent_decode(part.substr(0, eq), true);
    auto value = percent_decode(eq == std::string_view::npos ? "" : part.substr(eq + 1), true);
    if (!name || !value) return std::nullopt;
    out.emplace_back(std::move(*name), std::move(*value));
  }
  return out;
}

bool split_target(Request& r) {
  const std::string_view t = r.target;
  if (t.empty() || t.front() != '/') return false;
  const std::size_t q = t.find('?');
  auto path = percent_decode(t.substr(0, q), false);
  if (!path || path->find('\0') != std::string::npos) return false;
  const std::string_view query = q == std::string_view::npos ? "" : t.substr(q + 1);
  auto params = parse_query(query);
  if (!params) return false;
  r.path = std::move(*path);
  r.query = std::string(query);
  r.params = std::move(*params);
  return true;
}

}  // namespace afasim::http
