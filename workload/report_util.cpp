#include "workload/report_util.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "config/file_text.h"

namespace afasim::workload::report {

double per_second(double count, sim::Time length_ns) {
  return length_ns <= 0 ? 0 : count * 1e9 / static_cast<double>(length_ns);
}

std::string grouped(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v));
  std::string digits(buf);
  const std::size_t dot = digits.find('.');
  std::string whole = digits.substr(0, dot);
  const std::string fraction = dot == std::string::npos ? "" : digits.substr(dot);
  std::string out;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += ',';
    out += whole[i];
  }
  return (v < 0 && std::round(std::fabs(v) * std::pow(10, decimals)) != 0 ? "-" : "") + out +
         fraction;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void line(std::string& out, const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  char buf[512];
  const int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n >= 0 && static_cast<std::size_t>(n) < sizeof buf) {
    out += buf;
  } else if (n >= 0) {  // longer than the buffer: format again into the string itself
    const std::size_t at = out.size();
    out.resize(at + static_cast<std::size_t>(n) + 1);
    std::vsnprintf(out.data() + at, static_cast<std::size_t>(n) + 1, format, again);
    out.resize(at + static_cast<std::size_t>(n));
  }
  va_end(again);
  out += '\n';
}

std::string xml_escape(const std::string& s) {
  std::string out;
  // Control characters and bytes that are not UTF-8 are not XML 1.0: shown as \xNN (hostile
  // round 24: a sweep name with an escape sequence made the plot not XML); tab and line feed
  // are XML and stay.
  for (char c : config::printable(s, true)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

double nice_step(double max, int ticks) {
  if (max <= 0) return 1;
  const double raw = max / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * magnitude) return m * magnitude;
  return 10 * magnitude;
}

void write_json_array_member(std::string_view key, std::size_t column, std::size_t count,
                             const std::function<std::string(std::size_t)>& element,
                             const std::function<void(std::string_view)>& sink) {
  std::string out = "\"" + std::string(key) + "\": ";
  if (count == 0) {
    sink(out + "[]");
    return;
  }
  const std::string indent(column + 2, ' ');  // the elements, one level in
  out += "[\n";
  for (std::size_t i = 0; i < count; ++i) {
    out += i == 0 ? indent : ",\n" + indent;
    for (const char c : element(i)) {
      out += c;
      if (c == '\n') out += indent;
    }
    if (out.size() >= (1 << 16)) {
      sink(out);
      out.clear();
    }
  }
  sink(out + "\n" + std::string(column, ' ') + "]");
}

}  // namespace afasim::workload::report
