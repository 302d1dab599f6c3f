// fio's human output (stat.c show_run_stats) and terse output, from a RunReport.
#include "workload/fio_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "sim/assert.h"
#include "workload/fio_report_internal.h"

namespace afasim::workload {

using namespace report_detail;

// --- human output ------------------------------------------------------------------------

namespace {

// stat.c display_lat: nsec, or usec / msec when the values are large enough.
std::string latency_line(const char* name, const sim::Histogram& h) {
  auto min = static_cast<std::uint64_t>(h.min());
  auto max = static_cast<std::uint64_t>(h.max());
  double mean = h.mean();
  double dev = sample_stddev(h);
  const char* base = "(nsec)";
  if (min > 2000000 && max > 99999999ULL && dev > 1000000.0) {
    min /= 1000000;
    max /= 1000000;
    mean /= 1000000.0;
    dev /= 1000000.0;
    base = "(msec)";
  } else if (min > 2000 && max > 99999 && dev > 1000.0) {
    min /= 1000;
    max /= 1000;
    mean /= 1000.0;
    dev /= 1000.0;
    base = "(usec)";
  }
  return sprintf_string("    %s %s: min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", name, base,
                        fio_num2str(min, 6, 1, false, NumUnit::kNone).c_str(),
                        fio_num2str(max, 6, 1, false, NumUnit::kNone).c_str(), mean, dev);
}

// `precision`: digits after the point (fio counts them in percentile_list as written).
std::string percentile_block(const sim::Histogram& h, const std::vector<double>& list, int precision,
                             const char* name) {
  if (h.count() == 0 || list.empty()) return {};
  std::vector<std::uint64_t> values;
  std::uint64_t minv = UINT64_MAX, maxv = 0;
  for (double p : list) {
    const auto v = static_cast<std::uint64_t>(h.percentile(p));
    values.push_back(v);
    minv = std::min(minv, v);
    maxv = std::max(maxv, v);
  }
  std::string out;
  std::uint64_t divisor = 1;
  int scale_down = 0;
  if (minv > 2000000 && maxv > 99999999ULL) {
    scale_down = 2;
    divisor = 1000000;
    out = std::string("    ") + name + " percentiles (msec):\n     |";
  } else if (minv > 2000 && maxv > 99999) {
    scale_down = 1;
    divisor = 1000;
    out = std::string("    ") + name + " percentiles (usec):\n     |";
  } else {
    out = std::string("    ") + name + " percentiles (nsec):\n     |";
  }
  const std::uint64_t scaled_max = std::max<std::uint64_t>(maxv / divisor, 1);
  const int time_width =
      std::max(5, static_cast<int>(std::log10(static_cast<double>(scaled_max)) + 1));
  const int per_line = (80 - 7) / (precision + 10 + time_width);
  for (std::size_t j = 0; j < list.size(); ++j) {
    if (j != 0 && j % per_line == 0) out += "     |";
    const bool last = j == list.size() - 1;
    std::uint64_t v = values[j];
    for (int i = 0; i < scale_down; ++i) v = (v + 999) / 1000;
    out += sprintf_string(" %*.*fth=[%*llu]%c", precision + 3, precision, list[j], time_width,
                          static_cast<unsigned long long>(v), last ? '\n' : ',');
    if (last) break;
    if (static_cast<int>(j % per_line) == per_line - 1) out += "\n";
  }
  return out;
}

// stat.c show_ddir_status: the bw and iops sample lines.
std::string sample_lines(const DirectionStats& ds, std::uint64_t group_agg_bytes_per_second) {
  std::string out;
  if (ds.bw_kib_per_second.samples > 0) {
    const SampleStats& s = ds.bw_kib_per_second;
    double min = static_cast<double>(s.min), max = static_cast<double>(s.max);
    double mean = s.mean, dev = s.stddev();
    double per = 100.0;
    if (group_agg_bytes_per_second > 1024) {
      per = std::min(100.0,
                     mean * 100.0 / (static_cast<double>(group_agg_bytes_per_second) / 1024.0));
    }
    const char* unit = "KiB";
    if (mean > 1024.0 * 1024.0) {
      min /= 1024;
      max /= 1024;
      mean /= 1024;
      dev /= 1024;
      unit = "MiB";
    }
    out += sprintf_string(
        "   bw (%5s/s): min=%5llu, max=%5llu, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, "
        "samples=%llu\n",
        unit, static_cast<unsigned long long>(min), static_cast<unsigned long long>(max), per, mean,
        dev, static_cast<unsigned long long>(s.samples));
  }
  if (ds.iops.samples > 0) {
    const SampleStats& s = ds.iops;
    out += sprintf_string(
        "   iops        : min=%5llu, max=%5llu, avg=%5.02f, stdev=%5.02f, samples=%llu\n",
        static_cast<unsigned long long>(s.min), static_cast<unsigned long long>(s.max), s.mean,
        s.stddev(), static_cast<unsigned long long>(s.samples));
  }
  return out;
}

// stat.c show_ddir_status: one direction (or "mixed") of an entry.
std::string direction_block(const ReportEntry& e, const DirectionStats& ds, std::string_view name,
                            std::uint64_t group_agg_bytes_per_second) {
  const std::int64_t runt = ds.runtime_ms();
  if (runt == 0 || ds.io_bytes == 0) return {};
  const auto bw = static_cast<std::uint64_t>(static_cast<__int128>(ds.io_bytes) * 1000 / runt);
  const auto iops = static_cast<std::uint64_t>(static_cast<__int128>(ds.io_count) * 1000 / runt);
  const int figures = e.significant_figures;  // fio's sig_figs
  std::string out =
      // fio 3.33 (stat.c show_ddir_status, zbd_write_status) ends every write line with its
      // zone resets: none here.
      sprintf_string("  %s: IOPS=%s, BW=%s (%s)(%s/%llumsec)%s\n", std::string(name).c_str(),
                     fio_num2str(iops, figures, 1, false, NumUnit::kNone).c_str(),
                     fio_num2str(bw, figures, 1, true, NumUnit::kBytePerSecond).c_str(),
                     fio_num2str(bw, figures, 1, false, NumUnit::kBytePerSecond).c_str(),
                     fio_num2str(ds.io_bytes, figures, 1, true, NumUnit::kByte).c_str(),
                     static_cast<unsigned long long>(runt), name == "write" ? "; 0 zone resets" : "");
  if (ds.slat_ns().count() > 0) out += latency_line("slat", ds.slat_ns());
  if (ds.clat_ns.count() > 0) out += latency_line("clat", ds.clat_ns);
  if (ds.lat_ns().count() > 0) out += latency_line(" lat", ds.lat_ns());
  if (e.slat_percentiles) out += percentile_block(ds.slat_ns(), e.percentile_list, e.percentile_precision, "slat");
  if (e.clat_percentiles) out += percentile_block(ds.clat_ns, e.percentile_list, e.percentile_precision, "clat");
  if (e.lat_percentiles) out += percentile_block(ds.lat_ns(), e.percentile_list, e.percentile_precision, "lat");
  out += sample_lines(ds, group_agg_bytes_per_second);
  return out;
}

std::string direction_blocks(const ReportEntry& e, const GroupSummary& group) {
  const auto& agg = group.agg_bytes_per_second;
  if (e.unified == UnifiedReporting::kMixed)
    return direction_block(e, e.mixed, "mixed", agg[0] + agg[1] + agg[2]);
  std::string out;
  for (int d = 0; d < kDirections; ++d)
    out += direction_block(e, e.direction[d], to_string(static_cast<Direction>(d)), agg[d]);
  if (e.unified == UnifiedReporting::kBoth)
    out += direction_block(e, e.mixed, "mixed", agg[0] + agg[1] + agg[2]);
  return out;
}

// stat.c show_lat: up to five bins a line, only the non-empty ones.
std::string latency_bin_lines(const std::uint64_t* bins, int count, const char* unit,
                              std::uint64_t total) {
  std::string out;
  int on_line = 0;
  for (int i = 0; i < count; ++i) {
    if (bins[i] == 0) continue;
    double pct = 100.0 * static_cast<double>(bins[i]) / static_cast<double>(total);
    if (pct < 0.01) pct = 0.01;
    if (on_line == 0)
      out += sprintf_string("%s  lat (%s)   : ", out.empty() ? "" : "\n", unit);
    else
      out += ", ";
    out += sprintf_string("%s=%3.2f%%", kLatRanges[i], pct);
    if (++on_line == 5) on_line = 0;
  }
  if (!out.empty()) out += "\n";
  return out;
}

std::string entry_block(const ReportEntry& e, const GroupSummary& group) {
  const std::uint64_t ios = e.direction[0].io_count + e.direction[1].io_count +
                            e.direction[2].io_count + e.sync.io_count;
  if (ios == 0 && e.error == 0) {
    return {};  // fio prints nothing for a job that did no I/O
  }
  std::string out =
      e.error == 0 ? sprintf_string("%s: (groupid=%d, jobs=%d): err=%2d: ", e.name.c_str(),
                                    e.group_id, e.members, e.error)
                   : sprintf_string("%s: (groupid=%d, jobs=%d): err=%2d (%s): ", e.name.c_str(),
                                    e.group_id, e.members, e.error, e.error_message.c_str());
  out += sprintf_string("afasim: ended at %.6fs virtual time\n", sim::to_seconds(e.end_ns));
  if (!e.description.empty()) out += "  Description  : [" + e.description + "]\n";
  out += direction_blocks(e, group);
  if (e.sync.io_count > 0) {  // stat.c show_thread_status_normal: the flushes
    out += "  fsync/fdatasync/sync_file_range:\n" + latency_line("sync", e.sync.lat_ns);
    if (e.clat_percentiles) out += percentile_block(e.sync.lat_ns, e.percentile_list, e.percentile_precision, "sync");
  }
  const std::uint64_t total = e.clat_bins.total();
  if (total > 0) {
    out += latency_bin_lines(e.clat_bins.nsec.data(), 10, "nsec", total);
    out += latency_bin_lines(e.clat_bins.usec.data(), 10, "usec", total);
    out += latency_bin_lines(e.clat_bins.msec.data(), 12, "msec", total);
  }
  out += "  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0\n";  // the simulated host's: none
  if (e.depth_bins.total() > 0) {
    const auto pct = e.depth_bins.percentages();
    out += sprintf_string(
        "  IO depths    : 1=%3.1f%%, 2=%3.1f%%, 4=%3.1f%%, 8=%3.1f%%, 16=%3.1f%%, 32=%3.1f%%, "
        ">=64=%3.1f%%\n",
        pct[0], pct[1], pct[2], pct[3], pct[4], pct[5], pct[6]);
    out += "     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%\n";
    out += "     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%\n";
  }
  out += sprintf_string(
      "     issued rwts: total=%llu,%llu,%llu,%llu short=%llu,%llu,0,0 dropped=%llu,%llu,0,0\n",
      static_cast<unsigned long long>(e.direction[0].io_count),
      static_cast<unsigned long long>(e.direction[1].io_count),
      static_cast<unsigned long long>(e.direction[2].io_count),
      static_cast<unsigned long long>(e.sync.io_count),
      static_cast<unsigned long long>(e.direction[0].short_ios),
      static_cast<unsigned long long>(e.direction[1].short_ios),
      static_cast<unsigned long long>(e.direction[0].dropped_ios),
      static_cast<unsigned long long>(e.direction[1].dropped_ios));
  // fio 3.33 stat.c: the target in ns, the window in µs, as stored.
  out += sprintf_string("     latency   : target=%lld, window=%lld, percentile=%.2f%%, depth=%d\n",
                        static_cast<long long>(e.latency.target_ns),
                        static_cast<long long>(e.latency.window_ns / sim::kMicrosecond), e.latency.percentile,
                        e.iodepth);
  if (const auto& ss = e.steadystate) {  // stat.c show_ss_normal
    const std::uint64_t bw_kib = ss->bw_mean() / 1024;  // as fio: KiB, then × kb_base (its 12.0MB/s)
    out += sprintf_string("  steadystate  : attained=%s, bw=%s (%s), iops=%s, %s%s=%.3f%s\n", ss->attained ? "yes" : "no",
                          fio_num2str(bw_kib, e.significant_figures, 1024, true, NumUnit::kBytePerSecond).c_str(),
                          fio_num2str(bw_kib, e.significant_figures, 1024, false, NumUnit::kBytePerSecond).c_str(),
                          fio_num2str(ss->iops_mean(), e.significant_figures, 1, false, NumUnit::kNone).c_str(),
                          ss->spec.bandwidth ? "bw" : "iops", ss->spec.slope ? " slope" : " mean dev", ss->criterion,
                          ss->spec.percent ? "%" : "");
  }
  return out;
}

// stat.c show_group_stats.
std::string group_block(const GroupSummary& gs) {
  std::string out = sprintf_string("\nRun status group %d (all jobs):\n", gs.group_id);
  static constexpr std::array<const char*, kDirections> kNames = {"   READ", "  WRITE", "   TRIM"};
  for (int d = 0; d < kDirections; ++d) {
    if (gs.max_run_ms[d] == 0) continue;
    auto n2s = [](std::uint64_t v, bool pow2, NumUnit u) { return fio_num2str(v, 4, 1, pow2, u); };
    out += sprintf_string(
        "%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%lld-%lldmsec\n", kNames[d],
        n2s(gs.agg_bytes_per_second[d], true, NumUnit::kBytePerSecond).c_str(),
        n2s(gs.agg_bytes_per_second[d], false, NumUnit::kBytePerSecond).c_str(),
        n2s(gs.min_bytes_per_second[d], true, NumUnit::kBytePerSecond).c_str(),
        n2s(gs.max_bytes_per_second[d], true, NumUnit::kBytePerSecond).c_str(),
        n2s(gs.min_bytes_per_second[d], false, NumUnit::kBytePerSecond).c_str(),
        n2s(gs.max_bytes_per_second[d], false, NumUnit::kBytePerSecond).c_str(),
        n2s(gs.io_bytes[d], true, NumUnit::kByte).c_str(),
        n2s(gs.io_bytes[d], false, NumUnit::kByte).c_str(),
        static_cast<long long>(gs.min_run_ms[d]), static_cast<long long>(gs.max_run_ms[d]));
  }
  return out;
}

// init.c add_job: the line fio prints for each job before it starts.
std::string job_header(const FioJob& job) {
  auto bs = [](const BlockSizeSpec& s) {
    return fio_num2str(static_cast<std::uint64_t>(s.min_bytes), 4, 1, true, NumUnit::kByte) + "-" +
           fio_num2str(static_cast<std::uint64_t>(s.max_bytes), 4, 1, true, NumUnit::kByte);
  };
  const std::string read_bs = bs(job.bs[0]);
  const std::string write_bs = bs(job.bs[1]);
  std::string out = job.name + ": (g=" + std::to_string(job.group_id) +
                    "): rw=" + std::string(to_string(job.rw)) + ", bs=(R) " + read_bs + ", (W) " +
                    write_bs + ", (T) " + write_bs +
                    ", ioengine=afasim, iodepth=" + std::to_string(job.iodepth) + "\n";
  if (job.numjobs > 1) out += "...\n";
  return out;
}

std::string location(const FioJobFile& file, int line) {
  return file.file_name + ":" + std::to_string(line);
}

}  // namespace

std::string format_normal(const RunReport& report) {
  const FioJobFile& file = report.job_file;
  std::string out;
  for (const FioJob& job : file.jobs) out += job_header(job);
  out += "afasim-" + report.afasim_version + " (fio-3.33 job file, virtual time)\n";
  const int clones = file.clone_count();
  out += "Starting " + std::to_string(clones) + (clones == 1 ? " job" : " jobs") +
         " on a simulated " + (report.system.empty() ? std::string("array") : report.system) +
         " (seed " + std::to_string(report.seed) + ")\n";
  const auto entries = aggregate_entries(report);
  const auto groups = summarize_groups(entries, file.group_count());
  out += "\n";
  for (const ReportEntry& e : entries) out += entry_block(e, groups[e.group_id]);
  for (const GroupSummary& gs : groups) out += group_block(gs);
  if (!file.ignored.empty()) {
    out += "\nafasim: ignored options (no effect in a simulation):\n";
    for (const IgnoredOption& ig : file.ignored) {
      out += "  " + location(file, ig.option.line) + ": " + ig.option.name +
             (ig.option.has_value ? "=" + ig.option.value : std::string()) + ": " + ig.reason +
             "\n";
    }
  }
  if (!file.warnings.empty()) {
    out += "\nafasim: warnings:\n";
    for (const std::string& w : file.warnings) out += "  " + w + "\n";
  }
  return out;
}

// --- terse -------------------------------------------------------------------------------

namespace {

// "min;max;mean;stddev" of a latency in µs (stat.c: the ns values / 1000).
std::string terse_latency(const sim::Histogram& h) {
  if (h.count() == 0) return sprintf_string(";%llu;%llu;%f;%f", 0ULL, 0ULL, 0.0, 0.0);
  return sprintf_string(";%llu;%llu;%f;%f", static_cast<unsigned long long>(h.min() / 1000),
                        static_cast<unsigned long long>(h.max() / 1000), h.mean() / 1000,
                        sample_stddev(h) / 1000);
}

// stat.c show_ddir_status_terse (version 3).
std::string terse_direction(const ReportEntry& e, const DirectionStats& ds,
                            std::uint64_t group_agg_bytes_per_second) {
  const std::int64_t runt = ds.io_count > 0 ? ds.runtime_ms() : 0;
  std::uint64_t bw = 0, iops = 0;
  if (runt > 0) {
    bw = ds.io_bytes * 1000 / static_cast<std::uint64_t>(runt) / 1024;
    iops = ds.io_count * 1000 / static_cast<std::uint64_t>(runt);
  }
  std::string out = sprintf_string(";%llu;%llu;%llu;%llu", static_cast<unsigned long long>(ds.io_bytes >> 10),
                                   static_cast<unsigned long long>(bw),
                                   static_cast<unsigned long long>(iops),
                                   static_cast<unsigned long long>(runt));
  out += terse_latency(ds.slat_ns()) + terse_latency(ds.clat_ns);
  const sim::Histogram* pct = e.lat_percentiles    ? &ds.lat_ns()
                              : e.clat_percentiles ? &ds.clat_ns
                                                   : nullptr;
  for (std::size_t i = 0; i < 20; ++i) {  // FIO_IO_U_LIST_MAX_LEN
    if (pct == nullptr || pct->count() == 0 || i >= e.percentile_list.size()) {
      out += ";0%=0";
      continue;
    }
    out += sprintf_string(";%f%%=%llu", e.percentile_list[i],
                          static_cast<unsigned long long>(pct->percentile(e.percentile_list[i]) / 1000));
  }
  out += terse_latency(ds.lat_ns());
  const SampleStats& b = ds.bw_kib_per_second;
  double p_of_agg = b.samples > 0 ? 100.0 : 0.0;
  if (b.samples > 0 && group_agg_bytes_per_second / 1024 > 0)
    p_of_agg = std::min(100.0, b.mean * 100 / static_cast<double>(group_agg_bytes_per_second / 1024));
  out += sprintf_string(";%llu;%llu;%f%%;%f;%f", static_cast<unsigned long long>(b.min),
                        static_cast<unsigned long long>(b.max), p_of_agg, b.mean, b.stddev());
  return out;
}

std::string terse_entry(const ReportEntry& e, const GroupSummary& group) {
  std::string out = sprintf_string("3;fio-3.33;%s;%d;%d", e.name.c_str(), e.group_id, e.error);
  const auto& agg = group.agg_bytes_per_second;
  if (e.unified == UnifiedReporting::kMixed) {
    out += terse_direction(e, e.mixed, agg[0] + agg[1] + agg[2]);
  } else {
    out += terse_direction(e, e.direction[0], agg[0]);
    out += terse_direction(e, e.direction[1], agg[1]);
    if (e.unified == UnifiedReporting::kBoth) out += terse_direction(e, e.mixed, agg[0] + agg[1] + agg[2]);
  }
  out += sprintf_string(";%f%%;%f%%;%llu;%llu;%llu", 0.0, 0.0, 0ULL, 0ULL, 0ULL);  // no CPU figures
  // fio review 44: the terse fields lacked the 0.1 % floor the normal output has.
  for (const double pct : e.depth_bins.percentages()) out += sprintf_string(";%3.1f%%", pct);
  const std::uint64_t total = e.clat_bins.total();
  auto pct = [&](std::uint64_t n) {
    double v = total ? 100.0 * static_cast<double>(n) / static_cast<double>(total) : 0.0;
    return (v < 0.01 && n > 0) ? 0.01 : v;
  };
  std::uint64_t nsec = 0;  // stat.c stat_calc_lat_nu: the ns bins count in the first µs bin
  for (auto n : e.clat_bins.nsec) nsec += n;
  for (int i = 0; i < 10; ++i)
    out += sprintf_string(";%3.2f%%", pct(e.clat_bins.usec[i]) + (i == 0 && total ? 100.0 * static_cast<double>(nsec) / static_cast<double>(total) : 0.0));
  for (int i = 0; i < 12; ++i) out += sprintf_string(";%3.2f%%", pct(e.clat_bins.msec[i]));
  if (!e.description.empty()) out += ";" + e.description;
  return out + "\n";
}

}  // namespace

std::string format_terse(const RunReport& report) {
  const auto entries = aggregate_entries(report);
  const auto groups = summarize_groups(entries, report.job_file.group_count());
  std::string out;
  for (const ReportEntry& e : entries) out += terse_entry(e, groups[e.group_id]);
  return out;
}

}  // namespace afasim::workload
