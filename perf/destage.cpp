#include "perf/destage.h"

#include <algorithm>
#include <bit>

#include "sim/assert.h"

namespace afasim::perf {

RowDestage plan_row_destage(const RowGeometry& g, int dirty_strips, std::int64_t dirty_bytes) {
  AFASIM_ASSERT(dirty_strips >= 1 && dirty_strips <= g.data_strips, "plan_row_destage: dirty strips out of range");
  AFASIM_ASSERT(dirty_bytes > 0 && dirty_bytes <= dirty_strips * g.strip_bytes, "plan_row_destage: dirty bytes out of range");
  RowDestage d;
  if (g.layout == RowLayout::kRaid10) {
    d.strip_writes = 2 * dirty_strips;
    d.write_bytes = 2 * dirty_bytes;
    d.full_stripe = dirty_strips == g.data_strips;
    return d;
  }
  const std::int64_t row_bytes = g.strip_bytes * g.data_strips;
  if (dirty_bytes == row_bytes) {  // full stripe: parity from the cached data, no reads
    d.full_stripe = true;
    d.strip_writes = g.data_strips + 1;
    d.write_bytes = row_bytes + g.strip_bytes;
    d.xor_bytes = row_bytes;
    return d;
  }
  // Read-modify-write reads the old data under the dirty bytes and the old parity; reconstruct-
  // write reads the clean strips. Each writes the dirty strips and the parity.
  const int rmw_reads = dirty_strips + 1;
  const int reconstruct_reads = g.data_strips - dirty_strips;
  const std::int64_t parity_bytes = std::min(g.strip_bytes, dirty_bytes);
  d.strip_writes = dirty_strips + 1;
  d.write_bytes = dirty_bytes + parity_bytes;
  if (reconstruct_reads < rmw_reads) {
    d.strip_reads = reconstruct_reads;
    d.read_bytes = reconstruct_reads * g.strip_bytes;
    d.xor_bytes = row_bytes;
  } else {
    d.strip_reads = rmw_reads;
    d.read_bytes = dirty_bytes + parity_bytes;
    d.xor_bytes = 2 * dirty_bytes;  // old and new data into the parity
  }
  return d;
}

std::vector<std::int64_t> WriteCoalescer::write(std::uint64_t volume, std::int64_t offset, std::int64_t length,
                                                std::int64_t* added_bytes) {
  std::vector<std::int64_t> full;
  std::int64_t added = 0;
  const std::int64_t rb = row_bytes();
  std::int64_t pos = offset;
  const std::int64_t end = offset + length;
  while (pos < end) {
    const std::int64_t row = pos / rb;
    const std::int64_t row_end = std::min(end, (row + 1) * rb);
    Row& r = rows_[Key{volume, row}];
    if (r.dirty_bytes == 0) {
      r.order = ++order_;
      fifo_.emplace_back(Key{volume, row}, r.order);
    }
    const std::int64_t before = r.dirty_bytes;
    r.dirty_bytes = std::min(rb, r.dirty_bytes + (row_end - pos));
    added += r.dirty_bytes - before;
    const int first_strip = static_cast<int>((pos - row * rb) / g_.strip_bytes);
    const int last_strip = static_cast<int>((row_end - 1 - row * rb) / g_.strip_bytes);
    for (int s = first_strip; s <= last_strip; ++s) r.strip_mask |= 1ULL << s;
    if (r.dirty_bytes == rb) {
      full.push_back(row);
      rows_.erase(Key{volume, row});
    }
    pos = row_end;
  }
  if (added_bytes != nullptr) *added_bytes = added;
  return full;
}

bool WriteCoalescer::take_oldest(std::uint64_t* volume, std::int64_t* row, int* dirty_strips, std::int64_t* dirty_bytes) {
  while (!fifo_.empty()) {
    const auto [key, order] = fifo_.front();
    fifo_.pop_front();
    auto it = rows_.find(key);
    if (it == rows_.end() || it->second.order != order) continue;  // destaged or re-dirtied since
    *volume = key.volume;
    *row = key.row;
    *dirty_strips = std::popcount(it->second.strip_mask);
    *dirty_bytes = it->second.dirty_bytes;
    rows_.erase(it);
    return true;
  }
  return false;
}

}  // namespace afasim::perf
