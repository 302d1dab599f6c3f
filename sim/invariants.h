// Invariant-checker hooks (DESIGN.md "Testing"): named checks that simulation tests register
// and the model calls at the points where an invariant must hold (after a stripe write
// completes, after an extent moves, at every ownership change...).
//
// A check returns an empty string when the invariant holds, or a description of the
// violation. Violations are collected, not thrown, so a test can report all of them with
// the seed that replays the run. Checks run only when some test registered them: the
// production path pays one branch. Not thread-safe (model thread only).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/time.h"

namespace afasim::sim {

class Invariants {
 public:
  using Check = std::function<std::string()>;

  // Registers a check under `name` (e.g. "raid.parity"). Returns its handle.
  std::size_t add(std::string name, Check check);
  // Records a violation found by the model itself at time `now`.
  void violation(Time now, std::string name, std::string what);
  // Runs every registered check, recording violations at time `now`. Returns how many
  // checks failed this time.
  std::size_t check_all(Time now);

  bool enabled() const { return enabled_; }
  void set_enabled(bool on) { enabled_ = on; }
  bool ok() const { return violations_.empty(); }
  // "t=<ns> name: what" lines, at most `limit` of them.
  std::string report(std::size_t limit = 20) const;
  const std::vector<std::string>& violations() const { return violations_; }

 private:
  struct Named {
    std::string name;
    Check check;
  };
  bool enabled_ = false;
  std::vector<Named> checks_;
  std::vector<std::string> violations_;
};

}  // namespace afasim::sim
