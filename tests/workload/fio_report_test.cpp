// fio-compatible reports: fio's number formatting, its aggregation, the human output against
// a golden text and against lines fio 3.33 printed, and the JSON's field names.
#include "workload/fio_report.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sim/rng.h"
#include "workload/fio_job.h"
#include "tests/workload/fio_test_support.h"

using namespace afasim;
using namespace afasim::workload;
using afasim::workload::testing::parse_job_ok;
using nlohmann::json;

namespace {

// A direction with only counts (no latency samples), as fio's summary lines need them.
DirectionStats counted(std::uint64_t bytes, std::uint64_t ios, std::int64_t runtime_ms) {
  DirectionStats d;
  d.io_bytes = bytes;
  d.io_count = ios;
  d.runtime_ns = runtime_ms * sim::kMillisecond;
  return d;
}

bool contains(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compares with tests/workload/golden/NAME; AFASIM_UPDATE_GOLDEN=1 rewrites the file.
void check_golden(const std::string& name, const std::string& actual) {
  const char* source = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const std::string path = std::string(source) + "/tests/workload/golden/" + name;
  if (const char* update = std::getenv("AFASIM_UPDATE_GOLDEN");
      update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
  }
  const std::string expected = read_file(path);
  REQUIRE_MESSAGE(!expected.empty(), (std::string("missing golden file ") + path));
  CHECK(actual == expected);
}

// A hand-built run: two reporting groups, group_reporting over two clones, a description,
// ignored options, deterministic latencies from a fixed seed.
RunReport sample_report() {
  RunReport report;
  report.job_file = parse_job_ok(R"(; golden report
[global]
ioengine=libaio
direct=1
filename=lun0
size=1g
group_reporting

[mixed]
rw=randrw
rwmixread=70
bs=8k
iodepth=16
numjobs=2
time_based
runtime=10s

[stream]
stonewall
description=sequential 128k writes
rw=write
bs=128k
iodepth=4
)", "report.fio");
  report.system = "ise-860-g3";
  report.seed = 42;
  sim::Rng rng(7, "golden-latencies");
  const FioJobFile& f = report.job_file;
  for (const FioJob& job : f.jobs) {
    for (int clone = 0; clone < job.numjobs; ++clone) {
      JobResult r;
      r.job_index = job.job_index;
      r.clone = clone;
      r.start_ns = job.group_id == 0 ? 0 : 10 * sim::kSecond;
      r.end_ns = r.start_ns + (job.group_id == 0 ? 10 * sim::kSecond : 2500 * sim::kMillisecond);
      const int ios = job.group_id == 0 ? 3000 : 800;
      for (int i = 0; i < ios; ++i) {
        const Direction d = job.rw == RwPattern::kWrite ||
                                    (job.rw == RwPattern::kRandReadWrite && rng.uniform(100) >= 70)
                                ? Direction::kWrite
                                : Direction::kRead;
        const sim::Time clat = d == Direction::kRead ? 600'000 + rng.uniform(700'000)
                                                     : 1'200'000 + rng.uniform(2'000'000);
        r.record_io(d, job.bs[index_of(d)].min_bytes, 800 + rng.uniform(400), clat);
        r.depth_bins.record(job.iodepth);
      }
      for (int d = 0; d < kDirections; ++d) {
        DirectionStats& ds = r.direction[d];
        if (ds.io_count == 0) continue;
        ds.runtime_ns = r.end_ns - r.start_ns;
        const int intervals = static_cast<int>(ds.runtime_ns / (500 * sim::kMillisecond));
        for (int s = 0; s < intervals; ++s) {
          const std::int64_t n = static_cast<std::int64_t>(ds.io_count) / intervals +
                                 static_cast<std::int64_t>(rng.uniform(5));
          ds.record_interval(n * job.bs[d].min_bytes, n, 500 * sim::kMillisecond);
        }
      }
      report.results.push_back(std::move(r));
    }
  }
  return report;
}

}  // namespace

TEST_CASE("fio_num2str prints what fio 3.33 prints for the same numbers") {
  // Every expected string appears in fio 3.33 output for the given count (fio --ioengine=null
  // runs; the JSON of the same run gave the exact counts).
  auto n = [](std::uint64_t v, bool pow2, NumUnit u) { return fio_num2str(v, 4, 1, pow2, u); };
  CHECK(n(1'042'410, false, NumUnit::kNone) == "1042k");  // IOPS=1042k
  CHECK(n(3197, false, NumUnit::kNone) == "3197");        // IOPS=3197
  CHECK(n(88, false, NumUnit::kNone) == "88");
  CHECK(n(2'048'000, false, NumUnit::kNone) == "2048k");
  CHECK(n(8'539'427'548, true, NumUnit::kBytePerSecond) == "8144MiB/s");
  CHECK(n(8'539'427'548, false, NumUnit::kBytePerSecond) == "8539MB/s");
  CHECK(n(8'547'966'976, true, NumUnit::kByte) == "8152MiB");
  CHECK(n(637'314, true, NumUnit::kBytePerSecond) == "622KiB/s");
  CHECK(n(637'314, false, NumUnit::kBytePerSecond) == "637kB/s");
  CHECK(n(637'952, true, NumUnit::kByte) == "623KiB");
  CHECK(n(8'388'608'000, true, NumUnit::kBytePerSecond) == "8000MiB/s");
  CHECK(n(8'388'608'000, false, NumUnit::kBytePerSecond) == "8389MB/s");
  CHECK(n(16 * 1024 * 1024, true, NumUnit::kByte) == "16.0MiB");
  CHECK(n(16'777'216'000, true, NumUnit::kBytePerSecond) == "15.6GiB/s");
  CHECK(n(16'777'216'000, false, NumUnit::kBytePerSecond) == "16.8GB/s");
  CHECK(n(33'554'432, false, NumUnit::kByte) == "33.6MB");
  // Job lines: bs=(R) 4096B-4096B, 16.0KiB, 64.0KiB, 1024KiB, 977KiB (bs=1MiB, 10^6 bytes).
  CHECK(n(4096, true, NumUnit::kByte) == "4096B");
  CHECK(n(16384, true, NumUnit::kByte) == "16.0KiB");
  CHECK(n(65536, true, NumUnit::kByte) == "64.0KiB");
  CHECK(n(1'048'576, true, NumUnit::kByte) == "1024KiB");
  CHECK(n(1'000'000, true, NumUnit::kByte) == "977KiB");
  // Latency min/max (6 digits): max=2399.9k, 5104.5k, 4768.4k; 93587 as is.
  CHECK(fio_num2str(2'399'866, 6, 1, false, NumUnit::kNone) == "2399.9k");
  CHECK(fio_num2str(5'104'452, 6, 1, false, NumUnit::kNone) == "5104.5k");
  CHECK(fio_num2str(93'587, 6, 1, false, NumUnit::kNone) == "93587");
  CHECK(fio_num2str(0, 4, 1, true, NumUnit::kByte) == "0B");
  CHECK(fio_num2str(UINT64_MAX / 8, 4, 1, false, NumUnit::kBit) ==
        "18.4E"
        "bit");
}

TEST_CASE("direction and group lines match fio 3.33's for the same counts") {
  // fio 3.33, three null-engine jobs in one group, 1 s time_based (see the test above): the
  // JSON gave io_bytes/total_ios/runtime, the normal output printed these lines.
  RunReport report;
  report.job_file = parse_job_ok(R"([global]
size=1g
[fast]
rw=randrw
bs=8k
[slow]
rw=write
bs=7k
[mid]
rw=read
bs=64k
)", "report.fio");
  JobResult fast, slow, mid;
  fast.job_index = 0;
  slow.job_index = 1;
  mid.job_index = 2;
  fast.direction[0] = counted(8'547'966'976, 1'043'453, 1001);
  fast.direction[1] = counted(3'662'929'920, 447'135, 1001);
  slow.direction[1] = counted(637'952, 89, 1001);
  mid.direction[0] = counted(209'780'736, 3201, 1001);
  report.results = {fast, slow, mid};
  const std::string out = format_normal(report);
  CHECK(contains(out, "  read: IOPS=1042k, BW=8144MiB/s (8539MB/s)(8152MiB/1001msec)\n"));
  // fio 3.33 ends a write line with its zone resets (fio review 32; `fio` on a 1 MiB write here:
  // "  write: IOPS=16.0k, BW=1000MiB/s (1049MB/s)(1024KiB/1msec); 0 zone resets").
  CHECK(contains(out, "  write: IOPS=447k, BW=3490MiB/s (3659MB/s)(3493MiB/1001msec); 0 zone resets\n"));
  CHECK(contains(out, "  write: IOPS=88, BW=622KiB/s (637kB/s)(623KiB/1001msec); 0 zone resets\n"));
  CHECK(contains(out, "  read: IOPS=3197, BW=200MiB/s (210MB/s)(200MiB/1001msec)\n"));
  CHECK(contains(out,
                 "   READ: bw=8344MiB/s (8749MB/s), 200MiB/s-8144MiB/s (210MB/s-8539MB/s), "
                 "io=8352MiB (8758MB), run=1001-1001msec\n"));
  CHECK(contains(out,
                 "  WRITE: bw=3490MiB/s (3660MB/s), 622KiB/s-3490MiB/s (637kB/s-3659MB/s), "
                 "io=3494MiB (3664MB), run=1001-1001msec\n"));
  // fio's job line (bs=7k sets every direction): "slow: (g=0): rw=write, bs=(R) 7168B-...".
  CHECK(contains(out,
                 "slow: (g=0): rw=write, bs=(R) 7168B-7168B, (W) 7168B-7168B, (T) "
                 "7168B-7168B, ioengine=afasim, iodepth=1\n"));
  // JSON of the same: fio's bw_bytes, bw (KiB/s), iops with its 1000·ios/runtime_ms.
  const json j = json::parse(format_json(report));
  CHECK(j["jobs"][0]["read"]["bw_bytes"] == 8'539'427'548ULL);
  CHECK(j["jobs"][0]["read"]["bw"] == 8'339'284ULL);
  CHECK(j["jobs"][0]["read"]["iops"].get<double>() == doctest::Approx(1'042'410.589411));
  CHECK(j["jobs"][1]["write"]["iops"].get<double>() == doctest::Approx(88.911089));
}

TEST_CASE("latency bins follow fio's edges") {
  LatencyBins b;
  b.record(0);              // nsec "2"
  b.record(249);            // nsec "250" (100..249)
  b.record(250);            // nsec "500"
  b.record(999);            // nsec "1000"
  b.record(1000);           // usec "2" (1 µs)
  b.record(999'999);        // usec "1000"
  b.record(1'000'000);      // msec "2"
  b.record(1'999'999'999);  // msec "2000" (1000..1999 ms)
  b.record(2'000'000'000);  // msec ">=2000"
  CHECK(b.nsec[0] == 1);
  CHECK(b.nsec[6] == 1);
  CHECK(b.nsec[7] == 1);
  CHECK(b.nsec[9] == 1);
  CHECK(b.usec[0] == 1);
  CHECK(b.usec[9] == 1);
  CHECK(b.msec[0] == 1);
  CHECK(b.msec[10] == 1);
  CHECK(b.msec[11] == 1);
  CHECK(b.total() == 9);
  DepthBins d;
  for (int depth : {1, 2, 3, 4, 16, 31, 32, 63, 64, 1000}) d.record(depth);
  CHECK(d.counts == std::array<std::uint64_t, 7>{1, 2, 1, 0, 2, 2, 2});
}

TEST_CASE("slat and lat equal their samples, whether every slat is 0 or some are not") {
  // The engine submits at once (slat 0) and DirectionStats then keeps neither slat's nor
  // lat's histogram apart (lat is clat's); the first slat above 0 starts both, and group
  // sums mix the two kinds. Expected: the histograms of the same samples recorded directly.
  sim::Rng rng(7, "slat");
  DirectionStats zero, mixed, other, sum;
  sim::Histogram slat_zero, lat_zero, slat_mixed, lat_mixed, slat_sum, lat_sum;
  for (int i = 0; i < 500; ++i) {
    const sim::Time clat = 1000 + static_cast<sim::Time>(rng.uniform(900'000));
    zero.record_io(4096, 0, clat);
    slat_zero.record(0);
    lat_zero.record(clat);
    const sim::Time slat = i < 200 ? 0 : static_cast<sim::Time>(rng.uniform(5000));  // zeros first
    mixed.record_io(4096, slat, clat);
    slat_mixed.record(slat);
    lat_mixed.record(slat + clat);
  }
  auto same = [](const sim::Histogram& a, const sim::Histogram& b) {
    CHECK(a.count() == b.count());
    CHECK(a.min() == b.min());
    CHECK(a.max() == b.max());
    CHECK(a.sum() == b.sum());
    CHECK(a.stddev() == doctest::Approx(b.stddev()).epsilon(1e-12));
    for (double p : {1.0, 50.0, 99.0, 99.99}) CHECK(a.percentile(p) == b.percentile(p));
  };
  same(zero.slat_ns(), slat_zero);
  same(zero.lat_ns(), lat_zero);
  CHECK(zero.slat_ns().max() == 0);
  same(mixed.slat_ns(), slat_mixed);
  same(mixed.lat_ns(), lat_mixed);
  CHECK(mixed.slat_ns().max() > 0);  // the planted slats count
  // A sum of an all-zero-slat member into a mixed one, and the other way round.
  sum.add(zero);
  sum.add(mixed);
  slat_sum.merge(slat_zero);
  slat_sum.merge(slat_mixed);
  lat_sum.merge(lat_zero);
  lat_sum.merge(lat_mixed);
  same(sum.slat_ns(), slat_sum);
  same(sum.lat_ns(), lat_sum);
  other.add(mixed);
  other.add(zero);
  same(other.slat_ns(), slat_sum);
  same(other.lat_ns(), lat_sum);
  CHECK(sum.io_count == 1000);
}

TEST_CASE("sample statistics use fio's sample stddev and its group sum") {
  SampleStats s;
  for (std::uint64_t v : {10, 20, 30}) s.add(v);
  CHECK(s.samples == 3);
  CHECK(s.min == 10);
  CHECK(s.max == 30);
  CHECK(s.mean == doctest::Approx(20));
  CHECK(s.stddev() == doctest::Approx(10));  // sqrt(((−10)² + 0 + 10²) / (3 − 1))
  SampleStats t;
  for (std::uint64_t v : {5, 7}) t.add(v);
  s.add_as_sum(t);  // stat.c sum_stat(pure_sum): the fields add up
  CHECK(s.min == 15);
  CHECK(s.max == 37);
  CHECK(s.mean == doctest::Approx(26));
  CHECK(s.samples == 5);
}

TEST_CASE("an idle spell's zero samples added at once read as the same samples added one by one") {
  // Review 41: a thinktime of years added one zero per 500 ms interval (121 s for 3650d).
  for (const std::uint64_t zeros : {1, 7, 5000}) {
    SampleStats one_by_one, at_once;
    for (std::uint64_t v : {120, 80, 100, 3}) {
      one_by_one.add(v);
      at_once.add(v);
    }
    for (std::uint64_t i = 0; i < zeros; ++i) one_by_one.add(0);
    at_once.add_zeros(zeros);
    CAPTURE(zeros);
    CHECK(at_once.samples == one_by_one.samples);
    CHECK(at_once.min == 0);
    CHECK(at_once.max == 120);
    CHECK(at_once.mean == doctest::Approx(one_by_one.mean).epsilon(1e-12));
    CHECK(at_once.stddev() == doctest::Approx(one_by_one.stddev()).epsilon(1e-12));
  }
  SampleStats empty;  // zeros first: no spread
  empty.add_zeros(3);
  CHECK(empty.samples == 3);
  CHECK(empty.max == 0);
  CHECK(empty.stddev() == 0);
}

TEST_CASE("group_reporting sums the clones of a group; without it each clone is reported") {
  RunReport report = sample_report();
  const auto entries = aggregate_entries(report);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].name == "mixed");
  CHECK(entries[0].members == 2);
  CHECK(entries[0].direction[0].io_count + entries[0].direction[1].io_count == 6000);
  CHECK(entries[0].direction[0].runtime_ns == 10 * sim::kSecond);
  CHECK(entries[0].run_ns == 20 * sim::kSecond);  // fio's job_runtime sums the members
  // With a ramp_time, fio's job_runtime counts from the ramp's end (reset_all_stats resets
  // td->epoch; fio 3.33: 2 clones, runtime=1 ramp_time=1 give job_runtime 2000).
  report.results[0].measure_from_ns = 3 * sim::kSecond;
  report.results[1].measure_from_ns = 3 * sim::kSecond;
  CHECK(aggregate_entries(report)[0].run_ns == 14 * sim::kSecond);
  report.results[0].measure_from_ns = 0;
  report.results[1].measure_from_ns = 0;
  CHECK(entries[1].name == "stream");
  CHECK(entries[1].group_id == 1);
  CHECK(entries[1].description == "sequential 128k writes");
  for (FioJob& job : report.job_file.jobs) job.group_reporting = false;
  CHECK(aggregate_entries(report).size() == 3);
  const auto groups = summarize_groups(aggregate_entries(report), 2);
  CHECK(groups[0].max_run_ms[0] == 10'000);
  CHECK(groups[1].io_bytes[1] == 800ULL * 128 * 1024);
  CHECK(groups[1].max_run_ms[0] == 0);  // group 1 did not read
}

TEST_CASE("the human output matches the golden text and is byte-deterministic") {
  const std::string out = format_normal(sample_report());
  CHECK(out == format_normal(sample_report()));
  check_golden("fio_normal.txt", out);
  // The parts a reader of fio's output looks for.
  CHECK(contains(out, "mixed: (groupid=0, jobs=2): err= 0: "));
  CHECK(contains(out, "  Description  : [sequential 128k writes]\n"));
  CHECK(contains(out, "    clat percentiles (usec):\n     |  1.00th=["));
  CHECK(contains(out, "\nRun status group 1 (all jobs):\n  WRITE: bw="));
  CHECK(contains(out, "report.fio:3: ioengine=libaio: afasim is the I/O engine"));
}

TEST_CASE("the JSON has fio's field names, parses back, and is byte-deterministic") {
  const RunReport report = sample_report();
  const std::string text = format_json(report);
  CHECK(text == format_json(sample_report()));
  check_golden("fio_json.json", text);
  const json j = json::parse(text);
  CHECK(j["fio version"] == "fio-3.33");
  CHECK(j["timestamp"] == 0);
  CHECK(j["global options"]["ioengine"] == "libaio");
  CHECK(j["disk_util"].is_array());
  CHECK(j["disk_util"].empty());
  REQUIRE(j["jobs"].size() == 2);
  const json& mixed = j["jobs"][0];
  CHECK(mixed["jobname"] == "mixed");
  CHECK(mixed["groupid"] == 0);
  CHECK(mixed["job options"]["rwmixread"] == "70");
  CHECK_FALSE(mixed["job options"].contains("time_based"));  // bare: fio 3.33 omits it too
  for (const char* dir : {"read", "write", "trim"}) {
    CAPTURE(dir);
    const json& d = mixed[dir];
    for (const char* key :
         {"io_bytes",  "io_kbytes", "bw_bytes",  "bw",          "iops",        "runtime",
          "total_ios", "short_ios", "drop_ios",  "slat_ns",     "clat_ns",     "lat_ns",
          "bw_min",    "bw_max",    "bw_agg",    "bw_mean",     "bw_dev",      "bw_samples",
          "iops_min",  "iops_max",  "iops_mean", "iops_stddev", "iops_samples"}) {
      CAPTURE(key);
      CHECK(d.contains(key));
    }
    for (const char* lat : {"slat_ns", "clat_ns", "lat_ns"}) {
      for (const char* key : {"min", "max", "mean", "stddev", "N"}) CHECK(d[lat].contains(key));
    }
  }
  const json& read = mixed["read"];
  const auto entries = aggregate_entries(report);
  const DirectionStats& ds = entries[0].direction[0];
  CHECK(read["io_bytes"] == ds.io_bytes);
  CHECK(read["total_ios"] == ds.io_count);
  CHECK(read["runtime"] == 10'000);
  CHECK(read["bw"] == read["bw_bytes"].get<std::uint64_t>() / 1024);
  CHECK(read["iops"].get<double>() == doctest::Approx(ds.io_count / 10.0));
  CHECK(read["clat_ns"]["N"] == ds.clat_ns.count());
  CHECK(read["lat_ns"]["min"] == ds.lat_ns().min());
  CHECK(read["slat_ns"]["max"] == ds.slat_ns().max());
  // stat.c add_ddir_lat_json: keys printed with "%f", fio's default list.
  const json& pct = read["clat_ns"]["percentile"];
  REQUIRE(pct.size() == 17);
  CHECK(pct.begin().key() == "1.000000");
  CHECK(pct.contains("99.000000"));
  CHECK(pct.contains("99.990000"));
  CHECK(pct["50.000000"] == ds.clat_ns.percentile(50));
  CHECK_FALSE(read["lat_ns"].contains("percentile"));
  CHECK(mixed["trim"]["io_bytes"] == 0);
  CHECK(mixed["latency_depth"] == 16);
  CHECK(mixed["iodepth_level"]["16"] == 100.0);
  CHECK(j["jobs"][1]["desc"] == "sequential 128k writes");
  CHECK(j["jobs"][1]["read"]["io_bytes"] == 0);
  const json& afasim = j["afasim"];
  CHECK(afasim["system"] == "ise-860-g3");
  CHECK(afasim["seed"] == 42);
  REQUIRE(afasim["ignored_options"].size() == 2);
  CHECK(afasim["ignored_options"][0]["option"] == "ioengine");
  CHECK(afasim["ignored_options"][0]["line"] == 3);
  CHECK(afasim["volumes"][0]["name"] == "lun0");
  CHECK(afasim["volumes"][0]["size_bytes"] == 1LL << 30);
}

TEST_CASE("an empty run prints headers and no job blocks, and a failed clone shows its error") {
  RunReport report;
  report.job_file = parse_job_ok("[j]\nsize=1m\n", "report.fio");
  JobResult r;
  report.results.push_back(r);
  const std::string quiet = format_normal(report);
  CHECK_FALSE(contains(quiet, "j: (groupid="));
  CHECK_FALSE(contains(quiet, "Run status group 0 (all jobs):\n   READ"));
  report.results[0].error = 28;
  report.results[0].error_message = "No space left on device";
  CHECK(contains(format_normal(report),
                 "j: (groupid=0, jobs=1): err=28 (No space left on device): "));
  CHECK(json::parse(format_json(report))["jobs"][0]["error"] == 28);
}
