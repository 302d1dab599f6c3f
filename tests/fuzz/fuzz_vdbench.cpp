// Fuzz target: VDBench parameter files (workload/vdbench_parm.h), as `afasim vdbench` reads them.
#include <cstdint>
#include <string>

#include "workload/vdbench_parm.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)afasim::workload::parse_vdbench(text, "fuzz.parm");
  return 0;
}
