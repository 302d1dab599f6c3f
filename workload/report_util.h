// Number and markup helpers shared by the scenario report's forms (scenario_report.cpp:
// text, JSON; scenario_html.cpp: the charts and the HTML page). Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

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

// Hands `sink` the member `"KEY": [...]` of `count` elements, element(i) each (an element's
// config::dump_json(…, 2) text), laid out as nlohmann's dump(2) lays it out with the member at
// column `column`: an output of a million
// rows is written without a JSON tree of them all (a 1,000,000-row timeline took ~3 GB, a
// vdbench file of 1,000,000 intervals 2.7 GB). The caller dumps the rest of the document with
// a marker in the member's place and writes this where the marker is.
void write_json_array_member(std::string_view key, std::size_t column, std::size_t count,
                             const std::function<std::string(std::size_t)>& element,
                             const std::function<void(std::string_view)>& sink);

}  // namespace afasim::workload::report
