// The payload store behind one SSD: what its bytes are (DESIGN.md "Payload").
//
// Three kinds, chosen per array:
// - none:   stores nothing; reads give zeros. For long performance and wear studies.
// - memory: sparse and paged; a page is allocated on the first write of non-zero data into
//           it and freed when a trim covers it (or leaves it all zeros). Reads of space never
//           written give zeros. Memory used ≈ pages touched × page size + ~64 B per page.
// - file:   one sparse file per SSD (pread/pwrite); trim punches a hole
//           (fallocate PUNCH_HOLE, or writes zeros where the file system cannot); flush is
//           fdatasync. Reopening the same file sees the same bytes.
//
// A store has no timing and no state machine: the Ssd checks the SSD's state and the range
// before calling it. Every call takes any byte offset and length within [0, capacity).
// Not thread-safe: belongs to the model thread with its Ssd.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "sim/status.h"

namespace afasim::datapac {

enum class PayloadKind { kNone, kMemory, kFile };

// "none", "memory", "file".
const char* payload_kind_name(PayloadKind kind);
// Parses a kind name; kInvalidArgument names the three kinds.
sim::Result<PayloadKind> parse_payload_kind(const std::string& name);

class PayloadStore {
 public:
  virtual ~PayloadStore() = default;
  virtual PayloadKind kind() const = 0;
  std::int64_t capacity_bytes() const { return capacity_bytes_; }

  // Copies `data` to [offset, offset + size). kIoError if the backing file fails.
  // REQUIRES (checked by the caller): the range lies within the capacity.
  virtual sim::Status write(std::int64_t offset_bytes, std::span<const std::uint8_t> data) = 0;
  // Fills `out` from [offset, offset + size); never-written and trimmed bytes read as zeros.
  virtual sim::Status read(std::int64_t offset_bytes, std::span<std::uint8_t> out) const = 0;
  // Makes [offset, offset + length) read as zeros and releases what it can.
  virtual sim::Status trim(std::int64_t offset_bytes, std::int64_t length_bytes) = 0;
  // False only when [offset, offset + length) certainly reads as zeros (never written, or
  // trimmed): none always; memory when no page there is held; file when the range is a
  // hole (SEEK_DATA). True when unsure. Lets a rebuild skip empty space.
  virtual bool may_hold_data(std::int64_t offset_bytes, std::int64_t length_bytes) const = 0;
  // Makes written bytes durable (file: fdatasync). No-op for none and memory.
  virtual sim::Status flush() = 0;
  // Forgets everything: the store of a new, empty SSD of the same capacity.
  virtual sim::Status erase_all() = 0;
  // Host memory this store holds for payload (memory kind), 0 for the others.
  virtual std::int64_t memory_bytes() const { return 0; }

 protected:
  explicit PayloadStore(std::int64_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

 private:
  std::int64_t capacity_bytes_;
};

// Wraps the store an SSD opened (named by the SSD's name) in another one, for tests
// (datapac/fault_injection_payload.h). Empty: the SSD uses its store as opened.
using PayloadWrapper =
    std::function<std::unique_ptr<PayloadStore>(std::unique_ptr<PayloadStore>, const std::string& name)>;

// A store that keeps nothing. REQUIRES: capacity_bytes > 0.
std::unique_ptr<PayloadStore> make_none_store(std::int64_t capacity_bytes);

// A sparse in-memory store of `page_bytes` pages.
// REQUIRES: capacity_bytes > 0; page_bytes a power of two in [512, 16 MiB].
std::unique_ptr<PayloadStore> make_memory_store(std::int64_t capacity_bytes,
                                                std::int64_t page_bytes);

// Opens (creating if missing) the sparse file `path` of exactly `capacity_bytes`. An existing
// file of another size is refused with kPreconditionFailed (it belongs to another SSD model);
// a file that cannot be opened or sized gives kIoError naming the path and errno text.
// `must_exist` (the array kept data in this file before): a missing or empty file is refused
// with kNotFound instead of created, so that data it held does not read as zeros.
sim::Result<std::unique_ptr<PayloadStore>> open_file_store(const std::string& path,
                                                           std::int64_t capacity_bytes,
                                                           bool must_exist = false);

}  // namespace afasim::datapac
