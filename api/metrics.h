// GET /metrics: the array in the Prometheus text exposition format (docs/observability.md
// "Metrics" lists every family).
//
// Two steps, so that the model thread only copies numbers: collect_metrics() reads the
// Array and its Telemetry (model thread only) into prometheus-cpp's MetricFamily values;
// metrics_text() serializes them with prometheus-cpp's TextSerializer on any thread.
// Names follow the Prometheus conventions: the `afasim_` prefix, base units (`_bytes`,
// `_seconds`, `_ratio` for 0..1), `_total` on counters; states are one gauge per state
// label with the current one at 1.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <prometheus/metric_family.h>
#include <string>
#include <vector>

#include "controller/array.h"
#include "controller/telemetry.h"

namespace afasim::api {

// The NBD target's counters (nbd::NbdServerStats, handed over by whoever runs both).
struct NbdMetrics {
  std::int64_t connections_active = 0;
  std::int64_t connections_accepted = 0;
  std::int64_t connections_refused = 0;
  std::int64_t connections_evicted = 0;  // closed in the handshake to give a newcomer the slot
  std::int64_t requests = 0;
  std::int64_t requests_refused = 0;
  std::int64_t protocol_errors = 0;
};

// What the array does not know about itself.
struct MetricsContext {
  std::string system_name;     // --system preset name
  std::string afasim_version;  // "0.1.0"
  std::optional<NbdMetrics> nbd;  // absent: no NBD families
};

// The content type of the text format, version 0.0.4.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Every family, in a fixed order. `telemetry` may be null: the I/O counters and latency
// histograms, which only it keeps, are then left out. Model thread.
std::vector<prometheus::MetricFamily> collect_metrics(const controller::Array& array,
                                                      const controller::Telemetry* telemetry,
                                                      const MetricsContext& context);

// The families in the text format. Any thread.
std::string metrics_text(const std::vector<prometheus::MetricFamily>& families);

}  // namespace afasim::api
