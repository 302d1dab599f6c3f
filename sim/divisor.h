// sim::Divisor — x / d and x % d for a divisor fixed at set-up (a page, unit, strip or extent
// size; a count of dies or channels), by a shift and a mask when d is a power of two, as
// most are, else by the division. A 64-bit division costs tens of cycles and the hot path of
// one simulated I/O does a dozen. Results equal the operators' (C++'s truncating division)
// for every x: a negative x takes the division.
#pragma once

#include <bit>
#include <cstdint>

#include "sim/assert.h"

namespace afasim::sim {

class Divisor {
 public:
  Divisor() = default;
  // REQUIRES: d > 0.
  explicit Divisor(std::int64_t d)
      : d_(d), shift_(std::has_single_bit(static_cast<std::uint64_t>(d)) ? std::countr_zero(static_cast<std::uint64_t>(d)) : -1) {
    AFASIM_ASSERT(d > 0, "sim::Divisor of a non-positive divisor");
  }

  std::int64_t value() const { return d_; }
  std::int64_t div(std::int64_t x) const { return shift_ >= 0 && x >= 0 ? x >> shift_ : x / d_; }
  std::int64_t mod(std::int64_t x) const { return shift_ >= 0 && x >= 0 ? x & (d_ - 1) : x % d_; }
  // x % d of an unsigned x (a hash or a sum taken modulo 2^64).
  std::uint64_t mod_unsigned(std::uint64_t x) const {
    const auto d = static_cast<std::uint64_t>(d_);
    return shift_ >= 0 ? x & (d - 1) : x % d;
  }

 private:
  std::int64_t d_ = 1;
  int shift_ = 0;
};

}  // namespace afasim::sim
