// One SSD timed from the flash up: host link, controller cores, NAND channels and dies, a
// write buffer, a mapping table with greedy garbage collection, an SLC cache where the drive
// has one (docs/ssd-model.md).
//
// Abstraction level. Every resource is an analytic busy-until server, as elsewhere in afasim:
// schedule() reserves what one command uses and returns its completion time; the caller
// schedules one event at that time. The SSD has no events of its own:
// - the host link (one per direction), the controller's cores (a k-server FIFO station),
//   each NAND channel and each die are servers;
// - writes are acknowledged from the write buffer; the buffer is written to NAND by a
//   flusher that runs lazily at every call, booking program operations (one "program unit":
//   page × planes × pages per program) on the dies in round-robin order (a superblock stripe)
//   whenever the next die is free, and garbage-collection and SLC-fold work beside them;
// - a read goes to the die its page lives on (pages striped over dies) and waits for that
//   die: behind earlier reads, behind a program or an erase in progress unless the NAND can
//   suspend it (then it pays the suspend cost and stretches the suspended operation);
// - blocks are counters, in a scaled replica of the mapping table (ssd/replica_ftl.h) that
//   the drive samples one real 4 KiB unit in every `scale` into: its greedy garbage
//   collection decides how much data must be relocated, and that work becomes NAND reads and
//   programs the dies must find time for, so write amplification and the steady-state write
//   rate emerge; there are no per-page objects.
// Cost per call: O(pages touched + program units booked + controller cores); memory about
// 1 MiB for the replica plus a few words per die.
//
// Calls should come in non-decreasing arrival order (the flusher books work up to the
// latest arrival); an earlier arrival is served as if it came at the latest one's state, the
// usual busy-until approximation.
//
// Not thread-safe: a FlashSsd belongs to the model thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <vector>

#include "config/preset.h"
#include "sim/assert.h"
#include "sim/divisor.h"
#include "sim/station.h"
#include "sim/status.h"
#include "sim/time.h"
#include "ssd/pipe.h"
#include "ssd/replica_ftl.h"

namespace afasim::ssd {

enum class Op { kRead, kWrite, kTrim, kFlush };

// How the drive starts.
enum class StartState {
  kFresh,   // fresh out of the box: nothing mapped, every block erased
  kFilled,  // the span written once sequentially (a VDBench format / fio fill)
  kSteady,  // filled, then random 4 KiB writes of twice the span (SNIA PTS preconditioning)
};

const char* start_state_name(StartState s);  // "fresh", "filled", "steady"
// "fresh" | "filled" | "steady" → the state; kInvalidArgument otherwise.
sim::Result<StartState> parse_start_state(const std::string& s);

struct FlashOptions {
  StartState start = StartState::kSteady;
  // Fraction of the LBA space preconditioning writes (from offset 0), (0, 1]. An array that
  // never writes the last fifth of each SSD passes 0.8: that space stays unmapped and acts
  // as spare for garbage collection.
  double span_fraction = 1.0;
};

// What the drive did since it was created (or reset).
struct FlashStats {
  // The two a read always bumps first: FlashSsd keeps them in its read path's cache lines.
  std::int64_t reads = 0;
  sim::Time read_wait_ns = 0;             // total time reads waited for their die
  std::int64_t writes = 0;
  std::int64_t host_write_bytes = 0;      // host bytes admitted into the buffer
  std::int64_t host_program_bytes = 0;    // host data programmed (SLC or direct)
  std::int64_t gc_program_bytes = 0;      // data relocated by garbage collection
  std::int64_t fold_program_bytes = 0;    // SLC cache data folded into TLC
  std::int64_t block_erases = 0;          // multi-plane block erases
  std::int64_t reads_waited_program = 0;  // reads that waited for a program to end
  std::int64_t reads_waited_erase = 0;    // reads that waited for an erase to end
  std::int64_t reads_suspended = 0;       // reads that suspended a program or erase
  std::int64_t nand_program_bytes() const {
    return host_program_bytes + gc_program_bytes + fold_program_bytes;
  }
  // NAND bytes programmed per host byte programmed; 1 before any program.
  double write_amplification() const;
};

class alignas(64) FlashSsd {
 public:
  // kInvalidArgument naming what is inconsistent (config::Catalog checks each figure).
  static sim::Status validate(const config::SsdModel& model);
  // REQUIRES: validate(model) is ok, 0 < options.span_fraction <= 1.
  FlashSsd(const config::SsdModel& model, const FlashOptions& options);
  ~FlashSsd();
  FlashSsd(FlashSsd&&) noexcept;
  FlashSsd& operator=(FlashSsd&&) noexcept;

  // Reserves the drive for `op` on [offset, offset + length) arriving at `arrival` and
  // returns its completion time (> arrival). Flush ignores offset and length. Trim unmaps
  // the replica units it covers whole.
  // REQUIRES: arrival >= 0; for read/write/trim length > 0 and the range inside the drive.
  sim::Time schedule(sim::Time arrival, Op op, std::int64_t offset_bytes, std::int64_t length_bytes);
  // Starts loading into the CPU cache what a read at `offset_bytes` will touch (its die, its
  // channel, the host link, its mapped bit): for a caller that schedules it after other work.
  // Speed only: no state changes. REQUIRES: 0 <= offset_bytes < capacity.
  void prefetch_read(std::int64_t offset_bytes) const;

  // A new drive in the same slot: `start` state, every resource idle from time 0, stats and
  // wear zero.
  void reset(StartState start);
  // Slow-drive fault: every NAND time, controller time and overhead × m (the links keep
  // their rate). REQUIRES: m > 0 and finite.
  void set_latency_multiplier(double m);
  // Changes the span preconditioning and bulk writes use (an array that changes how much of
  // the drive it uses). REQUIRES: 0 < f <= 1.
  void set_span_fraction(double f);

  // Fast-forward wear: `host_bytes` written, a `sequential_fraction` of them as one
  // sequential stream and the rest uniformly at random over the span, through the mapping
  // table and its garbage collection, without timing. Returns the NAND bytes programmed
  // (host + relocated). Replayed: up to 4 × the replica's span in all (to steady state),
  // then at most span / 64 per call; all of it is priced at the replica's recent garbage
  // collection ratio after the replay, as the per-I/O path prices writes.
  // REQUIRES: host_bytes >= 0, 0 <= sequential_fraction <= 1.
  std::int64_t add_bulk_writes(std::int64_t host_bytes, double sequential_fraction);

  // Write amplification of uniform random 4 KiB writes over `span_fraction` of a drive of
  // this model in steady state, from its mapping table's greedy GC (computed once per model
  // and span, then cached).
  static double steady_random_write_amplification(const config::SsdModel& model,
                                                  double span_fraction);
  // NAND bytes the drive has committed to program for the host writes scheduled so far:
  // host bytes plus the garbage collection they cause (programmed a little later).
  double nand_bytes_committed() const { return committed_nand_; }

  const config::SsdModel& model() const { return model_; }
  const FlashStats& stats() const { return stats_; }
  const ReplicaFtl& ftl() const { return *ftl_; }
  bool steady_state() const { return ftl_->steady(); }
  std::int64_t buffered_bytes() const { return buffer_used_; }
  std::int64_t slc_cache_used_bytes() const { return slc_used_; }
  // Write amplification of the mapping table so far (replica host + relocated over host),
  // 1 before the first garbage collection.
  double ftl_write_amplification() const;
  // Derived constants, for reports and tests.
  std::int64_t host_program_unit_bytes() const { return tlc_unit_; }
  int dies() const { return static_cast<int>(dies_.size()); }
  sim::Time read_command_ns() const { return read_cmd_ns_; }

 private:
  // What a read reads of a die: 32 bytes on a 32-byte boundary, one cache line (a read's die
  // is cold when it comes). The rest, which only the flusher and a read meeting a program or
  // an erase use, is in DieOp.
  struct alignas(32) Die {
    sim::Time busy_until = 0;  // end of the last operation booked on it
    sim::Time read_until = 0;  // end of the last read booked on it
    sim::Time op_start = 0;    // the last program/erase booked: its start and end (0 if none)
    sim::Time op_end = 0;
  };
  struct DieOp {
    double erase_debt = 0;     // block erases owed before further programs
    std::uint8_t op_kind = 0;  // the last program/erase booked: 0 none, 1 program, 2 erase
  };
  enum class Unit { kNone, kHost, kGc, kFold };
  struct Release {
    sim::Time at;
    std::int64_t bytes;
    bool operator>(const Release& o) const { return at > o.at; }
  };

  void derive_timing();
  void reset_state();
  // schedule() of a write, a trim or a flush.
  sim::Time schedule_other(sim::Time arrival, Op op, std::int64_t offset, std::int64_t length);
  sim::Time schedule_read(sim::Time t, std::int64_t offset, std::int64_t length);
  sim::Time schedule_write(sim::Time t, std::int64_t offset, std::int64_t length);
  sim::Time schedule_flush(sim::Time t);
  // Starts the sense of one page on die `d` for a read arriving at `t`; returns its end.
  sim::Time read_on_die(int d, sim::Time t);
  int die_of_page(std::int64_t page) const;
  // Feeds a host write's 4 KiB units into the replica (1 in scale) and adds the garbage
  // collection work they cause at the replica's current rate.
  void feed_ftl(std::int64_t first_unit, std::int64_t units);
  Unit next_unit(bool forced) const;
  // Books flusher work on dies free by `t`: book_owed from the unit next_unit gave (not kNone).
  void advance(sim::Time t);
  void book_owed(Unit u, sim::Time t);
  // Bytes the next host unit takes (SLC or native), and when its last byte was admitted.
  std::int64_t next_host_unit_bytes() const;
  sim::Time next_host_ready() const;
  // `bytes` of the pending host data are booked: the oldest admissions leave the FIFO.
  void consume_admitted(std::int64_t bytes);
  int earliest_die() const;
  // Books the next unit of flusher work on die next_die_, starting no earlier than `ready`.
  void book_unit(Unit kind, sim::Time ready);
  // Books `bytes` on a channel; background traffic (program data) yields to reads.
  sim::Time channel_transfer(int channel, sim::Time at, std::int64_t bytes, bool background = false);
  void pop_releases(sim::Time t);
  void update_gc_rate();

  // --- What a read reads and writes of the object, in its first four cache lines ---
  // With 256 I/Os in flight over many drives, a drive is cold when its next read comes: each
  // line here is a miss per read, and the read path touches no other line of the object (but
  // link_out_'s first, just after). Each field is the copy the read path uses; where it
  // comes from is said beside it.
  // Divisors of the read path (sim::Divisor): the NAND page, the replica's unit (scale × 4 KiB,
  // set with the replica), the dies and the channels.
  sim::Divisor page_div_, replica_unit_div_, dies_div_, channels_div_;
  const std::uint64_t* mapped_bits_ = nullptr;  // ftl_->mapped_bits(), set with the replica
  Die* die_data_ = nullptr;                     // dies_.data()
  Pipe* channel_data_ = nullptr;                // channels_.data()
  sim::Time read_cmd_ns_ = 0, read_ovh_ns_ = 0, t_read_ = 0;
  sim::Time host_latency_ns_ = 0;     // model_.host.latency_ns
  std::int64_t capacity_bytes_ = 0;   // model_.capacity_bytes
  // What next_unit() reads (advance() on every read asks whether the flusher owes work).
  double gc_debt_ = 0;             // bytes GC must still relocate
  double gc_ratio_ = 0;            // relocated bytes per host byte, from the replica
  std::int64_t host_pending_ = 0;  // admitted host bytes not yet booked
  std::int64_t slc_used_ = 0;
  std::int64_t tlc_unit_ = 0;       // program unit in the native mode
  std::int64_t slc_unit_ = 0;       // program unit in SLC mode
  std::int64_t slc_cache_bytes_ = 0;  // model_.nand.slc_cache_bytes
  sim::Station cores_{1};
  FlashStats stats_;  // reads and read_wait_ns here, the rest in the next line
  Pipe link_out_;     // aligned: its own line, the line after the stats' first

  // --- The rest ---
  std::unique_ptr<ReplicaFtl> ftl_;
  double latency_multiplier_ = 1;

  // Derived timing (derive_timing()).
  sim::Time write_cmd_ns_ = 0, write_ovh_ns_ = 0;
  sim::Time t_prog_ = 0, t_erase_ = 0, t_suspend_ = 0;
  sim::Time t_slc_prog_ = 0, t_slc_read_ = 0;
  std::int64_t units_per_page_ = 1;  // 4 KiB units per NAND page
  double erase_per_byte_ = 0;       // block erases per programmed byte

  // Resources.
  std::vector<Die> dies_;
  std::vector<DieOp> die_ops_;  // per die, beside dies_
  std::vector<Pipe> channels_;
  Pipe link_in_, write_path_;
  int next_die_ = 0;

  // Write buffer and flusher.
  std::int64_t buffer_used_ = 0;   // admitted host bytes not yet programmed
  sim::Time last_admit_ = 0;       // the latest write's admission (admissions never go back)
  // When each pending write was admitted, oldest first: a unit is ready for a die when its
  // last byte is in the buffer, not when the latest write is (a closed loop at a full buffer
  // admits writes ahead of now, and one ready time for everything pending left dies idle).
  // Bounded by the buffer: at most write_buffer_bytes / 4 KiB entries (16,384 for 64 MiB),
  // plus one write larger than the buffer.
  struct Admitted {
    std::int64_t end;  // admitted_bytes_ after this write
    sim::Time at;
  };
  std::deque<Admitted> admitted_;
  std::int64_t admitted_bytes_ = 0;  // host bytes admitted since the reset
  std::int64_t booked_bytes_ = 0;    // of them, booked onto a die
  std::priority_queue<Release, std::vector<Release>, std::greater<>> releases_;
  double gc_read_pages_per_byte_ = 0;
  double committed_nand_ = 0;
  std::int64_t ftl_carry_ = 0;     // real units written since the last replica sample
  std::int64_t bulk_cursor_ = 0;   // sequential stream position of add_bulk_writes
  std::int64_t bulk_replayed_ = 0; // replica units add_bulk_writes has replayed in all

  // Last: what a read uses of them is copied above (derive_timing()), so that the read path's
  // fields share the object's first cache lines.
  config::SsdModel model_;
  FlashOptions options_;
};

// Inline: a read, the hot command, reaches schedule_read without a call between.
inline sim::Time FlashSsd::schedule(sim::Time arrival, Op op, std::int64_t offset_bytes,
                                    std::int64_t length_bytes) {
  AFASIM_ASSERT(arrival >= 0, "FlashSsd::schedule before time 0");
  AFASIM_ASSERT(op == Op::kFlush || (length_bytes > 0 && offset_bytes >= 0 &&
                                     offset_bytes <= capacity_bytes_ - length_bytes),
                "FlashSsd::schedule: range outside the drive");
  if (op != Op::kRead) return schedule_other(arrival, op, offset_bytes, length_bytes);
  ++stats_.reads;
  return schedule_read(cores_.serve(arrival, read_cmd_ns_), offset_bytes, length_bytes);
}

}  // namespace afasim::ssd
