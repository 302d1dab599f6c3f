#include "config/file_text.h"

#include <ext/stdio_filebuf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace afasim::config {

namespace {

// An istream over a descriptor it owns (libstdc++'s stdio_filebuf closes it).
class DescriptorStream : public std::istream {
 public:
  explicit DescriptorStream(int fd) : std::istream(nullptr), buf_(fd, std::ios::in | std::ios::binary, kBufferBytes) {
    rdbuf(&buf_);
  }

 private:
  static constexpr std::size_t kBufferBytes = 256 * 1024;
  __gnu_cxx::stdio_filebuf<char> buf_;
};

}  // namespace

sim::Result<int> open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return sim::not_found(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return sim::invalid_argument("a directory");
  }
  // Blocking from here: a FIFO without a writer gives its end at once, a pipe with one waits.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

sim::Result<std::string> read_descriptor(int fd, std::size_t max_bytes) {
  std::string text;
  char buf[65536];
  while (text.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return sim::io_error(std::strerror(error));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

sim::Result<std::string> read_file_text(const std::string& path, std::size_t max_bytes) {
  auto fd = open_for_reading(path);
  auto text = fd.is_ok() ? read_descriptor(*fd, max_bytes) : sim::Result<std::string>(fd.status());
  if (!text.is_ok()) return sim::Status(text.status().code(), "cannot read " + path + ": " + text.status().message());
  return text;
}

sim::Result<std::unique_ptr<std::istream>> open_file_stream(const std::string& path) {
  auto fd = open_for_reading(path);
  if (!fd.is_ok()) return fd.status();
  return std::unique_ptr<std::istream>(std::make_unique<DescriptorStream>(*fd));
}

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escape = [&out](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xc2 && i + 1 < text.size() &&  // U+0080..U+009F in UTF-8
                    static_cast<unsigned char>(text[i + 1]) >= 0x80 && static_cast<unsigned char>(text[i + 1]) <= 0x9f;
    if (c1) {
      escape(c);
      escape(static_cast<unsigned char>(text[++i]));
    } else if (c < 0x20 || c == 0x7f) {
      escape(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace afasim::config
