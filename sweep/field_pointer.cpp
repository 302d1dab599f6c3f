#include "sweep/field_pointer.h"

#include <algorithm>
#include <cstdint>

namespace afasim::sweep {
namespace {

using nlohmann::json;

// RFC 6901 section 4: array-index = %x30 / ( %x31-39 *(%x30-39) ), no leading zeros.
bool is_array_index(const std::string& token) {
  if (token.empty() || token.size() > 9) return false;  // 10^9 elements: beyond any scenario
  if (token.size() > 1 && token[0] == '0') return false;
  for (char c : token)
    if (c < '0' || c > '9') return false;
  return true;
}

// The path walked so far, for messages: "/volumes/1".
std::string prefix_of(const FieldPointer& p, std::size_t upto, const std::vector<std::size_t>& indexes) {
  std::string out;
  std::size_t wild = 0;
  for (std::size_t i = 0; i < upto; ++i)
    out += "/" + (p.wildcard[i] ? std::to_string(indexes[wild++]) : p.tokens[i]);
  return out.empty() ? "the top level" : out;
}

struct Setter {
  const FieldPointer& p;
  const json& value;
  std::vector<std::size_t> indexes;  // the element each wildcard walked so far stands at
  std::size_t count = 0;

  sim::Status fail(std::size_t at, const std::string& what) const {
    return sim::invalid_argument(p.text + ": " + what + " (at " + prefix_of(p, at, indexes) + ")");
  }

  sim::Status wildcard(json& node, std::size_t i) {
    if (!node.is_array()) return fail(i, "* applies to an array, this is " + std::string(node.type_name()));
    if (node.empty()) return fail(i, "* on an empty array sets nothing");
    for (std::size_t e = 0; e < node.size(); ++e) {
      indexes.push_back(e);
      AFASIM_RETURN_IF_ERROR(walk(node[e], i + 1));
      indexes.pop_back();
    }
    return sim::Status::ok();
  }

  sim::Status walk(json& node, std::size_t i) {
    if (p.wildcard[i]) return wildcard(node, i);
    const std::string& token = p.tokens[i];
    const bool last = i + 1 == p.tokens.size();
    if (node.is_object()) {
      if (last) {
        node[token] = value;
        ++count;
        return sim::Status::ok();
      }
      auto it = node.find(token);
      if (it == node.end()) return fail(i, "no member \"" + token + "\"");
      return walk(*it, i + 1);
    }
    if (node.is_array()) {
      if (!is_array_index(token))
        return fail(i, "\"" + token + "\" is not an index of an array (0, 1, ... or *)");
      const std::size_t index = std::stoul(token);
      if (index >= node.size())
        return fail(i, "no element " + token + " (the array has " + std::to_string(node.size()) + ")");
      if (last) {
        node[index] = value;
        ++count;
        return sim::Status::ok();
      }
      return walk(node[index], i + 1);
    }
    return fail(i, "\"" + token + "\" is under " + std::string(node.type_name()) + ", not an object or an array");
  }
};

}  // namespace

bool fields_overlap(const FieldPointer& a, const FieldPointer& b) {
  const std::size_t n = std::min(a.tokens.size(), b.tokens.size());
  for (std::size_t i = 0; i < n; ++i)
    if (!a.wildcard[i] && !b.wildcard[i] && a.tokens[i] != b.tokens[i]) return false;
  return true;
}

sim::Result<FieldPointer> parse_field_pointer(const std::string& text) {
  if (text.empty()) return sim::invalid_argument("\"\" is the whole scenario, not a field");
  if (text[0] != '/') return sim::invalid_argument("\"" + text + "\" does not start with / (RFC 6901)");
  FieldPointer p;
  p.text = text;
  std::size_t at = 1;
  while (true) {
    const std::size_t end = text.find('/', at);
    const std::string raw = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token += raw[i];
        continue;
      }
      if (i + 1 >= raw.size() || (raw[i + 1] != '0' && raw[i + 1] != '1'))
        return sim::invalid_argument("\"" + text + "\": ~ must be followed by 0 or 1 (RFC 6901: ~0 is ~, ~1 is /)");
      token += raw[++i] == '0' ? '~' : '/';
    }
    p.tokens.push_back(token);
    p.wildcard.push_back(raw == "*");
    if (end == std::string::npos) break;
    at = end + 1;
  }
  if (p.wildcard.back())
    return sim::invalid_argument("\"" + text + "\" ends with *: name the field of each element");
  return p;
}

sim::Result<std::size_t> set_field(json& document, const FieldPointer& pointer, const json& value) {
  AFASIM_ASSERT(!pointer.tokens.empty() && pointer.tokens.size() == pointer.wildcard.size(),
                "set_field with a pointer parse_field_pointer did not make");
  Setter setter{pointer, value, {}, 0};
  AFASIM_RETURN_IF_ERROR(setter.walk(document, 0));
  return setter.count;
}

}  // namespace afasim::sweep
