// Helpers the trace formats' parsers share (trace_reader.cpp, trace_blkparse.cpp). Not
// part of the reader's interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"
#include "workload/trace_reader.h"

namespace afasim::workload::trace_detail {

using sim::Result;

inline constexpr std::int64_t kSectorBytes = 512;
inline constexpr const char* kBeyondSpan = "more than 31 years (10^18 ns) from the first record";

// The fields of `line`: split at blanks (and CR), or at `sep` with each field trimmed.
std::vector<std::string_view> tokens(std::string_view line, char sep = 0);
// A whole number written in digits, or nullopt.
std::optional<std::int64_t> integer(std::string_view s);
// A finite number, or nullopt.
std::optional<double> number(std::string_view s);
// "" when `text` is a non-negative number (a whole one when `whole`), else what is wrong with
// it, naming `field`.
std::string number_problem(std::string_view field, std::string_view text, bool whole);
// Whether `t` begins as a blkparse event line: "MAJ,MIN CPU SEQ SECONDS ...".
bool looks_like_blkparse(const std::vector<std::string_view>& t);
std::string bad(std::string_view what);
// Why TraceReader::relative(ns) refused `ns`.
const char* beyond(__int128 ns);
// A non-negative time in some unit (fio µs, blkparse s, DiskSim ms) to whole nanoseconds; at
// or past 2^63 ns, TraceReader::kMaxTimeNs + 1, which relative() refuses.
__int128 to_ns(double value, double ns_per_unit);

}  // namespace afasim::workload::trace_detail
