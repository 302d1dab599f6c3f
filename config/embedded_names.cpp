// config::embedded_json_names: the built-ins of a folder of the embedded config files.
#include <string>
#include <string_view>
#include <vector>

#include "config/preset.h"

namespace afasim::config {

std::vector<std::string> embedded_json_names(std::string_view folder) {
  const std::string prefix = std::string(folder) + "/";
  std::vector<std::string> names;
  for (const auto& [path, text] : embedded_files())
    if (path.size() > prefix.size() + 5 && path.rfind(prefix, 0) == 0 && path.compare(path.size() - 5, 5, ".json") == 0 &&
        path.find('/', prefix.size()) == std::string::npos)
      names.push_back(path.substr(prefix.size(), path.size() - prefix.size() - 5));
  return names;
}

}  // namespace afasim::config
