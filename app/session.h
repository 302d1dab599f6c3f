// What `afasim serve` and `afasim replay` share: building the array over a state directory,
// and the session-record hooks of the app layer (events, the shutdown and its final state;
// docs/record-replay.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "config/preset.h"
#include "controller/array.h"
#include "controller/telemetry.h"
#include "datapac/payload.h"
#include "sim/simulator.h"
#include "sim/status.h"
#include "store/sqlite_store.h"

namespace afasim::app {

// The array of a serve (or replayed) session and what it stands on. Members are declared in
// the order they must outlive each other.
struct SessionArray {
  std::unique_ptr<store::SqliteStore> store;
  std::unique_ptr<sim::Simulator> sim;
  std::unique_ptr<controller::Array> array;
};

// Opens the store in `state_dir`, loads it, and builds the simulator (root `seed`, the saved
// clock) and the array with `payload` (file payload under <state_dir>/payload). Errors carry
// the message `afasim serve` prints; `destage_age_ns` is the write cache's age destage (0: never); kPreconditionFailed when the directory belongs to
// another system preset, or (with `require_new`) already holds an array: then nothing is
// written to it.
sim::Result<SessionArray> open_session_array(const config::Catalog& catalog, const config::SystemPreset& preset,
                                             const std::string& state_dir, datapac::PayloadKind payload,
                                             std::uint64_t seed, bool require_new = false,
                                             sim::Time destage_age_ns = controller::CacheOptions{}.destage_age_ns);

// Performance history and alerts (docs/observability.md) for a session paced `pace`
// ("realtime" or "none"): with none the sampler must not keep an idle model's clock running
// through empty seconds. Serve and replay both start it, so its ticks replay too.
sim::Result<std::unique_ptr<controller::Telemetry>> start_telemetry(controller::Array& array, const std::string& pace);

// Model thread: records `e` as an "event" outcome when a session is recorded.
void record_event(const controller::Event& e);

// The array's state as canonical JSON text: every object as the API shows it, each volume's
// extents and a digest of their payload (read from the SSDs). Model thread.
std::string final_state(controller::Array& array, const std::string& system_name);

// Model thread: the end of a session. Records a "serve.stop" request, destages the write
// cache (its bytes reach the SSD payload at once) and saves the clock; then records the
// final state as the "final" outcome and stops the recorder, so that nothing the model does
// afterwards lands in the record. Returns save_clock's status.
sim::Status stop_session(controller::Array& array, const std::string& system_name);

}  // namespace afasim::app
