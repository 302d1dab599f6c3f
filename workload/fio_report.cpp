#include "workload/fio_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "sim/assert.h"

namespace afasim::workload {
namespace {

using nlohmann::ordered_json;

// printf into a std::string (the formats are fio's own, from stat.c).
template <typename... Args>
std::string sprintf_string(const char* format, Args... args) {
  char buffer[512];
  const int n = std::snprintf(buffer, sizeof buffer, format, args...);
  AFASIM_ASSERT(n >= 0, "format error");
  if (static_cast<std::size_t>(n) < sizeof buffer)
    return std::string(buffer, static_cast<std::size_t>(n));
  std::string out(static_cast<std::size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, args...);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::size_t digits_of(std::uint64_t v) {
  return std::to_string(v).size();
}

// fio's stats use the sample standard deviation sqrt(S / (n − 1)); sim::Histogram keeps the
// population one. Same data, different divisor.
double sample_stddev(const sim::Histogram& h) {
  const auto n = static_cast<double>(h.count());
  if (h.count() < 2) return 0;
  return h.stddev() * std::sqrt(n / (n - 1));
}

// fio's "%f" keys ("99.990000") and 6-decimal floats; rounding here keeps the JSON text short
// and stable whatever the last bits of a double are.
double round6(double v) {
  return std::round(v * 1e6) / 1e6;
}

const char* kLatRanges[] = {"2",   "4",   "10",  "20",   "50",   "100",
                            "250", "500", "750", "1000", "2000", ">=2000"};

}  // namespace

// --- recording ---------------------------------------------------------------------------

void LatencyBins::record(sim::Time latency_ns) {
  AFASIM_ASSERT(latency_ns >= 0, "latency is non-negative");
  // stat.c io_u_mark_lat_{nsec,usec,msec}: the bin is the first edge above the value.
  static constexpr std::int64_t kEdges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
  auto bin = [](std::int64_t v) {
    int i = 0;
    while (i < 9 && v >= kEdges[i]) ++i;
    return i;
  };
  if (latency_ns < 1000) {
    ++nsec[bin(latency_ns)];
    return;
  }
  const std::int64_t us = latency_ns / 1000;
  if (us < 1000) {
    ++usec[bin(us)];
    return;
  }
  const std::int64_t ms = us / 1000;
  if (ms >= 2000) {
    ++msec[11];
  } else if (ms >= 1000) {
    ++msec[10];
  } else {
    ++msec[bin(ms)];
  }
}

void LatencyBins::merge(const LatencyBins& other) {
  for (std::size_t i = 0; i < nsec.size(); ++i) nsec[i] += other.nsec[i];
  for (std::size_t i = 0; i < usec.size(); ++i) usec[i] += other.usec[i];
  for (std::size_t i = 0; i < msec.size(); ++i) msec[i] += other.msec[i];
}

std::uint64_t LatencyBins::total() const {
  std::uint64_t t = 0;
  for (auto v : nsec) t += v;
  for (auto v : usec) t += v;
  for (auto v : msec) t += v;
  return t;
}

void DepthBins::record(int in_flight) {
  AFASIM_ASSERT(in_flight >= 1, "an I/O is in flight when it is submitted");
  int i = 0;
  while (i < 6 && in_flight >= (2 << i)) ++i;  // 1 | 2-3 | 4-7 | ... | 32-63 | >=64
  ++counts[i];
}

void DepthBins::merge(const DepthBins& other) {
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
}

std::uint64_t DepthBins::total() const {
  std::uint64_t t = 0;
  for (auto v : counts) t += v;
  return t;
}

void SampleStats::add(std::uint64_t value) {
  const double v = static_cast<double>(value);
  if (samples == 0) {
    min = max = value;
  } else {
    min = std::min(min, value);
    max = std::max(max, value);
  }
  ++samples;
  const double delta = v - mean;
  mean += delta / static_cast<double>(samples);
  sum_squared_deviations += delta * (v - mean);
}

void SampleStats::add_as_sum(const SampleStats& other) {
  if (other.samples == 0) return;
  if (samples == 0) {
    *this = other;
    return;
  }
  min += other.min;
  max += other.max;
  samples += other.samples;
  mean += other.mean;
  sum_squared_deviations += other.sum_squared_deviations;
}

double SampleStats::stddev() const {
  if (samples < 2) return 0;
  return std::sqrt(sum_squared_deviations / static_cast<double>(samples - 1));
}

void DirectionStats::record_io(std::int64_t bytes, sim::Time slat, sim::Time clat) {
  AFASIM_ASSERT(bytes > 0 && slat >= 0 && clat >= 0, "a completed I/O has bytes and latencies");
  ++io_count;
  io_bytes += static_cast<std::uint64_t>(bytes);
  slat_ns.record(slat);
  clat_ns.record(clat);
  lat_ns.record(slat + clat);
}

void DirectionStats::record_interval(std::int64_t bytes, std::int64_t ios, sim::Time interval) {
  AFASIM_ASSERT(interval > 0 && bytes >= 0 && ios >= 0, "an interval sample is non-negative");
  // fio stat.c add_bw_samples: KiB/s and IOPS as integers.
  const auto kib =
      static_cast<std::uint64_t>(static_cast<__int128>(bytes) * sim::kSecond / interval / 1024);
  const auto per_second =
      static_cast<std::uint64_t>(static_cast<__int128>(ios) * sim::kSecond / interval);
  bw_kib_per_second.add(kib);
  iops.add(per_second);
}

std::int64_t DirectionStats::runtime_ms() const {
  const std::int64_t ms = runtime_ns / sim::kMillisecond;
  return (ms == 0 && io_count > 0) ? 1 : ms;
}

void JobResult::record_io(Direction d, std::int64_t bytes, sim::Time slat, sim::Time clat) {
  direction[index_of(d)].record_io(bytes, slat, clat);
  clat_bins.record(clat);
}

// --- num2str -----------------------------------------------------------------------------

std::string fio_num2str(std::uint64_t num, int maxlen, int base, bool pow2, NumUnit unit) {
  static const char* kSi[] = {"", "k", "M", "G", "T", "P", "E"};
  static const char* kIec[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  static const char* kUnits[] = {"", "/s", "B", "bit", "B/s", "bit/s"};
  const char** prefix = pow2 ? kIec : kSi;
  const std::uint64_t thousand = pow2 ? 1024 : 1000;
  int post_index = 0;
  for (; base > 1; ++post_index) base /= static_cast<int>(thousand);
  if (unit == NumUnit::kBit || unit == NumUnit::kBitPerSecond) num *= 8;
  const char* unit_text = kUnits[static_cast<int>(unit)];

  std::uint64_t modulo = UINT64_MAX;  // fio: -1U, "no division happened"
  bool carry = false;
  while (post_index < 7) {
    if (digits_of(num) <= static_cast<std::size_t>(maxlen)) break;
    modulo = num % thousand;
    num /= thousand;
    carry = modulo >= thousand / 2;
    ++post_index;
  }
  if (post_index >= 7) post_index = 0;
  auto whole = [&] { return std::to_string(num) + prefix[post_index] + unit_text; };
  if (modulo == UINT64_MAX) return whole();
  const int room = maxlen - static_cast<int>(digits_of(num));
  if (room <= 1) {
    if (carry) ++num;
    return whole();
  }
  std::string fraction =
      sprintf_string("%.*f", room - 1, static_cast<double>(modulo) / static_cast<double>(thousand));
  if (fraction[0] == '1') ++num;  // "1.0": the fraction rounded up to a whole unit
  return std::to_string(num) + "." + fraction.substr(2) + prefix[post_index] + unit_text;
}

// --- aggregation -------------------------------------------------------------------------

namespace {

void add_direction(DirectionStats& into, const DirectionStats& from) {
  into.io_count += from.io_count;
  into.io_bytes += from.io_bytes;
  into.runtime_ns = std::max(into.runtime_ns, from.runtime_ns);  // fio: max over members
  into.slat_ns.merge(from.slat_ns);
  into.clat_ns.merge(from.clat_ns);
  into.lat_ns.merge(from.lat_ns);
  into.bw_kib_per_second.add_as_sum(from.bw_kib_per_second);
  into.iops.add_as_sum(from.iops);
  into.short_ios += from.short_ios;
  into.dropped_ios += from.dropped_ios;
}

}  // namespace

std::vector<ReportEntry> aggregate_entries(const RunReport& report) {
  std::vector<ReportEntry> entries;
  const auto& jobs = report.job_file.jobs;
  int last_group = -1;
  for (const JobResult& r : report.results) {
    AFASIM_ASSERT(r.job_index >= 0 && r.job_index < static_cast<int>(jobs.size()),
                  "a result names a job of the file");
    const FioJob& job = jobs[static_cast<std::size_t>(r.job_index)];
    AFASIM_ASSERT(r.clone >= 0 && r.clone < job.numjobs, "a result names a clone of its job");
    // stat.c __show_run_stats: a new entry unless group_reporting and the same group.
    const bool join = !entries.empty() && job.group_reporting && last_group == job.group_id;
    last_group = job.group_id;
    if (!join) {
      ReportEntry e;
      e.name = job.name;
      e.description = job.description;
      e.group_id = job.group_id;
      e.rw = job.rw;
      e.percentile_list = job.percentile_list;
      entries.push_back(std::move(e));
    }
    ReportEntry& e = entries.back();
    ++e.members;
    e.iodepth = job.iodepth;
    e.options = job.options;
    for (int d = 0; d < kDirections; ++d) add_direction(e.direction[d], r.direction[d]);
    e.clat_bins.merge(r.clat_bins);
    e.sync.io_count += r.sync.io_count;
    e.sync.lat_ns.merge(r.sync.lat_ns);
    e.depth_bins.merge(r.depth_bins);
    e.run_ns += r.end_ns - r.start_ns;
    e.end_ns = std::max(e.end_ns, r.end_ns);
    if (e.error == 0 && r.error != 0) {
      e.error = r.error;
      e.error_message = r.error_message;
    }
  }
  return entries;
}

std::vector<GroupSummary> summarize_groups(const std::vector<ReportEntry>& entries,
                                           int group_count) {
  std::vector<GroupSummary> groups(static_cast<std::size_t>(std::max(group_count, 0)));
  for (int g = 0; g < group_count; ++g) groups[g].group_id = g;
  for (const ReportEntry& e : entries) {
    AFASIM_ASSERT(e.group_id >= 0 && e.group_id < group_count, "entry group in range");
    GroupSummary& gs = groups[static_cast<std::size_t>(e.group_id)];
    for (int d = 0; d < kDirections; ++d) {
      const DirectionStats& ds = e.direction[d];
      if (ds.io_count == 0 && ds.runtime_ns == 0) continue;
      const std::int64_t run = ds.runtime_ms();
      if (run == 0) continue;
      const auto bw = static_cast<std::uint64_t>(static_cast<__int128>(ds.io_bytes) * 1000 / run);
      const bool first = gs.max_run_ms[d] == 0;
      gs.min_run_ms[d] = first ? run : std::min(gs.min_run_ms[d], run);
      gs.max_run_ms[d] = std::max(gs.max_run_ms[d], run);
      gs.min_bytes_per_second[d] = first ? bw : std::min(gs.min_bytes_per_second[d], bw);
      gs.max_bytes_per_second[d] = std::max(gs.max_bytes_per_second[d], bw);
      gs.io_bytes[d] += ds.io_bytes;
    }
  }
  for (auto& gs : groups) {
    for (int d = 0; d < kDirections; ++d) {
      if (gs.max_run_ms[d] == 0) continue;
      gs.agg_bytes_per_second[d] = static_cast<std::uint64_t>(
          static_cast<__int128>(gs.io_bytes[d]) * 1000 / gs.max_run_ms[d]);
    }
  }
  return groups;
}

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

// Digits after the point needed to print every percentile of the list exactly (fio counts
// them while parsing percentile_list; 2 for the default list).
int percentile_precision(const std::vector<double>& list) {
  int precision = 0;
  for (double p : list) {
    int d = 0;
    while (d < 6 && std::fabs(p * std::pow(10.0, d) - std::round(p * std::pow(10.0, d))) > 1e-6)
      ++d;
    precision = std::max(precision, d);
  }
  return precision;
}

// stat.c show_clat_percentiles.
std::string percentile_block(const sim::Histogram& h, const std::vector<double>& list) {
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
    out = "    clat percentiles (msec):\n     |";
  } else if (minv > 2000 && maxv > 99999) {
    scale_down = 1;
    divisor = 1000;
    out = "    clat percentiles (usec):\n     |";
  } else {
    out = "    clat percentiles (nsec):\n     |";
  }
  const int precision = percentile_precision(list);
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

std::string direction_block(const ReportEntry& e, Direction d, const GroupSummary& group) {
  const DirectionStats& ds = e.direction[index_of(d)];
  const std::int64_t runt = ds.runtime_ms();
  if (runt == 0 || ds.io_bytes == 0) return {};
  const auto bw = static_cast<std::uint64_t>(static_cast<__int128>(ds.io_bytes) * 1000 / runt);
  const auto iops = static_cast<std::uint64_t>(static_cast<__int128>(ds.io_count) * 1000 / runt);
  std::string out =
      sprintf_string("  %s: IOPS=%s, BW=%s (%s)(%s/%llumsec)\n", std::string(to_string(d)).c_str(),
                     fio_num2str(iops, 4, 1, false, NumUnit::kNone).c_str(),
                     fio_num2str(bw, 4, 1, true, NumUnit::kBytePerSecond).c_str(),
                     fio_num2str(bw, 4, 1, false, NumUnit::kBytePerSecond).c_str(),
                     fio_num2str(ds.io_bytes, 4, 1, true, NumUnit::kByte).c_str(),
                     static_cast<unsigned long long>(runt));
  if (ds.slat_ns.count() > 0) out += latency_line("slat", ds.slat_ns);
  if (ds.clat_ns.count() > 0) out += latency_line("clat", ds.clat_ns);
  if (ds.lat_ns.count() > 0) out += latency_line(" lat", ds.lat_ns);
  out += percentile_block(ds.clat_ns, e.percentile_list);
  out += sample_lines(ds, group.agg_bytes_per_second[index_of(d)]);
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
  out += direction_block(e, Direction::kRead, group);
  out += direction_block(e, Direction::kWrite, group);
  out += direction_block(e, Direction::kTrim, group);
  const std::uint64_t total = e.clat_bins.total();
  if (total > 0) {
    out += latency_bin_lines(e.clat_bins.nsec.data(), 10, "nsec", total);
    out += latency_bin_lines(e.clat_bins.usec.data(), 10, "usec", total);
    out += latency_bin_lines(e.clat_bins.msec.data(), 12, "msec", total);
  }
  const std::uint64_t depth_total = e.depth_bins.total();
  if (depth_total > 0) {
    double pct[7];
    for (int i = 0; i < 7; ++i) {
      pct[i] =
          100.0 * static_cast<double>(e.depth_bins.counts[i]) / static_cast<double>(depth_total);
      if (pct[i] < 0.1 && e.depth_bins.counts[i] > 0) pct[i] = 0.1;
    }
    out += sprintf_string(
        "  IO depths    : 1=%3.1f%%, 2=%3.1f%%, 4=%3.1f%%, 8=%3.1f%%, 16=%3.1f%%, 32=%3.1f%%, "
        ">=64=%3.1f%%\n",
        pct[0], pct[1], pct[2], pct[3], pct[4], pct[5], pct[6]);
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
  out += sprintf_string("     latency   : target=0, window=0, percentile=100.00%%, depth=%d\n",
                        e.iodepth);
  return out;
}

// stat.c show_group_stats.
std::string group_block(const GroupSummary& gs) {
  std::string out = sprintf_string("\nRun status group %d (all jobs):\n", gs.group_id);
  static const char* kNames[] = {"   READ", "  WRITE"};
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

// --- JSON --------------------------------------------------------------------------------

namespace {

ordered_json latency_json(const sim::Histogram& h, const std::vector<double>* percentiles) {
  ordered_json j = ordered_json::object();
  j["min"] = h.count() ? h.min() : 0;
  j["max"] = h.count() ? h.max() : 0;
  j["mean"] = round6(h.mean());
  j["stddev"] = round6(sample_stddev(h));
  j["N"] = h.count();
  if (percentiles != nullptr && h.count() > 0) {
    ordered_json p = ordered_json::object();
    for (double q : *percentiles) p[sprintf_string("%f", q)] = h.percentile(q);
    j["percentile"] = std::move(p);
  }
  return j;
}

ordered_json direction_json(const DirectionStats& ds, const std::vector<double>& percentiles,
                            std::uint64_t group_agg_bytes_per_second) {
  const std::int64_t runt = ds.io_count > 0 || ds.runtime_ns > 0 ? ds.runtime_ms() : 0;
  std::uint64_t bw_bytes = 0;
  double iops = 0;
  if (runt > 0) {
    bw_bytes = static_cast<std::uint64_t>(static_cast<__int128>(ds.io_bytes) * 1000 / runt);
    iops = 1000.0 * static_cast<double>(ds.io_count) / static_cast<double>(runt);
  }
  ordered_json j = ordered_json::object();
  j["io_bytes"] = ds.io_bytes;
  j["io_kbytes"] = ds.io_bytes >> 10;
  j["bw_bytes"] = bw_bytes;
  j["bw"] = bw_bytes / 1024;  // KiB/s
  j["iops"] = round6(iops);
  j["runtime"] = runt;
  j["total_ios"] = ds.io_count;
  j["short_ios"] = ds.short_ios;
  j["drop_ios"] = ds.dropped_ios;
  j["slat_ns"] = latency_json(ds.slat_ns, nullptr);
  j["clat_ns"] = latency_json(ds.clat_ns, &percentiles);
  j["lat_ns"] = latency_json(ds.lat_ns, nullptr);
  const SampleStats& bw = ds.bw_kib_per_second;
  double per = 0;
  if (bw.samples > 0) {
    per = 100.0;
    if (group_agg_bytes_per_second > 1024) {
      per = std::min(100.0,
                     bw.mean * 100.0 / (static_cast<double>(group_agg_bytes_per_second) / 1024.0));
    }
  }
  j["bw_min"] = bw.min;
  j["bw_max"] = bw.max;
  j["bw_agg"] = round6(per);
  j["bw_mean"] = round6(bw.mean);
  j["bw_dev"] = round6(bw.stddev());
  j["bw_samples"] = bw.samples;
  j["iops_min"] = ds.iops.min;
  j["iops_max"] = ds.iops.max;
  j["iops_mean"] = round6(ds.iops.mean);
  j["iops_stddev"] = round6(ds.iops.stddev());
  j["iops_samples"] = ds.iops.samples;
  return j;
}

ordered_json options_json(const std::vector<WrittenOption>& options) {
  ordered_json j = ordered_json::object();
  // fio's json_add_job_opts: one key per option (a later one replaces an earlier one); bare
  // options (no '=') carry no value and are left out, as fio 3.33 does.
  for (const WrittenOption& o : options) {
    if (o.has_value) j[o.name] = o.value;
  }
  return j;
}

ordered_json bins_json(const std::uint64_t* bins, int count, std::uint64_t total) {
  ordered_json j = ordered_json::object();
  for (int i = 0; i < count; ++i) {
    double pct = total ? 100.0 * static_cast<double>(bins[i]) / static_cast<double>(total) : 0;
    if (pct < 0.01 && bins[i] > 0) pct = 0.01;
    j[kLatRanges[i]] = round6(pct);
  }
  return j;
}

ordered_json entry_json(const ReportEntry& e, const GroupSummary& group) {
  ordered_json j = ordered_json::object();
  j["jobname"] = e.name;
  j["groupid"] = e.group_id;
  j["error"] = e.error;
  j["eta"] = 0;
  j["elapsed"] = e.end_ns / sim::kSecond;
  const ordered_json options = options_json(e.options);
  if (!options.empty()) j["job options"] = options;
  j["read"] = direction_json(e.direction[0], e.percentile_list, group.agg_bytes_per_second[0]);
  j["write"] = direction_json(e.direction[1], e.percentile_list, group.agg_bytes_per_second[1]);
  j["trim"] = direction_json(e.direction[2], e.percentile_list, group.agg_bytes_per_second[2]);
  ordered_json sync = ordered_json::object();
  sync["total_ios"] = e.sync.io_count;
  sync["lat_ns"] = latency_json(e.sync.lat_ns, &e.percentile_list);
  j["sync"] = std::move(sync);
  j["job_runtime"] = e.run_ns / sim::kMillisecond;
  const std::uint64_t depth_total = e.depth_bins.total();
  if (depth_total > 0) {
    ordered_json depth = ordered_json::object();
    static const char* kDepthKeys[] = {"1", "2", "4", "8", "16", "32", ">=64"};
    for (int i = 0; i < 7; ++i) {
      double pct =
          100.0 * static_cast<double>(e.depth_bins.counts[i]) / static_cast<double>(depth_total);
      if (pct < 0.1 && e.depth_bins.counts[i] > 0) pct = 0.1;
      depth[kDepthKeys[i]] = round6(pct);
    }
    j["iodepth_level"] = std::move(depth);
  }
  const std::uint64_t total = e.clat_bins.total();
  j["latency_ns"] = bins_json(e.clat_bins.nsec.data(), 10, total);
  j["latency_us"] = bins_json(e.clat_bins.usec.data(), 10, total);
  j["latency_ms"] = bins_json(e.clat_bins.msec.data(), 12, total);
  j["latency_depth"] = e.iodepth;
  j["latency_target"] = 0;
  j["latency_percentile"] = 100.0;
  j["latency_window"] = 0;
  if (!e.description.empty()) j["desc"] = e.description;
  return j;
}

}  // namespace

ordered_json to_fio_json(const RunReport& report) {
  const FioJobFile& file = report.job_file;
  ordered_json root = ordered_json::object();
  root["fio version"] = "fio-3.33";
  // Virtual time starts at the Unix epoch: fio's wall-clock stamps become constants.
  root["timestamp"] = 0;
  root["timestamp_ms"] = 0;
  root["time"] = "Thu Jan  1 00:00:00 1970";
  const ordered_json globals = options_json(file.global_options);
  if (!globals.empty()) root["global options"] = globals;
  const auto entries = aggregate_entries(report);
  const auto groups = summarize_groups(entries, file.group_count());
  ordered_json jobs = ordered_json::array();
  for (const ReportEntry& e : entries) jobs.push_back(entry_json(e, groups[e.group_id]));
  root["jobs"] = std::move(jobs);
  root["disk_util"] = ordered_json::array();

  ordered_json afasim = ordered_json::object();
  afasim["version"] = report.afasim_version;
  afasim["emulates"] = "fio-3.33 json output";
  afasim["system"] = report.system;
  afasim["seed"] = report.seed;
  afasim["job_file"] = file.file_name;
  ordered_json ignored = ordered_json::array();
  for (const IgnoredOption& ig : file.ignored) {
    ordered_json o = ordered_json::object();
    o["section"] = ig.section;
    o["line"] = ig.option.line;
    o["option"] = ig.option.name;
    o["value"] = ig.option.value;
    o["reason"] = ig.reason;
    ignored.push_back(std::move(o));
  }
  afasim["ignored_options"] = std::move(ignored);
  afasim["warnings"] = file.warnings;
  ordered_json volumes = ordered_json::array();
  for (const FioVolume& v : file.volumes) {
    ordered_json o = ordered_json::object();
    o["name"] = v.name;
    o["size_bytes"] = v.size_bytes;
    volumes.push_back(std::move(o));
  }
  afasim["volumes"] = std::move(volumes);
  if (report.afasim_extra.is_object()) {
    for (auto it = report.afasim_extra.begin(); it != report.afasim_extra.end(); ++it) {
      afasim[it.key()] = it.value();
    }
  }
  root["afasim"] = std::move(afasim);
  return root;
}

std::string format_json(const RunReport& report) {
  return to_fio_json(report).dump(2) + "\n";
}

}  // namespace afasim::workload
