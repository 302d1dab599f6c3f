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
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"
#include "sim/time.h"
#include "workload/fio_latency_target.h"
#include "workload/fio_steadystate.h"

namespace afasim::workload {

// fio's data directions (fio's DDIR_READ, DDIR_WRITE, DDIR_TRIM). Usable as an index.
enum class Direction : int { kRead = 0, kWrite = 1, kTrim = 2 };
inline constexpr int kDirections = 3;
inline constexpr int index_of(Direction d) {
  return static_cast<int>(d);
}
std::string_view to_string(Direction d);  // "read", "write", "trim"

// fio's `rw=` patterns, spelled as fio spells them (to_string gives "randread", "rw", ...).
// trimwrite / randtrimwrite trim a block, then write the same block (fio io_u.c).
enum class RwPattern {
  kRead,
  kWrite,
  kRandRead,
  kRandWrite,
  kReadWrite,
  kRandReadWrite,
  kTrim,
  kRandTrim,
  kTrimWrite,
  kRandTrimWrite
};
std::string_view to_string(RwPattern p);
bool is_random(RwPattern p);
bool does_reads(RwPattern p);
bool does_writes(RwPattern p);
bool does_trims(RwPattern p);
// trimwrite, randtrimwrite: each block is trimmed, then written.
bool is_trim_write(RwPattern p);
bool does_direction(RwPattern p, Direction d);

// fio's `random_distribution=` models.
enum class RandomDistribution { kUniform, kZipf, kPareto, kNormal, kZoned, kZonedAbs };
// "random", "zipf", "pareto", "normal", "zoned", "zoned_abs"
std::string_view to_string(RandomDistribution d);

// One zone of `random_distribution=zoned:` (size as a percentage of the region) or
// `zoned_abs:` (size in bytes): `access_percent` % of the I/Os go to it, uniformly.
struct AccessZone {
  int access_percent = 0;     // 0..100; a direction's zones add up to 100
  double size_percent = 0;    // zoned: share of the region, (0, 100]
  std::int64_t size_bytes = 0;  // zoned_abs: bytes, > 0
  bool operator==(const AccessZone&) const = default;
};

// fio's `unified_rw_reporting`: each direction apart (none), all summed as "mixed", or both.
enum class UnifiedReporting { kNone, kMixed, kBoth };

// fio's `file_service_type`: which of a clone's files (volumes) the next I/O goes to.
enum class FileService { kRoundRobin, kSequential, kRandom };

// fio's log files (write_*_log, docs/workloads.md "Log files"). Empty prefix: not written.
struct LogOptions {
  std::string bw_prefix;    // write_bw_log: PREFIX_bw.N.log
  std::string lat_prefix;   // write_lat_log: PREFIX_lat.N.log, _slat.N.log, _clat.N.log
  std::string iops_prefix;  // write_iops_log: PREFIX_iops.N.log
  std::string hist_prefix;  // write_hist_log: PREFIX_clat_hist.N.log
  sim::Time avg_ns = 0;     // log_avg_msec: average over windows; 0 = one line per I/O
  sim::Time hist_ns = 0;    // log_hist_msec: one histogram line per window
  bool per_job = true;      // per_job_logs: the .N (1-based clone number) in the name
  bool offset = false;      // log_offset: the I/O's offset column
  bool any() const {
    return !bw_prefix.empty() || !lat_prefix.empty() || !iops_prefix.empty() ||
           !hist_prefix.empty();
  }
};

// fio's `rate_process=`: fixed gaps between I/Os, or exponential gaps (Poisson arrivals).
enum class RateProcess { kLinear, kPoisson };
// fio's exit_what: which jobs an exitall job's end stops (fio backend.c fio_terminate_threads):
// those of its group (the default), those running in any group, or every job of the file.
enum class ExitWhat { kGroup, kStonewall, kAll };

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
  int line = 0;      // 1-based line in the file
  std::string file;  // the included file it was written in; empty: the job file itself
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
  std::string section;      // section name: default volume names use it, as fio's $jobname
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
  // `blockalign` per direction: random offsets are multiples of it; 0 = the job's smallest
  // block size (fio's default, min_bs).
  std::array<std::int64_t, kDirections> block_align_bytes = {0, 0, 0};
  // `percentage_random` per direction: share of a random job's I/Os at a random offset; the
  // rest continue sequentially from the last one (fio io_u.c). 0..100.
  std::array<int, kDirections> percentage_random = {100, 100, 100};

  int iodepth = 1;  // I/Os kept in flight per clone, 1..kMaxIodepth
  // ioengine=: "" when not given (afasim's engine queues iodepth I/Os, as libaio does; fio's
  // default, psync, would cap it at 1: docs/workloads.md), else the name as written. A
  // synchronous engine (psync, sync, pvsync2, mmap, ...) keeps one I/O in flight per clone:
  // iodepth is capped at 1 with fio's note, as fio does.
  std::string ioengine;
  bool sync_engine = false;
  int numjobs = 1;  // clones of this job, 1..kMaxClones

  // The volumes: `filename=a:b` (one volume per name, after the path rule of
  // volume_name_for_path), or empty when the job file gives none; then, as in fio, every
  // clone uses `nrfiles` volumes of its own named "NAME.CLONE.FILE" (see volume_name()).
  std::vector<std::string> filenames;
  // filename= paths as written, less a leading "/dev/" and '/' (so "/dev/sdb" and "sdb" are
  // one file): two paths that differ but share a volume name ("a/b", "a-b") are refused.
  std::vector<std::string> filename_paths;
  int nrfiles = 1;  // files (volumes) per clone: filenames.size() when given
  FileService file_service = FileService::kRoundRobin;
  std::int64_t file_service_ios = 1;  // I/Os before switching file (`roundrobin:N`)
  std::int64_t offset_bytes = 0;            // region start of clone 0, resolved from % too
  std::int64_t offset_increment_bytes = 0;  // clone k starts at offset + k × increment
  std::int64_t size_bytes = 0;              // region length per clone and file, > 0, resolved
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
  // `rate_iops_min` / `rate_min`: the job fails (EIO, as fio's check_min_rate) when a
  // direction completes less than this in a `rate_cycle` window. 0 = no minimum.
  std::array<std::int64_t, kDirections> rate_iops_min = {0, 0, 0};
  std::array<std::int64_t, kDirections> rate_min_bytes_per_second = {0, 0, 0};
  sim::Time rate_cycle_ns = sim::kSecond;  // fio's default rate_cycle=1000 (ms)

  // `thinktime`: after every `thinktime_blocks` I/Os, wait until every I/O in flight has
  // completed, then stay idle this long (fio backend.c handle_thinktime). 0 = none.
  sim::Time thinktime_ns = 0;
  std::int64_t thinktime_blocks = 1;

  // `fsync=N` / `fdatasync=N`: a flush after every N writes issued (0 = never); `sync=1`:
  // every write with FUA (O_SYNC). The array's flush and FUA semantics: docs/write-cache.md.
  std::int64_t fsync_every_writes = 0;
  std::int64_t fdatasync_every_writes = 0;
  bool sync_writes = false;
  // `verify=`: writes carry a pattern that is read back and checked once the job's writes
  // are done (fio's do_verify=1), unless the runtime ended them. Needs the array's payload
  // (afasim fio turns it on).
  bool verify = false;
  std::string verify_kind;  // as written: "md5", "crc32c", "pattern", ...
  bool do_verify = true;    // `do_verify=0`: write the pattern, skip the read-back
  // `exitall`: when this job finishes, the jobs `exit_what` names are stopped.
  bool exitall = false;
  // steadystate=, steadystate_duration=, steadystate_ramp_time= (fio_steadystate.h): the job
  // (with group_reporting its group) stops once its I/O rate is steady. Off by default.
  SteadyStateSpec steadystate;
  // latency_target=, latency_window=, latency_percentile=, latency_run=, max_latency=
  // (fio_latency_target.h): the queue-depth search under a latency target, and a latency
  // no I/O may exceed.
  LatencyTargetSpec latency;
  // `number_ios`: a clone stops after this many reads, writes and trims a loop (0: no such
  // bound), whichever of its bounds comes first (fio: it never extends the job).
  std::int64_t number_ios = 0;
  ExitWhat exit_what = ExitWhat::kGroup;

  RandomDistribution distribution = RandomDistribution::kUniform;
  double zipf_theta = 0;  // > 0 and != 1, when distribution == kZipf
  double pareto_h = 0;    // in (0, 1), when distribution == kPareto
  double normal_dev_percent = 0;  // `normal:DEV`: deviation in % of the region, (0, 100]
  // zoned / zoned_abs, per direction (a direction without zones of its own uses read's).
  std::array<std::vector<AccessZone>, kDirections> zones;
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
  // Digits after the point the normal output prints them with: the most any entry of
  // percentile_list was written with (fio parse.c), 2 for the default list.
  int percentile_precision = 2;
  bool clat_percentiles = true;   // print clat percentiles (fio's default)
  bool lat_percentiles = false;   // print total-latency percentiles
  bool slat_percentiles = false;  // print submission-latency percentiles
  UnifiedReporting unified_rw_reporting = UnifiedReporting::kNone;
  int significant_figures = 4;  // fio's sig_figs, 1..10: digits of IOPS and bw in text output
  int kb_base = 1024;  // fio's kb_base: 1024 (default, "4k" = 4096) or 1000
  LogOptions logs;
  // `read_iolog=FILE`: replay this trace (any format trace_reader.h reads) instead of
  // generating I/O: at its recorded times, or back to back with `replay_no_stall`; its
  // devices go to the job's volumes in first-appearance order.
  std::string read_iolog;
  bool replay_no_stall = false;

  // The options written in this job's own section (not the inherited ones), in file order.
  std::vector<WrittenOption> options;

  // Files (volumes) per clone.
  int file_count() const { return filenames.empty() ? nrfiles : static_cast<int>(filenames.size()); }
  // The volume of file `file` of clone `clone`. REQUIRES: 0 <= clone < numjobs,
  // 0 <= file < file_count().
  std::string volume_name(int clone, int file = 0) const;
  // Start of clone `clone`'s region in its volume: offset + clone × offset_increment.
  std::int64_t region_offset_bytes(int clone) const;
  // The smallest block size over the directions this job issues: the unit of its random
  // offsets (fio's min_bs).
  std::int64_t min_block_bytes() const;
  // Whether the random map keeps a bit per min_block_bytes() block, as fio's axmap does:
  // uniform random I/O with the map on, mixed sizes within a direction (bssplit, bsrange), every
  // direction's smallest size the same, and no blockalign other than that block. Then an I/O starts on a block this pass has not
  // touched and is cut short where a touched one begins (fio io_u.c mark_random_map); without
  // it I/Os of different sizes would overlap and leave part of the region untouched.
  bool tracks_random_map() const;
  // Bytes a clone transfers before it is done when not time_based: io_size × loops, twice
  // that for trimwrite (every byte trimmed, then written, as fio counts them).
  std::int64_t total_io_bytes() const;
};

// A volume the job file uses: each distinct filename (or default per-clone name).
struct FioVolume {
  std::string name;
  std::int64_t size_bytes = 0;  // the largest end of any region on it: offset + size
  int line = 0;  // its filename= line in the job file, else the first job section that uses it
  bool bare_device = false;  // the run's bare device (FioParseOptions::device_bytes), no volume
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
  // What fio prints as a note, each "FILE:LINE: note: ..." (a synchronous ioengine's iodepth
  // capped at 1): not a warning, --warnings-fatal passes them.
  std::vector<std::string> notes;

  int group_count() const;  // number of reporting groups (max group_id + 1)
  int clone_count() const;  // sum of numjobs
  // The I/Os per second the jobs' rate_iops ask for together over [from_ns, to_ns) of
  // simulated time from the file's start: clones × the cap of each direction a job issues
  // (as fio, each direction runs at its own cap; the rwmix share only decides which
  // directions are issued). nullopt when that is not a rate the file asks for throughout:
  // a job reads or writes uncapped (no rate_iops for a direction it issues) or caps bytes
  // (rate=), thinks or trims; or is not running for the whole window (not time_based, a
  // startdelay past from_ns, a runtime ending before to_ns, or stonewalled groups).
  std::optional<double> capped_iops(sim::Time from_ns, sim::Time to_ns) const;
};

// Bounds afasim puts on a job file (fio has none or larger ones; every queue has a bound).
inline constexpr int kMaxClones = 4096;      // total numjobs of a file: fio's REAL_MAX_JOBS
inline constexpr int kMaxIodepth = 65536;    // assumption: far above any device queue
inline constexpr int kMaxLoops = 1'000'000;  // assumption
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 60;  // 1 EiB, any size value
// The largest single I/O afasim simulates, as VDBench's xfersize and a trace record: an I/O
// keeps per-piece state for its whole length (hostile round 23: one 1 TiB write took 3.7 GB
// and ran out of memory). NBD clients send at most 32 MiB.
inline constexpr std::int64_t kMaxIoBytes = std::int64_t{1} << 30;
// The random maps of a file's jobs with mixed block sizes (FioJob::tracks_random_map), all
// together: 1 GiB is a bit per 4 KiB block of 32 TiB of regions. Assumption.
inline constexpr std::int64_t kMaxRandomMapBytes = std::int64_t{1} << 30;
inline constexpr sim::Time kMaxDuration = 10 * sim::kYear;        // any time value
inline constexpr std::size_t kMaxLineBytes = 4096;                // fio's OPT_LEN_MAX: 4096 or 8192
inline constexpr std::size_t kMaxFileBytes = 1 << 20;  // a job file over 1 MiB is refused

// The volume a `filename=` path stands for (docs/workloads.md "Volumes"): a leading
// "/dev/" is dropped, then every other '/' becomes '-', leading ones dropped:
// "/dev/sdb" → "sdb", "/dev/mapper/vg-lv" → "mapper-vg-lv", "/mnt/t/f1" → "mnt-t-f1";
// a plain name stays as it is.
std::string volume_name_for_path(std::string_view path);
// The path volume_name_for_path names, before '/' becomes '-': "/dev/mapper/vg-lv" →
// "mapper/vg-lv".
std::string_view file_path_of(std::string_view path);

// fio's default percentile list (stat.c): 1 5 10 20 30 40 50 60 70 80 90 95 99 99.5 99.9
// 99.95 99.99.
const std::vector<double>& default_percentile_list();

// How the parser reaches outside the text. The defaults reach nothing: a `${NAME}` or an
// `include` line is then an error, and every job section is kept.
struct FioParseOptions {
  // `${NAME}` in a line is replaced by env(NAME); nullopt (unset) is an error naming it
  // (fio would substitute an empty string).
  std::function<std::optional<std::string>(const std::string& name)> env;
  // `include FILE` (inside a section, as fio): the text of FILE as written, relative paths
  // resolved against the including file's folder by the callee. kNotFound when unreadable.
  // Included files hold options only; includes nest up to kMaxIncludeDepth.
  std::function<sim::Result<std::string>(const std::string& path, const std::string& from)>
      read_include;
  // fio's --section: only these job sections run (in file order; [global] always applies).
  // Each must exist. Empty: every section.
  std::vector<std::string> sections;
  // A bare device's capacity: every filename is then the whole device, as fio sees a block
  // device (size=50% and offset=50% are of it; a job without size= covers it; a region past
  // its end is an error). 0: an array, whose volumes are sized from the jobs (the largest
  // absolute offset + size; a volume no job sizes is an error naming the job).
  std::int64_t device_bytes = 0;
  // On an array, the size of a volume no job sizes (its jobs have no size=, or percentages:
  // fio's jobs on a whole device, filename=/dev/nvme0n1), as `afasim fio --volume-size`;
  // a job without size= then covers its volume. 0: such a volume is an error naming the job.
  std::int64_t volume_bytes = 0;
  // Volumes sized elsewhere (a scenario's `volumes`), by name: one that no job sizes takes its
  // size from here before `volume_bytes`, and a job without size= covers it.
  std::map<std::string, std::int64_t> declared_volume_bytes;
};
inline constexpr int kMaxIncludeDepth = 8;
// Included files one job file may read in all, and their bytes in all (each file is at most
// kMaxFileBytes): a job file with 10 includes at each of 8 levels had read 10^7 files.
inline constexpr int kMaxIncludeFiles = 1024;
inline constexpr std::size_t kMaxIncludeBytes = 16 << 20;

// `include PATH` written in file `from`: PATH from the current folder (a relative PATH is
// relative to `from`'s folder, as fio reads it).
std::string include_path(std::string_view path, std::string_view from);

// The files `f` names that a run reads besides its job files: included files (from the
// current folder) and read_iolog traces, as written.
std::vector<std::string> fio_referenced_files(const FioJobFile& f);

// Parses job-file text. `file_name` only labels messages. On success: the resolved jobs
// (at least one). On failure: kInvalidArgument "FILE:LINE: OPTION: what is wrong" for the
// first problem found (FILE:LINE: ... when no option is involved).
sim::Result<FioJobFile> parse_fio_job_file(std::string_view text, std::string_view file_name,
                                           const FioParseOptions& options = {});

// Reads `path` and parses it. kNotFound when the file cannot be read; kInvalidArgument for
// a file over kMaxFileBytes or a parse error.
sim::Result<FioJobFile> load_fio_job_file(const std::string& path,
                                          const FioParseOptions& options = {});

// The options `afasim fio` parses with: the process environment for ${NAME}, and include
// files read from disk, relative to the including file's folder.
FioParseOptions host_parse_options();

// Reads a whole text file of at most kMaxFileBytes. kNotFound / kInvalidArgument.
sim::Result<std::string> read_job_text(const std::string& path);
// Drops a UTF-8 byte-order mark before the first line (Windows editors write one), as
// read_job_text does: for job text read some other way (standard input).
void drop_byte_order_mark(std::string& text);

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
