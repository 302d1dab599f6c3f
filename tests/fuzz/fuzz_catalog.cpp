// Fuzz target: the preset files of a --config-dir folder (config/preset.h), as `afasim ...
// --config-dir DIR` reads them. The first byte picks one of the embedded catalog's files
// (sources.json, systems/, ssds/, devices/, models/); the rest replaces its text. The catalog is
// then read as from_directory reads a folder, and every system, device and the reliability
// model are built from it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/preset.h"

namespace {

// The embedded files the catalog reads, in path order.
const std::vector<std::string>& catalog_paths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    for (const auto& [path, text] : afasim::config::embedded_files())
      for (const char* prefix : {"sources.json", "systems/", "ssds/", "devices/", "models/"})
        if (path.rfind(prefix, 0) == 0) out.push_back(path);
    return out;
  }();
  return paths;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::map<std::string, std::string> files = afasim::config::embedded_files();
  files[catalog_paths()[data[0] % catalog_paths().size()]] = std::string(reinterpret_cast<const char*>(data + 1), size - 1);
  auto catalog = afasim::config::Catalog::from_files(files);
  if (!catalog.is_ok()) return 0;
  for (const std::string& name : catalog->system_names()) (void)catalog->system(name);
  for (const std::string& name : catalog->device_names()) (void)catalog->device(name);
  (void)catalog->reliability();
  return 0;
}
