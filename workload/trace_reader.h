// Block traces, read a record at a time (docs/workloads.md "Trace replay").
//
// Formats, detected from the first lines unless named:
//  - fio iolog v2 / v3 (fio iolog.c): a "fio version 2 iolog" / "fio version 3 iolog" first
//    line, then "FILE ACTION [OFFSET LENGTH]" (v2; "FILE wait USEC" delays the next I/O) or
//    "USEC FILE ACTION [OFFSET LENGTH]" (v3, a timestamp in µs). Actions read, write, trim,
//    sync, datasync; add/open/close lines name files and are skipped.
//  - blkparse's default text output: "MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + COUNT
//    [PROCESS]". A Q (queued) line is an I/O; the C (complete) line of the same device and
//    sector gives the trace's own response time. Other actions and the summary after the
//    events ("CPU0 (8,0):", "Total (8,0):" onwards) are skipped; a Q line without a valid
//    RWBS, SECTOR + COUNT or with 0 sectors is a bad line, as is an event after the summary.
//  - SNIA IOTTA / MSR Cambridge CSV: "Timestamp,Hostname,DiskNumber,Type,Offset,Size,
//    ResponseTime", times in 100 ns units (Windows filetime), Type Read or Write; the device
//    is HOSTNAME_DISK. An optional header line.
//  - DiskSim ASCII (MQSim's input too): "ARRIVAL_MS DEVICE LBA SIZE_BLOCKS FLAGS", 512-byte
//    blocks, flags bit 0 = read.
// A UTF-8 byte-order mark before the first line is skipped. A read, write or trim whose
// offset or size is not a multiple of 512 bytes (the volumes' logical block) is a bad line.
// Times are relative to the first record. The file is streamed: memory is one line plus, for
// blkparse, the queued requests not yet completed (bounded by kMaxPendingRequests: when it is
// full the older half is given up, counted as abandoned_requests()). TraceReaderOptions can
// lower the bound.
// Not thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/status.h"
#include "sim/time.h"

namespace afasim::workload {

enum class TraceFormat { kFioIolog2, kFioIolog3, kBlkparse, kMsrCsv, kDiskSim };
std::string_view to_string(TraceFormat f);  // "fio-iolog-v2", "blkparse", "msr-csv", "disksim"
// "fio" (either version, from its first line), "blkparse", "msr", "disksim".
sim::Result<TraceFormat> parse_trace_format(std::string_view name, std::string_view first_line = {});

enum class TraceOp { kRead, kWrite, kTrim, kFlush };
std::string_view to_string(TraceOp op);

struct TraceRecord {
  bool is_io = true;       // false: only the recorded response of an earlier I/O (blkparse C)
  sim::Time time_ns = 0;   // arrival, since the first record (< 0: before it); for !is_io the I/O's arrival
  std::string device;      // as the trace names it: "/dev/sdb", "8,0", "hm_0", "0"
  TraceOp op = TraceOp::kRead;
  std::int64_t offset_bytes = 0;
  std::int64_t length_bytes = 0;  // 0 for flushes
  sim::Time recorded_latency_ns = -1;  // the trace's own response time; < 0 when it has none
  // blkparse RWBS (the kernel's blk_fill_rwbs): an F before the operation's letter is a preflush
  // (the cache is flushed before the write), one after it FUA (the write reaches the media).
  bool preflush = false;
  bool fua = false;
  std::int64_t line = 0;               // 1-based
};

struct TraceReaderOptions {
  std::optional<TraceFormat> format;  // nullopt: detect
  bool skip_bad = false;              // count bad lines and go on, instead of failing
  // blkparse Q lines kept waiting for their C (TraceReader::kMaxPendingRequests; tests lower it).
  std::size_t max_pending_requests = std::size_t{1} << 20;  // at least 2
  // open(): once it reads true (a signal handler's flag), the file ends where the reading is,
  // even while a pipe's writer is silent (config::open_file_stream).
  const std::atomic<bool>* stop = nullptr;
};

class TraceReader {
 public:
  static constexpr std::size_t kMaxLineBytes = 4096;
  static constexpr std::size_t kMaxPendingRequests = 1 << 20;  // blkparse Q without their C yet
  // A record more than this before or after the first is a bad line (~31.7 years: beyond any
  // trace, and far inside the simulator's clock of 292 years).
  static constexpr sim::Time kMaxSpanNs = 1'000'000'000'000'000'000;
  // Beyond every record time: MSR's 100 ns ticks since 1601 reach ~10^19 ns, a time read as a
  // double is refused from 2^63 ns (to_ns).
  static constexpr __int128 kMaxTimeNs = static_cast<__int128>(kMaxSpanNs) * kMaxSpanNs;

  // Opens `path` ("-" is standard input). kNotFound when it cannot be read; kInvalidArgument
  // "FILE:LINE: ..." when the format cannot be detected.
  static sim::Result<std::unique_ptr<TraceReader>> open(const std::string& path,
                                                       const TraceReaderOptions& options);
  // Reads from `in`; `name` labels messages.
  static sim::Result<std::unique_ptr<TraceReader>> from_stream(std::unique_ptr<std::istream> in,
                                                              std::string name,
                                                              const TraceReaderOptions& options);

  // The next record; nullopt at the end. kInvalidArgument "FILE:LINE: what is wrong" for a bad
  // line (unless skip_bad), kIoError when reading fails.
  sim::Result<std::optional<TraceRecord>> next();

  TraceFormat format() const { return format_; }
  bool skip_bad() const { return skip_bad_; }
  // Counts a bad record found after reading (an I/O beyond its volume), as a bad line.
  void count_bad(const std::string& message) {
    if (bad_lines_++ == 0) first_bad_ = message;
  }
  const std::string& name() const { return name_; }
  std::int64_t bad_lines() const { return bad_lines_; }        // skipped with skip_bad
  std::int64_t unpaired_completions() const { return unpaired_; }  // blkparse C without Q (or before it)
  // blkparse Q lines given up waiting for their C: the oldest half of kMaxPendingRequests, each
  // time it fills (back-merged bios, a capture of queue events only, never complete).
  std::int64_t abandoned_requests() const { return abandoned_; }
  std::string first_bad() const { return first_bad_; }         // "FILE:LINE: ..." or empty

 private:
  TraceReader() = default;
  sim::Result<bool> read_line();  // false at the end
  sim::Result<std::optional<TraceRecord>> parse_line(std::string_view line);
  sim::Result<std::optional<TraceRecord>> parse_fio(std::string_view line);
  sim::Result<std::optional<TraceRecord>> parse_blkparse(std::string_view line);
  sim::Result<std::optional<TraceRecord>> blkparse_no_sector(const std::vector<std::string_view>& t,
                                                             std::string_view action, std::string_view rwbs);
  sim::Result<std::optional<TraceRecord>> blkparse_ranged(const std::vector<std::string_view>& t,
                                                          std::string_view action, std::string_view rwbs);
  sim::Result<std::optional<TraceRecord>> blkparse_completion(const std::string& key, std::string device,
                                                              sim::Time at);
  sim::Result<std::optional<TraceRecord>> parse_msr(std::string_view line);
  sim::Result<std::optional<TraceRecord>> parse_disksim(std::string_view line);
  // time_ns less the first record's; nullopt beyond ±kMaxSpanNs.
  std::optional<sim::Time> relative(__int128 time_ns);

  std::unique_ptr<std::istream> in_;
  std::string name_;
  TraceFormat format_ = TraceFormat::kDiskSim;
  bool skip_bad_ = false;
  std::size_t max_pending_ = kMaxPendingRequests;
  std::string line_;
  std::string line_error_;  // what is wrong with line_ before parsing (too long, a NUL), or empty
  std::string pending_first_;  // a line read while detecting the format
  bool has_pending_first_ = false;
  std::int64_t line_no_ = 0;
  std::int64_t bad_lines_ = 0;
  std::int64_t unpaired_ = 0;
  std::int64_t abandoned_ = 0;
  void abandon_older_half();
  std::string first_bad_;
  std::optional<__int128> origin_ns_;  // the first record's own time
  sim::Time fio_clock_ns_ = 0;       // fio v2: the sum of waits so far
  std::int64_t blk_summary_line_ = 0;  // blkparse: the line its closing summary begins at, or 0
  std::unordered_map<std::string, sim::Time> queued_;  // blkparse "dev sector" → Q time
};

}  // namespace afasim::workload
