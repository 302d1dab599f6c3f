// sim::Status: an ok Status is a null pointer, an error owns its code and message; copies are
// deep, moves leave the source ok, and Result<T> carries either.
#include "sim/status.h"

#include <doctest/doctest.h>

#include <utility>

using namespace afasim;

TEST_CASE("Status: ok has no message; an error keeps its code and message through copies and moves") {
  const sim::Status ok;
  CHECK(ok.is_ok());
  CHECK(ok.code() == sim::Code::kOk);
  CHECK(ok.message().empty());
  CHECK(ok.to_string() == "ok");
  CHECK(sim::Status(sim::Code::kOk, "ignored").is_ok());

  sim::Status e = sim::not_found("volume 7 is not scheduled");
  CHECK_FALSE(e.is_ok());
  CHECK(e.code() == sim::Code::kNotFound);
  CHECK(e.to_string() == "not found: volume 7 is not scheduled");

  sim::Status copy = e;  // deep: the copy outlives the original
  e = sim::Status::ok();
  CHECK(e.is_ok());
  CHECK(copy.code() == sim::Code::kNotFound);
  CHECK(copy.message() == "volume 7 is not scheduled");

  sim::Status assigned = sim::io_error("x");
  assigned = copy;
  CHECK(assigned.message() == copy.message());
  CHECK(&assigned.message() != &copy.message());
  assigned = assigned;  // NOLINT: self-assignment keeps the error
  CHECK(assigned.code() == sim::Code::kNotFound);

  sim::Status moved = std::move(copy);
  CHECK(moved.code() == sim::Code::kNotFound);
  CHECK(copy.is_ok());  // NOLINT: a moved-from Status is ok
}

TEST_CASE("Result: a value or the error it was built from") {
  sim::Result<int> v = 5;
  CHECK(v.is_ok());
  CHECK(v.status().is_ok());
  sim::Result<int> e = sim::unavailable("powered off");
  CHECK_FALSE(e.is_ok());
  CHECK(e.status().code() == sim::Code::kUnavailable);
  CHECK(e.status().message() == "powered off");
}
