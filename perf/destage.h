// perf::plan_row_destage and perf::WriteCoalescer — how dirty cache data goes to the SSDs
// (docs/performance-model.md "Write coalescing and destage").
//
// Writes are acknowledged from the mirrored write cache; destage later writes them to the
// RAID members. Sequential writes fill whole stripe rows in the cache before destage, so a
// RAID 5 row destages as a full-stripe write (parity from the cached data: no reads); a row
// only partly dirty destages by read-modify-write (read the old data and parity) or by
// reconstruct-write (read the row's clean strips), whichever reads fewer strips — the choice
// md and hardware RAID controllers make. RAID 10 writes each dirty strip twice. The counts
// returned here are what the destage costs the cores, the data mover and the back end.
// Value types, thread-compatible.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <unordered_map>
#include <vector>

namespace afasim::perf {

enum class RowLayout { kRaid10, kRaid5 };

struct RowGeometry {
  RowLayout layout = RowLayout::kRaid10;
  int data_strips = 1;              // data strips per row (RAID 5 4+1: 4; RAID 10: 1 per mirror pair)
  std::int64_t strip_bytes = 64 << 10;
};

// The back-end work of destaging one row.
struct RowDestage {
  int strip_reads = 0;          // member reads before the writes (RMW or reconstruct)
  int strip_writes = 0;         // member writes (data, copies, parity)
  std::int64_t read_bytes = 0;
  std::int64_t write_bytes = 0;
  std::int64_t xor_bytes = 0;   // bytes XORed for parity (RAID 5)
  bool full_stripe = false;
};

// The work of destaging `dirty_bytes` of one row spread over `dirty_strips` strips.
// REQUIRES: 1 <= dirty_strips <= g.data_strips, 0 < dirty_bytes <= dirty_strips × strip_bytes.
RowDestage plan_row_destage(const RowGeometry& g, int dirty_strips, std::int64_t dirty_bytes);

// Dirty bytes per stripe row of each volume, as writes arrive; says when a row is full (to
// destage it at once as a full stripe) and hands out partial rows when destage must make room.
class WriteCoalescer {
 public:
  explicit WriteCoalescer(RowGeometry g) : g_(g) {}

  // A host write of [offset, offset + length) of `volume` is in the cache. Returns the rows
  // it completed (all strips dirty), which the caller destages as full stripes now.
  // Overlapping rewrites of dirty bytes count once only approximately (bytes are summed and
  // capped at the row size: exact for sequential streams and for random writes of whole
  // strips; an approximation the model states).
  // `added_bytes` (if not null) receives how much the dirty bytes grew.
  std::vector<std::int64_t> write(std::uint64_t volume, std::int64_t offset, std::int64_t length,
                                  std::int64_t* added_bytes = nullptr);
  // The oldest partly dirty row (first dirtied), removed, with its dirty bytes and strips (for destage under
  // cache pressure). Returns false when none.
  bool take_oldest(std::uint64_t* volume, std::int64_t* row, int* dirty_strips, std::int64_t* dirty_bytes);
  std::int64_t row_bytes() const { return g_.strip_bytes * g_.data_strips; }
  std::size_t partial_rows() const { return rows_.size(); }

 private:
  struct Row {
    std::int64_t dirty_bytes = 0;
    std::uint64_t strip_mask = 0;  // strips touched (data_strips <= 64)
    std::uint64_t order = 0;
  };
  struct Key {
    std::uint64_t volume;
    std::int64_t row;
    bool operator==(const Key& o) const { return volume == o.volume && row == o.row; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>()(k.volume * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(k.row));
    }
  };
  RowGeometry g_;
  std::unordered_map<Key, Row, KeyHash> rows_;
  // Rows in the order they were first dirtied; entries whose row has since gone (destaged
  // full) or been dirtied anew (another order) are skipped when met.
  std::deque<std::pair<Key, std::uint64_t>> fifo_;
  std::uint64_t order_ = 0;
};

}  // namespace afasim::perf
