#include "workload/calibration.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "controller/array.h"
#include "perf/closed_loop.h"
#include "workload/fio_job.h"
#include "workload/fio_report.h"
#include "workload/fio_runner.h"

namespace afasim::workload {

namespace {

// The model engine's run: a 256 MiB write cache per controller (instead of 4 GiB) reaches
// destage's steady state within the warm-up; the steady-state rates do not depend on its size.
constexpr std::int64_t kModelWriteCacheBytes = 256LL << 20;
constexpr sim::Time kModelWarmNs = 1500 * sim::kMillisecond;
constexpr sim::Time kModelMeasureNs = 1000 * sim::kMillisecond;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The group a figure reads: the first whose first job's name starts with `section` + "-",
// else the last group (group 0 preconditions).
const ReportEntry* entry_for(const std::vector<ReportEntry>& entries, const std::string& section) {
  if (entries.empty()) return nullptr;
  if (section.empty()) return &entries.back();
  for (const auto& e : entries)
    if (e.name.rfind(section + "-", 0) == 0) return &e;
  return nullptr;
}

double metric_of(const ReportEntry& e, perf::FigureMetric m) {
  sim::Histogram lat;
  std::uint64_t ios = 0, bytes = 0;
  sim::Time runtime = 0;
  for (const auto& d : e.direction) {
    if (d.io_count == 0) continue;
    ios += d.io_count;
    bytes += d.io_bytes;
    runtime = std::max(runtime, d.runtime_ns);
    lat.merge(d.lat_ns);
  }
  if (runtime <= 0) return 0;
  switch (m) {
    case perf::FigureMetric::kIops: return static_cast<double>(ios) / sim::to_seconds(runtime);
    case perf::FigureMetric::kMbPerSecond: return static_cast<double>(bytes) / sim::to_seconds(runtime) / 1e6;
    case perf::FigureMetric::kLatencyMeanMs: return lat.mean() / 1e6;
    case perf::FigureMetric::kLatencyStddevMs: return lat.stddev() / 1e6;
  }
  return 0;
}

sim::Result<std::vector<ReportEntry>> run_once(const config::Catalog& catalog, const config::SystemPreset& preset,
                                               const std::string& workload, const std::string& raid,
                                               const CalibrationRunOptions& options) {
  const auto& files = config::embedded_files();
  auto it = files.find("workloads/" + workload);
  if (it == files.end()) return sim::not_found("training figure names job file " + workload + ", not in config/workloads");
  auto parsed = parse_fio_job_file(it->second, workload);
  if (!parsed.is_ok()) return parsed.status();
  if (options.runtime_ns > 0)
    for (auto& j : parsed->jobs)
      if (j.time_based) {
        j.ramp_time_ns = options.ramp_ns;
        j.runtime_ns = options.runtime_ns;
      }
  sim::Simulator sim(options.seed);
  controller::MemoryJournal journal;
  auto array = controller::Array::open(sim, catalog, preset, journal, journal.snapshot());
  if (!array.is_ok()) return array.status();
  FioRunOptions run;
  run.seed = options.seed;
  run.raid_type = *raid::parse_raid_type(raid);
  auto report = run_fio(**array, sim, *parsed, run);
  if (!report.is_ok()) return report.status();
  return aggregate_entries(*report);
}

// The measured group of `file` as a closed load: its jobs (numjobs summed), queue depth, read
// share, block size, sequential or random, and LUNs. `section` as in entry_for().
sim::Result<perf::ClosedLoad> closed_load_of(const FioJobFile& file, const std::string& section, const std::string& name) {
  int group = -1;
  for (const auto& j : file.jobs)
    if (section.empty() ? true : j.name.rfind(section + "-", 0) == 0) {
      group = j.group_id;
      if (!section.empty()) break;
    }
  if (group < 0) return sim::not_found(name + ": no group \"" + section + "-...\"");
  perf::ClosedLoad l;
  l.jobs = 0;
  std::set<std::string> volumes;
  for (const auto& j : file.jobs) {
    if (j.group_id != group) continue;
    l.jobs += j.numjobs;
    l.iodepth = j.iodepth;
    const bool reads = j.rw == RwPattern::kRead || j.rw == RwPattern::kRandRead;
    const bool writes = j.rw == RwPattern::kWrite || j.rw == RwPattern::kRandWrite;
    l.read_fraction = reads ? 1.0 : writes ? 0.0 : j.rwmix_read_percent / 100.0;
    l.sequential = j.rw == RwPattern::kRead || j.rw == RwPattern::kWrite || j.rw == RwPattern::kReadWrite;
    l.block_bytes = j.bs[reads || !writes ? 0 : 1].min_bytes;
    for (const auto& f : j.filenames) volumes.insert(f);
  }
  l.volumes = std::max<int>(1, static_cast<int>(volumes.size()));
  return l;
}

double metric_of(const perf::ClosedLoopResult& r, perf::FigureMetric m) {
  switch (m) {
    case perf::FigureMetric::kIops: return r.iops;
    case perf::FigureMetric::kMbPerSecond: return r.mb_per_s;
    case perf::FigureMetric::kLatencyMeanMs: return r.lat_mean_ms;
    case perf::FigureMetric::kLatencyStddevMs: return r.lat_stddev_ms;
  }
  return 0;
}

// The figure on perf::ArrayModel alone: the job file's measured group as a closed load.
sim::Result<double> run_model(const perf::Calibration& calibration, const perf::TrainingFigure& f,
                              const CalibrationRunOptions& options) {
  const auto& files = config::embedded_files();
  auto it = files.find("workloads/" + f.workload);
  if (it == files.end()) return sim::not_found("training figure names job file " + f.workload + ", not in config/workloads");
  auto parsed = parse_fio_job_file(it->second, f.workload);
  if (!parsed.is_ok()) return parsed.status();
  auto load = closed_load_of(*parsed, f.section, f.workload);
  if (!load.is_ok()) return load.status();
  perf::ArrayModelOptions o;
  o.params = calibration.model;
  o.layout = f.raid == "RAID5" ? perf::RowLayout::kRaid5 : perf::RowLayout::kRaid10;
  o.write_cache_bytes = kModelWriteCacheBytes;
  const auto r = perf::run_closed_loop(o, *load, options.seed, options.runtime_ns > 0 ? options.ramp_ns : kModelWarmNs,
                                       options.runtime_ns > 0 ? options.runtime_ns : kModelMeasureNs);
  return metric_of(r, f.metric);
}

}  // namespace

double figure_tolerance(perf::FigureMetric metric) {
  switch (metric) {
    case perf::FigureMetric::kIops:
    case perf::FigureMetric::kMbPerSecond: return 0.05;
    case perf::FigureMetric::kLatencyMeanMs: return 0.10;
    case perf::FigureMetric::kLatencyStddevMs: return 0.30;
  }
  return 0;
}

sim::Result<std::vector<FigureResult>> run_calibration(const config::Catalog& catalog,
                                                       const config::SystemPreset& preset,
                                                       const perf::Calibration& calibration,
                                                       const CalibrationRunOptions& options) {
  std::map<std::pair<std::string, std::string>, std::vector<ReportEntry>> runs;
  std::vector<FigureResult> out;
  for (const auto& f : calibration.figures) {
    if (!options.only.empty() && f.id.find(options.only) == std::string::npos) continue;
    FigureResult r;
    r.figure = f;
    if (options.engine == CalibrationEngine::kModel) {
      if (options.progress) options.progress("model: " + f.id);
      auto v = run_model(calibration, f, options);
      if (!v.is_ok()) return v.status();
      r.model = *v;
      r.error = (r.model - f.value) / f.value;
      r.within = std::abs(r.error) <= figure_tolerance(f.metric);
      out.push_back(r);
      continue;
    }
    const auto key = std::make_pair(f.workload, f.raid);
    if (!runs.count(key)) {
      if (options.progress) options.progress("running " + f.workload + " on " + f.raid);
      auto entries = run_once(catalog, preset, f.workload, f.raid, options);
      if (!entries.is_ok()) return entries.status();
      runs[key] = std::move(entries).value();
    }
    const ReportEntry* e = entry_for(runs[key], f.section);
    if (e == nullptr) return sim::not_found(f.id + ": no group \"" + f.section + "-...\" in " + f.workload);
    r.model = metric_of(*e, f.metric);
    r.error = (r.model - f.value) / f.value;
    r.within = std::abs(r.error) <= figure_tolerance(f.metric);
    out.push_back(r);
  }
  return out;
}

std::string format_calibration(const perf::Calibration& calibration, const std::vector<FigureResult>& results,
                               const std::string& engine_note) {
  std::string s = "calibration of " + calibration.system + " (" + engine_note + ")\n\n";
  s += "figure                          unit         model   published    error  tolerance\n";
  int within = 0;
  for (const auto& r : results) {
    const bool ms = r.figure.metric == perf::FigureMetric::kLatencyMeanMs ||
                    r.figure.metric == perf::FigureMetric::kLatencyStddevMs;
    char line[200];
    std::snprintf(line, sizeof line, "%-31s %-9s %11s %11s %+7.1f %%    ±%2.0f %%  %s\n", r.figure.id.c_str(),
                  std::string(perf::figure_metric_name(r.figure.metric)).c_str(),
                  fmt(ms ? "%.3f" : "%.0f", r.model).c_str(), fmt(ms ? "%.3f" : "%.0f", r.figure.value).c_str(),
                  100 * r.error, 100 * figure_tolerance(r.figure.metric), r.within ? "ok" : "OUTSIDE");
    s += line;
    within += r.within;
  }
  s += "\n" + std::to_string(results.size()) + " figures: " + std::to_string(within) + " within tolerance, " +
       std::to_string(results.size() - static_cast<std::size_t>(within)) + " outside\n\n";
  const auto fitted = calibration.fitted_names();
  s += "fitted parameters (" + std::to_string(fitted.size()) + " of at most " +
       std::to_string(perf::Calibration::kMaxFitted) + ", values in config/calibration/" + calibration.system +
       ".json):\n";
  for (const auto& name : fitted) {
    const auto& p = calibration.parameters.at(name);
    std::string to;
    for (const auto& id : p.fitted_to) to += (to.empty() ? "" : ", ") + id;
    s += "  " + name + " = " + fmt("%g", p.value) + " (" + p.unit + ")" + (p.provisional ? " [provisional]" : "") +
         "\n      fitted to " + to + "\n";
  }
  return s;
}

}  // namespace afasim::workload
