// HTTP errors of the management API as RFC 9457 problem documents
// (application/problem+json: type, title, status, detail).
//
// Handlers throw ApiError; RestServer catches it at the edge and writes the document. A
// sim::Status from the model becomes an ApiError through from_status(). Value types;
// thread-safe as values are.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "http/message.h"
#include "sim/status.h"

namespace afasim::api {

// The problem `type` URIs (docs/api.md lists them with their HTTP status); those the HTTP
// front end answers with itself are its own (http/message.h).
namespace problem {
inline constexpr const char* kBadRequest = http::problem::kBadRequest;
inline constexpr const char* kUnknownFields = "urn:afasim:problem:unknown-fields";
inline constexpr const char* kNotFound = http::problem::kNotFound;
inline constexpr const char* kMethodNotAllowed = http::problem::kMethodNotAllowed;
inline constexpr const char* kConflict = "urn:afasim:problem:conflict";
inline constexpr const char* kPreconditionFailed = "urn:afasim:problem:precondition-failed";
inline constexpr const char* kPayloadTooLarge = http::problem::kPayloadTooLarge;
inline constexpr const char* kUnsupportedMediaType = "urn:afasim:problem:unsupported-media-type";
inline constexpr const char* kUnprocessable = "urn:afasim:problem:unprocessable";
inline constexpr const char* kImmutableField = "urn:afasim:problem:immutable-field";
inline constexpr const char* kNoSpace = "urn:afasim:problem:no-space";
inline constexpr const char* kUnavailable = "urn:afasim:problem:unavailable";
inline constexpr const char* kInternal = http::problem::kInternal;
inline constexpr const char* kUnauthorized = "urn:afasim:problem:unauthorized";
inline constexpr const char* kForbidden = "urn:afasim:problem:forbidden";
inline constexpr const char* kTooManyFailedLogins = "urn:afasim:problem:too-many-failed-logins";
inline constexpr const char* kPasswordChecksBusy = "urn:afasim:problem:password-checks-busy";
}  // namespace problem

class ApiError : public std::runtime_error {
 public:
  // `extra` (a JSON object or null) adds members to the document, e.g. unknown_fields.
  ApiError(int status, std::string type, std::string detail, nlohmann::json extra = nullptr);

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& detail() const { return detail_; }
  const nlohmann::json& extra() const { return extra_; }
  // Seconds for a Retry-After header (a 429 or 503 that says when to come back); 0: none.
  std::int64_t retry_after_s() const { return retry_after_s_; }
  ApiError& with_retry_after_s(std::int64_t seconds) {
    retry_after_s_ = seconds;
    return *this;
  }
  // The problem document; `instance` is the request path.
  nlohmann::json to_json(const std::string& instance) const;

 private:
  int status_;
  std::string type_;
  std::string detail_;
  nlohmann::json extra_;
  std::int64_t retry_after_s_ = 0;
};

// The reason phrase of an HTTP status ("Unprocessable Content" for 422), the `title`.
const char* status_title(int status);

// 400 bad-request.
ApiError bad_request(std::string detail);
// 404 not-found.
ApiError not_found(std::string detail);
// The ApiError for a model error. REQUIRES: !status.is_ok().
// kInvalidArgument 400, kNotFound 404, kConflict 409, kPreconditionFailed 412,
// kUnprocessable/kOutOfRange 422, kNoSpace 422 (type no-space), kReadOnly 409,
// kUnavailable 503, kIoError/kInternal 500.
ApiError from_status(const sim::Status& status);

}  // namespace afasim::api
