#include "datapac/datapac.h"

#include <cstdio>

#include "sim/assert.h"
#include "sim/rng.h"

namespace afasim::datapac {

const char* datapac_state_name(DataPacState s) {
  return s == DataPacState::kPresent ? "present" : "pulled";
}

std::string DataPac::ssd_name(int datapac_id, int slot) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "dp%d-ssd%02d", datapac_id, slot);
  return buf;
}

sim::Result<std::unique_ptr<DataPac>> DataPac::create(const config::DataPacSpec& spec,
                                                      const config::SsdModel& model,
                                                      const DataPacOptions& options) {
  if (options.id < 0) return sim::invalid_argument("DataPac id must be >= 0");
  if (options.controller_count < 1 || options.controller_count > 8)
    return sim::invalid_argument("DataPac needs 1..8 controllers");
  if (spec.ssds_per_datapac < 1 || spec.ssds_per_datapac > 64)
    return sim::invalid_argument("DataPac needs 1..64 SSDs");
  const config::BackplaneSpec& bp = spec.backplane;
  if (bp.lanes_per_controller < 1 || bp.lanes_per_controller > 64 || bp.lane_bytes_per_second <= 0)
    return sim::invalid_argument("DataPac backplane needs 1..64 lanes of a positive rate");

  std::unique_ptr<DataPac> dp(new DataPac());
  dp->id_ = options.id;
  for (int slot = 0; slot < spec.ssds_per_datapac; ++slot) {
    SsdOptions o = options.ssd;
    o.name = ssd_name(options.id, slot);
    o.seed =
        sim::mix64(options.ssd.seed ^ sim::mix64((static_cast<std::uint64_t>(options.id) << 32) |
                                                 static_cast<std::uint64_t>(slot)));
    auto ssd = Ssd::create(model, o);
    if (!ssd.is_ok()) return ssd.status();
    dp->ssds_.push_back(std::move(ssd).value());
  }
  // The SAS protocol's per-command cost is inside the SSD's latency figures (they are
  // measured from the host), so the backplane adds bandwidth, not a per-transfer overhead.
  for (int c = 0; c < options.controller_count; ++c) {
    for (const char* dir : {"to", "from"}) {
      dp->links_.emplace_back(
          "dp" + std::to_string(options.id) + "-c" + std::to_string(c) + "-" + dir,
          bp.lane_bytes_per_second * bp.lanes_per_controller, 0, bp.lanes_per_controller);
    }
  }
  return dp;
}

Ssd& DataPac::ssd(int slot) {
  AFASIM_ASSERT(slot >= 0 && slot < ssd_count(), "DataPac slot out of range");
  return *ssds_[static_cast<std::size_t>(slot)];
}

const Ssd& DataPac::ssd(int slot) const {
  AFASIM_ASSERT(slot >= 0 && slot < ssd_count(), "DataPac slot out of range");
  return *ssds_[static_cast<std::size_t>(slot)];
}

Link& DataPac::backplane(int controller, LinkDirection direction) {
  AFASIM_ASSERT(controller >= 0 && controller < controller_count(), "no such controller");
  return links_[static_cast<std::size_t>(controller * 2 +
                                         (direction == LinkDirection::kFromDataPac))];
}

const Link& DataPac::backplane(int controller, LinkDirection direction) const {
  AFASIM_ASSERT(controller >= 0 && controller < controller_count(), "no such controller");
  return links_[static_cast<std::size_t>(controller * 2 +
                                         (direction == LinkDirection::kFromDataPac))];
}

sim::Status DataPac::pull() {
  if (state_ == DataPacState::kPulled)
    return sim::precondition_failed("DataPac " + std::to_string(id_) + " is already pulled");
  state_ = DataPacState::kPulled;
  for (auto& s : ssds_) s->set_enclosure_present(false);
  return {};
}

sim::Status DataPac::insert() {
  if (state_ == DataPacState::kPresent)
    return sim::precondition_failed("DataPac " + std::to_string(id_) + " is already present");
  state_ = DataPacState::kPresent;
  for (auto& s : ssds_) s->set_enclosure_present(true);
  return {};
}

}  // namespace afasim::datapac
