// VDBench parameter files: the subset device reviews use (docs/vdbench.md).
//
// Storage definitions (sd=), workload definitions (wd=) and run definitions (rd=), each a
// line of comma-separated `keyword=value` pairs that may continue on lines that do not
// start a new definition; `*` starts a comment line, `sd=default` / `wd=default` /
// `rd=default` set defaults for the definitions after them. Supported:
//   sd: lun (a path; the device runs it), size, range=(from%,to%), threads, openflags
//   wd: sd (a name, a (list) or a wildcard*), xfersize (a size or (size,pct,...)), rdpct,
//       seekpct (0-100, sequential / seq / random / eof), skew, range
//   rd: wd, iorate (max, curve or a number), curve=(pct,...), elapsed, interval, warmup,
//       forthreads, forxfersize, forrdpct, forseekpct
// seekpct=eof runs sequentially to the end of the range and stops: a fill (format) run.
// Sizes take VDBench's suffixes k, m, g, t (powers of 1024). Anything else is refused with
// `FILE:LINE: keyword: what is wrong`, naming the parameter.
//
// Pure functions of their input; no I/O except load_vdbench_file. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/status.h"
#include "sim/time.h"

namespace afasim::workload {

struct VdSizeShare {
  std::int64_t size_bytes = 0;  // a multiple of 512
  double percent = 100;         // of the I/Os; the shares of one wd add up to 100
};

struct VdStorage {
  std::string name;
  std::string lun;
  std::int64_t size_bytes = 0;   // 0: the whole device
  double range_from = 0;         // percent of size
  double range_to = 100;
  int threads = 8;               // VDBench's default
  int line = 0;
};

struct VdWorkload {
  std::string name;
  std::vector<std::string> sds;  // resolved names
  std::vector<VdSizeShare> xfersize{{4096, 100}};
  double rdpct = 100;
  double seekpct = 100;          // percent random; 0 sequential
  bool eof = false;              // seekpct=eof: sequential, stop at the end of the range
  double skew = 0;               // percent of the run's I/O; 0 = an equal share of what is left
  std::optional<std::pair<double, double>> range;  // overrides the sd's range
  int line = 0;
};

enum class VdRate { kMax, kCurve, kFixed };

struct VdRun {
  std::string name;
  std::vector<std::string> wds;  // resolved names
  VdRate rate = VdRate::kMax;
  double iorate = 0;             // kFixed: I/Os per second
  std::vector<double> curve{10, 50, 70, 80, 90, 100};  // VDBench's default curve
  sim::Time elapsed = 30 * sim::kSecond;
  sim::Time interval = sim::kSecond;
  std::optional<sim::Time> warmup;
  std::vector<int> forthreads;               // empty: the sds' threads
  std::vector<std::vector<VdSizeShare>> forxfersize;
  std::vector<double> forrdpct;
  std::vector<double> forseekpct;
  int line = 0;
};

struct VdbenchFile {
  std::string file_name;
  std::vector<VdStorage> sds;
  std::vector<VdWorkload> wds;
  std::vector<VdRun> rds;
  const VdStorage* sd(const std::string& name) const;
  const VdWorkload* wd(const std::string& name) const;
};

// Parses `text` (named `file_name` in messages). kInvalidArgument "FILE:LINE: keyword: ...".
sim::Result<VdbenchFile> parse_vdbench(const std::string& text, const std::string& file_name);
// Checks `elapsed` and `interval` (nanoseconds; 0: the file's own), the command line's
// replacements of every rd's elapsed= and interval=, against each rd as the file's own are:
// kInvalidArgument "--elapsed E s / --interval I s: rd=NAME: ..." when the interval would be
// longer than the run, or the run over the file's bound of intervals (each is a row kept).
sim::Status check_run_overrides(const VdbenchFile& file, sim::Time elapsed, sim::Time interval);
// A parameter file larger than this is refused (as a fio job file: kMaxFileBytes).
inline constexpr std::size_t kMaxVdbenchFileBytes = 1 << 20;
// Reads and parses a file; kNotFound when it cannot be read, kInvalidArgument over
// kMaxVdbenchFileBytes.
sim::Result<VdbenchFile> load_vdbench_file(const std::string& path);

}  // namespace afasim::workload
