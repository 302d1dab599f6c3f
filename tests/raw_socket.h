// A blocking TCP socket for tests that play a hostile or careless client: connect from a
// chosen loopback address (127.0.0.2 is another client address to the server), send bytes
// as slowly as wanted, read with a deadline. POSIX only; one thread per socket.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace afasim::testing {

class RawSocket {
 public:
  // Connects to 127.0.0.1:port from `from` (a loopback address). connected() says whether
  // it worked; a server that accepts and closes at once still counts as connected here.
  RawSocket(int port, const char* from = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &local.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      close();
      return;
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) close();
  }
  ~RawSocket() { close(); }
  RawSocket(RawSocket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  RawSocket& operator=(RawSocket&&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int local_port() const {
    sockaddr_in a{};
    socklen_t n = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n);
    return ntohs(a.sin_port);
  }

  // Sends all of `data`; false when the peer has closed (no SIGPIPE).
  bool send(const std::string& data) {
    std::size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Reads until `until` appears in what was read, the peer closes, or `timeout` passes.
  std::string read_until(const std::string& until, std::chrono::milliseconds timeout) {
    std::string got;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (got.find(until) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[16384];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_by_peer_ = true;
        break;
      }
      got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
  }

  // True when the peer closes (or resets) the connection within `timeout`; data it sends
  // first is read and dropped.
  bool closed_within(std::chrono::milliseconds timeout) {
    read_until(std::string(1, '\0') + "never", timeout);
    return closed_by_peer_;
  }

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool closed_by_peer_ = false;
};

// The status code of the first response in `raw` ("HTTP/1.1 431 ..."), or 0.
inline int status_of(const std::string& raw) {
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12) return 0;
  return std::atoi(raw.substr(9, 3).c_str());
}

}  // namespace afasim::testing
