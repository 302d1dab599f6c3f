// The fio options of issue 16 part 2, each with an effect a test checks (docs/workloads.md
// lists them). Small jobs on a fresh ISE 860 G3 in virtual time; the expected figures come
// from the option's definition (fio's HOWTO) applied to the job's own numbers.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "config/preset.h"
#include "sim/units.h"
#include "controller/array.h"
#include "workload/distribution.h"
#include "workload/fio_report.h"
#include "workload/fio_runner.h"

using namespace afasim;
using namespace afasim::workload;

namespace {


FioJobFile parse_options_job(const std::string& text, const FioParseOptions& options = {}) {
  auto f = parse_fio_job_file(text, "t.fio", options);
  REQUIRE_MESSAGE(f.is_ok(), f.status().message());
  return std::move(f).value();
}

// Runs `text` on a fresh array (payload in memory when `payload`; logs into `log_dir`).
RunReport run(const std::string& text, bool payload = false, const std::string& log_dir = "",
              const std::atomic<bool>* interrupted = nullptr) {
  const auto catalog = config::Catalog::embedded().value();
  const auto preset = catalog.system("ise-860-g3").value();
  sim::Simulator sim(1);
  controller::MemoryJournal journal;
  controller::ArrayOptions options;
  if (payload) options.data_path.payload = datapac::PayloadKind::kMemory;
  auto array = controller::Array::open(sim, catalog, preset, journal, journal.snapshot(), options).value();
  FioRunOptions run_options;
  run_options.log_dir = log_dir;
  run_options.interrupted = interrupted;
  auto report = run_fio(*array, sim, parse_options_job(text), run_options);
  REQUIRE_MESSAGE(report.is_ok(), report.status().message());
  return std::move(report).value();
}

// The lines of a log file, each split at ", ".
std::vector<std::vector<std::int64_t>> log_lines(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "no log file " << path);
  std::vector<std::vector<std::int64_t>> lines;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::int64_t> fields;
    std::size_t pos = 0;
    while (pos <= line.size()) {
      const std::size_t comma = std::min(line.find(',', pos), line.size());
      fields.push_back(std::stoll(line.substr(pos, comma - pos)));
      pos = comma + 1;
    }
    lines.push_back(std::move(fields));
  }
  return lines;
}

const DirectionStats& dir(const RunReport& r, int result, Direction d) {
  return r.results.at(static_cast<std::size_t>(result)).direction[index_of(d)];
}

// The first `n` I/Os of clone 0 of the file's first job.
std::vector<IoUnit> units(const std::string& text, int n) {
  const FioJobFile f = parse_options_job(text);
  AccessPattern p(f.jobs[0], 0, access_pattern_rng(1, f.jobs[0], 0));
  std::vector<IoUnit> out;
  for (int i = 0; i < n; ++i) out.push_back(p.next());
  return out;
}

}  // namespace

TEST_CASE("rw=trim, randtrim and trimwrite trim through the array; trimwrite writes each trimmed block") {
  const RunReport r = run("[t]\nfilename=v\nsize=64m\nrw=randtrim\nbs=1m\niodepth=4\n");
  CHECK(dir(r, 0, Direction::kTrim).io_count == 64);  // every 1 MiB block of 64 MiB once
  CHECK(dir(r, 0, Direction::kTrim).io_bytes == 64 * sim::kMiB);
  CHECK(dir(r, 0, Direction::kRead).io_count + dir(r, 0, Direction::kWrite).io_count == 0);
  const auto json = to_fio_json(r);
  CHECK(json["jobs"][0]["trim"]["total_ios"] == 64);

  // Each byte trimmed, then written: 16 MiB of trims and 16 MiB of writes over the whole
  // region (fio 3.33, the same job: 256 and 256; hostile round 32 and fio review 32: 128 and 128
  // over its first 8 MiB).
  const RunReport tw = run("[t]\nfilename=v\nsize=16m\nrw=trimwrite\nbs=64k\niodepth=4\n");
  CHECK(dir(tw, 0, Direction::kTrim).io_count == 256);
  CHECK(dir(tw, 0, Direction::kWrite).io_count == 256);
  CHECK(dir(tw, 0, Direction::kWrite).io_bytes == 16 * sim::kMiB);
  const RunReport rtw = run("[t]\nfilename=v\nsize=16m\nrw=randtrimwrite\nbs=64k\niodepth=4\n");
  CHECK(dir(rtw, 0, Direction::kTrim).io_count == 256);
  CHECK(dir(rtw, 0, Direction::kWrite).io_count == 256);

  const auto seq = units("[t]\nfilename=v\nsize=1m\nrw=trimwrite\nbs=64k\n", 6);
  for (int i = 0; i < 6; i += 2) {
    CHECK(seq[i].direction == Direction::kTrim);
    CHECK(seq[i + 1].direction == Direction::kWrite);
    CHECK(seq[i + 1].offset_bytes == seq[i].offset_bytes);
    CHECK(seq[i].offset_bytes == i / 2 * 64 * sim::kKiB);
  }
}

TEST_CASE("fsync=N and fdatasync=N flush after every N writes; the flushes are fio's sync statistics") {
  const RunReport r = run("[w]\nfilename=v\nsize=4m\nrw=write\nbs=64k\nfsync=4\n");
  CHECK(dir(r, 0, Direction::kWrite).io_count == 64);
  // fio issues the sync as the I/O after every 4th write, so none after the last: 15 (fio 3.33
  // on this job file: 15; on size=32k bs=4k fsync=8: 0; fio review 32: afasim one more).
  CHECK(r.results[0].sync.io_count == 15);
  CHECK(to_fio_json(r)["jobs"][0]["sync"]["total_ios"] == 15);
  const RunReport d = run("[w]\nfilename=v\nsize=4m\nrw=write\nbs=64k\nfdatasync=8\n");
  CHECK(d.results[0].sync.io_count == 7);
  const RunReport few = run("[w]\nfilename=v\nsize=32k\nrw=write\nbs=4k\nfsync=8\n");
  CHECK(few.results[0].sync.io_count == 0);  // fio: 8 writes, no sync
  // Loops: fio reopens the file between them, a sync at the end of each loop but the last and one
  // at the start of each later loop (review 32, fio 3.33: 7, 16 and 25; afasim had 5, 15, 23).
  CHECK(run("[w]\nfilename=v\nsize=32k\nrw=write\nbs=4k\nfsync=4\nloops=3\n").results[0].sync.io_count == 7);
  CHECK(run("[w]\nfilename=v\nsize=256k\nrw=write\nbs=4k\nfsync=8\nloops=2\n").results[0].sync.io_count == 16);
  CHECK(run("[w]\nfilename=v\nsize=256k\nrw=write\nbs=4k\nfsync=8\nloops=3\n").results[0].sync.io_count == 25);
  CHECK(format_normal(d).find("fsync/fdatasync/sync_file_range:") != std::string::npos);
}

// The FUA write goes through to the SSDs (docs/write-cache.md): slower than the cached ack,
// by the SSD write the cache hides (a 4 KiB RAID10 write: two SSD programs in parallel).
TEST_CASE("sync=1 writes with FUA: the ack waits for the SSDs instead of the mirrored cache") {
  const std::string job = "[w]\nfilename=v\nsize=64m\nrw=randwrite\nbs=4k\nio_size=8m\n";
  const double cached = dir(run(job), 0, Direction::kWrite).clat_ns.mean();
  const double fua = dir(run(job + "sync=1\n"), 0, Direction::kWrite).clat_ns.mean();
  MESSAGE("write-back " << cached << " ns, FUA " << fua << " ns");
  // FUA adds the SSD write (25 µs, config/ssds/xio-g3-sas-1600gb.json) and its SAS command's
  // core time (11.25 µs) but skips the mirror (15.2 µs of core, the link): at least 10 µs more.
  CHECK(fua > cached + 10'000);
}

TEST_CASE("thinktime pauses after every thinktime_blocks I/Os, once the queue has drained") {
  const std::string job =
      "[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\niodepth=4\ntime_based\nruntime=500ms\n";
  const auto busy = dir(run(job), 0, Direction::kRead).io_count;
  const auto thinking = dir(run(job + "thinktime=1ms\nthinktime_blocks=4\n"), 0, Direction::kRead).io_count;
  // 4 I/Os per (1 ms + one ~50 µs read round): at most 4 × 500 = 2,000 I/Os in 500 ms.
  CHECK(thinking <= 2000);
  CHECK(thinking >= 1800);
  CHECK(busy > 10 * thinking);
}

TEST_CASE("a long thinktime's idle intervals are bandwidth samples of zero, counted as one by one") {
  // Review 41: thinktime=3650d spent 121 s adding one zero sample per 500 ms interval. Past 1,024
  // empty intervals they are added at once; 400 s of thinking is 800 intervals (one by one),
  // 600 s is 1,200 (at once); the two runs differ by exactly 2 × 200 s of 500 ms intervals.
  const std::string job = "[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\nnumber_ios=3\n";
  const DirectionStats looped = dir(run(job + "thinktime=400s\n"), 0, Direction::kRead);
  const DirectionStats batched = dir(run(job + "thinktime=600s\n"), 0, Direction::kRead);
  REQUIRE(looped.io_count == 3);
  REQUIRE(batched.io_count == 3);
  CHECK(batched.bw_kib_per_second.samples - looped.bw_kib_per_second.samples == 800);
  CHECK(batched.iops.samples - looped.iops.samples == 800);
  // Each read alone in its interval: 4 KiB in 500 ms is 8 KiB/s; the rest are zeros. The last
  // read's interval has not ended when the job does, and is no sample: 2 × 8 KiB/s in all.
  for (const DirectionStats* d : {&looped, &batched}) {
    CHECK(d->bw_kib_per_second.max == 8);
    CHECK(d->bw_kib_per_second.min == 0);
    CHECK(d->bw_kib_per_second.mean * static_cast<double>(d->bw_kib_per_second.samples) == doctest::Approx(16));
  }
}

TEST_CASE("runtime= ends the job when a rate, a thinktime or an iolog wait would run past it") {
  // fio's rate_ddir and handle_thinktime bound a sleep by the runtime left (hostile round 15:
  // rate_iops=1 runtime=100ms ran 1 s with 2 I/Os; thinktime=10d runtime=1 ran ten days).
  const std::string job = "[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\ntime_based\n";
  const RunReport rated = run(job + "runtime=100ms\nrate_iops=1\n");
  CHECK(dir(rated, 0, Direction::kRead).io_count == 1);
  CHECK(rated.results[0].end_ns == 100 * sim::kMillisecond);
  const RunReport thinking = run(job + "runtime=1s\nthinktime=10d\n");
  CHECK(dir(thinking, 0, Direction::kRead).io_count == 1);
  CHECK(thinking.results[0].end_ns == sim::kSecond);
  const std::string path = "/tmp/afasim-iolog-wait-" + std::to_string(::getpid()) + ".log";
  std::ofstream(path) << "fio version 2 iolog\n/dev/sdb write 0 4096\n/dev/sdb wait 999999999999 0\n"
                         "/dev/sdb read 0 4096\n";
  const RunReport waited = run("[replay]\nfilename=sdb\nsize=1m\nruntime=1s\nread_iolog=" + path + "\n");
  CHECK(dir(waited, 0, Direction::kWrite).io_count == 1);
  CHECK(dir(waited, 0, Direction::kRead).io_count == 0);
  CHECK(waited.results[0].end_ns == sim::kSecond);
  std::remove(path.c_str());
}

TEST_CASE("rate_iops_min fails the job with EIO when a rate_cycle falls short, as fio's check_min_rate") {
  const std::string job = "[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\ntime_based\nruntime=3s\n";
  // 10 ms of think time after each I/O: under 100 I/Os a second, short of 200.
  const RunReport slow = run(job + "thinktime=10ms\nrate_iops_min=200\n");
  CHECK(slow.results[0].error == EIO);
  CHECK(slow.results[0].error_message.find("min iops rate 200 not met") == 0);
  CHECK(slow.results[0].end_ns < 2 * sim::kSecond);  // stopped after the first cycle
  const RunReport fine = run(job + "rate_iops=100\nrate_iops_min=50\n");
  CHECK(fine.results[0].error == 0);
  CHECK(dir(fine, 0, Direction::kRead).io_count >= 299);
}

TEST_CASE("rate_iops on a mixed job: each direction holds its own rate, as fio's rate_ddir") {
  // 8 KiB 70/30 with rate_iops=2800,1200 at depth 8: a run of writes drawn ahead of their rate
  // gives its turn to the reads, so both rates hold (they held 5 % short when each I/O waited
  // for its own direction's slot, as drive-failure-rebuild's db showed: ~7,540 of 8,000).
  const RunReport r = run(
      "[m]\nfilename=v\nsize=1g\nrw=randrw\nrwmixread=70\nbs=8k\niodepth=8\nnorandommap\n"
      "rate_iops=2800,1200\ntime_based\nruntime=2s\n");
  CHECK(dir(r, 0, Direction::kRead).io_count >= 2 * 2800 - 8);
  CHECK(dir(r, 0, Direction::kRead).io_count <= 2 * 2800 + 8);
  CHECK(dir(r, 0, Direction::kWrite).io_count >= 2 * 1200 - 8);
  CHECK(dir(r, 0, Direction::kWrite).io_count <= 2 * 1200 + 8);
}

TEST_CASE("rate_iops with bssplit paces rate_iops x the smallest size in bytes, as fio does") {
  // fio 3.33 (setup_rate: rate_bps = rate_iops × min_bs) on bssplit=4k/50:64k/50 rate_iops=500,
  // 2 s: 137 reads, 68.5 IOPS in one run (fio review 32; afasim paced 500 I/Os a second, 7.3× the
  // bytes; now 112: the bytes the rate allows, the rest of fio's count not explained).
  // 500 × 4 KiB a second over a mean size of 34 KiB: 2 s hold ~120 I/Os.
  const RunReport r = run("[r]\nfilename=v\nsize=1g\nrw=randread\nbssplit=4k/50:64k/50\nrate_iops=500\n"
                          "norandommap\ntime_based\nruntime=2s\n");
  const auto& read = dir(r, 0, Direction::kRead);
  CHECK(read.io_bytes <= 2 * 500 * 4096 + 64 * 1024);  // the bytes the rate allows, plus the I/O that crosses it
  CHECK(read.io_bytes >= 2 * 500 * 4096 - 64 * 1024);
  CHECK(read.io_count >= 90);
  CHECK(read.io_count <= 150);
}

TEST_CASE("rate_iops: a direction that falls behind catches up (fio paces on the I/Os since the start)") {
  // One read at a time, paced just above the array's 4K read latency: each I/O that takes
  // longer than the interval makes the next one late, and fio's schedule (I/Os issued ÷ rate
  // from the start, not one interval after the last) lets the following ones catch up.
  const std::string job = "[r]\nfilename=v\nsize=1g\nrw=randrw\nrwmixread=50\nbs=4k\nnorandommap\n"
                          "time_based\nruntime=1s\n";
  const RunReport free_run = run(job);
  const auto ios = dir(free_run, 0, Direction::kRead).io_count + dir(free_run, 0, Direction::kWrite).io_count;
  const std::int64_t rate = static_cast<std::int64_t>(ios) * 9 / 10;  // 90 % of what depth 1 does
  const RunReport paced = run(job + "rate_iops=" + std::to_string(rate / 2) + "\n");
  INFO("unpaced " << ios << " I/Os, paced at " << rate / 2 << " per direction");
  CHECK(dir(paced, 0, Direction::kRead).io_count >= static_cast<std::uint64_t>(rate / 2 - 2));
  CHECK(dir(paced, 0, Direction::kWrite).io_count >= static_cast<std::uint64_t>(rate / 2 - 2));
}

TEST_CASE("write_*_log takes a path prefix as fio does; a folder that does not exist is refused with the reason") {
  // It was refused ("a log name without '/'"), though fio writes write_iops_log=results/db
  // to results/db_iops.1.log.
  const std::string folder = "/tmp/afasim-logpath-" + std::to_string(::getpid());
  std::filesystem::create_directories(folder + "/results");
  const std::string job = "[p]\nfilename=v\nsize=1g\nrw=randread\nbs=4k\niodepth=4\nio_size=400k\n";
  run(job + "write_iops_log=results/db\n", false, folder);  // relative: under the log folder
  CHECK(log_lines(folder + "/results/db_iops.1.log").size() == 100);
  run(job + "write_lat_log=" + folder + "/abs\n", false, "/nonexistent-log-dir");  // absolute: as it is
  CHECK(log_lines(folder + "/abs_clat.1.log").size() == 100);
  const auto catalog = config::Catalog::embedded().value();
  sim::Simulator sim(1);
  controller::MemoryJournal journal;
  auto array = controller::Array::open(sim, catalog, catalog.system("ise-860-g3").value(), journal, journal.snapshot(),
                                       controller::ArrayOptions{}).value();
  auto refused = run_fio(*array, sim, parse_options_job(job + "write_bw_log=" + folder + "/none/db\n"), FioRunOptions{});
  REQUIRE(!refused.is_ok());
  CHECK(refused.status().message() == folder + "/none/db_bw.1.log: cannot create the log file: No such file or directory");
  // A log that cannot be written (a full disk: /dev/full) is the job's error, not lost
  // without a word (hostile round 23: exit 0 and 1.1 MB of logs gone).
  std::filesystem::create_symlink("/dev/full", folder + "/full_iops.1.log");
  const RunReport full = run(job + "write_iops_log=full\n", false, folder);
  CHECK(full.results[0].error == EIO);
  CHECK(full.results[0].error_message == folder + "/full_iops.1.log: cannot write the log file: No space left on device");
  CHECK(run(job + "write_iops_log=fine\n", false, folder).results[0].error == 0);
  // Every clone's logs stay open: more than the open-file limit is refused before any file
  // is made (400 clones x 3 latency logs failed at the 340th clone and left ~1,000 files).
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(1024, saved.rlim_max);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  sim::Simulator sim2(1);
  controller::MemoryJournal journal2;
  auto array2 = controller::Array::open(sim2, catalog, catalog.system("ise-860-g3").value(), journal2,
                                        journal2.snapshot(), controller::ArrayOptions{}).value();
  FioRunOptions in_folder;
  in_folder.log_dir = folder + "/many";
  std::filesystem::create_directories(in_folder.log_dir);
  auto many = run_fio(*array2, sim2, parse_options_job(job + "numjobs=400\nwrite_lat_log=m\n"), in_folder);
  ::setrlimit(RLIMIT_NOFILE, &saved);
  REQUIRE_FALSE(many.is_ok());
  CHECK(many.status().message() == "t.fio: the jobs' log files (write_*_log) keep 1200 files open, one per log and "
                                   "clone; the open-file limit (ulimit -n) is " + std::to_string(low.rlim_cur) +
                                       ", 64 of them afasim's own: raise the limit, or log fewer clones");
  CHECK(std::filesystem::is_empty(in_folder.log_dir));
  std::filesystem::remove_all(folder);
}

TEST_CASE("rate_process=poisson: exponential gaps about the same mean rate") {
  // 4,000 reads a second counted in 10 ms windows: linear pacing puts 40 in each; Poisson
  // arrivals scatter them with a variance equal to the mean (a standard deviation of ~6.3).
  const std::string logs = "/tmp/afasim-poisson-" + std::to_string(::getpid());
  std::filesystem::create_directories(logs);
  const std::string job = "[p]\nfilename=v\nsize=1g\nrw=randread\nbs=4k\niodepth=16\nnorandommap\n"
                          "rate_iops=4000\ntime_based\nruntime=2s\nwrite_iops_log=w\nlog_avg_msec=10\n";
  auto window_counts = [&](const std::string& extra) {
    const RunReport r = run(job + extra, false, logs);
    CHECK(dir(r, 0, Direction::kRead).io_count >= 8000 * 97 / 100);
    CHECK(dir(r, 0, Direction::kRead).io_count <= 8000 * 103 / 100);
    std::vector<double> counts;
    for (const auto& f : log_lines(logs + "/w_iops.1.log"))
      if (f[0] >= 100 && f[0] < 1900) counts.push_back(static_cast<double>(f[1]) / 100.0);
    double mean = 0, var = 0;
    for (double x : counts) mean += x;
    mean /= static_cast<double>(counts.size());
    for (double x : counts) var += (x - mean) * (x - mean);
    return std::sqrt(var / static_cast<double>(counts.size() - 1));
  };
  const double linear_sd = window_counts("");
  const double poisson_sd = window_counts("rate_process=poisson\n");
  std::filesystem::remove_all(logs);
  CHECK(linear_sd < 1.5);
  CHECK(poisson_sd > 4.5);
  CHECK(poisson_sd < 8.5);
}

TEST_CASE("verify= on a mixed, paced job: the replay follows the rate's turns; workload reads are not checked") {
  // fio checks a read in the workload only when the job writes nothing; a mixed job's reads
  // may find blocks it has not written yet (they failed verification before). The verify phase
  // reads back exactly the blocks written, the ones drawn on the rate's turns included.
  const RunReport r = run(
      "[m]\nfilename=v\nsize=4m\nrw=randrw\nbs=16k\niodepth=4\nrate_iops=2000,500\nverify=crc32c\n", true);
  CHECK(r.results[0].error == 0);
  INFO(r.results[0].error_message);
  const auto writes = dir(r, 0, Direction::kWrite).io_count;
  const auto reads = dir(r, 0, Direction::kRead).io_count;
  // The rates, not the 50/50 mix, set the shares: ~256 × 500 / 2,500 writes, well under 128,
  // so the turns did happen.
  CHECK(writes > 20);
  CHECK(writes < 100);
  // The region's 256 blocks once each (the random map), 256 − writes of them read; then one
  // read back per write.
  CHECK(reads == 256);
}

TEST_CASE("random_distribution=zoned, zoned_abs and normal skew the offsets as fio defines them") {
  auto share_below = [](const std::vector<IoUnit>& us, std::int64_t limit) {
    return static_cast<double>(std::count_if(us.begin(), us.end(), [&](const IoUnit& u) {
             return u.offset_bytes < limit;
           })) /
           static_cast<double>(us.size());
  };
  const auto zoned = units(
      "[z]\nfilename=v\nsize=64m\nrw=randread\nrandom_distribution=zoned:90/10:10/90\n", 20000);
  CHECK(share_below(zoned, 64 * sim::kMiB / 10) == doctest::Approx(0.90).epsilon(0.02));
  const auto abs = units(
      "[z]\nfilename=v\nsize=64m\nrw=randread\nrandom_distribution=zoned_abs:80/16m:20/48m\n", 20000);
  CHECK(share_below(abs, 16 * sim::kMiB) == doctest::Approx(0.80).epsilon(0.02));
  // normal:5 — fio's mean of 12 uniform draws has sd ≈ N/12: the 10 % hottest blocks take far
  // more than the 10 % a uniform draw gives them.
  auto top_decile_share = [](const std::vector<IoUnit>& us) {
    std::map<std::int64_t, int> hits;
    for (const auto& u : us) ++hits[u.offset_bytes];
    std::vector<int> counts;
    for (const auto& [o, n] : hits) counts.push_back(n);
    std::sort(counts.rbegin(), counts.rend());
    const std::size_t top = 1638;  // 10 % of the 16,384 blocks
    int sum = 0;
    for (std::size_t i = 0; i < std::min(top, counts.size()); ++i) sum += counts[i];
    return static_cast<double>(sum) / static_cast<double>(us.size());
  };
  const auto normal =
      units("[n]\nfilename=v\nsize=64m\nrw=randread\nrandom_distribution=normal:5\n", 20000);
  const auto uniform = units("[n]\nfilename=v\nsize=64m\nrw=randread\nnorandommap\n", 20000);
  MESSAGE("top 10 % share: normal " << top_decile_share(normal) << ", uniform " << top_decile_share(uniform));
  // Uniform: 20,000 draws over 16,384 blocks put ~28 % in the decile with the most hits
  // (Poisson noise); the normal draw concentrates about twice that.
  CHECK(top_decile_share(normal) > 0.45);
  CHECK(top_decile_share(uniform) < 0.35);
}

TEST_CASE("percentage_random mixes sequential runs into random I/O; blockalign aligns random offsets") {
  auto sequential_share = [](const std::vector<IoUnit>& us) {
    int seq = 0;
    for (std::size_t i = 1; i < us.size(); ++i)
      seq += us[i].offset_bytes == us[i - 1].offset_bytes + us[i - 1].size_bytes;
    return static_cast<double>(seq) / static_cast<double>(us.size() - 1);
  };
  const std::string job = "[p]\nfilename=v\nsize=1g\nrw=randread\nbs=4k\n";
  CHECK(sequential_share(units(job, 4000)) < 0.01);
  CHECK(sequential_share(units(job + "percentage_random=0\n", 4000)) == 1.0);
  CHECK(sequential_share(units(job + "percentage_random=25\n", 4000)) ==
        doctest::Approx(0.75).epsilon(0.05));
  for (const IoUnit& u : units(job + "blockalign=64k\n", 2000)) CHECK(u.offset_bytes % (64 * sim::kKiB) == 0);
  int unaligned = 0;
  for (const IoUnit& u : units(job, 2000)) unaligned += u.offset_bytes % (64 * sim::kKiB) != 0;
  CHECK(unaligned > 1500);  // without blockalign, 15 of 16 4 KiB blocks are not 64 KiB-aligned
  // blockalign below bs (fio: offset = b × 512): 7 of 8 offsets between 4 KiB boundaries, each
  // a multiple of 512 (it was ignored: every offset stayed 4 KiB-aligned).
  int off_4k = 0;
  for (const IoUnit& u : units(job + "blockalign=512\n", 2000)) {
    CHECK(u.offset_bytes % 512 == 0);
    CHECK(u.offset_bytes + u.size_bytes <= sim::kGiB);
    off_4k += u.offset_bytes % 4096 != 0;
  }
  CHECK(off_4k > 1600);
}

TEST_CASE("nrfiles and filename=a:b spread a job over several volumes, size divided among them") {
  const FioJobFile f = parse_options_job("[j]\nsize=8m\nnrfiles=4\nrw=write\nbs=64k\n");
  REQUIRE(f.volumes.size() == 4);
  CHECK(f.volumes[3].name == "j.0.3");  // fio's $jobname.$jobnum.$filenum
  CHECK(f.volumes[0].size_bytes == 2 * sim::kMiB);
  const FioJobFile paths = parse_options_job("[j]\nfilename=/dev/sdb:/dev/mapper/vg-lv:/mnt/t/f1\nsize=3m\n");
  REQUIRE(paths.volumes.size() == 3);
  CHECK(paths.volumes[0].name == "sdb");
  CHECK(paths.volumes[1].name == "mapper-vg-lv");
  CHECK(paths.volumes[2].name == "mnt-t-f1");
  CHECK(paths.volumes[0].size_bytes == sim::kMiB);
  // fio's "\:" is a colon inside a name (hostile round 32: split into "a\" and "b").
  const FioJobFile escaped =
      parse_options_job("[j]\nfilename=/dev/disk/by-path/pci-0000\\:00\\:1f.2-ata-1:/dev/sdc\nsize=2m\n");
  REQUIRE(escaped.volumes.size() == 2);
  CHECK(escaped.volumes[0].name == "disk-by-path-pci-0000-00-1f.2-ata-1");
  CHECK(escaped.volumes[1].name == "sdc");

  // Round robin, one I/O each: 8 MiB of 64 KiB writes is 32 to each of the 4 volumes.
  const auto catalog = config::Catalog::embedded().value();
  sim::Simulator sim(1);
  controller::MemoryJournal journal;
  auto array = controller::Array::open(sim, catalog, catalog.system("ise-860-g3").value(), journal,
                                       journal.snapshot())
                   .value();
  REQUIRE(run_fio(*array, sim, f, FioRunOptions{}).is_ok());
  for (const auto& v : f.volumes) {
    const auto* vol = array->volume_by_name(v.name);
    REQUIRE(vol != nullptr);
    CHECK(array->data_path().volume_stats(vol->id)->write_ops == 32);
  }
}

TEST_CASE("verify= reads back what the job wrote and fails with EILSEQ on other data") {
  const RunReport ok = run("[w]\nfilename=v\nsize=2m\nrw=randwrite\nbs=16k\niodepth=4\nverify=crc32c\n", true);
  CHECK(ok.results[0].error == 0);
  CHECK(dir(ok, 0, Direction::kWrite).io_count == 128);
  CHECK(dir(ok, 0, Direction::kRead).io_count == 128);  // each written block read back once
  // Each direction over its own phase, as fio times them (fio 3.33, randwrite verify=crc32c
  // 4 MiB: write 42 ms, read 33 ms, job 74 ms; fio review 32: both had the whole job's time).
  const sim::Time job_ns = ok.results[0].end_ns - ok.results[0].measure_from_ns;
  const sim::Time write_ns = dir(ok, 0, Direction::kWrite).runtime_ns, read_ns = dir(ok, 0, Direction::kRead).runtime_ns;
  CHECK(write_ns < job_ns);
  CHECK(read_ns < job_ns);
  CHECK(write_ns + read_ns == job_ns);
  // A job that overwrites one block with other data, then a verifying reader: caught.
  const RunReport bad = run(
      "[w]\nfilename=v\nsize=1m\nrw=write\nbs=64k\nverify=md5\ndo_verify=0\n"
      "[spoil]\nstonewall\nfilename=v\nsize=1m\noffset=256k\nio_size=4k\nrw=write\nbs=4k\n"
      "[check]\nstonewall\nfilename=v\nsize=1m\nrw=read\nbs=64k\nverify=md5\n",
      true);
  CHECK(bad.results[0].error == 0);
  CHECK(bad.results[2].error == EILSEQ);
  CHECK(bad.results[2].error_message.find("verify: bad data at byte 262144 of volume \"v\"") == 0);
  // A job its runtime stops never verifies (fio 3.33, write verify=md5 time_based runtime=1s
  // rate_iops=100: 100 writes, 0 reads; fio review 33). A size-bound one ended early too.
  for (const char* stop : {"time_based\nruntime=1s\n", "runtime=100ms\n"}) {
    const RunReport timed =
        run(std::string("[w]\nfilename=v\nsize=64k\nrw=write\nbs=4k\nverify=md5\nrate_iops=100\n") + stop, true);
    CHECK(dir(timed, 0, Direction::kWrite).io_count == (std::string(stop).starts_with("time") ? 100 : 10));
    CHECK(dir(timed, 0, Direction::kRead).io_count == 0);
  }
}

TEST_CASE("the JSON and normal output carry fio's CPU and I/O depth fields: depths measured, the host's CPU zero") {
  // fio review 32: no usr_cpu, sys_cpu, ctx, majf, minf, iodepth_level, iodepth_submit or
  // iodepth_complete, so scripts reading them (job['usr_cpu']) failed; no "IO depths" line.
  const RunReport deep = run("[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\niodepth=16\ntime_based\nruntime=100ms\n");
  const auto job = to_fio_json(deep)["jobs"][0];
  for (const char* key : {"usr_cpu", "sys_cpu", "ctx", "majf", "minf", "iodepth_submit", "iodepth_complete"})
    CHECK_MESSAGE(job.contains(key), key);
  // The queue is full but for the first 15 submissions (1, 2-3, 4-7, 8-15): fio's "16" bucket.
  CHECK(job["iodepth_level"]["16"].get<double>() > 99.0);
  CHECK(job["iodepth_level"]["32"].get<double>() == 0.0);
  const auto shallow = to_fio_json(run("[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\nio_size=1m\n"))["jobs"][0];
  CHECK(shallow["iodepth_level"]["1"] == 100.0);
  // Not the I/Os waiting for their rate slot (review 32: iodepth=32 rate_iops=200 read 92 % at
  // depth 32; fio 97.5 % at 1).
  const auto paced = to_fio_json(run("[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\niodepth=32\nrate_iops=200\n"
                                     "time_based\nruntime=1s\n"))["jobs"][0];
  CHECK(paced["iodepth_level"]["1"].get<double>() > 90.0);
  const std::string text = format_normal(deep);
  CHECK(text.find("  IO depths    : 1=0.1%, 2=0.1%, 4=0.1%, 8=0.1%, 16=") != std::string::npos);
  CHECK(text.find("  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0\n") != std::string::npos);
}

TEST_CASE("number_ios stops a clone after that many I/Os, whichever bound comes first, as fio") {
  // fio 3.33, size=64m rw=randread bs=4k number_ios=1000: 1000 reads (fio review 32: refused).
  CHECK(dir(run("[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\nnumber_ios=1000\n"), 0, Direction::kRead).io_count ==
        1000);
  const RunReport mixed = run("[m]\nfilename=v\nsize=64m\nrw=randrw\nbs=4k\niodepth=8\nnumber_ios=500\n");
  CHECK(dir(mixed, 0, Direction::kRead).io_count + dir(mixed, 0, Direction::kWrite).io_count == 500);
  // Per loop, as fio (review 32: loops=3 number_ios=100, fio 300 I/Os).
  CHECK(dir(run("[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\nnumber_ios=100\nloops=3\n"), 0, Direction::kRead).io_count ==
        300);
  // It never extends the job: size ends it first.
  CHECK(dir(run("[r]\nfilename=v\nsize=1m\nrw=read\nbs=4k\nnumber_ios=1000\n"), 0, Direction::kRead).io_count == 256);
}

TEST_CASE("an interrupted run (Ctrl-C) stops as its runtime would and reports what ran, as fio does") {
  // Hostile round 32: SIGINT lost the whole report. The flag is set before the run here, so the
  // run stops at the first check (every kProgressSteps events) instead of after 100 s.
  const std::atomic<bool> interrupted{true};
  const RunReport r = run("[r]\nfilename=v\nsize=1g\nrw=randread\nbs=4k\niodepth=16\ntime_based\nruntime=100s\n", false,
                          "", &interrupted);
  const auto& read = dir(r, 0, Direction::kRead);
  CHECK(read.io_count > 1000);
  CHECK(read.io_count < 100'000);  // 100 s would be ~14 M
  CHECK(r.results[0].end_ns < sim::kSecond);
  CHECK(r.results[0].error == 0);
  CHECK(r.interrupted);
  CHECK(!run("[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\nio_size=1m\n").interrupted);
}

TEST_CASE("exitall: the first job to finish ends the others") {
  const std::string jobs =
      "[short]\nfilename=a\nsize=64m\nrw=randread\ntime_based\nruntime=200ms\n"
      "[long]\nfilename=b\nsize=64m\nrw=randread\ntime_based\nruntime=2s\n";
  CHECK(run(jobs).results[1].end_ns >= 2 * sim::kSecond);
  const RunReport r = run("[global]\nexitall\n" + jobs);
  CHECK(r.results[1].end_ns == r.results[0].end_ns);
  CHECK(r.results[1].end_ns < 250 * sim::kMillisecond);

  // Only its own group by default (fio's exit_what=group): a stonewalled job after them runs
  // (hostile round 32: it never ran, 0 I/Os and error 0).
  const std::string later = "[after]\nstonewall\nfilename=c\nsize=64m\nrw=randread\ntime_based\nruntime=300ms\n";
  const RunReport grouped = run("[global]\nexitall\n" + jobs + later);
  CHECK(grouped.results[1].end_ns < 250 * sim::kMillisecond);
  CHECK(dir(grouped, 2, Direction::kRead).io_count > 1000);
  CHECK(grouped.results[2].end_ns >= grouped.results[2].start_ns + 300 * sim::kMillisecond);
  // exit_what=all stops every job of the file, as before; stonewall stops those running.
  const RunReport all = run("[global]\nexitall\nexit_what=all\n" + jobs + later);
  CHECK(dir(all, 2, Direction::kRead).io_count == 0);
  const RunReport running = run("[global]\nexitall\nexit_what=stonewall\n" + jobs + later);
  CHECK(running.results[1].end_ns < 250 * sim::kMillisecond);
  CHECK(dir(running, 2, Direction::kRead).io_count > 1000);
  // exitall in one job is the run's (fio init.c exitall_on_terminate): in a later group without
  // it, the first job to end stops the other (review 32: afasim let it run 2 s, fio 1.01 s).
  const RunReport global = run("[short]\nexitall\nfilename=a\nsize=64m\nrw=randread\ntime_based\nruntime=100ms\n"
                               "[quick]\nstonewall\nfilename=b\nsize=64m\nrw=randread\ntime_based\nruntime=200ms\n"
                               "[slow]\nfilename=c\nsize=64m\nrw=randread\ntime_based\nruntime=2s\n");
  CHECK(global.results[2].end_ns == global.results[1].end_ns);
  CHECK(global.results[2].end_ns < 400 * sim::kMillisecond);
}

TEST_CASE("reporting switches: unified_rw_reporting, significant_figures, lat/clat/slat percentiles") {
  const std::string job =
      "[m]\nfilename=v\nsize=64m\nrw=randrw\nbs=4k\niodepth=4\ntime_based\nruntime=300ms\n";
  const RunReport plain = run(job);
  const std::uint64_t ios = dir(plain, 0, Direction::kRead).io_count + dir(plain, 0, Direction::kWrite).io_count;
  const auto mixed = to_fio_json(run(job + "unified_rw_reporting=mixed\n"))["jobs"][0];
  CHECK(mixed.contains("mixed"));
  CHECK_FALSE(mixed.contains("read"));
  CHECK(mixed["mixed"]["total_ios"] == ios);
  const auto both = to_fio_json(run(job + "unified_rw_reporting=both\n"))["jobs"][0];
  CHECK((both.contains("read") && both.contains("mixed")));

  const std::string six = format_normal(run(job + "significant_figures=6\n"));
  const std::string four = format_normal(plain);
  CHECK(four.find("IOPS=") != std::string::npos);
  const auto iops_text = [](const std::string& out) {
    const auto at = out.find("read: IOPS=") + 11;
    return out.substr(at, out.find(',', at) - at);
  };
  MESSAGE("IOPS printed as " << iops_text(four) << " and " << iops_text(six));
  CHECK(iops_text(four).back() == 'k');  // 4 figures: "14.1k"
  CHECK(iops_text(six).find_first_not_of("0123456789") == std::string::npos);  // all digits

  const RunReport lat = run(job + "lat_percentiles=1\nclat_percentiles=0\nslat_percentiles=1\n");
  const auto j = to_fio_json(lat)["jobs"][0]["read"];
  CHECK(j["lat_ns"].contains("percentile"));
  CHECK(j["slat_ns"].contains("percentile"));
  CHECK_FALSE(j["clat_ns"].contains("percentile"));
  const std::string text = format_normal(lat);
  CHECK(text.find("    lat percentiles") != std::string::npos);
  CHECK(text.find("clat percentiles") == std::string::npos);
}

TEST_CASE("json+ adds fio's latency bins; terse is one line of fio's version-3 fields") {
  const RunReport r = run("[r]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\niodepth=8\ntime_based\nruntime=200ms\n");
  const auto plus = to_fio_json(r, true)["jobs"][0]["read"]["clat_ns"];
  REQUIRE(plus.contains("bins"));
  std::uint64_t n = 0;
  for (const auto& [value, count] : plus["bins"].items()) n += count.get<std::uint64_t>();
  CHECK(n == plus["N"].get<std::uint64_t>());
  CHECK_FALSE(to_fio_json(r, false)["jobs"][0]["read"]["clat_ns"].contains("bins"));
  const std::string terse = format_terse(r);
  CHECK(std::count(terse.begin(), terse.end(), '\n') == 1);
  CHECK(std::count(terse.begin(), terse.end(), ';') == 120);  // 121 fields without disk stats
  CHECK(terse.rfind("3;fio-3.33;r;0;0;", 0) == 0);
  // Fields 93-99, the I/O depths, as the normal output's "IO depths" (fio's stat_calc_dist):
  // the ramp to depth 8 puts a few I/Os at depths 1-7, under 0.1 % each, shown as 0.1 %
  // (fio review 44: terse said 0.0 %).
  std::vector<std::string> fields;
  for (std::size_t at = 0, next; at <= terse.size(); at = next + 1) {
    next = std::min(terse.find_first_of(";\n", at), terse.size());
    fields.push_back(terse.substr(at, next - at));
  }
  REQUIRE(fields.size() >= 99);
  const std::vector<std::string> depths(fields.begin() + 92, fields.begin() + 99);
  CHECK(depths == std::vector<std::string>{"0.1%", "0.1%", "0.1%", "100.0%", "0.0%", "0.0%", "0.0%"});
  CHECK(format_normal(r).find("IO depths    : 1=0.1%, 2=0.1%, 4=0.1%, 8=100.0%, 16=0.0%") != std::string::npos);
  auto formats = parse_output_formats("normal,json+,terse");
  REQUIRE(formats.is_ok());
  const std::string all = format_report(r, *formats);
  CHECK(all.rfind("3;fio-3.33;", 0) == 0);  // fio's order: terse, json, normal
  CHECK(all.find("\"bins\"") < all.find("Run status group"));
  CHECK_FALSE(parse_output_formats("normal,xml").is_ok());
}

TEST_CASE("include, ${ENV} and --section reach outside the text only through FioParseOptions") {
  FioParseOptions options;
  options.env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "BS") return std::string("16k");
    return std::nullopt;
  };
  options.read_include = [](const std::string& path, const std::string& from) -> sim::Result<std::string> {
    CHECK(from == "t.fio");
    if (path == "common.fio") return std::string("size=8m\nrw=randwrite\n");
    return sim::not_found(path + ": no such file");
  };
  const FioJobFile f = parse_options_job("[a]\nfilename=v\ninclude common.fio\nbs=${BS}\n[b]\nfilename=w\nsize=1m\n", options);
  CHECK(f.jobs[0].size_bytes == 8 * sim::kMiB);
  CHECK(f.jobs[0].rw == RwPattern::kRandWrite);
  CHECK(f.jobs[0].bs[1].min_bytes == 16 * sim::kKiB);
  options.sections = {"b"};
  const FioJobFile only_b = parse_options_job("[a]\nfilename=v\nsize=1m\n[b]\nfilename=w\nsize=1m\n", options);
  REQUIRE(only_b.jobs.size() == 1);
  CHECK(only_b.jobs[0].name == "b");
  auto missing = parse_fio_job_file("[a]\nsize=1m\ninclude nope.fio\n", "t.fio", options);
  CHECK(missing.status().message() == "t.fio:3: include: nope.fio: no such file");
  CHECK(parse_fio_job_file("[a]\nsize=${SIZE}\n", "t.fio", options).status().message() ==
        "t.fio:2: ${SIZE}: environment variable \"SIZE\" is not set (fio would substitute an empty string)");
  options.sections = {"c"};
  CHECK(parse_fio_job_file("[a]\nsize=1m\n", "t.fio", options).status().message() ==
        "t.fio: --section: no job section \"c\"");
  // A wait_for on a job --section left out says so (hostile round 23: "no job named").
  options.sections = {"b"};
  CHECK(parse_fio_job_file("[a]\nfilename=v\nsize=1m\n[b]\nfilename=w\nsize=1m\nwait_for=a\n", "t.fio", options)
            .status()
            .message() == "t.fio:7: wait_for: job \"a\" is not run: --section did not select it");
}

TEST_CASE("includes are bounded in number and bytes, not only in depth") {
  // Hostile round 23: 10 includes in each of 8 levels read 10^7 files (2 GB, killed at 120 s).
  // Here each level includes the next 10 times. From g2: 1 + 10 + 100 = 111 files, fine. From
  // g3 (1,111 files), depth first: g3, nine whole g2 subtrees of 111 (1,000 files), the tenth
  // g2, two g1 with their 10 g0 each (1,022), a third g1 (1,024): its first include is the
  // 1,025th file.
  FioParseOptions options;
  options.read_include = [](const std::string& path, const std::string&) -> sim::Result<std::string> {
    if (path == "big.inc") return std::string(1 << 20, '\n');  // 1 MiB of empty lines
    const int level = path[1] - '0';
    if (level == 0) return std::string("iodepth=2\n");
    std::string text;
    for (int i = 0; i < 10; ++i) text += "include g" + std::to_string(level - 1) + ".inc\n";
    return text;
  };
  auto fan = [&](int levels) {
    auto f = parse_fio_job_file("[j]\nfilename=v\nsize=1m\ninclude g" + std::to_string(levels) + ".inc\n", "t.fio",
                                options);
    return f.is_ok() ? std::string() : f.status().message();
  };
  CHECK(fan(2) == "");
  CHECK(fan(3) == "g1.inc:1: include: more than 1024 included files in one job file");
  // 17 included files of 1 MiB each pass the 16 MiB of included text.
  std::string many = "[j]\nfilename=v\nsize=1m\n";
  for (int i = 0; i < 17; ++i) many += "include big.inc\n";
  auto big = parse_fio_job_file(many, "t.fio", options);
  REQUIRE_FALSE(big.is_ok());
  CHECK(big.status().message() == "t.fio:20: include: the included files hold more than 16777216 bytes in all");
}

TEST_CASE("read_iolog replays a trace in a job, at its recorded times or back to back (replay_no_stall)") {
  const std::string path = "/tmp/afasim-iolog-" + std::to_string(::getpid()) + ".log";
  {
    std::ofstream(path) << "fio version 3 iolog\n0 /dev/sdb add\n100 /dev/sdb read 0 4096\n"
                           "1000100 /dev/sdb write 8192 4096\n2000100 /dev/sdb trim 65536 65536\n";
  }
  const std::string job = "[replay]\nfilename=sdb\nsize=1m\nread_iolog=" + path + "\n";
  const RunReport timed = run(job);
  CHECK(dir(timed, 0, Direction::kRead).io_count == 1);
  CHECK(dir(timed, 0, Direction::kWrite).io_count == 1);
  CHECK(dir(timed, 0, Direction::kTrim).io_count == 1);
  CHECK(timed.results[0].end_ns > 2 * sim::kSecond);  // the last I/O arrives at 2.0001 s
  const RunReport fast = run(job + "replay_no_stall=1\n");
  CHECK(dir(fast, 0, Direction::kTrim).io_count == 1);
  CHECK(fast.results[0].end_ns < 10 * sim::kMillisecond);
  // The log's I/O lies in the job's region: a read at 0 is outside offset=1m's (hostile round
  // 15: it was replayed; with offset_increment clones wrote into each other's regions).
  const RunReport below = run("[replay]\nfilename=sdb\nsize=1m\noffset=1m\nread_iolog=" + path + "\n");
  CHECK(below.results[0].error == EINVAL);
  CHECK(below.results[0].error_message.find(":3: I/O before the job's region (offset=)") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("log files: one line per I/O, or per log_avg_msec window, in fio's columns") {
  const std::string logs = "/tmp/afasim-logs-" + std::to_string(::getpid());
  std::filesystem::create_directories(logs);
  const std::string job =
      "[l]\nfilename=v\nsize=64m\nrw=randrw\nbs=4k\niodepth=4\ntime_based\nruntime=300ms\n";
  const RunReport each = run(job + "write_lat_log=e\nwrite_iops_log=e\nlog_offset=1\n", false, logs);
  const auto ios = dir(each, 0, Direction::kRead).io_count + dir(each, 0, Direction::kWrite).io_count;
  const auto clat = log_lines(logs + "/e_clat.1.log");
  REQUIRE(clat.size() == ios);  // every completed I/O
  for (const auto& f : clat) {
    REQUIRE(f.size() == 6);  // time, value, ddir, bs, offset, prio (log_offset=1)
    CHECK(f[3] == 4096);
    CHECK(f[4] % 4096 == 0);
    CHECK(f[1] > 0);
  }
  CHECK(log_lines(logs + "/e_iops.1.log").size() == ios);
  const RunReport avg = run(job + "write_iops_log=a\nlog_avg_msec=100\n", false, logs);
  const auto windows = log_lines(logs + "/a_iops.1.log");
  // Three 100 ms windows of the runtime, one line per direction each. The 4 I/Os in flight at
  // the end complete in the next fraction of a millisecond: fio takes a rate sample only once
  // a whole log_avg_msec (less 1 ms) has passed, so they are in no iops line (fio review 44:
  // they were written at 400 ms as a whole window's rate, a dip to 10-40 IOPS that was not
  // there; over their fraction of a millisecond they were a spike).
  REQUIRE(windows.size() == 6);
  std::int64_t counted = 0;
  std::map<std::int64_t, int> lines_at;
  for (const auto& f : windows) {
    CHECK(f.size() == 5);
    ++lines_at[f[0]];
    counted += f[1] / 10;  // a whole window: IOPS × 0.1 s
  }
  CHECK(lines_at == std::map<std::int64_t, int>{{100, 2}, {200, 2}, {300, 2}});
  const auto avg_ios = static_cast<std::int64_t>(dir(avg, 0, Direction::kRead).io_count +
                                                 dir(avg, 0, Direction::kWrite).io_count);
  CHECK(avg_ios - counted >= 1);  // the drained I/Os
  CHECK(avg_ios - counted <= 4);
  // Their latencies are in the latency logs, at the clone's end (300 ms and a fraction), as
  // fio's finalize_logs writes the window it holds.
  run(job + "write_lat_log=t\nlog_avg_msec=100\n", false, logs);
  std::map<std::int64_t, int> clat_at;
  for (const auto& f : log_lines(logs + "/t_clat.1.log")) ++clat_at[f[0]];
  CHECK(clat_at.size() == 3);
  CHECK(clat_at[100] == 2);
  CHECK(clat_at[200] == 2);
  CHECK(clat_at[300] >= 3);  // the window to 300 ms, and the drain's one or two directions
  // per_job_logs=0: the clones share one file (no .N), every line whole.
  const RunReport shared = run(job + "numjobs=3\nwrite_lat_log=s\nper_job_logs=0\n", false, logs);
  std::uint64_t shared_ios = 0;
  for (int c = 0; c < 3; ++c)
    shared_ios += dir(shared, c, Direction::kRead).io_count + dir(shared, c, Direction::kWrite).io_count;
  const auto lines = log_lines(logs + "/s_lat.log");
  CHECK(lines.size() == shared_ios);
  for (const auto& f : lines) REQUIRE(f.size() == 5);
  CHECK_FALSE(std::filesystem::exists(logs + "/s_lat.1.log"));
  std::filesystem::remove_all(logs);
}

TEST_CASE("a job that ends inside its ramp_time reports what it did, as fio (its counters are zeroed only at the ramp's end)") {
  // fio 3.33, randread io_size=2m rate_iops=2000 ramp_time=500ms: 512 reads, 2 MiB in 256 ms,
  // no latency samples (fio review 33: afasim reported no I/O and left the job out).
  const RunReport r = run("[r]\nfilename=v\nsize=4m\nbs=4k\nrw=randread\nramp_time=500ms\nio_size=2m\nrate_iops=2000\n");
  const auto& reads = dir(r, 0, Direction::kRead);
  CHECK(reads.io_count == 512);
  CHECK(reads.io_bytes == 2 * sim::kMiB);
  CHECK(reads.runtime_ms() == doctest::Approx(256).epsilon(0.02));
  CHECK(reads.clat_ns.count() == 0);
  // Past the ramp, only what follows it counts: 1 s at 2,000 IOPS after a 500 ms ramp.
  const RunReport longer =
      run("[r]\nfilename=v\nsize=4m\nbs=4k\nrw=randread\nramp_time=500ms\nruntime=1s\ntime_based\nrate_iops=2000\n");
  CHECK(dir(longer, 0, Direction::kRead).io_count == doctest::Approx(2000).epsilon(0.01));
}

TEST_CASE("a region ends at its last whole block, as fio's filesetup takes io_size down to min_bs") {
  // fio 3.33 (fio review 33): size=9000 bs=4k, 2 reads (afasim read block 0 again: 3);
  // nrfiles=3 of 1 MiB, 255 reads; size=30% of a 13 MiB file, 998.
  CHECK(dir(run("[s]\nfilename=v\nrw=read\nbs=4k\nsize=9000\n"), 0, Direction::kRead).io_count == 2);
  CHECK(dir(run("[s]\nfilename=v\nrw=randread\nbs=4k\nsize=9000\n"), 0, Direction::kRead).io_count == 2);
  CHECK(dir(run("[n]\nrw=read\nbs=4k\nsize=1m\nnrfiles=3\n"), 0, Direction::kRead).io_count == 255);
  const RunReport pct = run("[sizer]\nfilename=v\nrw=read\nbs=4k\nsize=13m\n[pct]\nfilename=v\nrw=read\nbs=4k\nsize=30%\n");
  CHECK(dir(pct, 1, Direction::kRead).io_count == 998);
}

TEST_CASE("rw=read:HOLE ends a pass where the next block would run past the region, as fio's fill_io_u") {
  // fio 3.33 with ioengine=null (fio review 33): read:12k bs=8k size=1m, 51 reads (afasim
  // wrapped to 128); write:12k bs=8k size=64k, 3; where the next offset lands at or past the
  // end fio wraps and runs to size=: read:4k bs=4k size=64k, 16; read:8k bs=8k, 8.
  auto ios = [](const std::string& rw) {
    const RunReport r = run("[h]\nfilename=v\n" + rw + "\n");
    return dir(r, 0, Direction::kRead).io_count + dir(r, 0, Direction::kWrite).io_count;
  };
  CHECK(ios("rw=read:12k\nsize=1m\nbs=8k") == 51);
  CHECK(ios("rw=write:12k\nsize=64k\nbs=8k") == 3);
  CHECK(ios("rw=read:4k\nsize=64k\nbs=4k") == 16);
  CHECK(ios("rw=read:8k\nsize=64k\nbs=8k") == 8);
  // Review 33b: the last block ending at the file's end ends the pass (read:12k size=128k, 7),
  // and on a volume larger than the region fio reads on past it only to stop there (8).
  CHECK(ios("rw=read:12k\nsize=128k\nbs=8k") == 7);
  const RunReport larger = run("[big]\nfilename=v\nsize=1m\nio_size=4k\n[h]\nfilename=v\nrw=read:4k\nsize=64k\nbs=4k\n");
  CHECK(dir(larger, 1, Direction::kRead).io_count == 8);
  // Mixed directions and several block sizes end a pass where fio does not follow them (review
  // 34, fio 3.33: rw=rw:8k bs=4k size=1m 85 reads and 86 writes, afasim ran 117 and 139): refused
  // unless time_based, where a pass wraps as fio's does.
  for (const char* rw : {"rw=rw:8k\nbs=4k", "rw=trimwrite:8k\nbs=4k", "rw=read:4k\nbssplit=4k/50:8k/50",
                         "rw=read:4k\nbsrange=4k-8k"}) {
    auto f = parse_fio_job_file("[h]\nfilename=v\nsize=1m\n" + std::string(rw) + "\n", "t.fio");
    REQUIRE_MESSAGE(!f.is_ok(), rw);
    CHECK(f.status().message().find("t.fio:4: rw: a hole after each I/O is simulated for one direction") == 0);
  }
  CHECK(parse_fio_job_file("[h]\nfilename=v\nsize=1m\nrw=rw:8k\nbs=4k\ntime_based\nruntime=1s\n", "t.fio").is_ok());
  CHECK(parse_fio_job_file("[h]\nfilename=v\nsize=1m\nrw=read:8k\nbs=4k,8k\n", "t.fio").is_ok());
  // rwmixread=100 (or 0) draws one direction: fio 3.33 runs rw=rw:8k bs=4k size=1m as 86 reads
  // (review 35: refused).
  CHECK(ios("rw=rw:8k\nbs=4k\nsize=1m\nrwmixread=100") == 86);
}

TEST_CASE("JSON elapsed is the whole run's seconds rounded up, the same for every job, as fio's eta.c") {
  // fio 3.33 (ioengine=null), three 1 MiB jobs with startdelay 0, 1 and 2 s: 3, 3, 3
  // (fio review 33: afasim gave each job its own end, rounded down: 0, 1, 2).
  const auto jobs = to_fio_json(run("[a]\nfilename=v\nsize=1m\n[b]\nfilename=w\nsize=1m\nstartdelay=1\n"
                                    "[c]\nfilename=x\nsize=1m\nstartdelay=2\n"))["jobs"];
  REQUIRE(jobs.size() == 3);
  for (const auto& j : jobs) CHECK(j["elapsed"] == 3);
}

TEST_CASE("steadystate: the deviation and slope criteria of fio's steadystate.c over a window of samples") {
  SteadyStateResult dev;
  dev.spec.slope = false;
  dev.spec.limit = 5;  // iops:5%
  dev.spec.duration_s = 4;
  CHECK_FALSE(dev.add_sample(90, 0));  // the window is not full yet
  CHECK_FALSE(dev.add_sample(100, 0));
  CHECK_FALSE(dev.add_sample(102, 0));
  // 90, 100, 102, 98: mean 97.5, largest deviation 7.5 = 7.69 % of it: not yet.
  CHECK_FALSE(dev.add_sample(98, 0));
  CHECK(dev.criterion == doctest::Approx(100 * 7.5 / 97.5));
  // The oldest (90) leaves: 100, 102, 98, 100, mean 100, deviation 2 %: steady.
  CHECK(dev.add_sample(100, 0));
  CHECK(dev.max_deviation == doctest::Approx(2));
  CHECK(std::vector<std::uint64_t>(dev.iops.begin(), dev.iops.end()) == std::vector<std::uint64_t>{100, 102, 98, 100});
  CHECK(dev.iops_mean() == 100);
  SteadyStateResult slope;  // bw_slope:10 (bytes a second per second), not a percentage
  REQUIRE(parse_steadystate("bw_slope:10", slope.spec).is_ok());
  slope.spec.duration_s = 4;
  for (std::uint64_t bw : {1000, 1020, 1040}) CHECK_FALSE(slope.add_sample(0, bw));
  CHECK_FALSE(slope.add_sample(0, 1060));  // least squares of 1000..1060 in steps of 20: 20
  CHECK(slope.slope == doctest::Approx(20));
  CHECK_FALSE(slope.add_sample(0, 1060));  // 1020, 1040, 1060, 1060: slope 70 / 5 = 14, above 10
  CHECK(slope.slope == doctest::Approx(14));
  CHECK(slope.add_sample(0, 1060));  // 1040, 1060, 1060, 1060: 30 / 5 = 6
  CHECK(slope.attained);
  SteadyStateSpec spec;
  CHECK(parse_steadystate("lat:5%", spec).message().find("\"lat\" is not iops, iops_slope, bw or bw_slope") == 0);
  CHECK(parse_steadystate("iops", spec).message().find("a limit after the criterion") != std::string::npos);
  CHECK(parse_steadystate("iops:-1", spec).message().find("is not a limit") != std::string::npos);
}

TEST_CASE("steadystate: a job stops once its rate is steady over ss_dur, after ss_ramp, as fio's steadystate_check") {
  // rate_iops=1000 is exactly steady: with ss_dur=5s the check at 5 s attains (samples at
  // 1..5 s); with ss_ramp=3s the first sample is at 4 s (one interval past the ramp), so 8 s.
  const std::string job = "[s]\nfilename=v\nsize=64m\nrw=randread\nbs=4k\ntime_based\nruntime=60s\nrate_iops=1000\n";
  const RunReport quick = run(job + "ss=iops:1%\nss_dur=5s\n");
  CHECK(quick.results[0].end_ns == doctest::Approx(5 * sim::kSecond).epsilon(0.001));
  REQUIRE(quick.results[0].steadystate);
  CHECK(quick.results[0].steadystate->attained);
  CHECK(std::vector<std::uint64_t>(quick.results[0].steadystate->iops.begin(), quick.results[0].steadystate->iops.end()) ==
        std::vector<std::uint64_t>(5, 1000));
  const RunReport ramped = run(job + "ss=iops:1%\nss_dur=5s\nss_ramp=3s\n");
  CHECK(ramped.results[0].end_ns == doctest::Approx(8 * sim::kSecond).epsilon(0.001));
  // A limit nothing meets: the job runs its runtime, not attained; fio's JSON object.
  const RunReport never = run(job + "runtime=10s\nss=iops:0%\nss_dur=5s\n");
  CHECK(never.results[0].end_ns == doctest::Approx(10 * sim::kSecond).epsilon(0.001));
  const auto ss = to_fio_json(never)["jobs"][0]["steadystate"];
  CHECK(ss["ss"] == "iops:0.000000%");
  CHECK(ss["attained"] == 0);
  CHECK(ss["duration"] == 5);
  CHECK(ss["data"]["iops_mean"] == 1000);
  CHECK(ss["data"]["iops"].size() == 5);
  // Without steadystate_duration there is no detection and no object (fio's default ss_dur=0).
  CHECK_FALSE(to_fio_json(run(job + "runtime=1s\nss=iops:1%\n"))["jobs"][0].contains("steadystate"));
}

TEST_CASE("percentile_list prints as fio 3.33: the most decimals written, a repeated entry again; thinktime_blocks=0") {
  // fio 3.33, percentile_list=50:99.9999999:99.5:50: "50.0000000th", twice, "99.5000000th",
  // "99.9999999th" (review 32: afasim printed 50.0th, 99.5th, 100.0th).
  const std::string text =
      format_normal(run("[p]\nfilename=v\nsize=4m\nbs=4k\nrw=randread\npercentile_list=50:99.9999999:99.5:50\n"));
  const auto first = text.find("50.0000000th=[");
  REQUIRE(first != std::string::npos);
  CHECK(text.find("50.0000000th=[", first + 1) != std::string::npos);
  CHECK(text.find("99.9999999th=[") != std::string::npos);
  CHECK(text.find(" 100.0th") == std::string::npos);
  CHECK(format_normal(run("[p]\nfilename=v\nsize=4m\nbs=4k\nrw=randread\npercentile_list=50:99\n")).find(" 99th=[") !=
        std::string::npos);
  // fio: b >= last + 0 always holds, a pause after every I/O as with 1 (review 32: refused).
  const RunReport zero = run("[t]\nfilename=v\nsize=4m\nbs=4k\nrw=randread\nthinktime=10ms\nthinktime_blocks=0\nio_size=40k\n");
  CHECK(zero.results[0].end_ns >= 90 * sim::kMillisecond);  // 10 reads, 9 or 10 pauses of 10 ms
}
