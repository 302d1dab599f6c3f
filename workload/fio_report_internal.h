// Helpers shared by the fio report files (fio_report.cpp, fio_report_text.cpp,
// fio_report_json.cpp). Not a public interface.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/assert.h"
#include "workload/fio_report.h"

namespace afasim::workload::report_detail {

using nlohmann::ordered_json;

// printf into a std::string (the formats are fio's own, from stat.c).
template <typename... Args>
inline std::string sprintf_string(const char* format, Args... args) {
  char buffer[512];
  const int n = std::snprintf(buffer, sizeof buffer, format, args...);
  AFASIM_ASSERT(n >= 0, "format error");
  if (static_cast<std::size_t>(n) < sizeof buffer)
    return std::string(buffer, static_cast<std::size_t>(n));
  std::string out(static_cast<std::size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, args...);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

inline std::size_t digits_of(std::uint64_t v) {
  return std::to_string(v).size();
}

// fio's stats use the sample standard deviation sqrt(S / (n − 1)); sim::Histogram keeps the
// population one. Same data, different divisor.
inline double sample_stddev(const sim::Histogram& h) {
  const auto n = static_cast<double>(h.count());
  if (h.count() < 2) return 0;
  return h.stddev() * std::sqrt(n / (n - 1));
}

// fio's "%f" keys ("99.990000") and 6-decimal floats; rounding here keeps the JSON text short
// and stable whatever the last bits of a double are.
inline double round6(double v) {
  return std::round(v * 1e6) / 1e6;
}

inline const char* const kLatRanges[] = {"2",   "4",   "10",  "20",   "50",   "100",
                            "250", "500", "750", "1000", "2000", ">=2000"};


}  // namespace afasim::workload::report_detail
