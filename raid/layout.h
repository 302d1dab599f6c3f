// RAID layouts of one extent: which member (chunk on one SSD) holds which bytes.
//
// An extent is `extent_bytes` of host data stored on `member_count()` chunks of
// `chunk_bytes` each, every chunk on a different SSD (docs/raid.md):
//   RAID10  P mirror pairs; members 2i and 2i+1 hold the same bytes and sit in different
//           DataPacs. Host data is striped over the pairs in strips of `strip_bytes`.
//   RAID5   k data + 1 parity members; each row holds k data strips and one parity strip,
//           the parity rotating left-symmetrically (row r: parity on member k − r mod (k+1),
//           data strip j on member (parity + 1 + j) mod (k+1)), as Linux md's default.
//   RAID0   k members, striped, no redundancy (performance-only presets).
// Pure arithmetic; thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>

#include "raid/raid_type.h"
#include "sim/assert.h"
#include "sim/divisor.h"

namespace afasim::raid {

// One piece of a host range that falls in one strip of one row.
struct Piece {
  std::int64_t row;             // stripe row within the extent
  int data_index;               // which data strip of the row (0..data_members-1)
  int member;                   // member holding it (RAID10: the pair's first member)
  std::int64_t member_offset;   // byte offset within the member's chunk
  std::int64_t length;          // bytes
  std::int64_t buffer_offset;   // offset of this piece within the host range
};

class Layout {
 public:
  // REQUIRES: strip_bytes divides chunk_bytes; pairs >= 1; data_members >= 2 for RAID5.
  static Layout raid10(int pairs, std::int64_t strip_bytes, std::int64_t chunk_bytes);
  static Layout raid5(int data_members, std::int64_t strip_bytes, std::int64_t chunk_bytes);
  static Layout raid0(int data_members, std::int64_t strip_bytes, std::int64_t chunk_bytes);

  RaidType type() const { return type_; }
  int member_count() const { return members_; }
  int data_members() const { return data_; }  // strips of host data per row
  std::int64_t strip_bytes() const { return strip_; }
  std::int64_t chunk_bytes() const { return chunk_; }
  std::int64_t rows() const { return chunk_ / strip_; }
  std::int64_t row_data_bytes() const { return strip_ * data_; }
  std::int64_t extent_bytes() const { return chunk_ * data_; }
  const sim::Divisor& extent_divisor() const { return extent_div_; }  // of extent_bytes()

  // RAID5: the member holding row `row`'s parity.
  int parity_member(std::int64_t row) const {
    return static_cast<int>((data_ - row % (data_ + 1) + (data_ + 1)) % (data_ + 1));
  }
  // The member holding data strip `data_index` of `row` (RAID10: the pair's first member).
  int data_member(std::int64_t row, int data_index) const {
    switch (type_) {
      case RaidType::kRaid5: return (parity_member(row) + 1 + data_index) % (data_ + 1);
      case RaidType::kRaid10: return 2 * data_index;
      case RaidType::kRaid0: return data_index;
    }
    return 0;
  }
  // RAID10: the other member of `member`'s pair.
  static int mirror_of(int member) { return member ^ 1; }

  // Calls f(const Piece&) for each strip-sized piece of [offset, offset + length) of the
  // extent's host data, in address order. REQUIRES: the range lies within the extent.
  template <typename F>
  void for_each_piece(std::int64_t offset, std::int64_t length, F&& f) const {
    AFASIM_ASSERT(offset >= 0 && length >= 0 && offset + length <= extent_bytes(),
                  "range outside the extent");
    std::int64_t done = 0;
    while (done < length) {
      const std::int64_t pos = offset + done;
      const std::int64_t strip_index = strip_div_.div(pos);
      const std::int64_t within = strip_div_.mod(pos);
      const std::int64_t n = std::min(strip_ - within, length - done);
      Piece p;
      p.row = data_div_.div(strip_index);
      p.data_index = static_cast<int>(data_div_.mod(strip_index));
      p.member = data_member(p.row, p.data_index);
      p.member_offset = p.row * strip_ + within;
      p.length = n;
      p.buffer_offset = done;
      f(p);
      done += n;
    }
  }

 private:
  Layout(RaidType type, int members, int data, std::int64_t strip, std::int64_t chunk);

  RaidType type_;
  int members_;
  int data_;
  std::int64_t strip_;
  std::int64_t chunk_;
  sim::Divisor strip_div_, data_div_, extent_div_;  // strip_, data_, extent_bytes(): per-I/O arithmetic
};

// dst[i] ^= src[i] for n bytes. Parity arithmetic. REQUIRES: dst and src are the same
// buffer or do not overlap.
void xor_into(std::uint8_t* dst, const std::uint8_t* src, std::int64_t n);

}  // namespace afasim::raid
