// fio's JSON and json+ output (stat.c show_thread_status_json), from a RunReport.
#include "workload/fio_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "sim/assert.h"
#include "workload/fio_logs.h"
#include "workload/fio_report_internal.h"
#include "config/json_text.h"

namespace afasim::workload {

using namespace report_detail;

// --- JSON --------------------------------------------------------------------------------

namespace {

ordered_json latency_json(const sim::Histogram& h, const std::vector<double>* percentiles,
                          bool plus = false) {
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
    if (plus) {  // stat.c add_ddir_lat_json with FIO_OUTPUT_JSON_PLUS
      ordered_json bins = ordered_json::object();
      for (const auto& [value, count] : fio_plat_bins(h)) bins[std::to_string(value)] = count;
      j["bins"] = std::move(bins);
    }
  }
  return j;
}

ordered_json direction_json(const DirectionStats& ds, const ReportEntry& e,
                            std::uint64_t group_agg_bytes_per_second, bool plus) {
  const std::vector<double>& percentiles = e.percentile_list;
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
  j["slat_ns"] = latency_json(ds.slat_ns(), e.slat_percentiles ? &percentiles : nullptr, plus);
  j["clat_ns"] = latency_json(ds.clat_ns, e.clat_percentiles ? &percentiles : nullptr, plus);
  j["lat_ns"] = latency_json(ds.lat_ns(), e.lat_percentiles ? &percentiles : nullptr, plus);
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

// fio stat.c's "steadystate" object: the window's samples oldest first, padded with zeros to
// its length while it was not yet full (fio's buffer).
ordered_json steadystate_json(const SteadyStateResult& ss) {
  ordered_json j = ordered_json::object();
  j["ss"] = ss.criterion_name();
  j["duration"] = ss.spec.duration_s;
  j["attained"] = ss.attained ? 1 : 0;
  char criterion[64];
  std::snprintf(criterion, sizeof criterion, "%f%s", static_cast<float>(ss.criterion), ss.spec.percent ? "%" : "");
  j["criterion"] = criterion;
  j["max_deviation"] = ss.max_deviation;
  j["slope"] = ss.slope;
  ordered_json data = ordered_json::object();
  data["bw_mean"] = ss.bw_mean();
  data["iops_mean"] = ss.iops_mean();
  std::vector<std::uint64_t> iops(ss.iops.begin(), ss.iops.end()), bw(ss.bw.begin(), ss.bw.end());
  iops.resize(static_cast<std::size_t>(ss.spec.duration_s), 0);
  bw.resize(static_cast<std::size_t>(ss.spec.duration_s), 0);
  data["iops"] = iops;
  data["bw"] = bw;
  j["data"] = std::move(data);
  return j;
}

// `elapsed_s`: fio's elapsed, the whole run's time in seconds rounded up, the same for every
// job (eta.c: (mtime_since_genesis() + 999) / 1000; fio review 33: each job's own end, down).
ordered_json entry_json(const ReportEntry& e, const GroupSummary& group, bool plus, std::int64_t elapsed_s) {
  ordered_json j = ordered_json::object();
  j["jobname"] = e.name;
  j["groupid"] = e.group_id;
  j["error"] = e.error;
  j["eta"] = 0;
  j["elapsed"] = elapsed_s;
  const ordered_json options = options_json(e.options);
  if (!options.empty()) j["job options"] = options;
  const auto& agg = group.agg_bytes_per_second;
  if (e.unified == UnifiedReporting::kMixed) {  // stat.c: "mixed" instead of the directions
    j["mixed"] = direction_json(e.mixed, e, agg[0] + agg[1] + agg[2], plus);
  } else {
    j["read"] = direction_json(e.direction[0], e, agg[0], plus);
    j["write"] = direction_json(e.direction[1], e, agg[1], plus);
    j["trim"] = direction_json(e.direction[2], e, agg[2], plus);
    if (e.unified == UnifiedReporting::kBoth)
      j["mixed"] = direction_json(e.mixed, e, agg[0] + agg[1] + agg[2], plus);
  }
  ordered_json sync = ordered_json::object();
  sync["total_ios"] = e.sync.io_count;
  sync["lat_ns"] = latency_json(e.sync.lat_ns, &e.percentile_list, plus);
  j["sync"] = std::move(sync);
  j["job_runtime"] = e.run_ns / sim::kMillisecond;
  // The simulated host spends no CPU: fio's CPU fields, zero, so that scripts reading them work.
  j["usr_cpu"] = 0.0;
  j["sys_cpu"] = 0.0;
  j["ctx"] = 0;
  j["majf"] = 0;
  j["minf"] = 0;
  if (e.depth_bins.total() > 0) {
    ordered_json depth = ordered_json::object();
    static const char* kDepthKeys[] = {"1", "2", "4", "8", "16", "32", ">=64"};
    const auto pct = e.depth_bins.percentages();
    for (int i = 0; i < 7; ++i) depth[kDepthKeys[i]] = round6(pct[static_cast<std::size_t>(i)]);
    j["iodepth_level"] = std::move(depth);
    // One I/O per submission and per reaped completion: fio's bucket "4" (1 to 4) holds them all.
    for (const char* key : {"iodepth_submit", "iodepth_complete"}) {
      ordered_json batch = ordered_json::object();
      for (const char* bucket : {"0", "4", "8", "16", "32", "64", ">=64"}) batch[bucket] = std::string(bucket) == "4" ? 100.0 : 0.0;
      j[key] = std::move(batch);
    }
  }
  const std::uint64_t total = e.clat_bins.total();
  j["latency_ns"] = bins_json(e.clat_bins.nsec.data(), 10, total);
  j["latency_us"] = bins_json(e.clat_bins.usec.data(), 10, total);
  j["latency_ms"] = bins_json(e.clat_bins.msec.data(), 12, total);
  j["latency_depth"] = e.iodepth;
  j["latency_target"] = e.latency.target_ns;  // fio 3.33: ns (init.c multiplies by 1000)
  j["latency_percentile"] = e.latency.percentile;
  j["latency_window"] = e.latency.window_ns / sim::kMicrosecond;  // fio keeps µs
  if (e.steadystate) j["steadystate"] = steadystate_json(*e.steadystate);
  if (!e.description.empty()) j["desc"] = e.description;
  return j;
}

}  // namespace

ordered_json to_fio_json(const RunReport& report, bool plus) {
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
  sim::Time run_ns = 0;
  for (const JobResult& r : report.results) run_ns = std::max(run_ns, r.end_ns);
  const std::int64_t elapsed_s = (run_ns / sim::kMillisecond + 999) / 1000;
  for (const ReportEntry& e : entries) jobs.push_back(entry_json(e, groups[e.group_id], plus, elapsed_s));
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

std::string format_json(const RunReport& report, bool plus) {
  return config::dump_json(to_fio_json(report, plus), 2) + "\n";
}

}  // namespace afasim::workload
