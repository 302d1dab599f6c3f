// What the observability endpoints show (docs/api.md "Performance", "Events", "Alerts"),
// independent of the HTTP library: query parsing for the event filters and cursor, and the
// JSON of performance series and alerts.
//
// Parsing throws ApiError (400) on a bad parameter; the view functions read plain values.
// Thread-safe as values are; the Array and Telemetry themselves are read on the model thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/alerts.h"
#include "controller/objects.h"
#include "controller/perf.h"

namespace afasim::api {

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// GET /events (and /events/stream) filters:
//   since=NS        simulated time in ns (as `time_ns`): events at or after it
//   severity=S      at least S: info < warning < error < critical
//   kind=A,B        the event's category is one of these
//   object=O        exactly O ("volume/7"), or every object under it when O ends in '/'
// and the page:
//   after=ID        cursor: events with a larger id, oldest first (new events never shift
//                   it; the answer's next_after continues from the last one returned)
//   before=ID       events with a smaller id, newest first (paging back in time)
//   offset=N        (without a cursor) skip N matching events, newest first
//   limit=N         at most N events, 0..1000, default 100
struct EventQuery {
  std::optional<std::int64_t> since_ns;
  std::optional<controller::Severity> min_severity;
  std::set<std::string> kinds;
  std::optional<std::string> object;
  std::optional<std::int64_t> after;
  std::optional<std::int64_t> before;
  std::int64_t offset = 0;
  std::int64_t limit = 100;

  bool matches(const controller::Event& e) const;
};

// Parses the parameters above; `stream` refuses the paging ones (offset, before, limit),
// which a stream has no use for. Throws ApiError 400 naming the parameter.
EventQuery parse_event_query(const QueryParams& params, bool stream = false);

// The cursor an EventSource sends when it reconnects: the Last-Event-ID header, the id of
// the last event it received (0 or more, as the stream's "id:" lines). Throws ApiError 400
// saying so for anything else (not a whole number, negative, beyond int64).
std::int64_t last_event_id(const std::string& header);
// The same value without the error: nullopt for anything but a whole number 0..INT64_MAX
// (Redfish's SSE answers it in its own error shape).
std::optional<std::int64_t> parse_event_id(std::string_view text);

// The page for `q` from `events` (oldest first, as the Array keeps them):
// {"items": [...], "total": matching events, "limit": N, "next_after": ID} (next_after: the
// id to pass as `after` to continue, the newest event's id when the page is empty).
nlohmann::json event_page(const std::vector<controller::Event>& events, const EventQuery& q);

// GET .../performance parameters: since=NS (samples whose interval ended after it, for
// polling), limit=N (the newest N, 1..1,000,000; default all kept).
struct PerformanceQuery {
  std::optional<std::int64_t> since_ns;
  std::size_t limit = 1'000'000;
};
PerformanceQuery parse_performance_query(const QueryParams& params);

// {"object": "volume/3", "interval_ns": ..., "samples": [{"time_ns", "wall_time",
// "read_iops", "write_iops", "iops", "read_bytes_per_second", "write_bytes_per_second",
// "bytes_per_second", "latency_us_mean", "latency_us_p99", "latency_us_max", "errors"
// [, "cpu_busy_percent", "cache_dirty_bytes"]}]}. `with_controller_fields` adds the last two.
nlohmann::json performance_view(const std::string& object, const controller::PerfSeries& series,
                                bool with_controller_fields);

// {"kind", "object", "severity", "message", "raised_time_ns", "raised_event_id"}.
nlohmann::json alert_view(const controller::Alert& a);

// "2026-12-01T16:30:01.250Z" for Unix time in ms.
std::string rfc3339_ms(std::int64_t unix_ms);

// An event as one Server-Sent Events message: "id: N\nevent: event\ndata: {json}\n\n".
std::string sse_message(const controller::Event& e);

}  // namespace afasim::api
