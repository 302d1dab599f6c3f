#include "workload/distribution.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "controller/objects.h"
#include "sim/assert.h"

namespace afasim::workload {
namespace {

// fio hash.h GOLDEN_RATIO_64, the multiplier of __hash_u64.
constexpr std::uint64_t kGoldenRatio64 = 0x61C8864680B583EBULL;

// A double in [0, max] to an integer without undefined behaviour (NaN and negatives give 0).
std::uint64_t to_u64_clamped(double x, std::uint64_t max) {
  if (!(x >= 0)) return 0;
  if (x >= static_cast<double>(max)) return max;
  return static_cast<std::uint64_t>(x);
}

std::uint64_t scatter_offset(std::uint64_t n, std::optional<double> center, sim::Rng& rng) {
  if (center) return to_u64_clamped(static_cast<double>(n) * *center, n);
  return rng.next_u64() >> 32;  // fio: the first 32-bit draw of the generator's stream
}

}  // namespace

// --- ZipfGenerator -----------------------------------------------------------------------

double ZipfGenerator::capped_zeta(std::uint64_t n, double theta) {
  AFASIM_ASSERT(n >= 1, "zeta needs n >= 1");
  const std::uint64_t m = std::min(n, kMaxZetaTerms);
  constexpr std::uint64_t kDirect = 20'000;
  double sum = 0;
  const std::uint64_t direct = std::min(m, kDirect);
  for (std::uint64_t i = 1; i <= direct; ++i) sum += std::pow(static_cast<double>(i), -theta);
  if (m == direct) return sum;
  // Euler–Maclaurin for Σ_{i=a..m} f(i), f(x) = x^-θ, a = kDirect + 1:
  // ∫_a^m f + (f(a) + f(m))/2 + (f'(m) − f'(a))/12 − (f'''(m) − f'''(a))/720.
  const double a = static_cast<double>(direct + 1);
  const double b = static_cast<double>(m);
  auto f = [&](double x) { return std::pow(x, -theta); };
  auto f1 = [&](double x) { return -theta * std::pow(x, -theta - 1); };
  auto f3 = [&](double x) { return -theta * (theta + 1) * (theta + 2) * std::pow(x, -theta - 3); };
  const double integral = (std::pow(b, 1 - theta) - std::pow(a, 1 - theta)) / (1 - theta);
  sum += integral + (f(a) + f(b)) / 2 + (f1(b) - f1(a)) / 12 - (f3(b) - f3(a)) / 720;
  return sum;
}

ZipfGenerator::ZipfGenerator(std::uint64_t block_count, double theta, std::optional<double> center,
                             sim::Rng& rng)
    : n_(block_count), theta_(theta) {
  AFASIM_ASSERT(block_count >= 1, "zipf needs at least one block");
  AFASIM_ASSERT(theta > 0 && theta != 1.0, "zipf theta must be > 0 and != 1");
  AFASIM_ASSERT(!center || (*center >= 0 && *center <= 1), "zipf center must be in [0, 1]");
  zeta_n_ = capped_zeta(n_, theta_);
  zeta_2_ = 1.0 + std::pow(0.5, theta_);  // fio: pow(1.0, θ) + pow(0.5, θ)
  alpha_ = 1.0 / (1.0 - theta_);
  const double n = static_cast<double>(n_);
  eta_ = (1.0 - std::pow(2.0 / n, 1.0 - theta_)) / (1.0 - zeta_2_ / zeta_n_);
  offset_ = scatter_offset(n_, center, rng);
}

std::uint64_t ZipfGenerator::next_rank(sim::Rng& rng) {
  if (n_ == 1) {
    (void)rng.uniform01();  // keep one draw per I/O whatever N is
    return 0;
  }
  const double u = rng.uniform01();
  const double z = u * zeta_n_;
  if (z < 1.0) return 0;
  if (z < 1.0 + std::pow(0.5, theta_)) return 1;
  const double x = static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1.0, alpha_);
  // fio: val = 1 + (u64)x, then val − 1; ranks past N − 1 (θ > 1, u → 1) are kept at N − 1.
  return to_u64_clamped(x, n_ - 1);
}

std::uint64_t ZipfGenerator::scatter(std::uint64_t rank) const {
  return (rank * kGoldenRatio64 + offset_) % n_;
}

// --- ParetoGenerator ---------------------------------------------------------------------

ParetoGenerator::ParetoGenerator(std::uint64_t block_count, double h, std::optional<double> center,
                                 sim::Rng& rng)
    : n_(block_count) {
  AFASIM_ASSERT(block_count >= 1, "pareto needs at least one block");
  AFASIM_ASSERT(h > 0 && h < 1, "pareto h must be in (0, 1)");
  AFASIM_ASSERT(!center || (*center >= 0 && *center <= 1), "pareto center must be in [0, 1]");
  power_ = std::log(h) / std::log(1.0 - h);  // fio pareto_init
  offset_ = scatter_offset(n_, center, rng);
}

std::uint64_t ParetoGenerator::next_rank(sim::Rng& rng) {
  const double u = rng.uniform01();
  return to_u64_clamped(static_cast<double>(n_ - 1) * std::pow(u, power_), n_ - 1);
}

std::uint64_t ParetoGenerator::scatter(std::uint64_t rank) const {
  return (rank * kGoldenRatio64 + offset_) % n_;
}

// --- NormalGenerator ---------------------------------------------------------------------

NormalGenerator::NormalGenerator(std::uint64_t block_count, double dev_percent,
                                 std::optional<double> center)
    : n_(block_count) {
  AFASIM_ASSERT(block_count >= 1, "normal needs at least one block");
  AFASIM_ASSERT(dev_percent > 0 && dev_percent <= 100, "normal deviation in (0, 100]");
  stddev_ = to_u64_clamped(std::ceil(static_cast<double>(n_) * dev_percent / 100.0), n_ / 2);
  if (center) {
    // fio: rand_off = nranges × (center − 0.5), applied modulo nranges.
    const double shift = static_cast<double>(n_) * (*center - 0.5);
    const auto magnitude = to_u64_clamped(std::fabs(shift), n_) % n_;
    offset_ = shift < 0 ? (n_ - magnitude) % n_ : magnitude;
  }
}

std::uint64_t NormalGenerator::next(sim::Rng& rng) {
  constexpr int kIterations = 12;  // fio GAUSS_ITERS
  std::uint64_t sum = 0;
  for (int i = 0; i < kIterations; ++i) sum += rng.uniform(n_ + 1);
  sum = (sum + kIterations - 1) / kIterations;
  if (stddev_ > 0) {
    const auto r = static_cast<double>(rng.next_u64() >> 32) / 4294967296.0;
    auto dev = static_cast<std::int64_t>(static_cast<double>(stddev_) * r) -
               static_cast<std::int64_t>(stddev_ / 2);
    while (dev + static_cast<std::int64_t>(sum) >= static_cast<std::int64_t>(n_)) dev /= 2;
    sum = static_cast<std::uint64_t>(static_cast<std::int64_t>(sum) + dev);
  }
  return (sum * kGoldenRatio64 + offset_) % n_;
}

// --- ZonedGenerator ----------------------------------------------------------------------

ZonedGenerator::ZonedGenerator(std::uint64_t block_count, std::int64_t block_bytes,
                               const std::vector<AccessZone>& zones, bool absolute) {
  AFASIM_ASSERT(block_count >= 1 && block_bytes > 0 && !zones.empty(), "zones over blocks");
  std::uint64_t first = 0;
  int access = 0;
  double size_percent = 0;
  for (const AccessZone& z : zones) {
    access += z.access_percent;
    std::uint64_t end;
    if (absolute) {
      end = first + static_cast<std::uint64_t>(z.size_bytes / block_bytes);
    } else {
      size_percent += z.size_percent;
      end = to_u64_clamped(static_cast<double>(block_count) * size_percent / 100.0, block_count);
    }
    end = std::min(std::max(end, first + 1), block_count);  // every zone holds a block
    const std::uint64_t start = std::min(first, block_count - 1);
    zones_.push_back(Zone{access, start, std::max<std::uint64_t>(end - start, 1)});
    first = end;
  }
  AFASIM_ASSERT(access == 100, "zone access shares add up to 100");
}

std::uint64_t ZonedGenerator::next(sim::Rng& rng) {
  const auto draw = static_cast<int>(rng.uniform(100));
  for (const Zone& z : zones_) {
    if (draw < z.access_percent_end) return z.first_block + rng.uniform(z.block_count);
  }
  AFASIM_ASSERT(false, "a zone is drawn");
  return 0;
}

// --- BlockPermutation --------------------------------------------------------------------

BlockPermutation::BlockPermutation(std::uint64_t block_count, sim::Rng& rng) : n_(block_count) {
  AFASIM_ASSERT(block_count >= 1, "a permutation needs at least one block");
  const int bits = block_count <= 1 ? 2 : 64 - std::countl_zero(block_count - 1);
  half_bits_ = std::max(1, (bits + 1) / 2);
  half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
  rekey(rng);
}

void BlockPermutation::rekey(sim::Rng& rng) {
  for (auto& k : keys_) k = rng.next_u64();
}

std::uint64_t BlockPermutation::encrypt(std::uint64_t x) const {
  std::uint64_t left = x >> half_bits_;
  std::uint64_t right = x & half_mask_;
  for (const std::uint64_t key : keys_) {
    const std::uint64_t f = sim::mix64(right ^ key) & half_mask_;
    const std::uint64_t next_right = left ^ f;
    left = right;
    right = next_right;
  }
  return (left << half_bits_) | right;
}

[[gnu::hot]] std::uint64_t BlockPermutation::next(sim::Rng& rng) {
  if (index_ == n_) {
    index_ = 0;
    ++pass_;
    rekey(rng);
  }
  // Cycle walking: the domain is at most 4N, so about 4 steps at worst on average.
  std::uint64_t x = encrypt(index_++);
  while (x >= n_) x = encrypt(x);
  return x;
}

// --- choosers ----------------------------------------------------------------------------

std::int64_t fixed_block_size(const BlockSizeSpec& spec) {
  return spec.split.empty() && spec.min_bytes == spec.max_bytes ? spec.min_bytes : 0;
}

[[gnu::hot]] std::int64_t choose_block_size(const BlockSizeSpec& spec, sim::Rng& rng) {
  if (!spec.split.empty()) {
    const auto draw = static_cast<int>(rng.uniform(100));
    int cumulative = 0;
    for (const auto& share : spec.split) {
      cumulative += share.percent;
      if (draw < cumulative) return share.size_bytes;
    }
    AFASIM_ASSERT(false, "bssplit shares add up to 100");
  }
  if (spec.min_bytes == spec.max_bytes) return spec.min_bytes;
  if (spec.unaligned) {  // any whole number of 512-byte sectors in the range, not only multiples of min
    constexpr std::int64_t kSector = controller::kSectorBytes;
    const std::int64_t lo = spec.min_bytes / kSector, hi = spec.max_bytes / kSector;
    return kSector * (lo + static_cast<std::int64_t>(rng.uniform(static_cast<std::uint64_t>(hi - lo + 1))));
  }
  const std::int64_t multiples = spec.max_bytes / spec.min_bytes;
  return spec.min_bytes * (1 + static_cast<std::int64_t>(rng.uniform(multiples)));
}

bool direction_is_drawn(RwPattern rw) {
  return rw != RwPattern::kTrim && rw != RwPattern::kRandTrim && !is_trim_write(rw) && does_reads(rw) &&
         does_writes(rw);
}

Direction fixed_direction(RwPattern rw) {
  AFASIM_ASSERT(!direction_is_drawn(rw), "a mixed job draws its direction");
  if (rw == RwPattern::kTrim || rw == RwPattern::kRandTrim || is_trim_write(rw)) return Direction::kTrim;
  return does_writes(rw) ? Direction::kWrite : Direction::kRead;
}

[[gnu::hot]] Direction choose_direction(RwPattern rw, int rwmix_read_percent, sim::Rng& rng) {
  AFASIM_ASSERT(rwmix_read_percent >= 0 && rwmix_read_percent <= 100, "rwmix is a percentage");
  if (!direction_is_drawn(rw)) return fixed_direction(rw);
  // fio: v = rand_between(1, 100); read when v <= rwmix[READ].
  return static_cast<int>(rng.uniform(100)) < rwmix_read_percent ? Direction::kRead
                                                                 : Direction::kWrite;
}

// --- AccessPattern -----------------------------------------------------------------------

AccessPattern::AccessPattern(const FioJob& job, int clone, sim::Rng rng) : job_(&job), rng_(rng) {
  AFASIM_ASSERT(clone >= 0 && clone < job.numjobs, "clone index out of range");
  start_ = job.region_offset_bytes(clone);
  size_ = job.size_bytes;
  unit_ = job.min_block_bytes();
  AFASIM_ASSERT(unit_ > 0 && unit_ <= size_, "a resolved job has a block that fits its region");
  blocks_ = static_cast<std::uint64_t>(size_ / unit_);
  sequential_ios_ = job.rw_sequential_ios;
  skip_bytes_ = job.rw_skip_bytes;
  random_ = is_random(job.rw);
  trim_write_ = is_trim_write(job.rw);
  direction_drawn_ = direction_is_drawn(job.rw);
  if (!direction_drawn_) fixed_direction_ = fixed_direction(job.rw);
  for (int d = 0; d < kDirections; ++d) {
    const auto i = static_cast<std::size_t>(d);
    PerDirection& pd = direction_[i];
    pd.fixed_size = fixed_block_size(job.bs[i]);
    // blockalign: fio draws over align-sized blocks (offset = b × ba). Its default is the
    // direction's smallest block: with bs=4k,64k the writes start on 64 KiB boundaries (review
    // 32: they started on any 4 KiB one).
    pd.align = job.block_align_bytes[i];
    if (pd.align == 0 && job.bs[i].min_bytes > unit_) pd.align = job.bs[i].min_bytes;
    all_random_[i] = job.percentage_random[i] >= 100;
  }
  if (random_) {
    switch (job.distribution) {
      case RandomDistribution::kZipf:
        zipf_.emplace(blocks_, job.zipf_theta, job.distribution_center, rng_);
        break;
      case RandomDistribution::kPareto:
        pareto_.emplace(blocks_, job.pareto_h, job.distribution_center, rng_);
        break;
      case RandomDistribution::kUniform:
        if (job.tracks_random_map()) {
          touched_.resize(static_cast<std::size_t>((blocks_ + 63) / 64));
          clear_touched();
        } else if (job.random_map) {
          permutation_ = std::make_unique<BlockPermutation>(blocks_, rng_);
        }
        break;
      case RandomDistribution::kNormal:
        normal_.emplace(blocks_, job.normal_dev_percent, job.distribution_center);
        break;
      case RandomDistribution::kZoned:
      case RandomDistribution::kZonedAbs:
        for (int d = 0; d < kDirections; ++d) {
          if (!job.zones[d].empty())
            zoned_[d].emplace(blocks_, unit_, job.zones[d],
                              job.distribution == RandomDistribution::kZonedAbs);
        }
        break;
    }
    skewed_ = job.distribution != RandomDistribution::kUniform;
  }
  tracks_map_ = !touched_.empty();
}

[[gnu::hot]] std::uint64_t AccessPattern::random_block(Direction d) {
  if (!skewed_) return permutation_ ? permutation_->next(rng_) : rng_.uniform(blocks_);
  if (zipf_) return zipf_->next(rng_);
  if (pareto_) return pareto_->next(rng_);
  if (normal_) return normal_->next(rng_);
  if (zoned_[index_of(d)]) return zoned_[index_of(d)]->next(rng_);
  if (zoned_[0]) return zoned_[0]->next(rng_);
  return rng_.uniform(blocks_);
}

[[gnu::hot]] std::int64_t AccessPattern::random_offset(Direction d, std::int64_t size_bytes) {
  std::int64_t offset = static_cast<std::int64_t>(random_block(d)) * unit_;
  // The alignment (PerDirection::align, set at construction). Larger than min_bs: rounding the min_bs block
  // down keeps the same range with every offset a multiple of it; smaller (blockalign=512 with
  // bs=4k, a misaligned workload): a uniform align-sized place within the drawn block, so
  // offsets fall between 4 KiB boundaries as fio's do.
  const std::int64_t align = direction_[static_cast<std::size_t>(index_of(d))].align;
  if (align > 0 && align < unit_)
    offset += static_cast<std::int64_t>(rng_.uniform(static_cast<std::uint64_t>(unit_ / align))) * align;
  if (align > 0) offset = offset / align * align;
  if (offset + size_bytes > size_) offset = (size_ - size_bytes) / unit_ * unit_;
  if (align > 0) offset = offset / align * align;
  return offset;
}

std::int64_t AccessPattern::tracked_random_offset(std::int64_t& size_bytes) {
  if (touched_count_ == blocks_) clear_touched();  // the pass is over: every block was touched once
  // fio io_u.c get_next_rand_block: a uniform block, or when this pass touched it, the first
  // one after it that it has not (wrapping at the region's end: fio's axmap_next_free).
  std::uint64_t b = rng_.uniform(blocks_);
  std::size_t w = static_cast<std::size_t>(b / 64);
  std::uint64_t free_bits = ~touched_[w] & (~std::uint64_t{0} << (b % 64));
  while (free_bits == 0) {
    w = w + 1 == touched_.size() ? 0 : w + 1;
    free_bits = ~touched_[w];
  }
  b = w * 64 + static_cast<std::uint64_t>(std::countr_zero(free_bits));
  // fio mark_random_map: the I/O's blocks are marked up to the first one already touched, and
  // the I/O is cut there, or at the region's end.
  const auto wanted = static_cast<std::uint64_t>((size_bytes + unit_ - 1) / unit_);
  std::uint64_t run = 0;
  for (; run < wanted && b + run < blocks_ && (touched_[(b + run) / 64] >> ((b + run) % 64) & 1) == 0; ++run)
    touched_[(b + run) / 64] |= std::uint64_t{1} << ((b + run) % 64);
  touched_count_ += run;
  size_bytes = std::min(size_bytes, static_cast<std::int64_t>(run) * unit_);
  return static_cast<std::int64_t>(b) * unit_;
}

void AccessPattern::clear_touched() {
  std::fill(touched_.begin(), touched_.end(), 0);
  if (blocks_ % 64 != 0) touched_.back() = ~std::uint64_t{0} << (blocks_ % 64);
  touched_count_ = 0;
}

[[gnu::hot]] IoUnit AccessPattern::next() {
  if (trim_write_ && pending_write_) {  // trimwrite: the block just trimmed is written now
    IoUnit io = *pending_write_;
    pending_write_.reset();
    return io;
  }
  IoUnit io = draw(direction_drawn_ ? choose_direction(job_->rw, job_->rwmix_read_percent, rng_) : fixed_direction_);
  if (trim_write_) {
    pending_write_ = io;
    pending_write_->direction = Direction::kWrite;
  }
  return io;
}

IoUnit AccessPattern::next_for(Direction direction) {
  AFASIM_ASSERT(!trim_write_, "trimwrite pairs each trim with its write");
  return draw(direction);
}

[[gnu::hot]] IoUnit AccessPattern::draw(Direction direction) {
  IoUnit io;
  io.direction = direction;
  const int d = index_of(io.direction);
  const auto i = static_cast<std::size_t>(d);
  PerDirection& pd = direction_[i];
  io.size_bytes = pd.fixed_size != 0 ? pd.fixed_size : choose_block_size(job_->bs[i], rng_);
  AFASIM_ASSERT(io.size_bytes > 0 && io.size_bytes <= size_, "a block fits the region");
  std::int64_t offset;
  // percentage_random < 100: fio io_u.c draws 1..100 and goes random when it is <= the share.
  const bool draw_random =
      random_ && sequential_left_ == 0 &&
      (all_random_[i] ||
       (job_->percentage_random[d] > 0 && static_cast<int>(rng_.uniform(100)) < job_->percentage_random[d]));
  if (draw_random) {
    offset = !tracks_map_ ? random_offset(io.direction, io.size_bytes) : tracked_random_offset(io.size_bytes);
    sequential_left_ = sequential_ios_ - 1;
  } else {
    if (random_ && sequential_left_ > 0) --sequential_left_;
    offset = pd.next_position;
    if (offset + io.size_bytes > size_) offset = 0;  // wrap at the end of the region
  }
  const __int128 after = static_cast<__int128>(offset) + io.size_bytes + skip_bytes_;
  // Past the end, a hole wraps to the start; a step back before the start wraps to the
  // region's end plus the step (fio io_u.c get_next_seq_offset: rw=read:-8k reads backwards).
  if (after >= size_) {
    pd.next_position = 0;
  } else if (after < 0) {
    pd.next_position = size_ + skip_bytes_;
  } else {
    pd.next_position = static_cast<std::int64_t>(after);
  }
  io.offset_bytes = start_ + offset;
  return io;
}

sim::Rng access_pattern_rng(std::uint64_t root_seed, const FioJob& job, int clone, int file) {
  const std::uint64_t seed =
      job.randseed ? sim::mix64(root_seed ^ sim::mix64(*job.randseed)) : root_seed;
  std::string stream =
      "workload/fio/" + std::to_string(job.job_index) + "/" + std::to_string(clone);
  if (file > 0) stream += "/" + std::to_string(file);
  return sim::Rng(seed, stream);
}

}  // namespace afasim::workload
