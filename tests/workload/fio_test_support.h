// Helpers shared by the fio job-file tests.
#pragma once

#include <doctest/doctest.h>

#include <string_view>
#include <utility>

#include "workload/fio_job.h"

namespace afasim::workload::testing {

// parse_fio_job_file that must succeed (REQUIRE, with the parser's message on failure).
inline FioJobFile parse_job_ok(std::string_view text, std::string_view name = "test.fio") {
  auto r = parse_fio_job_file(text, name);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return std::move(r).value();
}

}  // namespace afasim::workload::testing
