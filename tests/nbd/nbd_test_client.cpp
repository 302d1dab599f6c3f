#include "tests/nbd/nbd_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace afasim::nbd::testing {

namespace n = proto;

namespace {
void set_timeouts(int fd) {
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}
}  // namespace

TestClient::TestClient(int port) : TestClient(port, "") {}

TestClient::TestClient(int port, const std::string& source) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  if (!source.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    if (::inet_pton(AF_INET, source.c_str(), &from.sin_addr) != 1 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      ::close(fd_);
      throw std::runtime_error("bind to " + source + ": " + std::strerror(errno));
    }
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd_);
    throw std::runtime_error("connect to port " + std::to_string(port) + ": " +
                             std::strerror(errno));
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  set_timeouts(fd_);
}

TestClient::TestClient(const std::string& unix_path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, unix_path.c_str(), sizeof a.sun_path - 1);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd_);
    throw std::runtime_error("connect to " + unix_path + ": " + std::strerror(errno));
  }
  set_timeouts(fd_);
}

TestClient::~TestClient() {
  if (fd_ >= 0) ::close(fd_);
}

void TestClient::send_raw(std::span<const std::uint8_t> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t k = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (k <= 0) throw ConnectionClosed();
    done += static_cast<std::size_t>(k);
  }
}

void TestClient::read_exact(void* dst, std::size_t n) {
  auto* p = static_cast<std::uint8_t*>(dst);
  while (n > 0) {
    const ssize_t k = ::recv(fd_, p, n, 0);
    if (k == 0) throw ConnectionClosed();
    if (k < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        throw std::runtime_error("no answer from the server within 10 s");
      throw ConnectionClosed();  // ECONNRESET and the like
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

std::vector<std::uint8_t> TestClient::read_bytes(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  read_exact(v.data(), n);
  return v;
}

bool TestClient::closed_by_server() {
  std::uint8_t b;
  const ssize_t k = ::recv(fd_, &b, 1, 0);
  if (k == 0) return true;
  if (k < 0) return errno == ECONNRESET;
  return false;
}

void TestClient::set_receive_buffer_bytes(int bytes) {
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

std::uint16_t TestClient::start(std::uint32_t client_flags) {
  const auto g = read_bytes(18);
  if (n::load_u64(g.data()) != n::kInitPasswd || n::load_u64(g.data() + 8) != n::kIHaveOpt)
    throw std::runtime_error("bad greeting");
  std::vector<std::uint8_t> out;
  n::Writer(out).u32(client_flags);
  send_raw(out);
  return n::load_u16(g.data() + 16);
}

void TestClient::send_option(std::uint32_t option, std::span<const std::uint8_t> data) {
  std::vector<std::uint8_t> out;
  n::Writer(out).u64(n::kIHaveOpt).u32(option).u32(static_cast<std::uint32_t>(data.size()));
  out.insert(out.end(), data.begin(), data.end());
  send_raw(out);
}

TestClient::OptionReply TestClient::read_option_reply() {
  const auto h = read_bytes(20);
  if (n::load_u64(h.data()) != n::kOptionReplyMagic)
    throw std::runtime_error("bad option reply magic");
  OptionReply r;
  r.option = n::load_u32(h.data() + 8);
  r.type = n::load_u32(h.data() + 12);
  r.data = read_bytes(n::load_u32(h.data() + 16));
  return r;
}

bool TestClient::structured_reply() {
  send_option(static_cast<std::uint32_t>(n::Option::kStructuredReply));
  const OptionReply r = read_option_reply();
  structured_ = r.type == n::kRepAck;
  return structured_;
}

std::vector<std::string> TestClient::set_meta_context(const std::string& export_name,
                                                      const std::vector<std::string>& queries) {
  std::vector<std::uint8_t> data;
  n::Writer w(data);
  w.u32(static_cast<std::uint32_t>(export_name.size()))
      .bytes(export_name)
      .u32(static_cast<std::uint32_t>(queries.size()));
  for (const auto& q : queries) w.u32(static_cast<std::uint32_t>(q.size())).bytes(q);
  send_option(static_cast<std::uint32_t>(n::Option::kSetMetaContext), data);
  std::vector<std::string> names;
  for (;;) {
    const OptionReply r = read_option_reply();
    if (r.type == n::kRepMetaContext)
      names.emplace_back(r.data.begin() + 4, r.data.end());
    else if (r.type == n::kRepAck)
      return names;
    else
      throw std::runtime_error("SET_META_CONTEXT failed: " + r.text());
  }
}

TestClient::Info TestClient::info(const std::string& export_name, bool go,
                                  std::vector<std::uint16_t> info_types) {
  std::vector<std::uint8_t> data;
  n::Writer w(data);
  w.u32(static_cast<std::uint32_t>(export_name.size()))
      .bytes(export_name)
      .u16(static_cast<std::uint16_t>(info_types.size()));
  for (auto t : info_types) w.u16(t);
  const auto option = static_cast<std::uint32_t>(go ? n::Option::kGo : n::Option::kInfo);
  send_option(option, data);
  Info info;
  for (;;) {
    const OptionReply r = read_option_reply();
    if (r.type == n::kRepAck) {
      info.ok = true;
      return info;
    }
    if (r.type != n::kRepInfo) {
      info.error = r.type;
      info.message = r.text();
      return info;
    }
    const std::uint16_t type = n::load_u16(r.data.data());
    const std::uint8_t* p = r.data.data() + 2;
    if (type == n::kInfoExport) {
      info.size = n::load_u64(p);
      info.flags = n::load_u16(p + 8);
    } else if (type == n::kInfoBlockSize) {
      info.min_block = n::load_u32(p);
      info.preferred_block = n::load_u32(p + 4);
      info.max_block = n::load_u32(p + 8);
    } else if (type == n::kInfoName) {
      info.name.assign(p, r.data.data() + r.data.size());
    } else if (type == n::kInfoDescription) {
      info.description.assign(p, r.data.data() + r.data.size());
    }
  }
}

TestClient::Info TestClient::connect(const std::string& export_name, bool structured) {
  start();
  if (structured) {
    if (!structured_reply()) throw std::runtime_error("structured replies refused");
    set_meta_context(export_name, {std::string(n::kBaseAllocation)});
  }
  Info i = info(export_name, true, {n::kInfoBlockSize});
  if (!i.ok) throw std::runtime_error("GO " + export_name + " failed: " + i.message);
  return i;
}

std::vector<std::string> TestClient::list() {
  send_option(static_cast<std::uint32_t>(n::Option::kList));
  std::vector<std::string> names;
  for (;;) {
    const OptionReply r = read_option_reply();
    if (r.type == n::kRepAck) return names;
    if (r.type != n::kRepServer) throw std::runtime_error("LIST failed: " + r.text());
    const std::uint32_t len = n::load_u32(r.data.data());
    names.emplace_back(r.data.begin() + 4, r.data.begin() + 4 + len);
  }
}

std::uint64_t TestClient::send_request(std::uint16_t type, std::uint64_t offset,
                                       std::uint32_t length, std::uint16_t flags,
                                       std::span<const std::uint8_t> payload) {
  n::RequestHeader h;
  h.type = type;
  h.flags = flags;
  h.handle = next_handle_++;
  h.offset = offset;
  h.length = length;
  std::vector<std::uint8_t> out = n::encode_request_header(h);
  out.insert(out.end(), payload.begin(), payload.end());
  send_raw(out);
  pending_[h.handle] = {type, length};
  return h.handle;
}

TestClient::Reply TestClient::read_reply() {
  Reply r;
  const auto magic_bytes = read_bytes(4);
  const std::uint32_t magic = n::load_u32(magic_bytes.data());
  if (magic == n::kSimpleReplyMagic) {
    const auto rest = read_bytes(12);
    r.error = n::load_u32(rest.data());
    r.handle = n::load_u64(rest.data() + 4);
    const Pending p = pending_.at(r.handle);
    pending_.erase(r.handle);
    if (r.error == 0 && p.type == static_cast<std::uint16_t>(n::Command::kRead))
      r.data = read_bytes(p.length);
    return r;
  }
  if (magic != n::kStructuredReplyMagic) throw std::runtime_error("bad reply magic");
  for (bool first = true;; first = false) {
    const auto h = read_bytes(first ? 16 : 20);
    const std::uint8_t* p = h.data() + (first ? 0 : 4);
    if (!first && n::load_u32(h.data()) != n::kStructuredReplyMagic)
      throw std::runtime_error("bad chunk magic");
    const std::uint16_t flags = n::load_u16(p);
    const std::uint16_t type = n::load_u16(p + 2);
    r.handle = n::load_u64(p + 4);
    const auto payload = read_bytes(n::load_u32(p + 12));
    if (type == n::kReplyTypeOffsetData) {
      r.data.assign(payload.begin() + 8, payload.end());
    } else if (type == n::kReplyTypeBlockStatus) {
      for (std::size_t i = 4; i + 8 <= payload.size(); i += 8)
        r.extents.push_back({n::load_u32(payload.data() + i), n::load_u32(payload.data() + i + 4)});
    } else if (type == n::kReplyTypeError) {
      r.error = n::load_u32(payload.data());
      r.message.assign(payload.begin() + 6, payload.begin() + 6 + n::load_u16(payload.data() + 4));
    }
    if (flags & n::kReplyFlagDone) break;
  }
  pending_.erase(r.handle);
  return r;
}

TestClient::Reply TestClient::request(std::uint16_t type, std::uint64_t offset,
                                      std::uint32_t length, std::uint16_t flags,
                                      std::span<const std::uint8_t> payload) {
  const std::uint64_t handle = send_request(type, offset, length, flags, payload);
  Reply r = read_reply();
  if (r.handle != handle) throw std::runtime_error("reply for another handle");
  return r;
}

TestClient::Reply TestClient::read(std::uint64_t offset, std::uint32_t length,
                                   std::uint16_t flags) {
  return request(static_cast<std::uint16_t>(n::Command::kRead), offset, length, flags);
}

TestClient::Reply TestClient::write(std::uint64_t offset, std::span<const std::uint8_t> data,
                                    std::uint16_t flags) {
  return request(static_cast<std::uint16_t>(n::Command::kWrite), offset,
                 static_cast<std::uint32_t>(data.size()), flags, data);
}

void TestClient::disconnect() {
  send_request(static_cast<std::uint16_t>(n::Command::kDisc), 0, 0);
}

void TestClient::shutdown_send() { ::shutdown(fd_, SHUT_WR); }

std::vector<std::uint8_t> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((seed * 131 + i * 7) % 251);
  return v;
}

}  // namespace afasim::nbd::testing
