// The helpers every part of the Redfish service shares (internal.h): errors in Redfish's
// shape, JSON responses, ETags, If-Match and request bodies.
#include "redfish/internal.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "api/auth.h"
#include "api/fields.h"
#include "api/observe.h"
#include "config/json_text.h"

namespace afasim::redfish {

RedfishError not_found(const std::string& what) {
  return RedfishError(404, "ResourceNotFound", "The requested resource (" + what + ") was not found.");
}

void require_members(const json& body, std::initializer_list<const char*> required) {
  std::vector<std::string> missing, pointers;
  for (const char* key : required)
    if (!body.contains(key)) {
      missing.push_back(key);
      pointers.push_back(std::string("#/") + key);
    }
  if (missing.empty()) return;
  std::string names = missing[0];
  for (std::size_t i = 1; i < missing.size(); ++i) names += (i + 1 == missing.size() ? " and " : ", ") + missing[i];
  const bool one = missing.size() == 1;
  throw RedfishError(400, "CreateFailedMissingReqProperties",
                     std::string("The create operation failed because the required ") + (one ? "property " : "properties ") +
                         names + (one ? " was" : " were") + " missing from the request.",
                     pointers);
}

RedfishError unknown_property(const std::string& prefix, const std::string& key) {
  const bool plain =
      !key.empty() && key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '@' || c == '.' ||
               c == '#';
      });
  std::string shown = key.size() > 64 ? key.substr(0, 61) + "..." : key;
  if (!plain) shown = json(shown).dump(-1, ' ', false, json::error_handler_t::replace);
  std::string pointer = "#/" + prefix;
  for (char c : key)
    pointer += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return RedfishError(400, "PropertyUnknown",
                      "The property " + prefix + shown +
                          " is not in the list of valid properties for the resource.",
                      {pointer});
}

RedfishError password_checks_busy(const std::string& detail) {
  RedfishError e(503, "ServiceTemporarilyUnavailable",
                 "The service is temporarily unavailable: " + detail + ".", {},
                 "Wait for the indicated retry duration and retry the operation.");
  e.retry_after_s = static_cast<int>(api::kPasswordBusyRetryAfterS);
  return e;
}

RedfishError too_many_failed_logins(const std::string& detail, std::int64_t wait_s) {
  RedfishError e(429, "GeneralError", detail + ".");
  e.retry_after_s = static_cast<int>(wait_s);
  return e;
}

RedfishError from_status(const sim::Status& s, std::vector<std::string> related) {
  const std::string& m = s.message();
  switch (s.code()) {
    case sim::Code::kInvalidArgument: return RedfishError(400, "PropertyValueError", m, std::move(related));
    case sim::Code::kNotFound: return RedfishError(404, "ResourceNotFound", m, std::move(related));
    case sim::Code::kConflict: return RedfishError(409, "ResourceInUse", m, std::move(related));
    case sim::Code::kPreconditionFailed: return RedfishError(412, "PreconditionFailed", m, std::move(related));
    case sim::Code::kUnprocessable: return RedfishError(400, "PropertyValueConflict", m, std::move(related));
    case sim::Code::kOutOfRange: return RedfishError(400, "PropertyValueOutOfRange", m, std::move(related));
    case sim::Code::kNoSpace: return RedfishError(507, "InsufficientStorage", m, std::move(related));
    case sim::Code::kReadOnly: return RedfishError(409, "OperationNotAllowed", m, std::move(related));
    case sim::Code::kUnavailable: return RedfishError(503, "ServiceTemporarilyUnavailable", m, std::move(related));
    default: return RedfishError(500, "InternalError", m, std::move(related));
  }
}

json error_body(const RedfishError& e) {
  const char* severity = e.status >= 500 ? "Critical" : "Warning";
  json info = {{"@odata.type", "#Message.v1_3_0.Message"},
               {"MessageId", std::string(kBaseRegistry) + "." + e.message_id},
               {"Message", e.message},
               {"MessageSeverity", severity},
               {"Resolution", e.resolution.empty() ? "Correct the request and resubmit it." : e.resolution}};
  if (!e.related.empty()) info["RelatedProperties"] = e.related;
  return {{"error", {{"code", std::string(kBaseRegistry) + "." + e.message_id},
                     {"message", e.message},
                     {"@Message.ExtendedInfo", json::array({info})}}}};
}

http::Response json_response(int status, const json& body) {
  http::Response res(status, body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json;charset=utf-8");
  res.headers.set("OData-Version", "4.0");
  res.headers.set("Cache-Control", "no-cache");
  if (body.is_object() && body.contains("@odata.etag")) res.headers.set("ETag", body["@odata.etag"].get<std::string>());
  return res;
}

std::string etag_for(std::uint64_t revision, const json& body) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char ch : body.dump()) h = (h ^ ch) * 1099511628211ULL;
  char buf[64];
  std::snprintf(buf, sizeof buf, "\"%llu-%016llx\"", static_cast<unsigned long long>(revision),
                static_cast<unsigned long long>(h));
  return buf;
}

bool IfMatch::matches(std::uint64_t current) const {
  return std::find(revisions.begin(), revisions.end(), current) != revisions.end();
}

std::optional<std::int64_t> parse_last_event_id(const http::Request& r) {
  if (!r.has_header("Last-Event-ID")) return std::nullopt;
  if (r.headers.count("Last-Event-ID") > 1)
    throw RedfishError(400, "HeaderInvalid", "Last-Event-ID is given more than once: send the id of the last event once");
  const std::string h = r.header("Last-Event-ID");
  if (const std::optional<std::int64_t> id = api::parse_event_id(h)) return id;
  throw RedfishError(400, "HeaderInvalid",
                     "The Last-Event-ID header is not the id of an event (the stream's \"id:\" lines, a whole number "
                     "up to 9223372036854775807): " +
                         config::printable(h.substr(0, 40)));
}

std::optional<IfMatch> parse_if_match(const http::Request& r) {
  if (!r.has_header("If-Match")) return std::nullopt;
  const std::string& v = r.header("If-Match");
  const auto invalid = [&] {
    return RedfishError(400, "HeaderInvalid", "The If-Match header is not \"*\" or a list of ETags: " + v.substr(0, 80));
  };
  // RFC 9110 13.1.1: "*" or a comma-separated list of entity tags, compared strongly: a weak
  // tag (W/"...") never matches, and the list matches when any tag does (hostile round 31:
  // W/ matched, and only the first tag of a list was read).
  IfMatch out;
  std::size_t i = 0;
  const auto skip_space = [&] {
    while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
  };
  skip_space();
  if (v.compare(i, 1, "*") == 0 && v.find_first_not_of(" \t", i + 1) == std::string::npos)
    return std::nullopt;  // "*" alone: any current representation ("*" in a list is invalid)
  int tags = 0;
  while (true) {
    // RFC 9110 5.6.1: empty list elements are accepted ("a, , b").
    skip_space();
    while (i < v.size() && v[i] == ',') {
      ++i;
      skip_space();
    }
    if (i == v.size() && tags > 0) return out;
    const bool weak = v.compare(i, 2, "W/") == 0;
    if (weak) i += 2;
    if (i >= v.size() || v[i] != '"') throw invalid();
    const std::size_t close = v.find('"', i + 1);
    if (close == std::string::npos) throw invalid();
    const std::string tag = v.substr(i + 1, close - i - 1);
    i = close + 1;
    ++tags;
    // A tag afasim made is "<revision>-<digest>" (etag_for); only the revision is compared.
    const std::size_t digits = std::min(tag.find_first_not_of("0123456789"), tag.size());
    if (!weak && digits > 0 && digits <= 19 && (digits == tag.size() || tag[digits] == '-'))
      out.revisions.push_back(std::stoull(tag.substr(0, digits)));
    skip_space();
    if (i == v.size()) return out;
    if (v[i] != ',') throw invalid();
    ++i;
  }
}

json parse_body(const http::Request& r) {
  const std::string& type = r.header("Content-Type");
  if (!type.empty() && type.rfind("application/json", 0) != 0)
    throw RedfishError(415, "UnrecognizedRequestBody", "The request body must be application/json, not " + type.substr(0, 80) + ".");
  // Parsed as /api/v1 parses (api::parse_body_object's rules): a member given twice is refused,
  // not taken last-wins (hostile round 31: {"RoleId":"ReadOnly","RoleId":"Administrator"}
  // made an Administrator), and so is nesting deeper than api::kBodyMaxDepth.
  config::JsonParseOptions options;
  options.max_depth = api::kBodyMaxDepth;
  config::JsonParseError error;
  auto parsed = config::parse_json_strict(r.body, options, &error);
  if (!parsed.is_ok()) {
    std::string path = error.path.size() > 64 ? error.path.substr(0, 61) + "..." : error.path;
    path = json(path).dump(-1, ' ', false, json::error_handler_t::replace);
    switch (error.kind) {
      case config::JsonParseError::Kind::kDuplicateKey:
        throw RedfishError(400, "MalformedJSON", "The request body has the property " + path + " twice; give each property once.");
      case config::JsonParseError::Kind::kTooDeep:
        throw RedfishError(400, "MalformedJSON", "The request body is nested deeper than " +
                                                     std::to_string(api::kBodyMaxDepth) + " levels.");
      case config::JsonParseError::Kind::kNumberTooLarge:
      case config::JsonParseError::Kind::kSyntax:
        break;
    }
    throw RedfishError(400, "MalformedJSON", "The request body submitted was malformed JSON and could not be parsed by the receiving service.");
  }
  const json body = std::move(parsed).value();
  if (!body.is_object())
    throw RedfishError(400, "UnrecognizedRequestBody", "The request body must be one JSON object.");
  return body;
}

}  // namespace afasim::redfish
