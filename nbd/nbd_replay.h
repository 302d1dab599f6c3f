// Replaying the NBD side of a recorded serve session (docs/record-replay.md).
//
// While a serve::Recorder is active, the NBD target records each batch of requests it hands
// the model ("nbd.io": the connection, the export, each request's header and WRITE bytes),
// each NBD connect/disconnect event it logs ("nbd.event") and each completion ("nbd.done":
// status, latency, a digest of the bytes read, block status). nbd_replay_handlers() gives
// `afasim replay` the functions that run the first two again on the model thread's code
// path (start_requests, Array::log_event); their completions are recorded the same way.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "controller/array.h"

namespace afasim::nbd {

using ReplayHandler = std::function<void(std::string_view payload)>;

// Handlers by request kind ("nbd.io", "nbd.event"). They throw serve::ByteReader::Truncated
// for a payload that does not decode. REQUIRES: array outlives the handlers; they run on the
// thread that owns the array.
std::map<std::string, ReplayHandler> nbd_replay_handlers(controller::Array& array);

}  // namespace afasim::nbd
