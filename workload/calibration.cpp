#include "workload/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "controller/array.h"
#include "perf/closed_loop.h"
#include "workload/fio_job.h"
#include "workload/fio_report.h"
#include "workload/fio_runner.h"
#include "workload/report_util.h"

namespace afasim::workload {

namespace {

constexpr sim::Time kModelWarmNs = 1500 * sim::kMillisecond;
constexpr sim::Time kModelMeasureNs = 1000 * sim::kMillisecond;

using report::fmt;

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
    lat.merge(d.lat_ns());
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
  controller::ArrayOptions array_options;
  array_options.data_path.cache.write_cache_bytes = kCalibrationWriteCacheBytes;
  auto array = controller::Array::open(sim, catalog, preset, journal, journal.snapshot(), array_options);
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
perf::ClosedLoad closed_load_of_group(const FioJobFile& file, int group);

sim::Result<perf::ClosedLoad> closed_load_of(const FioJobFile& file, const std::string& section, const std::string& name) {
  int group = -1;
  for (const auto& j : file.jobs)
    if (section.empty() ? true : j.name.rfind(section + "-", 0) == 0) {
      group = j.group_id;
      if (!section.empty()) break;
    }
  if (group < 0) return sim::not_found(name + ": no group \"" + section + "-...\"");
  return closed_load_of_group(file, group);
}

perf::ClosedLoad closed_load_of_group(const FioJobFile& file, int group) {
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

perf::ArrayModelOptions model_options(const perf::Calibration& calibration, const std::string& raid) {
  perf::ArrayModelOptions o;
  o.params = calibration.model;
  o.layout = raid == "RAID5" ? perf::RowLayout::kRaid5 : perf::RowLayout::kRaid10;
  o.write_cache_bytes = kCalibrationWriteCacheBytes;
  return o;
}

sim::Result<FioJobFile> shipped_job_file(const std::string& workload) {
  const auto& files = config::embedded_files();
  auto it = files.find("workloads/" + workload);
  if (it == files.end()) return sim::not_found("job file " + workload + " is not in config/workloads");
  return parse_fio_job_file(it->second, workload);
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
  auto parsed = shipped_job_file(f.workload);
  if (!parsed.is_ok()) return parsed.status();
  auto load = closed_load_of(*parsed, f.section, f.workload);
  if (!load.is_ok()) return load.status();
  const auto r = perf::run_closed_loop(model_options(calibration, f.raid), *load, options.seed, options.runtime_ns > 0 ? options.ramp_ns : kModelWarmNs,
                                       options.runtime_ns > 0 ? options.runtime_ns : kModelMeasureNs);
  return metric_of(r, f.metric);
}

}  // namespace

sim::Status check_calibration_figures(const perf::Calibration& c) {
  for (std::size_t i = 0; i < c.figures.size(); ++i) {
    const perf::TrainingFigure& f = c.figures[i];
    const std::string field = c.file + ": training_figures[" + std::to_string(i) + "].";
    auto parsed = shipped_job_file(f.workload);
    if (!parsed.is_ok())
      return sim::invalid_argument(field + "workload: \"" + f.workload + "\" is not a job file of config/workloads");
    if (f.section.empty()) {
      // The last group is the figure's unless its jobs are a section's ("write-lun0"): then
      // the file measures several, and the figure must say which.
      const auto last = std::find_if(parsed->jobs.begin(), parsed->jobs.end(),
                                     [&](const FioJob& j) { return j.group_id == parsed->group_count() - 1; });
      if (last != parsed->jobs.end() && last->name.find('-') != std::string::npos)
        return sim::invalid_argument(field + "section: missing, and the last group of " + f.workload + " is section \"" +
                                     last->name.substr(0, last->name.find('-')) +
                                     "\"'s: name the group this figure reads");
      continue;
    }
    if (std::none_of(parsed->jobs.begin(), parsed->jobs.end(),
                     [&](const FioJob& j) { return j.name.rfind(f.section + "-", 0) == 0; }))
      return sim::invalid_argument(field + "section: \"" + f.section + "\" names no group of " + f.workload +
                                   " (no job's name begins \"" + f.section + "-\")");
  }
  return sim::Status::ok();
}

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
  if (!options.only.empty() &&
      std::none_of(calibration.figures.begin(), calibration.figures.end(),
                   [&](const perf::TrainingFigure& f) { return f.id.find(options.only) != std::string::npos; })) {
    std::string ids;
    for (const auto& f : calibration.figures) ids += (ids.empty() ? "" : ", ") + f.id;
    return sim::invalid_argument("no training figure's id contains \"" + options.only + "\" (the figures: " + ids + ")");
  }
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

sim::Result<std::vector<SweepPoint>> run_model_sweep(const perf::Calibration& calibration, const std::string& workload,
                                                     const std::string& raid, const CalibrationRunOptions& options) {
  auto parsed = shipped_job_file(workload);
  if (!parsed.is_ok()) return parsed.status();
  std::vector<SweepPoint> out;
  int last_group = 0;
  for (const auto& j : parsed->jobs) {
    if (j.group_id == 0 || j.group_id == last_group) continue;
    last_group = j.group_id;
    const perf::ClosedLoad load = closed_load_of_group(*parsed, j.group_id);
    if (options.progress) options.progress("model: " + j.name);
    const auto r = perf::run_closed_loop(model_options(calibration, raid), load, options.seed,
                                         options.runtime_ns > 0 ? options.ramp_ns : kModelWarmNs,
                                         options.runtime_ns > 0 ? options.runtime_ns : kModelMeasureNs);
    out.push_back(SweepPoint{j.name, load.jobs, load.iodepth, r.iops, r.mb_per_s, r.lat_mean_ms, r.lat_stddev_ms});
  }
  return out;
}

std::string format_sweep_table(const std::vector<SweepPoint>& points) {
  std::string s = "point      jobs  QD       IOPS     MB/s   mean ms  stddev ms\n";
  for (const auto& p : points) {
    char line[160];
    std::snprintf(line, sizeof line, "%-9s %5d %3d %10.0f %8.1f %9.3f %10.3f\n", p.name.c_str(), p.jobs, p.iodepth, p.iops,
                  p.mb_per_s, p.lat_mean_ms, p.lat_stddev_ms);
    s += line;
  }
  return s;
}

std::string format_sweep_svg(const std::vector<SweepPoint>& points, const std::string& title) {
  // Bars: IOPS (left axis); lines: mean latency and mean + stddev (right axis), one slot per point.
  const double w = 880, h = 420, left = 70, right = 70, top = 40, bottom = 70;
  const double plot_w = w - left - right, plot_h = h - top - bottom;
  double iops_max = 1, ms_max = 0.001;
  for (const auto& p : points) {
    iops_max = std::max(iops_max, p.iops);
    ms_max = std::max(ms_max, p.lat_mean_ms + p.lat_stddev_ms);
  }
  // Four ticks of a round step on each axis (nice_step), at least 5 % above the highest value.
  iops_max = 4 * report::nice_step(iops_max * 1.05, 4);
  ms_max = 4 * report::nice_step(ms_max * 1.05, 4);
  const double slot = points.empty() ? plot_w : plot_w / static_cast<double>(points.size());
  auto x_of = [&](std::size_t i) { return left + slot * (static_cast<double>(i) + 0.5); };
  auto y_iops = [&](double v) { return top + plot_h * (1 - v / iops_max); };
  auto y_ms = [&](double v) { return top + plot_h * (1 - v / ms_max); };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", w) + "\" height=\"" + fmt("%.0f", h) +
                  "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<text x=\"" + fmt("%.0f", w / 2) + "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">" + title + "</text>\n";
  s += "<rect x=\"" + fmt("%.0f", left) + "\" y=\"" + fmt("%.0f", top) + "\" width=\"" + fmt("%.0f", plot_w) +
       "\" height=\"" + fmt("%.0f", plot_h) + "\" fill=\"none\" stroke=\"#888\"/>\n";
  std::string mean_line, sd_line;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const double bar_w = slot * 0.6, x = x_of(i);
    s += "<rect x=\"" + fmt("%.1f", x - bar_w / 2) + "\" y=\"" + fmt("%.1f", y_iops(p.iops)) + "\" width=\"" +
         fmt("%.1f", bar_w) + "\" height=\"" + fmt("%.1f", top + plot_h - y_iops(p.iops)) + "\" fill=\"#7aa6d8\"/>\n";
    s += "<text x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.0f", top + plot_h + 14) + "\" text-anchor=\"middle\">" +
         p.name + "</text>\n";
    mean_line += fmt("%.1f,", x) + fmt("%.1f ", y_ms(p.lat_mean_ms));
    sd_line += fmt("%.1f,", x) + fmt("%.1f ", y_ms(p.lat_mean_ms + p.lat_stddev_ms));
  }
  s += "<polyline points=\"" + mean_line + "\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2\"/>\n";
  s += "<polyline points=\"" + sd_line + "\" fill=\"none\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/>\n";
  for (int k = 0; k <= 4; ++k) {
    const double f = k / 4.0;
    s += "<text x=\"" + fmt("%.0f", left - 6) + "\" y=\"" + fmt("%.1f", top + plot_h * (1 - f) + 4) +
         "\" text-anchor=\"end\">" + fmt("%.0f", iops_max * f) + "</text>\n";
    s += "<text x=\"" + fmt("%.0f", w - right + 6) + "\" y=\"" + fmt("%.1f", top + plot_h * (1 - f) + 4) + "\">" +
         fmt("%g", ms_max * f) + "</text>\n";
  }
  s += "<text x=\"" + fmt("%.0f", left) + "\" y=\"" + fmt("%.0f", h - 20) +
       "\">bars: IOPS (left axis); solid: mean latency, dashed: mean + stddev (ms, right axis)</text>\n";
  s += "</svg>\n";
  return s;
}

std::string format_calibration(const perf::Calibration& calibration, const std::vector<FigureResult>& results,
                               const std::string& engine_note) {
  std::string s = "calibration of " + calibration.system + " (" + engine_note + ")\n\n";
  s += "figure                          unit         model   published    error  tolerance\n";
  int within = 0;
  for (const auto& r : results) {
    const bool ms = r.figure.metric == perf::FigureMetric::kLatencyMeanMs ||
                    r.figure.metric == perf::FigureMetric::kLatencyStddevMs;
    // An error of 10^4 % or more prints as such (the published figure is then no yardstick),
    // so the column keeps its width; the model is never below -100 %.
    const std::string error = 100 * r.error < 9999.95 ? fmt("%+7.1f", 100 * r.error) : ">+1e4";
    // A figure too small for the column's decimals keeps 3 significant digits (0.5 MB/s).
    auto figure = [ms](double v) { return fmt(v >= (ms ? 0.001 : 10) ? (ms ? "%.3f" : "%.0f") : "%.3g", v); };
    report::line(s, "%-31s %-9s %11s %11s %7s %%    ±%2.0f %%  %s", r.figure.id.c_str(),
                 std::string(perf::figure_metric_name(r.figure.metric)).c_str(), figure(r.model).c_str(),
                 figure(r.figure.value).c_str(), error.c_str(), 100 * figure_tolerance(r.figure.metric),
                 r.within ? "ok" : "OUTSIDE");
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
