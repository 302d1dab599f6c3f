// The reliability report for people (text) and for programs (JSON), as `afasim run` prints
// it for a reliability scenario (docs/reliability.md "The report").
// Pure; thread-safe.
#pragma once

#include <string>

#include "reliability/simulate.h"

namespace afasim::reliability {

std::string format_reliability_text(const ReliabilityReport& report);
// {"schema": "afasim.reliability-report/1", ...}; unbounded interval ends are null.
std::string format_reliability_json(const ReliabilityReport& report);

}  // namespace afasim::reliability
