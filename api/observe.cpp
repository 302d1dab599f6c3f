#include "api/observe.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>

#include "api/fields.h"
#include "api/problem.h"
#include "api/request.h"
#include "api/views.h"

namespace afasim::api {
namespace {

using nlohmann::json;
using namespace afasim::controller;

constexpr std::int64_t kEventLimitMax = 1000;

std::optional<Severity> parse_severity(const std::string& s) {
  for (Severity v : {Severity::kInfo, Severity::kWarning, Severity::kError, Severity::kCritical})
    if (to_string(v) == s) return v;
  return std::nullopt;
}

std::set<std::string> split_list(const std::string& s) {
  std::set<std::string> out;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(',', i), s.size());
    if (j > i) out.insert(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// kind=A,B: each a category events have (controller::kEventCategories); an unknown one would
// match nothing and answer an empty list that reads as "no such events".
std::set<std::string> parse_kinds(const std::string& value) {
  std::set<std::string> kinds = split_list(value);
  std::string valid;
  for (std::string_view c : kEventCategories) valid += (valid.empty() ? "" : ", ") + std::string(c);
  if (kinds.empty()) throw bad_request("kind needs at least one category: " + valid);
  for (const std::string& k : kinds) {
    if (is_event_category(k)) continue;
    throw bad_request("kind " + quote_json(k.substr(0, 40)) + " is not an event category; valid: " +
                      valid + " (several: kind=drive,rebuild)");
  }
  return kinds;
}

void refuse_unknown(const std::string& name, const std::string& accepted) {
  throw bad_request("unknown query parameter \"" + name.substr(0, 40) + "\"; accepted here: " + accepted);
}

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

}  // namespace

bool EventQuery::matches(const Event& e) const {
  if (since_ns && e.time_ns < *since_ns) return false;
  if (min_severity && e.severity < *min_severity) return false;
  if (!kinds.empty() && kinds.count(e.category) == 0) return false;
  if (object) {
    const bool prefix = !object->empty() && object->back() == '/';
    if (prefix ? e.object.rfind(*object, 0) != 0 : e.object != *object) return false;
  }
  if (after && e.id <= *after) return false;
  if (before && e.id >= *before) return false;
  return true;
}

EventQuery parse_event_query(const QueryParams& params, bool stream) {
  EventQuery q;
  std::set<std::string> seen;
  const std::string accepted =
      stream ? "since, severity, kind, object, after" : "since, severity, kind, object, after, before, offset, limit";
  for (const auto& [name, value] : params) {
    if (!seen.insert(name).second) throw bad_request("query parameter " + name + " is given twice");
    if (name == "since") {
      q.since_ns = parse_query_integer(name, value, 0, INT64_MAX);
    } else if (name == "severity") {
      q.min_severity = parse_severity(value);
      if (!q.min_severity)
        throw bad_request("severity " + quote_json(value.substr(0, 40)) +
                          " is not a severity; valid: info, warning, error, critical (the least "
                          "severe to show)");
    } else if (name == "kind") {
      q.kinds = parse_kinds(value);
    } else if (name == "object") {
      q.object = value;
    } else if (name == "after") {
      q.after = parse_query_integer(name, value, 0, INT64_MAX);
    } else if (!stream && name == "before") {
      q.before = parse_query_integer(name, value, 1, INT64_MAX);
    } else if (!stream && name == "offset") {
      q.offset = parse_query_integer(name, value, 0, INT64_MAX);
    } else if (!stream && name == "limit") {
      q.limit = parse_query_integer(name, value, 0, kEventLimitMax);
    } else {
      refuse_unknown(name, accepted);
    }
  }
  if (q.after && q.before) throw bad_request("after and before cannot be given together");
  if (q.offset > 0 && (q.after || q.before)) throw bad_request("offset does not go with a cursor (after, before)");
  return q;
}

std::optional<std::int64_t> parse_event_id(std::string_view text) {
  std::int64_t id = -1;
  const char* end = text.data() + text.size();
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  const auto [ptr, ec] = std::from_chars(text.data(), end, id);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return id;
}

std::int64_t last_event_id(const std::string& header) {
  if (const std::optional<std::int64_t> id = parse_event_id(header)) return *id;
  throw bad_request("Last-Event-ID header " + quote_json(header.substr(0, 40)) +
                    " is not an event id: expected the id of the last event received, a whole "
                    "number from 0 to " +
                    std::to_string(INT64_MAX) +
                    " (the stream's \"id:\" lines); leave it out to start with new events");
}

json event_page(const std::vector<Event>& events, const EventQuery& q) {
  json items = json::array();
  std::int64_t total = 0;
  const std::int64_t newest = events.empty() ? 0 : events.back().id;
  // A cursor past the newest event stands for the newest (hostile round 39: echoed back, it
  // left a poller blind to new events until the ids caught up; the stream's was fixed in 36).
  std::int64_t next_after = q.after ? std::min(*q.after, newest) : newest;
  const auto take = [&](const Event& e) {
    if (!q.matches(e)) return;
    if (total >= q.offset && total - q.offset < q.limit) {
      items.push_back(event_view(e));
      if (q.after) next_after = e.id;
    }
    ++total;
  };
  if (q.after) {
    for (const Event& e : events) take(e);  // oldest first
  } else {
    for (auto it = events.rbegin(); it != events.rend(); ++it) take(*it);
  }
  return json{{"items", std::move(items)}, {"total", total}, {"offset", q.offset}, {"limit", q.limit},
              {"next_after", next_after}};
}

PerformanceQuery parse_performance_query(const QueryParams& params) {
  PerformanceQuery q;
  std::set<std::string> seen;
  for (const auto& [name, value] : params) {
    if (!seen.insert(name).second) throw bad_request("query parameter " + name + " is given twice");
    if (name == "since") q.since_ns = parse_query_integer(name, value, 0, INT64_MAX);
    else if (name == "limit") q.limit = static_cast<std::size_t>(parse_query_integer(name, value, 1, 1'000'000));
    else refuse_unknown(name, "since, limit");
  }
  return q;
}

json performance_view(const std::string& object, const PerfSeries& series, bool with_controller_fields) {
  const double per_second = 1e9 / static_cast<double>(series.interval_ns);
  json samples = json::array();
  for (std::size_t i = 0; i < series.samples.size(); ++i) {
    const PerfSample& s = series.samples[i];
    const PerfStamp& t = series.stamps[i];
    const auto rate = [per_second](double v) { return round_to(v * per_second, 0.001); };
    json j = {{"time_ns", t.time_ns},
              {"wall_time", t.wall_ms ? json(rfc3339_ms(*t.wall_ms)) : json(nullptr)},
              {"read_iops", rate(s.read_ios)},
              {"write_iops", rate(s.write_ios)},
              {"iops", rate(static_cast<double>(s.read_ios) + s.write_ios)},
              {"read_bytes_per_second", std::llround(rate(static_cast<double>(s.read_bytes)))},
              {"write_bytes_per_second", std::llround(rate(static_cast<double>(s.write_bytes)))},
              {"bytes_per_second", std::llround(rate(static_cast<double>(s.read_bytes + s.write_bytes)))},
              {"latency_us_mean", round_to(s.latency_us_mean, 0.01)},
              {"latency_us_p99", round_to(s.latency_us_p99, 0.01)},
              {"latency_us_max", round_to(s.latency_us_max, 0.01)},
              {"errors", s.errors}};
    if (with_controller_fields) {
      j["cpu_busy_percent"] = round_to(100.0 * s.cpu_busy_ratio, 0.01);
      j["cache_dirty_bytes"] = s.cache_dirty_bytes;
    }
    samples.push_back(std::move(j));
  }
  return json{{"object", object}, {"interval_ns", series.interval_ns}, {"samples", std::move(samples)}};
}

json alert_view(const Alert& a) {
  return json{{"kind", a.kind},
              {"object", a.object},
              {"severity", std::string(to_string(a.severity))},
              {"message", a.message},
              {"raised_time_ns", a.raised_ns},
              {"raised_event_id", a.raised_event_id}};
}

std::string rfc3339_ms(std::int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];  // room for any int fields (the compiler cannot bound tm's)
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
  return buf;
}

std::string sse_message(const Event& e) {
  return "id: " + std::to_string(e.id) + "\nevent: event\ndata: " +
         event_view(e).dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

}  // namespace afasim::api
