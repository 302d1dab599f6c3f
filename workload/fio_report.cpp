#include "workload/fio_report.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "config/file_text.h"
#include "sim/assert.h"
#include "workload/fio_report_internal.h"

namespace afasim::workload {

using namespace report_detail;

// --- recording ---------------------------------------------------------------------------

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

void DepthBins::merge(const DepthBins& other) {
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
}

std::uint64_t DepthBins::total() const {
  std::uint64_t t = 0;
  for (auto v : counts) t += v;
  return t;
}

std::array<double, 7> DepthBins::percentages() const {
  std::array<double, 7> pct{};
  const std::uint64_t all = total();
  if (all == 0) return pct;
  for (std::size_t i = 0; i < pct.size(); ++i) {
    pct[i] = 100.0 * static_cast<double>(counts[i]) / static_cast<double>(all);
    if (pct[i] < 0.1 && counts[i] > 0) pct[i] = 0.1;
  }
  return pct;
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

void SampleStats::add_zeros(std::uint64_t count) {
  if (count == 0) return;
  if (samples == 0) {
    *this = SampleStats{};
    samples = count;
    return;
  }
  min = 0;
  const double n_a = static_cast<double>(samples), n_b = static_cast<double>(count), n = n_a + n_b;
  const double delta = -mean;  // the zeros' mean less this mean
  mean += delta * n_b / n;
  sum_squared_deviations += delta * delta * n_a * n_b / n;
  samples += count;
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

void DirectionStats::split_slat() {
  slat_ = sim::Histogram();
  slat_.record_n(0, clat_ns.count());
  lat_ = clat_ns;
  slat_zero_ = false;
}

sim::Histogram DirectionStats::slat_ns() const {
  if (!slat_zero_) return slat_;
  sim::Histogram zeros;
  zeros.record_n(0, clat_ns.count());
  return zeros;
}

void DirectionStats::add(const DirectionStats& other) {
  io_count += other.io_count;
  io_bytes += other.io_bytes;
  runtime_ns = std::max(runtime_ns, other.runtime_ns);  // fio: max over members
  if (!other.slat_zero_ && slat_zero_) split_slat();
  if (!slat_zero_) {
    slat_.merge(other.slat_ns());
    lat_.merge(other.lat_ns());
  }
  clat_ns.merge(other.clat_ns);
  bw_kib_per_second.add_as_sum(other.bw_kib_per_second);
  iops.add_as_sum(other.iops);
  short_ios += other.short_ios;
  dropped_ios += other.dropped_ios;
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

void DirectionStats::record_idle_intervals(std::int64_t count) {
  AFASIM_ASSERT(count >= 0, "a count of intervals is non-negative");
  bw_kib_per_second.add_zeros(static_cast<std::uint64_t>(count));
  iops.add_zeros(static_cast<std::uint64_t>(count));
}

std::int64_t DirectionStats::runtime_ms() const {
  const std::int64_t ms = runtime_ns / sim::kMillisecond;
  return (ms == 0 && io_count > 0) ? 1 : ms;
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
      e.percentile_precision = job.percentile_precision;
      entries.push_back(std::move(e));
    }
    ReportEntry& e = entries.back();
    ++e.members;
    e.iodepth = r.latency_depth > 0 ? r.latency_depth : job.iodepth;
    e.latency = job.latency;
    e.options = job.options;
    e.significant_figures = job.significant_figures;
    e.clat_percentiles = job.clat_percentiles;
    e.lat_percentiles = job.lat_percentiles;
    e.slat_percentiles = job.slat_percentiles;
    e.unified = job.unified_rw_reporting;
    for (int d = 0; d < kDirections; ++d) e.direction[d].add(r.direction[d]);
    e.clat_bins.merge(r.clat_bins);
    e.sync.io_count += r.sync.io_count;
    e.sync.lat_ns.merge(r.sync.lat_ns);
    e.depth_bins.merge(r.depth_bins);
    // fio's total_run_time runs from the epoch, which the end of ramp_time resets
    // (reset_all_stats): a clone that outlived its ramp counts from there.
    e.run_ns += r.end_ns - (r.end_ns > r.measure_from_ns ? std::max(r.start_ns, r.measure_from_ns) : r.start_ns);
    e.end_ns = std::max(e.end_ns, r.end_ns);
    if (r.steadystate) e.steadystate = r.steadystate;
    if (e.error == 0 && r.error != 0) {
      e.error = r.error;
      e.error_message = r.error_message;
    }
  }
  for (ReportEntry& e : entries) {
    if (e.unified == UnifiedReporting::kNone) continue;
    for (const DirectionStats& ds : e.direction) e.mixed.add(ds);  // stat.c unified
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

sim::Result<std::vector<OutputFormat>> parse_output_formats(std::string_view text) {
  std::vector<OutputFormat> formats;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view name = text.substr(start, comma - start);
    OutputFormat f;
    if (name == "normal")
      f = OutputFormat::kNormal;
    else if (name == "terse")
      f = OutputFormat::kTerse;
    else if (name == "json")
      f = OutputFormat::kJson;
    else if (name == "json+")
      f = OutputFormat::kJsonPlus;
    else
      return sim::invalid_argument("\"" + std::string(name) +
                                   "\" is not an output format (normal, terse, json, json+)");
    if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
    start = comma + 1;
  }
  return formats;
}

std::string format_report(const RunReport& report, const std::vector<OutputFormat>& formats) {
  auto has = [&](OutputFormat f) { return std::find(formats.begin(), formats.end(), f) != formats.end(); };
  // The text forms quote a job's name and description as written: without their control
  // characters (hostile round 23; JSON escapes its own).
  std::string out;
  if (has(OutputFormat::kTerse)) out += config::printable(format_terse(report), true);
  if (has(OutputFormat::kJsonPlus))
    out += format_json(report, true);
  else if (has(OutputFormat::kJson))
    out += format_json(report, false);
  if (has(OutputFormat::kNormal)) out += config::printable(format_normal(report), true);
  return out;
}

}  // namespace afasim::workload
