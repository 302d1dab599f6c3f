// A host I/O as the array's data path sees it (DESIGN.md "One host write, end to end").
//
// Buffers belong to the caller and must stay valid until the callback runs. With payload
// `none` the buffers may be null: timing and bookkeeping only. Offsets and lengths are in
// bytes; the data path refuses ranges outside the volume (kOutOfRange) and empty I/O
// (kInvalidArgument) before doing anything.
#pragma once

#include <cstdint>

#include "controller/objects.h"
#include "sim/action.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::controller {

enum class IoOp : std::uint8_t { kRead, kWrite, kTrim, kWriteZeroes, kFlush };

struct HostIo {
  IoOp op = IoOp::kRead;
  Id volume_id = 0;
  std::int64_t offset_bytes = 0;
  std::int64_t length_bytes = 0;     // 0 only for kFlush
  bool fua = false;                  // write: durable before the reply
  // hint() named this I/O before it came (its lines are on their way): the submit does not
  // prefetch them again. Speed only.
  bool hinted = false;
  const std::uint8_t* write_data = nullptr;  // kWrite: length_bytes bytes, or null
  std::uint8_t* read_buffer = nullptr;       // kRead: length_bytes bytes, or null
  // The controller the host sent it to (ALUA): 0 = its owner's optimized path.
  Id arrival_controller = 0;
};

struct IoCompletion {
  sim::Status status;
  sim::Time submit_time = 0;
  sim::Time complete_time = 0;
  sim::Time latency() const { return complete_time - submit_time; }
};

using IoCallback = sim::InlineFunction<void(const IoCompletion&)>;

}  // namespace afasim::controller
