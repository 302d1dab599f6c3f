// The scenario report for people: stacked SVG charts on one time axis, and one HTML page
// that holds them with the report's tables (scenario_runner.h, docs/scenarios.md
// "Charts and the HTML report"). Pure functions of the report: same run, same bytes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "config/size.h"
#include "workload/report_util.h"
#include "workload/scenario_runner.h"

namespace afasim::workload {
namespace {

using report::fmt;
using report::grouped;
using report::nice_step;
using report::per_second;
using report::xml_escape;

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

// --- Series and groups ------------------------------------------------------------------

// One value per timeline row; NaN where the row has none (no I/O completed, no rebuild yet).
using Series = std::vector<double>;

bool has_detail(const ScenarioReport& r) {
  return !r.timeline.empty() &&
         std::all_of(r.timeline.begin(), r.timeline.end(), [&](const TimelineRow& row) {
           return row.volume_detail.size() == r.volumes.size();
         });
}

Series volume_series(const ScenarioReport& r, std::size_t v, const std::function<double(const TimelineRow&, std::size_t)>& f) {
  Series s;
  for (const auto& row : r.timeline) s.push_back(f(row, v));
  return s;
}

double iops_of(const TimelineRow& row, std::size_t v) {
  return per_second(static_cast<double>(row.volume_ios[v]), row.length_ns);
}
double mbps_of(const TimelineRow& row, std::size_t v) {
  return per_second(static_cast<double>(row.volume_detail[v].bytes), row.length_ns) / 1e6;
}
// A latency figure of a volume in a row, NaN when no I/O completed in it.
double latency_of(const TimelineRow& row, std::size_t v, float TimelineRow::VolumeDetail::*field) {
  const double us = row.volume_detail[v].*field;
  return row.volume_ios[v] > 0 && us > 0 ? us : std::nan("");
}

// Volumes whose lines could not be told apart on the charts: every point of their IOPS (and,
// with detail, MB/s) within 2 % of the panel's height of each other and their p99 latency
// within 10 %. Greedy, in volume order: a volume joins the first group whose first member is
// that close.
struct Group {
  std::vector<std::size_t> members;
  std::string label;
};

bool close_linear(const Series& a, const Series& b, double scale) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::fabs(a[i] - b[i]) > 0.02 * scale) return false;
  return true;
}

bool close_log(const Series& a, const Series& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return false;
    if (!std::isnan(a[i]) && std::fabs(std::log10(a[i] / b[i])) > std::log10(1.1)) return false;
  }
  return true;
}

double series_max(const std::vector<Series>& all) {
  double m = 0;
  for (const auto& s : all)
    for (double v : s)
      if (!std::isnan(v)) m = std::max(m, v);
  return m;
}

std::vector<Group> group_volumes(const ScenarioReport& r) {
  const bool detail = has_detail(r);
  std::vector<Series> iops, mbps, p99;
  for (std::size_t v = 0; v < r.volumes.size(); ++v) {
    iops.push_back(volume_series(r, v, iops_of));
    if (detail) {
      mbps.push_back(volume_series(r, v, mbps_of));
      p99.push_back(volume_series(r, v, [](const TimelineRow& row, std::size_t i) {
        return latency_of(row, i, &TimelineRow::VolumeDetail::latency_us_p99);
      }));
    }
  }
  const double iops_max = series_max(iops), mbps_max = series_max(mbps);
  std::vector<Group> groups;
  for (std::size_t v = 0; v < r.volumes.size(); ++v) {
    Group* home = nullptr;
    for (auto& g : groups) {
      const std::size_t f = g.members.front();
      const bool same = close_linear(iops[v], iops[f], iops_max) &&
                        (!detail || (close_linear(mbps[v], mbps[f], mbps_max) && close_log(p99[v], p99[f])));
      if (same) {
        home = &g;
        break;
      }
    }
    if (home == nullptr) home = &groups.emplace_back();
    home->members.push_back(v);
  }
  for (auto& g : groups) {
    if (g.members.size() == 1) {
      g.label = r.volumes[g.members[0]].name;
      continue;
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(2, g.members.size()); ++i)
      g.label += (i ? ", " : "") + r.volumes[g.members[i]].name;
    if (g.members.size() > 2) g.label += " +" + std::to_string(g.members.size() - 2);
    g.label += " (" + std::to_string(g.members.size()) + " volumes)";
  }
  return groups;
}

// --- Charts -----------------------------------------------------------------------------

struct Line {
  std::string label;
  std::string colour;
  std::string dash;    // SVG stroke-dasharray, "" for solid
  double width = 1.5;
  bool legend = true;  // has an entry in the legend
  Series y;            // the line: a group's mean
  Series lo, hi;       // a group's band (min and max of its members), empty for none
};

struct Panel {
  std::string id;  // the panel's <g id="panel-ID">: iops, mbps, latency, progress, cache
  std::string title;
  std::string unit;  // the y axis
  bool log = false;  // log10 scale (latency)
  std::function<std::string(double)> tick;
  std::vector<Line> lines;
};

// A group's mean, min and max of `f` per row (NaN where no member has a value).
void fill_group(Line& line, const Group& g, const ScenarioReport& r,
                const std::function<double(const TimelineRow&, std::size_t)>& f) {
  for (const auto& row : r.timeline) {
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    int n = 0;
    for (std::size_t v : g.members) {
      const double x = f(row, v);
      if (std::isnan(x)) continue;
      sum += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      ++n;
    }
    line.y.push_back(n ? sum / n : std::nan(""));
    if (g.members.size() > 1) {
      line.lo.push_back(n ? lo : std::nan(""));
      line.hi.push_back(n ? hi : std::nan(""));
    }
  }
}

class ChartWriter {
 public:
  static constexpr double kWidth = 1100, kLeft = 90, kRight = 300, kPanelH = 150, kGap = 46, kTop = 70;
  static constexpr double kPlotW = kWidth - kLeft - kRight;
  // Legend entries that fit beside a panel; the rest are counted.
  static constexpr std::size_t kLegendMax = 8;
  static constexpr std::size_t kNoLegend = SIZE_MAX;

  ChartWriter(const ScenarioReport& r, std::vector<Panel> panels) : r_(r), panels_(std::move(panels)) {
    t_max_ = std::max(sim::to_seconds(r.timeline.empty() ? r.end_ns : r.timeline.back().end_ns), 1e-9);
  }

  std::string svg() {
    const double height = kTop + static_cast<double>(panels_.size()) * (kPanelH + kGap) + 30;
    o_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
       << "\" viewBox=\"0 0 " << kWidth << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    o_ << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    o_ << "<text x=\"" << kLeft << "\" y=\"22\" font-size=\"16\">" << xml_escape(r_.name) << " ("
       << xml_escape(r_.system_model) << ", seed " << r_.seed << ")</text>\n";
    for (std::size_t i = 0; i < panels_.size(); ++i) panel(panels_[i], kTop + static_cast<double>(i) * (kPanelH + kGap));
    actions(height);
    o_ << "<text x=\"" << kLeft + kPlotW / 2 << "\" y=\"" << height - 8
       << "\" text-anchor=\"middle\">simulated time (s)</text>\n";
    o_ << "</svg>\n";
    return o_.str();
  }

 private:
  double x_of(double t) const { return kLeft + kPlotW * t / t_max_; }

  // The y range of `p`: [0, max] rounded up to a tick, or whole decades for a log panel.
  void range(const Panel& p, double& lo, double& hi, double& step) const {
    double max = 0, min_pos = INFINITY;
    for (const auto& l : p.lines)
      for (const Series* s : {&l.y, &l.hi})
        for (double v : *s)
          if (!std::isnan(v)) {
            max = std::max(max, v);
            if (v > 0) min_pos = std::min(min_pos, v);
          }
    if (p.log) {
      lo = std::isinf(min_pos) ? 0 : std::floor(std::log10(min_pos));
      hi = std::max(lo + 1, std::ceil(std::log10(std::max(max, 1e-9))));
      step = 1;
      return;
    }
    step = nice_step(max, 4);
    lo = 0;
    hi = std::max(step, std::ceil(max / step) * step);
  }

  void panel(const Panel& p, double top) {
    double lo, hi, step;
    range(p, lo, hi, step);
    auto y_of = [&](double v) {
      const double u = p.log ? std::log10(std::max(v, std::pow(10.0, lo))) : v;
      return top + kPanelH * (1 - (u - lo) / (hi - lo));
    };
    o_ << "<g id=\"panel-" << p.id << "\">\n<text x=\"" << kLeft << "\" y=\"" << top - 8
       << "\" font-size=\"13\" font-weight=\"bold\">" << xml_escape(p.title) << "</text>\n";
    grid(p, top, lo, hi, step, y_of);
    std::size_t entry = 0;
    for (const auto& l : p.lines) line(l, y_of, top, l.legend ? entry++ : kNoLegend);
    if (entry > kLegendMax)
      o_ << "<text x=\"" << kLeft + kPlotW + 14 << "\" y=\"" << top + 8 + 16 * static_cast<double>(kLegendMax)
         << "\" font-size=\"11\" fill=\"#555\">+" << entry - kLegendMax << " more (hover a line for its name)</text>\n";
    if (p.lines.empty())
      o_ << "<text x=\"" << kLeft + kPlotW / 2 << "\" y=\"" << top + kPanelH / 2
         << "\" text-anchor=\"middle\" fill=\"#777\">nothing to show</text>\n";
    o_ << "</g>\n";
  }

  void grid(const Panel& p, double top, double lo, double hi, double step, const std::function<double(double)>& y_of) {
    for (double u = lo; u <= hi + step / 2; u += step) {
      const double v = p.log ? std::pow(10.0, u) : u;
      const std::string y = fmt("%.1f", y_of(v));
      o_ << "<line x1=\"" << kLeft << "\" y1=\"" << y << "\" x2=\"" << kLeft + kPlotW << "\" y2=\"" << y
         << "\" stroke=\"#e4e4e4\"/>\n<text x=\"" << kLeft - 6 << "\" y=\"" << y
         << "\" text-anchor=\"end\" dominant-baseline=\"middle\">" << xml_escape(p.tick(v)) << "</text>\n";
    }
    const double x_step = nice_step(t_max_, 10);
    for (double t = 0; t <= t_max_ + x_step / 1000; t += x_step) {
      const std::string x = fmt("%.1f", x_of(t));
      o_ << "<line x1=\"" << x << "\" y1=\"" << top + kPanelH << "\" x2=\"" << x << "\" y2=\"" << top + kPanelH + 4
         << "\" stroke=\"black\"/>\n<text x=\"" << x << "\" y=\"" << top + kPanelH + 16
         << "\" text-anchor=\"middle\" font-size=\"10\">" << fmt("%g", t) << "</text>\n";
    }
    o_ << "<rect x=\"" << kLeft << "\" y=\"" << top << "\" width=\"" << kPlotW << "\" height=\"" << kPanelH
       << "\" fill=\"none\" stroke=\"black\"/>\n";
    o_ << "<text transform=\"translate(" << 22 << " " << top + kPanelH / 2
       << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"11\">" << xml_escape(p.unit) << "</text>\n";
  }

  // Step segments over each row's interval: a row is an average over it, not an instant.
  std::string points(const Series& s, const std::function<double(double)>& y_of, std::size_t from, std::size_t to,
                     bool reverse = false) const {
    std::string out;
    for (std::size_t n = from; n < to; ++n) {
      const std::size_t k = reverse ? to - 1 - (n - from) : n;
      const TimelineRow& row = r_.timeline[k];
      const std::string y = fmt("%.1f", y_of(s[k]));
      const std::string a = fmt("%.1f", x_of(sim::to_seconds(row.end_ns - row.length_ns)));
      const std::string b = fmt("%.1f", x_of(sim::to_seconds(row.end_ns)));
      out += (out.empty() ? "" : " ") + (reverse ? b : a) + "," + y + " " + (reverse ? a : b) + "," + y;
    }
    return out;
  }

  // Runs of rows with a value (a line breaks where a row has none).
  static std::vector<std::pair<std::size_t, std::size_t>> runs(const Series& s) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t k = 0; k < s.size();) {
      if (std::isnan(s[k])) {
        ++k;
        continue;
      }
      std::size_t e = k;
      while (e < s.size() && !std::isnan(s[e])) ++e;
      out.emplace_back(k, e);
      k = e;
    }
    return out;
  }

  void line(const Line& l, const std::function<double(double)>& y_of, double top, std::size_t index) {
    if (!l.lo.empty()) {
      for (const auto& [a, b] : runs(l.lo))
        o_ << "<polygon fill=\"" << l.colour << "\" fill-opacity=\"0.15\" stroke=\"none\" points=\""
           << points(l.lo, y_of, a, b) << " " << points(l.hi, y_of, a, b, true) << "\"/>\n";
    }
    for (const auto& [a, b] : runs(l.y)) {
      o_ << "<polyline fill=\"none\" stroke=\"" << l.colour << "\" stroke-width=\"" << l.width << "\"";
      if (!l.dash.empty()) o_ << " stroke-dasharray=\"" << l.dash << "\"";
      o_ << " points=\"" << points(l.y, y_of, a, b) << "\"><title>" << xml_escape(l.label) << "</title></polyline>\n";
    }
    if (index >= kLegendMax) return;  // no entry, or no room for one
    const double ly = top + 8 + 16 * static_cast<double>(index);
    o_ << "<line x1=\"" << kLeft + kPlotW + 14 << "\" y1=\"" << ly << "\" x2=\"" << kLeft + kPlotW + 34 << "\" y2=\""
       << ly << "\" stroke=\"" << l.colour << "\" stroke-width=\"" << std::max(2.0, l.width) << "\"";
    if (!l.dash.empty()) o_ << " stroke-dasharray=\"" << l.dash << "\"";
    o_ << "/>\n<text x=\"" << kLeft + kPlotW + 40 << "\" y=\"" << ly << "\" dominant-baseline=\"middle\" font-size=\"11\">"
       << xml_escape(l.label) << "</text>\n";
  }

  // Timeline actions (faults, QoS changes): a dashed line through every panel, labelled above
  // the first, labels staggered so that neighbours do not overlap.
  void actions(double height) {
    int k = 0;
    for (const auto& a : r_.actions) {
      const double t = sim::to_seconds(a.at_ns);
      if (t > t_max_) continue;  // in a fast-forward
      const std::string x = fmt("%.1f", x_of(t));
      o_ << "<line class=\"action\" data-t=\"" << fmt("%g", t) << "\" x1=\"" << x << "\" y1=\"" << kTop - 22
         << "\" x2=\"" << x << "\" y2=\"" << height - 40 << "\" stroke=\"#b00020\" stroke-dasharray=\"5 4\" stroke-opacity=\"0.7\"/>\n";
      o_ << "<text x=\"" << x << "\" y=\"" << kTop - 40 + 11 * (k % 2) << "\" text-anchor=\"middle\" font-size=\"10\" fill=\"#b00020\">"
         << xml_escape(a.description) << "<title>" << xml_escape(a.key + " at " + fmt("%g", t) + " s: " + a.description +
                                                                 (a.note.empty() ? "" : " (" + a.note + ")"))
         << "</title></text>\n";
      ++k;
    }
  }

  const ScenarioReport& r_;
  std::vector<Panel> panels_;
  double t_max_ = 1;
  std::ostringstream o_;
};

std::string number_tick(double v) { return grouped(v, v != 0 && std::fabs(v) < 10 ? 1 : 0); }
std::string latency_tick(double us) {
  return us >= 1000 ? grouped(us / 1000, us >= 10000 ? 0 : 1) + " ms" : grouped(us, us < 10 ? 1 : 0) + " µs";
}

// The per-volume panels (IOPS, MB/s, latency), one line (or band) per group.
void volume_panels(const ScenarioReport& r, std::vector<Panel>& out) {
  const std::vector<Group> groups = group_volumes(r);
  const bool detail = has_detail(r);
  Panel iops{"iops", "IOPS per volume (read + write)", "IOPS", false, number_tick, {}};
  Panel mbps{"mbps", "MB/s per volume (read + write)", "MB/s", false, number_tick, {}};
  Panel latency{"latency", "Latency per volume, log scale: p99 solid (legend), p50 dashed, max dotted", "latency", true, latency_tick, {}};
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    const std::string colour = kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
    Line l{g.label, colour, "", 1.5, true, {}, {}, {}};
    fill_group(l, g, r, iops_of);
    iops.lines.push_back(l);
    if (!detail) continue;
    Line m{g.label, colour, "", 1.5, true, {}, {}, {}};
    fill_group(m, g, r, mbps_of);
    mbps.lines.push_back(m);
    struct Style {
      const char* suffix;
      float TimelineRow::VolumeDetail::*field;
      const char* dash;
      double width;
    };
    for (const Style& s : {Style{" p99", &TimelineRow::VolumeDetail::latency_us_p99, "", 1.8},
                           Style{" p50", &TimelineRow::VolumeDetail::latency_us_p50, "6 3", 1.2},
                           Style{" max", &TimelineRow::VolumeDetail::latency_us_max, "1 3", 1.0}}) {
      // One legend entry per group (its p99); the title names the three styles.
      Line x{s.dash[0] == '\0' ? g.label : g.label + s.suffix, colour, s.dash, s.width, s.dash[0] == '\0', {}, {}, {}};
      fill_group(x, g, r, [&s](const TimelineRow& row, std::size_t v) { return latency_of(row, v, s.field); });
      // A band per style would bury the chart: the latency lines are the group's mean only.
      x.lo.clear();
      x.hi.clear();
      latency.lines.push_back(std::move(x));
    }
  }
  out.push_back(std::move(iops));
  if (detail) {
    out.push_back(std::move(mbps));
    out.push_back(std::move(latency));
  }
}

// The array-wide panels: progress (rebuild, pool allocation) and the write cache.
void array_panels(const ScenarioReport& r, std::vector<Panel>& out) {
  Panel progress{"progress", "Rebuild progress and pool allocation", "%", false, number_tick, {}};
  Line rebuild{"rebuild %", "#d62728", "", 1.8, true, {}, {}, {}};
  Line pool{"pool raw allocated %", "#555555", "4 3", 1.2, true, {}, {}, {}};
  // Decimal units: the ticks are round decimal steps (nice_step).
  Panel cache{"cache", "Write cache dirty (both controllers together)", "dirty", false,
              [](double v) {
                return v >= 1e9 ? grouped(v / 1e9, 1) + " GB" : v >= 1e6 ? grouped(v / 1e6, 0) + " MB" : grouped(v, 0) + " B";
              },
              {}};
  Line dirty{"dirty bytes", "#1f77b4", "", 1.5, true, {}, {}, {}};
  bool any_rebuild = false;
  for (const auto& row : r.timeline) {
    rebuild.y.push_back(row.rebuild_percent ? *row.rebuild_percent : std::nan(""));
    any_rebuild = any_rebuild || row.rebuild_percent.has_value();
    pool.y.push_back(row.pool_allocated_percent);
    dirty.y.push_back(static_cast<double>(row.cache_dirty_bytes));
  }
  if (any_rebuild) progress.lines.push_back(std::move(rebuild));
  progress.lines.push_back(std::move(pool));
  cache.lines.push_back(std::move(dirty));
  out.push_back(std::move(progress));
  out.push_back(std::move(cache));
}

// --- HTML -------------------------------------------------------------------------------

std::string cell(const std::string& s) { return "<td>" + xml_escape(s) + "</td>"; }
std::string num(const std::string& s) { return "<td class=\"n\">" + xml_escape(s) + "</td>"; }

void html_volumes(std::ostringstream& o, const ScenarioReport& r) {
  o << "<h2>Volumes (at the end)</h2>\n<table><tr><th>name</th><th>RAID</th><th>provisioning</th><th>size</th>"
       "<th>allocated</th><th>state</th><th>controller</th><th>QoS min / max / burst</th><th>created by</th></tr>\n";
  auto q = [](const std::optional<std::int64_t>& v) { return v ? grouped(static_cast<double>(*v), 0) : "-"; };
  for (const auto& v : r.volumes)
    o << "<tr>" << cell(v.name) << cell(std::string(raid::raid_type_name(v.raid_type)))
      << cell(std::string(controller::to_string(v.provisioning))) << num(config::human_bytes(v.capacity_bytes, 1))
      << num(config::human_bytes(v.allocated_bytes, 1)) << cell(std::string(controller::to_string(v.state)))
      << cell(v.preferred_controller == 1 ? "A" : "B") << cell(q(v.qos.min_iops) + " / " + q(v.qos.max_iops) + " / " + q(v.qos.burst_iops))
      << cell(v.created_by) << "</tr>\n";
  o << "</table>\n";
}

void html_workloads(std::ostringstream& o, const ScenarioReport& r) {
  o << "<h2>Workloads</h2>\n<table><tr><th>workload</th><th>read IOPS</th><th>write IOPS</th><th>MB/s</th>"
       "<th>mean</th><th>p99</th><th>max</th><th>errors</th></tr>\n";
  std::vector<const WorkloadTotals*> all;
  for (const auto& w : r.workloads) all.push_back(&w);
  all.push_back(&r.array);
  for (const WorkloadTotals* w : all) {
    const sim::Time length = w->end_ns - w->start_ns;
    const auto& rd = w->direction[0];
    const auto& wr = w->direction[1];
    o << "<tr>" << cell(w->name) << num(grouped(per_second(static_cast<double>(rd.ios), length), 0))
      << num(grouped(per_second(static_cast<double>(wr.ios), length), 0))
      << num(grouped(per_second(static_cast<double>(rd.bytes + wr.bytes), length) / 1e6, 1))
      << num(latency_tick(w->latency_ns.mean() / 1e3)) << num(latency_tick(static_cast<double>(w->latency_ns.percentile(99)) / 1e3))
      << num(latency_tick(static_cast<double>(w->latency_ns.max()) / 1e3)) << num(std::to_string(w->errors)) << "</tr>\n";
  }
  o << "</table>\n";
}

void html_actions_events(std::ostringstream& o, const ScenarioReport& r) {
  o << "<h2>Timeline actions</h2>\n<table><tr><th>t (s)</th><th>entry</th><th>action</th><th>note</th></tr>\n";
  for (const auto& a : r.actions)
    o << "<tr>" << num(fmt("%.3f", sim::to_seconds(a.at_ns))) << cell(a.key) << cell(a.description) << cell(a.note) << "</tr>\n";
  o << "</table>\n";
  constexpr std::size_t kMaxEvents = 1000;
  o << "<h2>Events (" << r.events.size() << (r.events.size() > kMaxEvents ? ", the first 1,000 shown" : "") << ")</h2>\n"
    << "<table><tr><th>t (s)</th><th>severity</th><th>category</th><th>object</th><th>message</th></tr>\n";
  for (std::size_t i = 0; i < std::min(kMaxEvents, r.events.size()); ++i) {
    const auto& e = r.events[i];
    const std::string sev(controller::to_string(e.severity));
    o << "<tr class=\"" << sev << "\">" << num(fmt("%.3f", sim::to_seconds(e.time_ns))) << cell(sev) << cell(e.category)
      << cell(e.object) << cell(e.message) << "</tr>\n";
  }
  o << "</table>\n";
}

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1150px}
h1{margin-bottom:.2em}.meta{color:#555}table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}
th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.warning td{background:#fff8e1}tr.error td,tr.critical td{background:#fdecea}.chart{border:1px solid #ddd}
.warn{color:#b00020})";

}  // namespace

std::string format_scenario_svg(const ScenarioReport& r) {
  std::vector<Panel> panels;
  volume_panels(r, panels);
  array_panels(r, panels);
  return ChartWriter(r, std::move(panels)).svg();
}

std::string format_scenario_html(const ScenarioReport& r) {
  std::ostringstream o;
  o << "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << xml_escape(r.name)
    << " — afasim scenario report</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  o << "<h1>" << xml_escape(r.name) << "</h1>\n<p>" << xml_escape(r.description) << "</p>\n";
  o << "<p class=\"meta\">" << xml_escape(r.system_model) << " (" << xml_escape(r.system) << "), seed " << r.seed
    << ", " << fmt("%.3f", sim::to_seconds(r.end_ns)) << " s simulated (" << xml_escape(r.end_reason)
    << "), report interval " << fmt("%g", sim::to_seconds(r.interval_ns)) << " s, afasim " << xml_escape(r.afasim_version)
    << ", file " << xml_escape(r.file_name) << "</p>\n";
  for (const auto& w : r.warnings) o << "<p class=\"warn\">warning: " << xml_escape(w) << "</p>\n";
  o << "<h2>Over time</h2>\n<p class=\"meta\">Every chart shares the time axis; dashed red lines mark the timeline's "
       "actions. Volumes whose lines could not be told apart are drawn as one line, their mean, with a band from "
       "their minimum to their maximum.</p>\n<div class=\"chart\">\n"
    << format_scenario_svg(r) << "</div>\n";
  html_volumes(o, r);
  html_workloads(o, r);
  html_actions_events(o, r);
  o << "</body>\n</html>\n";
  return o.str();
}

}  // namespace afasim::workload
