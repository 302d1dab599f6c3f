// perf::Flow — drives requests through perf::Resources one step at a time, in virtual time.
//
// A journey is a list of steps (a resource and the bytes and extra server time it asks of
// it). Flow admits step k at the simulated time step k-1 finished, from an event scheduled
// at that time, so each resource sees its work in arrival order and nothing is booked ahead
// of its time (the contract of perf::Resource). A step that takes no time is chained without
// an event. A step may cross up to three more resources at once (`with`; one named twice is crossed twice): a cut-through DMA
// transfer (the SAS HBA writing DRAM as the frames arrive, the FC HBA reading DRAM as it
// sends) occupies each of them for its own service time, all admitted at the step's arrival
// in arrival order, and ends when the slowest is done: one event for the transfer, not one
// per resource it crosses. Parallel work (a RAID 10 write's two copies, a full-stripe destage's five
// strips) is several journeys joined by a Join: its `done` runs when the last one finishes.
//
// Costs: one simulator event per step that takes time (a step crossing several resources at
// once is one); journeys live in two slabs by length (short ones, most of them, in 320-byte
// entries), reused through free lists (each bounded by kMaxJourneys: more in flight than that
// is a bug of the caller, whose outstanding I/O is itself bounded). Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "perf/resource.h"
#include "sim/action.h"
#include "sim/simulator.h"
#include "sim/slab.h"

namespace afasim::perf {

struct Step {
  Server* resource = nullptr;    // REQUIRES: not null
  std::int64_t bytes = 0;        // bytes this step moves through the resource
  sim::Time extra_service_ns = 0;  // server time priced elsewhere (CPU costs: perf::CpuCosts)
  std::int64_t address = 0;        // where on the device (an SSD's byte offset); Server::admit
  // Resources the same `bytes` cross at the same time (cut-through DMA); null: none.
  std::array<Resource*, 3> with{};
  // Pure latency after the step that occupies nothing (a command's or a response's FC frame:
  // frames of different exchanges interleave, so a frame without data waits for none).
  sim::Time delay_ns = 0;
};

class Flow {
 public:
  using Done = sim::InlineFunction<void(sim::Time)>;
  static constexpr int kMaxSteps = 8;  // the longest journey (ArrayModel's write) has 7
  static constexpr std::size_t kMaxJourneys = 1 << 20;

  explicit Flow(sim::Simulator& sim) : sim_(sim) {}
  Flow(const Flow&) = delete;
  Flow& operator=(const Flow&) = delete;

  // Starts a journey at now() through `steps` in order; `done(t)` runs at the time t the
  // last step finishes (from an event, or at once for an empty list).
  // REQUIRES: steps.size() <= kMaxSteps. `done`: a Done, or a callable it can be built from
  // (built in the journey's slot, not moved there).
  template <typename F>
  void start(std::span<const Step> steps, F&& done) {
    const std::uint32_t id = open(steps);
    (id & kLongBit ? long_journeys_[id & ~kLongBit].done : short_journeys_[id].done).assign(std::forward<F>(done));
    advance(id);
  }

  // A join of `branches` journeys: returns an id whose branch_done() callbacks count down;
  // `done(t)` runs when the last branch finishes, t its finish time. REQUIRES: branches >= 1.
  std::uint32_t join(int branches, Done done);
  Done branch_done(std::uint32_t join_id);

  std::size_t in_flight() const { return short_journeys_.in_use() + long_journeys_.in_use(); }
  std::int64_t events_scheduled() const { return events_; }

 private:
  // The counters and the callback first: with the first steps they share the cache lines an
  // advance touches (the unused tail of `steps` is never read). A journey of up to
  // kShortSteps steps (a host read's two, a member operation's three) lives in a slab of its
  // own, 320 bytes a journey instead of 640: the per-I/O state of hundreds of outstanding
  // I/Os is what spills out of the CPU's caches.
  static constexpr int kShortSteps = 3;
  static constexpr std::uint32_t kLongBit = std::uint32_t{1} << 31;  // id of a long journey
  struct Journey {
    int count = 0;
    int next = 0;
    Done done;
  };
  template <int N>
  struct alignas(64) JourneyOf : Journey {
    std::array<Step, N> steps{};
  };
  // A journey through `steps` (copied), its callback empty; returns its id.
  std::uint32_t open(std::span<const Step> steps);
  // The journey named `id` and its steps.
  Journey& journey(std::uint32_t id, const Step*& steps);
  void release(std::uint32_t id);
  struct JoinState {
    int remaining = 0;
    Done done;
  };
  void advance(std::uint32_t id);
  void arrive(std::uint32_t join_id);

  sim::Simulator& sim_;
  sim::Slab<JourneyOf<kShortSteps>> short_journeys_;
  sim::Slab<JourneyOf<kMaxSteps>> long_journeys_;
  sim::Slab<JoinState> joins_;
  std::int64_t events_ = 0;
};

}  // namespace afasim::perf
