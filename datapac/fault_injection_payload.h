// A payload store that fails, forgets and corrupts on request, for tests: LevelDB's
// FaultInjectionTestEnv idea applied to the bytes behind an SSD (STYLE.md).
//
// FaultInjectionPayloadStore wraps any PayloadStore (memory or file) and forwards to it,
// except that a test can
//   - fail_next_writes(n): the next n writes and trims fail with kIoError and change nothing
//     (an SSD reporting a write error); fail_next_reads(n) likewise for reads;
//   - drop_unsynced(): undo every write and trim since the last flush(), newest first, as a
//     host power loss does to what an SSD held in its volatile write cache. flush() is the
//     sync point (the SSD's FLUSH CACHE); the store keeps each unsynced write's old bytes to
//     undo it (memory: the bytes written since the last flush, twice);
//   - corrupt(offset, length): flip every bit of the range now (bit rot a scrub or a RAID
//     read-back must notice). It is not logged as a write: a later drop_unsynced restores
//     only the bytes unsynced writes replaced.
// It is a wrapper around the payload-store interface and knows nothing of the SSD model: an
// Ssd takes it through SsdOptions::wrap_payload, an array through
// DataPathOptions::wrap_payload.
//
// Not thread-safe, like every store.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "datapac/payload.h"

namespace afasim::datapac {

class FaultInjectionPayloadStore : public PayloadStore {
 public:
  explicit FaultInjectionPayloadStore(std::unique_ptr<PayloadStore> inner);

  PayloadKind kind() const override { return inner_->kind(); }
  sim::Status write(std::int64_t offset_bytes, std::span<const std::uint8_t> data) override;
  sim::Status read(std::int64_t offset_bytes, std::span<std::uint8_t> out) const override;
  sim::Status trim(std::int64_t offset_bytes, std::int64_t length_bytes) override;
  bool may_hold_data(std::int64_t offset_bytes, std::int64_t length_bytes) const override;
  sim::Status flush() override;
  sim::Status erase_all() override;
  std::int64_t memory_bytes() const override { return inner_->memory_bytes(); }

  void fail_next_writes(int n) { fail_writes_ = n; }
  void fail_next_reads(int n) { fail_reads_ = n; }
  // Undoes every write and trim since the last flush (newest first). The inner store's
  // error, if restoring fails.
  sim::Status drop_unsynced();
  // Inverts every byte of [offset, offset + length). REQUIRES: the range is in the store.
  sim::Status corrupt(std::int64_t offset_bytes, std::int64_t length_bytes);

  std::int64_t writes_failed() const { return writes_failed_; }
  std::int64_t reads_failed() const { return reads_failed_; }
  // Bytes written or trimmed since the last flush (what drop_unsynced would undo).
  std::int64_t unsynced_bytes() const { return unsynced_bytes_; }

 private:
  struct Undo {
    std::int64_t offset_bytes;
    std::vector<std::uint8_t> old_bytes;
  };
  // Saves the range's bytes before a write or trim changes them.
  sim::Status remember(std::int64_t offset_bytes, std::int64_t length_bytes);

  std::unique_ptr<PayloadStore> inner_;
  int fail_writes_ = 0;
  mutable int fail_reads_ = 0;
  std::int64_t writes_failed_ = 0;
  mutable std::int64_t reads_failed_ = 0;
  std::vector<Undo> unsynced_;
  std::int64_t unsynced_bytes_ = 0;
};

// Wraps the store it is given, and hands the wrapper to `created` (a test keeps the
// pointer: the store is owned by its SSD, and lives as long as it). For
// SsdOptions::wrap_payload and DataPathOptions::wrap_payload.
PayloadWrapper fault_injection_wrapper(std::function<void(const std::string& name, FaultInjectionPayloadStore*)> created);

}  // namespace afasim::datapac
