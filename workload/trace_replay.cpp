#include "workload/trace_replay.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <memory>
#include <optional>

#include "sim/assert.h"
#include "workload/fio_job.h"
#include "workload/fio_runner.h"

namespace afasim::workload {
namespace {

using controller::HostIo;
using controller::IoCompletion;
using controller::IoOp;
using sim::Time;

// blkparse: a C line comes after its Q; a row waits this much trace time past its end for
// the recorded responses of its I/Os before it is handed out.
constexpr Time kRecordedSlack = sim::kSecond;
// The latest arrival a record may have (time ÷ --speed): the 100 years a fio job may reach.
constexpr double kMaxArrivalNs = static_cast<double>(kMaxJobTimeNs);

struct OpenRow {
  std::int64_t index = 0;
  std::int64_t pending = 0;                // I/Os that arrived in it and are in flight
  std::map<std::size_t, TraceStats> stats;  // by volume index
};

class Replayer {
 public:
  Replayer(controller::Array& array, sim::Simulator& sim, TraceReader& reader,
           const TraceReplayOptions& options, const std::function<void(const TraceRow&)>& on_row)
      : array_(array), sim_(sim), reader_(reader), options_(options), on_row_(on_row) {}

  sim::Result<TraceReport> run();

 private:
  sim::Status fetch();  // the next I/O record into lookahead_ (recorded-only records applied)
  void schedule_next();
  void issue_ready();
  void issue(const TraceRecord& r);
  sim::Result<std::size_t> volume_for(const std::string& device, std::int64_t line);
  void complete(std::size_t volume, std::int64_t row, std::int64_t line, TraceOp op, std::int64_t bytes,
                const IoCompletion& done);
  OpenRow* row(std::int64_t index);
  void emit_rows(bool all);
  Time arrival(const TraceRecord& r) const;
  void fail(sim::Status status);
  void progress_tick();

  controller::Array& array_;
  sim::Simulator& sim_;
  TraceReader& reader_;
  const TraceReplayOptions& options_;
  const std::function<void(const TraceRow&)>& on_row_;
  TraceReport report_;
  std::map<std::string, std::size_t> by_device_;
  std::map<std::string, std::string> device_by_volume_;  // volume name → the first device on it
  std::optional<TraceRecord> lookahead_;
  bool reader_done_ = false;
  bool scheduled_ = false;  // an arrival event is pending
  bool stalled_ = false;
  int in_flight_ = 0;
  Time last_arrival_ = 0;
  sim::Status error_;
  std::map<std::int64_t, OpenRow> rows_;  // by index: only rows with I/O (a gap opens none)
  std::int64_t next_row_ = 0;  // the first row not handed out
};

Time Replayer::arrival(const TraceRecord& r) const {
  return static_cast<Time>(static_cast<double>(r.time_ns) / options_.speed);
}

void Replayer::fail(sim::Status status) {
  if (error_.is_ok()) error_ = std::move(status);
  reader_done_ = true;  // no more I/O; the loop drains what is in flight
  lookahead_.reset();
}

sim::Status Replayer::fetch() {
  lookahead_.reset();
  if (options_.max_records > 0 && report_.records >= options_.max_records) {
    reader_done_ = true;
    return sim::Status::ok();
  }
  while (true) {
    auto r = reader_.next();
    if (!r.is_ok()) return r.status();
    if (!r->has_value()) {
      reader_done_ = true;
      return sim::Status::ok();
    }
    TraceRecord& rec = **r;
    if (options_.timing == TraceTiming::kRecorded &&
        !(std::abs(static_cast<double>(rec.time_ns) / options_.speed) <= kMaxArrivalNs)) {
      const std::string message = reader_.name() + ":" + std::to_string(rec.line) + ": at --speed " +
                                  std::to_string(options_.speed) +
                                  " this record arrives more than 100 years from the first";
      if (!reader_.skip_bad()) return sim::invalid_argument(message);
      reader_.count_bad(message);
      continue;
    }
    if (rec.is_io) {
      lookahead_ = std::move(rec);
      return sim::Status::ok();
    }
    // A recorded response (blkparse C): its I/O's row, if still open, and the totals.
    auto v = volume_for(rec.device, rec.line);
    if (!v.is_ok()) return v.status();
    report_.volumes[*v].totals.recorded_latency_ns.record(rec.recorded_latency_ns);
    if (options_.timing == TraceTiming::kRecorded) {
      if (OpenRow* open = row(arrival(rec) / options_.interval_ns))
        open->stats[*v].recorded_latency_ns.record(rec.recorded_latency_ns);
    }
  }
}

// The row of `index`, opened if needed; nullptr when it was already handed out.
OpenRow* Replayer::row(std::int64_t index) {
  if (index < next_row_) return nullptr;
  OpenRow& r = rows_[index];
  r.index = index;
  return &r;
}

void Replayer::emit_rows(bool all) {
  // A row is done when none of its I/Os is in flight and no later record can arrive in it.
  Time horizon = sim::kTimeMax;
  if (!all && !reader_done_) {
    horizon = options_.timing == TraceTiming::kClosedLoop ? sim_.now()
              : lookahead_ ? arrival(*lookahead_) - (reader_.format() == TraceFormat::kBlkparse
                                                         ? kRecordedSlack
                                                         : 0)
                           : sim_.now();
  }
  while (!rows_.empty()) {
    OpenRow& r = rows_.begin()->second;
    const Time end = (r.index + 1) * options_.interval_ns;
    if (r.pending > 0 || end > horizon) break;
    for (auto& [v, stats] : r.stats) {
      if (!on_row_) break;
      TraceRow out;
      out.start_ns = r.index * options_.interval_ns;
      // The replay's last row ends with its last completion (review of hostile round 43: a
      // replay that ended at 3.927 s gave its last row a whole second, 7 % under its rate).
      // Nothing more to read and nothing in flight: end_ns is the replay's end.
      const bool last = (all || reader_done_) && in_flight_ == 0 && end > report_.end_ns;
      out.length_ns = last ? std::max<Time>(1, report_.end_ns - out.start_ns) : options_.interval_ns;
      out.device = report_.volumes[v].device;
      out.volume = report_.volumes[v].volume;
      out.stats = std::move(stats);
      on_row_(out);
    }
    next_row_ = r.index + 1;
    rows_.erase(rows_.begin());
  }
}

sim::Result<std::size_t> Replayer::volume_for(const std::string& device, std::int64_t line) {
  if (auto it = by_device_.find(device); it != by_device_.end()) return it->second;
  TraceVolume v;
  v.device = device;
  auto mapped = options_.device_map.find(device);
  v.volume = mapped != options_.device_map.end() ? mapped->second : trace_volume_name(device);
  // Two devices on one volume only when --map puts both there; the naming rule can fold
  // distinct devices together ("a/b" and "a-b", names cut at 64 characters).
  if (auto other = device_by_volume_.find(v.volume); other != device_by_volume_.end() &&
                                                     !(mapped != options_.device_map.end() &&
                                                       options_.device_map.contains(other->second)))
    return sim::invalid_argument(reader_.name() + ":" + std::to_string(line) + ": devices \"" + other->second +
                                 "\" and \"" + device + "\" would share volume \"" + v.volume +
                                 "\"; give one its own with --map DEV=NAME");
  device_by_volume_.emplace(v.volume, device);
  const controller::Volume* existing = array_.volume_by_name(v.volume);
  if (existing == nullptr) {
    controller::VolumeSpec spec;
    spec.name = v.volume;
    spec.capacity_bytes = options_.volume_size_bytes;
    spec.raid_type = options_.raid_type;
    spec.provisioning = options_.provisioning;
    // The array's volume limit: a replay has nothing to delete (the array's own advice).
    if (array_.volumes().size() >= controller::kMaxVolumes)
      return sim::invalid_argument(reader_.name() + ":" + std::to_string(line) + ": device \"" + device +
                                "\": the trace names more devices than the array's " +
                                std::to_string(controller::kMaxVolumes) +
                                " volumes; --map several devices onto one volume");
    auto created = array_.create_volume(spec);
    // A first volume the flags make too large is refused before the replay (cmd_trace.cpp,
    // exit 2); one that no longer fits after others is the trace's doing, found mid-run.
    if (!created.is_ok())
      return sim::Status(created.status().code(), reader_.name() + ":" + std::to_string(line) + ": device \"" +
                                                      device + "\": cannot create volume \"" + v.volume +
                                                      "\" (--volume-size, --raid-type, --provisioning): " +
                                                      created.status().message());
    existing = array_.volume(created->id);
  }
  v.volume_id = existing->id;
  v.capacity_bytes = existing->capacity_bytes;
  by_device_[device] = report_.volumes.size();
  report_.volumes.push_back(std::move(v));
  return report_.volumes.size() - 1;
}

void Replayer::issue(const TraceRecord& r) {
  auto v = volume_for(r.device, r.line);
  if (!v.is_ok()) return fail(v.status());
  const TraceVolume& vol = report_.volumes[*v];
  if (r.offset_bytes + r.length_bytes > vol.capacity_bytes) {
    const std::string message = reader_.name() + ":" + std::to_string(r.line) + ": " +
                                std::string(to_string(r.op)) + " at " + std::to_string(r.offset_bytes) +
                                " + " + std::to_string(r.length_bytes) + " is beyond volume \"" +
                                vol.volume + "\" (" + std::to_string(vol.capacity_bytes) +
                                " bytes; --volume-size or --map)";
    if (!reader_.skip_bad()) return fail(sim::invalid_argument(message));
    reader_.count_bad(message);
    return;
  }
  HostIo io;
  io.op = r.op == TraceOp::kRead    ? IoOp::kRead
          : r.op == TraceOp::kWrite ? IoOp::kWrite
          : r.op == TraceOp::kTrim  ? IoOp::kTrim
                                    : IoOp::kFlush;
  io.volume_id = vol.volume_id;
  io.offset_bytes = r.op == TraceOp::kFlush ? 0 : r.offset_bytes;
  io.length_bytes = r.op == TraceOp::kFlush ? 0 : r.length_bytes;
  io.fua = r.fua;  // blkparse WFS: through to the SSDs before the reply
  const std::int64_t row_index = sim_.now() / options_.interval_ns;
  OpenRow* open = row(row_index);
  open->pending += 1;
  if (r.recorded_latency_ns >= 0) {  // the trace's own response time (MSR)
    report_.volumes[*v].totals.recorded_latency_ns.record(r.recorded_latency_ns);
    open->stats[*v].recorded_latency_ns.record(r.recorded_latency_ns);
  }
  ++in_flight_;
  ++report_.records;
  const std::size_t vi = *v;
  const TraceOp op = r.op;
  const std::int64_t bytes = io.length_bytes;
  const std::int64_t line = r.line;
  auto completed = [this, vi, row_index, op, bytes, line](const IoCompletion& done) {
    complete(vi, row_index, line, op, bytes, done);
  };
  if (!r.preflush) return array_.submit(io, std::move(completed));
  // blkparse FWS / FWFS: the volume's cache is flushed, then the write goes; one I/O whose
  // latency runs from its arrival to the write's reply (the block layer's flush sequence).
  ++report_.preflushes;
  HostIo flush;
  flush.op = IoOp::kFlush;
  flush.volume_id = io.volume_id;
  const sim::Time arrived = sim_.now();
  array_.submit(flush, [this, io, arrived, completed = std::move(completed)](const IoCompletion& flushed) mutable {
    if (!flushed.status.is_ok()) return completed(IoCompletion{flushed.status, arrived, flushed.complete_time});
    array_.submit(io, [arrived, completed = std::move(completed)](const IoCompletion& written) mutable {
      completed(IoCompletion{written.status, arrived, written.complete_time});
    });
  });
}

void Replayer::complete(std::size_t volume, std::int64_t row_index, std::int64_t line, TraceOp op,
                        std::int64_t bytes, const IoCompletion& done) {
  --in_flight_;
  if (!done.status.is_ok() && report_.first_io_error.empty())
    report_.first_io_error = reader_.name() + ":" + std::to_string(line) + ": " + std::string(to_string(op)) + ": " +
                             done.status.message();
  report_.end_ns = std::max(report_.end_ns, done.complete_time);
  auto account = [&](TraceStats& s) {
    if (!done.status.is_ok()) {
      ++s.errors;
      return;
    }
    ++s.ios;
    // Trimmed bytes are not transferred: apart, as fio reports trim bandwidth (hostile round 32:
    // a 1 TiB trim made 21 TB/s).
    (op == TraceOp::kTrim ? s.trim_bytes : s.bytes) += bytes;
    (op == TraceOp::kRead ? s.reads : op == TraceOp::kWrite ? s.writes : op == TraceOp::kTrim ? s.trims : s.flushes) += 1;
    s.latency_ns.record(done.latency());
  };
  account(report_.volumes[volume].totals);
  OpenRow* open = row(row_index);
  AFASIM_ASSERT(open != nullptr, "a row with I/O in flight is still open");
  account(open->stats[volume]);
  --open->pending;
  if (stalled_) {
    stalled_ = false;
    issue_ready();
  } else if (options_.timing == TraceTiming::kClosedLoop) {
    issue_ready();
  }
  emit_rows(false);
}

// Issues what is due now: in closed loop, up to iodepth; as recorded, the records whose
// arrival has come, then an event for the next one.
void Replayer::issue_ready() {
  const int depth = options_.timing == TraceTiming::kClosedLoop ? options_.iodepth : options_.max_outstanding;
  while (lookahead_ && error_.is_ok()) {
    if (options_.timing == TraceTiming::kRecorded && arrival(*lookahead_) > sim_.now()) {
      schedule_next();
      return;
    }
    if (in_flight_ >= depth) {
      if (options_.timing == TraceTiming::kRecorded) {
        ++report_.stalls;
        stalled_ = true;
      }
      return;
    }
    const TraceRecord r = std::move(*lookahead_);
    issue(r);
    if (!error_.is_ok()) return;
    if (sim::Status st = fetch(); !st.is_ok()) return fail(st);
    if (lookahead_ && options_.timing == TraceTiming::kRecorded) {
      // Records are replayed in file order; one earlier than the last arrives with it.
      if (arrival(*lookahead_) < last_arrival_) {
        ++report_.reordered;
        lookahead_->time_ns = static_cast<Time>(static_cast<double>(last_arrival_) * options_.speed);
      }
      last_arrival_ = std::max(last_arrival_, arrival(*lookahead_));
    }
  }
}

void Replayer::schedule_next() {
  if (scheduled_ || !lookahead_) return;
  scheduled_ = true;
  sim_.at(std::max(sim_.now(), arrival(*lookahead_)), [this] {
    scheduled_ = false;
    issue_ready();
  });
}

void Replayer::progress_tick() {
  if (options_.progress) {  // rate-limited by the caller
    char line[160];
    std::snprintf(line, sizeof line, "trace: %.1f s simulated, %lld I/Os replayed, %d in flight",
                  sim::to_seconds(sim_.now()), static_cast<long long>(report_.records), in_flight_);
    options_.progress(line);
  }
}

sim::Result<TraceReport> Replayer::run() {
  report_.file = reader_.name();
  report_.format = reader_.format();
  report_.timing = options_.timing;
  report_.speed = options_.speed;
  report_.iodepth = options_.timing == TraceTiming::kClosedLoop ? options_.iodepth : 0;
  report_.interval_ns = options_.interval_ns;
  next_row_ = sim_.now() / options_.interval_ns;
  if (sim::Status st = fetch(); !st.is_ok()) return st;
  if (lookahead_) last_arrival_ = arrival(*lookahead_);
  issue_ready();
  // Progress every kProgressSteps events, not on a timer of simulated time: a trace with a gap
  // of years has nothing to run in it, and a timer would run millions of times there.
  for (std::uint64_t steps = 1; !(reader_done_ && !lookahead_ && in_flight_ == 0 && !scheduled_) && sim_.step();
       ++steps) {
    if (steps % kProgressSteps != 0) continue;
    if (options_.interrupted != nullptr && options_.interrupted->load(std::memory_order_relaxed) &&
        !report_.interrupted) {
      report_.interrupted = true;  // what is in flight completes; nothing more is read
      reader_done_ = true;
      lookahead_.reset();
    }
    progress_tick();
  }
  AFASIM_ASSERT(in_flight_ == 0, "trace replay ended with I/O in flight");
  // Stopped while the reader waited for input: the input ended there (TraceReaderOptions::stop).
  if (options_.interrupted != nullptr && options_.interrupted->load(std::memory_order_relaxed))
    report_.interrupted = true;
  if (!error_.is_ok()) return error_;
  emit_rows(true);
  report_.bad_lines = reader_.bad_lines();
  report_.first_bad = reader_.first_bad();
  report_.unpaired_completions = reader_.unpaired_completions();
  report_.abandoned_requests = reader_.abandoned_requests();
  return report_;
}

}  // namespace

void TraceStats::merge(const TraceStats& o) {
  ios += o.ios;
  bytes += o.bytes;
  trim_bytes += o.trim_bytes;
  reads += o.reads;
  writes += o.writes;
  trims += o.trims;
  flushes += o.flushes;
  errors += o.errors;
  latency_ns.merge(o.latency_ns);
  recorded_latency_ns.merge(o.recorded_latency_ns);
}

sim::Result<TraceReport> replay_trace(controller::Array& array, sim::Simulator& sim,
                                      TraceReader& reader, const TraceReplayOptions& options,
                                      const std::function<void(const TraceRow&)>& on_row) {
  if (!(options.speed > 0) || options.speed > 1e6)
    return sim::invalid_argument("--speed must be in (0, 1000000]");
  if (options.iodepth < 1 || options.iodepth > 65536)
    return sim::invalid_argument("--iodepth must be 1 to 65536");
  if (options.max_outstanding < 1 || options.max_outstanding > (1 << 20))
    return sim::invalid_argument("max_outstanding must be 1 to 1048576");
  if (options.interval_ns <= 0) return sim::invalid_argument("--interval must be > 0");
  Replayer replayer(array, sim, reader, options, on_row);
  return replayer.run();
}

std::string canonical_trace_device(TraceFormat format, std::string_view device) {
  const std::size_t cut = format == TraceFormat::kMsrCsv ? device.rfind('_') : std::string_view::npos;
  if (format != TraceFormat::kDiskSim && cut == std::string_view::npos) return std::string(device);
  const std::string_view head = device.substr(0, cut == std::string_view::npos ? 0 : cut + 1);
  const std::string_view digits = device.substr(head.size());
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return std::string(device);
  return std::string(head) + std::to_string(number);
}

std::string trace_volume_name(std::string_view device) {
  std::string name = volume_name_for_path(device);
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  if (name.empty() || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
    name = "dev" + name;
  if (name.size() > 64) name.resize(64);
  return name;
}

}  // namespace afasim::workload
