// Fuzz target: scenario files (workload/scenario.h) against the built-in presets; a fio_file
// a scenario names reads as a small fixed job file, or as missing.
#include <cstdint>
#include <string_view>

#include "config/preset.h"
#include "workload/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const afasim::config::Catalog catalog = afasim::config::Catalog::embedded().value();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto reader = [](const std::string& path) -> afasim::sim::Result<std::string> {
    if (path.find("missing") != std::string::npos) return afasim::sim::not_found(path);
    return std::string("[job]\nrw=randread\nbs=4k\nfilename=v1\nsize=1g\nruntime=1\n");
  };
  (void)afasim::workload::parse_scenario(text, "fuzz.json", catalog, reader);
  return 0;
}
