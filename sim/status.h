// Errors a caller can cause, as values (STYLE.md rule 5).
//
// Status is either ok or an error code with a human-readable message. Result<T> holds a T
// or a non-ok Status. Each layer returns these; only the API and CLI edges turn them into
// HTTP problem documents, NBD errno values or exit codes. Not thread-safe beyond what a
// value type gives.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "sim/assert.h"

namespace afasim::sim {

// The kinds of error a caller can cause. The mapping to HTTP and NBD lives at the edges:
// kInvalidArgument → 400 / EINVAL, kNotFound → 404, kConflict → 409,
// kPreconditionFailed → 412, kUnprocessable → 422, kNoSpace → 422 / ENOSPC,
// kIoError → EIO, kReadOnly → EPERM, kOutOfRange → EINVAL, kUnavailable → 503 / ESHUTDOWN.
enum class Code {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kConflict,
  kPreconditionFailed,
  kUnprocessable,
  kNoSpace,
  kIoError,
  kReadOnly,
  kOutOfRange,
  kUnavailable,
  kInternal,
};

std::string_view code_name(Code code);

// An ok Status is one null pointer (LevelDB's Status keeps its state the same way): making,
// moving, testing and dropping one costs what a pointer does, which matters on the I/O path
// where every request carries one; an error's code and message live on the heap.
class [[nodiscard]] Status {
 public:
  Status() = default;
  // An error. Code::kOk makes an ok Status (the message is dropped).
  Status(Code code, std::string message)
      : rep_(code == Code::kOk ? nullptr : new Rep{code, std::move(message)}) {}
  Status(const Status& other) : rep_(other.rep_ ? new Rep(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_.reset(other.rep_ ? new Rep(*other.rep_) : nullptr);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status ok() { return {}; }

  bool is_ok() const { return rep_ == nullptr; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  // "" when ok.
  const std::string& message() const { return rep_ ? rep_->message : kNoMessage; }
  // "kind: message", for logs and CLI errors.
  std::string to_string() const;

 private:
  struct Rep {
    Code code;
    std::string message;
  };
  static const std::string kNoMessage;
  std::unique_ptr<Rep> rep_;
};

[[gnu::cold]] inline Status invalid_argument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
[[gnu::cold]] inline Status not_found(std::string m) { return {Code::kNotFound, std::move(m)}; }
[[gnu::cold]] inline Status conflict(std::string m) { return {Code::kConflict, std::move(m)}; }
[[gnu::cold]] inline Status precondition_failed(std::string m) {
  return {Code::kPreconditionFailed, std::move(m)};
}
[[gnu::cold]] inline Status unprocessable(std::string m) { return {Code::kUnprocessable, std::move(m)}; }
[[gnu::cold]] inline Status no_space(std::string m) { return {Code::kNoSpace, std::move(m)}; }
[[gnu::cold]] inline Status io_error(std::string m) { return {Code::kIoError, std::move(m)}; }
[[gnu::cold]] inline Status unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }

// A T or an error. REQUIRES: the Status given is not ok.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {
    AFASIM_ASSERT(!std::get<Status>(v_).is_ok(), "Result built from an ok Status");
  }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }

  // REQUIRES: is_ok().
  T& value() & {
    AFASIM_ASSERT(is_ok(), "Result::value on an error");
    return std::get<T>(v_);
  }
  const T& value() const& {
    AFASIM_ASSERT(is_ok(), "Result::value on an error");
    return std::get<T>(v_);
  }
  T&& value() && {
    AFASIM_ASSERT(is_ok(), "Result::value on an error");
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The error, or an ok Status when a value is held.
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace afasim::sim

// Returns early from the enclosing function with the error of `expr` if it is not ok.
#define AFASIM_RETURN_IF_ERROR(expr)           \
  do {                                         \
    ::afasim::sim::Status _st = (expr);        \
    if (!_st.is_ok()) return _st;              \
  } while (0)
