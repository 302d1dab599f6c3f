#include "sweep/sweep_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "workload/report_util.h"

namespace afasim::sweep {
namespace {

using workload::report::fmt;
const auto& escaped = workload::report::xml_escape;

// A point's value of field `f` as a label ("" when the point does not set it).
std::string value_of(const SweepFile& file, std::size_t point, std::size_t f) {
  for (const FieldValue& v : file.points[point].fields)
    if (v.pointer.text == file.fields[f]) return v.value.is_string() ? v.value.get<std::string>() : v.value.dump();
  return "";
}

// Labels in first-appearance order, each once, found by a hash (hostile round 24: a linear
// search per point took 30 s for 100,000 points).
struct Labels {
  std::vector<std::string> list;
  std::unordered_map<std::string, std::size_t> index;
  // Index of `label`, appending it when new.
  std::size_t of(const std::string& label) {
    const auto [it, fresh] = index.try_emplace(label, list.size());
    if (fresh) list.push_back(label);
    return it->second;
  }
};

// The chart's geometry: the plot area, the y range, the x slots.
struct Frame {
  double w, left, right, top, plot_h, legend_h, y_min, y_max;
  double y_step;  // between y ticks: y_min and y_max are multiples of it
  std::size_t slots;
  double plot_w() const { return w - left - right; }
  double height() const { return top + plot_h + 60 + legend_h; }
  double x_at(std::size_t i) const {
    return left + plot_w() / static_cast<double>(std::max<std::size_t>(slots, 1)) * (static_cast<double>(i) + 0.5);
  }
  double y_at(double v) const { return top + plot_h * (1 - (v - y_min) / (y_max - y_min)); }
};

// The <svg> element, title, plot area, y ticks, x labels and x axis name (not closed).
std::string frame_svg(const Frame& f, const std::string& title, const std::vector<std::string>& xs,
                      const std::string& x_name) {
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", f.w) + "\" height=\"" +
                  fmt("%.0f", f.height()) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<text x=\"" + fmt("%.0f", f.w / 2) + "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">" + escaped(title) +
       "</text>\n";
  s += "<rect x=\"" + fmt("%.0f", f.left) + "\" y=\"" + fmt("%.0f", f.top) + "\" width=\"" + fmt("%.0f", f.plot_w()) +
       "\" height=\"" + fmt("%.0f", f.plot_h) + "\" fill=\"none\" stroke=\"#888\"/>\n";
  // Whole multiples of the step (y_min is one): 0 is 0, not 5.55e-17 from adding steps up.
  const double first = std::round(f.y_min / f.y_step), last = std::round(f.y_max / f.y_step);
  for (double k = first; k <= last; ++k) {
    const double v = k * f.y_step;
    s += "<text x=\"" + fmt("%.0f", f.left - 6) + "\" y=\"" + fmt("%.1f", f.y_at(v) + 4) + "\" text-anchor=\"end\">" +
         fmt("%.4g", v) + "</text>\n";
  }
  for (std::size_t i = 0; i < xs.size(); ++i)
    s += "<text x=\"" + fmt("%.1f", f.x_at(i)) + "\" y=\"" + fmt("%.0f", f.top + f.plot_h + 16) +
         "\" text-anchor=\"middle\">" + escaped(xs[i]) + "</text>\n";
  s += "<text x=\"" + fmt("%.0f", f.left + f.plot_w() / 2) + "\" y=\"" + fmt("%.0f", f.top + f.plot_h + 34) +
       "\" text-anchor=\"middle\">" + escaped(x_name) + "</text>\n";
  return s;
}

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

}  // namespace

std::string figure_names(SweepKind kind) {
  std::string names;
  for (const Figure& f : figure_set(kind)) names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

namespace {

// The index of `figure` in figure_set(kind), or check_figure's error.
sim::Result<std::size_t> figure_index(SweepKind kind, std::string_view figure) {
  const std::span<const Figure> figures = figure_set(kind);
  const auto found = std::find_if(figures.begin(), figures.end(), [&](const Figure& f) { return figure == f.name; });
  if (found == figures.end())
    return sim::invalid_argument(std::string(figure) + ": not a figure of this sweep (figures: " + figure_names(kind) + ")");
  return static_cast<std::size_t>(found - figures.begin());
}

}  // namespace

sim::Status check_figure(SweepKind kind, std::string_view figure) { return figure_index(kind, figure).status(); }

sim::Result<std::string> plot_svg(const SweepFile& file, const std::vector<SweepRow>& rows, std::string_view figure) {
  const auto index = figure_index(file.kind, figure);
  if (!index.is_ok()) return index.status();
  const std::vector<MeanInterval> by_point = figure_by_point(file, rows, *index);

  // x: the first field's values; series: the other fields' values joined.
  Labels x_labels, series_labels;
  std::vector<std::size_t> x_of(file.points.size()), series_of(file.points.size());
  for (std::size_t p = 0; p < file.points.size(); ++p) {
    x_of[p] = x_labels.of(file.fields.empty() ? "point " + std::to_string(p) : value_of(file, p, 0));
    std::string label;
    for (std::size_t f = 1; f < file.fields.size(); ++f)
      label += (label.empty() ? "" : ", ") + file.fields[f] + " = " + value_of(file, p, f);
    series_of[p] = series_labels.of(label);
  }
  const std::vector<std::string>& xs = x_labels.list;
  const std::vector<std::string>& series = series_labels.list;
  double y_max = 0, y_min = 0;
  for (const MeanInterval& m : by_point) {
    if (m.count == 0) continue;
    const double half = m.ci95_half_width.value_or(0);
    y_max = std::max(y_max, m.mean + half);
    y_min = std::min(y_min, m.mean - half);
  }
  if (y_max <= y_min) y_max = y_min + 1;
  y_max += 0.08 * (y_max - y_min);
  // To round steps (10, 20, 50 × a power of ten), so that every tick reads as a round number.
  const double step = workload::report::nice_step(y_max - y_min, 4);
  y_min = std::floor(y_min / step) * step;
  y_max = std::ceil(y_max / step) * step;

  const Frame f{880, 90, 30, 40, 320, 16.0 * static_cast<double>(series.size()), y_min, y_max, step, xs.size()};
  auto x_at = [&](std::size_t i) { return f.x_at(i); };
  auto y_at = [&](double v) { return f.y_at(v); };
  const double top = f.top, plot_h = f.plot_h, left = f.left;
  std::string s = frame_svg(f, file.name + ": " + std::string(figure) + " (mean and 95 % interval over the seeds)", xs,
                            file.fields.empty() ? "point" : file.fields[0]);
  for (std::size_t k = 0; k < series.size(); ++k) {
    const std::string colour = kColours[k % std::size(kColours)];
    std::string line;
    // The series' points left to right (a `points` list may give them in any order).
    std::vector<std::size_t> order;
    for (std::size_t p = 0; p < file.points.size(); ++p)
      if (series_of[p] == k && by_point[p].count > 0) order.push_back(p);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x_of[a] < x_of[b]; });
    for (const std::size_t p : order) {
      const MeanInterval& m = by_point[p];
      const double x = x_at(x_of[p]), y = y_at(m.mean);
      line += fmt("%.1f,", x) + fmt("%.1f ", y);
      if (m.ci95_half_width)
        s += "<line x1=\"" + fmt("%.1f", x) + "\" x2=\"" + fmt("%.1f", x) + "\" y1=\"" + fmt("%.1f", y_at(m.mean - *m.ci95_half_width)) +
             "\" y2=\"" + fmt("%.1f", y_at(m.mean + *m.ci95_half_width)) + "\" stroke=\"" + colour + "\"/>\n";
      s += "<circle cx=\"" + fmt("%.1f", x) + "\" cy=\"" + fmt("%.1f", y) + "\" r=\"3.5\" fill=\"" + colour + "\"><title>point " +
           std::to_string(p) + ": " + escaped(xs[x_of[p]]) + (series[k].empty() ? "" : ", " + escaped(series[k])) + ": " +
           fmt("%.6g", m.mean) + (m.ci95_half_width ? " ± " + fmt("%.3g", *m.ci95_half_width) : "") + " (" +
           std::to_string(m.count) + " runs)</title></circle>\n";
    }
    if (!line.empty())
      s += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.5\"/>\n";
    if (!series[k].empty()) {
      const double y = top + plot_h + 52 + 16.0 * static_cast<double>(k);
      s += "<rect x=\"" + fmt("%.0f", left) + "\" y=\"" + fmt("%.1f", y - 9) + "\" width=\"12\" height=\"3\" fill=\"" + colour +
           "\"/><text x=\"" + fmt("%.0f", left + 18) + "\" y=\"" + fmt("%.1f", y) + "\">" + escaped(series[k]) + "</text>\n";
    }
  }
  s += "</svg>\n";
  return s;
}

}  // namespace afasim::sweep
