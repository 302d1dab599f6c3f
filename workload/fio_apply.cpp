// Applying one fio option to the job being built, and the checks across one job's options.
#include <algorithm>

#include "config/size.h"
#include "controller/objects.h"
#include "workload/fio_job_internal.h"

namespace afasim::workload::fio_detail {

Status located(const Location& at, const std::string& message) {
  std::string out(at.file);
  out += ':';
  out += std::to_string(at.line);
  out += ": ";
  if (!at.option.empty()) {
    // An option name is ASCII: one with other bytes (a byte-order mark inside the file, review
    // 34) is shown escaped, not as a name that reads like a known one.
    const bool plain = std::all_of(at.option.begin(), at.option.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
    out += plain ? std::string(at.option) : quoted(at.option);
    out += ": ";
  }
  out += message;
  return sim::invalid_argument(std::move(out));
}

Status located(const Location& at, const Status& inner) {
  return located(at, inner.message());
}

// State built while applying options; cross-option checks happen in finalize().
Result<bool> parse_bool(const Entry& e) {
  if (!e.option.has_value) return true;
  if (e.option.value == "1") return true;
  if (e.option.value == "0") return false;
  return sim::invalid_argument(quoted(e.option.value) + " is not 0 or 1");
}

Result<std::int64_t> parse_count(std::string_view text, std::int64_t lo, std::int64_t hi,
                                 int kb_base) {
  auto v = parse_size_detail(text, kb_base);
  if (!v.is_ok() || v->fractional) {
    // All digits, and still not taken: too large for a count (review 34 read it "not a whole number").
    const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    return sim::invalid_argument(quoted(text) + (digits ? " is out of range " + std::to_string(lo) + ".." + std::to_string(hi)
                                                        : std::string(" is not a whole number")));
  }
  if (v->bytes < lo || v->bytes > hi) {
    return sim::invalid_argument(quoted(text) + " is out of range " + std::to_string(lo) + ".." +
                                 std::to_string(hi));
  }
  return v->bytes;
}

// Block sizes and absolute offsets in whole 512-byte logical blocks: fio on a block device
// with direct I/O gets EINVAL for anything else, and the array's volumes have 512-byte sectors.
Status check_sector_multiple(std::string_view text, std::int64_t bytes) {
  if (bytes % controller::kSectorBytes == 0) return Status::ok();
  return sim::invalid_argument(quoted(text) + " is " + config::byte_count(bytes) +
                               ", not a multiple of 512 (the logical block; fio on a block "
                               "device with direct I/O gets EINVAL)");
}

// The "read,write[,trim]" form shared by bs, bsrange, bssplit, rate and rate_iops (HOWTO
// "blocksize"): one value applies to every direction; with commas, an empty part leaves
// that direction unchanged, and "R,W" gives trim the write value.
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
    AFASIM_RETURN_IF_ERROR(check_sector_multiple(trim(size_text), size->bytes));
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
  AFASIM_RETURN_IF_ERROR(check_sector_multiple(trim(text.substr(0, sep)), lo->bytes));
  AFASIM_RETURN_IF_ERROR(check_sector_multiple(trim(text.substr(sep + 1)), hi->bytes));
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
      {"randrw", RwPattern::kRandReadWrite}, {"trim", RwPattern::kTrim},
      {"randtrim", RwPattern::kRandTrim},   {"trimwrite", RwPattern::kTrimWrite},
      {"randtrimwrite", RwPattern::kRandTrimWrite}};
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
  return sim::invalid_argument(quoted(value) +
                               " is not one of read, write, randread, randwrite, rw, readwrite, "
                               "randrw, trim, randtrim, trimwrite, randtrimwrite");
}

Status apply_percentile_list(JobState& s, std::string_view value) {
  std::vector<double> list;
  int precision = 0;
  for (std::string_view item : split(value, ':')) {
    item = trim(item);
    const auto v = parse_double(item);
    if (!v || *v <= 0 || *v > 100) {
      return sim::invalid_argument(quoted(item) + " is not a percentile in (0, 100]");
    }
    list.push_back(*v);
    if (const auto point = item.find('.'); point != std::string_view::npos)
      precision = std::max(precision, static_cast<int>(item.size() - point - 1));
  }
  if (list.size() > 20) return sim::invalid_argument("more than 20 percentiles (fio's limit)");
  // Sorted, a repeated entry printed again, as fio 3.33 prints them (review 32: once).
  std::sort(list.begin(), list.end());
  s.job.percentile_list = std::move(list);
  s.job.percentile_precision = precision;
  return Status::ok();
}

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
  auto parts = per_direction(e.option.value);
  if (!parts.is_ok()) return parts.status();
  for (int d = 0; d < kDirections; ++d) {
    if (!(*parts)[d]) continue;
    const std::string_view text = *(*parts)[d];
    const bool keep = true;
    if (id == Opt::kBs) {
      if (text.find_first_of("-:") != std::string_view::npos && text.front() != '-') {
        return sim::invalid_argument(quoted(text) + " is a range: use blocksize_range=");
      }
      auto size = size_value(ctx, e, text, kb);
      if (!size.is_ok()) return size.status();
      if (*size == 0) return sim::invalid_argument(quoted(text) + ": must be > 0");
      AFASIM_RETURN_IF_ERROR(check_sector_multiple(text, *size));
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
    std::vector<std::string> names, paths;
    for (const std::string& part : split_file_names(v)) {  // fio: "a:b" is two files
      if (part.empty()) return sim::invalid_argument(quoted(v) + ": an empty file name");
      for (unsigned char c : part) {
        if (c < 0x21 || c > 0x7e) {
          return sim::invalid_argument(quoted(v) + ": a file name holds no spaces, control characters or bytes "
                                                   "past ASCII (it names a volume)");
        }
      }
      std::string name = volume_name_for_path(part);
      if (name.empty()) return sim::invalid_argument(quoted(part) + " names no volume");
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        return sim::invalid_argument(quoted(v) + ": volume " + quoted(name) + " twice");
      }
      names.push_back(std::move(name));
      paths.emplace_back(file_path_of(part));
    }
    s.job.filenames = std::move(names);
    s.job.filename_paths = std::move(paths);
    return Status::ok();
  }
  if (id == Opt::kIoSize || id == Opt::kFileSize) {
    // fio's filesize=LOW-HIGH draws each file's size; afasim's volumes have one.
    if (id == Opt::kFileSize && v.find('-', 1) != std::string_view::npos) {
      return sim::invalid_argument(quoted(v) + ": a range of file sizes is not simulated; give one size");
    }
    if (id == Opt::kFileSize && v.find('%') != std::string_view::npos) {
      return sim::invalid_argument(quoted(v) + ": a file's size in bytes, not a percentage");
    }
    auto b = size_value(ctx, e, v, s.job.kb_base);
    if (!b.is_ok()) return b.status();
    if (*b == 0) return sim::invalid_argument("must be > 0");
    if (id == Opt::kFileSize) AFASIM_RETURN_IF_ERROR(check_sector_multiple(v, *b));
    (id == Opt::kIoSize ? s.io_size : s.file_size) = *b;
    return Status::ok();
  }
  auto sp = size_or_percent_value(ctx, e, v, s.job.kb_base);
  if (!sp.is_ok()) return sp.status();
  if (id == Opt::kSize) {
    if (!sp->is_percent && sp->bytes == 0) return sim::invalid_argument("must be > 0");
    s.size = *sp;
  } else {
    if (!sp->is_percent) AFASIM_RETURN_IF_ERROR(check_sector_multiple(v, sp->bytes));
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
  for (int d = 0; d < kDirections; ++d) {
    if (!(*parts)[d]) continue;
    auto n = id == Opt::kRateIops ? parse_count(*(*parts)[d], 0, kMaxBytes, s.job.kb_base)
                                  : size_value(ctx, e, *(*parts)[d], s.job.kb_base);
    if (!n.is_ok()) return n.status();
    (id == Opt::kRateIops ? s.job.rate_iops : s.job.rate_bytes_per_second)[d] = *n;
  }
  return Status::ok();
}

// 0/1 options that may stand alone: time_based, norandommap, group_reporting, new_group,
// stonewall.
// The 0/1 options that may stand alone, and what each sets (norandommap sets random_map
// to the opposite).
bool* flag_target(FioJob& job, Opt id) {
  switch (id) {
    case Opt::kTimeBased:
      return &job.time_based;
    case Opt::kNoRandomMap:
      return &job.random_map;
    case Opt::kGroupReporting:
      return &job.group_reporting;
    case Opt::kNewGroup:
      return &job.new_group;
    case Opt::kStonewall:
      return &job.stonewall;
    case Opt::kBsUnaligned:
      return &job.bs[0].unaligned;
    case Opt::kExitAll:
      return &job.exitall;
    case Opt::kClatPercentiles:
      return &job.clat_percentiles;
    case Opt::kLatPercentiles:
      return &job.lat_percentiles;
    case Opt::kSlatPercentiles:
      return &job.slat_percentiles;
    case Opt::kPerJobLogs:
      return &job.logs.per_job;
    case Opt::kLogOffset:
      return &job.logs.offset;
    case Opt::kDoVerify:
      return &job.do_verify;
    case Opt::kReplayNoStall:
      return &job.replay_no_stall;
    case Opt::kLatencyRun:
      return &job.latency.run;
    default:
      return nullptr;
  }
}

Status apply_flag_option(JobState& s, const Entry& e) {
  auto b = parse_bool(e);
  if (!b.is_ok()) return b.status();
  bool* target = flag_target(s.job, e.def->id);
  AFASIM_ASSERT(target != nullptr, "a flag option has a target");
  *target = e.def->id == Opt::kNoRandomMap ? !*b : *b;
  if (e.def->id == Opt::kBsUnaligned) s.job.bs[1].unaligned = s.job.bs[2].unaligned = *b;
  return Status::ok();
}

// Options with a value of their own kind: name, description, rw, random_distribution,
// randseed, wait_for, percentile_list, kb_base.
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
  if (id == Opt::kIgnored) {
    // fio judges no latency target and no max_latency under disable_lat (gtod_reduce sets it:
    // io_u.c account_io_completion), though afasim still reports every latency.
    if (e.def->name == "disable_lat" || e.def->name == "gtod_reduce")
      if (auto b = parse_bool(e); b.is_ok()) s.job.latency.judged = !*b;
    return Status::ok();
  }
  const bool is_flag = flag_target(s.job, id) != nullptr;
  const bool is_log = id == Opt::kWriteBwLog || id == Opt::kWriteLatLog ||
                      id == Opt::kWriteIopsLog || id == Opt::kWriteHistLog;
  if (!e.option.has_value && !is_flag && !is_log) {
    return sim::invalid_argument("needs a value (" + e.option.name + "=...)");
  }
  if (e.option.has_value && e.option.value.empty()) return sim::invalid_argument("empty value");
  if (e.leading_blank && is_numeric(id)) {
    return sim::invalid_argument("blank after '=' (fio would read " + quoted(e.option.value) +
                                 " without its unit); remove it");
  }
  s.line_of[id] = e.option.line;
  s.name_of[id] = e.option.name;
  s.file_of[id] = e.option.file;
  switch (id) {
    case Opt::kBs:
    case Opt::kBsRange:
    case Opt::kBssplit:
      return apply_block_size_option(s, e, ctx);
    case Opt::kSize:
    case Opt::kOffset:
    case Opt::kOffsetIncrement:
    case Opt::kIoSize:
    case Opt::kFileSize:
    case Opt::kFilename:
      return apply_region_option(s, e, ctx);
    case Opt::kIodepth:
    case Opt::kNumjobs:
    case Opt::kLoops:
    case Opt::kRwmixRead:
    case Opt::kRwmixWrite:
      return apply_count_option(s, e);
    case Opt::kIoengine:
      return apply_ioengine(s, e);
    case Opt::kRuntime:
    case Opt::kRampTime:
    case Opt::kStartDelay:
      return apply_time_option(s, e);
    case Opt::kRate:
    case Opt::kRateIops:
    case Opt::kRateProcess:
      return apply_rate_option(s, e, ctx);
    case Opt::kName:
    case Opt::kDescription:
    case Opt::kRw:
    case Opt::kRandomDistribution:
    case Opt::kWaitFor:
    case Opt::kPercentileList:
    case Opt::kRandSeed:
    case Opt::kKbBase:
      return apply_other_option(s, e);
    default:
      return is_flag ? apply_flag_option(s, e) : apply_run_option(s, e, ctx);
  }
}

// Where option `id` of a job was written (its winning occurrence), for messages; the job's
// section line when the option was never given.
Location option_at(std::string_view file, const JobState& s, Opt id, std::string_view fallback) {
  const auto line = s.line_of.find(id);
  const auto name = s.name_of.find(id);
  const auto included = s.file_of.find(id);
  if (included != s.file_of.end() && !included->second.empty()) file = included->second;
  return Location{file, line == s.line_of.end() ? s.job.line : line->second,
                  name == s.name_of.end() ? fallback : std::string_view(name->second)};
}

}  // namespace afasim::workload::fio_detail
