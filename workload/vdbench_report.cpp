// Formats of workload/vdbench_runner.h: VDBench's summary, JSON and the latency curve SVG.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <tuple>

#include "workload/report_util.h"
#include "workload/vdbench_runner.h"
#include "config/json_text.h"

namespace afasim::workload {
namespace {

using report::nice_step;
using report::xml_escape;

std::string clock(sim::Time t) {
  const std::int64_t ms = t / sim::kMillisecond;
  char b[32];
  std::snprintf(b, sizeof b, "%02lld:%02lld:%02lld.%03lld", static_cast<long long>(ms / 3600000),
                static_cast<long long>(ms / 60000 % 60), static_cast<long long>(ms / 1000 % 60),
                static_cast<long long>(ms % 1000));
  return b;
}

std::string line(const std::string& when, const std::string& label, const VdInterval& v) {
  char b[256];
  std::snprintf(b, sizeof b,
                "%s %9s %10.1f %8.2f %7.0f %6.2f %8.3f %8.3f %8.3f %8.3f %8.3f %6.1f\n",
                when.c_str(), label.c_str(), v.rate, v.mb_per_second, v.bytes_per_io, v.read_pct,
                v.resp_ms, v.read_resp_ms, v.write_resp_ms, v.resp_max_ms, v.resp_stddev_ms,
                v.queue_depth);
  return b;
}

std::string vdbench_seconds_text(sim::Time t) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", sim::to_seconds(t));
  return b;
}

nlohmann::json interval_json(const VdInterval& v) {
  return {{"interval", v.index},      {"end_s", sim::to_seconds(v.end)},
          {"ios", v.ios},             {"rate", v.rate},
          {"mb_per_second", v.mb_per_second}, {"bytes_per_io", v.bytes_per_io},
          {"read_pct", v.read_pct},   {"resp_ms", v.resp_ms},
          {"read_resp_ms", v.read_resp_ms},   {"write_resp_ms", v.write_resp_ms},
          {"resp_max_ms", v.resp_max_ms},     {"resp_stddev_ms", v.resp_stddev_ms},
          {"queue_depth", v.queue_depth}};
}

std::string number_text(double v) {
  char b[32];
  if (v >= 1e6) std::snprintf(b, sizeof b, "%gM", v / 1e6);
  else if (v >= 1e3) std::snprintf(b, sizeof b, "%gk", v / 1e3);
  else std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace

std::string format_vdbench_summary(const VdbenchReport& r) {
  std::string out = r.file + " on " + r.target + ", seed " + std::to_string(r.seed) +
                    " (afasim, virtual time; time of day is simulated time)\n";
  for (const auto& run : r.runs) {
    out += "\nStarting RD=" + run.rd + "; I/O rate: " + run.rate_label +
           "; elapsed=" + vdbench_seconds_text(run.elapsed) + "; For loops: " + run.for_loops + "\n\n";
    out += "             interval        i/o   MB/sec   bytes   read     resp     read    write"
           "     resp     resp  queue\n";
    out += "                             rate  1024**2     i/o    pct     time     resp     resp"
           "      max   stddev  depth\n";
    for (const auto& v : run.intervals) out += line(clock(v.end), std::to_string(v.index), v);
    out += line(clock(run.intervals.empty() ? run.start : run.intervals.back().end),
                "avg_" + std::to_string(run.avg_from) + "-" + std::to_string(run.avg_to), run.avg);
    if (run.reached_eof) out += "(the run reached the end of its range: seekpct=eof)\n";
  }
  if (!r.device.empty()) {
    out += "\nDevice " + r.target + " after the runs:";
    for (auto it = r.device.begin(); it != r.device.end(); ++it) out += " " + it.key() + "=" + it.value().dump();
    out += "\n";
  }
  return out;
}

void write_vdbench_json(const VdbenchReport& r, const std::function<void(std::string_view)>& sink) {
  // The runs without their intervals, each run's "intervals" a marker where
  // report::write_json_array_member then writes them (review of hostile round 43: a run of
  // 1,000,000 rows as one JSON tree took 2.7 GB); the output is byte for byte that tree's.
  auto tag = [](std::size_t i) { return "@afasim-intervals-" + std::to_string(i) + "@"; };
  nlohmann::json j;
  j["file"] = r.file;
  j["target"] = r.target;
  j["seed"] = r.seed;
  j["runs"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const VdRunResult& run = r.runs[i];
    nlohmann::json x;
    x["rd"] = run.rd;
    x["rate"] = run.rate_label;
    x["curve"] = run.curve;
    x["curve_pct"] = run.curve_pct;
    x["target_rate"] = run.target_rate;
    x["for_loops"] = run.for_loops;
    x["threads"] = run.threads;
    x["start_s"] = sim::to_seconds(run.start);
    x["elapsed_s"] = sim::to_seconds(run.elapsed);
    x["interval_s"] = sim::to_seconds(run.interval);
    x["reached_eof"] = run.reached_eof;
    x["intervals"] = tag(i);
    // The average ends where the text report prints it, at the last interval's end; it is
    // not an interval of its own (its "interval" was 0 and its "end_s" 0.0).
    x["avg"] = interval_json(run.avg);
    x["avg"].erase("interval");
    x["avg"]["end_s"] = sim::to_seconds(run.intervals.empty() ? run.start : run.intervals.back().end);
    x["avg"]["from"] = run.avg_from;
    x["avg"]["to"] = run.avg_to;
    j["runs"].push_back(std::move(x));
  }
  j["device"] = nlohmann::json::parse(r.device.dump());
  const std::string skeleton = config::dump_json(j, 2) + "\n";
  std::size_t from = 0;
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const std::string key = "\"intervals\": \"" + tag(i) + "\"";
    const std::size_t at = skeleton.find(key, from);
    sink(std::string_view(skeleton).substr(from, at - from));
    const auto& intervals = r.runs[i].intervals;
    report::write_json_array_member("intervals", at - (skeleton.rfind('\n', at) + 1), intervals.size(),
                                    [&](std::size_t k) { return config::dump_json(interval_json(intervals[k]), 2); }, sink);
    from = at + key.size();
  }
  sink(std::string_view(skeleton).substr(from));
}

std::string format_vdbench_json(const VdbenchReport& r) {
  std::string out;
  write_vdbench_json(r, [&out](std::string_view s) { out.append(s); });
  return out;
}

namespace {

// One line per rd (and for-loop combination): its curve runs' (rate, response) points.
using CurveLines = std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>;

CurveLines curve_lines(const VdbenchReport& r) {
  CurveLines lines;
  for (const auto& run : r.runs) {
    if (!run.curve || run.curve_pct <= 0) continue;
    const std::string name = run.rd + (run.for_loops.empty() ? "" : " (" + run.for_loops + ")");
    if (lines.empty() || lines.back().first != name) lines.push_back({name, {}});
    lines.back().second.emplace_back(run.avg.rate, run.avg.resp_ms);
  }
  return lines;
}

// Sorts each line's points by rate; returns the largest rate and response over all lines.
std::pair<double, double> sort_and_bound(CurveLines& lines) {
  double xmax = 0, ymax = 0;
  for (auto& [n, pts] : lines) {
    std::sort(pts.begin(), pts.end());
    for (auto [x, y] : pts) {
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
    }
  }
  return {xmax, ymax};
}

}  // namespace

std::string format_vdbench_svg(const VdbenchReport& r) {
  CurveLines lines = curve_lines(r);
  if (lines.empty()) return "";
  // Not a structured binding: the plot's lambdas capture these (clang 14, make fuzz).
  double xmax = 0, ymax = 0;
  std::tie(xmax, ymax) = sort_and_bound(lines);
  xmax = std::max(xmax, 1.0) * 1.05;
  ymax = std::max(ymax, 1e-3) * 1.1;
  const double xs = nice_step(xmax, 6), ys = nice_step(ymax, 6);
  xmax = std::ceil(xmax / xs) * xs;
  ymax = std::ceil(ymax / ys) * ys;
  // Plot area on the left, legend in its own column on the right: it never covers a line.
  const double W = 980, H = 480, L = 80, T = 40, PW = 580, PH = 380;
  auto X = [&](double x) { return L + x / xmax * PW; };
  auto Y = [&](double y) { return T + PH - y / ymax * PH; };
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                 "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"};
  char b[512];
  std::string s;
  std::snprintf(b, sizeof b,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
                "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                W, H);
  s += b;
  std::snprintf(b, sizeof b, "<text x=\"%g\" y=\"22\" font-size=\"15\">%s: average response time versus I/O rate</text>\n",
                L, xml_escape(r.target).c_str());
  s += b;
  for (double x = 0; x <= xmax + 1e-9; x += xs) {
    std::snprintf(b, sizeof b,
                  "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"#ddd\"/>"
                  "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%s</text>\n",
                  X(x), T, X(x), T + PH, X(x), T + PH + 16, number_text(x).c_str());
    s += b;
  }
  for (double y = 0; y <= ymax + 1e-12; y += ys) {
    std::snprintf(b, sizeof b,
                  "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                  L, Y(y), L + PW, Y(y), L - 6, Y(y) + 4, y);
    s += b;
  }
  std::snprintf(b, sizeof b,
                "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"black\"/>\n"
                "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">I/O rate (I/Os per second)</text>\n"
                "<text x=\"18\" y=\"%g\" text-anchor=\"middle\" transform=\"rotate(-90 18 %g)\">average response (ms)</text>\n",
                L, T, PW, PH, L + PW / 2, T + PH + 36, T + PH / 2, T + PH / 2);
  s += b;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const char* c = colors[i % 10];
    std::string pts;
    for (auto [x, y] : lines[i].second) {
      std::snprintf(b, sizeof b, "%.1f,%.1f ", X(x), Y(y));
      pts += b;
    }
    s += "<polyline fill=\"none\" stroke=\"" + std::string(c) + "\" stroke-width=\"2\" points=\"" + pts + "\"/>\n";
    for (auto [x, y] : lines[i].second) {
      std::snprintf(b, sizeof b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", X(x), Y(y), c);
      s += b;
    }
    const double ly = T + 10 + static_cast<double>(i) * 20;
    std::snprintf(b, sizeof b,
                  "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"3\"/>"
                  "<text x=\"%g\" y=\"%g\">%s</text>\n",
                  L + PW + 20, ly, L + PW + 44, ly, c, L + PW + 50, ly + 4, xml_escape(lines[i].first).c_str());
    s += b;
  }
  s += "</svg>\n";
  return s;
}

}  // namespace afasim::workload
