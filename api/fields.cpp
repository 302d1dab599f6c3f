#include "api/fields.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "api/problem.h"
#include "api/size.h"
#include "config/json_text.h"

namespace afasim::api {
namespace {

using nlohmann::json;

const char* type_word(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_float:
      return "a non-integer number";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    default:
      return "an unsupported value";
  }
}

}  // namespace

std::string excerpt(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 64) s = s.substr(0, 61) + "...";
  return s;
}

json parse_body_object(std::string_view body) {
  if (body.empty()) throw bad_request("the request body is empty; send a JSON object");
  config::JsonParseOptions options;
  options.max_depth = kBodyMaxDepth;
  config::JsonParseError error;
  auto parsed = config::parse_json_strict(body, options, &error);
  if (!parsed.is_ok()) {
    switch (error.kind) {
      case config::JsonParseError::Kind::kTooDeep:
        throw bad_request("the request body is nested deeper than " +
                          std::to_string(kBodyMaxDepth) + " levels");
      case config::JsonParseError::Kind::kDuplicateKey: {
        // The path is made of the client's keys: keep the message short whatever they are.
        std::string path = error.path;
        if (path.size() > 64) path = path.substr(0, 61) + "...";
        throw bad_request("the request body has the key " +
                          json(path).dump(-1, ' ', false, json::error_handler_t::replace) +
                          " twice; give each member once");
      }
      case config::JsonParseError::Kind::kNumberTooLarge: {
        std::string path = error.path.empty() ? "(top level)" : error.path;
        if (path.size() > 64) path = path.substr(0, 61) + "...";
        throw bad_request("the request body has a number beyond the range of a double at " +
                          json(path).dump(-1, ' ', false, json::error_handler_t::replace));
      }
      case config::JsonParseError::Kind::kSyntax:
        // nlohmann's messages name the line, column and what it expected.
        throw bad_request("the request body is not valid JSON: " + error.message);
    }
    // Every kind is handled above (-Werror=switch); an error never reaches value().
    throw bad_request("the request body is not valid JSON: " + parsed.status().message());
  }
  json doc = std::move(parsed).value();
  if (!doc.is_object()) {
    throw bad_request(std::string("the request body must be a JSON object, got ") + type_word(doc));
  }
  return doc;
}

FieldReader::FieldReader(const json& object, std::initializer_list<std::string_view> allowed,
                         std::initializer_list<std::string_view> read_only, std::string context)
    : object_(object), context_(std::move(context)) {
  if (!object_.is_object()) {
    throw bad_request((context_.empty() ? std::string("the body") : context_) +
                      " must be a JSON object, got " + type_word(object_));
  }
  std::vector<std::string> unknown;
  std::vector<std::string> ro;
  for (const auto& [key, value] : object_.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (known) continue;
    bool is_ro = false;
    for (std::string_view r : read_only) is_ro = is_ro || r == key;
    if (is_ro)
      ro.push_back(name(key));
    else
      unknown.push_back(key);
  }
  if (!unknown.empty()) refuse_unknown(unknown, allowed);
  if (!ro.empty()) {
    std::string list;
    for (const auto& r : ro) list += (list.empty() ? "" : ", ") + r;
    throw ApiError(422, problem::kImmutableField, "read-only field(s) cannot be set: " + list);
  }
}

std::string FieldReader::name(const std::string& key) const {
  return context_.empty() ? key : config::json_path_join(context_, key);
}

// The keys as the client sent them, each a JSON string cut to 64 characters, at most ten
// (a body may hold thousands), and where they are: 'unknown field(s) in initiators[0]: "/"'.
// `unknown_fields` names each in full, as a path (initiators[0]["/"]) below the top level.
void FieldReader::refuse_unknown(const std::vector<std::string>& keys,
                                 std::initializer_list<std::string_view> allowed) const {
  std::string list;
  json names = json::array();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    names.push_back(name(keys[i]));
    if (i < 10) list += (i == 0 ? "" : ", ") + excerpt(json(keys[i]));
  }
  if (keys.size() > 10) list += " and " + std::to_string(keys.size() - 10) + " more";
  std::string accepted;
  for (std::string_view a : allowed) accepted += (accepted.empty() ? "" : ", ") + std::string(a);
  throw ApiError(400, problem::kUnknownFields,
                 "unknown field(s)" + (context_.empty() ? std::string() : " in " + context_) +
                     ": " + list + "; accepted here: " + accepted,
                 json{{"unknown_fields", std::move(names)}});
}

void FieldReader::wrong_type(const std::string& key, const char* wanted) const {
  throw bad_request(name(key) + " must be " + wanted + ", got " + type_word(object_.at(key)) + " " +
                    excerpt(object_.at(key)));
}

bool FieldReader::has(const std::string& key) const {
  return object_.contains(key);
}

bool FieldReader::is_null(const std::string& key) const {
  return has(key) && object_.at(key).is_null();
}

const json* FieldReader::raw(const std::string& key) const {
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

std::string FieldReader::required_string(const std::string& key) const {
  auto v = string(key);
  if (!v) throw bad_request("missing required field " + name(key) + " (a string)");
  return *v;
}

std::optional<std::string> FieldReader::string(const std::string& key) const {
  const json* v = raw(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_string()) wrong_type(key, "a string");
  return v->get<std::string>();
}

std::int64_t FieldReader::to_integer(const std::string& key, const json& v) const {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(kMax)) {
      throw ApiError(422, problem::kUnprocessable,
                     name(key) + " is out of range: " + excerpt(v) + " (more than 2^63 - 1)");
    }
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    // A whole number too large for int64 reaches us as a double: it is an integer, just an
    // absurd one (422). Any other double is a wrong type (400).
    const double d = v.get<double>();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) >= 9.2e18) {
      // Read as a double, it prints as 1.8446744073709552e+19: say what the bound is.
      throw ApiError(422, problem::kUnprocessable,
                     name(key) + " is out of range: " + excerpt(v) +
                         " (beyond ±2^63; a number this large is shown as the nearest double)");
    }
    // A whole number written as 1e3 or 1000.0 (hostile round 16: "must be an integer, got a
    // non-integer number 1000.0" read as a contradiction).
    if (std::isfinite(d) && std::trunc(d) == d)
      throw bad_request(name(key) + " must be an integer written without an exponent or a decimal point (" +
                        std::to_string(static_cast<std::int64_t>(d)) + "), got " + excerpt(v));
  }
  throw bad_request(name(key) + " must be an integer, got " + type_word(v) + " " + excerpt(v));
}

std::optional<std::int64_t> FieldReader::integer(const std::string& key) const {
  const json* v = raw(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return to_integer(key, *v);
}

std::int64_t FieldReader::required_integer(const std::string& key) const {
  auto v = integer(key);
  if (!v) throw bad_request("missing required field " + name(key) + " (an integer)");
  return *v;
}

std::optional<std::optional<std::int64_t>> FieldReader::nullable_integer(
    const std::string& key) const {
  const json* v = raw(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_null()) return std::optional<std::int64_t>{};
  return std::optional<std::int64_t>{to_integer(key, *v)};
}

std::optional<std::int64_t> FieldReader::size(const std::string& key) const {
  const json* v = raw(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (v->is_string()) {
    auto bytes = parse_size(v->get_ref<const std::string&>());
    if (!bytes) {
      ApiError e = from_status(bytes.status());
      throw ApiError(e.status(), e.type(), name(key) + ": " + e.detail());
    }
    return *bytes;
  }
  if (v->is_number()) return to_integer(key, *v);
  wrong_type(key, "a number of bytes or a size string such as \"100GiB\"");
}

std::int64_t FieldReader::required_size(const std::string& key) const {
  auto v = size(key);
  if (!v) {
    throw bad_request("missing required field " + name(key) +
                      " (bytes, or a size string such as \"100GiB\")");
  }
  return *v;
}

std::optional<std::vector<std::int64_t>> FieldReader::integer_array(const std::string& key) const {
  const json* v = raw(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_array()) wrong_type(key, "an array of integers");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    out.push_back(to_integer(key + "[" + std::to_string(i) + "]", (*v)[i]));
  }
  return out;
}

std::optional<raid::RaidType> FieldReader::raid_type(const std::string& key) const {
  auto s = string(key);
  if (!s) return std::nullopt;
  auto t = raid::parse_raid_type(*s);
  if (!t) {
    throw bad_request(name(key) + " must be \"RAID10\" or \"RAID5\" (Swordfish spelling), got " +
                      excerpt(*s));
  }
  return t;
}

std::optional<controller::Provisioning> FieldReader::provisioning(const std::string& key) const {
  auto s = string(key);
  if (!s) return std::nullopt;
  auto p = controller::parse_provisioning(*s);
  if (!p) throw bad_request(name(key) + " must be \"thin\" or \"fixed\", got " + excerpt(*s));
  return p;
}

std::optional<controller::MappingAccess> FieldReader::access(const std::string& key) const {
  auto s = string(key);
  if (!s) return std::nullopt;
  auto a = controller::parse_mapping_access(*s);
  if (!a) {
    throw bad_request(name(key) + " must be \"read_write\" or \"read_only\", got " + excerpt(*s));
  }
  return a;
}

std::optional<controller::Id> FieldReader::controller_id(const std::string& key) const {
  const json* v = raw(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    // The ISE's two controllers: any other letter was read as an id ("C" as 3, "Z" as 26), and
    // the array then refused a number the client never sent ("must be 1 or 2, got 3").
    if (s == "A" || s == "B") return s[0] - 'A' + 1;
    throw bad_request(name(key) + " must be a controller id (1, 2) or name (\"A\", \"B\"), got " +
                      excerpt(*v));
  }
  if (v->is_number()) return to_integer(key, *v);
  wrong_type(key, "a controller id (1, 2) or name (\"A\", \"B\")");
}

std::optional<std::vector<controller::Initiator>> FieldReader::initiators(
    const std::string& key) const {
  const json* v = raw(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_array()) wrong_type(key, "an array of {type, address} objects");
  std::vector<controller::Initiator> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    FieldReader item((*v)[i], {"type", "address"}, {}, name(key) + "[" + std::to_string(i) + "]");
    const std::string type = item.required_string("type");
    auto t = controller::parse_initiator_type(type);
    if (!t) {
      throw bad_request(item.name("type") + " must be \"fc\", \"iscsi\" or \"nbd\", got " +
                        excerpt(type));
    }
    std::string address = item.required_string("address");
    // The longest legitimate address is an iSCSI name, at most 223 bytes (RFC 3720 3.2.6.1).
    // The bound also keeps the model's regex checks away from inputs deep enough to
    // exhaust the stack (std::regex recurses per character).
    if (address.size() > kInitiatorAddressMaxChars) {
      throw ApiError(422, problem::kUnprocessable,
                     item.name("address") + " is " + std::to_string(address.size()) +
                         " characters; at most " + std::to_string(kInitiatorAddressMaxChars) +
                         " are accepted");
    }
    out.push_back({*t, std::move(address)});
  }
  return out;
}

std::int64_t parse_query_integer(const std::string& name, const std::string& value,
                                 std::int64_t min, std::int64_t max) {
  const std::string range =
      " (an integer from " + std::to_string(min) + " to " + std::to_string(max) + ")";
  bool digits = !value.empty();
  for (char ch : value) digits = digits && ch >= '0' && ch <= '9';
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (!digits || ec != std::errc() || end != value.data() + value.size()) {
    throw bad_request("query parameter " + name + "=" +
                      json(value).dump(-1, ' ', false, json::error_handler_t::replace) +
                      " is not valid" + range);
  }
  if (n < min || n > max) {
    throw bad_request("query parameter " + name + "=" + value + " is out of range" + range);
  }
  return n;
}

}  // namespace afasim::api
