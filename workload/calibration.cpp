#include "workload/calibration.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "controller/array.h"
#include "workload/fio_job.h"
#include "workload/fio_report.h"
#include "workload/fio_runner.h"

namespace afasim::workload {

namespace {

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
    const auto key = std::make_pair(f.workload, f.raid);
    if (!runs.count(key)) {
      if (options.progress) options.progress("running " + f.workload + " on " + f.raid);
      auto entries = run_once(catalog, preset, f.workload, f.raid, options);
      if (!entries.is_ok()) return entries.status();
      runs[key] = std::move(entries).value();
    }
    const ReportEntry* e = entry_for(runs[key], f.section);
    if (e == nullptr) return sim::not_found(f.id + ": no group \"" + f.section + "-...\" in " + f.workload);
    FigureResult r;
    r.figure = f;
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
