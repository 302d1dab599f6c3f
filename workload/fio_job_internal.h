// Internals of the fio job-file parser (fio_job.h), shared by its source files:
// fio_text.cpp (fio's value syntax), fio_options.cpp (the option table), fio_apply.cpp
// (applying one option to a job, and the per-job checks) and fio_job.cpp (sections,
// inheritance, volumes, groups). Not a public interface: only workload/ includes it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"
#include "workload/fio_job.h"

namespace afasim::workload::fio_detail {

inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";  // a byte-order mark, dropped

using sim::Result;
using sim::Status;

// --- text (fio_text.cpp) ---------------------------------------------------------------

bool is_blank(char c);
std::string_view trim(std::string_view s);
std::string to_lower(std::string_view s);
bool is_digit(char c);
// Quotes a value for a message, escaping what would not print.
std::string quoted(std::string_view s);
// filename='s files: separated by ':', "\\:" a colon inside a name (fio's escape).
std::vector<std::string> split_file_names(std::string_view v);
std::vector<std::string_view> split(std::string_view s, char sep);
// An unsigned decimal integer, the whole of `s`; nullopt on anything else or overflow.
std::optional<std::uint64_t> parse_u64(std::string_view s);
// A plain decimal floating-point number ("1.2", "0.25", "99.99"), the whole of `s`.
std::optional<double> parse_double(std::string_view s);

struct ParsedSize {
  std::int64_t bytes = 0;
  bool iec_suffix_inverted = false;  // "kib" etc. under kb_base=1024: a power of 1000
  bool fractional = false;           // written with a decimal point ("1.5g")
};
// fio's size syntax (fio_job.h parse_fio_size), with the kb_base inversion flagged.
Result<ParsedSize> parse_size_detail(std::string_view text, int kb_base);

// --- the option table (fio_options.cpp) ------------------------------------------------

enum class Opt {
  kName,
  kDescription,
  kRw,
  kRwmixRead,
  kRwmixWrite,
  kBs,
  kBssplit,
  kBsRange,
  kBsUnaligned,
  kIodepth,
  kNumjobs,
  kSize,
  kIoSize,
  kOffset,
  kOffsetIncrement,
  kFilename,
  kRuntime,
  kTimeBased,
  kRampTime,
  kStartDelay,
  kLoops,
  kRateIops,
  kRate,
  kRateProcess,
  kRandomDistribution,
  kNoRandomMap,
  kRandSeed,
  kGroupReporting,
  kNewGroup,
  kStonewall,
  kWaitFor,
  kPercentileList,
  kKbBase,
  kVerify,
  kDoVerify,
  kNrFiles,
  kFileServiceType,
  kPercentageRandom,
  kBlockAlign,
  kThinkTime,
  kThinkTimeBlocks,
  kRateIopsMin,
  kRateMin,
  kRateCycle,
  kFsync,
  kFdatasync,
  kSync,
  kExitAll,
  kExitWhat,
  kNumberIos,
  kFileSize,
  kSteadyState,
  kSteadyStateDuration,
  kSteadyStateRamp,
  kLatencyTarget,
  kLatencyWindow,
  kLatencyPercentile,
  kLatencyRun,
  kMaxLatency,
  kThinkTimeBlocksType,
  kUnifiedRw,
  kSigFigs,
  kClatPercentiles,
  kLatPercentiles,
  kSlatPercentiles,
  kWriteBwLog,
  kWriteLatLog,
  kWriteIopsLog,
  kWriteHistLog,
  kLogAvgMsec,
  kLogHistMsec,
  kPerJobLogs,
  kLogOffset,
  kReadIolog,
  kReplayNoStall,
  kIgnored,
  kIoengine,
  kUnsupported,
};

struct OptionDef {
  std::string_view name;
  Opt id;
  std::string_view reason;  // for kIgnored: why it changes nothing; kUnsupported: why refused
};
// The option named `name` (aliases included); nullptr for an unknown one.
const OptionDef* find_option(std::string_view name);

// --- applying options (fio_apply.cpp) --------------------------------------------------

struct Entry {
  WrittenOption option;
  const OptionDef* def = nullptr;
  bool leading_blank = false;  // a blank right after '=': fio reads "bs= 8k" as 8 bytes
};

struct Location {
  std::string_view file;
  int line = 0;
  std::string_view option;
};

// "FILE:LINE: OPTION: message" (or "FILE:LINE: message" without an option).
Status located(const Location& at, const std::string& message);
Status located(const Location& at, const Status& inner);

struct JobState {
  FioJob job;
  std::string rw_suffix;
  std::optional<SizeOrPercent> size;
  std::optional<SizeOrPercent> offset;
  std::optional<SizeOrPercent> offset_increment;
  std::optional<std::int64_t> io_size;
  std::optional<std::int64_t> file_size;  // filesize=: each file's bytes
  std::array<std::vector<BlockSizeShare>, kDirections> split;  // from bssplit, may be empty
  std::map<Opt, int> line_of;          // line of the winning occurrence of each option
  std::map<Opt, std::string> name_of;  // its name as written
  std::map<Opt, std::string> file_of;  // its included file, if any
};

struct ApplyContext {
  std::vector<std::string>* warnings = nullptr;
  std::string_view file;
};

// Why an accepted option changes nothing, or nullopt when it does change the run.
std::optional<std::string> ignored_reason(const Entry& e);
// fio 3.33's I/O engines (`fio --enghelp`) by what afasim makes of them: an asynchronous
// block engine queues iodepth I/Os (as afasim does); a synchronous one keeps one in flight
// (fio's backend.c caps iodepth at 1); the others do no block I/O to a device (null, cpuio,
// net, exec, http, rdma, rados, file and directory operations) and an external library cannot
// run here: both refused.
enum class EngineKind { kAsync, kSync, kNotBlock, kExternal, kUnknown };
EngineKind engine_kind(std::string_view name);
// Applies ioengine=: the engine's name and whether it is synchronous, or the refusal.
Status apply_ioengine(JobState& s, const Entry& e);
// A synchronous engine keeps one I/O in flight: iodepth capped at 1 with fio's note
// (backend.c), added to `notes` at the ioengine= line.
void cap_sync_engine_depth(JobState& s, std::string_view file, std::vector<std::string>& notes);
// The options whose value is a byte count or time (a blank after '=' is refused).
bool is_numeric(Opt id);

// Value parsers shared by the apply files (fio_apply.cpp).
Result<bool> parse_bool(const Entry& e);
// A whole number in [lo, hi] (fio's int syntax, unit prefixes allowed, no fraction).
Result<std::int64_t> parse_count(std::string_view text, std::int64_t lo, std::int64_t hi,
                                 int kb_base);
// "R,W,T" values (fio's blocksize form): one value for all, "R,W" gives trim W's.
Result<std::array<std::optional<std::string_view>, 3>> per_direction(std::string_view value);
// A size, warning (once per line) when a KiB-style suffix means powers of 1000.
Result<std::int64_t> size_value(const ApplyContext& ctx, const Entry& e, std::string_view text,
                                int kb_base);

// The log prefix a bare `write_*_log` stands for until finalize() puts in the job's name.
inline constexpr std::string_view kJobNamePrefix = "\x01jobname";

// fio_apply_run.cpp: random_distribution=, and the options of Opt::kNrFiles..kReadIolog
// that are not flags.
// kInvalidArgument unless `bytes` (written `text`) is a whole number of 512-byte logical
// blocks, as block sizes, offsets and blockalign must be.
Status check_sector_multiple(std::string_view text, std::int64_t bytes);
Status apply_random_distribution(JobState& s, std::string_view value);
Status apply_run_option(JobState& s, const Entry& e, const ApplyContext& ctx);
// The checks across those options, called by finalize().
Status finalize_run_options(JobState& s, std::string_view file);

// Applies one option to the job being built. The error, if any, has no location yet.
Status apply(JobState& s, const Entry& e, const ApplyContext& ctx);
// Where option `id` of a job was written (its winning occurrence), for messages; the job's
// section line when the option was never given.
Location option_at(std::string_view file, const JobState& s, Opt id, std::string_view fallback);
// kInvalidArgument "FILE:LINE: size: ..." when the jobs' tracked random maps
// (FioJob::tracks_random_map) would hold more than kMaxRandomMapBytes.
Status check_random_maps(const std::vector<JobState>& states, std::string_view file);
// rw=read:HOLE with one block size in one direction: the bytes of one pass when fio ends it
// early (io_u.c get_next_seq_offset, fill_io_u): the last block ends at or past the file's
// end, or the next offset is inside the file but its block runs past the file or the offset
// past the region (fio reviews 33, 33b: read:12k bs=8k size=1m is 51 reads, not 128;
// read:12k size=128k is 7; read:4k bs=4k size=64k on a larger volume 8). fio wraps only
// where the next offset is at or past the file's end. `room_bytes`: the volume from the
// region's start (fio's file). nullopt when the job has no hole, several sizes or
// directions, or its passes wrap. REQUIRES: the job's region is resolved.
std::optional<std::int64_t> holed_pass_bytes(const FioJob& job, std::int64_t room_bytes);
// The one direction a sequential job draws (rw=rw with rwmixread=100 or 0 included); nullopt
// for a random job or one of two directions.
std::optional<Direction> sequential_direction(const FioJob& job);
// FioJob::io_size_bytes: io_size= or the region of every file, in whole smallest blocks (fio
// ends the job at its last whole block: size=9000 io_size=20000 bs=4k is 4 reads), one pass
// of a holed sequential job (holed_pass_bytes) when nothing else bounds it.
std::int64_t io_bytes_per_loop(const FioJob& job, std::optional<std::int64_t> io_size, std::int64_t room_bytes);
// fio td_steadystate_init: every job of a reporting group has the same steadystate options.
// kInvalidArgument "FILE:LINE: ..." naming the first job that differs.
Status check_steadystate_groups(const std::vector<FioJob>& jobs, std::string_view file);
// Cross-option checks of one job, after every option is applied; what fio would warn about
// and run anyway goes to `warnings` ("FILE:LINE: OPTION: ...").
Status finalize(JobState& s, std::string_view file, std::vector<std::string>& warnings);

}  // namespace afasim::workload::fio_detail
