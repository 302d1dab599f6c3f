// nbd::NbdServer — the array's NBD target: real NBD clients (nbdinfo, nbdcopy, qemu-img,
// fio's nbd engine, the kernel's nbd-client) do real I/O on its volumes (issue 4,
// docs/nbd.md).
//
// The protocol is NetworkBlockDevice's doc/proto.md: fixed newstyle handshake only, with
// STARTTLS when a TLS context is given (`tls_required` refuses plain clients);
// options EXPORT_NAME, ABORT, LIST, INFO, GO, STRUCTURED_REPLY, LIST_META_CONTEXT and
// SET_META_CONTEXT (base:allocation); commands READ, WRITE, FLUSH, TRIM, WRITE_ZEROES,
// BLOCK_STATUS, DISC, with FUA. Exports follow LUN masking (nbd/nbd_exports.h).
//
// Threads. The server runs Boost.Asio on its own `io_threads` threads. Every request that
// touches the array is handed to the model thread through serve::ModelThread::post and
// goes through controller::Array::submit, the same door as a simulated workload; its
// completion runs on the model thread at the simulated completion time (paced to the wall
// clock with `--pace realtime`) and is handed back to the connection's Asio strand, which
// sends the reply. Handshake look-ups (which exports a client sees) use ModelThread::call.
// Public methods are for the owning thread; stats() is thread-safe.
//
// Bounds (each says what happens at the bound):
// - connections: at most `max_connections` in all and `max_connections_per_address` from
//   one client address, counted under one lock at accept; one more is accepted and closed
//   at once, unless every slot is held and one still in its handshake, from an address no
//   host's nbd initiator names and that reached transmission in no connection of the last
//   day, can give its slot: at once to a newcomer from such a known address, after
//   `eviction_grace` and only from a busier address to any other (serve/connection_slots.h).
//   A connection in transmission is never closed for a newcomer.
// - idle: a connection in transmission with nothing in flight that sends nothing for
//   `idle_timeout` is closed (an NBD client reconnects; a forgotten one frees its slot).
// - I/O: a WRITE's payload must arrive within `io_timeout` of the server starting to read
//   it, and each socket write of replies must be taken by the client within `io_timeout`;
//   past it the connection is closed (a WRITE whose payload did not all arrive is never
//   applied).
// - handshake: `handshake_timeout` to reach transmission, at most `max_options` options,
//   option data up to kMaxOptionDataBytes (larger: NBD_REP_ERR_TOO_BIG); past the first
//   two the connection is closed.
// - payload: requests longer than `max_payload_bytes` (the advertised maximum block size)
//   are refused with EINVAL (a WRITE's payload is read and dropped first).
// - in flight, per connection: at most `max_requests_in_flight` requests and
//   `max_bytes_in_flight` payload bytes between reading a request and sending its reply;
//   at the bound the connection stops reading (TCP backpressure) until replies go out.
// A bad request is refused with the protocol's error and the connection goes on; a broken
// stream (bad magic, bad handshake) closes that connection only.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "controller/array.h"
#include "serve/model_thread.h"
#include "sim/status.h"

namespace boost::asio::ssl {
class context;
}

namespace afasim::nbd {

struct NbdServerOptions {
  // NBD_OPT_STARTTLS with this context (serve/tls.h); null: TLS is not offered.
  std::shared_ptr<boost::asio::ssl::context> tls;
  // With `tls`: every option but STARTTLS and ABORT before TLS is NBD_REP_ERR_TLS_REQD, and
  // NBD_OPT_EXPORT_NAME closes the connection (proto.md "TLS support", FORCEDTLS).
  bool tls_required = false;
  // TCP listener address; port 0 picks a free port (see port()). An empty host means no
  // TCP listener. Default: the IANA NBD port on loopback.
  std::string host = "127.0.0.1";
  int port = 10809;
  // Unix-domain socket path; empty for none. A stale socket file is replaced; a socket
  // another server is listening on is refused.
  std::string unix_socket_path;
  // Asio threads, 1..64. The model thread does the array's work; one thread suffices to
  // move the bytes of dozens of connections.
  int io_threads = 1;
  // Simultaneous connections, 1..4096.
  int max_connections = 64;
  // Simultaneous connections from one client address, 1..4096 (above max_connections it
  // is max_connections). 16 leaves room
  // for nbdcopy's 4 connections and qemu's multi-conn from several clients of one host.
  int max_connections_per_address = 16;
  // Time a connection in transmission may sit with nothing in flight and nothing sent,
  // 1 s..24 h (docs/nbd.md "Limits").
  std::chrono::milliseconds idle_timeout{300'000};
  // Time a client has to send a WRITE's payload once the server starts reading it, and to
  // take one socket write of replies (at most 8 MiB plus one READ's data), 100 ms..1 h.
  // Neither includes the array's time to do the I/O. 30 s is the Linux SCSI layer's
  // default command timeout (/sys/block/sdX/device/timeout) and the HTTP front end's
  // write_timeout; the largest batch, 40 MiB with the defaults, needs 1.4 MB/s.
  std::chrono::milliseconds io_timeout{30'000};
  // Largest READ/WRITE/WRITE_ZEROES, bytes: a multiple of 512 in [64 KiB, 256 MiB]. 32 MiB
  // is proto.md's "SHOULD NOT be considered a denial of service" size.
  std::int64_t max_payload_bytes = 32 << 20;
  // Per connection, 1..65536. 128 covers fio's and qemu's deepest common queues.
  int max_requests_in_flight = 128;
  // Per connection, bytes, >= max_payload_bytes (a request never waits for more than the
  // bound). Worst-case payload memory of the server: max_connections × this.
  std::int64_t max_bytes_in_flight = 64 << 20;
  // Time from connect to the end of the handshake, 100 ms..1 h. A real client needs well
  // under a second; 10 s holds a slot only briefly against one that never finishes.
  std::chrono::milliseconds handshake_timeout{10'000};
  // When every slot is held, a stranger's connection still in its handshake may be closed
  // for another stranger once it is this old, 0..1 h (serve/connection_slots.h; a mapped
  // client does not wait for it). A real client reaches transmission well within it (nbdinfo
  // on loopback: ~1 ms), so a newcomer keeps its slot long enough to finish its handshake.
  std::chrono::milliseconds eviction_grace{2'000};
  // Options per handshake, 1..65536 (nbdinfo --list sends 2 per export).
  int max_options = 4096;
};

// Counters since start(); read from any thread.
struct NbdServerStats {
  std::int64_t connections_accepted = 0;
  std::int64_t connections_refused = 0;  // over max_connections or the per-address cap
  std::int64_t connections_evicted = 0;  // closed in the handshake to give a newcomer the slot
  std::int64_t connections_idle_closed = 0;  // closed by idle_timeout
  std::int64_t connections_io_timed_out = 0;  // closed by io_timeout (payload or replies stalled)
  std::int64_t connections_active = 0;  // open now; one evicted counts until it is closed
  std::int64_t requests = 0;                       // transmission requests read, DISC excluded
  std::int64_t requests_refused = 0;               // refused by the target's own checks
  std::int64_t protocol_errors = 0;                // connections closed for breaking the protocol
  std::int64_t requests_in_flight_high_water = 0;  // most in flight on one connection
};

class NbdServer {
 public:
  // Largest option data accepted in the handshake (the longest legitimate option, a
  // SET_META_CONTEXT with a few 4096-byte queries, is well under it).
  static constexpr std::uint32_t kMaxOptionDataBytes = 64 << 10;
  // Most metadata-context queries in one option.
  static constexpr std::size_t kMaxMetaQueries = 64;
  // The advertised minimum and preferred block sizes: the array presents 512-byte logical
  // blocks, like the ISE's LUNs; 4 KiB is the SSDs' page (an unaligned 4 KiB write costs
  // a read-modify-write inside the SSD).
  static constexpr std::uint32_t kMinBlockBytes = 512;
  static constexpr std::uint32_t kPreferredBlockBytes = 4096;

  // REQUIRES: array and model outlive the server; `model` runs the thread that owns `array`;
  // one NbdServer per ModelThread (start() takes the model thread's round hook).
  NbdServer(controller::Array& array, serve::ModelThread& model, NbdServerOptions options = {});
  ~NbdServer();  // stop()
  NbdServer(const NbdServer&) = delete;
  NbdServer& operator=(const NbdServer&) = delete;

  // Checks the options, binds the listeners and starts the threads. kInvalidArgument for
  // an option out of range; kUnavailable naming the address and the reason when a
  // listener cannot be bound (nothing is left running).
  sim::Status start();
  // Stops accepting, lets requests already handed to the array finish (up to
  // `drain_timeout`; later requests get ESHUTDOWN), closes every connection and joins the
  // threads. Idempotent.
  void stop(std::chrono::milliseconds drain_timeout = std::chrono::milliseconds(5000));

  // The bound TCP port (useful with port 0); 0 without a TCP listener or before start().
  int port() const;
  const NbdServerOptions& options() const;
  NbdServerStats stats() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace afasim::nbd
