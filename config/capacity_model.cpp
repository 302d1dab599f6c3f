// models/capacity.json: the capacity model's parameters (preset.h CapacityParams,
// docs/capacity.md), and the bound a system preset's size meets because of them.
#include "config/preset.h"
#include "config/preset_reader.h"

#include <cstdint>
#include <string>

namespace afasim::config::preset_detail {

CapacityParams read_capacity(const Reader& r, const json& j) {
  r.only_keys(j, "", {"schema", "description", "over_provisioning_fraction",
                      "rebuild_spare_fraction", "metadata_reserve_bytes_per_drive", "chunk_bytes",
                      "raid10_copies", "raid5_data_drives", "raid5_parity_drives"});
  check_schema(r, j, "afasim.capacity/1");
  CapacityParams c;
  c.over_provisioning_fraction = r.figure(j, "", "over_provisioning_fraction", 0, 0.9);
  c.rebuild_spare_fraction = r.figure(j, "", "rebuild_spare_fraction", 0, 0.9);
  c.metadata_reserve_bytes_per_drive =
      r.integer_figure(j, "", "metadata_reserve_bytes_per_drive", 0, 1e15);
  c.chunk_bytes = r.integer_figure(j, "", "chunk_bytes", 1 << 20, 1LL << 34);
  if ((c.chunk_bytes & (c.chunk_bytes - 1)) != 0)
    r.fail("chunk_bytes.value", "must be a power of two");
  c.raid10_copies = static_cast<int>(r.integer_figure(j, "", "raid10_copies", 2, 2));
  c.raid5_data_drives = static_cast<int>(r.integer_figure(j, "", "raid5_data_drives", 2, 16));
  c.raid5_parity_drives = static_cast<int>(r.integer_figure(j, "", "raid5_parity_drives", 1, 1));
  return c;
}

void check_chunk_count(const SystemPreset& s, const CapacityParams& c) {
  const double chunks = static_cast<double>(s.drive_count()) *
                        static_cast<double>(s.ssd.capacity_bytes / c.chunk_bytes);
  if (chunks <= kMaxChunksPerSystem) return;
  fail(s.file, "datapacs",
       std::to_string(s.drive_count()) + " SSDs of " + std::to_string(s.ssd.capacity_bytes) +
           " bytes (" + s.datapacs.ssd_model + ") hold " +
           std::to_string(static_cast<std::int64_t>(chunks)) + " chunks of " +
           std::to_string(c.chunk_bytes) + " bytes (models/capacity.json chunk_bytes); afasim "
           "keeps state for every chunk and takes at most " +
           std::to_string(static_cast<std::int64_t>(kMaxChunksPerSystem)) +
           " in a system (about 1.3 GB of state; 4.5 PB of SSDs at 16 MiB chunks): use larger "
           "chunks in models/capacity.json, or fewer or smaller SSDs");
}

}  // namespace afasim::config::preset_detail
