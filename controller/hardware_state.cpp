// The hardware state a restart keeps (issue 14 item 6): which drives are failed, pulled or
// slow, which controller has failed, whether a supercap pack is degraded or the
// inter-controller link cut. Saved with every fault in the meta key "hardware" (one fact a
// line: "drive 7 failed", "drive 3 slow 4", "drive 2 bad 9273344" (a media error's device
// byte offset), "volume 3 lost 1024 16" (16 blocks of 4 KiB from block 1024 whose acknowledged
// writes were lost, controller/lost_blocks.h), "controller 2 failed", "supercap degraded", "link
// cut"), applied again when the array opens, before any host I/O. Mains power is not
// kept: a restarted array boots with the mains on (docs/persistence.md). The scrub's settings
// are kept beside it, in meta "scrub".
#include <algorithm>
#include <charconv>
#include <sstream>
#include <string>
#include <string_view>

#include "controller/array.h"
#include "controller/data_path.h"
#include "raid/scrub.h"

namespace afasim::controller {

std::string Array::hardware_state() const {
  std::ostringstream out;
  for (std::size_t i = 0; i < drives_.size(); ++i) {
    const Id id = static_cast<Id>(i + 1);
    if (drives_[i].state == DriveState::kFailed) out << "drive " << id << " failed\n";
    if (drives_[i].state == DriveState::kRemoved) out << "drive " << id << " pulled\n";
    const double slow = data_->ssd(static_cast<int>(i)).latency_multiplier();
    if (drives_[i].state == DriveState::kHealthy && slow != 1.0) {
      // The shortest text that reads back as exactly `slow` (hostile round 44: six digits
      // saved 1.0000001 as 1, which the restart refused as "at normal speed", and 2.5000001
      // came back as 2.5).
      char text[32];
      const auto end = std::to_chars(text, text + sizeof text, slow).ptr;
      out << "drive " << id << " slow " << std::string_view(text, static_cast<std::size_t>(end - text)) << "\n";
    }
  }
  // Media errors (corrupt_block) are the SSD's: their bytes stay corrupted across a power
  // cycle, so the mark must too, or the flipped bytes read back as data (hostile round 17).
  for (const auto& [drive, blocks] : data_->media_errors())
    for (std::int64_t at : blocks) out << "drive " << drive + 1 << " bad " << at << "\n";
  // Acknowledged writes lost with a controller's cache: the SSDs hold older bytes, so the
  // marks must outlive a restart too, or those bytes read back as the data.
  data_->for_each_lost_run([&](Id volume, std::int64_t first, std::int64_t n, std::uint8_t sectors) {
    out << "volume " << volume << " lost " << first << " " << n;
    if (sectors != LostBlocks::kWholeBlock) out << " " << static_cast<int>(sectors);
    out << "\n";
  });
  for (const auto& c : controllers())
    if (c.state == ControllerState::kFailed) out << "controller " << c.id << " failed\n";
  const PowerStatus p = data_->power_status();
  if (p.supercap_degraded) out << "supercap degraded\n";
  if (!p.link_up) out << "link cut\n";
  return out.str();
}

void Array::put_hardware(ChangeSet& c) {
  c.meta[kMetaHardware] = hardware_state();
  if (data_ != nullptr) media_errors_saved_ = data_->saved_state_changes();
}

void Array::hardware_if_changed(ChangeSet& c) {
  if (data_ != nullptr && data_->saved_state_changes() != media_errors_saved_) put_hardware(c);
}

sim::Status Array::restore_data_path_line(const std::string& line, int& media_errors, std::int64_t& lost_blocks,
                                          bool& handled) {
  std::istringstream words(line);
  std::string what, how, rest;
  Id id = 0;
  std::int64_t at = -1, n = 0;
  words >> what >> id >> how;
  const auto unknown = [&] {
    return sim::Status(sim::Code::kInternal, "state: meta hardware has a line this afasim does not know: " + line);
  };
  handled = (what == "drive" && how == "bad") || what == "volume";
  if (what == "drive" && how == "bad") {
    if (!(words >> at) || at < 0 || id < 1 || id > static_cast<Id>(drives_.size())) return unknown();
    if (const std::int64_t end = drives_[static_cast<std::size_t>(id - 1)].capacity_bytes; at >= end)
      return sim::Status(sim::Code::kInternal, "state: meta hardware line \"" + line + "\": byte " + std::to_string(at) +
                                                   " is past the end of drive " + std::to_string(id) + " (" +
                                                   std::to_string(end) + " bytes)");
    data_->restore_media_error(static_cast<int>(id - 1), at);
    ++media_errors;
  } else if (what == "volume") {
    int sectors = LostBlocks::kWholeBlock;
    if (how != "lost" || !(words >> at >> n) || at < 0 || n < 1) return unknown();
    if (!words.eof() && (!(words >> sectors) || sectors < 1 || sectors > LostBlocks::kWholeBlock || (words >> rest)))
      return unknown();
    const sim::Status st = data_->restore_lost_blocks(id, at, n, static_cast<std::uint8_t>(sectors));
    // A volume deleted since (a kill before the save) has nothing left to mark.
    if (st.code() == sim::Code::kNotFound) return sim::Status::ok();
    if (!st.is_ok()) return sim::Status(sim::Code::kInternal, "state: meta hardware line \"" + line + "\": " + st.message());
    lost_blocks += n;
  }
  return sim::Status::ok();
}

sim::Status Array::restore_hardware(const Snapshot& snapshot) {
  std::vector<std::string> restored;
  int media_errors = 0;
  std::int64_t lost_blocks = 0;
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
    bool handled = false;
    st = restore_data_path_line(line, media_errors, lost_blocks, handled);
    if (!st.is_ok() || handled) continue;  // the loop ends on an error
    const bool drive_line = what == "drive" && (words >> id >> how);
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
  if (lost_blocks > 0) restored.push_back(std::to_string(lost_blocks) + " volume block(s) of 4 KiB whose data was lost");
  if (restored.empty() && rebuilds == 0) return sim::Status::ok();
  std::string message = "restart: hardware state restored";
  for (std::size_t i = 0; i < restored.size(); ++i) message += (i == 0 ? ": " : ", ") + restored[i];
  if (rebuilds > 0) message += "; " + std::to_string(rebuilds) + " interrupted rebuild(s) resumed";
  return log_event(Severity::kWarning, "system", "", message);
}

Status Array::save_clock() {
  ChangeSet c;
  c.meta[kMetaClock] = std::to_string(sim_.now());
  // And the hardware as it is now: media errors a write or read repair cleared since the last
  // fault are not restored as errors.
  put_hardware(c);
  return commit(c);
}

sim::Time Array::saved_clock(const Snapshot& snapshot) {
  // A killed process never saved its clock: its last event bounds it from below.
  sim::Time t = snapshot.events.empty() ? 0 : snapshot.events.back().time_ns;
  if (auto it = snapshot.meta.find(kMetaClock); it != snapshot.meta.end()) {
    try {
      t = std::max<sim::Time>(t, std::stoll(it->second));
    } catch (...) {
    }
  }
  return t;
}

std::string Array::scrub_state(const raid::ScrubOptions& o) {
  return "enabled " + std::to_string(o.enabled ? 1 : 0) + "\nbytes_per_second " + std::to_string(o.bytes_per_second) +
         "\npass_interval_ns " + std::to_string(o.pass_interval_ns) + "\n";
}

Status Array::set_scrub_options(const raid::ScrubOptions& options) {
  AFASIM_RETURN_IF_ERROR(raid::Scrubber::validate(options));
  // Saved first: a setting the store cannot take is refused whole, as other changes are.
  ChangeSet c;
  c.meta[kMetaScrub] = scrub_state(options);
  AFASIM_RETURN_IF_ERROR(commit(c));
  return data_->set_scrub_options(options);
}

Status Array::restore_scrub(const Snapshot& snapshot) {
  // Until 2026-12-06 the scrub's settings were not saved: a restart left it off at its defaults.
  auto it = snapshot.meta.find(kMetaScrub);
  if (it == snapshot.meta.end()) return Status::ok();
  raid::ScrubOptions o = data_->scrub_options();
  std::istringstream in(it->second);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    std::int64_t value = 0;
    std::string rest;
    if (!(words >> key >> value) || (words >> rest))
      return sim::Status(sim::Code::kInternal, "state: meta scrub has a line this afasim does not know: " + line);
    if (key == "enabled" && (value == 0 || value == 1)) o.enabled = value == 1;
    else if (key == "bytes_per_second") o.bytes_per_second = value;
    else if (key == "pass_interval_ns") o.pass_interval_ns = value;
    else return sim::Status(sim::Code::kInternal, "state: meta scrub has a line this afasim does not know: " + line);
  }
  if (Status st = raid::Scrubber::validate(o); !st.is_ok())
    return sim::Status(sim::Code::kInternal, "state: meta scrub: " + st.message());
  return data_->set_scrub_options(o);
}

}  // namespace afasim::controller
