// Fuzz target: every size and time syntax a user writes: API and scenario sizes
// (config/size.h), fio's sizes, size-or-percent and times (workload/fio_job.h), and the API's
// query integers.
#include <cstdint>
#include <string>
#include <string_view>

#include "api/fields.h"
#include "api/problem.h"
#include "config/size.h"
#include "workload/fio_job.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)afasim::config::parse_size(text);
  (void)afasim::workload::parse_fio_size(text, 1024);
  (void)afasim::workload::parse_fio_size(text, 1000);
  (void)afasim::workload::parse_fio_size_or_percent(text, 1024);
  (void)afasim::workload::parse_fio_time(text, 1'000'000'000);
  if (auto bytes = afasim::config::parse_size(text); bytes.is_ok())
    (void)afasim::config::human_bytes(*bytes, 6);
  try {
    (void)afasim::api::parse_query_integer("limit", std::string(text), 0, 1000);
  } catch (const afasim::api::ApiError&) {
  }
  return 0;
}
