// Replays a block trace (trace_reader.h) against the simulated array: `afasim trace FILE`.
//
// Timing: as recorded (arrival = trace time ÷ speed; --speed 2 replays twice as fast), or
// closed loop (the trace's order and sizes, `iodepth` I/Os kept in flight, its times
// ignored). Each trace device is a volume: --map DEV=VOLUME, else trace_volume_name(DEV);
// volumes that do not exist are created when the device first appears (thin, volume_size
// bytes). The report gives, per volume, IOPS, MB/s and latency percentiles over the whole
// replay and per interval, the trace's own response times beside the simulated ones where
// the format records them (MSR ResponseTime, blkparse Q→C). Rows are handed to `on_row` as
// soon as every I/O that arrived in them has completed, so a trace of any length replays in
// memory bounded by the volumes, max_outstanding and the rows still open.
//
// Bounds: at most max_outstanding I/Os in flight when replaying as recorded; at the bound
// the next arrival waits for a completion (counted as `stalls`, the trace's pace not held).
// Deterministic: the same trace, array and options give the same report.
// Not thread-safe: runs on the thread that owns the Simulator and Array.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "controller/array.h"
#include "sim/histogram.h"
#include "sim/simulator.h"
#include "workload/trace_reader.h"

namespace afasim::workload {

enum class TraceTiming { kRecorded, kClosedLoop };

struct TraceReplayOptions {
  TraceTiming timing = TraceTiming::kRecorded;
  double speed = 1.0;             // kRecorded: > 0; trace time ÷ speed
  int iodepth = 32;               // kClosedLoop: I/Os in flight, 1..65536
  int max_outstanding = 65536;    // kRecorded: I/Os in flight at most, 1..1 << 20
  std::map<std::string, std::string> device_map;  // trace device → volume name
  std::int64_t volume_size_bytes = std::int64_t{1} << 40;  // new volumes: 1 TiB thin
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  controller::Provisioning provisioning = controller::Provisioning::kThin;
  sim::Time interval_ns = sim::kSecond;  // timeline rows, > 0
  std::int64_t max_records = 0;          // stop after this many I/Os; 0 = the whole trace
  // Every 100 ms of simulated time: a one-line status (never changes the run).
  std::function<void(const std::string& line)> progress;
  // When it reads true (a signal handler sets it), no more records are read; the I/Os in flight
  // complete and the report covers what was replayed. Read every kProgressSteps events.
  const std::atomic<bool>* interrupted = nullptr;
};

// One volume's I/O in one interval of arrival time (or over the whole replay).
struct TraceStats {
  std::int64_t ios = 0;
  std::int64_t bytes = 0;       // read and written (the MB/s)
  std::int64_t trim_bytes = 0;  // trimmed
  std::int64_t reads = 0, writes = 0, trims = 0, flushes = 0, errors = 0;
  sim::Histogram latency_ns;           // simulated: submit → completion (QoS wait included)
  sim::Histogram recorded_latency_ns;  // the trace's own, where it has them
  void merge(const TraceStats& other);
};

struct TraceRow {
  sim::Time start_ns = 0;  // interval of arrival (simulated time)
  sim::Time length_ns = 0;
  std::string device;  // the trace's; several devices --map'ed to one volume have a row each
  std::string volume;
  TraceStats stats;
};

struct TraceVolume {
  std::string device;
  std::string volume;
  controller::Id volume_id = 0;
  std::int64_t capacity_bytes = 0;
  TraceStats totals;
};

struct TraceReport {
  std::string file;
  TraceFormat format = TraceFormat::kDiskSim;
  TraceTiming timing = TraceTiming::kRecorded;
  double speed = 1.0;
  int iodepth = 0;
  sim::Time interval_ns = 0;
  std::int64_t records = 0;        // I/Os replayed
  std::int64_t bad_lines = 0;      // skipped (--skip-bad)
  std::string first_bad;           // the first of them, "FILE:LINE: ..."
  std::string first_io_error;      // the first I/O the array failed, "FILE:LINE: read: why"
  std::int64_t stalls = 0;         // arrivals that waited for max_outstanding
  std::int64_t reordered = 0;      // records earlier than the one before (replayed in order)
  std::int64_t unpaired_completions = 0;  // blkparse C lines without their Q
  std::int64_t abandoned_requests = 0;    // blkparse Q lines given up waiting for their C
  bool interrupted = false;               // stopped by TraceReplayOptions::interrupted
  std::int64_t preflushes = 0;            // blkparse writes with a preflush: a flush, then the write
  sim::Time end_ns = 0;            // simulated time of the last completion
  std::vector<TraceVolume> volumes;  // first-appearance order
  // I/Os the array failed, over every volume.
  std::int64_t io_errors() const {
    std::int64_t n = 0;
    for (const TraceVolume& v : volumes) n += v.totals.errors;
    return n;
  }
};

// Replays `reader` to its end. Errors: the reader's ("FILE:LINE: ..."); kInvalidArgument
// "FILE:LINE: ..." for an I/O beyond its volume (with skip_bad on the reader, counted as a
// bad line instead); kInvalidArgument "FILE:LINE: devices "A" and "B" would share volume
// "V"; ..." when trace_volume_name folds two devices into one name that --map does not give
// both; the Array's when a volume cannot be created. I/O errors of the array (no space, a
// failed volume) are counted per volume, not fatal.
sim::Result<TraceReport> replay_trace(controller::Array& array, sim::Simulator& sim,
                                      TraceReader& reader, const TraceReplayOptions& options,
                                      const std::function<void(const TraceRow&)>& on_row = {});

// Text: a header, the rows as they come (format_trace_row), then the totals.
std::string format_trace_header(const TraceReader& reader, const TraceReplayOptions& options);
std::string format_trace_row(const TraceRow& row);
std::string format_trace_totals(const TraceReport& report);
// JSON lines: one object per row ({"row": ...}), then one {"totals": ...}.
std::string trace_row_json(const TraceRow& row);
std::string trace_totals_json(const TraceReport& report);

// The volume name a trace device maps to when no --map names one (docs/workloads.md):
// volume_name_for_path's rule, characters other than letters, digits, '-', '_' and '.'
// replaced by '_', and "dev" in front of a name that does not start with a letter.
// "/dev/sdb" → "sdb", "8,0" → "dev8_0", "hm_0" → "hm_0", "3" → "dev3".
std::string trace_volume_name(std::string_view device);

// `device` as `format`'s records name it: MSR's HOST_DISK and DiskSim's DEVICE without
// leading zeros in the number ("hm_01" is "hm_1", "007" is "7"), other formats' names as
// they are. For --map's keys, which name devices as the user read them in the file.
std::string canonical_trace_device(TraceFormat format, std::string_view device);

}  // namespace afasim::workload
