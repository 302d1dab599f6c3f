// Applying the fio options that shape a run beyond sizes and rates: random distributions,
// several files per job, think time, minimum rates, flushes and sync writes, verification,
// exitall, reporting switches and log files (docs/workloads.md).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "workload/fio_job_internal.h"

namespace afasim::workload::fio_detail {
namespace {

constexpr int kMaxZones = 256;   // fio's ZONESPLIT_MAX
constexpr int kMaxNrFiles = 256;  // assumption: volumes per clone

// zipf:THETA[:CENTER], pareto:H[:CENTER], normal:DEV[:CENTER] (fio's defaults when absent).
Status apply_skewed_distribution(JobState& s, std::string_view value,
                                 const std::vector<std::string_view>& parts) {
  const std::string_view kind = parts[0];
  if (parts.size() > 3) return sim::invalid_argument(quoted(value) + ": too many ':' values");
  double v = kind == "zipf" ? 1.1 : kind == "pareto" ? 0.2 : 0;  // fio.h FIO_DEF_ZIPF/PARETO
  if (parts.size() >= 2) {
    // As fio (strtod): a sign and an exponent are a number; the ranges below say what fits.
    const std::string_view text = parts[1];
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
      return sim::invalid_argument(quoted(text) + " is not a number");
    if (ec == std::errc::result_out_of_range || !std::isfinite(v)) v = std::numeric_limits<double>::max();
  }
  std::optional<double> center;
  if (parts.size() == 3) {
    const auto c = parse_double(parts[2]);
    if (!c || *c > 1.0) {
      return sim::invalid_argument(quoted(parts[2]) + ": the center must be in 0..1");
    }
    center = *c;
  }
  if (kind == "zipf") {
    if (v <= 0 || v == 1.0 || v > 100) {
      return sim::invalid_argument(quoted(value) + ": zipf theta is out of range (expected > 0, not 1, at most 100)");
    }
    s.job.zipf_theta = v;
    s.job.distribution = RandomDistribution::kZipf;
  } else if (kind == "pareto") {
    if (v <= 0 || v >= 1) {
      return sim::invalid_argument(quoted(value) + ": pareto h is out of range (expected between 0 and 1)");
    }
    s.job.pareto_h = v;
    s.job.distribution = RandomDistribution::kPareto;
  } else {
    if (parts.size() < 2) return sim::invalid_argument(quoted(value) + ": normal needs a deviation (normal:DEV)");
    if (v <= 0 || v > 100) {
      return sim::invalid_argument(quoted(value) + ": normal deviation is out of range (expected > 0, at most 100)");
    }
    s.job.normal_dev_percent = v;
    s.job.distribution = RandomDistribution::kNormal;
  }
  s.job.distribution_center = center;
  return Status::ok();
}

// One direction of zoned:60/10:30/20:10/70 (percent of I/Os / percent of the region) or
// zoned_abs:60/20g:40/100g (percent of I/Os / bytes). Access shares add up to 100; zoned
// sizes to at most 100, a zone without one ("20", "20/", "20/0") sharing what the others
// leave, in whole percents (fio options.c zone_split_ddir: zoned:50/5:30/15:20/ gives the
// last zone 80 %). Sizes under 100 leave the end of the region unread, as in fio.
Result<std::vector<AccessZone>> parse_zones(std::string_view text, bool absolute, int kb_base) {
  std::vector<AccessZone> zones;
  int access = 0;
  double size = 0;
  int missing = 0;
  for (std::string_view item : split(text, ':')) {
    item = trim(item);
    const auto slash = item.find('/');
    if (absolute && slash == std::string_view::npos) {
      return sim::invalid_argument(quoted(item) + " is not ACCESS%/SIZE");
    }
    if (zones.size() == kMaxZones) return sim::invalid_argument("more than 256 zones (fio's limit)");
    const auto pct = parse_u64(trim(item.substr(0, slash)));
    if (!pct || *pct > 100) {
      return sim::invalid_argument(quoted(item.substr(0, slash)) + " is not a percentage 0..100");
    }
    AccessZone z;
    z.access_percent = static_cast<int>(*pct);
    const std::string_view size_text =
        slash == std::string_view::npos ? std::string_view{} : trim(item.substr(slash + 1));
    if (absolute) {
      auto bytes = parse_size_detail(size_text, kb_base);
      if (!bytes.is_ok()) return bytes.status();
      if (bytes->bytes == 0) return sim::invalid_argument(quoted(size_text) + ": a zone has a size");
      z.size_bytes = bytes->bytes;
    } else if (size_text.empty() || size_text == "0") {
      ++missing;  // z.size_percent filled in below
    } else {
      const auto p = parse_double(size_text);
      if (!p || *p <= 0 || *p > 100) {
        return sim::invalid_argument(quoted(size_text) + " is not a size percentage in (0, 100]");
      }
      z.size_percent = *p;
      size += *p;
    }
    access += z.access_percent;
    zones.push_back(z);
  }
  if (access != 100) {
    return sim::invalid_argument(quoted(text) + ": access percentages add up to " +
                                 std::to_string(access) + ", not 100");
  }
  if (!absolute && size > 100 + 1e-9) {
    return sim::invalid_argument(quoted(text) + ": size percentages add up to more than 100");
  }
  if (missing > 0) {
    const double share = std::floor((100 - size) / missing);
    if (share < 1) {
      return sim::invalid_argument(quoted(text) + ": the zones with a size leave " +
                                   std::to_string(static_cast<int>(100 - size)) + " % for " +
                                   std::to_string(missing) + " without one");
    }
    for (AccessZone& z : zones) {
      if (z.size_percent == 0) z.size_percent = share;
    }
  }
  return zones;
}

Status apply_zoned_distribution(JobState& s, std::string_view value, bool absolute) {
  const std::string_view spec = value.substr(value.find(':') + 1);
  // fio refuses a direction left empty at the end (hostile round 32: "zoned:50/50:50/50," ran).
  if (!spec.empty() && spec.back() == ',')
    return sim::invalid_argument(quoted(value) + ": a ',' with no zones after it");
  auto parts = per_direction(spec);
  if (!parts.is_ok()) return parts.status();
  for (auto& zones : s.job.zones) zones.clear();
  for (int d = 0; d < kDirections; ++d) {
    if (!(*parts)[d]) continue;
    auto zones = parse_zones(*(*parts)[d], absolute, s.job.kb_base);
    if (!zones.is_ok()) return zones.status();
    s.job.zones[d] = std::move(*zones);
  }
  s.job.distribution = absolute ? RandomDistribution::kZonedAbs : RandomDistribution::kZoned;
  s.job.distribution_center.reset();
  return Status::ok();
}

// nrfiles, file_service_type.
Status apply_file_option(JobState& s, const Entry& e) {
  const std::string_view v = e.option.value;
  if (e.def->id == Opt::kNrFiles) {
    auto n = parse_count(v, 1, kMaxNrFiles, s.job.kb_base);
    if (!n.is_ok()) return n.status();
    s.job.nrfiles = static_cast<int>(*n);
    return Status::ok();
  }
  const auto colon = v.find(':');
  const std::string_view kind = v.substr(0, colon);
  if (kind == "roundrobin") {
    s.job.file_service = FileService::kRoundRobin;
  } else if (kind == "sequential") {
    s.job.file_service = FileService::kSequential;
  } else if (kind == "random") {
    s.job.file_service = FileService::kRandom;
  } else {
    return sim::invalid_argument(quoted(v) +
                                 ": roundrobin, sequential and random are simulated (not the "
                                 "zipf/pareto/normal/gauss file choices)");
  }
  s.job.file_service_ios = 1;
  if (colon != std::string_view::npos) {
    auto n = parse_count(v.substr(colon + 1), 1, kMaxBytes, s.job.kb_base);
    if (!n.is_ok()) return n.status();
    s.job.file_service_ios = *n;
  }
  return Status::ok();
}

// latency_target, latency_window (µs without a unit), latency_percentile.
Status apply_latency_option(JobState& s, const Entry& e) {
  if (e.def->id == Opt::kLatencyPercentile) return parse_latency_percentile(e.option.value, s.job.latency.percentile);
  auto t = parse_fio_time(e.option.value, sim::kMicrosecond);
  if (!t.is_ok()) return t.status();
  (e.def->id == Opt::kLatencyTarget ? s.job.latency.target_ns : s.job.latency.window_ns) = *t;
  return Status::ok();
}

// percentage_random, blockalign, rate_iops_min, rate_min, max_latency (per direction).
Status apply_per_direction_option(JobState& s, const Entry& e, const ApplyContext& ctx) {
  auto parts = per_direction(e.option.value);
  if (!parts.is_ok()) return parts.status();
  for (int d = 0; d < kDirections; ++d) {
    if (!(*parts)[d]) continue;
    const std::string_view text = *(*parts)[d];
    switch (e.def->id) {
      case Opt::kPercentageRandom: {
        auto n = parse_count(text, 0, 100, s.job.kb_base);
        if (!n.is_ok()) return n.status();
        s.job.percentage_random[d] = static_cast<int>(*n);
        break;
      }
      case Opt::kRateIopsMin: {
        auto n = parse_count(text, 0, kMaxBytes, s.job.kb_base);
        if (!n.is_ok()) return n.status();
        s.job.rate_iops_min[d] = *n;
        break;
      }
      case Opt::kMaxLatency: {
        auto t = parse_fio_time(text, sim::kMicrosecond);
        if (!t.is_ok()) return t.status();
        s.job.latency.max_ns[d] = *t;
        break;
      }
      default: {  // blockalign, rate_min: sizes
        auto n = size_value(ctx, e, text, s.job.kb_base);
        if (!n.is_ok()) return n.status();
        if (e.def->id == Opt::kBlockAlign) {
          if (*n == 0) return sim::invalid_argument(quoted(text) + ": must be > 0");
          // An offset fio draws is a multiple of it: 3 bytes put I/O at any byte (round 25).
          AFASIM_RETURN_IF_ERROR(check_sector_multiple(text, *n));
          s.job.block_align_bytes[d] = *n;
        } else {
          s.job.rate_min_bytes_per_second[d] = *n;
        }
      }
    }
  }
  return Status::ok();
}

// thinktime (µs without a unit), thinktime_blocks, thinktime_blocks_type, number_ios,
// rate_cycle (ms), fsync, fdatasync, sync.
Status apply_pacing_option(JobState& s, const Entry& e) {
  const std::string_view v = e.option.value;
  switch (e.def->id) {
    case Opt::kThinkTime: {
      auto t = parse_fio_time(v, sim::kMicrosecond);
      if (!t.is_ok()) return t.status();
      s.job.thinktime_ns = *t;
      return Status::ok();
    }
    case Opt::kRateCycle: {
      auto t = parse_fio_time(v, sim::kMillisecond);
      if (!t.is_ok()) return t.status();
      if (*t < sim::kMillisecond) return sim::invalid_argument("must be at least 1 ms");
      s.job.rate_cycle_ns = *t;
      return Status::ok();
    }
    case Opt::kThinkTimeBlocksType:
      // The queue drains before each pause, so the blocks counted are completed ones: fio's
      // default, complete. issue (pause after N issued, I/O still in flight) is not simulated.
      if (v == "complete") return Status::ok();
      if (v == "issue")
        return sim::invalid_argument("\"issue\" is not simulated: afasim drains the queue before each pause, "
                                     "counting completed I/Os (complete, fio's default)");
      return sim::invalid_argument(quoted(v) + " is not complete or issue");
    case Opt::kNumberIos: {
      auto n = parse_count(v, 0, kMaxBytes, s.job.kb_base);
      if (!n.is_ok()) return n.status();
      s.job.number_ios = *n;
      return Status::ok();
    }
    case Opt::kSync:
      if (v == "0" || v == "none") {
        s.job.sync_writes = false;
      } else if (v == "1" || v == "sync" || v == "dsync") {
        s.job.sync_writes = true;
      } else {
        return sim::invalid_argument(quoted(v) + " is not 0, 1, none, sync or dsync");
      }
      return Status::ok();
    default:
      break;
  }
  auto n = parse_count(v, 0, kMaxBytes, s.job.kb_base);
  if (!n.is_ok()) return n.status();
  // thinktime_blocks=0 pauses after every I/O, as 1 does (fio backend.c handle_thinktime:
  // b >= last_thinktime_blocks + 0 always holds).
  if (e.def->id == Opt::kThinkTimeBlocks && *n == 0) *n = 1;
  (e.def->id == Opt::kThinkTimeBlocks ? s.job.thinktime_blocks
   : e.def->id == Opt::kFsync         ? s.job.fsync_every_writes
                                      : s.job.fdatasync_every_writes) = *n;
  return Status::ok();
}

// verify=, unified_rw_reporting, significant_figures.
Status apply_report_option(JobState& s, const Entry& e) {
  const std::string_view v = e.option.value;
  if (e.def->id == Opt::kVerify) {
    static constexpr std::string_view kKinds[] = {
        "md5",    "crc64",  "crc32c", "crc32c-intel", "crc32", "crc16",    "crc7",
        "sha1",   "sha256", "sha512", "sha3-224",     "sha3-256", "sha3-384", "sha3-512",
        "xxhash", "meta",   "pattern"};
    if (v == "0" || v == "none" || v == "null") {
      s.job.verify = false;
      s.job.verify_kind.clear();
      return Status::ok();
    }
    if (std::find(std::begin(kKinds), std::end(kKinds), v) == std::end(kKinds)) {
      return sim::invalid_argument(quoted(v) + " is not a verify method (md5, crc32c, sha256, ...)");
    }
    s.job.verify = true;
    s.job.verify_kind = std::string(v);
    return Status::ok();
  }
  if (e.def->id == Opt::kUnifiedRw) {
    if (v == "0" || v == "none") {
      s.job.unified_rw_reporting = UnifiedReporting::kNone;
    } else if (v == "1" || v == "mixed") {
      s.job.unified_rw_reporting = UnifiedReporting::kMixed;
    } else if (v == "2" || v == "both") {
      s.job.unified_rw_reporting = UnifiedReporting::kBoth;
    } else {
      return sim::invalid_argument(quoted(v) + " is not none, mixed or both (0, 1, 2)");
    }
    return Status::ok();
  }
  auto n = parse_count(v, 1, 10, s.job.kb_base);
  if (!n.is_ok()) return n.status();
  s.job.significant_figures = static_cast<int>(*n);
  return Status::ok();
}

// write_{bw,lat,iops,hist}_log, log_avg_msec, log_hist_msec.
Status apply_log_option(JobState& s, const Entry& e) {
  const std::string_view v = e.option.value;
  LogOptions& logs = s.job.logs;
  const Opt id = e.def->id;
  if (id == Opt::kLogAvgMsec || id == Opt::kLogHistMsec) {
    auto t = parse_fio_time(v, sim::kMillisecond);
    if (!t.is_ok()) return t.status();
    (id == Opt::kLogAvgMsec ? logs.avg_ns : logs.hist_ns) = *t;
    return Status::ok();
  }
  // A name or a path, as fio takes it: write_lat_log=results/db gives results/db_lat.1.log.
  if (e.option.has_value && (v.empty() || v.back() == '/'))
    return sim::invalid_argument(quoted(v) + ": a log file's name or path prefix (results/db gives "
                                             "results/db_lat.1.log), not a folder");
  // A bare write_*_log uses the job's name (fio make_log_name), resolved in finalize().
  const std::string prefix = e.option.has_value ? std::string(v) : std::string(kJobNamePrefix);
  (id == Opt::kWriteBwLog    ? logs.bw_prefix
   : id == Opt::kWriteLatLog ? logs.lat_prefix
   : id == Opt::kWriteIopsLog ? logs.iops_prefix
                              : logs.hist_prefix) = prefix;
  return Status::ok();
}

}  // namespace

Status apply_random_distribution(JobState& s, std::string_view value) {
  const auto parts = split(value, ':');
  const std::string_view kind = parts[0];
  if (kind == "random") {
    if (parts.size() > 1) return sim::invalid_argument(quoted(value) + ": random takes no value");
    s.job.distribution = RandomDistribution::kUniform;
    s.job.distribution_center.reset();
    return Status::ok();
  }
  if (kind == "zoned" || kind == "zoned_abs") {
    if (parts.size() < 2) return sim::invalid_argument(quoted(value) + ": no zones after ':'");
    return apply_zoned_distribution(s, value, kind == "zoned_abs");
  }
  if (kind != "zipf" && kind != "pareto" && kind != "normal") {
    return sim::invalid_argument(quoted(value) +
                                 " is not random, zipf:THETA, pareto:H, normal:DEV, zoned:... or "
                                 "zoned_abs:...");
  }
  return apply_skewed_distribution(s, value, parts);
}

Status apply_run_option(JobState& s, const Entry& e, const ApplyContext& ctx) {
  switch (e.def->id) {
    case Opt::kNrFiles:
    case Opt::kFileServiceType:
      return apply_file_option(s, e);
    case Opt::kPercentageRandom:
    case Opt::kBlockAlign:
    case Opt::kRateIopsMin:
    case Opt::kRateMin:
    case Opt::kMaxLatency:
      return apply_per_direction_option(s, e, ctx);
    case Opt::kLatencyTarget:
    case Opt::kLatencyWindow:
    case Opt::kLatencyPercentile:
      return apply_latency_option(s, e);
    case Opt::kThinkTime:
    case Opt::kThinkTimeBlocks:
    case Opt::kThinkTimeBlocksType:
    case Opt::kNumberIos:
    case Opt::kRateCycle:
    case Opt::kFsync:
    case Opt::kFdatasync:
    case Opt::kSync:
      return apply_pacing_option(s, e);
    case Opt::kVerify:
    case Opt::kUnifiedRw:
    case Opt::kSigFigs:
      return apply_report_option(s, e);
    case Opt::kReadIolog:
      s.job.read_iolog = e.option.value;
      return Status::ok();
    case Opt::kSteadyState:
      return parse_steadystate(e.option.value, s.job.steadystate);
    case Opt::kSteadyStateDuration:
    case Opt::kSteadyStateRamp: {
      auto t = parse_fio_time(e.option.value, sim::kSecond);
      if (!t.is_ok()) return t.status();
      if (e.def->id == Opt::kSteadyStateRamp) {
        s.job.steadystate.ramp_ns = *t;
        return Status::ok();
      }
      // fio keeps whole seconds (ss_dur /= 1000000): it samples once a second.
      if (*t != 0 && *t < sim::kSecond) return sim::invalid_argument("0 (off) or at least 1 s: one sample a second");
      if (*t % sim::kSecond != 0) return sim::invalid_argument("whole seconds (fio samples once a second)");
      if (*t > 7 * sim::kDay) return sim::invalid_argument("at most 7 days of one-second samples");
      s.job.steadystate.duration_s = static_cast<int>(*t / sim::kSecond);
      return Status::ok();
    }
    case Opt::kExitWhat: {
      const std::string_view v = e.option.value;
      if (v == "group") s.job.exit_what = ExitWhat::kGroup;
      else if (v == "stonewall") s.job.exit_what = ExitWhat::kStonewall;
      else if (v == "all") s.job.exit_what = ExitWhat::kAll;
      else return sim::invalid_argument(quoted(v) + " is not group, stonewall or all");
      return Status::ok();
    }
    default:
      return apply_log_option(s, e);
  }
}

Status finalize_run_options(JobState& s, std::string_view file) {
  FioJob& job = s.job;
  auto at = [&](Opt id, std::string_view fallback) { return option_at(file, s, id, fallback); };
  if (!job.filenames.empty() && s.line_of.contains(Opt::kNrFiles) &&
      job.nrfiles != static_cast<int>(job.filenames.size())) {
    return located(at(Opt::kNrFiles, "nrfiles"),
                   "nrfiles=" + std::to_string(job.nrfiles) + " but filename= names " +
                       std::to_string(job.filenames.size()) + " volume(s)");
  }
  if (!job.filenames.empty()) job.nrfiles = static_cast<int>(job.filenames.size());
  for (std::string* prefix : {&job.logs.bw_prefix, &job.logs.lat_prefix, &job.logs.iops_prefix,
                              &job.logs.hist_prefix}) {
    if (*prefix == kJobNamePrefix) *prefix = job.name;
  }
  if (!job.logs.hist_prefix.empty() && job.logs.hist_ns == 0) {
    return located(at(Opt::kWriteHistLog, "write_hist_log"),
                   "needs log_hist_msec= (fio would write an empty log)");
  }
  // fio init.c fixup_options: a job paces by bytes or by I/Os, not both, and a minimum may
  // not exceed its cap.
  const auto any = [](const std::array<std::int64_t, kDirections>& a) { return a[0] + a[1] + a[2] > 0; };
  if (any(job.rate_bytes_per_second) && any(job.rate_iops)) {
    return located(at(Opt::kRateIops, "rate_iops"), "rate and rate_iops are mutually exclusive (as in fio)");
  }
  if (any(job.rate_min_bytes_per_second) && any(job.rate_iops_min)) {
    return located(at(Opt::kRateIopsMin, "rate_iops_min"),
                   "rate_min and rate_iops_min are mutually exclusive (as in fio)");
  }
  for (int d = 0; d < kDirections; ++d) {
    const auto i = static_cast<std::size_t>(d);
    const bool bytes = job.rate_bytes_per_second[i] > 0 &&
                       job.rate_bytes_per_second[i] < job.rate_min_bytes_per_second[i];
    const bool ios = job.rate_iops[i] > 0 && job.rate_iops[i] < job.rate_iops_min[i];
    if (bytes || ios) {
      return located(at(bytes ? Opt::kRateMin : Opt::kRateIopsMin, bytes ? "rate_min" : "rate_iops_min"),
                     "the minimum " + std::string(to_string(static_cast<Direction>(d))) +
                         " rate exceeds its rate cap");
    }
  }
  if (job.verify && does_trims(job.rw)) {
    return located(at(Opt::kVerify, "verify"),
                   "verification of trimmed blocks is not simulated (use a write pattern)");
  }
  if (job.verify && !job.read_iolog.empty()) {
    return located(at(Opt::kVerify, "verify"), "a replayed trace carries no data to verify");
  }
  return Status::ok();
}

// The random maps that keep a bit per block (FioJob::tracks_random_map): one per clone and
// file, as fio's axmap is; at most kMaxRandomMapBytes over the file's jobs.
Status check_random_maps(const std::vector<JobState>& states, std::string_view file) {
  static_assert(kMaxRandomMapBytes == std::int64_t{1} << 30, "the message says 1 GiB");
  __int128 map_bytes = 0;
  for (const JobState& s : states) {
    const FioJob& job = s.job;
    if (!job.tracks_random_map()) continue;
    const __int128 blocks = job.size_bytes / job.min_block_bytes();
    // A verifying job's read-back replays its pattern, with a map of its own.
    map_bytes += (blocks + 63) / 64 * 8 * job.numjobs * job.file_count() * (job.verify && job.do_verify ? 2 : 1);
    if (map_bytes > kMaxRandomMapBytes) {
      return located(option_at(file, s, Opt::kSize, "size"),
                     "the random maps of jobs with mixed block sizes keep a bit per smallest block of every "
                     "clone's region, as fio's do: more than 1 GiB with job " + quoted(job.name) +
                         "; add norandommap (independent draws) or use a larger smallest block size");
    }
  }
  return Status::ok();
}

// filesize=: every file (volume) of the job is that large and its region is the whole file;
// size= then only bounds how much the job does, as io_size= would (fio HOWTO "filesize":
// "size becomes merely the default for io_size"; setup_files caps it at the files' total).
Status apply_file_size(JobState& s, std::string_view file) {
  const Location at = option_at(file, s, Opt::kFileSize, "filesize");
  const __int128 total = static_cast<__int128>(*s.file_size) * s.job.file_count();
  if (total > kMaxBytes) return located(at, "filesize × the job's files is larger than 1 EiB");
  if (s.size && s.size->is_percent) {
    return located(at, "with a percentage size= (of files filesize= makes): give size= in bytes, or io_size=");
  }
  if (!s.io_size && s.size) s.io_size = std::min<std::int64_t>(s.size->bytes, static_cast<std::int64_t>(total));
  // The region is what the file holds past offset= (review 33b: offset=256k made a 1.25 MiB
  // volume for filesize=1m and read past the file).
  std::int64_t region = *s.file_size;
  if (s.offset && !s.offset->is_percent) region -= s.offset->bytes;
  if (region <= 0) return located(at, "offset= is at or past the end of each file (filesize=)");
  s.size = SizeOrPercent{region * s.job.file_count(), 0, false};
  return Status::ok();
}

// rw=read:HOLE ends a pass where fio ends it (fio_detail::holed_pass_bytes) for one direction
// of one block size; with two directions or several sizes fio ends it where the first of them
// runs past the region's end (85 reads and 86 writes for rw=rw:8k bs=4k size=1m, fio 3.33),
// which afasim does not follow: refused there unless time_based (a pass then wraps, as fio's).
Status check_holes(const JobState& s, std::string_view file) {
  const FioJob& job = s.job;
  if (job.rw_skip_bytes == 0 || job.time_based || is_random(job.rw)) return Status::ok();
  const bool one_direction = sequential_direction(job).has_value();
  bool one_size = true;
  for (int d = 0; d < kDirections; ++d)
    one_size &= !does_direction(job.rw, static_cast<Direction>(d)) || job.bs[d].min_bytes == job.bs[d].max_bytes;
  if (one_direction && one_size) return Status::ok();
  return located(option_at(file, s, Opt::kRw, "rw"),
                 std::string("a hole after each I/O is simulated for one direction (read, write or trim) of one "
                             "block size, or with time_based: fio ends the pass of ") +
                     (one_direction ? "several block sizes" : "mixed directions") +
                     " where the first I/O runs past the region, which afasim does not follow");
}

// Cross-option checks of one job, after every option is applied. Sizes that depend on the
// volume (percentages) are resolved later, by the file pass.
Status finalize(JobState& s, std::string_view file, std::vector<std::string>& warnings) {
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
      // rw=read:-8k steps back (fio's ddir_seq_add is signed): backwards sequential I/O.
      const bool backwards = suffix.starts_with('-');
      const std::string_view bytes_text = backwards ? suffix.substr(1) : suffix;
      auto skip = parse_fio_size(bytes_text, job.kb_base);
      if (!skip.is_ok()) return located(at(Opt::kRw, "rw"), skip.status());
      // The next offset moves by it: whole logical blocks, as every offset (review 33b: 4095).
      if (Status st = check_sector_multiple(bytes_text, *skip); !st.is_ok()) return located(at(Opt::kRw, "rw"), st);
      job.rw_skip_bytes = backwards ? -*skip : *skip;
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
  if (s.file_size) AFASIM_RETURN_IF_ERROR(apply_file_size(s, file));
  AFASIM_RETURN_IF_ERROR(check_holes(s, file));
  if (job.verify && job.do_verify && job.time_based && job.runtime_ns > 0 && does_writes(job.rw) &&
      !does_reads(job.rw)) {  // fio init.c fixup_options says the same
    warnings.push_back(located(at(Opt::kVerify, "verify"),
                               "the read-back never starts: job " + quoted(job.name) +
                                   " writes for all of its runtime (time_based), as in fio")
                           .message());
  }
  if (job.time_based && job.runtime_ns == 0) {
    // fio (init.c fixup_options) says "time_based requires a runtime/timeout setting" and runs
    // the job until its size is done.
    const Location where = at(Opt::kTimeBased, "time_based");
    warnings.push_back(located(where, "no effect without runtime=; the job " + quoted(job.name) +
                                          " ends when its size is done (as fio)")
                           .message());
    job.time_based = false;
  }
  if (!job.wait_for.empty() && job.wait_for == job.name) {
    return located(at(Opt::kWaitFor, "wait_for"), "a job cannot wait for itself");
  }
  if (job.percentile_list.empty()) job.percentile_list = default_percentile_list();
  return finalize_run_options(s, file);
}

}  // namespace afasim::workload::fio_detail
