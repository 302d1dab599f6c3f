// The scenario timeline (scenario.h "Timeline"): each action read and checked, and its
// one-line description.
#include <sstream>

#include "workload/scenario_loader.h"

namespace afasim::workload {
namespace scenario_detail {

void Loader::timeline(const json& list) {
  for (std::size_t i = 0; i < list.size(); ++i)
    s.timeline.push_back(action(list[i], at_index("timeline", i)));
}

TimelineAction Loader::action(const json& a, const std::string& path) {
  r.object(a, path, {"at_s", "note", "fault", "set_volume", "set_qos_policy"});
  TimelineAction t;
  t.key = path;
  if (!a.contains("at_s")) r.fail(join(path, "at_s"), "missing");
  t.at_ns = r.seconds(a.at("at_s"), join(path, "at_s"), false);
  if (a.contains("note")) t.note = r.text(a, path, "note");
  const int kinds = a.contains("fault") + a.contains("set_volume") + a.contains("set_qos_policy");
  if (kinds != 1)
    r.fail(path, kinds == 0 ? "needs one action: \"fault\", \"set_volume\" or \"set_qos_policy\""
                            : "has more than one action; give one per entry");
  if (a.contains("fault")) {
    t.kind = TimelineActionKind::kFault;
    t.action_key = join(path, "fault");
    fault(a.at("fault"), t.action_key, t.fault);
  } else if (a.contains("set_volume")) {
    t.kind = TimelineActionKind::kSetVolume;
    t.action_key = join(path, "set_volume");
    set_volume(a.at("set_volume"), t.action_key, t.volume_change);
  } else {
    t.kind = TimelineActionKind::kSetQosPolicy;
    t.action_key = join(path, "set_qos_policy");
    set_policy(a.at("set_qos_policy"), t.action_key, t.policy_change);
  }
  return t;
}

void Loader::fault(const json& f, const std::string& path, controller::FaultSpec& out) {
  r.object(f, path, {"type", "drive", "latency_multiplier", "controller"});
  out.type = r.required_text(f, path, "type", 64);
  // The type takes exactly the fields controller::kFaultTypes gives it, as in the API.
  const controller::FaultTypeInfo* known = controller::find_fault_type(out.type);
  if (known == nullptr)
    r.fail(join(path, "type"), "unknown fault type " + in_quotes(out.type) +
                                   " (known: " + controller::fault_type_names() + ")");
  const unsigned fields = known->fields;
  if (f.contains("drive")) {
    if (!(fields & controller::kFaultDrive))
      r.fail(join(path, "drive"), "does not apply to " + out.type);
    const std::int64_t drives = s.system.drive_count();
    const json& d = f.at("drive");
    if (!d.is_number_integer())
      r.fail(join(path, "drive"), "must be a drive id (a whole number, written without a decimal point or exponent), got " +
                                      (d.is_number() ? d.dump() : type_name(d)));
    // nlohmann holds every non-negative integer as unsigned, negative ones as signed.
    if (!d.is_number_unsigned() || d.get<std::uint64_t>() < 1 ||
        d.get<std::uint64_t>() > static_cast<std::uint64_t>(drives))
      r.fail(join(path, "drive"), "no drive " + d.dump() + " (the " + s.system.name +
                                      " has drives 1 to " + std::to_string(drives) + ")");
    out.drive = d.get<std::int64_t>();
  } else if (fields & controller::kFaultDrive) {
    r.fail(join(path, "drive"), "missing (" + out.type + " needs the drive's id)");
  }
  if (f.contains("latency_multiplier")) {
    const std::string p = join(path, "latency_multiplier");
    if (!(fields & controller::kFaultLatencyMultiplier)) r.fail(p, "does not apply to " + out.type);
    const json& m = f.at("latency_multiplier");
    if (!m.is_number()) r.fail(p, "must be a number, got " + type_name(m));
    out.latency_multiplier = m.get<double>();
    if (!(out.latency_multiplier >= controller::DataPath::kLatencyMultiplierMin &&
          out.latency_multiplier <= controller::DataPath::kLatencyMultiplierMax))
      r.fail(p, "must be 1 to 1000, got " + m.dump());
  } else if (fields & controller::kFaultLatencyMultiplier) {
    r.fail(join(path, "latency_multiplier"), "missing (" + out.type + " needs it)");
  }
  if (f.contains("controller")) {
    const std::string p = join(path, "controller");
    if (!(fields & controller::kFaultController)) r.fail(p, "does not apply to " + out.type);
    out.controller = r.controller_id(f.at("controller"), p);  // 1/2 or "A"/"B", as the API
  } else if (fields & controller::kFaultController) {
    r.fail(join(path, "controller"), "missing (" + out.type + " needs the controller: 1 or 2)");
  }
}

void Loader::set_volume(const json& v, const std::string& path, VolumeChange& out) {
  r.object(v, path,
           {"volume", "min_iops", "max_iops", "burst_iops", "qos_policy", "preferred_controller",
            "capacity"});
  out.volume = r.required_text(v, path, "volume", kMaxScenarioNameChars);
  if (!volume_names().count(out.volume))
    r.fail(join(path, "volume"), "no volume named " + in_quotes(out.volume) +
                                     " in volumes or in the workloads' filename=");
  out.min_iops = r.iops_change(v, path, "min_iops");
  out.max_iops = r.iops_change(v, path, "max_iops");
  out.burst_iops = r.iops_change(v, path, "burst_iops");
  if (v.contains("qos_policy")) {
    if (v.at("qos_policy").is_null()) {
      out.qos_policy = std::optional<std::string>();
    } else {
      const std::string name = r.text(v, path, "qos_policy");
      if (!has_policy(name))
        r.fail(join(path, "qos_policy"),
               "no QoS policy named " + in_quotes(name) + " in qos_policies");
      out.qos_policy = std::optional<std::string>(name);
    }
  }
  if (v.contains("preferred_controller"))
    out.preferred_controller =
        r.controller_id(v.at("preferred_controller"), join(path, "preferred_controller"));
  if (v.contains("capacity"))
    out.capacity_bytes = r.size(v.at("capacity"), join(path, "capacity"), 1);
  if (v.size() == 1)
    r.fail(path, "changes nothing; give at least one value to set besides \"volume\"");
}

void Loader::set_policy(const json& v, const std::string& path, PolicyChange& out) {
  r.object(v, path, {"policy", "min_iops", "max_iops", "burst_iops"});
  out.policy = r.required_text(v, path, "policy", kMaxScenarioNameChars);
  if (!has_policy(out.policy))
    r.fail(join(path, "policy"),
           "no QoS policy named " + in_quotes(out.policy) + " in qos_policies");
  out.min_iops = r.iops_change(v, path, "min_iops");
  out.max_iops = r.iops_change(v, path, "max_iops");
  out.burst_iops = r.iops_change(v, path, "burst_iops");
  if (v.size() == 1)
    r.fail(path, "changes nothing; give at least one value to set besides \"policy\"");
}

// Times against the duration and the number of timeline rows it gives.
void Loader::check_times() const {
  if (s.wear.fast_forward) {
    if (!s.duration_ns)
      r.fail("wear.fast_forward", "needs duration_s: the per-I/O run that measures the write rates");
    if (s.wear.until_ns <= *s.duration_ns)
      r.fail("wear.fast_forward.until_s", "must be after duration_s");
    if (s.wear.measure_from_ns >= *s.duration_ns)
      r.fail("wear.fast_forward.measure_from_s", "must be before duration_s");
    if (s.wear.epoch_ns > s.wear.until_ns - *s.duration_ns)
      r.fail("wear.fast_forward.epoch_s", "is longer than the fast-forward itself");
    if ((s.wear.until_ns - *s.duration_ns) / s.wear.epoch_ns > kMaxFastForwardEpochs)
      r.fail("wear.fast_forward.epoch_s", "gives more than " + std::to_string(kMaxFastForwardEpochs) +
                                              " epochs; raise it");
  }
  if (!s.duration_ns) return;
  const sim::Time d = *s.duration_ns;
  const std::int64_t rows = (d + s.interval_ns - 1) / s.interval_ns;
  if (rows > kMaxTimelineRows)
    r.fail("duration_s", "gives " + std::to_string(rows) + " timeline rows at report.interval_ms " +
                             std::to_string(s.interval_ns / sim::kMillisecond) + "; at most " +
                             std::to_string(kMaxTimelineRows) + " (raise the interval)");
  for (const auto& w : s.workloads)
    if (w.start_ns >= d)
      r.fail(join(w.key, "start_s"), "is not before duration_s; the workload would never run");
  // With fast-forward, actions may also fall in it (a drive replaced in year two).
  const sim::Time last = s.wear.fast_forward ? s.wear.until_ns : d;
  for (const auto& t : s.timeline)
    if (t.at_ns >= last)
      r.fail(join(t.key, "at_s"), s.wear.fast_forward
                                      ? "is not before wear.fast_forward.until_s; the action would never run"
                                      : "is not before duration_s; the action would never run");
}

std::string format_iops_change(const char* name, const QosChange& c) {
  if (!c) return "";
  return std::string(" ") + name + "=" + (*c ? std::to_string(**c) : "none");
}

}  // namespace scenario_detail

using namespace scenario_detail;

std::string TimelineAction::describe() const {
  std::ostringstream os;
  switch (kind) {
    case TimelineActionKind::kFault:
      os << "fault " << fault.type;
      if (fault.drive != 0) os << " drive " << fault.drive;
      if (fault.type == "drive_slow" || fault.latency_multiplier != 1.0)
        os << " latency x" << fault.latency_multiplier;
      break;
    case TimelineActionKind::kSetVolume: {
      const VolumeChange& c = volume_change;
      os << "set_volume " << c.volume << format_iops_change("min_iops", c.min_iops)
         << format_iops_change("max_iops", c.max_iops)
         << format_iops_change("burst_iops", c.burst_iops);
      if (c.qos_policy) os << " qos_policy=" << (*c.qos_policy ? **c.qos_policy : "none");
      if (c.preferred_controller)
        os << " preferred_controller=" << (*c.preferred_controller == 1 ? "A" : "B");
      if (c.capacity_bytes) os << " capacity=" << *c.capacity_bytes;
      break;
    }
    case TimelineActionKind::kSetQosPolicy: {
      const PolicyChange& c = policy_change;
      os << "set_qos_policy " << c.policy << format_iops_change("min_iops", c.min_iops)
         << format_iops_change("max_iops", c.max_iops)
         << format_iops_change("burst_iops", c.burst_iops);
      break;
    }
  }
  return os.str();
}

}  // namespace afasim::workload
