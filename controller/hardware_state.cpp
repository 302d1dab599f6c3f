// The hardware state a restart keeps (issue 14 item 6): which drives are failed, pulled or
// slow, which controller has failed, whether a supercap pack is degraded or the
// inter-controller link cut. Saved with every fault in the meta key "hardware" (one fact a
// line: "drive 7 failed", "drive 3 slow 4", "drive 2 bad 9273344" (a media error's device
// byte offset), "controller 2 failed", "supercap degraded", "link cut"), applied again when the array opens, before any host I/O. Mains power is not
// kept: a restarted array boots with the mains on (docs/persistence.md).
#include <sstream>

#include "controller/array.h"
#include "controller/data_path.h"

namespace afasim::controller {

std::string Array::hardware_state() const {
  std::ostringstream out;
  for (std::size_t i = 0; i < drives_.size(); ++i) {
    const Id id = static_cast<Id>(i + 1);
    if (drives_[i].state == DriveState::kFailed) out << "drive " << id << " failed\n";
    if (drives_[i].state == DriveState::kRemoved) out << "drive " << id << " pulled\n";
    const double slow = data_->ssd(static_cast<int>(i)).latency_multiplier();
    if (drives_[i].state == DriveState::kHealthy && slow != 1.0) out << "drive " << id << " slow " << slow << "\n";
  }
  // Media errors (corrupt_block) are the SSD's: their bytes stay corrupted across a power
  // cycle, so the mark must too, or the flipped bytes read back as data (hostile round 17).
  for (const auto& [drive, blocks] : data_->media_errors())
    for (std::int64_t at : blocks) out << "drive " << drive + 1 << " bad " << at << "\n";
  for (const auto& c : controllers())
    if (c.state == ControllerState::kFailed) out << "controller " << c.id << " failed\n";
  const PowerStatus p = data_->power_status();
  if (p.supercap_degraded) out << "supercap degraded\n";
  if (!p.link_up) out << "link cut\n";
  return out.str();
}

sim::Status Array::restore_hardware(const Snapshot& snapshot) {
  std::vector<std::string> restored;
  int media_errors = 0;
  ChangeSet discarded;  // the events of re-applying: one summary event says it all
  fault_changes_ = &discarded;
  auto it = snapshot.meta.find(kMetaHardware);
  std::istringstream in(it == snapshot.meta.end() ? "" : it->second);
  std::string line;
  sim::Status st;
  while (st.is_ok() && std::getline(in, line)) {
    std::istringstream words(line);
    std::string what, how;
    Id id = 0;
    double factor = 1.0;
    words >> what;
    FaultSpec spec;
    const bool drive_line = what == "drive" && (words >> id >> how);
    if (drive_line && how == "bad") {
      std::int64_t at = -1;
      if (!(words >> at) || at < 0 || id < 1 || id > static_cast<Id>(drives_.size())) {
        st = sim::Status(sim::Code::kInternal, "state: meta hardware has a line this afasim does not know: " + line);
        break;
      }
      if (const std::int64_t end = drives_[static_cast<std::size_t>(id - 1)].capacity_bytes; at >= end) {
        st = sim::Status(sim::Code::kInternal, "state: meta hardware line \"" + line + "\": byte " +
                                                   std::to_string(at) + " is past the end of drive " +
                                                   std::to_string(id) + " (" + std::to_string(end) + " bytes)");
        break;
      }
      data_->restore_media_error(static_cast<int>(id - 1), at);
      ++media_errors;
      continue;
    }
    if (drive_line) {
      spec.drive = id;
      spec.type = how == "failed" ? "drive_fail" : how == "pulled" ? "drive_pull" : "drive_slow";
      if (how == "slow" && !(words >> factor)) spec.type.clear();
      spec.latency_multiplier = factor;
    } else if (what == "controller" && (words >> id >> how) && how == "failed") {
      spec.type = "controller_fail";
      spec.controller = id;
    } else if (line == "supercap degraded") {
      spec.type = "supercap_degrade";
    } else if (line == "link cut") {
      spec.type = "link_cut";
    }
    if (spec.type.empty() || (what == "drive" && how != "failed" && how != "pulled" && how != "slow")) {
      st = sim::Status(sim::Code::kInternal, "state: meta hardware has a line this afasim does not know: " + line);
      break;
    }
    st = apply_fault(spec);
    restored.push_back(line);
  }
  fault_changes_ = nullptr;
  if (!st.is_ok()) return sim::Status(st.code(), "restoring the hardware state: " + st.message());
  const int rebuilds = data_->resume_rebuilds();
  if (media_errors > 0) restored.push_back(std::to_string(media_errors) + " SSD block(s) with a media error");
  if (restored.empty() && rebuilds == 0) return sim::Status::ok();
  std::string message = "restart: hardware state restored";
  for (std::size_t i = 0; i < restored.size(); ++i) message += (i == 0 ? ": " : ", ") + restored[i];
  if (rebuilds > 0) message += "; " + std::to_string(rebuilds) + " interrupted rebuild(s) resumed";
  return log_event(Severity::kWarning, "system", "", message);
}

}  // namespace afasim::controller
