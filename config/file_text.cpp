#include "config/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace afasim::config {

sim::Result<std::string> read_file_text(const std::string& path, std::size_t max_bytes) {
  // Opened without blocking, so that a FIFO nobody writes reads as empty instead of hanging
  // the command (hostile round 17: fio, run, sweep waited for ever); a pipe with a writer
  // (`<(...)`) is then read blocking, as any file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    // The system's reason (no such file, permission denied); it said only "cannot read".
    return sim::not_found("cannot read " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return sim::invalid_argument("cannot read " + path + ": a directory");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buf[65536];
  while (text.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return sim::io_error("cannot read " + path + ": " + std::strerror(error));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace afasim::config
