// raid::Engine — the RAID engine (docs/raid.md): plans a range of an extent onto member
// operations, moves the bytes of a plan, reconstructs lost or unreadable members, verifies
// and repairs redundancy.
//
// - Reads: RAID10 alternates the two copies by strip; a lost member is read from its mirror
//   (RAID10) or reconstructed as the XOR of the other members (RAID5).
// - Writes: RAID10 writes both copies; RAID5 writes a full row as a full-stripe write
//   (parity from the new data, no reads) and a partial row by read-modify-write (new parity
//   = old parity ^ old data ^ new data over the touched bytes; a lost data member's old bytes
//   are reconstructed first; with the parity member lost only the data is written); RAID0
//   writes the data.
// - Media errors: a read that fails with kIoError is retried (kMediaReadAttempts reads in all,
//   each timed); if it still fails on a member that redundancy covers, it is reconstructed from the other members and the bytes are written back (read repair, as
//   Linux md does); the plan grows by those operations so that timing sees them. When
//   redundancy does not cover it the read fails with kIoError: never wrong bytes.
// - Verification (scrub, docs/raid.md "Scrub"): a row's members are read, media errors
//   repaired from redundancy, and parity or mirror consistency checked and repaired.
//
// The engine knows members only through a MemberStore (raid/members.h); it knows nothing of
// volumes, caches or controllers. Planning (plan_read, plan_write) changes no bytes;
// execute() changes them, in the plan's order. Not thread-safe (model thread).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "raid/extent.h"
#include "raid/layout.h"
#include "raid/members.h"
#include "raid/plan.h"
#include "sim/invariants.h"
#include "sim/simulator.h"
#include "sim/status.h"

namespace afasim::raid {

// The array's RAID geometry (docs/raid.md).
struct Geometry {
  int raid5_data_members = 4;   // RAID5 width k+1, k in [2, kMaxMembers − 1]
  int raid10_pairs = 4;         // RAID10 mirror pairs per extent, [1, kMaxMembers / 2]
  std::int64_t strip_bytes = 64 << 10;  // power of two >= 4 KiB dividing the chunk
  std::int64_t chunk_bytes = 16 << 20;
};

// What the engine's own recovery did since it was built.
struct EngineStats {
  std::int64_t read_repairs = 0;         // member ranges reconstructed after a media error and rewritten
  std::int64_t unrecoverable_reads = 0;  // media errors redundancy did not cover
};

// What verifying one row found (Engine::scrub_row).
struct RowVerdict {
  int media_errors = 0;     // member strips that failed to read
  int repaired = 0;         // of those, rebuilt from redundancy and rewritten
  int unrecoverable = 0;    // of those, beyond what redundancy covers (reported, left as they are)
  int mismatches = 0;       // parity or mirror found inconsistent (rewritten from the data)
  std::string detail;       // what was wrong, for the event; "" when all was well
};

// Reads of a member range that reports a media error before its bytes are rebuilt from
// redundancy. Assumption: a few retries, as a SCSI initiator retries a MEDIUM ERROR (the Linux
// mid-layer allows 5); a retry finds a transient error gone (carried over from the old data
// path, commit 8743ece: the ssd.read_error fault point had a destage's read-modify-write drop
// acknowledged data).
inline constexpr int kMediaReadAttempts = 3;

class Engine {
 public:
  // kInvalidArgument naming the geometry field out of range.
  static sim::Status validate(const Geometry& g);
  // REQUIRES: validate(g) is ok. `store` null: no payload (plans carry no bytes, execute()
  // does nothing). The store outlives the engine.
  Engine(const Geometry& g, MemberStore* store);

  // Inline: the thin map asks for a layout's divisor on every host I/O.
  const Layout& layout(RaidType type) const {
    switch (type) {
      case RaidType::kRaid10: return raid10_;
      case RaidType::kRaid5: return raid5_;
      case RaidType::kRaid0: return raid0_;
    }
    return raid10_;
  }
  const Geometry& geometry() const { return geometry_; }
  std::int64_t chunk_bytes() const { return geometry_.chunk_bytes; }
  bool has_payload() const { return store_ != nullptr; }
  const EngineStats& stats() const { return stats_; }
  // With invariants on, every RAID 5 row a plan writes on a whole extent is verified after
  // execute() ("raid5.parity" violations at the simulator's time). REQUIRES: both outlive
  // the engine.
  void set_invariants(sim::Invariants* invariants, const sim::Simulator* sim) {
    invariants_ = invariants;
    sim_ = sim;
  }

  // Appends the operations that read [offset, +length) of `e`'s host data into `out` (null:
  // no bytes). kIoError when the layout cannot serve the range (both copies lost, two RAID5
  // members lost, a RAID0 member lost); `plan` then holds a partial plan.
  sim::Status plan_read(Extent& e, std::int64_t offset, std::int64_t length, std::uint8_t* out, Plan& plan);
  // Appends the operations that write `data` (null: zeros) to [offset, +length) of `e` and
  // counts the bytes in e.written_bytes. kIoError as plan_read (a RAID5 read-modify-write
  // whose old data cannot be read).
  sim::Status plan_write(Extent& e, std::int64_t offset, std::int64_t length, const std::uint8_t* data,
                         Plan& plan);
  // Whether a live member of `e` has a media error in the rows [offset, +length) of the extent
  // spans (each member's strips of those rows). False without payload; cheap when no block has
  // one. The write path sends such a write through instead of caching it (review 39).
  bool rows_have_media_error(const Extent& e, std::int64_t offset, std::int64_t length) const;
  // Whether any block has a media error now (payload only).
  bool any_media_error() const { return has_payload() && !store_->media_errors_none(); }
  // Appends a trim of every live member's whole chunk (a fixed volume's unmap).
  void plan_trim(Extent& e, Plan& plan);
  // Moves the plan's bytes: phase-0 reads (repairing media errors), the parity steps, then
  // phase-1 writes and trims. No-op without payload. kIoError for an unrecoverable read, or
  // what a device reports; the writes before the error are done.
  // Inline: without payload (the performance runs) a host I/O's plan costs a test here.
  sim::Status execute(Plan& plan) { return has_payload() ? execute_payload(plan) : sim::Status::ok(); }

  // Writes member `m`'s whole content, reconstructed from the other members, to
  // `replacement` (rows that hold nothing anywhere are skipped: freed chunks read as zeros).
  // A 4 KiB block whose sources include a media error cannot be reconstructed: it is marked
  // unreadable on the replacement (MemberStore::mark_unreadable: reads of it fail until a
  // write covers it, as a hardware RAID's punctured stripe) and its chunk byte offset is
  // appended to `unreadable`; the rest of the chunk is rebuilt. Errors: kIoError when a
  // source cannot be read for another reason (a second member lost, a failed device), or
  // what the devices report.
  sim::Status rebuild_member(Extent& e, int m, ChunkAddr replacement, std::vector<std::int64_t>& unreadable);
  // Copies [offset, +length) of chunk `from` to chunk `to` (an extent move's segment).
  sim::Status copy_chunk(ChunkAddr from, ChunkAddr to, std::int64_t offset, std::int64_t length);
  // Makes a whole chunk read as zeros (a chunk going back to the pool). No-op without payload.
  sim::Status trim_chunk(ChunkAddr chunk);

  // Appends the reads of row `row` of every live member of `e` (timing of a scrub piece).
  void plan_scrub_row(Extent& e, std::int64_t row, Plan& plan);
  // Verifies row `row` of `e` against its redundancy and repairs what it can (see RowVerdict);
  // the repair writes are appended to `plan`. Without payload it finds nothing.
  RowVerdict scrub_row(Extent& e, std::int64_t row, Plan& plan);

  // "" or where RAID 5 row `row` of `e` (all members present) has parity that does not match.
  std::string check_row_parity(const Extent& e, std::int64_t row) const;
  // check_row_parity over every row of every whole RAID 5 extent of `table`.
  std::string check_parity(const ExtentTable& table) const;

 private:
  // check_row_parity over [offset, +length) of the members' chunks; `skip_unreadable`: "" when
  // a member has a media error there.
  std::string check_parity_range(const Extent& e, std::int64_t row, std::int64_t offset, std::int64_t length,
                                 bool skip_unreadable) const;
  // Whether a live member other than `m` has a media error in [offset, +length) of its chunk.
  bool source_media_error(const Extent& e, int m, std::int64_t offset, std::int64_t length) const;
  // rebuild_member's fallback for a row with an unreadable source: the row's 4 KiB blocks one
  // by one into `buf` (`length` bytes) and onto `replacement`, marking those that cannot be
  // read unreadable there.
  sim::Status rebuild_row_by_block(Extent& e, int m, std::int64_t offset, std::int64_t length, std::uint8_t* buf,
                                   ChunkAddr replacement, std::vector<std::int64_t>& unreadable);
  // The operation `kind` on [offset, +length) of member `m`'s chunk.
  static MemberOp member_op(Extent& e, int m, std::int64_t offset, std::int64_t length, MemberOpKind kind) {
    MemberOp op;
    op.addr = e.members[static_cast<std::size_t>(m)];
    op.offset_in_chunk = offset;
    op.length = length;
    op.op = kind;
    op.phase = kind == MemberOpKind::kRead ? 0 : 1;
    op.member = static_cast<std::int8_t>(m);
    op.extent = &e;
    return op;
  }
  // Appends the reads of [offset, +length) of member `m` into `out` (null: no bytes): the
  // member's own, or for a lost member read_lost_member's. Inline: nearly every read is of a
  // live member, one operation appended.
  sim::Status read_member(Extent& e, int m, std::int64_t offset, std::int64_t length, std::uint8_t* out,
                          Plan& plan) {
    if (e.is_missing(m)) [[unlikely]]
      return read_lost_member(e, m, offset, length, out, plan);
    MemberOp op = member_op(e, m, offset, length, MemberOpKind::kRead);
    op.out = out;
    plan.ops.push_back(op);
    return sim::Status::ok();
  }
  // read_member of a lost member: its mirror (RAID10) or the XOR of every other member
  // (RAID5). kIoError when redundancy does not cover it.
  sim::Status read_lost_member(Extent& e, int m, std::int64_t offset, std::int64_t length, std::uint8_t* out,
                               Plan& plan);
  void write_member(Extent& e, int m, std::int64_t offset, std::int64_t length, const std::uint8_t* data,
                    Plan& plan);
  sim::Status write_raid5_row(Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                              const std::uint8_t* data, Plan& plan);
  sim::Status write_raid5_partial(Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                                  const std::uint8_t* data, Plan& plan);
  // Whether a partial RAID 5 row write should read the data it leaves (reconstruct-write)
  // rather than the old data and parity (read-modify-write): only when the latter meets a
  // media error and the former does not. [lo, hi): the column range the parity update spans.
  bool prefer_reconstruct_write(const Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                                std::int64_t lo, std::int64_t hi) const;
  // The reconstruct-write of a partial row. REQUIRES: payload; no member missing.
  sim::Status write_raid5_reconstruct(Extent& e, std::int64_t row, std::int64_t row_offset, std::int64_t length,
                                      std::int64_t lo, std::int64_t hi, const std::uint8_t* data, Plan& plan);
  // Reconstructs [offset, +length) of member `m` of `e` into `out` from the other members,
  // reading them now (execute time); the reads are appended to `plan`. kIoError when
  // redundancy does not cover it.
  sim::Status reconstruct_now(Extent& e, int m, std::int64_t offset, std::int64_t length, std::uint8_t* out,
                              Plan& plan);
  // Reads a member range, retrying a media error: kMediaReadAttempts reads in all, each
  // retry appended to `plan` (timed). Returns the last read's status.
  // execute() with a payload.
  sim::Status execute_payload(Plan& plan);
  sim::Status read_retrying(ChunkAddr addr, std::int64_t offset, std::span<std::uint8_t> out, Plan& plan);
  sim::Status recover_read(Plan& plan, std::size_t op_index);
  sim::Status apply_writes(Plan& plan);
  const std::uint8_t* zeros(std::int64_t length);
  template <typename Repair>
  void scrub_raid5_column(std::vector<std::vector<std::uint8_t>>& blocks, const std::vector<bool>& bad,
                          int bad_count, std::int64_t at, RowVerdict& v, Repair& repair);
  template <typename Repair>
  void scrub_mirror_column(std::vector<std::vector<std::uint8_t>>& blocks, const std::vector<bool>& bad, int m,
                           std::int64_t at, RowVerdict& v, Repair& repair);

  Geometry geometry_;
  Layout raid10_, raid5_, raid0_;
  MemberStore* store_;
  EngineStats stats_;
  sim::Invariants* invariants_ = nullptr;
  const sim::Simulator* sim_ = nullptr;
  std::vector<std::uint8_t> zeros_;
};

}  // namespace afasim::raid
