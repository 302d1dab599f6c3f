// The fio job-file parser: shipped files, inheritance, fio's number and time syntax, the
// per-direction forms, volumes and groups, and bad input (errors, never crashes).
#include "workload/fio_job.h"
#include "sim/units.h"

#include <doctest/doctest.h>

#include <cstdio>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "config/preset.h"
#include "sim/rng.h"
#include "workload/distribution.h"
#include "tests/workload/cli_test_support.h"
#include "tests/workload/fio_test_support.h"

using namespace afasim;
using namespace afasim::workload;
using afasim::workload::testing::parse_job_ok;
using afasim::workload::testing::run_cli;
using afasim::workload::testing::write_temp;

namespace {


std::string parse_error(std::string_view text) {
  auto r = parse_fio_job_file(text, "bad.fio");
  if (r.is_ok()) return "(parsed without error)";
  CHECK(r.status().code() == sim::Code::kInvalidArgument);
  return r.status().message();
}

std::int64_t size_of(std::string_view text, int kb_base = 1024) {
  auto r = parse_fio_size(text, kb_base);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return *r;
}

}  // namespace

TEST_CASE("every shipped workload file parses, with the layout its comments describe") {
  const auto& files = config::embedded_files();
  int parsed = 0;
  for (const auto& [path, text] : files) {
    if (path.rfind("workloads/", 0) != 0 || path.size() < 4 ||
        path.substr(path.size() - 4) != ".fio") {
      continue;
    }
    CAPTURE(path);
    const FioJobFile f = parse_job_ok(text, path);
    CHECK(f.warnings.empty());
    // Every ISE 860 file uses the same four 128 GiB LUNs and fills them in group 0.
    REQUIRE(f.volumes.size() == 4);
    for (int i = 0; i < 4; ++i) {
      CHECK(f.volumes[i].name == "lun" + std::to_string(i));
      CHECK(f.volumes[i].size_bytes == 128 * sim::kGiB);
      const FioJob& fill = f.jobs[static_cast<std::size_t>(i)];
      CHECK(fill.group_id == 0);
      CHECK(fill.rw == RwPattern::kWrite);
      CHECK_FALSE(fill.time_based);
      CHECK(fill.total_io_bytes() == 128 * sim::kGiB);  // one full pass over the LUN
    }
    ++parsed;
  }
  CHECK(parsed == 6);

  // The review's load: 16 jobs x 16 outstanding 4 KiB random reads, one reporting group.
  const FioJobFile read = parse_job_ok(files.at("workloads/ise860-4k-randread.fio"));
  CHECK(read.clone_count() == 4 + 16);
  CHECK(read.group_count() == 2);
  for (const FioJob& j : read.jobs) {
    if (j.group_id == 0) continue;  // the fill
    CHECK(j.rw == RwPattern::kRandRead);
    CHECK(j.iodepth == 16);
    CHECK(j.numjobs == 4);
    CHECK(j.bs[0].is_fixed());
    CHECK(j.bs[0].min_bytes == 4096);
    CHECK(j.group_reporting);
    CHECK(j.time_based);
    CHECK(j.runtime_ns == 60 * sim::kSecond);
    CHECK(j.ramp_time_ns == 5 * sim::kSecond);
    CHECK_FALSE(j.random_map);  // norandommap
  }
  CHECK(parse_job_ok(files.at("workloads/ise860-4k-randwrite.fio")).jobs[4].rw ==
        RwPattern::kRandWrite);

  const FioJobFile mix = parse_job_ok(files.at("workloads/ise860-8k-7030.fio"));
  CHECK(mix.jobs[4].rw == RwPattern::kRandReadWrite);
  CHECK(mix.jobs[4].rwmix_read_percent == 70);
  CHECK(mix.jobs[4].bs[0].min_bytes == 8192);
  // Long enough for the write caches to settle (~12 s RAID 10, ~19 s RAID 5 from empty; the
  // file's comment).
  CHECK(mix.jobs[4].ramp_time_ns == 25 * sim::kSecond);

  const FioJobFile seq = parse_job_ok(files.at("workloads/ise860-128k-seq.fio"));
  CHECK(seq.group_count() == 3);
  CHECK(seq.jobs[4].size_bytes == 32 * sim::kGiB);
  CHECK(seq.jobs[4].region_offset_bytes(3) == 96 * sim::kGiB);  // the last quarter of the LUN

  // The review's 8K 70/30 sweep (issue 13): 16 points, T x Q from 2T2Q to 16T16Q, every job
  // over the four LUNs.
  const FioJobFile sweep = parse_job_ok(files.at("workloads/ise860-8k-7030-sweep.fio"));
  CHECK(sweep.group_count() == 1 + 16);
  const FioJob& first = sweep.jobs[4];
  CHECK(first.name == "2t2q");
  CHECK(first.numjobs == 2);
  CHECK(first.iodepth == 2);
  CHECK(first.filenames.size() == 4);
  CHECK(first.rwmix_read_percent == 70);
  const FioJob& last = sweep.jobs.back();
  CHECK(last.name == "16t16q");
  CHECK(last.numjobs == 16);
  CHECK(last.iodepth == 16);
  const FioJobFile seq8 = parse_job_ok(files.at("workloads/ise860-8k-seq.fio"));
  CHECK(seq8.group_count() == 3);
  CHECK(seq8.jobs[4].rw == RwPattern::kRead);
  CHECK(seq8.jobs[4].bs[0].min_bytes == 8192);
  CHECK(seq8.jobs[8].rw == RwPattern::kWrite);
}

TEST_CASE(
    "[global] is inherited, a job overrides it, and a later [global] only affects later jobs") {
  const FioJobFile f = parse_job_ok(R"(; comment
# another comment
[global]
rw=randread
bs=8k
size=1g
iodepth=4   ; an inline comment, as fio's strip_blank_end cuts it

[first]
iodepth=32

[global]
bs=64k

[second]
rw=write
)");
  REQUIRE(f.jobs.size() == 2);
  const FioJob& a = f.jobs[0];
  const FioJob& b = f.jobs[1];
  CHECK(a.name == "first");
  CHECK(a.rw == RwPattern::kRandRead);
  CHECK(a.bs[0].min_bytes == 8 * sim::kKiB);
  CHECK(a.iodepth == 32);
  CHECK(a.size_bytes == sim::kGiB);
  CHECK(b.rw == RwPattern::kWrite);
  CHECK(b.bs[1].min_bytes == 64 * sim::kKiB);
  CHECK(b.iodepth == 4);
  // The JSON's "job options" are a job's own lines; "global options" are every [global] line.
  REQUIRE(a.options.size() == 1);
  CHECK(a.options[0].name == "iodepth");
  CHECK(a.options[0].value == "32");
  CHECK(a.options[0].line == 10);
  CHECK(f.global_options.size() == 5);
  CHECK(a.line == 9);
  CHECK(a.job_index == 0);
  CHECK(b.job_index == 1);
}

TEST_CASE("fio's defaults apply when nothing is said") {
  const FioJob j = parse_job_ok("[only]\nsize=1m\n").jobs[0];
  CHECK(j.rw == RwPattern::kRead);   // HOWTO rw: "Fio defaults to read"
  CHECK(j.bs[0].min_bytes == 4096);  // HOWTO bs: "Default: 4096"
  CHECK(j.iodepth == 1);             // HOWTO iodepth: "Default: 1"
  CHECK(j.numjobs == 1);
  CHECK(j.rwmix_read_percent == 50);  // HOWTO rwmixread: "Default: 50"
  CHECK(j.loops == 1);
  CHECK(j.runtime_ns == 0);
  CHECK(j.random_map);
  CHECK(j.distribution == RandomDistribution::kUniform);
  CHECK(j.percentile_list == default_percentile_list());
  CHECK(j.volume_name(0) == "only.0.0");  // fio's filename_format $jobname.$jobnum.$filenum
  CHECK(j.io_size_bytes == sim::kMiB);
}

TEST_CASE("sizes follow fio's kb_base rules, as fio 3.33 prints them") {
  // Each value was checked against fio 3.33 (`fio --ioengine=null --bs=VALUE`, the bs=(R)
  // field of its job line): 4k 4kb 4KB 4Ki 0x1000 4096b -> 4096B; 4kib 4KiB -> 4000B;
  // 1m 1mi 1mb -> 1024KiB; 1MiB -> 977KiB (1,000,000 B). HOWTO "int": with the default
  // kb_base=1024, "4k means 4096" and the IEC forms are powers of 1000.
  CHECK(size_of("4k") == 4096);
  CHECK(size_of("4kb") == 4096);
  CHECK(size_of("4KB") == 4096);
  CHECK(size_of("4K") == 4096);
  CHECK(size_of("4Ki") == 4096);
  CHECK(size_of("0x1000") == 4096);
  CHECK(size_of("4096b") == 4096);
  CHECK(size_of("4096B") == 4096);
  CHECK(size_of("4096") == 4096);
  CHECK(size_of("4kib") == 4000);
  CHECK(size_of("4KiB") == 4000);
  CHECK(size_of("1m") == sim::kMiB);
  CHECK(size_of("1mi") == sim::kMiB);
  CHECK(size_of("1mb") == sim::kMiB);
  CHECK(size_of("1MiB") == 1'000'000);
  CHECK(size_of("1g") == sim::kGiB);
  CHECK(size_of("1t") == 1024 * sim::kGiB);
  CHECK(size_of("1p") == 1024 * 1024 * sim::kGiB);
  CHECK(size_of("1tib") == 1'000'000'000'000);
  // HOWTO "int", kb_base=1000: 4k is 4000, 4KiB is 4096, 1 MB is 1m.
  CHECK(size_of("4k", 1000) == 4000);
  CHECK(size_of("4kib", 1000) == 4096);
  CHECK(size_of("1m", 1000) == 1'000'000);
  CHECK(size_of("1gib", 1000) == sim::kGiB);

  // Fractions are read as written (issue 16): 1.5k is 1536 bytes, rounded down to a byte.
  CHECK(size_of("1.5k", 1024) == 1536);
  CHECK(size_of("1.5g", 1024) == sim::kGiB + sim::kGiB / 2);
  CHECK(size_of("0.1k", 1000) == 100);
  CHECK(size_of("0.001k", 1024) == 1);  // 1.024 bytes
  // What fio would silently misread is refused: fio 3.33 reads 4q as 4, 4kx and 4k5 as 4096,
  // -4k as 16 EiB.
  for (const char* bad :
       {"1.k", "4q", "4kx", "4k5", "-4k", "+4k", "", "k", "0x10k", "4 k", "(1+2)", "${SIZE}",
        "$mb_memory", "2e3", "99999999999999999999", "2000p"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_fio_size(bad, 1024).is_ok());
  }
  CHECK(parse_fio_size("4q", 1024).status().message() ==
        "\"4q\" is not a size (units: k m g t p, ki mi gi ti pi, optional B)");
  CHECK(parse_fio_size("2000p", 1024).status().message() == "\"2000p\" is larger than 1 EiB");

  auto pct = parse_fio_size_or_percent("25%", 1024);
  REQUIRE(pct.is_ok());
  CHECK(pct->is_percent);
  CHECK(pct->percent == 25);
  CHECK_FALSE(parse_fio_size_or_percent("0%", 1024).is_ok());  // HOWTO: "between 1 and 100"
  CHECK_FALSE(parse_fio_size_or_percent("101%", 1024).is_ok());
}

TEST_CASE("times follow fio's units: seconds by default, m is minutes") {
  // HOWTO "time" and parse.c get_mult_time: d h m s ms/msec us/usec, no unit = seconds for
  // runtime. Checked with fio 3.33: runtime=1500ms ran 1500 ms, 900000us 900 ms.
  auto t = [](std::string_view text) {
    auto r = parse_fio_time(text, sim::kSecond);
    REQUIRE_MESSAGE(r.is_ok(), r.status().message());
    return *r;
  };
  CHECK(t("1") == sim::kSecond);
  CHECK(t("1s") == sim::kSecond);
  CHECK(t("1500ms") == 1500 * sim::kMillisecond);
  CHECK(t("1500msec") == 1500 * sim::kMillisecond);
  CHECK(t("900000us") == 900 * sim::kMillisecond);
  CHECK(t("1000000usec") == sim::kSecond);
  CHECK(t("2m") == 2 * sim::kMinute);
  CHECK(t("2M") == 2 * sim::kMinute);
  CHECK(t("1h") == sim::kHour);
  CHECK(t("1d") == sim::kDay);
  // fio 3.33 ran runtime=2sec for 2 microseconds (its unit table has no "sec"): refused.
  CHECK(parse_fio_time("2sec", sim::kSecond).status().message() ==
        "\"2sec\": fio 3.33 reads the unit \"sec\" as microseconds; write s");
  // fio drops a fraction: the message gives the same time in a smaller unit (hostile round
  // 13: it always said "e.g. 1500ms", 1,000 times too long for 1.5ms).
  const std::string whole = " is not a whole number (fio would drop the fraction); ";
  CHECK(parse_fio_time("1.5ms", sim::kSecond).status().message() == "\"1.5ms\"" + whole + "write 1500us");
  CHECK(parse_fio_time("1.5m", sim::kSecond).status().message() == "\"1.5m\"" + whole + "write 90s");
  CHECK(parse_fio_time("1.5", sim::kSecond).status().message() == "\"1.5\"" + whole + "write 1500ms");
  CHECK(parse_fio_time("1.5us", sim::kSecond).status().message() == "\"1.5us\"" + whole + "times are whole microseconds");
  for (const char* bad : {"1.5s", "10x", "-1", "", "s", "1 s", "(10)", "3651d", "1.5.5s", "9e99d"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_fio_time(bad, sim::kSecond).is_ok());
  }
}

TEST_CASE("bs, rate and rate_iops take fio's read,write form") {
  // HOWTO blocksize: "bs=8k,32k means 8k for reads, 32k for writes"; "bs=,8k" leaves reads
  // at their default; rate: "rate=,500k" caps writes only.
  const FioJobFile f = parse_job_ok(R"([a]
size=1g
bs=8k,32k
rate_iops=100,50
[b]
size=1g
bs=,8k
rate=,500k
[c]
size=1g
bs=16k,
rate=1m,
)");
  CHECK(f.jobs[0].bs[0].min_bytes == 8 * sim::kKiB);
  CHECK(f.jobs[0].bs[1].min_bytes == 32 * sim::kKiB);
  CHECK(f.jobs[0].rate_iops == std::array<std::int64_t, 3>{100, 50, 50});
  CHECK(f.jobs[1].bs[0].min_bytes == 4096);
  CHECK(f.jobs[1].bs[1].min_bytes == 8 * sim::kKiB);
  CHECK(f.jobs[1].rate_bytes_per_second == std::array<std::int64_t, 3>{0, 500 * sim::kKiB, 500 * sim::kKiB});
  CHECK(f.jobs[2].bs[0].min_bytes == 16 * sim::kKiB);
  CHECK(f.jobs[2].bs[1].min_bytes == 4096);
  CHECK(f.jobs[2].rate_bytes_per_second == std::array<std::int64_t, 3>{sim::kMiB, 0, 0});
}

TEST_CASE("bssplit and blocksize_range follow fio's syntax") {
  auto split_of = [](std::string_view value, int d = 0) {
    const FioJobFile f = parse_job_ok("[j]\nsize=1g\nrw=randrw\nbssplit=" + std::string(value) + "\n");
    return f.jobs[0].bs[d];
  };
  // HOWTO bssplit: "4k/50:1k/:32k/ would have 50% 4k ios, and 25% 1k and 32k ios".
  BlockSizeSpec s = split_of("4k/50:1k/:32k/");
  CHECK(s.min_bytes == 1024);
  CHECK(s.max_bytes == 32 * sim::kKiB);
  int pct_4k = 0, pct_1k = 0, pct_32k = 0;
  for (const auto& share : s.split) {
    if (share.size_bytes == 4096) pct_4k = share.percent;
    if (share.size_bytes == 1024) pct_1k = share.percent;
    if (share.size_bytes == 32 * sim::kKiB) pct_32k = share.percent;
  }
  CHECK(pct_4k == 50);
  CHECK(pct_1k == 25);
  CHECK(pct_32k == 25);
  // Three blanks share 100 as 34/33/33 (fio: 33 each and the last entry takes the rest).
  int total = 0;
  for (const auto& share : split_of("4k/:8k/:16k/").split) total += share.percent;
  CHECK(total == 100);
  // HOWTO: "bssplit=2k/50:4k/50,4k/90:8k/10": reads 2k/4k, writes 4k/8k.
  CHECK(split_of("2k/50:4k/50,4k/90:8k/10", 0).max_bytes == 4096);
  CHECK(split_of("2k/50:4k/50,4k/90:8k/10", 1).max_bytes == 8192);
  CHECK(split_of("2k/50:4k/50,4k/90:8k/10", 1).split.size() == 2);

  // One I/O is at most 1 GiB, whichever form names it (hostile round 23: bs=1t took 3.7 GB).
  for (const std::string bs : {"bs=1t", "bssplit=4k/50:2g/50", "bsrange=4k-2g"}) {
    auto big = parse_fio_job_file("[j]\nsize=4t\nrw=randwrite\n" + bs + "\n", "t.fio");
    REQUIRE_FALSE(big.is_ok());
    const std::string option = bs.substr(0, bs.find('='));  // the line and option that set it
    CHECK(big.status().message().rfind("t.fio:4: " + option + ": the largest write block size (", 0) == 0);
    CHECK(big.status().message().find("is above afasim's largest I/O, 1 GiB (1073741824 bytes)") != std::string::npos);
  }
  CHECK(parse_job_ok("[j]\nsize=4t\nrw=randwrite\nbs=1g\n").jobs[0].bs[1].max_bytes == sim::kGiB);
  const FioJobFile r = parse_job_ok("[j]\nsize=1g\nbsrange=16k-4k\nbs_unaligned\n");
  CHECK(r.jobs[0].bs[0].min_bytes == 4096);  // HOWTO irange: "the two values are swapped"
  CHECK(r.jobs[0].bs[0].max_bytes == 16 * sim::kKiB);
  CHECK(r.jobs[0].bs[0].unaligned);
  CHECK(r.jobs[0].min_block_bytes() == 4096);
}

TEST_CASE("rw takes fio's :N modifier, rwmixread/rwmixwrite the later of the two") {
  const FioJobFile f = parse_job_ok(R"([a]
size=1g
rw=randread:8
[b]
size=1g
readwrite=write:4k
[c]
size=1g
rw=randrw
rwmixread=80
rwmixwrite=40
[d]
size=1g
rw=rw
rwmixwrite=40
rwmixread=80
)");
  CHECK(f.jobs[0].rw_sequential_ios == 8);  // HOWTO rw: a new random offset every 8 I/Os
  CHECK(f.jobs[1].rw_skip_bytes == 4096);   // HOWTO rw: "rw=write:4k will skip 4k"
  CHECK(f.jobs[1].rw == RwPattern::kWrite);
  CHECK(f.jobs[2].rwmix_read_percent == 60);  // HOWTO rwmixwrite: "the latter ... will be used"
  CHECK(f.jobs[3].rwmix_read_percent == 80);
}

TEST_CASE("random_distribution: zipf, pareto, defaults and center") {
  const FioJobFile f = parse_job_ok(R"([global]
size=1g
rw=randread
[a]
random_distribution=zipf:1.2
[b]
random_distribution=zipf
[c]
random_distribution=pareto:0.3:0.25
[d]
random_distribution=pareto
[e]
random_distribution=random
)");
  CHECK(f.jobs[0].distribution == RandomDistribution::kZipf);
  CHECK(f.jobs[0].zipf_theta == 1.2);
  CHECK_FALSE(f.jobs[0].distribution_center.has_value());
  CHECK(f.jobs[1].zipf_theta == 1.1);  // fio.h FIO_DEF_ZIPF
  CHECK(f.jobs[2].distribution == RandomDistribution::kPareto);
  CHECK(f.jobs[2].pareto_h == 0.3);
  CHECK(f.jobs[2].distribution_center == 0.25);
  CHECK(f.jobs[3].pareto_h == 0.2);  // fio.h FIO_DEF_PARETO
  CHECK(f.jobs[4].distribution == RandomDistribution::kUniform);
  // A skew on a sequential job does nothing in fio either: a warning, not an error.
  const FioJobFile w = parse_job_ok("[s]\nsize=1g\nrw=read\nrandom_distribution=zipf:1.2\n", "w.fio");
  REQUIRE(w.warnings.size() == 1);
  CHECK(w.warnings[0] ==
        "w.fio:4: random_distribution: no effect on sequential rw=read (job \"s\")");
}

TEST_CASE("stonewall and new_group start reporting groups as fio's add_job does") {
  const FioJobFile f = parse_job_ok(R"([global]
size=1g
[a]
stonewall
[b]
[c]
stonewall
[d]
new_group
[e]
wait_for=a
)");
  // A stonewall on the first job starts nothing (no jobs before it).
  CHECK(f.jobs[0].group_id == 0);
  CHECK(f.jobs[1].group_id == 0);
  CHECK(f.jobs[2].group_id == 1);
  CHECK(f.jobs[3].group_id == 2);
  CHECK(f.jobs[4].group_id == 2);
  CHECK(f.jobs[4].wait_for == "a");
  CHECK(f.group_count() == 3);
  // stonewall in [global] applies to every job: one group each.
  CHECK(parse_job_ok("[global]\nsize=1g\nstonewall\n[a]\n[b]\n[c]\n").group_count() == 3);
}

TEST_CASE("a percentage region past the volume's end is cut to what follows its offset, as fio 3.33 cuts it") {
  // The review of round 25: refusing it refused jobs fio runs (exit 0).
  const FioJobFile f = parse_job_ok("[a]\nfilename=v\nsize=1000m\n[j]\nfilename=v\noffset=10%\nsize=100%\n");
  REQUIRE(f.jobs.size() == 2);
  CHECK(f.jobs[1].offset_bytes == 100 * sim::kMiB);
  CHECK(f.jobs[1].size_bytes == 900 * sim::kMiB);
}

TEST_CASE("volumes are sized from the jobs' size and offset; percentages are of that size") {
  const FioJobFile f = parse_job_ok(R"([big]
filename=vol
size=100g
offset=28g
[half]
filename=vol
size=50%
[tail]
filename=vol
offset=75%
[parts]
size=10g
offset_increment=10g
numjobs=3
filename=other
[private]
size=1g
numjobs=2
)");
  REQUIRE(f.volumes.size() == 4);
  CHECK(f.volumes[0].name == "vol");
  CHECK(f.volumes[0].size_bytes == 128 * sim::kGiB);  // 28g + 100g
  CHECK(f.volumes[1].name == "other");
  CHECK(f.volumes[1].size_bytes == 30 * sim::kGiB);  // 2 × 10g + 10g
  CHECK(f.volumes[2].name == "private.0.0");    // no filename: one volume per clone, as fio
  CHECK(f.volumes[3].name == "private.1.0");
  CHECK(f.jobs[1].size_bytes == 64 * sim::kGiB);    // 50 % of 128 GiB
  CHECK(f.jobs[2].offset_bytes == 96 * sim::kGiB);  // 75 %; no size: to the end of the volume
  CHECK(f.jobs[2].size_bytes == 32 * sim::kGiB);
  CHECK(f.jobs[3].region_offset_bytes(2) == 20 * sim::kGiB);
  CHECK(f.jobs[4].volume_name(1) == "private.1.0");
}

TEST_CASE("on a bare device every filename is the whole device, as fio sees a block device") {
  // Hostile round 13: a job's size=1g made "the device" 3 GiB for the others' size=50%.
  const std::string text = "[whole]\nfilename=dev\nrw=randread\n[half]\nfilename=dev\nsize=50%\n"
                           "[part]\nfilename=dev\nsize=1g\noffset=2g\n[tail]\nfilename=dev\nsize=1m\noffset=50%\n";
  FioParseOptions device;
  device.device_bytes = std::int64_t{3'200'000'000'000};  // memblaze-pblaze5-916-aic-3200gb
  auto f = parse_fio_job_file(text, "dev.fio", device);
  REQUIRE_MESSAGE(f.is_ok(), f.status().message());
  REQUIRE(f->volumes.size() == 1);
  CHECK(f->volumes[0].size_bytes == std::int64_t{3'200'000'000'000});
  CHECK(f->jobs[0].size_bytes == std::int64_t{3'200'000'000'000});  // no size=: all of it
  CHECK(f->jobs[1].size_bytes == std::int64_t{1'600'000'000'000});  // 50 % of the device
  CHECK(f->jobs[2].size_bytes == sim::kGiB);
  CHECK(f->jobs[3].offset_bytes == std::int64_t{1'600'000'000'000});
  // A region past the device's end is an error.
  auto past = parse_fio_job_file("[p]\nfilename=dev\nsize=4t\n", "dev.fio", device);
  REQUIRE_FALSE(past.is_ok());
  // On a device there is no volume to name (hostile round 21 had "volume \"t.0.0\"").
  CHECK(past.status().message() ==
        "dev.fio:3: size: clone 0: offset + size runs past the end of the device (3200000000000 bytes)");
  auto beyond = parse_fio_job_file("[p]\nfilename=dev\nsize=1g\noffset=4t\n", "dev.fio", device);
  REQUIRE_FALSE(beyond.is_ok());
  CHECK(beyond.status().message() ==
        "dev.fio:4: offset: clone 0 starts at or past the end of the device (3200000000000 bytes)");
  // On an array the volume's size must come from a job.
  auto array = parse_fio_job_file("[whole]\nfilename=dev\n", "dev.fio");
  REQUIRE_FALSE(array.is_ok());
  CHECK(array.status().message().find("needs size=") != std::string::npos);
  // The command line: a job with no size= runs on the device, and is refused on an array.
  const auto on_device = run_cli("fio --quiet --device memblaze-pblaze5-916-aic-3200gb --output-format json "
                                 "--name=r --rw=randread --bs=4k --runtime=20ms --time_based");
  INFO(on_device.err);
  CHECK(on_device.exit_code == 0);
  CHECK(on_device.out.find("\"device\": \"memblaze-pblaze5-916-aic-3200gb\"") != std::string::npos);
  CHECK(run_cli("fio --quiet --name=r --rw=randread --bs=4k --runtime=20ms --time_based").exit_code == 2);
  // Hostile round 13: --filename=x#y ran on volume "x" (the value cut at the comment).
  const auto hash = run_cli("fio --quiet --name=r --filename=x#y --size=1m");
  CHECK(hash.exit_code == 2);
  CHECK(hash.err == "afasim fio: \"--filename=x#y\": a value with ';' or '#' is not taken on the command line "
                    "(command-line jobs become job-file lines, where they start a comment)\n");
  // Options with no --name= beside a job file changed nothing (fio 3.33 takes them as
  // defaults the file's own settings override, silently): refused, naming fio's rule; an
  // unknown option is still named as such first.
  const char* source = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const std::string shipped = std::string(source) + "/config/workloads/ise860-4k-randread.fio";
  for (const std::string& args : {"fio --quiet " + shipped + " --runtime=10s", "fio --quiet --runtime=10s " + shipped}) {
    const auto trailing = run_cli(args);
    CHECK(trailing.exit_code == 2);
    CHECK(trailing.err.find("afasim fio: \"--runtime=10s\": options before any --name= are taken by fio as defaults "
                            "that a job file's own settings override; afasim does not merge them into job files") == 0);
  }
  const auto unknown = run_cli("fio --quiet " + shipped + " --no-such-option");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("no-such-option: unknown option") != std::string::npos);
  CHECK(unknown.err.find("options before any --name=") == std::string::npos);
  // The host queue model holds every command in flight: 17 x 65,536 is refused before the run.
  const auto deep = run_cli("fio --quiet --device memblaze-pblaze5-916-aic-3200gb --name=r --rw=randread "
                            "--iodepth=65536 --numjobs=17 --runtime=1ms --time_based");
  CHECK(deep.exit_code == 2);
  CHECK(deep.err.find("iodepth: the jobs running with [r] keep 1114112 I/Os in flight (numjobs x iodepth); "
                      "a bare device takes at most 1048576") != std::string::npos);
  // On the array too (hostile round 15: 4,096 x 65,536 grew past 9 GB with no output).
  const auto deep_array = run_cli("fio --quiet --name=r --rw=randread --size=1g --iodepth=65536 --numjobs=4096 "
                                  "--runtime=1ms --time_based");
  CHECK(deep_array.exit_code == 2);
  CHECK(deep_array.err.find("keep 268435456 I/Os in flight (numjobs x iodepth); the array takes at most 1048576") !=
        std::string::npos);
}

TEST_CASE("host-side options are accepted and listed as ignored, with their reason") {
  const FioJobFile f = parse_job_ok(R"([global]
ioengine=libaio
direct=1
thread
[j]
size=1g
norandommap
invalidate=1
verify=0
io_size=4KiB
)",
                                "ig.fio");
  REQUIRE(f.ignored.size() == 5);
  CHECK(f.ignored[0].section == "global");
  CHECK(f.ignored[0].option.name == "ioengine");
  CHECK(f.ignored[0].option.value == "libaio");
  CHECK(f.ignored[0].option.line == 2);
  CHECK(f.ignored[0].reason == "afasim is the I/O engine");
  CHECK(f.ignored[2].option.name == "thread");
  CHECK_FALSE(f.ignored[2].option.has_value);
  CHECK(f.ignored[3].section == "j");
  CHECK(f.ignored[3].option.name == "invalidate");
  CHECK(f.ignored[4].option.name == "verify");
  CHECK_FALSE(f.jobs[0].random_map);  // norandommap is simulated, not ignored
  // Legal but surprising: fio reads 4KiB as 4000 bytes under kb_base=1024.
  // (As bs= it is refused: 4000 is not a whole number of 512-byte sectors.)
  CHECK(f.jobs[0].io_size_bytes == 4000);
  REQUIRE(f.warnings.size() == 1);
  CHECK(f.warnings[0].rfind("ig.fio:10: io_size: \"4KiB\" is 4000 bytes", 0) == 0);
  // The io_uring engine's tuning and the host's identity (fio review 32: "hipri: unknown option"
  // though ioengine=io_uring was taken).
  const FioJobFile u = parse_job_ok("[j]\nsize=1g\nioengine=io_uring\nhipri\nfixedbufs\nregisterfiles\nsqthread_poll=1\n"
                                    "cgroup=fio\nuid=1000\nthinktime_blocks_type=complete\n",
                                    "u.fio");
  REQUIRE(u.ignored.size() == 7);
  CHECK(u.ignored[1].option.name == "hipri");
  CHECK(u.ignored[1].reason == "afasim is the I/O engine");
  CHECK(u.ignored[5].option.name == "cgroup");
}

TEST_CASE("bad and unsupported job files give FILE:LINE: OPTION: what is wrong") {
  struct Case {
    const char* text;
    const char* message;  // the start of the expected message
  };
  const Case cases[] = {
      {"[j]\nsize=1g\nbs=4q\n", "bad.fio:3: bs: \"4q\" is not a size"},
      // Hostile finding 10: byte-granular I/O, which fio with direct I/O gets EINVAL for.
      {"[j]\nsize=1g\nbs=3\n",
       "bad.fio:3: bs: \"3\" is 3 bytes, not a multiple of 512 (the logical block; fio on a block "
       "device with direct I/O gets EINVAL)"},
      {"[j]\nsize=1g\nbs=1\n",
       "bad.fio:3: bs: \"1\" is 1 byte, not a multiple of 512"},  // was "1 bytes"
      {"[j]\nsize=1g\nbs=4k,4KiB\n",
       "bad.fio:3: bs: \"4KiB\" is 4000 bytes, not a multiple of 512"},
      {"[j]\nsize=1g\nbsrange=512-1000\n",
       "bad.fio:3: bsrange: \"1000\" is 1000 bytes, not a multiple of 512"},
      {"[j]\nsize=1g\nbssplit=4k/50:700/50\n",
       "bad.fio:3: bssplit: \"700\" is 700 bytes, not a multiple of 512"},
      {"[j]\nsize=1g\noffset=100\n",
       "bad.fio:3: offset: \"100\" is 100 bytes, not a multiple of 512"},
      {"[j]\nsize=1g\nnumjobs=2\noffset_increment=1000\n",
       "bad.fio:4: offset_increment: \"1000\" is 1000 bytes, not a multiple of 512"},
      {"[j]\nsize=1g\nrw=randomread\n", "bad.fio:3: rw: \"randomread\" is not one of read,"},
      {"[j]\nsize=1g\nbogus=1\n", "bad.fio:3: bogus: unknown option"},
      {"size=1g\n[j]\n", "bad.fio:1: size: option outside of a [section]"},
      {"[j]\nrw=read\n", "bad.fio:1: size: missing: job \"j\" on volume \"j.0.0\" needs size="},
      {"[j]\nsize=1g\niodepth=0\n", "bad.fio:3: iodepth: \"0\" is out of range 1..65536"},
      {"[j]\nsize=1g\nrwmixread=101\n", "bad.fio:3: rwmixread: \"101\" is out of range 0..100"},
      {"[j]\nsize=1g\nthinktime_iotime=10\n",
       "bad.fio:3: thinktime_iotime: not supported by afasim: think time follows thinktime_blocks, not I/O time"},
      // fio review 32: messages that contradicted what afasim simulates.
      {"[j]\nsize=1g\nthinktime=1ms\nthinktime_blocks_type=issue\n",
       "bad.fio:4: thinktime_blocks_type: \"issue\" is not simulated: afasim drains the queue before each pause"},
      {"[j]\nsize=1g\nthinktime_blocks_type=often\n", "bad.fio:3: thinktime_blocks_type: \"often\" is not complete or issue"},
      {"[j]\nsize=1g\ntrim_percentage=10\n",
       "bad.fio:3: trim_percentage: not supported by afasim: verify's trim phase is not simulated (rw=trim, randtrim "
       "and trimwrite trim through the array)"},
      {"[j]\nsize=1g\nwrite_barrier=1\n",
       "bad.fio:3: write_barrier: not supported by afasim: barrier writes are not simulated (fsync= and fdatasync= flush)"},
      {"[j]\nsize=1g\nzonemode=strided\n",
       "bad.fio:3: zonemode: not supported by afasim: neither strided zones nor zoned block devices are simulated"},
      {"[j]\nsize=1g\nnumber_ios=-1\n", "bad.fio:3: number_ios: \"-1\""},
      {"[j]\nsize=1g\nrw=randread\nrandom_distribution=zoned:50/50:50/50,\n",
       "bad.fio:4: random_distribution: \"zoned:50/50:50/50,\": a ',' with no zones after it"},
      {"[j]\nsize=1g\nruntime=2sec\n", "bad.fio:3: runtime: \"2sec\": fio 3.33 reads"},
      // fio's own examples (examples/*.fio): what afasim cannot run says why, as fio 3.33 names it.
      {"[j]\nsize=1g\nioengine=libaio\nport=8888\n",
       "bad.fio:4: port: not supported by afasim: an option of another fio I/O engine; afasim is the engine"},
      // An engine that does no block I/O, or none of fio's (hostile review 43: both ran block I/O).
      {"[j]\nsize=1g\nioengine=net\nport=8888\n",
       "bad.fio:3: ioengine: \"net\" does no block I/O to a device; afasim simulates block I/O to volumes"},
      {"[j]\nsize=1g\nioengine=cpuio\n", "bad.fio:3: ioengine: \"cpuio\" does no block I/O to a device"},
      {"[j]\nsize=1g\nioengine=libaoi\n", "bad.fio:3: ioengine: \"libaoi\" is not an I/O engine of fio 3.33"},
      {"[j]\nsize=1g\nioengine=external:/tmp/x.so\n",
       "bad.fio:3: ioengine: \"external:/tmp/x.so\": an external engine's library cannot run in afasim"},
      {"[j]\nsize=1g\nlog_prio=1\n", "bad.fio:3: log_prio: not supported by afasim: I/O priorities are not simulated"},
      {"[j]\nsize=1g\nmax_open_zones=4\n", "bad.fio:3: max_open_zones: not supported by afasim: zoned block"},
      {"[j]\nsize=1g\nnot_a_fio_option=1\n", "bad.fio:3: not_a_fio_option: unknown option"},
      // fio td_steadystate_init: "steadystate options must be consistent within reporting groups".
      {"[a]\nsize=1m\nss=iops:1%\nss_dur=5\n[b]\nsize=1m\n",
       "bad.fio:5: job \"b\": steadystate options differ from job \"a\"'s in its reporting group"},
      {"[a]\nsize=1m\nss=lat:1%\n", "bad.fio:3: ss: \"lat\" is not iops, iops_slope, bw or bw_slope"},
      {"[a]\nsize=1m\nss_dur=500ms\n", "bad.fio:3: ss_dur: 0 (off) or at least 1 s"},
      {"[a]\nsize=1m\nss_ramp=-5\n", "bad.fio:3: ss_ramp: \"-5\""},
      {"[a]\nsize=1m\nss=iops:ten%\n", "bad.fio:3: ss: \"ten\" is not a limit >= 0"},
      {"[j]\nsize=1g\nrw=randread:-8k\n", "bad.fio:3: rw: \"-8k\" is not a count of I/Os"},
      {"[j]\nsize=64k\nrw=read:-64k\n", "bad.fio:3: rw: a step back of 65536 bytes and a block of 4096 bytes do not fit the region"},
      {"[j]\nfilesize=1m-2m\n", "bad.fio:2: filesize: \"1m-2m\": a range of file sizes is not simulated"},
      {"[j]\nrw=read\nfilesize=1k\n", "bad.fio:3: filesize: the region (1024 bytes) is smaller than the largest read block size"},
      {"[j]\nfilesize=100%\n", "bad.fio:2: filesize: \"100%\": a file's size in bytes, not a percentage"},
      {"[j]\nfilesize=1m\noffset=1m\n", "bad.fio:2: filesize: offset= is at or past the end of each file"},
      {"[j]\nsize=1m\nrw=read:1000\n", "bad.fio:3: rw: \"1000\" is 1000 bytes, not a multiple of 512"},
      {"[j]\nsize=1m\nrw=read:-1\n", "bad.fio:3: rw: \"1\" is 1 byte, not a multiple of 512"},
      {"[j]\nsize=1m\nss_dur=1500ms\n", "bad.fio:3: ss_dur: whole seconds (fio samples once a second)"},
      {"[j]\nfilesize=1m\nsize=50%\n", "bad.fio:2: filesize: with a percentage size="},
      {"[j]\nfilesize=1000\n", "bad.fio:2: filesize: \"1000\" is 1000 bytes"},
      {"[j]\nrw=write\nfill_device=1\n", "bad.fio:1: size: missing: job \"j\" on volume \"j.0.0\" needs size= "
                                          "(afasim sizes each volume from its jobs' size=), or a size for such "
                                          "volumes: afasim fio --volume-size, or the volume declared in a scenario's volumes"},
      {"[j]\nsize=1g\nrandom_distribution=zoned:50/100:50/\n",
       "bad.fio:3: random_distribution: \"50/100:50/\": the zones with a size leave 0 % for 1 without one"},
      {"[j]\nsize=1g\nrandom_distribution=zoned:50/60:50/50\n",
       "bad.fio:3: random_distribution: \"50/60:50/50\": size percentages add up to more than 100"},
      {"[j]\nsize=1g\nbssplit=4k/60:8k/60\n",
       "bad.fio:3: bssplit: \"4k/60:8k/60\": percentages add up to 120, more than 100"},
      {"[j]\nsize=1g\nbssplit=4k/30:8k/30\n",
       "bad.fio:3: bssplit: \"4k/30:8k/30\": percentages add up to 60, not 100"},
      {"[j]\nsize=1g\nrw=randread\nrandom_distribution=zipf:1\n",
       "bad.fio:4: random_distribution: \"zipf:1\": zipf theta is out of range (expected > 0, not "
       "1, at most 100)"},
      // Hostile finding 25: a number out of range says so, not "not a number".
      {"[j]\nsize=1g\nrandom_distribution=zipf:1e308\n",
       "bad.fio:3: random_distribution: \"zipf:1e308\": zipf theta is out of range (expected > 0, "
       "not 1, at most 100)"},
      {"[j]\nsize=1g\nrandom_distribution=zipf:1e999\n",
       "bad.fio:3: random_distribution: \"zipf:1e999\": zipf theta is out of range"},
      {"[j]\nsize=1g\nrandom_distribution=pareto:-1\n",
       "bad.fio:3: random_distribution: \"pareto:-1\": pareto h is out of range (expected between "
       "0 and 1)"},
      {"[j]\nsize=1g\nrandom_distribution=pareto:x\n",
       "bad.fio:3: random_distribution: \"x\" is not a number"},
      // A log's name or path prefix, as fio takes it, but not a folder.
      {"[j]\nsize=1g\nwrite_lat_log=/tmp/x/\n",
       "bad.fio:3: write_lat_log: \"/tmp/x/\": a log file's name or path prefix (results/db gives "
       "results/db_lat.1.log), not a folder"},
      {"[j]\nsize=1g\nrandom_distribution=pareto:1.5\n",
       "bad.fio:3: random_distribution: \"pareto:1.5\": pareto h is out of range (expected between "
       "0 and 1)"},
      {"[j]\nsize=1g\nrandom_distribution=normal\n",
       "bad.fio:3: random_distribution: \"normal\": normal needs a deviation (normal:DEV)"},
      {"[j]\nsize=1g\nrandom_distribution=zoned:60/10:30/90\n",
       "bad.fio:3: random_distribution: \"60/10:30/90\": access percentages add up to 90"},
      {"[j]\nsize=1g\nwait_for=nobody\n", "bad.fio:3: wait_for: no job named \"nobody\""},
      {"[a]\nsize=1g\nwait_for=b\n[b]\nsize=1g\n",
       "bad.fio:3: wait_for: job \"b\" comes later in the file"},
      {"[j\nsize=1g\n", "bad.fio:1: section header without ']'"},
      {"[]\n", "bad.fio:1: empty section name"},
      {"[j]\nsize=1g\nfilename=a::b\n", "bad.fio:3: filename: \"a::b\": an empty file name"},
      {"[j]\nsize=1g\nrw=trim\nverify=md5\n",
       "bad.fio:4: verify: verification of trimmed blocks is not simulated"},
      {"[j]\nsize=1g\nbs = 8k\n", "bad.fio:3: bs: blank after '='"},
      {"[global]\nsize=1g\n", "bad.fio: no job sections"},
      {"[j]\nsize=4k\nbs=8k\n",
       "bad.fio:2: size: the region (4096 bytes) is smaller than the largest read block size"},
      {"[j]\nsize=50%\n", "bad.fio:2: size: a percentage needs the size of volume \"j.0.0\""},
      // Without the host's env and include readers (a scenario's jobs; hostile round 15: an
      // unset-variable message for a variable that was set).
      {"[j]\nsize=1g\ninclude more.fio\n", "bad.fio:3: include: include files are not read here (a scenario's"},
      {"[j]\nsize=1g\nverify=crc33\n", "bad.fio:3: verify: \"crc33\" is not a verify method"},
      {"[j]\nsize=1g\nnumjobs=5000\n", "bad.fio:3: numjobs: \"5000\" is out of range 1..4096"},
      {"[j]\nsize=1g\niodepth=1.5\n", "bad.fio:3: iodepth: \"1.5\" is not a whole number"},
      {"[j]\nsize=${SIZE}\n", "bad.fio:2: ${SIZE}: environment variables are not read here (a scenario's"},
      {"[j]\nsize=1g\nwrite_hist_log=h\n", "bad.fio:3: write_hist_log: needs log_hist_msec="},
      {"[j]\nfilename=a:b\nnrfiles=3\nsize=1g\n",
       "bad.fio:3: nrfiles: nrfiles=3 but filename= names 2 volume(s)"},
      {"[j]\nsize=(1+2)\n", "bad.fio:2: size: \"(1+2)\": arithmetic expressions"},
      {"[j]\nsize=1g\nkb_base=1023\n", "bad.fio:3: kb_base: \"1023\" is not 1000 or 1024"},
      {"[j]\nsize=1g\nexitall\nexit_what=some\n", "bad.fio:4: exit_what: \"some\" is not group, stonewall or all"},
      {"[j]\nsize=1g\nrate=1m\nrate_iops=,100\n",
       "bad.fio:4: rate_iops: rate and rate_iops are mutually exclusive (as in fio)"},
      {"[j]\nsize=1g\nrate_iops=100\nrate_iops_min=200\n",
       "bad.fio:4: rate_iops_min: the minimum read rate exceeds its rate cap"},
      {"[j]\nsize=1g\nrate_process=bursty\n",
       "bad.fio:3: rate_process: \"bursty\" is not linear or poisson"},
      {"[j]\nsize=1g\nbs=4k-8k\n", "bad.fio:3: bs: \"4k-8k\" is a range: use blocksize_range="},
      {"[j]\nsize=1g\nrw\n", "bad.fio:3: rw: needs a value (rw=...)"},
      {"[j]\nsize=1g\ntime_based=yes\nruntime=1\n", "bad.fio:3: time_based: \"yes\" is not 0 or 1"},
      {"[j]\nsize=1g\nnumjobs=4000\n[k]\nsize=1g\nnumjobs=100\n",
       "bad.fio:4: numjobs: more than 4096 jobs in the file"},
      {"[j]\nfilename=v\nsize=1g\n[k]\nfilename=v\nsize=2g\noffset=60%\n",
       "bad.fio:6: size: clone 0: offset + size runs past the end of volume \"v\""},
      {"[j]\nsize=1g\nbs=,\n", "bad.fio:3: bs: empty value"},
      {"[j]\nsize=1g\nrw=randread:0\n", "bad.fio:3: rw: \"0\" is not a count of I/Os"},
      {"[j]\nsize=1g\n=4k\n", "bad.fio:3: '=' without an option name"},
      {"[j]\nsize=1g\nwait_for=j\n", "bad.fio:3: wait_for: a job cannot wait for itself"},
      {"[j]\nsize=1g\npercentile_list=50:101\n",
       "bad.fio:3: percentile_list: \"101\" is not a percentile in (0, 100]"},
      // Hostile round 25: offsets at any byte; every "random" I/O at offset 0.
      {"[j]\nsize=1g\nbs=512\nblockalign=3\n",
       "bad.fio:4: blockalign: \"3\" is 3 bytes, not a multiple of 512"},
      // The random map of mixed sizes keeps a bit per 4 KiB block: 64 TiB is 2 GiB of bits.
      {"[j]\nsize=64t\nrw=randwrite\nbsrange=4k-64k\n",
       "bad.fio:2: size: the random maps of jobs with mixed block sizes keep a bit per smallest block of every "
       "clone's region, as fio's do: more than 1 GiB with job \"j\"; add norandommap"},
      // A verifying job's read-back has a map of its own (review 32): 20 TiB is 640 MiB of bits, twice.
      {"[j]\nsize=20t\nrw=randwrite\nbsrange=4k-64k\nverify=md5\n",
       "bad.fio:2: size: the random maps of jobs with mixed block sizes"},
      {"[j]\nsize=64m\nrw=randread\nblockalign=1g\n",
       "bad.fio:4: blockalign: 1073741824 bytes is larger than the region (67108864 bytes): every read would be "
       "at its start"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const std::string message = parse_error(c.text);
    CHECK_MESSAGE(message.rfind(c.message, 0) == 0, message);
  }
  // A NUL byte and an over-long line are refused, not read past.
  CHECK(parse_error(std::string("[j]\nsize=1g\0\n", 13)).rfind("bad.fio:2: NUL byte", 0) == 0);
  CHECK(parse_error("[j]\nsize=1g\nname=" + std::string(5000, 'x') + "\n")
            .rfind("bad.fio:3: line longer than 4096 bytes", 0) == 0);
}

TEST_CASE("load_fio_job_file reads a file and names a missing one") {
  const char* source = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(source != nullptr);
  auto f = load_fio_job_file(std::string(source) + "/config/workloads/ise860-4k-randread.fio");
  REQUIRE_MESSAGE(f.is_ok(), f.status().message());
  CHECK(f->jobs.size() == 8);  // four fills, four measured jobs
  auto missing = load_fio_job_file("/nonexistent/job.fio");
  CHECK(missing.status().code() == sim::Code::kNotFound);
  CHECK(missing.status().message() == "/nonexistent/job.fio: cannot open the job file (No such file or directory)");
  // A directory is no job file (an ifstream opens one and reads nothing: it was an empty job).
  auto folder = load_fio_job_file(std::string(source) + "/config");
  CHECK(folder.status().code() == sim::Code::kInvalidArgument);
  CHECK(folder.status().message() == "cannot read " + std::string(source) + "/config: a directory");
}

namespace {

// Checks what a successful parse promises; used by the fuzzer on whatever it got through.
void check_resolved(const FioJobFile& f, std::uint64_t seed) {
  REQUIRE_FALSE(f.jobs.empty());
  for (const FioJob& j : f.jobs) {
    REQUIRE(j.size_bytes > 0);
    REQUIRE(j.numjobs >= 1);
    REQUIRE(j.min_block_bytes() > 0);
    REQUIRE(j.min_block_bytes() <= j.size_bytes);
    for (int c = 0; c < j.numjobs && c < 4; ++c) {
      std::int64_t volume_size = -1;
      for (int file = 0; file < j.file_count(); ++file) {
        for (const FioVolume& v : f.volumes) {
          if (v.name == j.volume_name(c, file)) volume_size = v.size_bytes;
        }
        REQUIRE(volume_size >= j.region_offset_bytes(c) + j.size_bytes);
      }
      AccessPattern pattern(j, c, access_pattern_rng(seed, j, c));
      for (int i = 0; i < 50; ++i) {
        const IoUnit io = pattern.next();
        REQUIRE(io.size_bytes > 0);
        REQUIRE(io.offset_bytes >= j.region_offset_bytes(c));
        REQUIRE(io.offset_bytes + io.size_bytes <= j.region_offset_bytes(c) + j.size_bytes);
      }
    }
  }
}

}  // namespace

TEST_CASE("fuzz: random bytes and random option lines never crash the parser") {
  // Vocabulary of real option names and tricky values; lines are drawn from it, from the
  // shipped files, and from raw bytes. Any outcome but a crash, a hang or a malformed error
  // is a bug. A failure prints the seed that replays it.
  const std::vector<std::string> names = {"rw",          "readwrite",
                                          "bs",          "bssplit",
                                          "bsrange",     "size",
                                          "offset",      "offset_increment",
                                          "iodepth",     "numjobs",
                                          "runtime",     "time_based",
                                          "ramp_time",   "rate_iops",
                                          "rate",        "random_distribution",
                                          "rwmixread",   "rwmixwrite",
                                          "filename",    "stonewall",
                                          "new_group",   "group_reporting",
                                          "wait_for",    "loops",
                                          "io_size",     "kb_base",
                                          "ioengine",    "direct",
                                          "norandommap", "percentile_list",
                                          "name",        "startdelay",
                                          "thinktime",   "bogus",
                                          "verify",      "nrfiles",
                                          "file_service_type", "percentage_random",
                                          "blockalign",  "thinktime_blocks",
                                          "rate_iops_min", "rate_cycle",
                                          "fsync",       "fdatasync",
                                          "sync",        "exitall",
                                          "unified_rw_reporting", "significant_figures",
                                          "lat_percentiles", "write_lat_log",
                                          "write_hist_log", "log_avg_msec",
                                          "log_hist_msec", "do_verify",
                                          "include",     "replay_no_stall"};
  const std::vector<std::string> values = {"",
                                           "0",
                                           "1",
                                           "4k",
                                           "8k,16k",
                                           ",4k",
                                           "4k/50:8k/50",
                                           "4k/:8k/",
                                           "1g",
                                           "100%",
                                           "50%",
                                           "randread",
                                           "randrw",
                                           "read:4k",
                                           "randread:3",
                                           "zipf:1.2",
                                           "pareto:0.3:0.5",
                                           "zipf:1",
                                           "10s",
                                           "1m",
                                           "2sec",
                                           "1500ms",
                                           "0x200",
                                           "-1",
                                           "1.5",
                                           "99999999999999999999",
                                           "a",
                                           "j1",
                                           "4k-16k",
                                           "16k:4k",
                                           "linear",
                                           "1000",
                                           "1024",
                                           "50:99:99.9",
                                           "${X}",
                                           "(1+1)",
                                           "v0",
                                           "v1",
                                           "zoned:60/10:40/90",
                                           "zoned_abs:50/1m:50/2m",
                                           "zoned:50/50,100/100",
                                           "normal:10",
                                           "normal:5:0.9",
                                           "a:b",
                                           "/dev/sdb",
                                           "roundrobin:2",
                                           "random",
                                           "mixed",
                                           "1.5g",
                                           "0.5k",
                                           "md5",
                                           "trimwrite",
                                           "randtrim"};
  const auto& files = config::embedded_files();
  const std::string shipped = files.at("workloads/ise860-4k-randwrite.fio");
  std::vector<std::string> shipped_lines;
  for (std::size_t pos = 0; pos < shipped.size();) {
    std::size_t end = shipped.find('\n', pos);
    if (end == std::string::npos) end = shipped.size();
    shipped_lines.push_back(shipped.substr(pos, end - pos));
    pos = end + 1;
  }
  // Lines that are valid on their own, so that half the files reach volumes and groups.
  const std::vector<std::string> valid = {"rw=randrw",
                                          "rw=write",
                                          "rw=read:8k",
                                          "rw=randread:4",
                                          "bs=8k,16k",
                                          "bs=512",
                                          "bssplit=4k/50:64k/",
                                          "bsrange=4k-32k",
                                          "size=32m",
                                          "size=50%",
                                          "offset=10%",
                                          "offset_increment=1m",
                                          "numjobs=3",
                                          "iodepth=32",
                                          "runtime=10s",
                                          "time_based",
                                          "ramp_time=1s",
                                          "rate_iops=100,",
                                          "random_distribution=zipf:0.9",
                                          "random_distribution=pareto:0.3:0.5",
                                          "rwmixwrite=20",
                                          "filename=v1",
                                          "stonewall",
                                          "new_group",
                                          "group_reporting",
                                          "norandommap",
                                          "loops=2",
                                          "kb_base=1000",
                                          "io_size=8m",
                                          "ioengine=libaio",
                                          "direct=1",
                                          "name=renamed",
                                          "percentile_list=50:99.9",
                                          "nrfiles=3",
                                          "filename=a:/dev/b",
                                          "random_distribution=zoned:60/10:40/90",
                                          "random_distribution=zoned_abs:70/1m:30/3m",
                                          "random_distribution=normal:5:0.3",
                                          "percentage_random=50,25",
                                          "blockalign=8k",
                                          "rw=trimwrite",
                                          "rw=randtrim",
                                          "thinktime=10",
                                          "thinktime_blocks=4",
                                          "fsync=3",
                                          "sync=1",
                                          "exitall",
                                          "verify=md5",
                                          "size=1.5m",
                                          "unified_rw_reporting=both",
                                          "file_service_type=random:3"};
  int accepted = 0;
  for (std::uint64_t seed = 1; seed <= 3000; ++seed) {
    CAPTURE(seed);
    sim::Rng rng(seed, "fio-fuzz");
    std::string text;
    const bool structured = seed % 2 == 0;
    const int lines = 1 + static_cast<int>(rng.uniform(30));
    for (int i = 0; i < lines; ++i) {
      if (structured) {
        if (rng.bernoulli(0.15)) {
          text += rng.bernoulli(0.3) ? "[global]" : "[j" + std::to_string(rng.uniform(3)) + "]";
        } else {
          std::string line = valid[rng.uniform(valid.size())];
          if (rng.bernoulli(0.05))
            line[rng.uniform(line.size())] = static_cast<char>(rng.uniform(256));
          text += line;
        }
        text += "\n";
        continue;
      }
      switch (rng.uniform(6)) {
        case 0: {
          const int n = static_cast<int>(rng.uniform(40));
          for (int k = 0; k < n; ++k) text += static_cast<char>(rng.uniform(256));
          break;
        }
        case 1:
          text += rng.bernoulli(0.3) ? "[global]" : "[j" + std::to_string(rng.uniform(3)) + "]";
          break;
        case 2:
          text += shipped_lines[rng.uniform(shipped_lines.size())];
          break;
        default: {
          text += names[rng.uniform(names.size())];
          if (rng.bernoulli(0.9)) text += "=" + values[rng.uniform(values.size())];
          break;
        }
      }
      text += rng.bernoulli(0.05) ? "\r\n" : "\n";
    }
    if (structured)
      text = "[global]\nruntime=5s\nfilename=v1\nsize=64m\n[j]\n" + text;
    else if (rng.bernoulli(0.5))
      text = "[j]\nsize=64m\nfilename=v0\n" + text;
    auto r = parse_fio_job_file(text, "fuzz.fio");
    if (r.is_ok()) {
      ++accepted;
      check_resolved(*r, seed);
    } else {
      REQUIRE(r.status().code() == sim::Code::kInvalidArgument);
      REQUIRE(r.status().message().rfind("fuzz.fio", 0) == 0);
    }
  }
  // The fuzzer reaches the resolver, not only the first syntax check.
  CHECK(accepted > 500);
}

TEST_CASE("a UTF-8 byte-order mark before a job file's first line is skipped (hostile finding 20)") {
  const FioJobFile f = parse_job_ok("\xEF\xBB\xBF[j]\nsize=1m\nfilename=v\n", "bom.fio");
  REQUIRE(f.jobs.size() == 1);
  CHECK(f.jobs[0].name == "j");
  // Through the command line, with a second job file after it (the files are joined).
  const std::string bom = write_temp("bom.fio", "\xEF\xBB\xBF[j]\nsize=1m\nfilename=v\n");
  const std::string other = write_temp("other.fio", "\xEF\xBB\xBF[k]\nsize=1m\nfilename=w\n");
  const auto cli = run_cli("fio --quiet --output-format terse " + bom + " " + other);
  CHECK(cli.exit_code == 0);
  CHECK(cli.err.empty());
}

TEST_CASE("an error about filename= names the filename= line, not the section header (hostile finding 21)") {
  const FioJobFile f = parse_job_ok("[global]\nrw=read\n\n[j]\nsize=1m\nfilename=-x\n[k]\nsize=1m\n", "b.fio");
  REQUIRE(f.volumes.size() == 2);
  CHECK(f.volumes[0].line == 6);  // filename=-x
  CHECK(f.volumes[1].line == 7);  // [k]: no filename=
  const std::string job = write_temp("badname.fio", "[global]\nrw=read\n\n[j]\nsize=1m\nfilename=-x\n");
  const auto cli = run_cli("fio --quiet " + job);
  CHECK(cli.exit_code == 2);
  CHECK(cli.err == "afasim fio: " + job +
                       ":6: filename: cannot create volume \"-x\": volume name must start with an ASCII letter or digit: "
                       "\"-x\"\n");
}

TEST_CASE("two filename= paths that differ but fold to one volume name are refused, naming both") {
  // Hostile round 23: "a/b" and "a-b" are two files to fio, and shared volume "a-b" here
  // without a word (afasim trace refuses the same fold). "/dev/sdb" and "sdb" stay one volume.
  auto folded = parse_fio_job_file("[a]\nfilename=a/b\nsize=1g\n[b]\nfilename=a-b\nsize=2g\n", "m.fio");
  REQUIRE_FALSE(folded.is_ok());
  CHECK(folded.status().message() ==
        "m.fio:5: filename: \"a-b\" and \"a/b\" (m.fio:2) would share volume \"a-b\"; give one another name");
  FioParseOptions device;  // on a bare device every filename is the device: nothing to tell apart
  device.device_bytes = std::int64_t{1} << 40;
  CHECK(parse_fio_job_file("[a]\nfilename=a/b\n[b]\nfilename=a-b\n", "m.fio", device).is_ok());
  const FioJobFile same = parse_job_ok("[c]\nfilename=/dev/sdb\nsize=1g\n[d]\nfilename=sdb:x\nsize=1g\n", "s.fio");
  CHECK(same.volumes.size() == 2);
  CHECK(same.volumes[0].name == "sdb");
}

TEST_CASE("afasim fio --output that cannot be written fails before the run, with the reason (hostile finding 26)") {
  // Ten minutes of four clones: tens of seconds of simulation if the path were tried at the end.
  const auto start = std::chrono::steady_clock::now();
  const auto missing = run_cli("fio --quiet --name=x --filename=v --size=1g --rw=randread --runtime=600s "
                               "--time_based --numjobs=4 --output=/nonexistent/dir/out.txt");
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(missing.exit_code == 1);
  CHECK(missing.err == "afasim fio: --output: cannot write /nonexistent/dir/out.txt: No such file or directory\n");
  CHECK(seconds < 10);
  const std::string dir = (testing::cli_temp_dir() / "out-dir").string();
  std::filesystem::create_directories(dir);
  const auto directory = run_cli("fio --quiet --name=x --filename=v --size=1m --output=" + dir);
  // Bad usage, before the run (re-test of hostile review 43: exit 1, after it).
  CHECK(directory.exit_code == 2);
  CHECK(directory.err == "afasim fio: --output: " + dir + " is a folder, not a file\n");
  // A good path gets the report.
  const std::string good = (testing::cli_temp_dir() / "report.txt").string();
  CHECK(run_cli("fio --quiet --output-format terse --name=x --filename=v --size=1m --output=" + good).exit_code == 0);
  CHECK(testing::slurp(good).rfind("3;", 0) == 0);  // terse version 3
}

TEST_CASE("a measured group whose writes the write cache absorbed says it measured a transient, not the steady state") {
  // One job's 4K random writes on RAID 5 fill controller A's 4 GiB cache for ~12 s before host
  // writes wait for destage (docs/write-cache.md): measured after 1 s every write was
  // absorbed; after 10 s the cache still took 40 % of them; after 20 s it is full and the
  // writes go at the back end's rate. (An 8 s 70/30 run of a new user read 264,858 IOPS on
  // RAID 5 and 266,645 on RAID 10, both above the review's ~230,000.)
  const std::string job = " --name=w --filename=v --size=64g --rw=randwrite --bs=4k --ioengine=libaio --iodepth=32 --time_based";
  const auto short_run = run_cli("fio --quiet --raid-type RAID5 --output-format terse" + job + " --runtime=1s");
  CHECK(short_run.exit_code == 0);
  CHECK(short_run.err.rfind("afasim fio: note: group 0 ([w]): while it was measured the write caches' dirty data grew "
                            "from 0.00 to ", 0) == 0);
  CHECK(short_run.err.find(" GB, 100 % of the ") != std::string::npos);
  CHECK(short_run.err.find("its jobs wrote: those writes were absorbed by the cache, not yet written to the SSDs, so "
                           "its figures are above the steady state") != std::string::npos);
  // Below the 40 % watermark nothing destages, so the 1 s run's writes were all absorbed (the
  // "100 %" above); after 10 s the cache is past it, not yet full (at most controller A's 4 GiB,
  // 4.29 GB), and part of the writes still goes into it.
  const auto filling = run_cli("fio --quiet --raid-type RAID5 --output-format terse" + job + " --runtime=2s --ramp_time=10s");
  const auto at = filling.err.find("dirty data grew from ");
  REQUIRE(at != std::string::npos);
  double from_gb = 0, to_gb = 0, percent = 0;
  REQUIRE(std::sscanf(filling.err.c_str() + at, "dirty data grew from %lf to %lf GB, %lf %%", &from_gb, &to_gb, &percent) == 3);
  CHECK(from_gb > 0.4 * 4.29);
  CHECK(to_gb <= 4.29);
  CHECK(percent >= 10);
  CHECK(percent < 100);
  const auto steady = run_cli("fio --quiet --raid-type RAID5 --output-format terse" + job + " --runtime=2s --ramp_time=20s");
  CHECK(steady.exit_code == 0);
  CHECK(steady.err.empty());
  const auto reads = run_cli("fio --quiet --output-format terse --provisioning fixed --name=r --filename=v --size=1g "
                             "--rw=randread --runtime=1s --time_based");
  CHECK(reads.exit_code == 0);
  CHECK(reads.err.empty());
}

TEST_CASE("reads of a thin volume mostly never written say they measured the controllers, not the SSDs") {
  // fio review 44: randread of a new thin LUN read 194K IOPS, above the ISE 860's 4K random
  // read maximum (~284K for both controllers, 142K for the one that owns the LUN): a read of a
  // never-written extent returns zeros from the controller and reaches no SSD.
  const std::string read = " --name=r --filename=v --size=1g --rw=randread --bs=4k --ioengine=libaio --iodepth=64 "
                           "--numjobs=4 --group_reporting --time_based --runtime=500ms";
  const auto thin = run_cli("fio --quiet --output-format terse" + read);
  CHECK(thin.exit_code == 0);
  CHECK(thin.err.find("afasim fio: note: thin volume v was read (") != std::string::npos);
  CHECK(thin.err.find(" GB) with 0 % of it ever written: a read of a never-written extent returns zeros from the "
                      "controller without reaching an SSD") != std::string::npos);
  const auto fixed = run_cli("fio --quiet --output-format terse --provisioning fixed" + read);
  CHECK(fixed.exit_code == 0);
  CHECK(fixed.err.find("thin volume") == std::string::npos);
  // Written first (a group before the reads, as the shipped job files do): no note.
  const auto filled = run_cli("fio --quiet --output-format terse --name=fill --filename=v --size=1g --rw=write "
                              "--bs=128k --ioengine=libaio --iodepth=16" + read + " --stonewall");
  CHECK(filled.exit_code == 0);
  CHECK(filled.err.find("thin volume") == std::string::npos);
  // The note is about a real difference: the unwritten thin volume's reads ran faster.
  const auto iops = [](const std::string& terse, int clone_line) {
    std::size_t at = 0;
    for (int i = 0; i < clone_line; ++i) at = terse.find('\n', at) + 1;
    std::vector<std::string> f;
    for (std::size_t next; at < terse.size() && terse[at] != '\n'; at = next + 1) {
      next = terse.find_first_of(";\n", at);
      f.push_back(terse.substr(at, next - at));
      if (terse[next] == '\n') break;
    }
    REQUIRE(f.size() > 7);
    return std::stod(f[7]);  // terse v3 field 8: read IOPS
  };
  CHECK(iops(thin.out, 0) > 1.2 * iops(fixed.out, 0));
}

TEST_CASE("capped_iops: each direction at its own cap, clones counted, only jobs running through the window") {
  using sim::kSecond;
  // 70/30 with rate_iops=1000 runs 1000 reads and 1000 writes a second, as fio (review 27:
  // the mix's share had been taken as binding, 1429).
  const FioJobFile mixed = parse_job_ok("[m]\nfilename=v\nsize=1g\nrw=randrw\nrwmixread=70\nrate_iops=1000\n"
                                        "numjobs=2\ntime_based\nruntime=10s\n");
  REQUIRE(mixed.capped_iops(kSecond, 5 * kSecond));
  CHECK(*mixed.capped_iops(kSecond, 5 * kSecond) == 4000);
  const FioJobFile writes = parse_job_ok("[w]\nfilename=v\nsize=1g\nrw=randwrite\nrate_iops=5,700\ntime_based\nruntime=10s\n");
  CHECK(*writes.capped_iops(kSecond, 5 * kSecond) == 700);  // the read cap is not issued
  // Not a rate asked for throughout the window: None.
  const char* not_throughout[] = {
      "[a]\nfilename=v\nsize=1g\nrw=randwrite\nrate_iops=700\n",                                   // not time_based
      "[a]\nfilename=v\nsize=1g\nrw=randwrite\nrate_iops=700\ntime_based\nruntime=3s\n",           // ends at 3 s
      "[a]\nfilename=v\nsize=1g\nrw=randwrite\nrate_iops=700\ntime_based\nruntime=10s\nstartdelay=2s\n",        // starts at 2 s
      "[a]\nfilename=v\nsize=1g\nrw=randwrite\ntime_based\nruntime=10s\n",                                      // uncapped
      "[a]\nfilename=v\nsize=1g\nrw=randrw\nrate_iops=700,0\ntime_based\nruntime=10s\n",                         // writes uncapped
      "[a]\nfilename=v\nsize=1g\nrw=randwrite\nrate_iops=700\ntime_based\nruntime=10s\n"
      "[b]\nstonewall\nfilename=v\nsize=1g\nrw=randwrite\nrate_iops=700\ntime_based\nruntime=10s\n",             // in turn
  };
  for (const char* text : not_throughout) {
    INFO(text);
    CHECK_FALSE(parse_job_ok(text).capped_iops(kSecond, 5 * kSecond));
  }
}

TEST_CASE("more than 4,096 jobs made by sections alone names the section, not numjobs") {
  // Hostile round 28: 4,097 one-job sections were a "numjobs" error in a file with no numjobs=.
  std::string text;
  for (int i = 0; i < 4097; ++i) text += "[j" + std::to_string(i) + "]\nsize=1m\n";
  CHECK(parse_error(text) ==
        "bad.fio:8193: [j4096]: more than 4096 jobs in the file (a job per section, and numjobs= clones of each)");
}

TEST_CASE("fio's own examples: filesize, fill_device, a volume no job sizes, time_based without runtime") {
  // filesize= (examples/exitwhat.fio, falloc.fio): each file that large, size= then caps the
  // I/O (fio HOWTO "filesize"; setup_files caps size at the files' total).
  const FioJobFile a = parse_job_ok("[j]\nfilename=a:b\nfilesize=1m\nsize=1536k\n[k]\nfilename=c\nfilesize=2m\n");
  REQUIRE(a.volumes.size() == 3);
  CHECK(a.volumes[0].size_bytes == sim::kMiB);
  CHECK(a.volumes[1].size_bytes == sim::kMiB);
  CHECK(a.jobs[0].size_bytes == sim::kMiB);  // each file's region: the whole file
  CHECK(a.jobs[0].io_size_bytes == 1536 * sim::kKiB);
  CHECK(a.jobs[1].io_size_bytes == 2 * sim::kMiB);  // no size=: the file, once
  const FioJobFile capped = parse_job_ok("[j]\nfilename=a\nfilesize=1m\nsize=5m\n");
  CHECK(capped.jobs[0].io_size_bytes == sim::kMiB);  // capped at the files' total, as fio
  // A job without size= on a volume no job sizes (examples/jesd219.fio on /dev/nvme0n1):
  // afasim fio --volume-size gives the volume a size and the job covers it, as fio a device.
  FioParseOptions sized;
  sized.volume_bytes = 10 * sim::kGiB;
  auto d = parse_fio_job_file("[w]\nfilename=/dev/nvme0n1\nrw=randwrite\n[r]\nfilename=/dev/nvme0n1\nsize=50%\n"
                              "[own]\nfilename=x\nsize=1g\n",
                              "d.fio", sized);
  REQUIRE_MESSAGE(d.is_ok(), d.status().message());
  CHECK(d->volumes[0].name == "nvme0n1");
  CHECK(d->volumes[0].size_bytes == 10 * sim::kGiB);
  CHECK(d->jobs[0].size_bytes == 10 * sim::kGiB);
  CHECK(d->jobs[1].size_bytes == 5 * sim::kGiB);
  CHECK(d->volumes[1].size_bytes == sim::kGiB);  // a job's own size= still sizes its volume
  CHECK(d->warnings.empty());
  // Every volume sized by its jobs: the flag changes nothing and says so (review 33b).
  auto unused = parse_fio_job_file("[own]\nfilename=x\nsize=1g\n", "u.fio", sized);
  REQUIRE(unused.is_ok());
  REQUIRE(unused->warnings.size() == 1);
  CHECK(unused->warnings[0].find("--volume-size: every volume is sized by its jobs' size=") == 0);
  // fill_device=1 (examples/surface-scan.fio): fio 3.33 still honours size= (review 33b);
  // without it the job covers its volume, as any job without size=.
  auto fill = parse_fio_job_file("[w]\nfilename=v\nrw=write\nsize=1m\nfill_device=1\n[x]\nfilename=x\nrw=write\nfill_device=1\n",
                                 "f.fio", sized);
  REQUIRE_MESSAGE(fill.is_ok(), fill.status().message());
  CHECK(fill->jobs[0].size_bytes == sim::kMiB);
  CHECK(fill->jobs[1].size_bytes == 10 * sim::kGiB);
  // filesize= with offset=: the region is what each file holds past the offset (fio: 12 reads
  // of 64k for filesize=1m offset=256k; review 33b: afasim made a 1.25 MiB volume, 16).
  const FioJobFile off = parse_job_ok("[j]\nfilename=a\nfilesize=1m\noffset=256k\nbs=64k\n");
  CHECK(off.volumes[0].size_bytes == sim::kMiB);
  CHECK(off.jobs[0].io_size_bytes == 768 * sim::kKiB);
  // time_based without runtime= (examples/cpp_null.fio): fio warns and runs by size.
  const FioJobFile t = parse_job_ok("[j]\nsize=1m\ntime_based\n", "t.fio");
  CHECK_FALSE(t.jobs[0].time_based);
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0].rfind("t.fio:3: time_based: no effect without runtime=", 0) == 0);
  // fio 3.33's aliases and options that change nothing in a simulation.
  const FioJobFile al = parse_job_ok("[j]\nthreads=1\nnr_files=2\nfileoffset=1m\nsize=4m\nio_submit_mode=offload\n"
                                     "error_dump=1\nignore_error=EIO\ndedupe_mode=working_set\n");
  CHECK(al.jobs[0].nrfiles == 2);
  CHECK(al.jobs[0].offset_bytes == sim::kMiB);
  CHECK(al.ignored.size() == 5);
}

TEST_CASE("a [global] name= names no job: each is its section's, as fio's get_new_job (fio review 33)") {
  // fio 3.33: jobs "first" and "second" on files first.0.0 and second.0.0; the job's own
  // name= still wins (examples/fio-rand-read.fio reports job "file1").
  const FioJobFile f = parse_job_ok("[global]\nname=gname\nsize=1m\n[first]\n[second]\nname=explicit\n[third]\nwait_for=first\n");
  REQUIRE(f.jobs.size() == 3);
  CHECK(f.jobs[0].name == "first");
  CHECK(f.jobs[1].name == "explicit");
  CHECK(f.jobs[2].name == "third");
  REQUIRE(f.volumes.size() == 3);
  CHECK(f.volumes[0].name == "first.0.0");
  CHECK(f.volumes[1].name == "second.0.0");
}
