// Access patterns of fio jobs: which block, which size, which direction, I/O after I/O.
//
// The generators reproduce fio's own definitions (fio lib/zipf.c, io_u.c, options.c) so a
// job file means the same workload here as on a real host:
//  - ZipfGenerator / ParetoGenerator: fio's zipf(θ) and pareto(h) over N blocks, the
//    popularity rank scattered over the region by fio's multiplicative hash plus a random
//    (or `:center`) offset, so hot blocks are spread, not packed at the start;
//  - BlockPermutation: uniform random I/O that touches every block once per pass, as fio's
//    random map does (norandommap gives plain independent draws instead);
//  - choose_block_size / choose_direction: bs, bssplit, blocksize_range and rwmixread;
//  - AccessPattern: all of the above for one clone of one job, plus sequential offsets and
//    rw=...:N modifiers.
// Where we differ from fio, the docstring says so (and docs/workloads.md lists it). Every
// draw comes from the sim::Rng given, so a pattern is a pure function of job, clone and seed.
// Not thread-safe: a pattern belongs to the model thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim/rng.h"
#include "workload/fio_job.h"

namespace afasim::workload {

// fio's zipf_next(): the Gray et al. ("Quickly generating billion-record synthetic
// databases", SIGMOD 1994) inversion over ranks 1..N with θ ≠ 1. fio caps the zeta(N, θ)
// normalisation sum at its first 10,000,000 terms (ZIPF_MAX_GEN); so do we, evaluating that
// capped sum by Euler–Maclaurin instead of ten million pow() calls (same value to ~1e-12).
class ZipfGenerator {
 public:
  static constexpr std::uint64_t kMaxZetaTerms = 10'000'000;  // fio lib/zipf.c ZIPF_MAX_GEN

  // REQUIRES: block_count >= 1, theta > 0, theta != 1, center (if given) in [0, 1].
  // Draws the scatter offset from `rng` when no center is given (fio's rand_off).
  ZipfGenerator(std::uint64_t block_count, double theta, std::optional<double> center,
                sim::Rng& rng);

  // The 0-based popularity rank of the next access, 0 the hottest; in [0, block_count).
  std::uint64_t next_rank(sim::Rng& rng);
  // The block of a rank: (rank × 0x61C8864680B583EB + offset) mod N, fio's __hash_u64 and
  // rand_off. Not a bijection (fio's is not either): a few blocks get two ranks.
  std::uint64_t scatter(std::uint64_t rank) const;
  // The next block, in [0, block_count).
  std::uint64_t next(sim::Rng& rng) { return scatter(next_rank(rng)); }

  double zeta_n() const { return zeta_n_; }
  std::uint64_t block_count() const { return n_; }

  // Σ_{i=1..min(n, kMaxZetaTerms)} i^-θ, the normalisation fio uses. REQUIRES: n >= 1.
  static double capped_zeta(std::uint64_t n, double theta);

 private:
  std::uint64_t n_;
  double theta_;
  double zeta_n_;
  double zeta_2_;
  double alpha_;
  double eta_;
  std::uint64_t offset_;
};

// fio's pareto_next(): rank = (N − 1) × u^(log h / log(1 − h)), scattered as for zipf.
class ParetoGenerator {
 public:
  // REQUIRES: block_count >= 1, 0 < h < 1, center (if given) in [0, 1].
  ParetoGenerator(std::uint64_t block_count, double h, std::optional<double> center, sim::Rng& rng);
  std::uint64_t next_rank(sim::Rng& rng);  // in [0, block_count)
  std::uint64_t scatter(std::uint64_t rank) const;
  std::uint64_t next(sim::Rng& rng) { return scatter(next_rank(rng)); }

 private:
  std::uint64_t n_;
  double power_;
  std::uint64_t offset_;
};

// fio's normal distribution (lib/gauss.c gauss_next): the mean of 12 uniform draws over
// [0, N] (Irwin–Hall, close to a Gaussian), plus a uniform deviation of ±stddev/2 where
// stddev = ceil(N × dev / 100) (capped at N / 2), scattered by fio's multiplicative hash and
// shifted by N × (center − 0.5) when a center is given.
class NormalGenerator {
 public:
  // REQUIRES: block_count >= 1, 0 < dev_percent <= 100, center (if given) in [0, 1].
  NormalGenerator(std::uint64_t block_count, double dev_percent, std::optional<double> center);
  std::uint64_t next(sim::Rng& rng);  // in [0, block_count)

 private:
  std::uint64_t n_;
  std::uint64_t stddev_ = 0;
  std::uint64_t offset_ = 0;
};

// fio's zoned / zoned_abs distributions: a zone drawn by its access share, then a uniform
// block inside it. Zones are laid out from the region's start in the order given.
class ZonedGenerator {
 public:
  // REQUIRES: block_count >= 1, zones non-empty with access shares adding up to 100;
  // zoned_abs zones fit in block_count × block_bytes.
  ZonedGenerator(std::uint64_t block_count, std::int64_t block_bytes,
                 const std::vector<AccessZone>& zones, bool absolute);
  std::uint64_t next(sim::Rng& rng);

 private:
  struct Zone {
    int access_percent_end = 0;  // cumulative share, 1..100
    std::uint64_t first_block = 0;
    std::uint64_t block_count = 0;  // >= 1
  };
  std::vector<Zone> zones_;
};

// A pseudo-random permutation of [0, N): next() returns every block exactly once per pass,
// then starts a new pass with a new permutation. Stands in for fio's random map (an axmap
// bitmap that skips blocks already done) with O(1) memory: a 4-round Feistel network on the
// next power of four with cycle walking. Differs from fio in the order of blocks only.
class BlockPermutation {
 public:
  // REQUIRES: block_count >= 1. Draws the first pass's keys from `rng`.
  BlockPermutation(std::uint64_t block_count, sim::Rng& rng);
  std::uint64_t next(sim::Rng& rng);
  std::uint64_t pass() const { return pass_; }  // completed passes

 private:
  std::uint64_t encrypt(std::uint64_t x) const;
  void rekey(sim::Rng& rng);

  std::uint64_t n_;
  int half_bits_;
  std::uint64_t half_mask_;
  std::array<std::uint64_t, 4> keys_{};
  std::uint64_t index_ = 0;
  std::uint64_t pass_ = 0;
};

// A block size for one I/O of one direction (fio io_u.c get_next_buflen): fixed; bssplit
// (each size with its integer percentage, exactly); or blocksize_range (uniform over the
// multiples of min in [min, max], or over every byte count with `unaligned`).
std::int64_t choose_block_size(const BlockSizeSpec& spec, sim::Rng& rng);
// The one size of `spec` when choose_block_size draws nothing (no split, min = max), else 0.
std::int64_t fixed_block_size(const BlockSizeSpec& spec);

// The direction of the next I/O: the pattern's only direction, or for rw/randrw reads with
// probability rwmix_read_percent / 100 (fio io_u.c get_rand_ddir, an integer draw 1..100;
// fio's rwmix_issues bookkeeping redraws on every I/O, so this is the same law).
// REQUIRES: 0 <= rwmix_read_percent <= 100.
Direction choose_direction(RwPattern rw, int rwmix_read_percent, sim::Rng& rng);
// Whether choose_direction draws for `rw` (reads and writes mixed); if not, the direction it
// gives every time.
bool direction_is_drawn(RwPattern rw);
Direction fixed_direction(RwPattern rw);

// One I/O of a job clone: where and how much. A fresh AccessPattern from the same stream
// gives the same sequence again (verification replays a clone's writes that way).
struct IoUnit {
  Direction direction = Direction::kRead;
  std::int64_t offset_bytes = 0;  // in the clone's volume, aligned to the job's min block size
  std::int64_t size_bytes = 0;    // > 0; offset + size stays inside the clone's region
  bool operator==(const IoUnit&) const = default;
};

// The I/O sequence of one clone of a resolved job. The engine asks next() for each I/O it
// issues; timing, rates, depth and termination are the engine's.
//
// Offsets: the region is [region_offset_bytes(clone), + size_bytes), cut into
// min_block_bytes() blocks (fio's min_bs). Sequential patterns walk it per direction (fio's
// last_pos[ddir]) and wrap at its end, adding rw=read:SIZE holes. Random patterns draw a
// block (uniform with or without the random map, zipf or pareto) and, with rw=randread:N,
// continue sequentially for N − 1 I/Os before the next draw. An I/O larger than what is left
// after its block is moved back so that it ends at the region's end (fio instead retries
// with a smaller size). With FioJob::tracks_random_map() (mixed sizes under the random map) a
// random draw instead starts on a uniform block or, when this pass touched it, the next one it
// has not, and is cut short where a touched block or the region's end begins, as fio's axmap
// does: one pass covers every block once, and its sizes shrink as the region fills.
class AccessPattern {
 public:
  // REQUIRES: job comes from parse_fio_job_file and outlives the pattern (it is read on every
  // I/O, not copied: a copy per file cost each I/O of a job over many files several cold
  // cache lines); 0 <= clone < job.numjobs.
  AccessPattern(const FioJob& job, int clone, sim::Rng rng);

  IoUnit next();
  // The next unit in `direction`, whatever the job's mix would draw: fio's rate_ddir gives a
  // mixed job's turn to the direction that is behind its rate. Not for trimwrite jobs.
  IoUnit next_for(Direction direction);

  std::int64_t block_bytes() const { return unit_; }
  std::uint64_t block_count() const { return blocks_; }
  std::int64_t region_offset_bytes() const { return start_; }
  std::int64_t region_size_bytes() const { return size_; }

 private:
  IoUnit draw(Direction direction);  // where and how much, the direction given
  std::int64_t random_offset(Direction d, std::int64_t size_bytes);
  std::uint64_t random_block(Direction d);
  // A random draw under the tracked random map: the offset; cuts `size_bytes` to the free run.
  std::int64_t tracked_random_offset(std::int64_t& size_bytes);
  void clear_touched();  // a new pass of the tracked random map

  // What a uniform random I/O reads and writes, first: a job over many files finds each file's
  // pattern cold, and a read's part of it ends 144 bytes in (CloneFile puts it 48 bytes into a
  // line: three lines in all, with the file's own fields); the generators of the other laws
  // after them.
  const FioJob* job_;
  sim::Rng rng_;
  std::int64_t start_ = 0;
  std::int64_t size_ = 0;
  std::int64_t unit_ = 0;
  std::uint64_t blocks_ = 0;
  std::int64_t sequential_left_ = 0;  // I/Os before the next random draw (rw=randread:N)
  // The job's rw=randread:N and rw=read:SIZE, kept here: draw() reads them on every I/O, and
  // the job's line with them would be one more to load.
  std::int64_t sequential_ios_ = 1;  // FioJob::rw_sequential_ios
  std::int64_t skip_bytes_ = 0;      // FioJob::rw_skip_bytes
  std::unique_ptr<BlockPermutation> permutation_;  // uniform with the random map, one block size
  bool skewed_ = false;  // zipf, pareto, normal or zoned: random_block's slow path
  // What next() and draw() would otherwise work out from the job on every I/O, decided once:
  // whether the direction is drawn (else fixed_direction_), whether every I/O is random
  // (percentage_random 100), whether the random map is tracked (touched_, below), and per
  // direction (PerDirection) the fixed block size (0: drawn) and its offsets' alignment
  // (blockalign, or the smallest block when larger than the job's min block: random_offset).
  bool random_ = false;       // is_random(job.rw)
  bool trim_write_ = false;   // is_trim_write(job.rw)
  bool direction_drawn_ = false;
  bool tracks_map_ = false;  // !touched_.empty()
  std::array<bool, kDirections> all_random_{};
  Direction fixed_direction_ = Direction::kRead;
  // One direction's state side by side, so that an I/O reads one 24-byte block of it.
  struct PerDirection {
    std::int64_t fixed_size = 0;
    std::int64_t align = 0;
    std::int64_t next_position = 0;  // relative to start_
  };
  std::array<PerDirection, kDirections> direction_{};
  // FioJob::tracks_random_map() (the random map with mixed sizes): a bit per block touched this
  // pass, the padding past the last block set (else empty); how many blocks were touched.
  std::vector<std::uint64_t> touched_;
  std::uint64_t touched_count_ = 0;
  // trimwrite: the write after its trim (next() tests the job's rw first).
  std::optional<IoUnit> pending_write_;
  std::optional<ZipfGenerator> zipf_;
  std::optional<ParetoGenerator> pareto_;
  std::optional<NormalGenerator> normal_;
  std::array<std::optional<ZonedGenerator>, kDirections> zoned_;
};

// The seeded stream a clone's AccessPattern should draw from: (root_seed,
// "workload/fio/JOB_INDEX/CLONE", plus "/FILE" for files after the first), with the job's
// randseed, if any, folded into the seed. Distinct per clone and file, so adding a job never
// shifts another job's offsets.
sim::Rng access_pattern_rng(std::uint64_t root_seed, const FioJob& job, int clone, int file = 0);

}  // namespace afasim::workload
