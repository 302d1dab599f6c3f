// Number and markup helpers shared by the scenario report's forms (scenario_report.cpp:
// text, JSON; scenario_html.cpp: the charts and the HTML page). Pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "sim/time.h"

namespace afasim::workload::report {

// `count` per second over an interval of `length_ns` (0 for an empty interval).
double per_second(double count, sim::Time length_ns);
// 1234567.8 → "1,234,567.8".
std::string grouped(double v, int decimals);
// `format` (printf, one double) applied to `v`.
std::string fmt(const char* format, double v);
// Appends `format` (printf) to `out`, whatever its length, and a newline.
void line(std::string& out, const char* format, ...) __attribute__((format(printf, 2, 3)));
// Text safe inside XML/HTML elements and attribute values.
std::string xml_escape(const std::string& s);
// A round tick step (1, 2 or 5 × 10^k) giving about `ticks` ticks up to `max`.
double nice_step(double max, int ticks);

}  // namespace afasim::workload::report
