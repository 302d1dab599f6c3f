// raid::Plan — a piece of RAID work planned before anything is done: the member operations
// (phase 0 runs first; phase 1 waits for all of phase 0, as RAID 5 writes wait for their
// reads), the parity arithmetic between them, and the counts the cost model prices
// (controller/cost_model.h). The same plan drives both halves of the work: Engine::execute
// moves the bytes (payload) in plan order, and the controller times the plan's operations on
// its links and SSDs. A plan without payload has no buffers and no steps.
//
// Buffers: a read's `out` and a write's `data` point at the caller's buffers or at the plan's
// scratch space (stable until clear()); null means no bytes (payload none) or, for a write,
// zeros. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "raid/members.h"

namespace afasim::raid {

struct Extent;

enum class MemberOpKind : std::uint8_t { kRead, kWrite, kTrim };

struct MemberOp {
  ChunkAddr addr;
  std::int64_t offset_in_chunk = 0;
  std::int64_t length = 0;
  MemberOpKind op = MemberOpKind::kRead;
  std::uint8_t phase = 0;
  std::int8_t member = -1;        // which member of `extent` (-1: a move target or a rebuild chunk)
  Extent* extent = nullptr;       // the extent it belongs to (media-error recovery)
  std::uint8_t* out = nullptr;    // kRead: where the bytes go
  const std::uint8_t* data = nullptr;  // kWrite: the bytes (null: zeros)
};

// Parity arithmetic between the reads and the writes.
struct PlanStep {
  enum Kind : std::uint8_t { kZero, kXor } kind = kZero;
  std::uint8_t* dst = nullptr;
  const std::uint8_t* src = nullptr;  // kXor: dst ^= src
  std::int64_t length = 0;
};

class Plan {
 public:
  std::vector<MemberOp> ops;
  std::vector<PlanStep> steps;
  std::int64_t xor_bytes = 0;    // bytes XORed (parity updates and reconstruction)
  std::int64_t parity_rows = 0;  // RAID 5 rows whose parity this plan updates
  std::int64_t move_target_bytes = 0;  // bytes also written to a moving member's new chunk
  bool member_writes = false;    // any write to a member (wakes the wear leveler)
  // RAID 5 rows to verify after execute() when the engine checks invariants.
  struct RowCheck {
    const Extent* extent;
    std::int64_t row;
  };
  std::vector<RowCheck> parity_checks;

  // `n` bytes of scratch space, stable until clear().
  std::uint8_t* scratch(std::int64_t n);
  // Empties the plan, keeping its capacity and scratch blocks. Inline: every host I/O clears one.
  void clear() {
    ops.clear();
    steps.clear();
    xor_bytes = 0;
    parity_rows = 0;
    move_target_bytes = 0;
    member_writes = false;
    parity_checks.clear();
    block_ = 0;
    used_ = 0;
  }

 private:
  struct Block {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::int64_t size = 0;
  };
  std::vector<Block> blocks_;  // kept across clear(): a plan reused allocates nothing
  std::size_t block_ = 0;      // block being filled
  std::int64_t used_ = 0;      // bytes of blocks_[block_] handed out
};

}  // namespace afasim::raid
