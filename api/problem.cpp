#include "api/problem.h"

#include "http/message.h"

namespace afasim::api {

ApiError::ApiError(int status, std::string type, std::string detail, nlohmann::json extra)
    : std::runtime_error(detail),
      status_(status),
      type_(std::move(type)),
      detail_(std::move(detail)),
      extra_(std::move(extra)) {}

nlohmann::json ApiError::to_json(const std::string& instance) const {
  nlohmann::json doc = {{"type", type_},
                        {"title", status_title(status_)},
                        {"status", status_},
                        {"detail", detail_},
                        {"instance", instance}};
  if (extra_.is_object()) {
    for (const auto& [k, v] : extra_.items()) doc[k] = v;
  }
  return doc;
}

const char* status_title(int status) {
  return http::status_title(status);
}

ApiError bad_request(std::string detail) {
  return ApiError(400, problem::kBadRequest, std::move(detail));
}

ApiError not_found(std::string detail) {
  return ApiError(404, problem::kNotFound, std::move(detail));
}

ApiError from_status(const sim::Status& status) {
  const std::string& m = status.message();
  switch (status.code()) {
    case sim::Code::kInvalidArgument:
      return ApiError(400, problem::kBadRequest, m);
    case sim::Code::kNotFound:
      return ApiError(404, problem::kNotFound, m);
    case sim::Code::kConflict:
      return ApiError(409, problem::kConflict, m);
    case sim::Code::kReadOnly:
      return ApiError(409, problem::kConflict, m);
    case sim::Code::kPreconditionFailed:
      return ApiError(412, problem::kPreconditionFailed, m);
    case sim::Code::kUnprocessable:
      return ApiError(422, problem::kUnprocessable, m);
    case sim::Code::kOutOfRange:
      return ApiError(422, problem::kUnprocessable, m);
    case sim::Code::kNoSpace:
      return ApiError(422, problem::kNoSpace, m);
    case sim::Code::kUnavailable:
      return ApiError(503, problem::kUnavailable, m);
    case sim::Code::kIoError:
    case sim::Code::kInternal:
    case sim::Code::kOk:
      break;
  }
  return ApiError(500, problem::kInternal, m.empty() ? "internal error" : m);
}

}  // namespace afasim::api
