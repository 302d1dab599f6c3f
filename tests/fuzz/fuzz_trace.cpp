// Fuzz target: block traces (workload/trace_reader.h), as `afasim trace` reads them. The first
// byte picks the format (detected, or one of the four named) and whether bad lines are skipped;
// the rest is the trace. Every record is read to the end or to the first error.
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "workload/trace_reader.h"
#include "workload/trace_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using afasim::workload::TraceFormat;
  if (size == 0) return 0;
  afasim::workload::TraceReaderOptions options;
  constexpr TraceFormat kFormats[] = {TraceFormat::kFioIolog2, TraceFormat::kFioIolog3, TraceFormat::kBlkparse,
                                      TraceFormat::kMsrCsv, TraceFormat::kDiskSim};
  const int pick = data[0] % 6;
  if (pick < 5) options.format = kFormats[pick];
  options.skip_bad = (data[0] & 0x80) != 0;
  auto in = std::make_unique<std::istringstream>(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  auto reader = afasim::workload::TraceReader::from_stream(std::move(in), "fuzz.trace", options);
  if (!reader.is_ok()) return 0;
  for (;;) {
    auto record = reader.value()->next();
    if (!record.is_ok() || !record.value().has_value()) break;
    (void)afasim::workload::trace_volume_name(record.value()->device);
  }
  return 0;
}
