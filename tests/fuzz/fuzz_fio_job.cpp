// Fuzz target: fio job files (workload/fio_job.h), as `afasim fio` and scenarios read them.
#include <cstdint>
#include <string_view>

#include "workload/fio_job.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)afasim::workload::parse_fio_job_file(text, "fuzz.fio");
  return 0;
}
