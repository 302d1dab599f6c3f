// One SSD: spec-sheet timing, wear, failure states and the payload store behind it.
//
// Timing is analytic (docs/ssd-model.md): schedule() reserves the SSD's internal resources
// for one command and returns its completion time; the caller schedules its own completion
// event at that time. Resources, each a busy-until server in call (FIFO) order:
// - read units: `read_units` identical NAND units (dies) derived by Little's law from the
//   spec's random read IOPS and QD1 latency; a read takes one unit per 16 KiB NAND page,
//   a large read spreads its pages over up to every unit (so random IOPS saturate at the
//   spec under deep queues);
// - two interface stages, one per direction, at the spec's sequential read / write rates;
// - a power-protected write buffer of `write_buffer_bytes`: a write is acknowledged at the
//   spec's write latency while the buffer has room, and waits for room when it is full;
// - the buffer's drain to NAND, one server for the whole die array, at the steady-state
//   cost of each write (random 4 KiB: 1 / random_write_iops scaled by the current write
//   amplification; sequential: the sequential write rate). Reads have priority over the
//   drain (program/erase suspend) but take die time from it, so a saturated read/write mix
//   meets the harmonic mean of the two rates.
// schedule() is O(log units) for a read of one NAND page and O(1) for other commands
// (O(min(pages, units) · log units) for a multi-page read); it never allocates.
//
// Payload calls (write_payload, read_payload, ...) move bytes with no timing; the caller
// times the command with schedule() and moves its bytes with these.
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
#include "datapac/payload.h"
#include "datapac/wear.h"
#include "sim/rng.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::datapac {

enum class SsdOp { kRead, kWrite, kTrim, kFlush };
enum class SsdState { kHealthy, kFailed, kRemoved };

const char* ssd_op_name(SsdOp op);       // "read", "write", "trim", "flush"
const char* ssd_state_name(SsdState s);  // "healthy", "failed", "removed"

// The NAND page a read occupies a unit for. Assumption: 16 KiB, the page of the 2x-nm MLC
// NAND of 2014-2015 enterprise SSDs (e.g. 128 Gb MLC dies with 16 KiB pages); a 4 KiB
// random read costs one page read, which is how the spec's random read IOPS are measured.
inline constexpr std::int64_t kNandPageBytes = 16 << 10;
// The mapping unit of the FTL: a write is buffered, drained and worn in whole 4 KiB units
// (a 512 B write costs a 4 KiB read-modify-write inside the drive). The standard FTL mapping
// granularity of enterprise SSDs; also the block size of the spec's random IOPS figures.
inline constexpr std::int64_t kMappingUnitBytes = 4 << 10;
// How many concurrent write streams the drive recognises as sequential (the write
// continues where one of them ended). Assumption: a small stream table like the
// multi-stream detectors of enterprise FTLs; 8 covers a RAID member serving a few
// sequential destage streams at once. A write that continues no stream takes the slot of
// the least recently used entry whose run (bytes written contiguously in it) is no longer
// than the write, else of the least recently used entry: small random writes replace one
// another and do not push out a stream that has proven longer than them, so a stream
// interleaved with random traffic (a wear-leveling copy, a destage stream) stays
// recognised (docs/ssd-model.md).
inline constexpr int kWriteStreams = 8;
// Upper bound on read units, whatever a spec sheet implies (a guard against absurd input,
// far above any real drive's die count).
inline constexpr int kMaxReadUnits = 4096;

struct SsdOptions {
  // Names the drive in messages and its payload file; 1..64 characters of [A-Za-z0-9._-].
  std::string name = "ssd";
  PayloadKind payload = PayloadKind::kNone;
  // For PayloadKind::kFile: an existing directory; the file is <dir>/<name>.payload.
  std::string payload_directory;
  // For PayloadKind::kMemory: page size, a power of two in [512, 16 MiB].
  std::int64_t memory_page_bytes = 64 << 10;
  // Tests only: wraps the opened payload store (a FaultInjectionPayloadStore).
  PayloadWrapper wrap_payload;
  // true: the drive starts in steady state (garbage collection running, as the spec's
  // random write IOPS are measured); false: fresh out of the box, random writes drain at
  // the sequential rate with no amplification until the NAND has been written once over.
  bool preconditioned = true;
  // Fraction of the LBA space the host ever writes, (0, 1]. 1 reproduces the spec sheet's
  // full-span conditions; an array that keeps 20 % of every SSD unused passes 0.8, which
  // raises the effective spare area and lowers write amplification.
  double host_span_fraction = 1.0;
  // Seed of this drive's random stream (latency jitter only).
  std::uint64_t seed = 0;
  // Each read unit's service time is drawn uniformly in [1 − j, 1 + j] × its mean; 0 (the
  // default) makes timing exactly the analytic model. [0, 0.5].
  double read_jitter_fraction = 0;
  // Window of the recent write-rate meters, > 0.
  sim::Time write_rate_window = 60 * sim::kSecond;
};

// Operation counters of one drive since it was inserted (a replacement starts at zero).
struct SsdCounters {
  std::int64_t reads = 0;
  std::int64_t writes = 0;
  std::int64_t trims = 0;
  std::int64_t flushes = 0;
  std::int64_t bytes_read = 0;
  std::int64_t bytes_written = 0;
  std::int64_t bytes_trimmed = 0;
};

// The model's derived parameters (docs/ssd-model.md), for reports and tests.
struct SsdTiming {
  int read_units = 0;                     // ⌊random_read_iops × read NAND time⌋, >= 1
  sim::Time read_unit_ns = 0;             // one page read on one unit: read_units / iops
  sim::Time read_overhead_ns = 0;         // read latency − unit time − 4 KiB transfer
  sim::Time read_transfer_4k_ns = 0;      // 4 KiB at seq_read_bytes_per_second
  sim::Time write_overhead_ns = 0;        // write latency − 4 KiB transfer
  sim::Time write_transfer_4k_ns = 0;     // 4 KiB at seq_write_bytes_per_second
  sim::Time command_ns = 0;               // trim and flush: write latency
  double sequential_drain_ns_per_4k = 0;  // 4 KiB / seq_write_bytes_per_second
  double random_drain_ns_per_4k = 0;      // now: fresh, or steady at the current spare
  double native_write_amplification = 0;  // random, full span, the drive's own spare
  double random_write_amplification = 0;  // random, now (1 while fresh)
  bool steady_state = false;
  double latency_multiplier = 1;
};

class Ssd : public BlockDevice {
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
  SsdState state() const;
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
  // Bytes in the write buffer not yet drained, as of the last write scheduled.
  std::int64_t buffered_bytes() const { return buffer_used_bytes_; }

 private:
  struct BufferEntry {
    sim::Time drained_at;
    std::int64_t bytes;
  };
  struct Stream {
    std::int64_t next_offset = -1;
    std::uint64_t last_used = 0;
    std::int64_t run_bytes = 0;  // bytes written contiguously in this stream so far
  };

  sim::Status check_access(std::int64_t offset, std::int64_t length) const;
  sim::Time schedule_read(sim::Time arrival, std::int64_t offset, std::int64_t length);
  sim::Time schedule_write(sim::Time arrival, std::int64_t offset, std::int64_t length);
  // Takes the earliest-free read unit for `duration` from `arrival`; returns its start.
  sim::Time take_unit(sim::Time arrival, sim::Time duration, sim::Time* end);
  double sequential_fraction(std::int64_t offset, std::int64_t length);
  // Counts `host_bytes` written, a `sequential` fraction of them sequential, into NAND wear
  // (and the fresh → steady-state transition); returns the NAND bytes added.
  std::int64_t add_nand(std::int64_t host_bytes, double sequential);
  void grow_buffer_ring();
  void recompute_timing();
  void reset_drive();

  config::SsdModel model_;
  SsdOptions options_;
  std::unique_ptr<PayloadStore> payload_;
  sim::Status payload_status_;
  sim::Rng rng_;

  // State.
  bool failed_ = false;
  bool inserted_ = true;
  bool enclosure_present_ = true;
  std::uint64_t incarnation_ = 0;
  double latency_multiplier_ = 1.0;
  bool steady_ = true;

  // Derived timing (recompute_timing()).
  SsdTiming timing_;
  std::uint64_t read_q32_ = 0;   // ns per byte, read direction
  std::uint64_t write_q32_ = 0;  // ns per byte, write direction
  double read_steal_ns_per_page_ = 0;
  double native_alpha_ = 0;

  // Resources.
  std::vector<sim::Time> units_;  // min-heap of each read unit's busy-until
  sim::Time read_stage_free_ = 0;
  sim::Time write_stage_free_ = 0;
  sim::Time drain_until_ = 0;
  sim::Time last_admit_ = 0;
  std::vector<BufferEntry> buffer_ring_;  // FIFO of undrained writes, as a ring
  std::size_t ring_head_ = 0;
  std::size_t ring_size_ = 0;
  std::int64_t buffer_used_bytes_ = 0;
  std::array<Stream, kWriteStreams> streams_{};
  std::uint64_t stream_clock_ = 0;

  // Wear.
  SsdWear wear_;
  SsdCounters counters_;
  double nand_carry_ = 0;              // fraction of a NAND byte not yet counted
  std::int64_t nand_since_fresh_ = 0;  // NAND bytes since a fresh drive went in
  double endurance_nand_bytes_ = 0;
  double percent_per_nand_byte_ = 0;
  RateMeter host_rate_;
  RateMeter nand_rate_;
};

}  // namespace afasim::datapac
