#include "workload/fio_job.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace afasim::workload {
namespace {

using sim::Result;
using sim::Status;

// ---------------------------------------------------------------------------------------
// Small text helpers.

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Quotes a value for a message, escaping what would not print.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out + "\"";
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

// An unsigned decimal integer, the whole of `s`; nullopt on anything else or overflow.
std::optional<std::uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// A plain decimal floating-point number ("1.2", "0.25", "99.99"), the whole of `s`.
std::optional<double> parse_double(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  for (char c : s) {
    if (!is_digit(c) && c != '.') return std::nullopt;  // no sign, no exponent, no "inf"
  }
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// What fio's size syntax cannot express, with a message naming the value.
Status refuse_expression(std::string_view text) {
  if (!text.empty() && text.front() == '(') {
    return sim::invalid_argument(quoted(text) + ": arithmetic expressions are not supported");
  }
  if (text.find('$') != std::string_view::npos) {
    return sim::invalid_argument(quoted(text) +
                                 ": environment variables and $keywords are not expanded");
  }
  return Status::ok();
}

struct ParsedSize {
  std::int64_t bytes = 0;
  bool iec_suffix_inverted = false;  // "kib" etc. under kb_base=1024: a power of 1000
};

Result<ParsedSize> parse_size_detail(std::string_view text, int kb_base) {
  AFASIM_ASSERT(kb_base == 1000 || kb_base == 1024, "kb_base is 1000 or 1024");
  AFASIM_RETURN_IF_ERROR(refuse_expression(text));
  const std::string not_a_size = quoted(text) + " is not a size";
  if (text.empty()) return sim::invalid_argument(not_a_size);
  std::uint64_t value = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    const std::string_view hex = text.substr(2);
    const auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
    if (ec != std::errc() || ptr != hex.data() + hex.size()) {
      return sim::invalid_argument(not_a_size + " (a 0x number takes no unit)");
    }
    if (value > static_cast<std::uint64_t>(kMaxBytes)) {
      return sim::invalid_argument(quoted(text) + " is larger than 1 EiB");
    }
    return ParsedSize{static_cast<std::int64_t>(value), false};
  }
  std::size_t digits = 0;
  while (digits < text.size() && is_digit(text[digits])) ++digits;
  if (digits == 0) return sim::invalid_argument(not_a_size);
  if (digits < text.size() && text[digits] == '.') {
    return sim::invalid_argument(quoted(text) +
                                 " is not a whole number (fio would drop the fraction)");
  }
  const auto number = parse_u64(text.substr(0, digits));
  if (!number) return sim::invalid_argument(quoted(text) + " is larger than 1 EiB");
  value = *number;
  const std::string suffix = to_lower(text.substr(digits));
  int power = 0;
  bool iec = false;
  if (!suffix.empty() && suffix != "b") {
    static constexpr std::string_view kPrefixes = "kmgtp";
    const auto at = kPrefixes.find(suffix[0]);
    const std::string_view rest = std::string_view(suffix).substr(1);
    if (at == std::string_view::npos ||
        !(rest.empty() || rest == "b" || rest == "i" || rest == "ib")) {
      return sim::invalid_argument(not_a_size + " (units: k m g t p, ki mi gi ti pi, optional B)");
    }
    power = static_cast<int>(at) + 1;
    iec = rest == "ib";  // fio flips the base only for the full "kib" form (parse.c)
  }
  const std::uint64_t base = iec ? (kb_base == 1024 ? 1000 : 1024) : kb_base;
  for (int i = 0; i < power; ++i) {
    if (value > static_cast<std::uint64_t>(kMaxBytes) / base) {
      return sim::invalid_argument(quoted(text) + " is larger than 1 EiB");
    }
    value *= base;
  }
  if (value > static_cast<std::uint64_t>(kMaxBytes)) {
    return sim::invalid_argument(quoted(text) + " is larger than 1 EiB");
  }
  return ParsedSize{static_cast<std::int64_t>(value), iec && kb_base == 1024};
}

// ---------------------------------------------------------------------------------------
// The option table.

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
  kIgnored,
  kUnsupported,
};

struct OptionDef {
  std::string_view name;
  Opt id;
  std::string_view reason;  // for kIgnored: why it changes nothing; kUnsupported: why refused
};

constexpr std::string_view kHostOnly = "host-side only; the simulated array does not see it";
constexpr std::string_view kEngine = "afasim is the I/O engine";
constexpr std::string_view kNoLogs = "afasim writes no fio log files";
constexpr std::string_view kBuffers = "buffer contents are not simulated (no dedupe/compression)";
constexpr std::string_view kFiles = "volumes are block devices, not files";

// Every option name afasim knows, with aliases. Anything else is "unknown option".
constexpr OptionDef kOptions[] = {
    {"name", Opt::kName, {}},
    {"description", Opt::kDescription, {}},
    {"rw", Opt::kRw, {}},
    {"readwrite", Opt::kRw, {}},
    {"rwmixread", Opt::kRwmixRead, {}},
    {"rwmixwrite", Opt::kRwmixWrite, {}},
    {"bs", Opt::kBs, {}},
    {"blocksize", Opt::kBs, {}},
    {"bssplit", Opt::kBssplit, {}},
    {"blocksize_range", Opt::kBsRange, {}},
    {"bsrange", Opt::kBsRange, {}},
    {"blocksize_unaligned", Opt::kBsUnaligned, {}},
    {"bs_unaligned", Opt::kBsUnaligned, {}},
    {"iodepth", Opt::kIodepth, {}},
    {"numjobs", Opt::kNumjobs, {}},
    {"size", Opt::kSize, {}},
    {"io_size", Opt::kIoSize, {}},
    {"io_limit", Opt::kIoSize, {}},
    {"offset", Opt::kOffset, {}},
    {"offset_increment", Opt::kOffsetIncrement, {}},
    {"filename", Opt::kFilename, {}},
    {"runtime", Opt::kRuntime, {}},
    {"timeout", Opt::kRuntime, {}},
    {"time_based", Opt::kTimeBased, {}},
    {"ramp_time", Opt::kRampTime, {}},
    {"startdelay", Opt::kStartDelay, {}},
    {"loops", Opt::kLoops, {}},
    {"rate_iops", Opt::kRateIops, {}},
    {"rate", Opt::kRate, {}},
    {"rate_process", Opt::kRateProcess, {}},
    {"random_distribution", Opt::kRandomDistribution, {}},
    {"norandommap", Opt::kNoRandomMap, {}},
    {"randseed", Opt::kRandSeed, {}},
    {"group_reporting", Opt::kGroupReporting, {}},
    {"new_group", Opt::kNewGroup, {}},
    {"stonewall", Opt::kStonewall, {}},
    {"wait_for_previous", Opt::kStonewall, {}},
    {"wait_for", Opt::kWaitFor, {}},
    {"percentile_list", Opt::kPercentileList, {}},
    {"kb_base", Opt::kKbBase, {}},
    {"verify", Opt::kVerify, {}},
    // Accepted, no effect in a simulation.
    {"ioengine", Opt::kIgnored, kEngine},
    {"direct", Opt::kIgnored, "I/O always reaches the array as with direct=1"},
    {"buffered", Opt::kIgnored, "I/O always reaches the array as with direct=1"},
    {"thread", Opt::kIgnored, kHostOnly},
    {"iodepth_batch", Opt::kIgnored, kEngine},
    {"iodepth_batch_submit", Opt::kIgnored, kEngine},
    {"iodepth_batch_complete", Opt::kIgnored, kEngine},
    {"iodepth_batch_complete_min", Opt::kIgnored, kEngine},
    {"iodepth_batch_complete_max", Opt::kIgnored, kEngine},
    {"iodepth_low", Opt::kIgnored, kEngine},
    {"refill_buffers", Opt::kIgnored, kBuffers},
    {"zero_buffers", Opt::kIgnored, kBuffers},
    {"scramble_buffers", Opt::kIgnored, kBuffers},
    {"buffer_pattern", Opt::kIgnored, kBuffers},
    {"buffer_compress_percentage", Opt::kIgnored, kBuffers},
    {"buffer_compress_chunk", Opt::kIgnored, kBuffers},
    {"dedupe_percentage", Opt::kIgnored, kBuffers},
    {"invalidate", Opt::kIgnored, "there is no host page cache in a simulation"},
    {"pre_read", Opt::kIgnored, "there is no host page cache in a simulation"},
    {"fadvise_hint", Opt::kIgnored, kHostOnly},
    {"randrepeat", Opt::kIgnored, "afasim runs are always repeatable from --seed"},
    {"allrandrepeat", Opt::kIgnored, "afasim runs are always repeatable from --seed"},
    {"random_generator", Opt::kIgnored, "afasim draws offsets from its own seeded streams"},
    {"softrandommap", Opt::kIgnored, "afasim's random map needs no memory"},
    {"clocksource", Opt::kIgnored, "time is virtual"},
    {"gtod_reduce", Opt::kIgnored, "time is virtual"},
    {"disable_lat", Opt::kIgnored, "every latency is measured in virtual time"},
    {"disable_clat", Opt::kIgnored, "every latency is measured in virtual time"},
    {"disable_slat", Opt::kIgnored, "every latency is measured in virtual time"},
    {"disable_bw_measurement", Opt::kIgnored, "every latency is measured in virtual time"},
    {"clat_percentiles", Opt::kIgnored, "afasim always reports clat percentiles"},
    {"lat_percentiles", Opt::kIgnored, "afasim always reports clat percentiles"},
    {"slat_percentiles", Opt::kIgnored, "afasim always reports clat percentiles"},
    {"cpus_allowed", Opt::kIgnored, kHostOnly},
    {"cpus_allowed_policy", Opt::kIgnored, kHostOnly},
    {"cpumask", Opt::kIgnored, kHostOnly},
    {"numa_cpu_nodes", Opt::kIgnored, kHostOnly},
    {"numa_mem_policy", Opt::kIgnored, kHostOnly},
    {"nice", Opt::kIgnored, kHostOnly},
    {"prio", Opt::kIgnored, kHostOnly},
    {"prioclass", Opt::kIgnored, kHostOnly},
    {"lockmem", Opt::kIgnored, kHostOnly},
    {"mem", Opt::kIgnored, kHostOnly},
    {"iomem", Opt::kIgnored, kHostOnly},
    {"mem_align", Opt::kIgnored, kHostOnly},
    {"iomem_align", Opt::kIgnored, kHostOnly},
    {"hugepage-size", Opt::kIgnored, kHostOnly},
    {"ioscheduler", Opt::kIgnored, kHostOnly},
    {"per_job_logs", Opt::kIgnored, kNoLogs},
    {"write_bw_log", Opt::kIgnored, kNoLogs},
    {"write_lat_log", Opt::kIgnored, kNoLogs},
    {"write_iops_log", Opt::kIgnored, kNoLogs},
    {"write_hist_log", Opt::kIgnored, kNoLogs},
    {"log_avg_msec", Opt::kIgnored, kNoLogs},
    {"log_hist_msec", Opt::kIgnored, kNoLogs},
    {"log_max_value", Opt::kIgnored, kNoLogs},
    {"log_offset", Opt::kIgnored, kNoLogs},
    {"log_compression", Opt::kIgnored, kNoLogs},
    {"bwavgtime", Opt::kIgnored, kNoLogs},
    {"iopsavgtime", Opt::kIgnored, kNoLogs},
    {"unit_base", Opt::kIgnored, "reports are always in bytes"},
    {"fallocate", Opt::kIgnored, kFiles},
    {"create_serialize", Opt::kIgnored, kFiles},
    {"create_fsync", Opt::kIgnored, kFiles},
    {"create_on_open", Opt::kIgnored, kFiles},
    {"allow_file_create", Opt::kIgnored, kFiles},
    {"allow_mounted_write", Opt::kIgnored, kFiles},
    {"unlink", Opt::kIgnored, kFiles},
    {"unlink_each_loop", Opt::kIgnored, kFiles},
    {"overwrite", Opt::kIgnored, kFiles},
    {"directory", Opt::kIgnored, "filename= names a volume of the simulated array"},
    {"end_fsync", Opt::kIgnored,
     "the array's write cache is non-volatile; a flush changes nothing"},
    {"fsync_on_close", Opt::kIgnored,
     "the array's write cache is non-volatile; a flush changes nothing"},
    {"continue_on_error", Opt::kIgnored, "a simulated I/O error is reported either way"},
    {"group", Opt::kIgnored, kHostOnly},
    // Known fio options that would change the workload and are not simulated: refused.
    {"thinktime", Opt::kUnsupported, "think time is not simulated"},
    {"thinktime_blocks", Opt::kUnsupported, "think time is not simulated"},
    {"thinktime_spin", Opt::kUnsupported, "think time is not simulated"},
    {"thinktime_iotime", Opt::kUnsupported, "think time is not simulated"},
    {"nrfiles", Opt::kUnsupported, "one volume per job (one filename)"},
    {"openfiles", Opt::kUnsupported, "one volume per job (one filename)"},
    {"file_service_type", Opt::kUnsupported, "one volume per job (one filename)"},
    {"filesize", Opt::kUnsupported, "volumes are sized from size="},
    {"filename_format", Opt::kUnsupported, "default volume names follow fio's default format"},
    {"fill_device", Opt::kUnsupported, "volumes are sized from size="},
    {"fill_fs", Opt::kUnsupported, "volumes are sized from size="},
    {"zonemode", Opt::kUnsupported, "zoned I/O is not simulated"},
    {"zonesize", Opt::kUnsupported, "zoned I/O is not simulated"},
    {"zonerange", Opt::kUnsupported, "zoned I/O is not simulated"},
    {"zoneskip", Opt::kUnsupported, "zoned I/O is not simulated"},
    {"percentage_random", Opt::kUnsupported, "mixed sequential/random I/O is not simulated"},
    {"blockalign", Opt::kUnsupported, "random offsets are aligned to the smallest block size"},
    {"ba", Opt::kUnsupported, "random offsets are aligned to the smallest block size"},
    {"offset_align", Opt::kUnsupported, "percent offsets are aligned to the smallest block size"},
    {"bs_is_seq_rand", Opt::kUnsupported, "not simulated"},
    {"rw_sequencer", Opt::kUnsupported, "only the sequential sequencer is simulated"},
    {"unified_rw_reporting", Opt::kUnsupported, "reads and writes are reported apart"},
    {"number_ios", Opt::kUnsupported, "use io_size="},
    {"fsync", Opt::kUnsupported, "flushes are not simulated"},
    {"fdatasync", Opt::kUnsupported, "flushes are not simulated"},
    {"sync", Opt::kUnsupported, "synchronous (FUA) writes are not simulated"},
    {"write_barrier", Opt::kUnsupported, "flushes are not simulated"},
    {"sync_file_range", Opt::kUnsupported, "flushes are not simulated"},
    {"trim_percentage", Opt::kUnsupported, "trim is not simulated"},
    {"trim_backlog", Opt::kUnsupported, "trim is not simulated"},
    {"exitall", Opt::kUnsupported, "not simulated"},
    {"exitall_on_error", Opt::kUnsupported, "not simulated"},
    {"exit_what", Opt::kUnsupported, "not simulated"},
    {"steadystate", Opt::kUnsupported, "steady-state detection is not simulated"},
    {"ss", Opt::kUnsupported, "steady-state detection is not simulated"},
    {"steadystate_duration", Opt::kUnsupported, "steady-state detection is not simulated"},
    {"ss_dur", Opt::kUnsupported, "steady-state detection is not simulated"},
    {"steadystate_ramp_time", Opt::kUnsupported, "steady-state detection is not simulated"},
    {"ss_ramp", Opt::kUnsupported, "steady-state detection is not simulated"},
    {"latency_target", Opt::kUnsupported, "latency targets are not simulated"},
    {"latency_window", Opt::kUnsupported, "latency targets are not simulated"},
    {"latency_percentile", Opt::kUnsupported, "latency targets are not simulated"},
    {"max_latency", Opt::kUnsupported, "latency targets are not simulated"},
    {"rate_min", Opt::kUnsupported, "minimum rates are not simulated"},
    {"rate_iops_min", Opt::kUnsupported, "minimum rates are not simulated"},
    {"rate_cycle", Opt::kUnsupported, "minimum rates are not simulated"},
    {"rate_ignore_thinktime", Opt::kUnsupported, "think time is not simulated"},
    {"flow", Opt::kUnsupported, "flow control is not simulated"},
    {"flow_id", Opt::kUnsupported, "flow control is not simulated"},
    {"ignore_error", Opt::kUnsupported, "not simulated"},
    {"stats", Opt::kUnsupported, "every job is reported"},
    {"cmdprio_percentage", Opt::kUnsupported, "I/O priorities are not simulated"},
    {"cmdprio_class", Opt::kUnsupported, "I/O priorities are not simulated"},
    {"cmdprio_bssplit", Opt::kUnsupported, "I/O priorities are not simulated"},
    {"exec_prerun", Opt::kUnsupported, "afasim never runs host commands"},
    {"exec_postrun", Opt::kUnsupported, "afasim never runs host commands"},
    {"read_iolog", Opt::kUnsupported, "trace replay is a separate front end"},
    {"write_iolog", Opt::kUnsupported, "trace replay is a separate front end"},
    {"replay_no_stall", Opt::kUnsupported, "trace replay is a separate front end"},
    {"do_verify", Opt::kUnsupported, "data verification is not simulated"},
    {"verify_only", Opt::kUnsupported, "data verification is not simulated"},
    {"experimental_verify", Opt::kUnsupported, "data verification is not simulated"},
    {"atomic", Opt::kUnsupported, "atomic writes are not simulated"},
    {"create_only", Opt::kUnsupported, "volumes are created by the run"},
    {"io_submit_mode", Opt::kUnsupported, "not simulated"},
    {"serialize_overlap", Opt::kUnsupported, "not simulated"},
    {"file_append", Opt::kUnsupported, kFiles},
    {"zone_reset_threshold", Opt::kUnsupported, "zoned I/O is not simulated"},
    {"zone_reset_frequency", Opt::kUnsupported, "zoned I/O is not simulated"},
    {"include", Opt::kUnsupported, "include files are not supported"},
};

const OptionDef* find_option(std::string_view name) {
  for (const auto& def : kOptions) {
    if (def.name == name) return &def;
  }
  // verify_* modifiers are harmless when verify itself is off (verify= is checked).
  static constexpr OptionDef kVerifyModifier{"verify_*", Opt::kIgnored,
                                             "data verification is not simulated"};
  if (name.size() > 7 && name.substr(0, 7) == "verify_") return &kVerifyModifier;
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// Resolving one job.

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

Status located(const Location& at, const std::string& message) {
  std::string out(at.file);
  out += ':';
  out += std::to_string(at.line);
  out += ": ";
  if (!at.option.empty()) {
    out += at.option;
    out += ": ";
  }
  out += message;
  return sim::invalid_argument(std::move(out));
}

Status located(const Location& at, const Status& inner) {
  return located(at, inner.message());
}

// State built while applying options; cross-option checks happen in finalize().
struct JobState {
  FioJob job;
  std::string rw_suffix;
  std::optional<SizeOrPercent> size;
  std::optional<SizeOrPercent> offset;
  std::optional<SizeOrPercent> offset_increment;
  std::optional<std::int64_t> io_size;
  std::array<std::vector<BlockSizeShare>, kDirections> split;  // from bssplit, may be empty
  std::map<Opt, int> line_of;          // line of the winning occurrence of each option
  std::map<Opt, std::string> name_of;  // its name as written
};

Result<bool> parse_bool(const Entry& e) {
  if (!e.option.has_value) return true;
  if (e.option.value == "1") return true;
  if (e.option.value == "0") return false;
  return sim::invalid_argument(quoted(e.option.value) + " is not 0 or 1");
}

Result<std::int64_t> parse_count(std::string_view text, std::int64_t lo, std::int64_t hi,
                                 int kb_base) {
  auto v = parse_size_detail(text, kb_base);
  if (!v.is_ok()) return sim::invalid_argument(quoted(text) + " is not a whole number");
  if (v->bytes < lo || v->bytes > hi) {
    return sim::invalid_argument(quoted(text) + " is out of range " + std::to_string(lo) + ".." +
                                 std::to_string(hi));
  }
  return v->bytes;
}

// The "read,write[,trim]" form shared by bs, bsrange, bssplit, rate and rate_iops (HOWTO
// "blocksize"): one value applies to both directions; with commas, an empty part leaves that
// direction unchanged; the trim part is checked and dropped.
Result<std::array<std::optional<std::string_view>, 3>> per_direction(std::string_view value) {
  std::array<std::optional<std::string_view>, 3> out;
  const auto parts = split(value, ',');
  if (parts.size() > 3) {
    return sim::invalid_argument(quoted(value) + " has more than read,write,trim values");
  }
  if (parts.size() == 1) {
    if (trim(parts[0]).empty()) return sim::invalid_argument("empty value");
    out[0] = out[1] = out[2] = trim(parts[0]);
    return out;
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!trim(parts[i]).empty()) out[i] = trim(parts[i]);
  }
  if (parts.size() == 2 && out[1]) out[2] = out[1];  // "8k,32k" gives trim the write value
  if (!out[0] && !out[1] && !out[2]) return sim::invalid_argument("empty value");
  return out;
}

// One direction of bssplit "4k/50:8k/:16k/" (options.c bssplit_ddir): an empty or zero
// percentage gets an equal share of what the others leave. Unlike fio we require the shares
// to add up to exactly 100 (fio gives a shortfall to the last entry and lets some overshoots
// through); the integer remainder of an equal split goes to the first blank entries.
Result<std::vector<BlockSizeShare>> parse_bssplit_direction(std::string_view text, int kb_base) {
  std::vector<BlockSizeShare> shares;
  std::vector<bool> blank;
  for (std::string_view item : split(text, ':')) {
    item = trim(item);
    if (item.empty()) {
      return sim::invalid_argument(quoted(text) + " has an empty entry (want SIZE/PERCENT:...)");
    }
    if (shares.size() == 64) return sim::invalid_argument("more than 64 entries (fio's limit)");
    const auto slash = item.find('/');
    const std::string_view size_text =
        slash == std::string_view::npos ? item : item.substr(0, slash);
    auto size = parse_size_detail(trim(size_text), kb_base);
    if (!size.is_ok()) return size.status();
    if (size->bytes == 0) return sim::invalid_argument(quoted(size_text) + " is not a block size");
    int percent = 0;
    bool is_blank_share = true;
    if (slash != std::string_view::npos) {
      const std::string_view p = trim(item.substr(slash + 1));
      if (!p.empty()) {
        const auto v = parse_u64(p);
        if (!v || *v > 100) {
          return sim::invalid_argument(quoted(p) + " is not a percentage 0..100");
        }
        percent = static_cast<int>(*v);
        is_blank_share = percent == 0;  // fio: "bs/0" is filled in like "bs/"
      }
    }
    shares.push_back({size->bytes, percent});
    blank.push_back(is_blank_share);
  }
  int given = 0;
  int missing = 0;
  for (std::size_t i = 0; i < shares.size(); ++i) {
    if (blank[i])
      ++missing;
    else
      given += shares[i].percent;
  }
  if (given > 100) {
    return sim::invalid_argument(quoted(text) + ": percentages add up to " + std::to_string(given) +
                                 ", more than 100");
  }
  if (missing == 0 && given != 100) {
    return sim::invalid_argument(quoted(text) + ": percentages add up to " + std::to_string(given) +
                                 ", not 100");
  }
  if (missing > 0) {
    const int each = (100 - given) / missing;
    int extra = (100 - given) % missing;
    for (std::size_t i = 0; i < shares.size(); ++i) {
      if (!blank[i]) continue;
      shares[i].percent = each + (extra > 0 ? 1 : 0);
      if (extra > 0) --extra;
    }
  }
  // fio keeps its list sorted by percentage for lookup; order does not change the draw.
  std::stable_sort(
      shares.begin(), shares.end(),
      [](const BlockSizeShare& a, const BlockSizeShare& b) { return a.percent < b.percent; });
  return shares;
}

// "1k-4k" or "1k:4k" (fio irange); the ends are swapped when given high-low.
Result<std::pair<std::int64_t, std::int64_t>> parse_size_range(std::string_view text, int kb_base) {
  auto sep = text.find('-');
  if (sep == std::string_view::npos) sep = text.find(':');
  if (sep == std::string_view::npos) {
    return sim::invalid_argument(quoted(text) + " is not a range LOW-HIGH");
  }
  auto lo = parse_size_detail(trim(text.substr(0, sep)), kb_base);
  if (!lo.is_ok()) return lo.status();
  auto hi = parse_size_detail(trim(text.substr(sep + 1)), kb_base);
  if (!hi.is_ok()) return hi.status();
  std::int64_t a = lo->bytes, b = hi->bytes;
  if (a > b) std::swap(a, b);
  if (a == 0) return sim::invalid_argument(quoted(text) + ": a block size must be > 0");
  return std::pair{a, b};
}

Status apply_rw(JobState& s, std::string_view value) {
  const auto colon = value.find(':');
  const std::string_view mode = value.substr(0, colon);
  struct Name {
    std::string_view text;
    RwPattern rw;
  };
  static constexpr Name kNames[] = {
      {"read", RwPattern::kRead},           {"write", RwPattern::kWrite},
      {"randread", RwPattern::kRandRead},   {"randwrite", RwPattern::kRandWrite},
      {"rw", RwPattern::kReadWrite},        {"readwrite", RwPattern::kReadWrite},
      {"randrw", RwPattern::kRandReadWrite}};
  for (const auto& n : kNames) {
    if (n.text == mode) {
      s.job.rw = n.rw;
      s.rw_suffix = colon == std::string_view::npos ? "" : std::string(value.substr(colon + 1));
      if (colon != std::string_view::npos && trim(s.rw_suffix).empty()) {
        return sim::invalid_argument(quoted(value) + ": nothing after ':'");
      }
      return Status::ok();
    }
  }
  if (mode == "trim" || mode == "randtrim" || mode == "trimwrite" || mode == "randtrimwrite") {
    return sim::invalid_argument(quoted(value) + ": trim is not simulated");
  }
  return sim::invalid_argument(quoted(value) +
                               " is not one of read, write, randread, randwrite, rw, readwrite, "
                               "randrw");
}

Status apply_random_distribution(JobState& s, std::string_view value) {
  const auto parts = split(value, ':');
  const std::string_view kind = parts[0];
  if (kind == "random") {
    if (parts.size() > 1) return sim::invalid_argument(quoted(value) + ": random takes no value");
    s.job.distribution = RandomDistribution::kUniform;
    s.job.distribution_center.reset();
    return Status::ok();
  }
  if (kind == "normal" || kind.substr(0, std::min<std::size_t>(kind.size(), 5)) == "zoned") {
    return sim::invalid_argument(quoted(value) + ": only random, zipf and pareto are simulated");
  }
  if (kind != "zipf" && kind != "pareto") {
    return sim::invalid_argument(quoted(value) + " is not random, zipf:THETA or pareto:H");
  }
  if (parts.size() > 3) return sim::invalid_argument(quoted(value) + ": too many ':' values");
  const bool zipf = kind == "zipf";
  double v = zipf ? 1.1 : 0.2;  // FIO_DEF_ZIPF, FIO_DEF_PARETO (fio.h)
  if (parts.size() >= 2) {
    const auto parsed = parse_double(parts[1]);
    if (!parsed) return sim::invalid_argument(quoted(parts[1]) + " is not a number");
    v = *parsed;
  }
  std::optional<double> center;
  if (parts.size() == 3) {
    const auto c = parse_double(parts[2]);
    if (!c || *c > 1.0) {
      return sim::invalid_argument(quoted(parts[2]) + ": the center must be in 0..1");
    }
    center = *c;
  }
  if (zipf) {
    if (v <= 0 || v == 1.0 || v > 100) {
      return sim::invalid_argument(quoted(value) + ": zipf theta must be > 0 and not 1");
    }
    s.job.zipf_theta = v;
    s.job.distribution = RandomDistribution::kZipf;
  } else {
    if (v <= 0 || v >= 1) {
      return sim::invalid_argument(quoted(value) + ": pareto h must be in (0, 1)");
    }
    s.job.pareto_h = v;
    s.job.distribution = RandomDistribution::kPareto;
  }
  s.job.distribution_center = center;
  return Status::ok();
}

Status apply_percentile_list(JobState& s, std::string_view value) {
  std::vector<double> list;
  for (std::string_view item : split(value, ':')) {
    item = trim(item);
    const auto v = parse_double(item);
    if (!v || *v <= 0 || *v > 100) {
      return sim::invalid_argument(quoted(item) + " is not a percentile in (0, 100]");
    }
    list.push_back(*v);
  }
  if (list.size() > 20) return sim::invalid_argument("more than 20 percentiles (fio's limit)");
  std::sort(list.begin(), list.end());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  s.job.percentile_list = std::move(list);
  return Status::ok();
}

// Why an accepted option changes nothing, or nullopt when it does change the run.
std::optional<std::string> ignored_reason(const Entry& e) {
  if (e.def->id == Opt::kIgnored) return std::string(e.def->reason);
  if (e.def->id == Opt::kVerify) return std::string("data verification is off");
  return std::nullopt;
}

// The options whose value is a byte count or time: a blank after '=' changes their meaning
// in fio ("bs= 8k" is 8 bytes there), so afasim refuses it instead of guessing.
bool is_numeric(Opt id) {
  switch (id) {
    case Opt::kBs:
    case Opt::kBssplit:
    case Opt::kBsRange:
    case Opt::kIodepth:
    case Opt::kNumjobs:
    case Opt::kSize:
    case Opt::kIoSize:
    case Opt::kOffset:
    case Opt::kOffsetIncrement:
    case Opt::kRuntime:
    case Opt::kRampTime:
    case Opt::kStartDelay:
    case Opt::kLoops:
    case Opt::kRateIops:
    case Opt::kRate:
    case Opt::kRwmixRead:
    case Opt::kRwmixWrite:
    case Opt::kKbBase:
    case Opt::kRandSeed:
      return true;
    default:
      return false;
  }
}

struct ApplyContext {
  std::vector<std::string>* warnings = nullptr;
  std::string_view file;
};

void warn(const ApplyContext& ctx, const Entry& e, const std::string& what) {
  if (ctx.warnings == nullptr) return;
  std::string text = std::string(ctx.file) + ":" + std::to_string(e.option.line) + ": " +
                     e.option.name + ": " + what;
  // One warning per line: "bs=4KiB" warns once, not for read, write and trim.
  if (!ctx.warnings->empty() && ctx.warnings->back() == text) return;
  ctx.warnings->push_back(std::move(text));
}

Result<std::int64_t> size_value(const ApplyContext& ctx, const Entry& e, std::string_view text,
                                int kb_base) {
  auto v = parse_size_detail(text, kb_base);
  if (!v.is_ok()) return v.status();
  if (v->iec_suffix_inverted) {
    warn(ctx, e,
         quoted(text) + " is " + std::to_string(v->bytes) +
             " bytes: with kb_base=1024 fio reads KiB/MiB/... as powers of 1000; write "
             "k/m/g for powers of 1024 or set kb_base=1000");
  }
  return v->bytes;
}

Result<SizeOrPercent> size_or_percent_value(const ApplyContext& ctx, const Entry& e,
                                            std::string_view text, int kb_base) {
  if (!text.empty() && text.back() == '%') return parse_fio_size_or_percent(text, kb_base);
  auto v = size_value(ctx, e, text, kb_base);
  if (!v.is_ok()) return v.status();
  return SizeOrPercent{*v, 0, false};
}

// Block sizes: bs, blocksize_range, bssplit, blocksize_unaligned.
Status apply_block_size_option(JobState& s, const Entry& e, const ApplyContext& ctx) {
  const Opt id = e.def->id;
  const int kb = s.job.kb_base;
  if (id == Opt::kBsUnaligned) {
    auto b = parse_bool(e);
    if (!b.is_ok()) return b.status();
    s.job.bs[0].unaligned = s.job.bs[1].unaligned = *b;
    return Status::ok();
  }
  auto parts = per_direction(e.option.value);
  if (!parts.is_ok()) return parts.status();
  for (int d = 0; d < kDirections + 1; ++d) {  // read, write, and trim (checked, dropped)
    if (!(*parts)[d]) continue;
    const std::string_view text = *(*parts)[d];
    const bool keep = d < kDirections;
    if (id == Opt::kBs) {
      if (text.find_first_of("-:") != std::string_view::npos && text.front() != '-') {
        return sim::invalid_argument(quoted(text) + " is a range: use blocksize_range=");
      }
      auto size = size_value(ctx, e, text, kb);
      if (!size.is_ok()) return size.status();
      if (*size == 0) return sim::invalid_argument(quoted(text) + ": must be > 0");
      if (keep) s.job.bs[d].min_bytes = s.job.bs[d].max_bytes = *size;
    } else if (id == Opt::kBsRange) {
      auto range = parse_size_range(text, kb);
      if (!range.is_ok()) return range.status();
      if (keep) {
        s.job.bs[d].min_bytes = range->first;
        s.job.bs[d].max_bytes = range->second;
      }
    } else {
      auto shares = parse_bssplit_direction(text, kb);
      if (!shares.is_ok()) return shares.status();
      if (keep) s.split[d] = std::move(*shares);
    }
  }
  return Status::ok();
}

// Where a job works: size, offset, offset_increment, io_size, filename.
Status apply_region_option(JobState& s, const Entry& e, const ApplyContext& ctx) {
  const Opt id = e.def->id;
  const std::string_view v = e.option.value;
  if (id == Opt::kFilename) {
    if (v.find(':') != std::string_view::npos) {
      return sim::invalid_argument(
          quoted(v) + ": one volume per job (several ':'-separated files are not supported)");
    }
    for (unsigned char c : v) {
      if (c < 0x21 || c > 0x7e) {
        return sim::invalid_argument(quoted(v) + ": a volume name is printable ASCII");
      }
    }
    s.job.filename = std::string(v);
    return Status::ok();
  }
  if (id == Opt::kIoSize) {
    auto b = size_value(ctx, e, v, s.job.kb_base);
    if (!b.is_ok()) return b.status();
    if (*b == 0) return sim::invalid_argument("must be > 0");
    s.io_size = *b;
    return Status::ok();
  }
  auto sp = size_or_percent_value(ctx, e, v, s.job.kb_base);
  if (!sp.is_ok()) return sp.status();
  if (id == Opt::kSize) {
    if (!sp->is_percent && sp->bytes == 0) return sim::invalid_argument("must be > 0");
    s.size = *sp;
  } else {
    (id == Opt::kOffset ? s.offset : s.offset_increment) = *sp;
  }
  return Status::ok();
}

// Whole numbers with a range: iodepth, numjobs, loops, rwmixread, rwmixwrite.
Status apply_count_option(JobState& s, const Entry& e) {
  const Opt id = e.def->id;
  const bool rwmix = id == Opt::kRwmixRead || id == Opt::kRwmixWrite;
  const std::int64_t lo = rwmix ? 0 : 1;
  const std::int64_t hi = rwmix                 ? 100
                          : id == Opt::kIodepth ? kMaxIodepth
                          : id == Opt::kNumjobs ? kMaxClones
                                                : kMaxLoops;
  auto n = parse_count(e.option.value, lo, hi, s.job.kb_base);
  if (!n.is_ok()) return n.status();
  const int value = static_cast<int>(*n);
  switch (id) {
    case Opt::kIodepth:
      s.job.iodepth = value;
      break;
    case Opt::kNumjobs:
      s.job.numjobs = value;
      break;
    case Opt::kLoops:
      s.job.loops = value;
      break;
    // options.c str_rwmix_{read,write}_cb: each sets both shares; the later one wins.
    case Opt::kRwmixRead:
      s.job.rwmix_read_percent = value;
      break;
    default:
      s.job.rwmix_read_percent = 100 - value;
      break;
  }
  return Status::ok();
}

// Durations: runtime, ramp_time, startdelay (seconds without a unit).
Status apply_time_option(JobState& s, const Entry& e) {
  const Opt id = e.def->id;
  const std::string_view v = e.option.value;
  if (id == Opt::kStartDelay && v.find_first_of("-:") != std::string_view::npos) {
    return sim::invalid_argument(quoted(v) + ": a startdelay range is not supported");
  }
  auto t = parse_fio_time(v, sim::kSecond);
  if (!t.is_ok()) return t.status();
  (id == Opt::kRuntime    ? s.job.runtime_ns
   : id == Opt::kRampTime ? s.job.ramp_time_ns
                          : s.job.startdelay_ns) = *t;
  return Status::ok();
}

// Rate caps: rate_iops, rate (per direction), rate_process.
Status apply_rate_option(JobState& s, const Entry& e, const ApplyContext& ctx) {
  const Opt id = e.def->id;
  const std::string_view v = e.option.value;
  if (id == Opt::kRateProcess) {
    if (v == "linear")
      s.job.rate_process = RateProcess::kLinear;
    else if (v == "poisson")
      s.job.rate_process = RateProcess::kPoisson;
    else
      return sim::invalid_argument(quoted(v) + " is not linear or poisson");
    return Status::ok();
  }
  auto parts = per_direction(v);
  if (!parts.is_ok()) return parts.status();
  for (int d = 0; d < kDirections + 1; ++d) {
    if (!(*parts)[d]) continue;
    auto n = id == Opt::kRateIops ? parse_count(*(*parts)[d], 0, kMaxBytes, s.job.kb_base)
                                  : size_value(ctx, e, *(*parts)[d], s.job.kb_base);
    if (!n.is_ok()) return n.status();
    if (d < kDirections) {
      (id == Opt::kRateIops ? s.job.rate_iops : s.job.rate_bytes_per_second)[d] = *n;
    }
  }
  return Status::ok();
}

// 0/1 options that may stand alone: time_based, norandommap, group_reporting, new_group,
// stonewall.
Status apply_flag_option(JobState& s, const Entry& e) {
  auto b = parse_bool(e);
  if (!b.is_ok()) return b.status();
  switch (e.def->id) {
    case Opt::kTimeBased:
      s.job.time_based = *b;
      break;
    case Opt::kNoRandomMap:
      s.job.random_map = !*b;
      break;
    case Opt::kGroupReporting:
      s.job.group_reporting = *b;
      break;
    case Opt::kNewGroup:
      s.job.new_group = *b;
      break;
    default:
      s.job.stonewall = *b;
      break;
  }
  return Status::ok();
}

// Options with a value of their own kind: name, description, rw, random_distribution,
// randseed, wait_for, percentile_list, kb_base, verify.
Status apply_other_option(JobState& s, const Entry& e) {
  const std::string_view v = e.option.value;
  switch (e.def->id) {
    case Opt::kName:
      s.job.name = std::string(v);
      return Status::ok();
    case Opt::kDescription:
      s.job.description = std::string(v);
      return Status::ok();
    case Opt::kRw:
      return apply_rw(s, v);
    case Opt::kRandomDistribution:
      return apply_random_distribution(s, v);
    case Opt::kWaitFor:
      s.job.wait_for = std::string(v);
      return Status::ok();
    case Opt::kPercentileList:
      return apply_percentile_list(s, v);
    case Opt::kRandSeed: {
      const auto n = parse_u64(v);
      if (!n) return sim::invalid_argument(quoted(v) + " is not a whole number");
      s.job.randseed = *n;
      return Status::ok();
    }
    case Opt::kKbBase:
      if (v == "1024")
        s.job.kb_base = 1024;
      else if (v == "1000")
        s.job.kb_base = 1000;
      else
        return sim::invalid_argument(quoted(v) + " is not 1000 or 1024");
      return Status::ok();
    case Opt::kVerify:
      if (v == "0" || v == "none") return Status::ok();
      return sim::invalid_argument(quoted(v) +
                                   ": data verification is not simulated (verify=0 or none "
                                   "is accepted)");
    default:
      AFASIM_ASSERT(false, "every option has a handler");
      return Status::ok();
  }
}

// Applies one option to the job being built. The error, if any, has no location yet.
Status apply(JobState& s, const Entry& e, const ApplyContext& ctx) {
  const Opt id = e.def->id;
  if (id == Opt::kUnsupported) {
    return sim::invalid_argument("not supported by afasim: " + std::string(e.def->reason));
  }
  if (id == Opt::kIgnored) return Status::ok();
  const bool is_flag = id == Opt::kTimeBased || id == Opt::kNoRandomMap ||
                       id == Opt::kGroupReporting || id == Opt::kNewGroup ||
                       id == Opt::kStonewall || id == Opt::kBsUnaligned;
  if (!e.option.has_value && !is_flag) {
    return sim::invalid_argument("needs a value (" + e.option.name + "=...)");
  }
  if (e.option.has_value && e.option.value.empty()) return sim::invalid_argument("empty value");
  if (e.leading_blank && is_numeric(id)) {
    return sim::invalid_argument("blank after '=' (fio would read " + quoted(e.option.value) +
                                 " without its unit); remove it");
  }
  s.line_of[id] = e.option.line;
  s.name_of[id] = e.option.name;
  switch (id) {
    case Opt::kBs:
    case Opt::kBsRange:
    case Opt::kBssplit:
    case Opt::kBsUnaligned:
      return apply_block_size_option(s, e, ctx);
    case Opt::kSize:
    case Opt::kOffset:
    case Opt::kOffsetIncrement:
    case Opt::kIoSize:
    case Opt::kFilename:
      return apply_region_option(s, e, ctx);
    case Opt::kIodepth:
    case Opt::kNumjobs:
    case Opt::kLoops:
    case Opt::kRwmixRead:
    case Opt::kRwmixWrite:
      return apply_count_option(s, e);
    case Opt::kRuntime:
    case Opt::kRampTime:
    case Opt::kStartDelay:
      return apply_time_option(s, e);
    case Opt::kRate:
    case Opt::kRateIops:
    case Opt::kRateProcess:
      return apply_rate_option(s, e, ctx);
    case Opt::kTimeBased:
    case Opt::kNoRandomMap:
    case Opt::kGroupReporting:
    case Opt::kNewGroup:
    case Opt::kStonewall:
      return apply_flag_option(s, e);
    default:
      return apply_other_option(s, e);
  }
}

// Where option `id` of a job was written (its winning occurrence), for messages; the job's
// section line when the option was never given.
Location option_at(std::string_view file, const JobState& s, Opt id, std::string_view fallback) {
  const auto line = s.line_of.find(id);
  const auto name = s.name_of.find(id);
  return Location{file, line == s.line_of.end() ? s.job.line : line->second,
                  name == s.name_of.end() ? fallback : std::string_view(name->second)};
}

// Cross-option checks of one job, after every option is applied. Sizes that depend on the
// volume (percentages) are resolved later, by the file pass.
Status finalize(JobState& s, std::string_view file) {
  FioJob& job = s.job;
  auto at = [&](Opt id, std::string_view fallback) { return option_at(file, s, id, fallback); };
  if (!s.rw_suffix.empty()) {
    const std::string_view suffix = trim(s.rw_suffix);
    if (is_random(job.rw)) {
      const auto n = parse_u64(suffix);
      if (!n || *n == 0 || *n > static_cast<std::uint64_t>(kMaxBytes)) {
        return located(at(Opt::kRw, "rw"),
                       quoted(suffix) + " is not a count of I/Os per random offset");
      }
      job.rw_sequential_ios = static_cast<std::int64_t>(*n);
    } else {
      auto skip = parse_fio_size(suffix, job.kb_base);
      if (!skip.is_ok()) return located(at(Opt::kRw, "rw"), skip.status());
      job.rw_skip_bytes = *skip;
    }
  }
  for (int d = 0; d < kDirections; ++d) {
    if (!s.split[d].empty()) {
      job.bs[d].split = s.split[d];
      job.bs[d].min_bytes = job.bs[d].max_bytes = s.split[d].front().size_bytes;
      for (const auto& share : s.split[d]) {
        job.bs[d].min_bytes = std::min(job.bs[d].min_bytes, share.size_bytes);
        job.bs[d].max_bytes = std::max(job.bs[d].max_bytes, share.size_bytes);
      }
    }
  }
  if (job.time_based && job.runtime_ns == 0) {
    return located(at(Opt::kTimeBased, "time_based"), "needs runtime= (else the job never ends)");
  }
  if (!job.wait_for.empty() && job.wait_for == job.name) {
    return located(at(Opt::kWaitFor, "wait_for"), "a job cannot wait for itself");
  }
  if (job.percentile_list.empty()) job.percentile_list = default_percentile_list();
  return Status::ok();
}

// ---------------------------------------------------------------------------------------
// The file pass: sections, inheritance, volumes, groups.

struct Section {
  std::string name;
  int line = 0;
  bool global = false;
  std::vector<Entry> entries;
  std::size_t globals_before = 0;  // how many global entries precede this job section
};

Result<std::vector<Section>> read_sections(std::string_view text, std::string_view file) {
  std::vector<Section> sections;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const Location here{file, line_no, {}};
    if (line.size() > kMaxLineBytes) {
      return located(here, "line longer than " + std::to_string(kMaxLineBytes) + " bytes");
    }
    if (line.find('\0') != std::string_view::npos) return located(here, "NUL byte in the line");
    line = trim(line);
    if (line.empty() || line.front() == ';' || line.front() == '#') continue;
    // parse.c strip_blank_end: a ';' or '#' anywhere starts a comment.
    line = trim(line.substr(0, line.find_first_of(";#")));
    if (line.front() == '[') {
      if (line.back() != ']') return located(here, "section header without ']'");
      const std::string_view name = trim(line.substr(1, line.size() - 2));
      if (name.empty()) return located(here, "empty section name");
      for (unsigned char c : name) {
        if (c < 0x20 || c > 0x7e || c == '[' || c == ']') {
          return located(here, "section name " + quoted(name) + " is not printable ASCII");
        }
      }
      Section s;
      s.name = std::string(name);
      s.line = line_no;
      s.global = name == "global";
      sections.push_back(std::move(s));
      continue;
    }
    const std::size_t eq = line.find('=');
    const std::string_view key = trim(line.substr(0, eq));
    if (key.substr(0, std::min<std::size_t>(key.size(), 8)) == "include " || key == "include") {
      return located(Location{file, line_no, "include"}, "include files are not supported");
    }
    if (sections.empty()) {
      return located(Location{file, line_no, key}, "option outside of a [section]");
    }
    Entry e;
    e.option.name = std::string(key);
    e.option.line = line_no;
    if (eq != std::string_view::npos) {
      const std::string_view raw = line.substr(eq + 1);
      e.leading_blank = !raw.empty() && is_blank(raw.front());
      e.option.value = std::string(trim(raw));
      e.option.has_value = true;
    }
    const Location opt_at{file, line_no, e.option.name};
    if (key.empty()) return located(here, "'=' without an option name");
    e.def = find_option(key);
    if (e.def == nullptr) return located(opt_at, "unknown option");
    sections.back().entries.push_back(std::move(e));
  }
  return sections;
}

// Registers every volume in first-use order and sizes it from the jobs whose size, offset
// and offset_increment are all absolute: the largest offset + clone × increment + size.
Status size_volumes(FioJobFile& out, const std::vector<JobState>& states,
                    std::map<std::string, std::size_t>& index) {
  for (const auto& s : states) {
    const FioJob& job = s.job;
    const bool absolute = s.size && !s.size->is_percent && (!s.offset || !s.offset->is_percent) &&
                          (!s.offset_increment || !s.offset_increment->is_percent);
    for (int c = 0; c < job.numjobs; ++c) {
      const std::string name = job.volume_name(c);
      if (!index.contains(name)) {
        index[name] = out.volumes.size();
        out.volumes.push_back(FioVolume{name, 0, job.line});
      }
      if (!absolute) continue;
      const __int128 end =
          static_cast<__int128>(s.offset ? s.offset->bytes : 0) +
          static_cast<__int128>(s.offset_increment ? s.offset_increment->bytes : 0) * c +
          s.size->bytes;
      if (end > kMaxBytes) {
        return located(option_at(out.file_name, s, Opt::kSize, "size"),
                       "offset + size is larger than 1 EiB");
      }
      FioVolume& vol = out.volumes[index.at(name)];
      vol.size_bytes = std::max(vol.size_bytes, static_cast<std::int64_t>(end));
    }
  }
  return Status::ok();
}

// Resolves one job's region on its volumes: percentages of the volume size (a percentage
// offset aligned up to the job's smallest block, as fio does), the clones' regions inside
// their volume, and every block size inside the region.
Status resolve_region(JobState& s, const FioJobFile& out,
                      const std::map<std::string, std::size_t>& index) {
  FioJob& job = s.job;
  const std::string_view file = out.file_name;
  const std::int64_t unit = job.min_block_bytes();
  for (int c = 0; c < job.numjobs; ++c) {
    const FioVolume& vol = out.volumes[index.at(job.volume_name(c))];
    if (vol.size_bytes == 0) {
      if (!s.size) {
        return located(Location{file, job.line, "size"},
                       "missing: job " + quoted(job.name) + " on volume " + quoted(vol.name) +
                           " needs size= (afasim sizes each volume from its jobs' size=)");
      }
      const bool pct_size = s.size->is_percent;
      return located(
          option_at(file, s, pct_size ? Opt::kSize : Opt::kOffset, pct_size ? "size" : "offset"),
          "a percentage needs the size of volume " + quoted(vol.name) +
              ": give one job on it an absolute size= and offset=");
    }
    auto resolve = [&](const SizeOrPercent& v, bool align) {
      if (!v.is_percent) return v.bytes;
      auto bytes =
          static_cast<std::int64_t>(static_cast<long double>(vol.size_bytes) * v.percent / 100.0L);
      if (align) bytes = (bytes + unit - 1) / unit * unit;  // HOWTO "offset"
      return bytes;
    };
    const std::int64_t offset = s.offset ? resolve(*s.offset, true) : 0;
    const std::int64_t increment = s.offset_increment ? resolve(*s.offset_increment, true) : 0;
    const __int128 start = static_cast<__int128>(offset) + static_cast<__int128>(increment) * c;
    if (start >= vol.size_bytes) {
      return located(option_at(file, s, Opt::kOffset, "offset"),
                     "clone " + std::to_string(c) + " starts at or past the end of volume " +
                         quoted(vol.name));
    }
    const __int128 room = static_cast<__int128>(vol.size_bytes) - start;
    std::int64_t size = s.size ? resolve(*s.size, false) : vol.size_bytes;
    if (s.size && !s.size->is_percent && size > room) {
      return located(option_at(file, s, Opt::kSize, "size"),
                     "clone " + std::to_string(c) + ": offset + size runs past the end of volume " +
                         quoted(vol.name) + " (" + std::to_string(vol.size_bytes) + " bytes)");
    }
    size = static_cast<std::int64_t>(std::min<__int128>(size, room));  // a percentage is cut
    job.size_bytes = c == 0 ? size : std::min(job.size_bytes, size);
    if (c == 0) {
      job.offset_bytes = offset;
      job.offset_increment_bytes = increment;
    }
  }
  for (int d = 0; d < kDirections; ++d) {
    const bool used = d == index_of(Direction::kRead) ? does_reads(job.rw) : does_writes(job.rw);
    if (used && job.bs[d].max_bytes > job.size_bytes) {
      return located(option_at(file, s, Opt::kSize, "size"),
                     "the region (" + std::to_string(job.size_bytes) +
                         " bytes) is smaller than the largest " +
                         std::string(to_string(static_cast<Direction>(d))) + " block size (" +
                         std::to_string(job.bs[d].max_bytes) + " bytes)");
    }
  }
  job.io_size_bytes = s.io_size ? *s.io_size : job.size_bytes;
  return Status::ok();
}

// Volumes first (from absolute regions), then every job's region against its volume.
Status resolve_volumes(FioJobFile& out, std::vector<JobState>& states) {
  std::map<std::string, std::size_t> index;
  AFASIM_RETURN_IF_ERROR(size_volumes(out, states, index));
  for (auto& s : states) AFASIM_RETURN_IF_ERROR(resolve_region(s, out, index));
  return Status::ok();
}

// fio init.c add_job: a job with stonewall or new_group starts a new group unless it is the
// first job of the file. wait_for must name an earlier job whose name is unique.
Status resolve_groups(FioJobFile& out, const std::vector<JobState>& states) {
  int group = 0;
  int jobs_in_group = 0;
  for (std::size_t i = 0; i < out.jobs.size(); ++i) {
    FioJob& job = out.jobs[i];
    if ((job.stonewall || job.new_group) && jobs_in_group > 0) {
      ++group;
      jobs_in_group = 0;
    }
    job.group_id = group;
    jobs_in_group += job.numjobs;
    if (job.wait_for.empty()) continue;
    int found = 0;
    bool earlier = false;
    for (std::size_t k = 0; k < out.jobs.size(); ++k) {
      if (out.jobs[k].name != job.wait_for) continue;
      ++found;
      earlier |= k < i;
    }
    const auto it = states[i].line_of.find(Opt::kWaitFor);
    const Location loc{out.file_name, it == states[i].line_of.end() ? job.line : it->second,
                       "wait_for"};
    if (found == 0) return located(loc, "no job named " + quoted(job.wait_for));
    if (found > 1) return located(loc, "several jobs are named " + quoted(job.wait_for));
    if (!earlier) return located(loc, "job " + quoted(job.wait_for) + " comes later in the file");
  }
  return Status::ok();
}

// Checks a [global] section's options at their own lines (even if no job follows), records
// them, and warns about them once (jobs apply inherited options silently).
Status read_global_section(const Section& section, std::vector<const Entry*>& globals,
                           FioJobFile& out) {
  const ApplyContext ctx{&out.warnings, out.file_name};
  JobState scratch;
  std::vector<const Entry*> so_far(globals);
  for (const Entry& e : section.entries) so_far.push_back(&e);
  for (const Entry* e : so_far) {
    if (e->def->id != Opt::kKbBase) continue;
    if (Status st = apply(scratch, *e, ApplyContext{}); !st.is_ok()) {
      return located(Location{out.file_name, e->option.line, e->option.name}, st);
    }
  }
  for (const Entry& e : section.entries) {
    Status st = apply(scratch, e, ctx);
    if (!st.is_ok()) return located(Location{out.file_name, e.option.line, e.option.name}, st);
    if (const auto why = ignored_reason(e)) out.ignored.push_back({"global", e.option, *why});
    out.global_options.push_back(e.option);
    globals.push_back(&e);
  }
  return Status::ok();
}

// One job section: fio's defaults, then the [global] entries above it, then its own, in
// file order (kb_base first, as fio gives it priority); then the cross-option checks.
Result<JobState> resolve_job(const Section& section, const std::vector<const Entry*>& globals,
                             int job_index, FioJobFile& out) {
  const ApplyContext ctx{&out.warnings, out.file_name};
  JobState s;
  s.job.name = section.name;
  s.job.line = section.line;
  s.job.job_index = job_index;
  std::vector<const Entry*> all(globals);
  for (const Entry& e : section.entries) all.push_back(&e);
  for (const Entry* e : all) {
    if (e->def->id != Opt::kKbBase) continue;
    if (Status st = apply(s, *e, ApplyContext{}); !st.is_ok()) {
      return located(Location{out.file_name, e->option.line, e->option.name}, st);
    }
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Entry& e = *all[i];
    const bool own = i >= globals.size();
    Status st = apply(s, e, own ? ctx : ApplyContext{});
    if (!st.is_ok()) return located(Location{out.file_name, e.option.line, e.option.name}, st);
    if (!own) continue;
    s.job.options.push_back(e.option);
    if (const auto why = ignored_reason(e)) out.ignored.push_back({section.name, e.option, *why});
  }
  AFASIM_RETURN_IF_ERROR(finalize(s, out.file_name));
  return s;
}

// fio ignores random_distribution on sequential jobs; say so, since it is likely a slip.
void warn_ineffective_distributions(const std::vector<JobState>& states, FioJobFile& out) {
  for (const auto& s : states) {
    if (s.job.distribution == RandomDistribution::kUniform || is_random(s.job.rw)) continue;
    const auto it = s.line_of.find(Opt::kRandomDistribution);
    const int line = it == s.line_of.end() ? s.job.line : it->second;
    out.warnings.push_back(out.file_name + ":" + std::to_string(line) +
                           ": random_distribution: no effect on sequential rw=" +
                           std::string(to_string(s.job.rw)) + " (job " + quoted(s.job.name) + ")");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public functions.

std::string_view to_string(Direction d) {
  return d == Direction::kRead ? "read" : "write";
}

std::string_view to_string(RwPattern p) {
  switch (p) {
    case RwPattern::kRead:
      return "read";
    case RwPattern::kWrite:
      return "write";
    case RwPattern::kRandRead:
      return "randread";
    case RwPattern::kRandWrite:
      return "randwrite";
    case RwPattern::kReadWrite:
      return "rw";
    case RwPattern::kRandReadWrite:
      return "randrw";
  }
  return "?";
}

bool is_random(RwPattern p) {
  return p == RwPattern::kRandRead || p == RwPattern::kRandWrite || p == RwPattern::kRandReadWrite;
}
bool does_reads(RwPattern p) {
  return p == RwPattern::kRead || p == RwPattern::kRandRead || p == RwPattern::kReadWrite ||
         p == RwPattern::kRandReadWrite;
}
bool does_writes(RwPattern p) {
  return p == RwPattern::kWrite || p == RwPattern::kRandWrite || p == RwPattern::kReadWrite ||
         p == RwPattern::kRandReadWrite;
}

std::string_view to_string(RandomDistribution d) {
  switch (d) {
    case RandomDistribution::kUniform:
      return "random";
    case RandomDistribution::kZipf:
      return "zipf";
    case RandomDistribution::kPareto:
      return "pareto";
  }
  return "?";
}

std::string FioJob::volume_name(int clone) const {
  AFASIM_ASSERT(clone >= 0 && clone < numjobs, "clone index out of range");
  if (!filename.empty()) return filename;
  return name + "." + std::to_string(clone) + ".0";  // fio's "$jobname.$jobnum.$filenum"
}

std::int64_t FioJob::region_offset_bytes(int clone) const {
  AFASIM_ASSERT(clone >= 0 && clone < numjobs, "clone index out of range");
  return offset_bytes + offset_increment_bytes * clone;
}

std::int64_t FioJob::min_block_bytes() const {
  std::int64_t unit = 0;
  for (int d = 0; d < kDirections; ++d) {
    const bool used = d == 0 ? does_reads(rw) : does_writes(rw);
    if (used) unit = unit == 0 ? bs[d].min_bytes : std::min(unit, bs[d].min_bytes);
  }
  return unit;
}

std::int64_t FioJob::total_io_bytes() const {
  const __int128 total = static_cast<__int128>(io_size_bytes) * loops;
  return total > INT64_MAX ? INT64_MAX : static_cast<std::int64_t>(total);
}

int FioJobFile::group_count() const {
  int n = 0;
  for (const auto& j : jobs) n = std::max(n, j.group_id + 1);
  return n;
}

int FioJobFile::clone_count() const {
  int n = 0;
  for (const auto& j : jobs) n += j.numjobs;
  return n;
}

const std::vector<double>& default_percentile_list() {
  static const std::vector<double> kList = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                            80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  return kList;
}

Result<std::int64_t> parse_fio_size(std::string_view text, int kb_base) {
  auto v = parse_size_detail(text, kb_base);
  if (!v.is_ok()) return v.status();
  return v->bytes;
}

Result<SizeOrPercent> parse_fio_size_or_percent(std::string_view text, int kb_base) {
  if (!text.empty() && text.back() == '%') {
    const std::string_view number = trim(text.substr(0, text.size() - 1));
    const auto v = parse_double(number);
    if (!v || *v <= 0 || *v > 100) {
      return sim::invalid_argument(quoted(text) + " is not a percentage in 1..100");
    }
    return SizeOrPercent{0, *v, true};
  }
  auto v = parse_fio_size(text, kb_base);
  if (!v.is_ok()) return v.status();
  return SizeOrPercent{*v, 0, false};
}

Result<sim::Time> parse_fio_time(std::string_view text, sim::Time default_unit) {
  AFASIM_RETURN_IF_ERROR(refuse_expression(text));
  std::size_t digits = 0;
  while (digits < text.size() && is_digit(text[digits])) ++digits;
  if (digits == 0) return sim::invalid_argument(quoted(text) + " is not a time");
  if (digits < text.size() && text[digits] == '.') {
    return sim::invalid_argument(quoted(text) +
                                 " is not a whole number (fio would drop the fraction); use a "
                                 "smaller unit, e.g. 1500ms");
  }
  const auto number = parse_u64(text.substr(0, digits));
  const std::string unit_text = to_lower(text.substr(digits));
  sim::Time unit = default_unit;
  if (unit_text.empty())
    unit = default_unit;
  else if (unit_text == "us" || unit_text == "usec")
    unit = sim::kMicrosecond;
  else if (unit_text == "ms" || unit_text == "msec")
    unit = sim::kMillisecond;
  else if (unit_text == "s")
    unit = sim::kSecond;
  else if (unit_text == "m")
    unit = sim::kMinute;
  else if (unit_text == "h")
    unit = sim::kHour;
  else if (unit_text == "d")
    unit = sim::kDay;
  else if (unit_text == "sec") {
    return sim::invalid_argument(quoted(text) +
                                 ": fio 3.33 reads the unit \"sec\" as microseconds; write s");
  } else {
    return sim::invalid_argument(quoted(text) + " is not a time (units: d h m s ms us)");
  }
  if (!number || *number > static_cast<std::uint64_t>(kMaxDuration / unit)) {
    return sim::invalid_argument(quoted(text) + " is longer than 10 years");
  }
  return static_cast<sim::Time>(*number) * unit;
}

Result<FioJobFile> parse_fio_job_file(std::string_view text, std::string_view file_name) {
  if (text.size() > kMaxFileBytes) {
    return sim::invalid_argument(std::string(file_name) + ": larger than 1 MiB");
  }
  auto sections = read_sections(text, file_name);
  if (!sections.is_ok()) return sections.status();

  FioJobFile out;
  out.file_name = std::string(file_name);
  std::vector<const Entry*> globals;  // every [global] entry so far, file order
  std::vector<JobState> states;
  int total_clones = 0;
  for (const Section& section : *sections) {
    if (section.global) {
      AFASIM_RETURN_IF_ERROR(read_global_section(section, globals, out));
      continue;
    }
    auto state = resolve_job(section, globals, static_cast<int>(states.size()), out);
    if (!state.is_ok()) return state.status();
    total_clones += state->job.numjobs;
    if (total_clones > kMaxClones) {
      return located(Location{file_name, section.line, "numjobs"},
                     "more than " + std::to_string(kMaxClones) + " jobs in the file");
    }
    states.push_back(std::move(state).value());
  }
  if (states.empty()) {
    return sim::invalid_argument(std::string(file_name) + ": no job sections (only [global])");
  }
  warn_ineffective_distributions(states, out);
  AFASIM_RETURN_IF_ERROR(resolve_volumes(out, states));
  for (auto& s : states) out.jobs.push_back(s.job);
  AFASIM_RETURN_IF_ERROR(resolve_groups(out, states));
  return out;
}

Result<FioJobFile> load_fio_job_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return sim::not_found(path + ": cannot open the job file");
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) return sim::invalid_argument(path + ": larger than 1 MiB");
  }
  return parse_fio_job_file(text, path);
}

}  // namespace afasim::workload
