#include "serve/session_record.h"

#include <unistd.h>

#include <boost/crc.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <set>
#include <nlohmann/json.hpp>

#include "sim/assert.h"
#include "config/file_text.h"
#include "config/json_text.h"

namespace afasim::serve {

namespace {

// "AFASIMSR": afasim session record.
constexpr char kMagic[8] = {'A', 'F', 'A', 'S', 'I', 'M', 'S', 'R'};
constexpr std::uint8_t kEndType = 'Z';
constexpr std::size_t kMaxKindBytes = 255;
// A record's payload above this is refused as damage rather than allocated (an NBD batch
// is at most 64 requests of 32 MiB).
constexpr std::uint64_t kMaxPayloadBytes = 4ULL << 30;
constexpr std::uint64_t kMaxHeaderBytes = 1 << 20;

std::uint32_t crc32(std::string_view bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::string header_json(const SessionHeader& h) {
  nlohmann::json j = {{"afasim_version", h.afasim_version}, {"system", h.system},
                      {"seed", h.seed},                     {"payload", h.payload},
                      {"start_time_ns", h.start_time_ns}, {"pace", h.pace},
                      {"destage_age_ns", h.destage_age_ns}};
  return config::dump_json(j);
}

// magic, format version, header length, header, header CRC.
std::string encode_header(const SessionHeader& h) {
  const std::string json = header_json(h);
  std::string out(kMagic, sizeof kMagic);
  ByteWriter w;
  w.u32(kSessionFormatVersion).u32(static_cast<std::uint32_t>(json.size()));
  out += w.take();
  out += json;
  out += ByteWriter().u32(crc32(json)).take();
  return out;
}

// type, kind, time, events, payload, then the CRC of all of those.
std::string encode_record(std::uint8_t type, std::string_view kind, sim::Time time_ns, std::uint64_t events,
                          std::string_view payload) {
  AFASIM_ASSERT(kind.size() <= kMaxKindBytes, "a record kind over 255 bytes");
  ByteWriter w;
  w.u8(type).u8(static_cast<std::uint8_t>(kind.size()));
  std::string out = w.take();
  out += kind;
  out += ByteWriter().i64(time_ns).u64(events).u64(payload.size()).take();
  out += payload;
  const std::uint32_t crc = crc32(out);
  out += ByteWriter().u32(crc).take();
  return out;
}

std::string encode_end(std::uint64_t records) {
  return encode_record(kEndType, "end", 0, 0, ByteWriter().u64(records).take());
}

}  // namespace

// ---------------------------------------------------------------------------------------
// ByteWriter / ByteReader

ByteWriter& ByteWriter::u8(std::uint8_t v) {
  out_.push_back(static_cast<char>(v));
  return *this;
}
ByteWriter& ByteWriter::u16(std::uint16_t v) {
  for (int i = 0; i < 2; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  return *this;
}
ByteWriter& ByteWriter::u32(std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  return *this;
}
ByteWriter& ByteWriter::u64(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  return *this;
}
ByteWriter& ByteWriter::str(std::string_view s) {
  u64(s.size());
  out_.append(s);
  return *this;
}
ByteWriter& ByteWriter::bytes(std::span<const std::uint8_t> b) {
  u64(b.size());
  out_.append(reinterpret_cast<const char*>(b.data()), b.size());
  return *this;
}

std::string_view ByteReader::take(std::size_t n) {
  if (in_.size() - pos_ < n) throw Truncated();
  const std::string_view out = in_.substr(pos_, n);
  pos_ += n;
  return out;
}
std::uint8_t ByteReader::u8() {
  return static_cast<std::uint8_t>(take(1)[0]);
}
std::uint16_t ByteReader::u16() {
  const std::string_view b = take(2);
  return static_cast<std::uint16_t>(static_cast<std::uint8_t>(b[0]) | static_cast<std::uint8_t>(b[1]) << 8);
}
std::uint32_t ByteReader::u32() {
  const std::string_view b = take(4);
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<std::uint8_t>(b[static_cast<std::size_t>(i)]);
  return v;
}
std::uint64_t ByteReader::u64() {
  const std::string_view b = take(8);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<std::uint8_t>(b[static_cast<std::size_t>(i)]);
  return v;
}
std::string ByteReader::str() {
  return std::string(bytes(u64()));
}
std::string_view ByteReader::bytes(std::size_t n) {
  return take(n);
}

std::uint64_t digest64(std::span<const std::uint8_t> data, std::uint64_t seed) {
  // FNV-1a over 8-byte words (then the tail bytes): fast enough for whole volumes.
  std::uint64_t h = 14695981039346656037ULL ^ seed;
  std::size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, data.data() + i, 8);
    h = (h ^ w) * 1099511628211ULL;
    h ^= h >> 29;
  }
  for (; i < data.size(); ++i) h = (h ^ data[i]) * 1099511628211ULL;
  return h;
}

std::uint64_t digest64(std::string_view text, std::uint64_t seed) {
  return digest64({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}, seed);
}

// ---------------------------------------------------------------------------------------
// Recorder

std::atomic<Recorder*> Recorder::active_{nullptr};

void Recorder::start() {
  Recorder* none = nullptr;
  const bool started = active_.compare_exchange_strong(none, this);
  AFASIM_ASSERT(started || none == this, "two session recorders at once");
}

void Recorder::stop() {
  Recorder* self = this;
  active_.compare_exchange_strong(self, nullptr);
}

void Recorder::emit(RecordType type, std::string_view kind, std::string payload) {
  Record r;
  r.type = type;
  r.kind = std::string(kind);
  r.time_ns = sim_.now();
  r.events_executed = sim_.events_executed();
  r.payload = std::move(payload);
  sink_(r);
}

// ---------------------------------------------------------------------------------------
// Writing the file

sim::Result<std::unique_ptr<SessionFileWriter>> SessionFileWriter::open(const std::string& path,
                                                                        const SessionHeader& header) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return sim::unavailable("cannot create the session record " + path + ": " + std::strerror(errno));
  std::unique_ptr<SessionFileWriter> w(new SessionFileWriter(f, path));
  w->write(encode_header(header));
  // Flushed at once: a file that takes no bytes (a full disk) fails here, at the start.
  if (w->status_.is_ok() && std::fflush(f) != 0)
    w->status_ =
        sim::unavailable("writing the session record " + path + ": " + std::strerror(errno));
  if (!w->status_.is_ok()) return w->status_;
  return w;
}

SessionFileWriter::~SessionFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void SessionFileWriter::write(const std::string& bytes) {
  if (file_ == nullptr || !status_.is_ok()) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    status_ = sim::unavailable("writing the session record " + path_ + ": " + std::strerror(errno));
}

void SessionFileWriter::append(const Record& r) {
  write(encode_record(static_cast<std::uint8_t>(r.type), r.kind, r.time_ns, r.events_executed, r.payload));
  ++records_;
}

sim::Status SessionFileWriter::finish() {
  if (file_ == nullptr) return status_;
  write(encode_end(records_));
  if (status_.is_ok() && (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0))
    status_ = sim::unavailable("writing the session record " + path_ + ": " + std::strerror(errno));
  std::fclose(file_);
  file_ = nullptr;
  return status_;
}

std::string encode_session(const SessionHeader& header, const std::vector<Record>& records) {
  std::string out = encode_header(header);
  for (const Record& r : records)
    out += encode_record(static_cast<std::uint8_t>(r.type), r.kind, r.time_ns, r.events_executed, r.payload);
  return out + encode_end(records.size());
}

// ---------------------------------------------------------------------------------------
// Reading the file

namespace {

sim::Status damaged(const std::string& path, std::size_t offset, const std::string& why) {
  return sim::invalid_argument("session record " + path + " is damaged at byte " + std::to_string(offset) + ": " +
                               why);
}

// The header's JSON, each field checked by name ("session record P: header: seed: ..."); a
// duplicated key is refused (nlohmann keeps the last silently), as the preset loaders do.
sim::Result<SessionHeader> parse_header(const std::string& path, const std::string& text) {
  const std::string where = "session record " + path + ": header: ";
  auto parsed = config::parse_json_strict(text);
  if (!parsed.is_ok()) return sim::invalid_argument(where + parsed.status().message());
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return sim::invalid_argument(where + "must be a JSON object");
  std::string why;
  auto field = [&](const char* key, bool ok, const char* what) -> const nlohmann::json* {
    if (!why.empty()) return nullptr;
    if (!j.contains(key)) why = std::string(key) + ": missing";
    else if (!ok) why = std::string(key) + ": must be " + what;
    return why.empty() ? &j[key] : nullptr;
  };
  auto text_field = [&](const char* key, std::string* out) {
    const bool ok = j.contains(key) && j[key].is_string();
    if (const nlohmann::json* v = field(key, ok, "a string")) *out = v->get<std::string>();
  };
  SessionHeader h;
  text_field("afasim_version", &h.afasim_version);
  text_field("system", &h.system);
  text_field("payload", &h.payload);
  text_field("pace", &h.pace);
  // get<uint64_t> would take -1 as 2^64-1 (a replay that then diverged at its first completion).
  if (const auto* v = field("seed", j.contains("seed") && j["seed"].is_number_unsigned(),
                            "a whole number from 0 to 2^64-1"))
    h.seed = v->get<std::uint64_t>();
  // 2^62 ns is 146 years of simulated time; 2^63 wrapped to a negative start (hostile round 22).
  constexpr std::uint64_t kMaxStartNs = std::uint64_t{1} << 62;
  if (const auto* v = field("start_time_ns", j.contains("start_time_ns") &&
                                                  j["start_time_ns"].is_number_unsigned() &&
                                                  j["start_time_ns"].get<std::uint64_t>() <= kMaxStartNs,
                            "a whole number of nanoseconds from 0 to 2^62 (146 years)"))
    h.start_time_ns = static_cast<sim::Time>(v->get<std::uint64_t>());
  if (why.empty() && h.pace != "realtime" && h.pace != "none")
    why = "pace: \"" + h.pace + "\" is not realtime or none";
  // Optional: records made before serve had --destage-age come from an afasim whose cache never
  // destaged by age, so they replay with none.
  h.destage_age_ns = 0;
  if (j.contains("destage_age_ns"))
    if (const auto* v = field("destage_age_ns", j["destage_age_ns"].is_number_unsigned() &&
                                                    j["destage_age_ns"].get<std::uint64_t>() <= kMaxDestageAgeNs,
                              "a whole number of nanoseconds from 0 to 3.6e12 (an hour)"))
      h.destage_age_ns = static_cast<sim::Time>(v->get<std::uint64_t>());
  // An unknown key is refused like a missing one (hostile round 28a, L3: "made_by" passed).
  static const std::set<std::string> kKeys{"afasim_version", "system", "seed", "payload", "start_time_ns", "pace",
                                           "destage_age_ns"};
  for (auto it = j.begin(); it != j.end() && why.empty(); ++it)
    if (!kKeys.contains(it.key()))
      why = it.key() +
            ": unknown key (a header holds afasim_version, system, seed, payload, start_time_ns, pace, destage_age_ns)";
  if (!why.empty()) return sim::invalid_argument(where + why);
  return h;
}

// The header part of `bytes`; `pos` is left after it.
sim::Result<SessionHeader> read_header(const std::string& path, std::string_view bytes, std::size_t& pos) {
  if (bytes.size() < sizeof kMagic || bytes.compare(0, sizeof kMagic, std::string_view(kMagic, sizeof kMagic)) != 0)
    return sim::invalid_argument(path + " is not an afasim session record (it does not start with AFASIMSR)");
  try {
    ByteReader r(bytes.substr(sizeof kMagic));
    const std::uint32_t version = r.u32();
    if (version != kSessionFormatVersion)
      return sim::invalid_argument("session record " + path + " is format version " + std::to_string(version) +
                                   "; this afasim reads version " + std::to_string(kSessionFormatVersion));
    const std::uint32_t length = r.u32();
    if (length > kMaxHeaderBytes) return damaged(path, sizeof kMagic + 4, "a header of " + std::to_string(length) + " bytes");
    const std::string json(r.bytes(length));
    if (r.u32() != crc32(json)) return damaged(path, sizeof kMagic + 8, "the header's checksum does not match");
    pos = sizeof kMagic + 12 + length;
    return parse_header(path, json);
  } catch (const ByteReader::Truncated&) {
    return damaged(path, bytes.size(), "the file ends inside the header");
  }
}

// One record at `pos` (left after it). `end` tells whether it was the end record, whose
// count is then in `end_count`.
sim::Status read_record(const std::string& path, std::string_view all, std::size_t& pos, std::size_t index,
                        Record& out, bool& end, std::uint64_t& end_count) {
  const std::size_t start = pos;
  const std::string number = "record #" + std::to_string(index + 1);
  if (pos == all.size())
    return damaged(path, pos,
                   "no end record after " + std::to_string(index) +
                       " records: the recording was cut short (was afasim serve killed?)");
  try {
    ByteReader r(all.substr(pos));
    const std::uint8_t type = r.u8();
    const std::string kind(r.bytes(r.u8()));
    out.time_ns = r.i64();
    out.events_executed = r.u64();
    const std::uint64_t length = r.u64();
    if (length > kMaxPayloadBytes)
      return damaged(path, start, number + " claims a payload of " + std::to_string(length) + " bytes");
    out.payload = std::string(r.bytes(static_cast<std::size_t>(length)));
    const std::size_t body = 2 + kind.size() + 24 + static_cast<std::size_t>(length);
    if (r.u32() != crc32(all.substr(pos, body))) return damaged(path, start, number + "'s checksum does not match");
    pos += body + 4;
    end = type == kEndType;
    if (end) {
      end_count = ByteReader(out.payload).u64();
      return sim::Status::ok();
    }
    if (type != static_cast<std::uint8_t>(RecordType::kRequest) && type != static_cast<std::uint8_t>(RecordType::kOutcome))
      return damaged(path, start, number + " has an unknown type " + std::to_string(type));
    out.type = static_cast<RecordType>(type);
    out.kind = kind;
    return sim::Status::ok();
  } catch (const ByteReader::Truncated&) {
    return damaged(path, start, number + " is cut short: the recording was cut short (was afasim serve killed?)");
  }
}

}  // namespace

sim::Result<SessionFile> read_session_file(const std::string& path) {
  auto opened = config::open_file_stream(path);  // a FIFO nobody writes: empty, not a hang
  if (!opened.is_ok()) return sim::not_found("cannot open the session record " + path + ": " + opened.status().message());
  std::istream& in = **opened;
  // Read as it is parsed, each piece once its size is known and checked, so that a stream that
  // is not a record is refused at its first bad length instead of read whole: `afasim replay
  // /dev/zero` read until memory ran out, and so did a magic followed by /dev/zero (review 41:
  // 500 MB, then "out of memory").
  std::string bytes;
  // The first `end` bytes, or all there are: in pieces of at most 1 MiB, so that a length the
  // file claims but does not hold costs no more memory than the bytes it does hold (review 41:
  // a 189-byte file claiming a 3 GiB payload took 3.1 GB before "cut short").
  const auto have = [&](std::size_t end) {
    while (bytes.size() < end) {
      const std::size_t before = bytes.size(), piece = std::min<std::size_t>(end - before, 1 << 20);
      bytes.resize(before + piece);
      in.read(bytes.data() + before, static_cast<std::streamsize>(piece));
      bytes.resize(before + static_cast<std::size_t>(in.gcount()));
      if (bytes.size() < before + piece) return;  // the stream ended
    }
  };
  have(sizeof kMagic + 8);  // magic, version, the header's length
  if (bytes.size() == sizeof kMagic + 8 && bytes.compare(0, sizeof kMagic, std::string_view(kMagic, sizeof kMagic)) == 0) {
    const std::uint64_t length = ByteReader(std::string_view(bytes).substr(sizeof kMagic + 4)).u32();
    if (length <= kMaxHeaderBytes) have(sizeof kMagic + 12 + length);
  }
  SessionFile out;
  std::size_t pos = 0;
  auto header = read_header(path, bytes, pos);
  if (!header) return header.status();
  out.header = std::move(header).value();
  for (;;) {
    have(pos + 2);  // type, the kind's length
    if (bytes.size() == pos + 2) {
      const std::size_t fixed = 2 + static_cast<std::uint8_t>(bytes[pos + 1]) + 24;  // to the payload
      have(pos + fixed);
      if (bytes.size() == pos + fixed) {
        const std::uint64_t length = ByteReader(std::string_view(bytes).substr(pos + fixed - 8)).u64();
        if (length <= kMaxPayloadBytes) have(pos + fixed + static_cast<std::size_t>(length) + 4);
      }
    }
    Record r;
    bool end = false;
    std::uint64_t count = 0;
    const std::size_t start = pos;
    AFASIM_RETURN_IF_ERROR(read_record(path, bytes, pos, out.records.size(), r, end, count));
    if (!end) {
      out.records.push_back(std::move(r));
      continue;
    }
    if (count != out.records.size())
      return damaged(path, start,
                     "the end record counts " + std::to_string(count) + " records, the file holds " +
                         std::to_string(out.records.size()));
    have(pos + 1);
    if (pos != bytes.size()) return damaged(path, pos, "bytes after the end record");
    return out;
  }
}

}  // namespace afasim::serve
