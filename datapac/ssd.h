// One SSD of a DataPac: its timing and wear (an ssd::FlashSsd, the flash-up model of
// docs/ssd-model.md), its failure states and the payload store behind it.
//
// schedule() reserves the drive's resources for one command and returns its completion time
// (the caller schedules its own completion event); the FlashSsd inside times it from the
// host link down to the NAND dies, with garbage collection, program/erase suspend and the
// write buffer. Payload calls (write_payload, read_payload, ...) move bytes with no timing;
// the caller times the command with schedule() and moves its bytes with these.
//
// States: healthy → failed (fail()); present ↔ removed (remove(), insert() puts the same
// drive back, its data and wear intact); insert_replacement() puts a new, empty, fresh
// drive with zero wear in the slot. A DataPac pulled from the chassis makes every one of its
// SSDs read as removed. A command scheduled before a state change completes at the time
// schedule() returned; the caller checks state() or incarnation() at completion if it
// needs to know that the drive changed meanwhile.
//
// Not thread-safe: an Ssd belongs to the model thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "config/preset.h"
#include "datapac/block_device.h"
#include "datapac/fault_points.h"
#include "datapac/payload.h"
#include "datapac/wear.h"
#include "sim/rng.h"
#include "sim/status.h"
#include "sim/time.h"
#include "ssd/flash_ssd.h"

namespace afasim::datapac {

enum class SsdOp { kRead, kWrite, kTrim, kFlush };
enum class SsdState { kHealthy, kFailed, kRemoved };

const char* ssd_op_name(SsdOp op);       // "read", "write", "trim", "flush"
const char* ssd_state_name(SsdState s);  // "healthy", "failed", "removed"

struct SsdOptions {
  // Names the drive in messages and its payload file; 1..64 characters of [A-Za-z0-9._-].
  std::string name = "ssd";
  PayloadKind payload = PayloadKind::kNone;
  // For PayloadKind::kFile: an existing directory; the file is <dir>/<name>.payload.
  std::string payload_directory;
  // For PayloadKind::kFile: the file held this drive's data before (a restart): missing or
  // empty, the drive is refused rather than started blank (open_file_store).
  bool payload_must_exist = false;
  // For PayloadKind::kMemory: page size, a power of two in [512, 16 MiB].
  std::int64_t memory_page_bytes = 64 << 10;
  // Tests only: wraps the opened payload store (a FaultInjectionPayloadStore).
  PayloadWrapper wrap_payload;
  // true: the drive starts in steady state (filled and random-written over its span, garbage
  // collection running, as random write figures are measured); false: fresh out of the box,
  // nothing mapped, no garbage collection until the NAND has been written over.
  bool preconditioned = true;
  // Fraction of the LBA space the host ever writes, (0, 1]. 1 reproduces the spec sheet's
  // full-span conditions; an array that keeps 20 % of every SSD unused passes 0.8, which
  // raises the effective spare area and lowers write amplification.
  double host_span_fraction = 1.0;
  // Seed of this drive (kept for callers; the model draws nothing at random while it runs).
  std::uint64_t seed = 0;
  // Window of the recent write-rate meters, > 0.
  sim::Time write_rate_window = 60 * sim::kSecond;
};

// Operation counters of one drive since it was inserted (a replacement starts at zero).
struct SsdCounters {
  // The two a read bumps first: Ssd keeps them in the line a read reads.
  std::int64_t reads = 0;
  std::int64_t bytes_read = 0;
  std::int64_t writes = 0;
  std::int64_t trims = 0;
  std::int64_t flushes = 0;
  std::int64_t bytes_written = 0;
  std::int64_t bytes_trimmed = 0;
};

// Figures of the drive's state the layers above read (wear leveling, reports, tests).
struct SsdTiming {
  // Write amplification of uniform random writes over the drive's current span in steady
  // state, from its mapping table's greedy GC (1 while the drive is fresh).
  double random_write_amplification = 1;
  // The same at full span: the rating's workload (JESD219 is random and full-span).
  double native_write_amplification = 1;
  bool steady_state = false;
  double latency_multiplier = 1;
};

class alignas(64) Ssd : public BlockDevice {
 public:
  // Checks the model's figures and the options: kInvalidArgument saying which is wrong.
  static sim::Status validate(const config::SsdModel& model, const SsdOptions& options);
  // A drive, its payload store opened: the validation error, or the payload file's error.
  static sim::Result<std::unique_ptr<Ssd>> create(const config::SsdModel& model,
                                                  const SsdOptions& options);
  // REQUIRES: validate(model, options) is ok. A payload file that cannot be opened leaves
  // the drive usable for timing and makes every payload call return that error
  // (payload_status()); prefer create(), which returns it.
  Ssd(const config::SsdModel& model, const SsdOptions& options);
  Ssd(Ssd&&) noexcept;
  Ssd& operator=(Ssd&&) noexcept;
  ~Ssd();

  // --- Timing ---
  // Reserves the drive for `op` on [offset, offset + length) arriving at `arrival` and
  // returns its completion time (>= arrival). Flush ignores offset and length.
  // Errors: kIoError if failed, kUnavailable if removed, kInvalidArgument if length <= 0
  // (read, write, trim), kOutOfRange if the range passes the end or offset < 0.
  // REQUIRES: arrival >= 0.
  sim::Result<sim::Time> schedule(sim::Time arrival, SsdOp op, std::int64_t offset_bytes,
                                  std::int64_t length_bytes);
  // Starts loading into the CPU cache what a read at `offset_bytes` will touch (a caller that
  // schedules it after other work). Speed only. REQUIRES: 0 <= offset_bytes < capacity.
  void prefetch_read(std::int64_t offset_bytes) const { flash_->prefetch_read(offset_bytes); }

  // --- Payload (no timing) ---
  // Each: kIoError if failed, kUnavailable if removed, kOutOfRange if the range passes the
  // end or offset < 0, the store's own error (file) otherwise. An empty span is a no-op.
  sim::Status write_payload(std::int64_t offset_bytes, std::span<const std::uint8_t> data) override;
  // Never-written and trimmed bytes read as zeros; `none` reads zeros everywhere.
  sim::Status read_payload(std::int64_t offset_bytes, std::span<std::uint8_t> out) const override;
  sim::Status trim_payload(std::int64_t offset_bytes, std::int64_t length_bytes) override;
  // False only when the range certainly reads as zeros (PayloadStore::may_hold_data); true
  // when unsure or when the drive cannot be read.
  bool payload_may_hold_data(std::int64_t offset_bytes, std::int64_t length_bytes) const override;
  // File store: fdatasync. Others: no-op.
  sim::Status flush_payload();
  // The error opening the payload store hit (ok when it opened).
  const sim::Status& payload_status() const { return payload_status_; }
  PayloadKind payload_kind() const { return options_.payload; }
  // Host memory the payload holds (memory store), 0 otherwise.
  std::int64_t payload_memory_bytes() const;

  // --- State and faults ---
  SsdState state() const {
    if (!inserted_ || !enclosure_present_) return SsdState::kRemoved;
    return failed_ ? SsdState::kFailed : SsdState::kHealthy;
  }
  // Healthy → failed (already failed: ok). kPreconditionFailed if removed.
  sim::Status fail();
  // Takes the drive out of its slot. kPreconditionFailed if already out.
  sim::Status remove();
  // Puts the same drive back (its data, wear and health as they were). kPreconditionFailed
  // if it is in its slot, or its DataPac is pulled.
  sim::Status insert();
  // Puts a new drive in the slot (the old one, if present, goes): healthy, fresh out of the
  // box, zero wear and counters, an empty payload, idle. kPreconditionFailed if the DataPac
  // is pulled; the payload file's error if it cannot be emptied.
  sim::Status insert_replacement();
  // A new drive in the slot since construction increments this (0 at first).
  std::uint64_t incarnation() const { return incarnation_; }
  // Slow-SSD fault (DESIGN.md "Faults"): every service time and overhead inside the drive is
  // multiplied by `m` (> 0; 1 restores it); interface transfers are not. Applies to
  // commands scheduled from now on. REQUIRES: m > 0 and finite.
  void set_latency_multiplier(double m);
  double latency_multiplier() const { return latency_multiplier_; }
  // For DataPac: the enclosure holding this slot was pulled (false) or inserted (true).
  void set_enclosure_present(bool present) { enclosure_present_ = present; }

  // --- Wear ---
  const SsdWear& wear() const { return wear_; }
  // Host bytes written that continued one of the last kWriteRuns write runs (a write starting
  // where one of them ended): what the SSD's garbage collection sees as sequential, whole
  // blocks invalidated together. Fast-forward's bulk writes add their sequential fraction.
  // The wear leveler's fast-forward takes each SSD's sequential fraction from it.
  std::int64_t sequential_bytes_written() const { return sequential_bytes_written_; }
  // Interleaved sequential streams one SSD tells apart: an array destages several runs at once
  // (each RAID member chunk of a stream is one run on its drive). Assumption: 8, as a drive keeps
  // a few open write points (NVMe streams and most FTLs: 4 to 16).
  static constexpr int kWriteRuns = 8;
  // Host / NAND bytes written per second over the last complete rate window before `now`.
  double host_write_bytes_per_second(sim::Time now) const { return host_rate_.rate(now); }
  double nand_write_bytes_per_second(sim::Time now) const { return nand_rate_.rate(now); }
  // NAND bytes the rating allows: rated host endurance (dwpd × capacity × 365 × warranty
  // years) × the WA of the rating's workload, taken as full-span random writes at the
  // drive's own spare (JESD219's enterprise workload is random and full-span).
  double endurance_nand_bytes() const { return endurance_nand_bytes_; }
  // Fast-forward: adds `host_bytes` of writes spread over [start, start + duration), a
  // `sequential_fraction` of them sequential, to the wear counters and rates as schedule()
  // would (including the fresh → steady-state transition), without touching timing.
  // kIoError / kUnavailable as schedule(); kInvalidArgument for negative bytes or duration
  // or a fraction outside [0, 1].
  sim::Status add_bulk_writes(sim::Time start, sim::Time duration, std::int64_t host_bytes,
                              double sequential_fraction);
  // Changes SsdOptions::host_span_fraction (an array that changes how much of each SSD it
  // uses). kInvalidArgument outside (0, 1].
  sim::Status set_host_span_fraction(double fraction);
  double host_span_fraction() const { return options_.host_span_fraction; }

  // --- Identity and model ---
  const std::string& name() const { return options_.name; }
  std::int64_t capacity_bytes() const { return model_.capacity_bytes; }
  const config::SsdModel& model() const { return model_; }
  const SsdTiming& timing() const { return timing_; }
  const SsdCounters& counters() const { return counters_; }
  // Bytes in the write buffer not yet programmed, as of the last command scheduled.
  std::int64_t buffered_bytes() const { return flash_->buffered_bytes(); }
  // The flash model inside (stats: waits, suspends, GC and program bytes).
  const ssd::FlashSsd& flash() const { return *flash_; }

 private:
  sim::Status check_access(std::int64_t offset, std::int64_t length) const;
  // Whether a read, write or trim of [offset, offset + length) is served: the drive healthy,
  // the range non-empty and inside it. (check_access says why not.)
  bool accepts(std::int64_t offset, std::int64_t length) const {
    return state() == SsdState::kHealthy && length > 0 && offset >= 0 &&
           offset <= capacity_bytes_ - length;
  }
  // A read that accepts() passed.
  sim::Time schedule_read(sim::Time arrival, std::int64_t offset, std::int64_t length) {
    ++counters_.reads;
    counters_.bytes_read += length;
    return ssd_op_fault(flash_->schedule(arrival, ssd::Op::kRead, offset, length), read_ns_);
  }
  // schedule() of every command but an accepted read: the checks, then the command.
  sim::Result<sim::Time> schedule_checked(sim::Time arrival, SsdOp op, std::int64_t offset_bytes,
                                          std::int64_t length_bytes);
  void refresh_timing();
  // Counts the NAND bytes the flash model committed since the last count into the wear;
  // returns them.
  std::int64_t count_nand();
  // Counts a write of [offset, offset + length) sequential when it continues a recent run.
  void note_write_run(std::int64_t offset, std::int64_t length);
  void reset_drive();

  // What a read reads and writes of the object, in its first cache line (the class is
  // aligned to one; after the vtable pointer): with 256 I/Os in flight over many drives the
  // drive is cold when its next read comes.
  std::unique_ptr<ssd::FlashSsd> flash_;
  std::int64_t capacity_bytes_ = 0;  // model_.capacity_bytes
  sim::Time read_ns_ = 0;            // model_.nand.read_ns
  // State.
  bool failed_ = false;
  bool inserted_ = true;
  bool enclosure_present_ = true;
  SsdCounters counters_;  // reads and bytes_read in the first line

  sim::Time program_ns_ = 0;  // model_.nand.program_ns
  std::uint64_t incarnation_ = 0;
  double latency_multiplier_ = 1.0;

  SsdTiming timing_;
  // Wear.
  SsdWear wear_;
  double endurance_nand_bytes_ = 0;
  double percent_per_nand_byte_ = 0;
  double nand_committed_ = 0;  // the FlashSsd's committed NAND bytes at the last count
  RateMeter host_rate_;
  RateMeter nand_rate_;
  std::array<std::int64_t, kWriteRuns> write_run_end_;  // -1: none; replaced oldest first
  int next_write_run_ = 0;
  std::int64_t sequential_bytes_written_ = 0;

  config::SsdModel model_;
  SsdOptions options_;
  std::unique_ptr<PayloadStore> payload_;
  sim::Status payload_status_;
};

// Inline: a read, the hot command, goes from the caller straight to the flash model (no
// call, and no error Result, in between).
[[gnu::always_inline]] inline sim::Result<sim::Time> Ssd::schedule(sim::Time arrival, SsdOp op,
                                                                   std::int64_t offset_bytes,
                                                                   std::int64_t length_bytes) {
  if (op == SsdOp::kRead && accepts(offset_bytes, length_bytes)) [[likely]]
    return schedule_read(arrival, offset_bytes, length_bytes);
  return schedule_checked(arrival, op, offset_bytes, length_bytes);
}

}  // namespace afasim::datapac
