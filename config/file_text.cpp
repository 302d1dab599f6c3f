#include "config/file_text.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace afasim::config {

sim::Result<std::string> read_file_text(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return sim::invalid_argument("cannot read " + path + ": a directory");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // The system's reason (no such file, permission denied); it said only "cannot read".
    const int error = errno;
    return sim::not_found("cannot read " + path + (error != 0 ? std::string(": ") + std::strerror(error) : ""));
  }
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) break;
  }
  if (in.bad()) return sim::io_error("cannot read " + path);
  return text;
}

}  // namespace afasim::config
