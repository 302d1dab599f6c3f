// ssd::FlashSsd's fast-forward: host writes in bulk, replayed into the replica FTL without
// timing (the per-I/O path is flash_ssd.cpp).
#include <algorithm>
#include <array>
#include <cmath>

#include "sim/assert.h"
#include "sim/rng.h"
#include "ssd/flash_ssd.h"
#include "ssd/flash_ssd_internal.h"

namespace afasim::ssd {

using detail::kUnitBytes;
using detail::mix64;

std::int64_t FlashSsd::add_bulk_writes(std::int64_t host_bytes, double sequential_fraction) {
  AFASIM_ASSERT(host_bytes >= 0 && sequential_fraction >= 0 && sequential_fraction <= 1,
                "add_bulk_writes: bad arguments");
  const std::int64_t unit_bytes = ftl_->scale() * kUnitBytes;
  const std::int64_t span = std::clamp<std::int64_t>(
      std::llround(options_.span_fraction * static_cast<double>(ftl_->user_units())), 1,
      ftl_->user_units());
  const std::int64_t total = host_bytes / unit_bytes;
  // The first bulk writes bring the replica to steady state (up to 4 spans in all); after
  // that each call replays a sample of span / 64 units, which moves the replica towards a
  // changed write mix while its write amplification is measured. Without the cap a 3-year
  // fast-forward at one-day epochs replayed 4 spans per drive per day (~10^12 steps).
  const std::int64_t steady_left = std::max<std::int64_t>(0, 4 * span - bulk_replayed_);
  const std::int64_t replay = std::min(total, std::max(steady_left, std::max<std::int64_t>(1, span / 64)));
  bulk_replayed_ += replay;
  const auto sequential = static_cast<std::int64_t>(std::llround(sequential_fraction * 1024));
  sim::Rng rng(mix64(static_cast<std::uint64_t>(stats_.host_write_bytes) ^
                     static_cast<std::uint64_t>(ftl_->host_units_written())));
  const std::int64_t relocated_before = ftl_->gc_units_relocated();
  // The units are drawn a batch ahead so that their map slots can be prefetched (the same
  // units in the same order as drawing one at a time: the replay is unchanged, only faster).
  constexpr std::int64_t kBatch = 64, kMapAhead = 16, kOldCopyAhead = 8;
  std::array<std::int64_t, kBatch> units;
  for (std::int64_t done = 0; done < replay; done += kBatch) {
    const std::int64_t n = std::min(kBatch, replay - done);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t i = done + j;
      if (static_cast<std::int64_t>(i % 1024) < sequential) {
        units[j] = bulk_cursor_;
        bulk_cursor_ = (bulk_cursor_ + 1) % span;
      } else {
        units[j] = static_cast<std::int64_t>(rng.uniform(static_cast<std::uint64_t>(span)));
      }
    }
    for (std::int64_t j = 0; j < std::min(n, kMapAhead); ++j) ftl_->prefetch_map(units[j]);
    for (std::int64_t j = 0; j < n; ++j) {
      if (j + kMapAhead < n) ftl_->prefetch_map(units[j + kMapAhead]);
      if (j + kOldCopyAhead < n) ftl_->prefetch_old_copy(units[j + kOldCopyAhead]);
      ftl_->write(units[j], nullptr);
    }
  }
  // Priced as the per-I/O path prices a write (committed NAND = (1 + recent GC ratio) ×
  // host bytes): the ratio over the replica's last garbage collections, not this call's own
  // relocations, which for a short epoch are a handful of units and either none or a whole
  // victim's worth (per-drive noise of ~45 % over 20 one-second epochs).
  if (ftl_->gc_units_relocated() != relocated_before) update_gc_rate();
  return host_bytes + static_cast<std::int64_t>(
                          std::llround(static_cast<double>(host_bytes) * gc_ratio_));
}

}  // namespace afasim::ssd
