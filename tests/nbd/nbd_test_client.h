// A deliberately plain NBD client for the target's tests: blocking sockets, every message
// built by hand from nbd/nbd_protocol.h, so that a test can send what a well-behaved
// client never would (bad magic, unknown commands, lengths past the end). Every receive
// times out after 10 s, so a server that stops answering fails the test instead of
// hanging it. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbd/nbd_protocol.h"

namespace afasim::nbd::testing {

// Command codes as the wire carries them (NBD_CMD_*, 16 bits), for building raw requests.
inline constexpr auto kRead = static_cast<std::uint16_t>(proto::Command::kRead);
inline constexpr auto kWrite = static_cast<std::uint16_t>(proto::Command::kWrite);
inline constexpr auto kFlush = static_cast<std::uint16_t>(proto::Command::kFlush);
inline constexpr auto kTrim = static_cast<std::uint16_t>(proto::Command::kTrim);
inline constexpr auto kZero = static_cast<std::uint16_t>(proto::Command::kWriteZeroes);
inline constexpr auto kStatus = static_cast<std::uint16_t>(proto::Command::kBlockStatus);
inline constexpr auto kCache = static_cast<std::uint16_t>(proto::Command::kCache);

struct ConnectionClosed : std::runtime_error {
  ConnectionClosed() : std::runtime_error("the server closed the connection") {}
};

class TestClient {
 public:
  // Connects to 127.0.0.1:port, or to the Unix socket `unix_path` when given. Throws
  // std::runtime_error when it cannot.
  explicit TestClient(int port);
  // Connects to 127.0.0.1:port from `source` (another loopback address, "127.0.0.2"): a
  // second client address on one machine.
  TestClient(int port, const std::string& source);
  explicit TestClient(const std::string& unix_path);
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  // --- Handshake ---
  // Reads NBDMAGIC/IHAVEOPT and the handshake flags, answers with `client_flags`.
  std::uint16_t start(std::uint32_t client_flags = proto::kClientFlagFixedNewstyle |
                                                   proto::kClientFlagNoZeroes);
  void send_option(std::uint32_t option, std::span<const std::uint8_t> data = {});
  struct OptionReply {
    std::uint32_t option = 0;
    std::uint32_t type = 0;
    std::vector<std::uint8_t> data;
    std::string text() const { return {data.begin(), data.end()}; }
  };
  OptionReply read_option_reply();
  // STRUCTURED_REPLY; true on ACK.
  bool structured_reply();
  // SET_META_CONTEXT for `export_name` with `queries`; the contexts selected (by name).
  std::vector<std::string> set_meta_context(const std::string& export_name,
                                            const std::vector<std::string>& queries);
  // INFO or GO; on success the export's size, transmission flags and block sizes.
  struct Info {
    bool ok = false;
    std::uint32_t error = 0;  // NBD_REP_ERR_* when !ok
    std::string message;
    std::uint64_t size = 0;
    std::uint16_t flags = 0;
    std::uint32_t min_block = 0, preferred_block = 0, max_block = 0;
    std::string name, description;
  };
  Info info(const std::string& export_name, bool go, std::vector<std::uint16_t> info_types = {});
  // The usual way in: structured replies (optional), base:allocation, GO. Throws when GO fails.
  Info connect(const std::string& export_name, bool structured = true);
  // NBD_OPT_LIST: the export names.
  std::vector<std::string> list();

  // --- Transmission ---
  struct Reply {
    std::uint64_t handle = 0;
    std::uint32_t error = 0;
    std::string message;                        // structured error text
    std::vector<std::uint8_t> data;             // READ
    std::vector<proto::BlockDescriptor> extents;  // BLOCK_STATUS
  };
  // Sends a request (with `payload` after it for WRITE); `length` defaults to the
  // payload's size. Returns the handle used.
  std::uint64_t send_request(std::uint16_t type, std::uint64_t offset, std::uint32_t length,
                             std::uint16_t flags = 0, std::span<const std::uint8_t> payload = {});
  Reply read_reply();
  Reply request(std::uint16_t type, std::uint64_t offset, std::uint32_t length,
                std::uint16_t flags = 0, std::span<const std::uint8_t> payload = {});
  Reply read(std::uint64_t offset, std::uint32_t length, std::uint16_t flags = 0);
  Reply write(std::uint64_t offset, std::span<const std::uint8_t> data, std::uint16_t flags = 0);
  void disconnect();  // NBD_CMD_DISC
  void shutdown_send();  // shutdown(SHUT_WR): the server reads EOF, the client may still read

  // Raw bytes, for broken streams.
  void send_raw(std::span<const std::uint8_t> bytes);
  std::vector<std::uint8_t> read_raw(std::size_t n) { return read_bytes(n); }
  // True when the server closes the connection before sending anything more.
  bool closed_by_server();
  // SO_RCVBUF: a small one makes the server's replies back up at once.
  void set_receive_buffer_bytes(int bytes);

 private:
  void read_exact(void* dst, std::size_t n);
  std::vector<std::uint8_t> read_bytes(std::size_t n);

  int fd_ = -1;
  bool structured_ = false;
  std::uint64_t next_handle_ = 1;
  struct Pending {
    std::uint16_t type;
    std::uint32_t length;
  };
  std::map<std::uint64_t, Pending> pending_;
};

// Bytes that tell a test which write they came from: byte i is (seed * 131 + i * 7) mod 251.
std::vector<std::uint8_t> pattern(std::size_t n, std::uint32_t seed);

}  // namespace afasim::nbd::testing
