// Fault points inside production code, in the manner of FoundationDB's BUGGIFY: off in
// normal runs (batch and serve), switched on by a simulation test for one run, each firing
// drawn from that run's seed (STYLE.md "FoundationDB Flow").
//
// A point is a named condition at a place where something rare can happen: an SSD command
// that takes far longer than its spec, a link frame dropped and retransmitted, a transient
// media read error. Production code writes
//
//     if (AFASIM_BUGGIFY("ssd.slow_op")) service_ns *= sim::Buggify::between(10, 100);
//
// and pays one predictable branch on a global flag when no test has switched points on.
// With a BuggifyScope alive (a test's seed sweep), each point is *active* for the run with
// probability activate_probability (decided from the seed and the point's name, so which
// points are active does not depend on the order they are first reached), and an active
// point fires with probability fire_probability each time it is reached, drawn from the
// run's stream "buggify". Same seed, same code, same firings: a failing seed replays.
//
// The points and what they model are listed in docs/faults.md ("Fault points"). Every point
// must leave the model correct: it may only make things slower or make an operation fail
// the way the real device can; a sweep with points on must still find every acknowledged
// write readable.
//
// Not thread-safe: one scope at a time, on the thread that runs the model.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "sim/rng.h"
#include "sim/time.h"

namespace afasim::sim {

struct BuggifyOptions {
  std::uint64_t seed = 1;  // the run's root seed
  // Chance that a point is active in this run, [0, 1]. FoundationDB uses 0.25.
  double activate_probability = 0.25;
  // Chance that an active point fires each time it is reached, [0, 1].
  double fire_probability = 0.05;
  // Points that stay off in this run whatever the draw (a sweep that is not about them).
  std::set<std::string, std::less<>> off;
};

class Buggify {
 public:
  // Whether a scope is alive: the only cost of a point in a normal run.
  static bool enabled() { return state_ != nullptr; }
  // REQUIRES: enabled(). True when `point` fires now.
  static bool fires(std::string_view point);
  // REQUIRES: enabled(). A draw in [lo, hi] from the run's stream, for the size of a fault
  // (a slowdown factor, a delay).
  static std::int64_t between(std::int64_t lo, std::int64_t hi);
  // How often each point fired in the current scope (for a test's report).
  static std::map<std::string, std::int64_t> firings();

 private:
  friend class BuggifyScope;
  friend class BuggifySuspend;
  struct State;
  static State* state_;
};

// Holds every fault point off for its lifetime, inside a scope: for checkers that read the
// model's state (an invariant check is not an operation of the array and must not fail).
class BuggifySuspend {
 public:
  BuggifySuspend();
  ~BuggifySuspend();
  BuggifySuspend(const BuggifySuspend&) = delete;
  BuggifySuspend& operator=(const BuggifySuspend&) = delete;

 private:
  Buggify::State* saved_;
};

// Switches the fault points on for its lifetime.
class BuggifyScope {
 public:
  explicit BuggifyScope(BuggifyOptions options);
  ~BuggifyScope();
  BuggifyScope(const BuggifyScope&) = delete;
  BuggifyScope& operator=(const BuggifyScope&) = delete;
};

}  // namespace afasim::sim

// True when fault point `point` (a string literal) fires now; false, cheaply, outside a
// simulation test's BuggifyScope.
#define AFASIM_BUGGIFY(point) (::afasim::sim::Buggify::enabled() && ::afasim::sim::Buggify::fires(point))

namespace afasim::sim {

// The fault point "link.drop" (docs/faults.md): a frame on a link (SAS lane, host port,
// inter-controller link) is lost and resent after kLinkRetransmitNs, so a transfer of
// `duration` ends kLinkRetransmitNs + duration later. Used by the links of both timing
// models (datapac::Link, perf::Resource built as a link). Assumption: 1 ms, the order of
// SAS's ACK/NAK timeout and a PCIe NTB completion timeout.
inline constexpr Time kLinkRetransmitNs = 1'000'000;
// Extra time a transfer of `duration` takes when its frame is dropped (0 when it is not).
inline Time link_drop_fault(Time duration) {
  return AFASIM_BUGGIFY("link.drop") ? kLinkRetransmitNs + duration : 0;
}

}  // namespace afasim::sim
