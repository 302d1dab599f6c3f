// The text and JSON-lines forms of a trace replay's report (trace_replay.h).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "workload/trace_replay.h"
#include "config/file_text.h"
#include "config/json_text.h"

namespace afasim::workload {
namespace {

using nlohmann::ordered_json;

double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// "mean M us, p50 P us, p99 Q us" of a histogram, for the totals.
std::string latency_summary(const sim::Histogram& h) {
  if (h.count() == 0) return "none completed";
  char text[96];
  std::snprintf(text, sizeof text, "mean %.1f us, p50 %.1f us, p99 %.1f us", us(static_cast<std::int64_t>(h.mean())),
                us(h.percentile(50)), us(h.percentile(99)));
  return text;
}

// "p50/p99 µs" of a histogram in the rows' columns, or "-" when it is empty.
std::string percentiles_text(const sim::Histogram& h) {
  if (h.count() == 0) return "         -          -";
  char text[64];
  std::snprintf(text, sizeof text, "%10.1f %10.1f", us(h.percentile(50)), us(h.percentile(99)));
  return text;
}

ordered_json trace_latency_json(const sim::Histogram& h) {
  ordered_json j = ordered_json::object();
  j["count"] = h.count();
  if (h.count() == 0) return j;
  j["mean_us"] = std::round(h.mean() / 10.0) / 100.0;
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    char key[32];  // "p99.9_us"; room for any %g the compiler can imagine
    std::snprintf(key, sizeof key, "p%g_us", p);
    j[key] = us(h.percentile(p));
  }
  j["max_us"] = us(h.max());
  return j;
}

ordered_json stats_json(const TraceStats& s, sim::Time length_ns) {
  ordered_json j = ordered_json::object();
  const double seconds = length_ns > 0 ? sim::to_seconds(length_ns) : 0.0;
  j["ios"] = s.ios;
  j["bytes"] = s.bytes;
  j["trim_bytes"] = s.trim_bytes;
  j["reads"] = s.reads;
  j["writes"] = s.writes;
  j["trims"] = s.trims;
  j["flushes"] = s.flushes;
  j["errors"] = s.errors;
  j["iops"] = seconds > 0 ? std::round(static_cast<double>(s.ios) / seconds * 10) / 10 : 0.0;
  j["mb_per_s"] = seconds > 0 ? std::round(static_cast<double>(s.bytes) / seconds / 1e4) / 100 : 0.0;
  j["latency"] = trace_latency_json(s.latency_ns);
  j["recorded_latency"] = trace_latency_json(s.recorded_latency_ns);
  return j;
}

}  // namespace

std::string format_trace_header(const TraceReader& reader, const TraceReplayOptions& options) {
  char line[256];
  if (options.timing == TraceTiming::kRecorded)
    std::snprintf(line, sizeof line, "afasim trace: %s (%s), as recorded at %gx speed, rows of %g s\n",
                  reader.name().c_str(), std::string(to_string(reader.format())).c_str(), options.speed,
                  sim::to_seconds(options.interval_ns));
  else
    std::snprintf(line, sizeof line, "afasim trace: %s (%s), closed loop at iodepth %d, rows of %g s\n",
                  reader.name().c_str(), std::string(to_string(reader.format())).c_str(), options.iodepth,
                  sim::to_seconds(options.interval_ns));
  // The header in the rows' widths (format_trace_row): it sat 3-6 characters right of them.
  char header[160];
  std::snprintf(header, sizeof header, "%8s %-16s %10s %9s %10s %10s  %10s %10s\n", "time_s", "volume", "IOPS",
                "MB/s", "sim_p50_us", "sim_p99_us", "rec_p50_us", "rec_p99_us");
  return std::string(line) + header;
}

std::string format_trace_row(const TraceRow& row) {
  const double seconds = sim::to_seconds(row.length_ns);
  char line[256];
  std::snprintf(line, sizeof line, "%8.2f %-16s %10.1f %9.2f %s  %s\n", sim::to_seconds(row.start_ns),
                row.volume.c_str(), static_cast<double>(row.stats.ios) / seconds,
                static_cast<double>(row.stats.bytes) / seconds / 1e6,
                percentiles_text(row.stats.latency_ns).c_str(),
                percentiles_text(row.stats.recorded_latency_ns).c_str());
  return line;
}

std::string format_trace_totals(const TraceReport& r) {
  std::string out = "\nTotals over " + std::to_string(sim::to_seconds(r.end_ns)) + " s simulated, " +
                    std::to_string(r.records) + " I/Os replayed";
  if (r.interrupted) out += " (interrupted: the trace was not read to its end)";
  if (r.bad_lines > 0) out += ", " + std::to_string(r.bad_lines) + " bad lines skipped (first: " + r.first_bad + ")";
  if (r.stalls > 0) out += ", " + std::to_string(r.stalls) + " arrivals waited for an I/O slot";
  if (r.reordered > 0) out += ", " + std::to_string(r.reordered) + " records out of time order";
  if (r.io_errors() > 0) out += ", " + std::to_string(r.io_errors()) + " I/Os failed (first: " + r.first_io_error + ")";
  if (r.preflushes > 0) out += ", " + std::to_string(r.preflushes) + " writes after a preflush";
  // The recorded latencies cover only the requests whose Q and C were both seen.
  if (r.unpaired_completions > 0)
    out += ", " + std::to_string(r.unpaired_completions) + " completions (C) without their queued request (Q)";
  if (r.abandoned_requests > 0)
    out += ", " + std::to_string(r.abandoned_requests) + " queued requests (Q) that waited too long for their C";
  out += "\n";
  for (const TraceVolume& v : r.volumes) {
    const TraceStats& s = v.totals;
    const double seconds = r.end_ns > 0 ? sim::to_seconds(r.end_ns) : 1.0;
    char line[512];
    std::snprintf(line, sizeof line,
                  "  %s (device %s): %lld I/Os (%lld reads, %lld writes, %lld trims, %lld flushes, %lld errors), "
                  "%.1f IOPS, %.2f MB/s\n    simulated latency: %s\n",
                  v.volume.c_str(), config::printable(v.device).c_str(), static_cast<long long>(s.ios), static_cast<long long>(s.reads),
                  static_cast<long long>(s.writes), static_cast<long long>(s.trims), static_cast<long long>(s.flushes),
                  static_cast<long long>(s.errors), static_cast<double>(s.ios) / seconds,
                  static_cast<double>(s.bytes) / seconds / 1e6, latency_summary(s.latency_ns).c_str());
    out += line;
    if (s.recorded_latency_ns.count() > 0) {
      std::snprintf(line, sizeof line, "    recorded latency:  %s (%llu responses in the trace)\n",
                    latency_summary(s.recorded_latency_ns).c_str(),
                    static_cast<unsigned long long>(s.recorded_latency_ns.count()));
      out += line;
    }
  }
  return out;
}

std::string trace_row_json(const TraceRow& row) {
  ordered_json j = ordered_json::object();
  j["start_s"] = sim::to_seconds(row.start_ns);
  j["length_s"] = sim::to_seconds(row.length_ns);
  j["device"] = row.device;
  j["volume"] = row.volume;
  j.update(stats_json(row.stats, row.length_ns));
  ordered_json line = ordered_json::object();
  line["row"] = std::move(j);
  return config::dump_json(line) + "\n";
}

std::string trace_totals_json(const TraceReport& r) {
  ordered_json j = ordered_json::object();
  j["file"] = r.file;
  j["format"] = std::string(to_string(r.format));
  j["timing"] = r.timing == TraceTiming::kRecorded ? "recorded" : "closed_loop";
  j["speed"] = r.speed;
  j["iodepth"] = r.iodepth;
  j["records"] = r.records;
  j["bad_lines"] = r.bad_lines;
  j["first_bad"] = r.first_bad;
  j["stalls"] = r.stalls;
  j["reordered"] = r.reordered;
  j["unpaired_completions"] = r.unpaired_completions;
  j["abandoned_requests"] = r.abandoned_requests;
  j["interrupted"] = r.interrupted;
  j["preflushes"] = r.preflushes;
  j["io_errors"] = r.io_errors();
  j["first_io_error"] = r.first_io_error;
  j["end_s"] = sim::to_seconds(r.end_ns);
  ordered_json volumes = ordered_json::array();
  for (const TraceVolume& v : r.volumes) {
    ordered_json o = ordered_json::object();
    o["device"] = v.device;
    o["volume"] = v.volume;
    o.update(stats_json(v.totals, r.end_ns));
    volumes.push_back(std::move(o));
  }
  j["volumes"] = std::move(volumes);
  ordered_json line = ordered_json::object();
  line["totals"] = std::move(j);
  return config::dump_json(line) + "\n";
}

}  // namespace afasim::workload
