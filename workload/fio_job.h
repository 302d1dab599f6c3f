// The fio job-file front end: reads fio's INI job syntax into fully resolved jobs.
//
// `afasim fio JOB.fio` runs real fio job files in virtual time against volumes of the
// simulated array. This file turns the text into a list of FioJob values with every
// inherited [global] option applied, every number and time converted with fio's own rules
// (kb_base, k/m/g/t and ki/mi/gi/ti suffixes, time units), every percentage resolved
// against its volume, and every volume (a distinct `filename=`) sized from the jobs' `size=`.
// The engine consumes FioJobFile; it never looks at option strings again.
//
// Options that change nothing in a simulation (ioengine, direct, thread, buffer contents,
// logging, CPU placement, ...) are accepted and listed in FioJobFile::ignored so the output
// can say so. Every other option is either supported exactly (see docs/workloads.md) or
// refused. Bad input never crashes and never loses the location: every error reads
// `FILE:LINE: OPTION: what is wrong`, for example `job.fio:12: bs: "4q" is not a size`.
//
// Pure functions of their input; no I/O except load_fio_job_file. Thread-safe (no shared
// state); the returned values are plain data.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"
#include "sim/time.h"

namespace afasim::workload {

// fio's data directions that afasim simulates (trim is not supported). Usable as an index.
enum class Direction : int { kRead = 0, kWrite = 1 };
inline constexpr int kDirections = 2;
inline constexpr int index_of(Direction d) {
  return static_cast<int>(d);
}
std::string_view to_string(Direction d);  // "read", "write"

// fio's `rw=` patterns, spelled as fio spells them (to_string gives "randread", "rw", ...).
enum class RwPattern { kRead, kWrite, kRandRead, kRandWrite, kReadWrite, kRandReadWrite };
std::string_view to_string(RwPattern p);
bool is_random(RwPattern p);
bool does_reads(RwPattern p);
bool does_writes(RwPattern p);

// fio's `random_distribution=` models that afasim supports.
enum class RandomDistribution { kUniform, kZipf, kPareto };
std::string_view to_string(RandomDistribution d);  // "random", "zipf", "pareto"

// fio's `rate_process=`: fixed gaps between I/Os, or exponential gaps (Poisson arrivals).
enum class RateProcess { kLinear, kPoisson };

// One `bssplit=` entry: `size_bytes` is issued `percent` % of the time.
struct BlockSizeShare {
  std::int64_t size_bytes = 0;  // > 0
  int percent = 0;              // 0..100; the shares of one direction add up to exactly 100
  bool operator==(const BlockSizeShare&) const = default;
};

// The block sizes of one data direction. Exactly one of three forms:
//  - fixed (`bs=`): min_bytes == max_bytes, split empty;
//  - range (`blocksize_range=`): min_bytes < max_bytes, split empty; sizes are drawn
//    uniformly, multiples of min_bytes unless `unaligned` (fio's blocksize_unaligned);
//  - split (`bssplit=`): split non-empty, min/max are the smallest and largest entry.
struct BlockSizeSpec {
  std::int64_t min_bytes = 4096;  // fio's default bs
  std::int64_t max_bytes = 4096;
  std::vector<BlockSizeShare> split;
  bool unaligned = false;
  bool is_fixed() const { return split.empty() && min_bytes == max_bytes; }
  bool operator==(const BlockSizeSpec&) const = default;
};

// An option as written in the job file, for messages and fio's "job options" in JSON.
struct WrittenOption {
  std::string name;   // as written (alias not folded: "readwrite" stays "readwrite")
  std::string value;  // text after '=', blanks trimmed; empty for a bare key ("time_based")
  bool has_value = false;
  int line = 0;  // 1-based line in the file
  bool operator==(const WrittenOption&) const = default;
};

// An accepted option that has no effect in a simulation (see docs/workloads.md).
struct IgnoredOption {
  std::string section;  // "global" or the job's section name
  WrittenOption option;
  std::string reason;  // why it changes nothing, e.g. "the simulated array is the engine"
};

// One job section of the file, with [global] inherited and every value resolved.
// numjobs clones share everything here; `clone` arguments below are 0..numjobs-1.
struct FioJob {
  std::string name;         // section name, or `name=` when given
  std::string description;  // `description=`, may be empty
  int job_index = 0;        // 0-based position among the file's job sections
  int line = 0;             // line of the [section] header
  int group_id = 0;         // fio's reporting group (stonewall / new_group start a new one)

  RwPattern rw = RwPattern::kRead;  // fio's default
  // `rw=randread:N`: a new random offset only every N I/Os, sequential in between.
  std::int64_t rw_sequential_ios = 1;
  // `rw=read:SIZE`: a hole of SIZE bytes after each sequential I/O.
  std::int64_t rw_skip_bytes = 0;
  int rwmix_read_percent = 50;  // share of reads in rw / randrw, 0..100

  std::array<BlockSizeSpec, kDirections> bs;  // index_of(Direction)

  int iodepth = 1;  // I/Os kept in flight per clone, 1..kMaxIodepth
  int numjobs = 1;  // clones of this job, 1..kMaxClones

  // The volume: `filename=` (one name), or empty when the job file gives none; then, as in
  // fio, every clone uses its own volume named "NAME.CLONE.0" (see volume_name()).
  std::string filename;
  std::int64_t offset_bytes = 0;            // region start of clone 0, resolved from % too
  std::int64_t offset_increment_bytes = 0;  // clone k starts at offset + k × increment
  std::int64_t size_bytes = 0;              // region length per clone, > 0, resolved
  std::int64_t io_size_bytes = 0;           // bytes to transfer per loop (`io_size`, default size)
  int loops = 1;                            // `loops`, 1..kMaxLoops

  sim::Time runtime_ns = 0;     // `runtime`; 0 = no time limit
  bool time_based = false;      // keep going until runtime even when io_size is done
  sim::Time ramp_time_ns = 0;   // `ramp_time`: run but do not count, before runtime starts
  sim::Time startdelay_ns = 0;  // `startdelay`: idle before the job starts

  // `rate_iops` / `rate` per direction; 0 = no cap. Per clone, as in fio.
  std::array<std::int64_t, kDirections> rate_iops = {0, 0};
  std::array<std::int64_t, kDirections> rate_bytes_per_second = {0, 0};
  RateProcess rate_process = RateProcess::kLinear;

  RandomDistribution distribution = RandomDistribution::kUniform;
  double zipf_theta = 0;  // > 0 and != 1, when distribution == kZipf
  double pareto_h = 0;    // in (0, 1), when distribution == kPareto
  // Where the hottest block sits, as a fraction of the region in [0, 1]; nullopt = at a
  // random place (fio's default). The `:center` of `random_distribution=zipf:1.2:0.25`.
  std::optional<double> distribution_center;
  // Uniform random I/O touches every block once per pass (fio's random map) unless
  // `norandommap` is given.
  bool random_map = true;
  // `randseed`: folded into this job's random streams (afasim's run seed still applies).
  std::optional<std::uint64_t> randseed;

  bool group_reporting = false;
  bool stonewall = false;  // wait for every earlier job to finish (implies new_group)
  bool new_group = false;
  std::string wait_for;  // `wait_for=NAME`: wait for that earlier job's clones

  // Percentiles the report prints, ascending, each in (0, 100]. fio's default list unless
  // `percentile_list` is given.
  std::vector<double> percentile_list;
  int kb_base = 1024;  // fio's kb_base: 1024 (default, "4k" = 4096) or 1000

  // The options written in this job's own section (not the inherited ones), in file order.
  std::vector<WrittenOption> options;

  // The volume clone `clone` uses. REQUIRES: 0 <= clone < numjobs.
  std::string volume_name(int clone) const;
  // Start of clone `clone`'s region in its volume: offset + clone × offset_increment.
  std::int64_t region_offset_bytes(int clone) const;
  // The smallest block size over the directions this job issues: the unit of its random
  // offsets (fio's min_bs).
  std::int64_t min_block_bytes() const;
  // Bytes a clone transfers before it is done when not time_based: io_size × loops.
  std::int64_t total_io_bytes() const;
};

// A volume the job file uses: each distinct filename (or default per-clone name).
struct FioVolume {
  std::string name;
  std::int64_t size_bytes = 0;  // the largest end of any region on it: offset + size
  int line = 0;                 // line of the first job section that uses it
};

struct FioJobFile {
  std::string file_name;                      // as given to the parser, used in every message
  std::vector<FioJob> jobs;                   // file order
  std::vector<FioVolume> volumes;             // first-use order
  std::vector<WrittenOption> global_options;  // every [global] option, file order
  std::vector<IgnoredOption> ignored;         // file order
  // Legal fio that probably does not mean what it says ("bs=4KiB" is 4000 bytes under
  // kb_base=1024, as in fio). Each is "FILE:LINE: OPTION: explanation".
  std::vector<std::string> warnings;

  int group_count() const;  // number of reporting groups (max group_id + 1)
  int clone_count() const;  // sum of numjobs
};

// Bounds afasim puts on a job file (fio has none or larger ones; every queue has a bound).
inline constexpr int kMaxClones = 4096;      // total numjobs of a file: fio's REAL_MAX_JOBS
inline constexpr int kMaxIodepth = 65536;    // assumption: far above any device queue
inline constexpr int kMaxLoops = 1'000'000;  // assumption
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 60;  // 1 EiB, any size value
inline constexpr sim::Time kMaxDuration = 10 * sim::kYear;        // any time value
inline constexpr std::size_t kMaxLineBytes = 4096;                // fio's OPT_LEN_MAX: 4096 or 8192
inline constexpr std::size_t kMaxFileBytes = 1 << 20;  // a job file over 1 MiB is refused

// fio's default percentile list (stat.c): 1 5 10 20 30 40 50 60 70 80 90 95 99 99.5 99.9
// 99.95 99.99.
const std::vector<double>& default_percentile_list();

// Parses job-file text. `file_name` only labels messages. On success: the resolved jobs
// (at least one). On failure: kInvalidArgument "FILE:LINE: OPTION: what is wrong" for the
// first problem found (FILE:LINE: ... when no option is involved).
sim::Result<FioJobFile> parse_fio_job_file(std::string_view text, std::string_view file_name);

// Reads `path` and parses it. kNotFound when the file cannot be read; kInvalidArgument for
// a file over kMaxFileBytes or a parse error.
sim::Result<FioJobFile> load_fio_job_file(const std::string& path);

// --- fio's value syntax, exposed for the CLI and tests. Messages name the value, not the
// file: `"4q" is not a size`. ---

// A size: decimal or 0x-hex integer, optional unit prefix k m g t p (powers of kb_base) or
// ki mi gi ti pi, optional trailing b/B. fio's kb_base=1024 rule (HOWTO "int"; parse.c
// __get_mult_bytes): k/kb = 1024 but kib = 1000 (the prefixes are "opposite" to IEC for old
// scripts); with kb_base=1000, k = 1000 and kib = 1024. "ki"/"mi" without the b count as
// k/m, as fio 3.33's parser reads them. Case-insensitive. REQUIRES: kb_base 1000 or 1024.
sim::Result<std::int64_t> parse_fio_size(std::string_view text, int kb_base);

// A size or a percentage "N%" (N in 1..100), for size= and offset=.
struct SizeOrPercent {
  std::int64_t bytes = 0;  // when !is_percent
  double percent = 0;      // when is_percent, in (0, 100]
  bool is_percent = false;
};
sim::Result<SizeOrPercent> parse_fio_size_or_percent(std::string_view text, int kb_base);

// A duration: integer with an optional unit d, h, m (minutes), s, ms/msec, us/usec,
// case-insensitive (fio parse.c get_mult_time); without a unit, `default_unit` (seconds for
// runtime/ramp_time/startdelay). "sec" is refused: fio 3.33 reads "2sec" as 2 microseconds.
sim::Result<sim::Time> parse_fio_time(std::string_view text, sim::Time default_unit);

}  // namespace afasim::workload
