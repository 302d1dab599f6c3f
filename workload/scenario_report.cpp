// The scenario report's text tables and JSON (scenario_runner.h; the charts and the HTML
// page are in scenario_html.cpp). Pure functions of the report, so the same run prints the
// same bytes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "config/size.h"
#include "sim/assert.h"
#include "workload/report_util.h"
#include "workload/scenario_runner.h"
#include "config/json_text.h"

namespace afasim::workload {
namespace {

using nlohmann::ordered_json;
using sim::Time;
using report::fmt;
using report::grouped;
using report::line;
using report::nice_step;
using report::per_second;
using report::xml_escape;

// --- numbers ----------------------------------------------------------------------------

// `v` rounded to `decimals` places, as a JSON integer when whole (prints "1200", not "1200.0").
ordered_json number(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  const double r = std::round(v * scale) / scale;
  if (r == std::floor(r) && std::fabs(r) < 9e15) return static_cast<std::int64_t>(r);
  return r;
}
ordered_json seconds(Time t) {
  return number(sim::to_seconds(t), 9);
}
ordered_json microseconds(std::int64_t ns) {
  return number(static_cast<double>(ns) / 1e3, 3);
}

std::string human_bytes(std::int64_t bytes) { return config::human_bytes(bytes, 1); }

std::string controller_name(controller::Id id) {
  return id == 1 ? "A" : id == 2 ? "B" : "?";
}

std::string qos_text(const controller::QosSettings& q) {
  auto one = [](const std::optional<std::int64_t>& v) {
    return v ? grouped(static_cast<double>(*v), 0) : "-";
  };
  return one(q.min_iops) + "/" + one(q.max_iops) + "/" + one(q.burst_iops);
}

// --- JSON -------------------------------------------------------------------------------

ordered_json scenario_latency_json(const sim::Histogram& h) {
  ordered_json j;
  j["latency_us_mean"] = number(h.mean() / 1e3, 3);
  j["latency_us_p99"] = microseconds(h.percentile(99));
  j["latency_us_max"] = microseconds(h.max());
  return j;
}

ordered_json direction_json(const DirectionTotals& d, Time length) {
  ordered_json j;
  j["ios"] = d.ios;
  j["bytes"] = d.bytes;
  j["iops"] = number(per_second(static_cast<double>(d.ios), length), 1);
  j["bytes_per_second"] = number(per_second(static_cast<double>(d.bytes), length), 0);
  j.update(scenario_latency_json(d.latency_ns));
  return j;
}

ordered_json totals_json(const WorkloadTotals& w) {
  const Time length = w.end_ns - w.start_ns;
  ordered_json j;
  j["name"] = w.name;
  j["start_s"] = seconds(w.start_ns);
  j["end_s"] = seconds(w.end_ns);
  j["stopped_by_duration"] = w.stopped;
  const auto& r = w.direction[static_cast<std::size_t>(index_of(Direction::kRead))];
  const auto& wr = w.direction[static_cast<std::size_t>(index_of(Direction::kWrite))];
  j["read"] = direction_json(r, length);
  j["write"] = direction_json(wr, length);
  // Only when there were trims: a report of reads and writes reads as it always did.
  const auto& tr = w.direction[static_cast<std::size_t>(index_of(Direction::kTrim))];
  if (tr.ios > 0) j["trim"] = direction_json(tr, length);
  j["iops"] = number(per_second(static_cast<double>(r.ios + wr.ios), length), 1);
  j["bytes_per_second"] = number(per_second(static_cast<double>(r.bytes + wr.bytes), length), 0);
  j.update(scenario_latency_json(w.latency_ns));
  j["errors"] = w.errors;
  j["first_error"] = w.first_error.empty() ? ordered_json(nullptr) : ordered_json(w.first_error);
  return j;
}

ordered_json qos_json(const std::optional<std::int64_t>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

ordered_json volume_json(const ReportVolume& v) {
  ordered_json j;
  j["id"] = v.id;
  j["name"] = v.name;
  j["raid_type"] = std::string(raid::raid_type_name(v.raid_type));
  j["provisioning"] = std::string(controller::to_string(v.provisioning));
  j["capacity_bytes"] = v.capacity_bytes;
  j["allocated_bytes"] = v.allocated_bytes;
  j["state"] = std::string(controller::to_string(v.state));
  j["preferred_controller"] = controller_name(v.preferred_controller);
  j["min_iops"] = qos_json(v.qos.min_iops);
  j["max_iops"] = qos_json(v.qos.max_iops);
  j["burst_iops"] = qos_json(v.qos.burst_iops);
  j["created_by"] = v.created_by;
  return j;
}

ordered_json row_json(const ScenarioReport& report, const TimelineRow& r) {
  ordered_json j;
  j["t_s"] = seconds(r.end_ns);
  j["read_iops"] = number(per_second(static_cast<double>(r.read_ios), r.length_ns), 1);
  j["write_iops"] = number(per_second(static_cast<double>(r.write_ios), r.length_ns), 1);
  j["read_bytes_per_second"] =
      number(per_second(static_cast<double>(r.read_bytes), r.length_ns), 0);
  j["write_bytes_per_second"] =
      number(per_second(static_cast<double>(r.write_bytes), r.length_ns), 0);
  j["errors"] = r.errors;
  j["latency_us_mean"] = microseconds(r.latency_ns_mean);
  j["latency_us_p99"] = microseconds(r.latency_ns_p99);
  j["latency_us_max"] = microseconds(r.latency_ns_max);
  j["rebuild_percent"] = r.rebuild_percent ? number(*r.rebuild_percent, 1) : ordered_json(nullptr);
  j["pool_allocated_bytes"] = r.pool_allocated_bytes;
  j["pool_allocated_percent"] = number(r.pool_allocated_percent, 2);
  ordered_json volumes = ordered_json::object();
  for (std::size_t i = 0; i < report.volumes.size(); ++i)
    volumes[report.volumes[i].name] =
        number(per_second(static_cast<double>(r.volume_ios[i]), r.length_ns), 1);
  j["volume_iops"] = std::move(volumes);
  j["cache_dirty_bytes"] = r.cache_dirty_bytes;
  if (!r.volume_detail.empty()) {
    ordered_json bytes = ordered_json::object(), latency = ordered_json::object();
    for (std::size_t i = 0; i < report.volumes.size(); ++i) {
      const TimelineRow::VolumeDetail& d = r.volume_detail[i];
      bytes[report.volumes[i].name] = number(per_second(static_cast<double>(d.bytes), r.length_ns), 0);
      latency[report.volumes[i].name] = {{"p50", number(d.latency_us_p50, 1)},
                                         {"p99", number(d.latency_us_p99, 1)},
                                         {"max", number(d.latency_us_max, 1)}};
    }
    j["volume_bytes_per_second"] = std::move(bytes);
    j["volume_latency_us"] = std::move(latency);
  }
  return j;
}

// --- text -------------------------------------------------------------------------------

// `text` in lines of at most `width` characters (words kept whole), each after `indent`.
void wrapped(std::string& out, const std::string& text, const std::string& indent,
             std::size_t width) {
  std::istringstream words(text);
  std::string word, current;
  while (words >> word) {
    if (!current.empty() && current.size() + 1 + word.size() > width) {
      out += indent + current + "\n";
      current.clear();
    }
    current += (current.empty() ? "" : " ") + word;
  }
  if (!current.empty()) out += indent + current + "\n";
}

void text_header(std::string& out, const ScenarioReport& r) {
  line(out, "afasim run: %s  (%s, %s, seed %llu)", r.name.c_str(), r.system_model.c_str(),
       r.system.c_str(), static_cast<unsigned long long>(r.seed));
  wrapped(out, r.description, "  ", 96);
  line(out, "  file %s; simulated %.3f s, ended: %s; timeline rows every %lld ms",
       r.file_name.c_str(), sim::to_seconds(r.end_ns), r.end_reason.c_str(),
       static_cast<long long>(r.interval_ns / sim::kMillisecond));
  for (const auto& w : r.warnings) line(out, "  warning: %s", w.c_str());
}

void text_volumes(std::string& out, const ScenarioReport& r) {
  line(out, "\nVolumes (at the end)");
  line(out, "  %4s  %-16s %-6s %-5s %11s %11s %-9s %-4s %-23s %s", "id", "name", "RAID", "prov",
       "capacity", "allocated", "state", "ctrl", "QoS min/max/burst IOPS", "created by");
  for (const auto& v : r.volumes)
    line(out, "  %4lld  %-16s %-6s %-5s %11s %11s %-9s %-4s %-23s %s", static_cast<long long>(v.id),
         v.name.c_str(), std::string(raid::raid_type_name(v.raid_type)).c_str(),
         std::string(controller::to_string(v.provisioning)).c_str(),
         human_bytes(v.capacity_bytes).c_str(), human_bytes(v.allocated_bytes).c_str(),
         std::string(controller::to_string(v.state)).c_str(),
         controller_name(v.preferred_controller).c_str(), qos_text(v.qos).c_str(),
         v.created_by.c_str());
  const auto& p = r.pool;
  line(out, "  pool: %s provisioned, %s allocated (%.2f %% of raw usable space)",
       human_bytes(p.provisioned_bytes).c_str(), human_bytes(p.allocated_bytes).c_str(),
       p.raw_usable_bytes == 0 ? 0.0
                               : 100.0 * static_cast<double>(p.raw_allocated_bytes) /
                                     static_cast<double>(p.raw_usable_bytes));
  std::string unhealthy;
  for (const auto& d : r.drives)
    if (d.state != controller::DriveState::kHealthy)
      unhealthy += (unhealthy.empty() ? "" : ", ") + std::to_string(d.id) + " " +
                   std::string(controller::to_string(d.state));
  line(out, "  drives not healthy: %s", unhealthy.empty() ? "none" : unhealthy.c_str());
}

void text_totals_row(std::string& out, const char* name, const char* dir, const std::string& start,
                     const std::string& end, double ios, double bytes, Time length,
                     const sim::Histogram& h, const std::string& errors) {
  const bool any = h.count() > 0;
  line(out, "  %-16s %-5s %9s %9s %12s %9s %11s %11s %11s %7s", name, dir, start.c_str(),
       end.c_str(), grouped(per_second(ios, length), 1).c_str(),
       grouped(per_second(bytes, length) / 1e6, 1).c_str(),
       any ? grouped(h.mean() / 1e3, 1).c_str() : "-",
       any ? grouped(static_cast<double>(h.percentile(99)) / 1e3, 1).c_str() : "-",
       any ? grouped(static_cast<double>(h.max()) / 1e3, 1).c_str() : "-", errors.c_str());
}

void text_totals(std::string& out, const WorkloadTotals& w) {
  const Time length = w.end_ns - w.start_ns;
  char start[32], end[32];
  std::snprintf(start, sizeof start, "%.3f", sim::to_seconds(w.start_ns));
  std::snprintf(end, sizeof end, "%.3f%s", sim::to_seconds(w.end_ns), w.stopped ? "*" : "");
  const auto& rd = w.direction[0];
  const auto& wr = w.direction[1];
  text_totals_row(out, w.name.c_str(), "read", start, end, static_cast<double>(rd.ios),
                  static_cast<double>(rd.bytes), length, rd.latency_ns, "");
  text_totals_row(out, "", "write", "", "", static_cast<double>(wr.ios),
                  static_cast<double>(wr.bytes), length, wr.latency_ns, "");
  if (const auto& tr = w.direction[2]; tr.ios > 0)
    text_totals_row(out, "", "trim", "", "", static_cast<double>(tr.ios), static_cast<double>(tr.bytes), length,
                    tr.latency_ns, "");
  text_totals_row(out, "", "all", "", "", static_cast<double>(rd.ios + wr.ios),
                  static_cast<double>(rd.bytes + wr.bytes), length, w.latency_ns,
                  std::to_string(w.errors));
  if (!w.first_error.empty()) line(out, "  %-16s first error at %s", "", w.first_error.c_str());
}

void text_workloads(std::string& out, const ScenarioReport& r) {
  line(out, "\nWorkloads (every completed I/O, ramp included; IOPS and MB/s over start..end)");
  line(out, "  %-16s %-5s %9s %9s %12s %9s %11s %11s %11s %7s", "workload", "dir", "start s",
       "end s", "IOPS", "MB/s", "mean us", "p99 us", "max us", "errors");
  for (const auto& w : r.workloads) text_totals(out, w);
  text_totals(out, r.array);
  bool stopped = false;
  for (const auto& w : r.workloads) stopped |= w.stopped;
  if (stopped) line(out, "  * still running when duration_s ended the run");
}

void text_actions(std::string& out, const ScenarioReport& r) {
  if (r.actions.empty()) return;
  line(out, "\nTimeline actions (applied)");
  line(out, "  %9s  %-13s %s", "at s", "entry", "action");
  for (const auto& a : r.actions)
    line(out, "  %9.3f  %-13s %s%s%s", sim::to_seconds(a.at_ns), a.key.c_str(),
         a.description.c_str(), a.note.empty() ? "" : "  -- ", a.note.c_str());
}

std::string latency_text(const TimelineRow& row, std::int64_t ns) {
  return row.latency_count == 0 ? "-" : grouped(static_cast<double>(ns) / 1e3, 1);
}

void text_timeline(std::string& out, const ScenarioReport& r) {
  line(out, "\nTimeline (each row: the interval ending at t; IOPS and MB/s are rates over it)");
  line(out, "  %9s %11s %11s %9s %7s %9s %9s %11s %9s %12s %7s", "t s", "read IOPS", "write IOPS",
       "MB/s", "errors", "mean us", "p99 us", "max us", "rebuild %", "pool alloc", "pool %");
  for (const auto& row : r.timeline) {
    char rebuild[16] = "-";
    if (row.rebuild_percent) std::snprintf(rebuild, sizeof rebuild, "%.1f", *row.rebuild_percent);
    line(out, "  %9.3f %11s %11s %9s %7lld %9s %9s %11s %9s %12s %7.2f",
         sim::to_seconds(row.end_ns),
         grouped(per_second(static_cast<double>(row.read_ios), row.length_ns), 0).c_str(),
         grouped(per_second(static_cast<double>(row.write_ios), row.length_ns), 0).c_str(),
         grouped(
             per_second(static_cast<double>(row.read_bytes + row.write_bytes), row.length_ns) / 1e6,
             1)
             .c_str(),
         static_cast<long long>(row.errors), latency_text(row, row.latency_ns_mean).c_str(),
         latency_text(row, row.latency_ns_p99).c_str(),
         latency_text(row, row.latency_ns_max).c_str(), rebuild,
         human_bytes(row.pool_allocated_bytes).c_str(), row.pool_allocated_percent);
  }
}

void text_volume_iops(std::string& out, const ScenarioReport& r) {
  if (r.volumes.empty()) return;
  line(out, "\nPer-volume IOPS (read + write, each row: the interval ending at t)");
  std::vector<int> widths;
  std::string header = "  " + std::string(9 - 3, ' ') + "t s";
  for (const auto& v : r.volumes) {
    const int w = std::max<int>(10, static_cast<int>(v.name.size()));
    widths.push_back(w);
    header += " " + std::string(static_cast<std::size_t>(w) - v.name.size(), ' ') + v.name;
  }
  out += header + "\n";
  for (const auto& row : r.timeline) {
    char t[32];
    std::snprintf(t, sizeof t, "  %9.3f", sim::to_seconds(row.end_ns));
    std::string s = t;
    for (std::size_t i = 0; i < r.volumes.size(); ++i) {
      const std::string v =
          grouped(per_second(static_cast<double>(row.volume_ios[i]), row.length_ns), 0);
      s += " " +
           std::string(
               static_cast<std::size_t>(std::max<int>(0, widths[i] - static_cast<int>(v.size()))),
               ' ') +
           v;
    }
    out += s + "\n";
  }
}

void text_events(std::string& out, const ScenarioReport& r) {
  line(out, "\nEvents (%zu)", r.events.size());
  line(out, "  %9s  %-8s  %-10s %s", "time s", "severity", "object", "message");
  for (const auto& e : r.events)
    line(out, "  %9.3f  %-8s  %-10s %s", sim::to_seconds(e.time_ns),
         std::string(controller::to_string(e.severity)).c_str(),
         e.object.empty() ? "array" : e.object.c_str(), e.message.c_str());
}

ordered_json optional_number(const std::optional<double>& v, int decimals) {
  return v ? number(*v, decimals) : ordered_json(nullptr);
}

// The run's wear (docs/wear-leveling.md, docs/scenarios.md "wear").
ordered_json wear_json(const ScenarioReport& r) {
  const ScenarioWearReport& w = r.wear;
  const controller::WearSummary& s = w.summary;
  ordered_json j;
  j["policy"] = pool::wear_policy_name(s.policy);
  j["threshold_points"] = w.options.threshold_points;
  j["stagger_gap_points"] = w.options.stagger_gap_points;
  j["max_min_ratio"] = optional_number(s.max_min_ratio, 4);
  j["min_percent"] = number(s.min_percent, 4);
  j["max_percent"] = number(s.max_percent, 4);
  j["mean_percent"] = number(s.mean_percent, 4);
  j["spread_points"] = number(s.spread_points, 4);
  j["adjusted_spread_points"] = number(s.adjusted_spread_points, 4);
  j["most_worn_drive"] = s.most_worn_drive >= 0 ? ordered_json(s.most_worn_drive + 1) : ordered_json(nullptr);
  j["least_worn_drive"] = s.least_worn_drive >= 0 ? ordered_json(s.least_worn_drive + 1) : ordered_json(nullptr);
  j["projected_life_s"] = optional_number(s.projected_life_s, 0);
  j["projected_life_unleveled_s"] = optional_number(s.projected_life_unleveled_s, 0);
  if (w.fast_forward)
    j["fast_forward"] = {{"from_s", seconds(w.fast_forward_from_ns)},
                         {"measured_from_s", seconds(w.measured_from_ns)},
                         {"to_s", seconds(r.end_ns)},
                         {"epoch_s", seconds(w.epoch_ns)}};
  else
    j["fast_forward"] = nullptr;
  j["leveler_traffic"] = {{"moves_started", s.moves.started},
                          {"moves_completed", s.moves.completed},
                          {"moves_aborted", s.moves.aborted},
                          {"bytes_read", s.moves.bytes_read},
                          {"bytes_written", s.moves.bytes_written},
                          {"fast_forward_moves", s.fast_forward_moves},
                          {"fast_forward_bytes", s.fast_forward_move_bytes}};
  ordered_json replacements = ordered_json::array();
  for (const auto& rep : s.replacements)
    replacements.push_back(
        {{"drive", rep.drive + 1},
         {"replaced_s", seconds(rep.replaced_ns)},
         {"spread_at_replacement_points", number(rep.spread_at_replacement_points, 4)},
         {"absorbed_s", rep.absorbed_ns ? seconds(*rep.absorbed_ns) : ordered_json(nullptr)},
         {"absorbed_after_s", rep.absorbed_ns ? seconds(*rep.absorbed_ns - rep.replaced_ns) : ordered_json(nullptr)}});
  j["replacements"] = std::move(replacements);
  ordered_json drives = ordered_json::array();
  for (const auto& d : w.drives)
    drives.push_back({{"id", d.drive + 1},
                      {"in_service", d.in_service},
                      {"percent_endurance_used", number(d.percent_endurance_used, 4)},
                      {"host_bytes_written", d.host_bytes_written},
                      {"nand_bytes_written", d.nand_bytes_written},
                      {"write_amplification", number(d.write_amplification, 4)},
                      {"target_offset_points", number(d.target_offset_points, 4)},
                      {"life_at_current_rate_s", optional_number(d.life_at_current_rate_s, 0)}});
  j["drives"] = std::move(drives);
  ordered_json times = ordered_json::array(), percent = ordered_json::array();
  for (const auto& sample : w.over_time) {
    times.push_back(seconds(sample.t_ns));
    ordered_json row = ordered_json::array();
    for (double p : sample.percent) row.push_back(number(p, 4));
    percent.push_back(std::move(row));
  }
  j["over_time"] = {{"t_s", std::move(times)}, {"percent_by_drive", std::move(percent)}};
  return j;
}

// The least endurance the text shows as more than 0.000 %: a max/min of wear below it (10.918
// beside a min and max both printed 0.000 %) says nothing a reader can check, so it is "-".
// The JSON keeps the exact ratio.
constexpr double kLeastShownPercent = 0.0005;

void text_wear(std::string& out, const ScenarioReport& r) {
  const ScenarioWearReport& w = r.wear;
  const controller::WearSummary& s = w.summary;
  line(out, "\nWear (policy %s, threshold %.2f points%s)", pool::wear_policy_name(s.policy), w.options.threshold_points,
       s.policy == pool::WearPolicy::kStaggered ? (", gap " + fmt("%.1f", w.options.stagger_gap_points)).c_str() : "");
  if (w.fast_forward)
    line(out, "  fast-forward from %.3f s to %.1f days in %.0f s epochs, rates measured from %.3f s",
         sim::to_seconds(w.fast_forward_from_ns), sim::to_seconds(r.end_ns) / 86400, sim::to_seconds(w.epoch_ns),
         sim::to_seconds(w.measured_from_ns));
  line(out, "  endurance used: min %.3f %%, mean %.3f %%, max %.3f %%, spread %.3f points, max/min %s",
       s.min_percent, s.mean_percent, s.max_percent, s.spread_points,
       s.max_min_ratio && s.min_percent >= kLeastShownPercent ? fmt("%.3f", *s.max_min_ratio).c_str() : "-");
  auto years = [](const std::optional<double>& v) { return v ? fmt("%.2f years", *v / (365 * 86400.0)) : "-"; };
  line(out, "  projected life (first SSD at 100 %%): %s with the policy, %s at each SSD's current rate",
       years(s.projected_life_s).c_str(), years(s.projected_life_unleveled_s).c_str());
  line(out, "  leveler traffic: %lld moves (%lld per I/O, %lld in fast-forward; %lld aborted), %s read, %s written",
       static_cast<long long>(s.moves.completed), static_cast<long long>(s.moves.completed - s.fast_forward_moves),
       static_cast<long long>(s.fast_forward_moves), static_cast<long long>(s.moves.aborted),
       human_bytes(s.moves.bytes_read).c_str(), human_bytes(s.moves.bytes_written).c_str());
  for (const auto& rep : s.replacements)
    line(out, "  drive %d replaced at %.1f days (spread %.3f points): %s", rep.drive + 1,
         sim::to_seconds(rep.replaced_ns) / 86400, rep.spread_at_replacement_points,
         rep.absorbed_ns ? ("absorbed after " + fmt("%.1f", sim::to_seconds(*rep.absorbed_ns - rep.replaced_ns) / 86400) +
                            " days")
                               .c_str()
                         : "not absorbed by the end");
  line(out, "  per drive at the end (%% of rated endurance):");
  for (std::size_t i = 0; i < w.drives.size(); i += 10) {
    std::string row = "   ";
    for (std::size_t k = i; k < std::min(i + 10, w.drives.size()); ++k)
      row += fmt(" %2.0f:", static_cast<double>(w.drives[k].drive + 1)) + fmt("%6.2f", w.drives[k].percent_endurance_used);
    line(out, "%s", row.c_str());
  }
  line(out, "  over time:");
  line(out, "  %10s  %8s  %8s  %8s  %8s", "days", "min %", "mean %", "max %", "max/min");
  for (const auto& sample : w.over_time) {
    if (sample.percent.empty()) continue;
    double lo = sample.percent[0], hi = lo, sum = 0;
    for (double p : sample.percent) {
      lo = std::min(lo, p);
      hi = std::max(hi, p);
      sum += p;
    }
    line(out, "  %10.2f  %8.3f  %8.3f  %8.3f  %8s", sim::to_seconds(sample.t_ns) / 86400, lo,
         sum / static_cast<double>(sample.percent.size()), hi,
         lo >= kLeastShownPercent ? fmt("%.3f", hi / lo).c_str() : "-");
  }
}

}  // namespace

namespace {

// The pool's capacity at the end of the run.
ordered_json pool_json(const ScenarioReport& r) {
  ordered_json pool;
  pool["provisioned_bytes"] = r.pool.provisioned_bytes;
  pool["allocated_bytes"] = r.pool.allocated_bytes;
  pool["raw_usable_bytes"] = r.pool.raw_usable_bytes;
  pool["raw_allocated_bytes"] = r.pool.raw_allocated_bytes;
  pool["allocated_percent"] = number(r.pool.raw_usable_bytes == 0
                                         ? 0.0
                                         : 100.0 * static_cast<double>(r.pool.raw_allocated_bytes) /
                                               static_cast<double>(r.pool.raw_usable_bytes),
                                     2);
  return pool;
}

// The rebuild, or null when none ran.
ordered_json rebuild_json(const ScenarioReport& r) {
  if (!r.rebuild.active && r.rebuild.total_bytes == 0) return nullptr;
  ordered_json rb;
  rb["active"] = r.rebuild.active;
  rb["drive"] = r.rebuild.drive + 1;
  rb["percent"] = number(r.rebuild.percent(), 1);
  rb["total_bytes"] = r.rebuild.total_bytes;
  rb["done_bytes"] = r.rebuild.done_bytes;
  rb["stalled_bytes"] = r.rebuild.stalled_bytes;
  rb["started_s"] = seconds(r.rebuild.started_ns);
  return rb;
}

ordered_json events_json(const ScenarioReport& r) {
  ordered_json events = ordered_json::array();
  for (const auto& e : r.events)
    events.push_back({{"id", e.id},
                      {"time_s", seconds(e.time_ns)},
                      {"severity", std::string(controller::to_string(e.severity))},
                      {"category", e.category},
                      {"object", e.object},
                      {"message", e.message}});
  return events;
}

// Where write_scenario_json puts the timeline, row by row: a string no other member can
// dump to unescaped (a user's text has its quotes escaped).
// nlohmann writes the member's control characters as \u0001.
constexpr const char* kTimelineMarker = R"("timeline": "\u0001afasim-timeline\u0001")";

ordered_json report_json(const ScenarioReport& r, bool timeline) {
  ordered_json j;
  j["schema"] = "afasim.scenario-report/1";
  j["afasim_version"] = r.afasim_version;
  ordered_json s;
  s["name"] = r.name;
  s["description"] = r.description;
  s["file"] = r.file_name;
  s["system"] = r.system;
  s["system_model"] = r.system_model;
  s["seed"] = r.seed;
  s["duration_s"] = r.duration_ns ? seconds(*r.duration_ns) : ordered_json(nullptr);
  s["interval_ms"] = r.interval_ns / sim::kMillisecond;
  j["scenario"] = std::move(s);
  j["end_s"] = seconds(r.end_ns);
  j["end_reason"] = r.end_reason;
  j["warnings"] = r.warnings;
  ordered_json volumes = ordered_json::array();
  for (const auto& v : r.volumes) volumes.push_back(volume_json(v));
  j["volumes"] = std::move(volumes);
  ordered_json workloads = ordered_json::array();
  for (const auto& w : r.workloads) workloads.push_back(totals_json(w));
  j["workloads"] = std::move(workloads);
  j["array"] = totals_json(r.array);
  j["pool"] = pool_json(r);
  j["rebuild"] = rebuild_json(r);
  ordered_json drives = ordered_json::array();
  for (const auto& d : r.drives)
    drives.push_back({{"id", d.id},
                      {"datapac", d.datapac_id},
                      {"slot", d.slot},
                      {"state", std::string(controller::to_string(d.state))}});
  j["drives"] = std::move(drives);
  ordered_json actions = ordered_json::array();
  for (const auto& a : r.actions)
    actions.push_back(
        {{"key", a.key}, {"at_s", seconds(a.at_ns)}, {"action", a.description}, {"note", a.note}});
  j["actions"] = std::move(actions);
  if (timeline) {
    ordered_json rows = ordered_json::array();
    for (const auto& row : r.timeline) rows.push_back(row_json(r, row));
    j["timeline"] = std::move(rows);
  } else {
    j["timeline"] = "\u0001afasim-timeline\u0001";
  }
  j["events"] = events_json(r);
  j["wear"] = wear_json(r);
  return j;
}

}  // namespace

ordered_json scenario_to_json(const ScenarioReport& r) { return report_json(r, true); }

void write_scenario_json(const ScenarioReport& report, const std::function<void(std::string_view)>& write) {
  // The rows dumped one at a time, as nlohmann would lay them out inside the report (members
  // at 6 spaces): the whole tree of a 1,000,000-row timeline took ~3 GB (hostile review 42).
  const std::string text = config::dump_json(report_json(report, false), 2);
  const std::size_t at = text.find(kTimelineMarker);
  AFASIM_ASSERT(at != std::string::npos, "write_scenario_json: the timeline marker is missing");
  write(std::string_view(text).substr(0, at));
  report::write_json_array_member("timeline", 2, report.timeline.size(),
                                  [&](std::size_t i) { return config::dump_json(row_json(report, report.timeline[i]), 2); }, write);
  write(std::string_view(text).substr(at + std::strlen(kTimelineMarker)));
  write("\n");
}

std::string format_scenario_json(const ScenarioReport& report) {
  std::string out;
  write_scenario_json(report, [&out](std::string_view s) { out += s; });
  return out;
}

std::string format_scenario_text(const ScenarioReport& report) {
  std::string out;
  text_header(out, report);
  text_volumes(out, report);
  text_workloads(out, report);
  text_actions(out, report);
  text_timeline(out, report);
  text_volume_iops(out, report);
  text_wear(out, report);
  text_events(out, report);
  return out;
}

}  // namespace afasim::workload
