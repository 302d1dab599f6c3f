#include "nbd/nbd_record.h"

#include <cstring>
#include <stdexcept>

#include "nbd/nbd_replay.h"
#include "serve/session_record.h"

namespace afasim::nbd {

namespace n = proto;
using serve::ByteReader;
using serve::ByteWriter;

namespace {

void write_export(ByteWriter& w, const ExportInfo& e) {
  w.str(e.name).i64(e.volume_id).i64(e.mapping_id).i64(e.host_id).i64(e.lun).i64(e.size_bytes);
  w.u8(e.read_only ? 1 : 0).str(e.description);
}

ExportInfo read_export(ByteReader& r) {
  ExportInfo e;
  e.name = r.str();
  e.volume_id = r.i64();
  e.mapping_id = r.i64();
  e.host_id = r.i64();
  e.lun = r.i64();
  e.size_bytes = r.i64();
  e.read_only = r.u8() != 0;
  e.description = r.str();
  return e;
}

bool is_write(const n::RequestHeader& h) {
  return h.type == static_cast<std::uint16_t>(n::Command::kWrite);
}

}  // namespace

namespace detail {

void record_batch(std::uint64_t connection_id, const ExportInfo& e, const std::vector<std::unique_ptr<Request>>& batch) {
  serve::Recorder* rec = serve::Recorder::active();
  if (rec == nullptr) return;
  ByteWriter w;
  w.u64(connection_id);
  write_export(w, e);
  w.u32(static_cast<std::uint32_t>(batch.size()));
  for (const auto& r : batch) {
    const n::RequestHeader& h = r->header;
    w.u16(h.type).u16(h.flags).u64(h.handle).u64(h.offset).u32(h.length);
    if (is_write(h)) w.bytes({r->data.get(), h.length});
  }
  rec->request("nbd.io", w.take());
}

void record_done(const Request& r) {
  serve::Recorder* rec = serve::Recorder::active();
  if (rec == nullptr) return;
  const n::RequestHeader& h = r.header;
  ByteWriter w;
  w.u64(r.mailbox->connection_id).u64(h.handle).u16(h.type).u32(r.error).str(r.message).i64(r.latency_ns);
  if (r.error == 0 && h.type == static_cast<std::uint16_t>(n::Command::kRead))
    w.u64(serve::digest64(std::span<const std::uint8_t>(r.data.get(), h.length)));
  w.u32(static_cast<std::uint32_t>(r.extents.size()));
  for (const auto& d : r.extents) w.u32(d.length_bytes).u32(d.flags);
  rec->outcome("nbd.done", w.take());
}

void log_nbd_event(controller::Array& array, ConnectionEventLimiter& limiter, const std::string& object,
                   const std::string& message) {
  if (serve::Recorder* rec = serve::Recorder::active()) rec->request("nbd.event", ByteWriter().str(object).str(message).take());
  if (const std::string logged = limiter.admit(message, array.simulator().now()); !logged.empty())
    (void)array.log_event(controller::Severity::kInfo, "nbd", object, logged);
}

}  // namespace detail

namespace {

// At most this many requests in one recorded batch (the server hands the model 64 at most).
constexpr std::uint32_t kMaxReplayBatch = 1024;

// The replay's stand-ins for connections: one closed mailbox per recorded connection id
// (completions are recorded as they are delivered, then dropped).
struct ReplayConnections {
  detail::asio::io_context io;
  std::shared_ptr<detail::Gate> gate = [] {
    auto g = std::make_shared<detail::Gate>();
    g->open = false;
    return g;
  }();
  std::map<std::uint64_t, std::shared_ptr<detail::Mailbox>> mailboxes;

  std::shared_ptr<detail::Mailbox> mailbox(std::uint64_t id) {
    auto& mb = mailboxes[id];
    if (!mb) {
      mb = std::make_shared<detail::Mailbox>(io.get_executor());
      mb->connection_id = id;
      mb->closed = true;
      mb->gate = gate;
    }
    return mb;
  }
};

void replay_io(controller::Array& array, ReplayConnections& conns, std::string_view payload) {
  ByteReader r(payload);
  const std::uint64_t id = r.u64();
  const ExportInfo e = read_export(r);
  const std::uint32_t count = r.u32();
  if (count > kMaxReplayBatch) throw std::invalid_argument("an NBD batch of " + std::to_string(count) + " requests");
  // What the server checked before it recorded the batch: a damaged record must not reach
  // start_requests with a request it assumes valid.
  n::TransmissionLimits limits;
  limits.export_size_bytes = static_cast<std::uint64_t>(e.size_bytes);
  limits.read_only = e.read_only;
  limits.structured_replies = true;
  limits.block_status = true;
  limits.max_payload_bytes = 256 << 20;  // the largest NbdServerOptions::max_payload_bytes
  std::vector<std::unique_ptr<detail::Request>> batch(count);
  // A connection's batch holds at most its bytes in flight; a READ's buffer is allocated here,
  // so a forged record of 64 READs of 256 MiB asked for 16 GiB (hostile review 43).
  constexpr std::uint64_t kMaxBatchDataBytes = 256 << 20;
  std::uint64_t data_bytes = 0;
  for (auto& req : batch) {
    req = std::make_unique<detail::Request>();
    n::RequestHeader& h = req->header;
    h.type = r.u16();
    h.flags = r.u16();
    h.handle = r.u64();
    h.offset = r.u64();
    h.length = r.u32();
    std::string why;
    if (n::check_request(h, limits, &why) != 0)
      throw std::invalid_argument("a recorded NBD request the server would have refused: " + why);
    req->mailbox = conns.mailbox(id);
    const bool carries_data = is_write(h) || h.type == static_cast<std::uint16_t>(n::Command::kRead);
    if (carries_data && (data_bytes += h.length) > kMaxBatchDataBytes)
      throw std::invalid_argument("an NBD batch of more than " + std::to_string(kMaxBatchDataBytes) +
                                  " bytes of data, more than a connection holds in flight");
    if (carries_data) {
      req->data = std::make_unique<std::uint8_t[]>(h.length);
      req->data_capacity = h.length;
    }
    if (is_write(h)) {
      const std::string_view bytes = r.bytes(r.u64());
      if (bytes.size() != h.length) throw ByteReader::Truncated();
      std::memcpy(req->data.get(), bytes.data(), bytes.size());
    }
  }
  detail::record_batch(id, e, batch);
  detail::start_requests(array, e, batch);
}

}  // namespace

std::map<std::string, ReplayHandler> nbd_replay_handlers(controller::Array& array) {
  auto conns = std::make_shared<ReplayConnections>();
  std::map<std::string, ReplayHandler> out;
  out["nbd.io"] = [&array, conns](std::string_view payload) { replay_io(array, *conns, payload); };
  out["nbd.event"] = [&array, limiter = std::make_shared<detail::ConnectionEventLimiter>()](std::string_view payload) {
    ByteReader r(payload);
    const std::string object = r.str();
    const std::string message = r.str();
    detail::log_nbd_event(array, *limiter, object, message);
  };
  return out;
}

}  // namespace afasim::nbd
