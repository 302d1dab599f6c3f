// Results of an fio run in virtual time, and the two ways fio prints them.
//
// The engine fills one JobResult per clone (fio's per-thread stats) as I/Os complete. The
// formatters then aggregate exactly as fio's stat.c does (one report per clone, or one per
// reporting group with group_reporting; the "Run status group" summaries) and print:
//  - format_normal(): fio's human output (`read: IOPS=…, BW=…MiB/s (…MB/s)(…/…msec)`,
//    slat/clat/lat lines, the clat percentile block, latency bins, the group summaries),
//    number formatting ported from fio's num2str so the same counts print the same text;
//  - format_json(): `--output-format=json` with fio 3.33's field names and layout for what
//    afasim reports (jobs[].read.iops, .bw, .clat_ns.percentile["99.000000"], ...), plus an
//    "afasim" object for what fio has no field for.
// Both are byte-deterministic: no wall clock (fio's timestamps become the Unix epoch, the
// start of virtual time), no pids, no pointers, fixed ordering.
// Differences from fio: percentiles come from sim::Histogram buckets (within 0.4 % of the
// exact sample; fio's own buckets have a similar error); CPU, disk_util contents and the
// submit/complete depth histograms are not reported. See docs/workloads.md.
// Not thread-safe: values owned by the model thread; formatting is a pure function.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/assert.h"
#include "sim/histogram.h"
#include "sim/status.h"
#include "sim/time.h"
#include "workload/fio_job.h"

namespace afasim::workload {

// fio's completion-latency distribution bins (stat.c io_u_lat_n/u/m): for each unit, the
// count of latencies below each edge and at or above the previous one. The edges are
// 2 4 10 20 50 100 250 500 750 1000 for ns and for µs, and the same plus 2000 and ">=2000"
// for ms.
struct LatencyBins {
  std::array<std::uint64_t, 10> nsec{};
  std::array<std::uint64_t, 10> usec{};
  std::array<std::uint64_t, 12> msec{};

  // REQUIRES: latency_ns >= 0.
  void record(sim::Time latency_ns);
  void merge(const LatencyBins& other);
  std::uint64_t total() const;
};

// fio's I/O depth distribution (io_u_map): the number of I/Os in flight when each I/O was
// submitted, counted in bins 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64.
struct DepthBins {
  std::array<std::uint64_t, 7> counts{};
  void record(int in_flight);  // REQUIRES: in_flight >= 1
  void merge(const DepthBins& other);
  std::uint64_t total() const;
  // Each bin's share in percent, a non-empty bin's at least 0.1 (stat.c stat_calc_dist, which
  // the normal, terse and JSON outputs share); all 0 when no I/O was counted.
  std::array<double, 7> percentages() const;
};

// Statistics of periodic samples (fio's bw and iops samples): min, max, mean, sample stddev.
struct SampleStats {
  std::uint64_t samples = 0;
  std::uint64_t min = 0;
  std::uint64_t max = 0;
  double mean = 0;
  double sum_squared_deviations = 0;  // Welford's S

  void add(std::uint64_t value);
  // `count` samples of 0 at once (an idle spell's intervals): Chan et al.'s pairwise update
  // of the mean and S, equal to `count` add(0) calls up to rounding, in O(1).
  void add_zeros(std::uint64_t count);
  // fio's group_reporting sum (stat.c sum_stat with pure_sum): min, max, mean and S add up,
  // so the group's figures describe the summed bandwidth of its members.
  void add_as_sum(const SampleStats& other);
  double stddev() const;  // sqrt(S / (n − 1)); 0 with fewer than two samples
};

// One data direction of one clone (fio thread_stat, one ddir). Latencies in ns.
// Aligned to a cache line, with what record_io touches (the counts, slat_zero_ and clat_ns's
// own fields) in the first two: each completion finds a clone's stats cold.
struct alignas(64) DirectionStats {
  std::uint64_t io_count = 0;     // completed I/Os (fio total_ios)
  std::uint64_t io_bytes = 0;     // completed bytes
  sim::Time runtime_ns = 0;       // how long this direction ran, ramp_time excluded

 private:
  bool slat_zero_ = true;  // every slat so far was 0: slat_ and lat_ are not kept

 public:
  sim::Histogram clat_ns;         // completion: accepted → completed
  SampleStats bw_kib_per_second;  // one sample per interval (fio default interval: 500 ms)
  SampleStats iops;
  std::uint64_t short_ios = 0;
  std::uint64_t dropped_ios = 0;

  // Counts one completed I/O. REQUIRES: bytes > 0, slat_ns >= 0, clat_ns >= 0.
  void record_io(std::int64_t bytes, sim::Time slat_ns, sim::Time clat_ns);
  // Submission latency (created → accepted by the array) and total latency (slat + clat).
  // The fio engine submits each I/O at once (slat 0): while every slat is 0, the slat
  // distribution is that many zeros and lat's is clat's, and neither is recorded apart (two
  // histogram updates less per simulated I/O); the first slat above 0 starts recording both.
  sim::Histogram slat_ns() const;
  const sim::Histogram& lat_ns() const { return slat_zero_ ? clat_ns : lat_; }
  // Adds `other`'s I/Os and samples (fio's group_reporting and unified_rw_reporting sums).
  void add(const DirectionStats& other);
  // Adds one bandwidth and one IOPS sample for an interval in which `bytes` and `ios`
  // completed. REQUIRES: interval_ns > 0, bytes >= 0, ios >= 0.
  void record_interval(std::int64_t bytes, std::int64_t ios, sim::Time interval_ns);
  // `count` intervals in which nothing completed (record_interval(0, 0, ...) `count` times).
  void record_idle_intervals(std::int64_t count);
  // fio's runtime in ms (integer, at least 1 when anything completed).
  std::int64_t runtime_ms() const;

 private:
  // Starts recording slat and lat apart (the zeros and clat's samples so far first).
  void split_slat();
  sim::Histogram slat_;
  sim::Histogram lat_;
};

// fio's sync statistics (fsync / fdatasync flushes): count and latency.
struct SyncStats {
  std::uint64_t io_count = 0;
  sim::Histogram lat_ns;
  void record(sim::Time latency_ns) {
    ++io_count;
    lat_ns.record(latency_ns);
  }
};

// What the engine records for one clone of one job. Aligned to a cache line, the depth bins
// (every submission) in the first with the indices, each direction's hot fields in the next two.
struct alignas(64) JobResult {
  int job_index = 0;                                  // FioJob::job_index
  int clone = 0;                                      // 0..numjobs-1
  DepthBins depth_bins;       // optional: left empty, the report omits I/O depths
  std::array<DirectionStats, kDirections> direction;  // index_of(Direction)
  LatencyBins clat_bins;                              // completion latencies of all directions
  SyncStats sync;             // flushes (fsync=, fdatasync=)
  sim::Time start_ns = 0;     // virtual time the clone started (after startdelay)
  sim::Time measure_from_ns = 0;  // when its ramp_time ended (start_ns without one)
  sim::Time end_ns = 0;       // virtual time it finished
  int error = 0;              // 0, or an errno value (EIO, ENOSPC, ...) that stopped the clone
  std::string error_message;  // fio's verror, when error != 0
  std::optional<SteadyStateResult> steadystate;  // the job's steadystate_duration, if any
  int latency_depth = 0;  // latency_target's depth at the end (fio's latency_qd); 0: none

  // Counts one completed I/O in its direction and in clat_bins.
  void record_io(Direction d, std::int64_t bytes, sim::Time slat_ns, sim::Time clat_ns);
};

// The recorders every I/O calls, here so that the engine's completion inlines them (a call
// each cost ~8 instructions a read).

namespace report_recording {

// stat.c io_u_mark_lat_{nsec,usec,msec}: the bin of a value under 1,000 (of ns, of µs, of ms)
// is the first edge above it, 9 past the last edge. A table of all 1,000 answers: the scan of
// the edges cost ~20 instructions per I/O.
inline constexpr std::array<std::uint8_t, 1000> kLatencyBinOf = [] {
  constexpr std::int64_t kEdges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
  std::array<std::uint8_t, 1000> bins{};
  for (std::int64_t v = 0; v < 1000; ++v) {
    std::uint8_t i = 0;
    while (i < 9 && v >= kEdges[i]) ++i;
    bins[static_cast<std::size_t>(v)] = i;
  }
  return bins;
}();

}  // namespace report_recording

inline void LatencyBins::record(sim::Time latency_ns) {
  using report_recording::kLatencyBinOf;
  AFASIM_ASSERT(latency_ns >= 0, "latency is non-negative");
  if (latency_ns < 1000) {
    ++nsec[kLatencyBinOf[static_cast<std::size_t>(latency_ns)]];
    return;
  }
  const std::int64_t us = latency_ns / 1000;
  if (us < 1000) {
    ++usec[kLatencyBinOf[static_cast<std::size_t>(us)]];
    return;
  }
  const std::int64_t ms = us / 1000;
  if (ms >= 2000) {
    ++msec[11];
  } else if (ms >= 1000) {
    ++msec[10];
  } else {
    ++msec[kLatencyBinOf[static_cast<std::size_t>(ms)]];
  }
}

inline void DepthBins::record(int in_flight) {
  AFASIM_ASSERT(in_flight >= 1, "an I/O is in flight when it is submitted");
  // 1 | 2-3 | 4-7 | ... | 32-63 | >=64 (fio io_u.c io_u_mark_depth)
  ++counts[std::min<std::size_t>(6, std::bit_width(static_cast<unsigned>(in_flight)) - 1)];
}

inline void DirectionStats::record_io(std::int64_t bytes, sim::Time slat, sim::Time clat) {
  AFASIM_ASSERT(bytes > 0 && slat >= 0 && clat >= 0, "a completed I/O has bytes and latencies");
  ++io_count;
  io_bytes += static_cast<std::uint64_t>(bytes);
  if (slat != 0 && slat_zero_) split_slat();
  clat_ns.record(clat);
  if (!slat_zero_) {
    slat_.record(slat);
    lat_.record(slat + clat);
  }
}

inline void JobResult::record_io(Direction d, std::int64_t bytes, sim::Time slat, sim::Time clat) {
  direction[index_of(d)].record_io(bytes, slat, clat);
  clat_bins.record(clat);
}

// Everything a report needs.
struct RunReport {
  FioJobFile job_file;
  std::vector<JobResult> results;  // one per clone: job order, then clone order
  std::string system;              // the preset the array was built from, "ise-860-g3"
  std::uint64_t seed = 0;
  std::string afasim_version = "0.1.0";
  bool interrupted = false;  // FioRunOptions::interrupted stopped the run: the report is of what ran
  // Extra afasim facts for the JSON "afasim" object (volumes, faults, ...); an object.
  nlohmann::ordered_json afasim_extra = nlohmann::ordered_json::object();
};

// One printed block: a clone, or a whole reporting group with group_reporting (stat.c
// __show_run_stats: consecutive clones of one group with group_reporting are summed).
struct ReportEntry {
  std::string name;  // the first member's job name
  std::string description;
  int group_id = 0;
  int members = 0;  // fio's "jobs="
  int iodepth = 1;  // the last member's, fio's latency_depth (latency_target's depth)
  LatencyTargetSpec latency;  // the last member's latency_target= etc. (fio copies them so)
  RwPattern rw = RwPattern::kRead;
  std::array<DirectionStats, kDirections> direction;
  LatencyBins clat_bins;
  SyncStats sync;
  DepthBins depth_bins;
  sim::Time run_ns = 0;  // sum of the members' end − epoch (fio total_run_time: ramp_time excluded)
  sim::Time end_ns = 0;  // latest member end
  int error = 0;
  std::string error_message;
  std::vector<double> percentile_list;
  int percentile_precision = 2;  // FioJob::percentile_precision
  std::vector<WrittenOption> options;  // the last member's own options (fio's opt_lists)
  // The last member's reporting switches (fio's thread_stat copies them the same way).
  int significant_figures = 4;
  bool clat_percentiles = true;
  bool lat_percentiles = false;
  bool slat_percentiles = false;
  UnifiedReporting unified = UnifiedReporting::kNone;
  DirectionStats mixed;  // every direction summed, when unified != kNone
  std::optional<SteadyStateResult> steadystate;  // the last member's (a group's is shared)
};

// A reporting group's summary line inputs (stat.c group_run_stats), per direction.
struct GroupSummary {
  int group_id = 0;
  std::array<std::uint64_t, kDirections> io_bytes{};
  std::array<std::uint64_t, kDirections> agg_bytes_per_second{};  // io_bytes ÷ max_run
  std::array<std::uint64_t, kDirections> min_bytes_per_second{};
  std::array<std::uint64_t, kDirections> max_bytes_per_second{};
  std::array<std::int64_t, kDirections> min_run_ms{};
  std::array<std::int64_t, kDirections> max_run_ms{};  // 0: the direction did not run
};

// fio's aggregation. REQUIRES: every result names a job and clone of report.job_file.
std::vector<ReportEntry> aggregate_entries(const RunReport& report);
std::vector<GroupSummary> summarize_groups(const std::vector<ReportEntry>& entries,
                                           int group_count);

// fio's output formats (--output-format); several may be given, fio prints them in this
// order: terse, json (json+ is json with the latency bins), normal.
enum class OutputFormat { kTerse, kJson, kJsonPlus, kNormal };
// "normal", "terse", "json", "json+", or several separated by ',' ("normal,json"). Error:
// kInvalidArgument naming the unknown one.
sim::Result<std::vector<OutputFormat>> parse_output_formats(std::string_view text);
// The report in each format asked for, concatenated in fio's order.
std::string format_report(const RunReport& report, const std::vector<OutputFormat>& formats);

std::string format_normal(const RunReport& report);
// fio's terse format, version 3 (stat.c show_thread_status_terse_all): one ';'-separated line
// per report entry, 130 fields; CPU and disk figures are 0 (not simulated).
std::string format_terse(const RunReport& report);
// `plus`: json+ — each latency object with percentiles also gets fio's "bins" (bin value in
// ns → count, non-empty bins), so fio_jsonplus_clat2csv reads it.
nlohmann::ordered_json to_fio_json(const RunReport& report, bool plus = false);
std::string format_json(const RunReport& report, bool plus = false);  // 2-space indent, newline

// fio lib/num2str.c: `num` × base in at most `maxlen` digits (counting the '.'), with an SI
// (pow2 = false: k M G ...) or IEC (Ki Mi Gi ...) prefix and a unit suffix; fio's rounding
// ("carry") included. Exposed for tests.
enum class NumUnit { kNone, kPerSecond, kByte, kBit, kBytePerSecond, kBitPerSecond };
std::string fio_num2str(std::uint64_t num, int maxlen, int base, bool pow2, NumUnit unit);

}  // namespace afasim::workload
