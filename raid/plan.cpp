#include "raid/plan.h"

#include <algorithm>

namespace afasim::raid {

std::uint8_t* Plan::scratch(std::int64_t n) {
  constexpr std::int64_t kBlockBytes = 1 << 20;
  while (block_ < blocks_.size() && used_ + n > blocks_[block_].size) {
    ++block_;
    used_ = 0;
  }
  if (block_ == blocks_.size()) {
    const std::int64_t size = std::max(n, kBlockBytes);
    // Not zeroed: every byte handed out is written (read into, or set by a step) before it is read.
    blocks_.push_back({std::unique_ptr<std::uint8_t[]>(new std::uint8_t[static_cast<std::size_t>(size)]), size});
    used_ = 0;
  }
  std::uint8_t* p = blocks_[block_].bytes.get() + used_;
  used_ += n;
  return p;
}

}  // namespace afasim::raid
