// The charts and the HTML page of a scenario report (workload/scenario_html.cpp), on reports
// the test builds by hand: lines that cannot be told apart are grouped, a report without
// per-volume detail keeps its IOPS panel only, names are escaped.
#include <doctest/doctest.h>

#include <string>

#include "workload/scenario_runner.h"

using namespace afasim;
using namespace afasim::workload;

namespace {

// `rows` one-second rows; volume i does iops[i] reads of 4 KiB at latency_us[i] every second.
ScenarioReport report(const std::vector<std::string>& names, const std::vector<double>& iops,
                      const std::vector<float>& latency_us, int rows = 10, bool detail = true) {
  ScenarioReport r;
  r.name = "hand-made";
  r.system_model = "ISE 860 G3";
  r.interval_ns = sim::kSecond;
  for (const auto& n : names) {
    ReportVolume v;
    v.name = n;
    r.volumes.push_back(v);
  }
  for (int k = 1; k <= rows; ++k) {
    TimelineRow row;
    row.end_ns = k * sim::kSecond;
    row.length_ns = sim::kSecond;
    for (std::size_t i = 0; i < names.size(); ++i) {
      row.volume_ios.push_back(static_cast<std::int64_t>(iops[i]));
      if (detail)
        row.volume_detail.push_back({static_cast<std::int64_t>(iops[i]) * 4096, latency_us[i] * 0.8f,
                                     latency_us[i], latency_us[i] * 1.5f});
    }
    r.timeline.push_back(row);
  }
  r.end_ns = rows * sim::kSecond;
  AppliedAction a;
  a.key = "timeline[0]";
  a.at_ns = 3 * sim::kSecond;
  a.description = "fault drive_fail drive 1";
  r.actions.push_back(a);
  return r;
}

std::string legend(const std::string& svg, const std::string& panel) {
  const auto a = svg.find("<g id=\"panel-" + panel + "\">");
  REQUIRE(a != std::string::npos);
  return svg.substr(a, svg.find("</g>", a) - a);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("eight equal neighbours are one line with a band; the victim keeps its own") {
  // qos-noisy-neighbours' shape: a victim at 20,000 IOPS, eight volumes at ~30,000 (within
  // 1 % of each other: the same line at any chart size).
  std::vector<std::string> names = {"victim"};
  std::vector<double> iops = {20000};
  std::vector<float> lat = {1500};
  for (int i = 1; i <= 8; ++i) {
    names.push_back("noisy" + std::to_string(i));
    iops.push_back(30000 + 30 * i);
    lat.push_back(3000);
  }
  const std::string svg = format_scenario_svg(report(names, iops, lat));
  const std::string p = legend(svg, "iops");
  CHECK(p.find(">victim</text>") != std::string::npos);
  CHECK(p.find(">noisy1, noisy2 +6 (8 volumes)</text>") != std::string::npos);
  CHECK(count(p, "<polyline") == 2);
  CHECK(count(p, "<polygon") == 1);  // the group's min-max band
  // Latency: three lines (p99, p50, max) per group, one legend entry per group.
  CHECK(count(legend(svg, "latency"), "<polyline") == 6);
  const std::string l = legend(svg, "latency");
  CHECK(l.find(">victim</text>") != std::string::npos);
  CHECK(l.find(">victim p50</text>") == std::string::npos);  // in the title's key, not the legend
  CHECK(l.find("<title>victim p50</title>") != std::string::npos);
}

TEST_CASE("volumes that differ stay apart, by IOPS or by latency") {
  const std::string by_iops = format_scenario_svg(report({"a", "b"}, {1000, 1200}, {500, 500}));
  CHECK(count(legend(by_iops, "iops"), "<polyline") == 2);
  // Same IOPS, p99 twice as high: told apart on the latency panel, so not grouped.
  const std::string by_latency = format_scenario_svg(report({"a", "b"}, {1000, 1000}, {500, 1000}));
  CHECK(count(legend(by_latency, "iops"), "<polyline") == 2);
  CHECK(by_latency.find("(2 volumes)") == std::string::npos);
}

TEST_CASE("without per-volume detail the chart keeps IOPS, progress and cache panels") {
  const std::string svg = format_scenario_svg(report({"a"}, {1000}, {500}, 10, false));
  CHECK(svg.find("panel-iops") != std::string::npos);
  CHECK(svg.find("panel-mbps") == std::string::npos);
  CHECK(svg.find("panel-latency") == std::string::npos);
  CHECK(svg.find("panel-cache") != std::string::npos);
}

TEST_CASE("the HTML page holds the charts and the tables, names escaped, no script") {
  ScenarioReport r = report({"a<b>&c"}, {1000}, {500});
  r.description = "x < y";
  const std::string html = format_scenario_html(r);
  CHECK(html.rfind("<!doctype html>", 0) == 0);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<svg ") != std::string::npos);
  CHECK(html.find("a&lt;b&gt;&amp;c") != std::string::npos);
  CHECK(html.find("a<b>") == std::string::npos);
  CHECK(html.find("<p>x &lt; y</p>") != std::string::npos);
  for (const char* h : {"Over time", "Volumes (at the end)", "Workloads", "Timeline actions", "Events ("})
    CHECK_MESSAGE(html.find(std::string("<h2>") + h) != std::string::npos, h);
  CHECK(html.find("class=\"action\" data-t=\"3\"") != std::string::npos);
}
