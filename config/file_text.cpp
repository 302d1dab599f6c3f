#include "config/file_text.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ios>
#include <streambuf>
#include <utility>
#include <vector>

namespace afasim::config {

namespace {

// A read buffer over a descriptor it owns and closes. Reads without blocking and waits in
// poll(2) between them, so that `stop` (a signal handler's flag) ends the input even while a
// pipe's writer is silent (review 32: `afasim trace -` waited out SIGTERM, the stream library
// retrying the interrupted read). A read error makes the stream bad.
class DescriptorBuf : public std::streambuf {
 public:
  DescriptorBuf(int fd, const std::atomic<bool>* stop) : fd_(fd), stop_(stop), buffer_(kBufferBytes) {
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    struct stat st {};
    // A FIFO read with a stop flag waits for its first writer, as `cat` does (hostile round 37:
    // `mkfifo p; afasim trace p` before the writer opened it said "the trace is empty"). Without
    // a flag nothing could end that wait, so it reads as empty, as before (hostile round 17).
    awaiting_writer_ = stop_ != nullptr && ::fstat(fd_, &st) == 0 && S_ISFIFO(st.st_mode);
  }
  ~DescriptorBuf() override { ::close(fd_); }
  DescriptorBuf(const DescriptorBuf&) = delete;
  DescriptorBuf& operator=(const DescriptorBuf&) = delete;

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    while (true) {
      // Before each read too, not only while waiting: a source that never runs dry (/dev/zero,
      // /dev/urandom) ends on the flag as well (hostile round 37: `afasim trace /dev/zero
      // --skip-bad` ran on for minutes after SIGTERM).
      if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) return traits_type::eof();
      const ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
      if (n > 0) {
        awaiting_writer_ = false;
        setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
        return traits_type::to_int_type(buffer_[0]);
      }
      pollfd p{fd_, POLLIN, 0};
      if (n == 0) {
        if (!awaiting_writer_) return traits_type::eof();
        // No writer yet: poll waits until one writes (POLLIN) or came and went (POLLHUP: the
        // end, nothing written). Linux's poll does not wake for a FIFO that never had one.
        if (::poll(&p, 1, 250) > 0 && (p.revents & POLLHUP) != 0 && (p.revents & POLLIN) == 0)
          return traits_type::eof();
        continue;
      }
      if (errno != EAGAIN && errno != EINTR) throw std::ios_base::failure(std::strerror(errno));
      ::poll(&p, 1, 250);  // a signal cuts it short; the flag is read again either way
    }
  }

 private:
  static constexpr std::size_t kBufferBytes = 256 * 1024;
  int fd_;
  const std::atomic<bool>* stop_;
  bool awaiting_writer_ = false;  // a FIFO with a stop flag, nothing read from it yet
  std::vector<char> buffer_;
};

// An istream over a DescriptorBuf.
class DescriptorStream : public std::istream {
 public:
  DescriptorStream(int fd, const std::atomic<bool>* stop) : std::istream(nullptr), buf_(fd, stop) { rdbuf(&buf_); }

 private:
  DescriptorBuf buf_;
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
  struct stat st {};
  const bool fifo = fd.is_ok() && ::fstat(*fd, &st) == 0 && S_ISFIFO(st.st_mode);
  auto text = fd.is_ok() ? read_descriptor(*fd, max_bytes) : sim::Result<std::string>(fd.status());
  if (!text.is_ok()) return sim::Status(text.status().code(), "cannot read " + path + ": " + text.status().message());
  // A named FIFO read before its writer came gives its end at once: say so, not "invalid JSON:
  // unexpected end of input" or "no job sections" (hostile round 44).
  if (fifo && text->empty())
    return sim::invalid_argument("cannot read " + path + ": a FIFO with no writer (start its writer first) or an empty one");
  return text;
}

sim::Result<std::unique_ptr<std::istream>> open_file_stream(const std::string& path, const std::atomic<bool>* stop) {
  auto fd = open_for_reading(path);
  if (!fd.is_ok()) return fd.status();
  return std::unique_ptr<std::istream>(std::make_unique<DescriptorStream>(*fd, stop));
}

namespace {
// A whole UTF-8 sequence that prints as nothing, or reorders what follows it: the byte-order
// mark (a second one inside a concatenated CSV was a field that read as "Timestamp": hostile
// review 43), zero-width characters and marks, and the bidirectional embeddings, overrides and
// isolates that can make a message read other than it is ("Trojan Source", CVE-2021-42574).
bool invisible(std::string_view sequence) {
  const auto b = [&sequence](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(sequence[k])); };
  std::uint32_t cp = 0;
  if (sequence.size() == 2) cp = (b(0) & 0x1f) << 6 | (b(1) & 0x3f);
  else if (sequence.size() == 3) cp = (b(0) & 0x0f) << 12 | (b(1) & 0x3f) << 6 | (b(2) & 0x3f);
  else if (sequence.size() == 4) cp = (b(0) & 0x07) << 18 | (b(1) & 0x3f) << 12 | (b(2) & 0x3f) << 6 | (b(3) & 0x3f);
  else return false;
  // And the line and paragraph separators (a line break a terminal may take), the Mongolian
  // vowel separator, and the tag characters (invisible text: re-test of round 44).
  return cp == 0xad || cp == 0x61c || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) ||
         (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff ||
         (cp >= 0xe0000 && cp <= 0xe007f);
}
}  // namespace

std::string printable(std::string_view text, bool keep_lines) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escape = [&out](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      const bool line = keep_lines && (c == '\n' || c == '\t');
      if ((c < 0x20 && !line) || c == 0x7f) escape(c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence is kept whole unless it is a C1 control (U+0080..U+009F, lead byte
    // 0xc2); a byte that starts none (a lone 0x9b, an 8-bit terminal's CSI) is escaped.
    const std::size_t length = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool whole = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; whole && k < length; ++k) whole = (byte(i + k) & 0xc0) == 0x80;
    if (!whole) {
      escape(c);
      ++i;
    } else if ((c == 0xc2 && byte(i + 1) <= 0x9f) || invisible(text.substr(i, length))) {
      for (std::size_t k = 0; k < length; ++k) escape(byte(i + k));
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string_view compression_of(std::string_view first_bytes) {
  static constexpr std::pair<std::string_view, std::string_view> kMagic[] = {
      {"\x1f\x8b", "gzip"}, {"\xfd" "7zXZ", "xz"}, {"\x28\xb5\x2f\xfd", "zstd"}, {"BZh", "bzip2"}};
  for (const auto& [magic, kind] : kMagic) {
    if (first_bytes.rfind(magic, 0) != 0) continue;
    // "BZh" begins words too: bzip2's block size digit and block magic follow it.
    if (kind == "bzip2" && (first_bytes.size() < 10 || first_bytes.substr(4, 6) != "\x31\x41\x59\x26\x53\x59")) continue;
    return kind;
  }
  return {};
}

}  // namespace afasim::config
