// A DataPac: the front-loaded enclosure of SSDs of the ISE 800 G3 (DESIGN.md layer 2).
//
// It holds its SSDs (slot 0..ssds_per_datapac − 1) and its backplane: one Link per
// controller per direction, each a SAS wide port of `lanes_per_controller` lanes from that
// controller to the DataPac's expander (config::BackplaneSpec). A DataPac is present or
// pulled; pulling it makes every one of its SSDs read as removed (their data and wear kept),
// inserting it puts them back in the states they had.
//
// The controller layer chains the stages of one SSD command itself: backplane link (data
// toward the SSD for a write), Ssd::schedule, backplane link (data back for a read).
// Not thread-safe: belongs to the model thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/preset.h"
#include "datapac/link.h"
#include "datapac/ssd.h"
#include "sim/status.h"

namespace afasim::datapac {

enum class DataPacState { kPresent, kPulled };
// Direction on the backplane, seen from the controller.
enum class LinkDirection { kToDataPac, kFromDataPac };

const char* datapac_state_name(DataPacState s);  // "present", "pulled"

struct DataPacOptions {
  int id = 0;                // which DataPac, >= 0 (the ISE has 0 and 1)
  int controller_count = 2;  // backplane links per direction, 1..8
  // Template for every SSD of the DataPac; each gets name "dp<id>-ssd<slot, 2 digits>" and
  // a seed derived from `ssd.seed`, the DataPac id and the slot.
  SsdOptions ssd;
};

class DataPac {
 public:
  // Builds the DataPac and opens its SSDs' payload stores. kInvalidArgument for a bad spec
  // or options, a payload file's error otherwise.
  static sim::Result<std::unique_ptr<DataPac>> create(const config::DataPacSpec& spec,
                                                      const config::SsdModel& model,
                                                      const DataPacOptions& options);

  int id() const { return id_; }
  int ssd_count() const { return static_cast<int>(ssds_.size()); }
  // REQUIRES: 0 <= slot < ssd_count().
  Ssd& ssd(int slot);
  const Ssd& ssd(int slot) const;
  // The name an SSD of this DataPac gets: "dp0-ssd07".
  static std::string ssd_name(int datapac_id, int slot);

  int controller_count() const { return static_cast<int>(links_.size() / 2); }
  // REQUIRES: 0 <= controller < controller_count().
  Link& backplane(int controller, LinkDirection direction);
  const Link& backplane(int controller, LinkDirection direction) const;

  DataPacState state() const { return state_; }
  // Pulls the DataPac out: every SSD reads as removed. kPreconditionFailed if already out.
  sim::Status pull();
  // Puts it back: SSDs return to the states they had. kPreconditionFailed if present.
  sim::Status insert();

 private:
  DataPac() = default;

  int id_ = 0;
  DataPacState state_ = DataPacState::kPresent;
  std::vector<std::unique_ptr<Ssd>> ssds_;
  std::vector<Link> links_;  // [controller × 2 + direction]
};

}  // namespace afasim::datapac
