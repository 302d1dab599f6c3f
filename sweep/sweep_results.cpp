#include "sweep/sweep_results.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <cstdio>

#include "sweep/statistics.h"
#include "workload/report_util.h"
#include "config/json_text.h"

namespace afasim::sweep {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

double rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void csv_line(std::string& out, const std::vector<std::string>& cells) {
  for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_field(cells[i]);
  out += '\n';
}

ordered_json figure_json(const std::optional<double>& v, int decimals) {
  if (!v) return nullptr;
  if (decimals == 0) return static_cast<std::int64_t>(std::llround(*v));
  return *v;
}

// The point's value of each of the sweep's fields, as cells: empty where it sets none.
std::vector<std::string> field_cells(const SweepFile& file, std::size_t point) {
  std::vector<std::string> cells(file.fields.size());
  for (const FieldValue& f : file.points[point].fields) {
    const auto at = std::find(file.fields.begin(), file.fields.end(), f.pointer.text) - file.fields.begin();
    cells[static_cast<std::size_t>(at)] = f.value.is_string() ? f.value.get<std::string>() : f.value.dump();
  }
  return cells;
}

ordered_json field_object(const SweepFile& file, std::size_t point) {
  ordered_json fields = ordered_json::object();
  for (const FieldValue& f : file.points[point].fields) fields[f.pointer.text] = f.value;
  return fields;
}

std::vector<std::string> header(const SweepFile& file, std::vector<std::string> middle) {
  std::vector<std::string> h{"point"};
  h.insert(h.end(), file.fields.begin(), file.fields.end());
  h.insert(h.end(), middle.begin(), middle.end());
  return h;
}

// Per point of the file, the summary: runs, failed, then per figure its mean and interval.
struct PointSummary {
  std::size_t runs = 0, failed = 0;
  std::vector<MeanInterval> figures;
  // Reliability sweeps: the seeds' lifetimes pooled (sums of array_years, arrays_with_loss,
  // losses_double_failure), whose MTTDL intervals are the Poisson ones of the whole exposure.
  double array_years = 0;
  std::int64_t losses = 0, double_failures = 0;
};

// The pooled columns of a reliability sweep's summary (docs/reliability.md "Sweeps").
constexpr const char* kPooledColumns[] = {"array_years_total", "losses_total", "mttdl_years_pooled",
                                          "mttdl_years_low", "mttdl_years_high", "losses_double_failure_total",
                                          "mttdl_double_failure_years_low", "mttdl_double_failure_years_high"};

// The pooled values, as (column, value or nullopt) in kPooledColumns' order.
std::vector<std::optional<double>> pooled_values(const PointSummary& s) {
  const reliability::Estimate all = reliability::poisson_mean_time(s.losses, s.array_years);
  const reliability::Estimate dbl = reliability::poisson_mean_time(s.double_failures, s.array_years);
  auto finite = [](double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; };
  return {s.array_years, static_cast<double>(s.losses), all.value, all.low, finite(all.high),
          static_cast<double>(s.double_failures), dbl.low, finite(dbl.high)};
}

std::vector<PointSummary> summarize(const SweepFile& file, const std::vector<SweepRow>& rows) {
  const std::span<const Figure> figures = figure_set(file.kind);
  std::vector<std::vector<std::vector<double>>> samples(file.points.size(), std::vector<std::vector<double>>(figures.size()));
  std::vector<PointSummary> out(file.points.size());
  for (const SweepRow& row : rows) {
    PointSummary& s = out[row.point];
    if (row.failed()) {
      ++s.failed;
      continue;
    }
    ++s.runs;
    for (std::size_t f = 0; f < figures.size() && f < row.figures.size(); ++f)
      if (row.figures[f]) samples[row.point][f].push_back(*row.figures[f]);
    if (file.kind == SweepKind::kReliability) {
      s.array_years += row.figures[kArrayYearsFigure].value_or(0);
      s.losses += static_cast<std::int64_t>(row.figures[kArraysWithLossFigure].value_or(0));
      s.double_failures += static_cast<std::int64_t>(row.figures[kLossesDoubleFailureFigure].value_or(0));
    }
  }
  for (std::size_t p = 0; p < out.size(); ++p)
    for (std::size_t f = 0; f < figures.size(); ++f) out[p].figures.push_back(mean_ci95(samples[p][f]));
  return out;
}

// A summary figure is shown to one more decimal than the figure: means of rounded values.
std::vector<std::string> summary_cells(const PointSummary& s, std::span<const Figure> figures, SweepKind kind) {
  std::vector<std::string> cells{std::to_string(s.runs), std::to_string(s.failed)};
  for (std::size_t f = 0; f < figures.size(); ++f) {
    const MeanInterval& m = s.figures[f];
    const int decimals = figures[f].decimals + 1;
    cells.push_back(m.count == 0 ? "" : fixed(m.mean, decimals));
    cells.push_back(m.ci95_half_width ? fixed(*m.ci95_half_width, decimals) : "");
  }
  if (kind == SweepKind::kReliability)
    for (const auto& v : pooled_values(s)) cells.push_back(v ? fixed(*v, 3) : "");
  return cells;
}

}  // namespace

Figures figures_of(const workload::ScenarioReport& report) {
  const workload::WorkloadTotals& a = report.array;
  const sim::Time length = a.end_ns - a.start_ns;
  const auto& rd = a.direction[0];
  const auto& wr = a.direction[1];
  Figures f(kFigures.size());
  f[0] = workload::report::per_second(static_cast<double>(rd.ios + wr.ios), length);
  f[1] = workload::report::per_second(static_cast<double>(rd.ios), length);
  f[2] = workload::report::per_second(static_cast<double>(wr.ios), length);
  f[3] = workload::report::per_second(static_cast<double>(rd.bytes + wr.bytes), length) / 1e6;
  if (a.latency_ns.count() > 0) {
    f[4] = a.latency_ns.mean() / 1e3;
    f[5] = static_cast<double>(a.latency_ns.percentile(99)) / 1e3;
    f[6] = static_cast<double>(a.latency_ns.max()) / 1e3;
  }
  f[7] = static_cast<double>(a.errors);
  const controller::RebuildStatus& rb = report.rebuild;
  if (rb.completed_ns >= 0) f[8] = sim::to_seconds(rb.completed_ns - rb.started_ns - rb.paused_ns);
  if (rb.active || rb.total_bytes > 0) f[9] = rb.percent();
  f[10] = static_cast<double>(std::count_if(report.volumes.begin(), report.volumes.end(), [](const auto& v) {
    return v.state == controller::VolumeState::kFailed;
  }));
  f[11] = report.wear.summary.max_percent;
  f[12] = report.wear.summary.min_percent;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (f[i]) f[i] = rounded(*f[i], kFigures[i].decimals);
  return f;
}

Figures figures_of(const reliability::ReliabilityReport& r) {
  Figures f(kReliabilityFigures.size());
  f[0] = r.array_years;
  f[1] = static_cast<double>(r.arrays_with_loss);
  f[2] = static_cast<double>(r.first_loss.double_failure);
  f[3] = static_cast<double>(r.first_loss.latent_error);
  f[4] = static_cast<double>(r.first_loss.rebuild_read_error);
  f[5] = r.loss_probability.value;
  if (r.array_years > 0) f[6] = 1000.0 * static_cast<double>(r.arrays_with_loss) / r.array_years;
  f[7] = r.mttdl_years.value;
  if (std::isfinite(r.markov_mttdl_years)) f[8] = r.markov_mttdl_years;
  f[9] = static_cast<double>(r.drive_failures);
  f[10] = static_cast<double>(r.rebuilds);
  f[11] = static_cast<double>(r.datapac_replacements);
  f[12] = static_cast<double>(r.latent_errors);
  f[13] = r.rebuild_hours;
  f[14] = r.unavailable_hours;
  f[15] = r.wear_percent_per_year;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (f[i]) f[i] = rounded(*f[i], kReliabilityFigures[i].decimals);
  return f;
}

std::span<const Figure> figure_set(SweepKind kind) {
  if (kind == SweepKind::kReliability) return kReliabilityFigures;
  return kFigures;
}

std::string row_to_line(const SweepRow& row, SweepKind kind) {
  const std::span<const Figure> figures = figure_set(kind);
  ordered_json j;
  j["point"] = row.point;
  j["seed"] = row.seed;
  j["error"] = row.failed() ? ordered_json(row.error) : ordered_json(nullptr);
  ordered_json values = ordered_json::object();
  for (std::size_t f = 0; f < figures.size(); ++f)
    values[figures[f].name] = figure_json(f < row.figures.size() ? row.figures[f] : std::nullopt, figures[f].decimals);
  j["figures"] = std::move(values);
  return config::dump_json(j);
}

namespace {
// The largest figure a journal row may hold: above every count, rate, byte total and time a run
// reports (a year of 10^7 IOPS is 3e14 I/Os), and far enough below DBL_MAX that the means of a
// million rows stay finite.
constexpr double kMaxFigure = 1e18;
}  // namespace

sim::Result<SweepRow> row_from_line(const std::string& line, std::size_t points, SweepKind kind) {
  const std::span<const Figure> figures = figure_set(kind);
  const auto parsed = config::parse_json_strict(line);  // a NUL byte is no end of the line
  if (!parsed.is_ok() || !parsed->is_object()) return sim::invalid_argument("not a JSON object");
  const json& j = *parsed;
  SweepRow row;
  if (!j.contains("point") || !j["point"].is_number_unsigned() || j["point"].get<std::uint64_t>() >= points)
    return sim::invalid_argument("\"point\" is not a point of this sweep");
  row.point = j["point"].get<std::size_t>();
  if (!j.contains("seed") || !j["seed"].is_number_unsigned()) return sim::invalid_argument("no \"seed\"");
  row.seed = j["seed"].get<std::uint64_t>();
  if (!j.contains("error") || !(j["error"].is_null() || j["error"].is_string()))
    return sim::invalid_argument("\"error\" is neither null nor a string");
  if (j["error"].is_string()) row.error = j["error"].get<std::string>();
  if (row.error.empty() && j["error"].is_string()) return sim::invalid_argument("an empty \"error\"");
  if (!j.contains("figures") || !j["figures"].is_object() || j["figures"].size() != figures.size())
    return sim::invalid_argument("\"figures\" are not this version's figures");
  row.figures.assign(figures.size(), std::nullopt);
  for (std::size_t f = 0; f < figures.size(); ++f) {
    const auto it = j["figures"].find(figures[f].name);
    if (it == j["figures"].end() || !(it->is_null() || it->is_number()))
      return sim::invalid_argument(std::string("figure ") + figures[f].name + " is missing or not a number");
    if (!it->is_number()) continue;
    // Every figure is a count, rate, time or percentage: a hand-edited row's -5 would pass into
    // the means and the plots (hostile round 18; JSON itself refuses 1e999).
    const double value = it->get<double>();
    if (value < 0)
      return sim::invalid_argument(std::string("figure ") + figures[f].name + " is " + it->dump() +
                                   ": figures are not negative");
    // Nor past any a run gives: two rows of 1e308 summed to inf in the summary's means and put
    // inf and nan into the plots (hostile round 37).
    if (value > kMaxFigure)
      return sim::invalid_argument(std::string("figure ") + figures[f].name + " is " + it->dump() +
                                   ": beyond any figure a run gives (at most 1e18)");
    row.figures[f] = value;
  }
  return row;
}

void sort_rows(std::vector<SweepRow>& rows) {
  std::sort(rows.begin(), rows.end(),
            [](const SweepRow& a, const SweepRow& b) { return a.point != b.point ? a.point < b.point : a.seed < b.seed; });
}

namespace {

// Hands `out` to the sink once it holds kPieceBytes (and at the end, with `last`).
constexpr std::size_t kPieceBytes = std::size_t{1} << 20;

void flush_piece(std::string& out, const TextSink& sink, bool last = false) {
  if (out.empty() || (!last && out.size() < kPieceBytes)) return;
  sink(out);
  out.clear();
}

// Runs `print` with a sink that appends to one string: the documents as strings (tests).
std::string collect(const std::function<void(const TextSink&)>& print) {
  std::string whole;
  print([&](std::string_view piece) { whole += piece; });
  return whole;
}

}  // namespace

void results_csv(const SweepFile& file, const std::vector<SweepRow>& rows, const TextSink& sink) {
  const std::span<const Figure> figures = figure_set(file.kind);
  std::vector<std::string> middle{"seed", "status"};
  for (const Figure& f : figures) middle.push_back(f.name);
  middle.push_back("error");
  std::string out;
  csv_line(out, header(file, middle));
  for (const SweepRow& row : rows) {
    std::vector<std::string> cells{std::to_string(row.point)};
    for (auto& c : field_cells(file, row.point)) cells.push_back(std::move(c));
    cells.push_back(std::to_string(row.seed));
    cells.push_back(row.failed() ? "failed" : "ok");
    for (std::size_t f = 0; f < figures.size(); ++f)
      cells.push_back(f < row.figures.size() && row.figures[f] ? fixed(*row.figures[f], figures[f].decimals) : "");
    cells.push_back(row.error);
    csv_line(out, cells);
    flush_piece(out, sink);
  }
  flush_piece(out, sink, true);
}

std::string results_csv(const SweepFile& file, const std::vector<SweepRow>& rows) {
  return collect([&](const TextSink& sink) { results_csv(file, rows, sink); });
}

std::string summary_csv(const SweepFile& file, const std::vector<SweepRow>& rows) {
  const std::span<const Figure> figures = figure_set(file.kind);
  std::vector<std::string> middle{"runs", "failed"};
  for (const Figure& f : figures) {
    middle.push_back(std::string(f.name) + "_mean");
    middle.push_back(std::string(f.name) + "_ci95");
  }
  if (file.kind == SweepKind::kReliability)
    for (const char* c : kPooledColumns) middle.push_back(c);
  std::string out;
  csv_line(out, header(file, middle));
  const std::vector<PointSummary> summary = summarize(file, rows);
  for (std::size_t p = 0; p < summary.size(); ++p) {
    std::vector<std::string> cells{std::to_string(p)};
    for (auto& c : field_cells(file, p)) cells.push_back(std::move(c));
    for (auto& c : summary_cells(summary[p], figures, file.kind)) cells.push_back(std::move(c));
    csv_line(out, cells);
  }
  return out;
}

std::vector<MeanInterval> figure_by_point(const SweepFile& file, const std::vector<SweepRow>& rows, std::size_t figure) {
  std::vector<MeanInterval> out;
  for (const PointSummary& p : summarize(file, rows)) out.push_back(p.figures[figure]);
  return out;
}

namespace {

// `element` as dump_json(…, 2) prints it inside a top-level object's array: every line
// indented by two more levels.
void append_nested(std::string& out, const ordered_json& element) {
  out += "    ";
  for (char c : config::dump_json(element, 2)) {
    out += c;
    if (c == '\n') out += "    ";
  }
}

// The document's "rows" and "summary" arrays, appended element by element (each built,
// printed and dropped): the whole tree of a 10^6-run sweep took ~3 GB (hostile round 24).
void append_array(std::string& out, const TextSink& sink, const char* key, std::size_t n,
                  const std::function<ordered_json(std::size_t)>& element, bool last) {
  out += std::string("  \"") + key + "\": [";
  for (std::size_t i = 0; i < n; ++i) {
    out += i == 0 ? "\n" : ",\n";
    append_nested(out, element(i));
    flush_piece(out, sink);
  }
  out += n == 0 ? "]" : "\n  ]";
  out += last ? "\n" : ",\n";
}

}  // namespace

void results_json(const SweepFile& file, const std::vector<SweepRow>& rows, const TextSink& sink) {
  const std::span<const Figure> figures = figure_set(file.kind);
  ordered_json head;
  head["schema"] = "afasim.sweep-results/1";
  head["name"] = file.name;
  head["base"] = file.base;
  head["fields"] = file.fields;
  ordered_json names = ordered_json::array();
  for (const Figure& f : figures) names.push_back(f.name);
  head["figures"] = names;
  head["seeds"] = file.seeds;
  std::string out = config::dump_json(head, 2);
  out.erase(out.size() - 2);  // "\n}": the arrays follow
  out += ",\n";
  append_array(out, sink, "rows", rows.size(), [&](std::size_t i) {
    const SweepRow& row = rows[i];
    ordered_json r = ordered_json::parse(row_to_line(row, file.kind));
    return ordered_json{{"point", row.point},
                        {"fields", field_object(file, row.point)},
                        {"seed", row.seed},
                        {"status", row.failed() ? "failed" : "ok"},
                        {"figures", r["figures"]},
                        {"error", r["error"]}};
  }, false);
  const std::vector<PointSummary> summary = summarize(file, rows);
  append_array(out, sink, "summary", summary.size(), [&](std::size_t p) {
    ordered_json s{{"point", p}, {"fields", field_object(file, p)}, {"runs", summary[p].runs}, {"failed", summary[p].failed}};
    for (std::size_t f = 0; f < figures.size(); ++f) {
      const MeanInterval& m = summary[p].figures[f];
      s[std::string(figures[f].name) + "_mean"] = m.count == 0 ? ordered_json(nullptr) : ordered_json(m.mean);
      s[std::string(figures[f].name) + "_ci95"] = m.ci95_half_width ? ordered_json(*m.ci95_half_width) : ordered_json(nullptr);
    }
    if (file.kind == SweepKind::kReliability) {
      const auto pooled = pooled_values(summary[p]);
      for (std::size_t c = 0; c < pooled.size(); ++c)
        s[kPooledColumns[c]] = pooled[c] ? ordered_json(rounded(*pooled[c], 3)) : ordered_json(nullptr);
    }
    return s;
  }, true);
  out += "}\n";
  flush_piece(out, sink, true);
}

std::string results_json(const SweepFile& file, const std::vector<SweepRow>& rows) {
  return collect([&](const TextSink& sink) { results_json(file, rows, sink); });
}

}  // namespace afasim::sweep
