#include "sim/status.h"

namespace afasim::sim {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kNotFound: return "not found";
    case Code::kConflict: return "conflict";
    case Code::kPreconditionFailed: return "precondition failed";
    case Code::kUnprocessable: return "unprocessable";
    case Code::kNoSpace: return "no space";
    case Code::kIoError: return "I/O error";
    case Code::kReadOnly: return "read-only";
    case Code::kOutOfRange: return "out of range";
    case Code::kUnavailable: return "unavailable";
    case Code::kInternal: return "internal error";
  }
  return "unknown";
}

const std::string Status::kNoMessage;

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(code_name(rep_->code)) + ": " + rep_->message;
}

}  // namespace afasim::sim
