// Recording what enters the model in serve mode, so that `afasim replay` can re-run it
// (docs/record-replay.md).
//
// A session record is a header (what array, which seed, which payload kind) followed by
// records in the order the model thread produced them:
//   request  something that entered the model through serve::ModelThread: an NBD batch, a
//            ReST call, an NBD connect/disconnect event, the shutdown. It carries the
//            virtual time and the count of events the simulator had executed when it ran,
//            so a replay can run it at exactly the same point between events;
//   outcome  what the model answered: an NBD completion (status, latency, digest of the
//            data read), a ReST reply (status, revision, body digest), an event of the
//            event log, the final state at shutdown.
// A replay feeds the requests back at their points and checks that it produces the same
// outcomes, byte for byte.
//
// The front ends call Recorder::active() on the model thread and, when it is not null,
// describe what they are doing: a hook is one line at the point where a request enters the
// model or an answer leaves it. Recording is off (active() null) unless `afasim serve
// --record` or `afasim replay` turned it on.
//
// Thread-safety: Recorder::request/outcome on the model thread only; start()/stop() before
// and after the model thread runs the session (or from inside it).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/simulator.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::serve {

// The record file format this binary writes and reads (docs/record-replay.md).
inline constexpr std::uint32_t kSessionFormatVersion = 2;  // 2: a "rest" call names its user
// The longest write-cache destage age a session takes (`afasim serve --destage-age`): an hour.
inline constexpr std::uint64_t kMaxDestageAgeNs = 3'600'000'000'000;

enum class RecordType : std::uint8_t { kRequest = 'Q', kOutcome = 'O' };

struct Record {
  RecordType type = RecordType::kRequest;
  std::string kind;                   // "nbd.io", "rest", ...; at most 255 bytes
  sim::Time time_ns = 0;              // virtual time when the model thread produced it
  std::uint64_t events_executed = 0;  // Simulator::events_executed() at that moment
  std::string payload;                // kind-specific bytes (ByteWriter encoding)
  bool operator==(const Record&) const = default;
};

// What the session ran on: enough to build the same array again.
struct SessionHeader {
  std::string afasim_version;  // the binary that recorded (a replay by another may differ)
  std::string system;          // preset name, e.g. "ise-860-g3"
  std::uint64_t seed = 1;
  std::string payload;         // "none", "memory", "file"
  sim::Time start_time_ns = 0; // the clock when the session began
  // "realtime" or "none": with realtime the telemetry sampler ticks every simulated second
  // even when the array is idle, and those ticks are events a replay must run too.
  std::string pace = "realtime";
  // `afasim serve --destage-age`: the write cache's age destage (0: never), nanoseconds; by
  // default controller::CacheOptions's (app/session.cpp checks the two agree). Optional in
  // the file: a record without it was made by an afasim without age destage, and is read as 0.
  static constexpr sim::Time kDefaultDestageAgeNs = 10 * sim::kSecond;
  sim::Time destage_age_ns = kDefaultDestageAgeNs;
};

// ---------------------------------------------------------------------------------------
// Payload encoding: little-endian integers and length-prefixed strings.

class ByteWriter {
 public:
  ByteWriter& u8(std::uint8_t v);
  ByteWriter& u16(std::uint16_t v);
  ByteWriter& u32(std::uint32_t v);
  ByteWriter& u64(std::uint64_t v);
  ByteWriter& i64(std::int64_t v) { return u64(static_cast<std::uint64_t>(v)); }
  ByteWriter& str(std::string_view s);  // u64 length, then the bytes
  ByteWriter& bytes(std::span<const std::uint8_t> b);
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what a ByteWriter wrote. Reading past the end throws ByteReader::Truncated (a record
// whose payload does not hold what its kind needs).
class ByteReader {
 public:
  struct Truncated : std::runtime_error {
    Truncated() : std::runtime_error("a record's payload ends early") {}
  };
  explicit ByteReader(std::string_view in) : in_(in) {}
  std::uint8_t u8();
  std::uint16_t u16();
  std::uint32_t u32();
  std::uint64_t u64();
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  std::string str();
  std::string_view bytes(std::size_t n);
  bool done() const { return pos_ == in_.size(); }

 private:
  std::string_view take(std::size_t n);
  std::string_view in_;
  std::size_t pos_ = 0;
};

// A 64-bit digest of `data` for outcome records (equality checks, not security).
std::uint64_t digest64(std::span<const std::uint8_t> data, std::uint64_t seed = 0);
std::uint64_t digest64(std::string_view text, std::uint64_t seed = 0);

// ---------------------------------------------------------------------------------------
// The recorder the hooks reach

class Recorder {
 public:
  using Sink = std::function<void(const Record&)>;
  // REQUIRES: sim outlives this object.
  Recorder(const sim::Simulator& sim, Sink sink) : sim_(sim), sink_(std::move(sink)) {}
  ~Recorder() { stop(); }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Makes this the process's active recorder. REQUIRES: no other one is active.
  void start();
  // Turns recording off (idempotent): active() is null afterwards.
  void stop();
  // The active recorder, or null when nothing records (the usual case).
  static Recorder* active() { return active_.load(std::memory_order_acquire); }

  // Model thread: something enters the model now / the model answers now.
  void request(std::string_view kind, std::string payload) { emit(RecordType::kRequest, kind, std::move(payload)); }
  void outcome(std::string_view kind, std::string payload) { emit(RecordType::kOutcome, kind, std::move(payload)); }

 private:
  void emit(RecordType type, std::string_view kind, std::string payload);
  const sim::Simulator& sim_;
  Sink sink_;
  static std::atomic<Recorder*> active_;
};

// ---------------------------------------------------------------------------------------
// The file

// Writes a session record file: the header at open(), one record per append(), the end
// record at finish(). Writes are buffered; finish() flushes and fsyncs. The first error
// (disk full) is kept in status() and later appends are dropped.
class SessionFileWriter {
 public:
  // Creates `path` and writes the header, flushed. kUnavailable when `path` cannot be
  // created or the header not written.
  static sim::Result<std::unique_ptr<SessionFileWriter>> open(const std::string& path, const SessionHeader& header);
  ~SessionFileWriter();
  void append(const Record& r);
  // Writes the end record and closes the file. Idempotent; returns status().
  sim::Status finish();
  const sim::Status& status() const { return status_; }
  std::uint64_t records() const { return records_; }

 private:
  SessionFileWriter(std::FILE* f, std::string path) : file_(f), path_(std::move(path)) {}
  void write(const std::string& bytes);
  std::FILE* file_;
  std::string path_;
  std::uint64_t records_ = 0;
  sim::Status status_;
};

struct SessionFile {
  SessionHeader header;
  std::vector<Record> records;
};

// Reads and checks a whole session record file. Errors name the path and, for a damaged
// file, the byte offset and record number:
//   kNotFound         the file cannot be opened
//   kInvalidArgument  not a session record (bad magic); a format version this binary does
//                     not read; a bad header; a record cut short, corrupt (checksum), of an
//                     unknown type; no end record (the recording was cut short: serve was
//                     killed); an end record whose count disagrees
sim::Result<SessionFile> read_session_file(const std::string& path);

// The record file's bytes for `header` and `records` (with the end record), as the writer
// produces them: for tests.
std::string encode_session(const SessionHeader& header, const std::vector<Record>& records);

}  // namespace afasim::serve
