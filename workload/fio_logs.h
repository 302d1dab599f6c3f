// fio's latency histogram bins and log files (write_lat_log, write_bw_log, write_iops_log,
// write_hist_log, log_avg_msec, log_hist_msec), in fio 3.33's formats, so that fio's own
// tools read them (fio2gnuplot, fio-histo-log-pctiles.py, fio_jsonplus_clat2csv for json+).
//
// Log lines (iolog.c flush_samples): "TIME_MS, VALUE, DDIR, BS, PRIO" (", OFFSET" before
// PRIO with log_offset=1), one per I/O, or per window and direction with log_avg_msec (the
// window's mean; bw in KiB/s and iops per second over the window, BS 0). Latencies in ns.
// Histogram lines (flush_hist_samples): "TIME_MS, DDIR, BS, C0, ..., C1855", the counts of
// fio's 1,856 latency bins completed in each log_hist_msec window.
// Times are virtual milliseconds since the clone started. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sim/histogram.h"
#include "sim/status.h"
#include "sim/time.h"
#include "workload/fio_job.h"

namespace afasim::workload {

// fio stat.h: FIO_IO_U_PLAT_BITS 6, FIO_IO_U_PLAT_GROUP_NR 29: 1,856 bins, values 0..127
// exact, then 64 bins per power of two.
inline constexpr int kFioPlatBits = 6;
inline constexpr int kFioPlatCount = 29 << kFioPlatBits;
// stat.c plat_val_to_idx / plat_idx_to_val (the value a bin is printed as: its midpoint).
int fio_plat_index(std::uint64_t value_ns);
std::uint64_t fio_plat_value(int index);
// The histogram in fio's bins: (bin value, count) ascending, non-empty bins only. Exact:
// every sim::Histogram bucket lies inside one fio bin.
std::vector<std::pair<std::uint64_t, std::uint64_t>> fio_plat_bins(const sim::Histogram& h);

// The first of `logs`' prefixes that would leave the folder the logs go to (an absolute path,
// or one with a ".." part), or null.
const std::string* escaping_log_prefix(const LogOptions& logs);

// The log files of one clone.
class FioLogWriter {
 public:
  // Opens the files `logs` asks for in `dir`, named as fio names them for thread
  // `thread_number` (1-based over the run's clones): PREFIX_TYPE.N.log, or PREFIX_TYPE.log
  // with per_job_logs=0, which clones share: a file not in `opened` yet is emptied first,
  // then every writer appends. kIoError naming the file when one cannot be created.
  // A log that is one of `inputs` (the files the run reads) is refused (kInvalidArgument)
  // before anything is written: a job file named like its own log was replaced by it.
  // A non-empty `dir` is the run's own (a sweep's DIR/logs/point-P-seed-S): it and the folders
  // of relative prefixes under it are created as needed (kIoError if one cannot be).
  static sim::Result<std::unique_ptr<FioLogWriter>> open(const LogOptions& logs,
                                                        const std::string& dir, int thread_number,
                                                        std::set<std::string>& opened,
                                                        const std::vector<std::string>& inputs = {});

  // The files open() would write for that clone, in `dir` as open() names them.
  static std::vector<std::string> paths(const LogOptions& logs, const std::string& dir, int thread_number);

  // One completed I/O, `elapsed_ns` after the clone started. Latencies in ns.
  void record(sim::Time elapsed_ns, Direction d, std::int64_t bytes, std::int64_t offset,
              sim::Time slat_ns, sim::Time clat_ns);
  // Writes what the windows ending at or before `elapsed_ns` hold, then closes the files.
  // kIoError naming the first file a write to failed (a full disk: hostile round 23, 1.1 MB
  // of logs were lost without a word).
  sim::Status finish(sim::Time elapsed_ns);
  // How many files open() keeps open for `logs`: lat, slat and clat for write_lat_log, one
  // each for bw, iops and the histogram.
  static int files_per_clone(const LogOptions& logs);

 private:
  struct Window {  // one direction's samples in the current log_avg_msec window
    std::uint64_t ios = 0;
    std::uint64_t bytes = 0;
    std::array<double, 3> latency_sum_ns{};  // lat, slat, clat
  };
  enum LogKind { kLat, kSlat, kClat, kBw, kIops, kHist, kLogKinds };

  explicit FioLogWriter(const LogOptions& logs) : logs_(logs) {}
  void line(LogKind kind, sim::Time elapsed_ns, std::uint64_t value, Direction d,
            std::int64_t bytes, std::int64_t offset);
  void close_avg_windows(sim::Time elapsed_ns);
  // The window's lines, stamped `at_ns`; bw and iops per second of its `length_ns` (none
  // when it is 0).
  void write_avg_window(sim::Time at_ns, sim::Time length_ns);
  void close_hist_windows(sim::Time elapsed_ns);

  LogOptions logs_;
  std::array<std::unique_ptr<std::ofstream>, kLogKinds> files_;
  std::array<std::string, kLogKinds> paths_;
  std::array<Window, kDirections> window_{};
  sim::Time window_end_ns_ = 0;
  std::array<std::vector<std::uint64_t>, kDirections> hist_;  // kFioPlatCount bins each
  std::array<std::int64_t, kDirections> hist_bs_{};
  sim::Time hist_end_ns_ = 0;
};

}  // namespace afasim::workload
