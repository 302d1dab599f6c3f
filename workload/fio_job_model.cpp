// The vocabulary of resolved fio jobs (fio_job.h): names of the enums, the directions a
// pattern issues, volumes and regions of a job.
#include <algorithm>
#include <optional>

#include "sim/assert.h"
#include "workload/fio_job.h"
#include "workload/fio_job_internal.h"

namespace afasim::workload {

std::string_view to_string(Direction d) {
  static constexpr std::string_view kNames[] = {"read", "write", "trim"};
  return kNames[index_of(d)];
}

std::string_view to_string(RwPattern p) {
  static constexpr std::string_view kNames[] = {"read",   "write",    "randread",  "randwrite",
                                                "rw",     "randrw",   "trim",      "randtrim",
                                                "trimwrite", "randtrimwrite"};
  return kNames[static_cast<int>(p)];
}

bool is_random(RwPattern p) {
  return p == RwPattern::kRandRead || p == RwPattern::kRandWrite ||
         p == RwPattern::kRandReadWrite || p == RwPattern::kRandTrim ||
         p == RwPattern::kRandTrimWrite;
}
bool does_reads(RwPattern p) {
  return p == RwPattern::kRead || p == RwPattern::kRandRead || p == RwPattern::kReadWrite ||
         p == RwPattern::kRandReadWrite;
}
bool is_trim_write(RwPattern p) { return p == RwPattern::kTrimWrite || p == RwPattern::kRandTrimWrite; }

bool does_writes(RwPattern p) {
  return p == RwPattern::kWrite || p == RwPattern::kRandWrite || p == RwPattern::kReadWrite ||
         p == RwPattern::kRandReadWrite || p == RwPattern::kTrimWrite ||
         p == RwPattern::kRandTrimWrite;
}
bool does_trims(RwPattern p) {
  return p == RwPattern::kTrim || p == RwPattern::kRandTrim || p == RwPattern::kTrimWrite ||
         p == RwPattern::kRandTrimWrite;
}
bool does_direction(RwPattern p, Direction d) {
  switch (d) {
    case Direction::kRead:
      return does_reads(p);
    case Direction::kWrite:
      return does_writes(p);
    case Direction::kTrim:
      return does_trims(p);
  }
  return false;
}

std::string_view to_string(RandomDistribution d) {
  static constexpr std::string_view kNames[] = {"random", "zipf",  "pareto",
                                                "normal", "zoned", "zoned_abs"};
  return kNames[static_cast<int>(d)];
}

std::string_view file_path_of(std::string_view path) {
  if (path.substr(0, 5) == "/dev/") path.remove_prefix(5);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return path;
}

std::string volume_name_for_path(std::string_view path) {
  std::string name(file_path_of(path));
  std::replace(name.begin(), name.end(), '/', '-');
  std::replace(name.begin(), name.end(), ':', '-');  // an escaped colon ("\:") of a by-path name
  return name;
}

std::string include_path(std::string_view path, std::string_view from) {
  const std::size_t slash = from.rfind('/');
  if (path.empty() || path.front() == '/' || slash == std::string_view::npos) return std::string(path);
  return std::string(from.substr(0, slash + 1)) + std::string(path);
}

std::vector<std::string> fio_referenced_files(const FioJobFile& f) {
  std::vector<std::string> files;
  auto add = [&files](const std::string& path) {
    if (!path.empty() && std::find(files.begin(), files.end(), path) == files.end()) files.push_back(path);
  };
  for (const WrittenOption& o : f.global_options) add(o.file);
  for (const FioJob& j : f.jobs) {
    for (const WrittenOption& o : j.options) add(o.file);
    add(j.read_iolog);
  }
  return files;
}

std::string FioJob::volume_name(int clone, int file) const {
  AFASIM_ASSERT(clone >= 0 && clone < numjobs, "clone index out of range");
  AFASIM_ASSERT(file >= 0 && file < file_count(), "file index out of range");
  if (!filenames.empty()) return filenames[static_cast<std::size_t>(file)];
  // fio's "$jobname.$jobnum.$filenum", $jobname the section's (init.c add_job), not name=
  return (section.empty() ? name : section) + "." + std::to_string(clone) + "." + std::to_string(file);
}

std::int64_t FioJob::region_offset_bytes(int clone) const {
  AFASIM_ASSERT(clone >= 0 && clone < numjobs, "clone index out of range");
  return offset_bytes + offset_increment_bytes * clone;
}

std::int64_t FioJob::min_block_bytes() const {
  std::int64_t unit = 0;
  for (int d = 0; d < kDirections; ++d) {
    if (does_direction(rw, static_cast<Direction>(d)))
      unit = unit == 0 ? bs[d].min_bytes : std::min(unit, bs[d].min_bytes);
  }
  return unit;
}

bool FioJob::tracks_random_map() const {
  if (!is_random(rw) || !random_map || distribution != RandomDistribution::kUniform) return false;
  const std::int64_t unit = min_block_bytes();
  bool mixed = false;
  for (int d = 0; d < kDirections; ++d) {
    if (!does_direction(rw, static_cast<Direction>(d))) continue;
    // Directions of different smallest sizes (bs=4k,64k) are aligned each to its own, as fio's
    // blockalign default: the permutation, not the map (review 32).
    if (bs[d].min_bytes != unit || (block_align_bytes[d] != 0 && block_align_bytes[d] != unit)) return false;
    mixed |= bs[d].max_bytes > unit;
  }
  return mixed;
}

std::int64_t FioJob::total_io_bytes() const {
  // trimwrite: each byte is trimmed, then written (fio backend.c counts both).
  const __int128 total = static_cast<__int128>(io_size_bytes) * loops * (is_trim_write(rw) ? 2 : 1);
  return total > INT64_MAX ? INT64_MAX : static_cast<std::int64_t>(total);
}

int FioJobFile::group_count() const {
  int n = 0;
  for (const auto& j : jobs) n = std::max(n, j.group_id + 1);
  return n;
}

std::optional<double> FioJobFile::capped_iops(sim::Time from_ns, sim::Time to_ns) const {
  if (group_count() != 1) return std::nullopt;
  double total = 0;
  for (const FioJob& j : jobs) {
    if (does_trims(j.rw) || j.thinktime_ns > 0 || !j.time_based || j.startdelay_ns > from_ns) return std::nullopt;
    if (j.runtime_ns > 0 && j.startdelay_ns + j.ramp_time_ns + j.runtime_ns < to_ns) return std::nullopt;
    const int read_percent = !does_writes(j.rw) ? 100 : !does_reads(j.rw) ? 0 : j.rwmix_read_percent;
    for (const Direction d : {Direction::kRead, Direction::kWrite}) {
      const auto i = static_cast<std::size_t>(index_of(d));
      if ((d == Direction::kRead ? read_percent : 100 - read_percent) == 0) continue;
      if (j.rate_iops[i] <= 0 || j.rate_bytes_per_second[i] > 0) return std::nullopt;
      total += static_cast<double>(j.rate_iops[i]) * j.numjobs;
    }
  }
  return total;
}

int FioJobFile::clone_count() const {
  int n = 0;
  for (const auto& j : jobs) n += j.numjobs;
  return n;
}

namespace fio_detail {

std::optional<Direction> sequential_direction(const FioJob& job) {
  switch (job.rw) {
    case RwPattern::kRead:
      return Direction::kRead;
    case RwPattern::kWrite:
      return Direction::kWrite;
    case RwPattern::kTrim:
      return Direction::kTrim;
    case RwPattern::kReadWrite:  // rwmixread=100 or 0 draws one direction only
      if (job.rwmix_read_percent == 100) return Direction::kRead;
      if (job.rwmix_read_percent == 0) return Direction::kWrite;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<std::int64_t> holed_pass_bytes(const FioJob& job, std::int64_t room_bytes) {
  const std::optional<Direction> one = sequential_direction(job);
  if (!one || job.rw_skip_bytes <= 0) return std::nullopt;
  const auto d = static_cast<std::size_t>(index_of(*one));
  const std::int64_t bs = job.bs[d].min_bytes;
  if (bs != job.bs[d].max_bytes) return std::nullopt;
  const std::int64_t ios_per_pass = (job.size_bytes - bs) / (bs + job.rw_skip_bytes) + 1;
  const std::int64_t last_end = (ios_per_pass - 1) * (bs + job.rw_skip_bytes) + bs;
  if (last_end < room_bytes && last_end + job.rw_skip_bytes >= room_bytes) return std::nullopt;  // wraps
  return ios_per_pass * bs * job.file_count();
}

std::int64_t io_bytes_per_loop(const FioJob& job, std::optional<std::int64_t> io_size, std::int64_t room_bytes) {
  std::int64_t bytes = io_size ? *io_size : job.size_bytes * job.file_count();
  if (const std::int64_t unit = job.min_block_bytes(); bytes >= unit) bytes -= bytes % unit;
  if (!io_size && !job.time_based) {
    if (const auto pass = holed_pass_bytes(job, room_bytes)) bytes = *pass;
  }
  return bytes;
}

}  // namespace fio_detail

}  // namespace afasim::workload
