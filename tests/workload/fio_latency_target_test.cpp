// latency_target=, latency_window=, latency_percentile=, latency_run= and max_latency=
// (workload/fio_latency_target.h): the queue-depth search of fio 3.33 io_u.c, step by step
// against depths worked out by hand from its code, and on the array.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include "config/preset.h"
#include "controller/array.h"
#include "workload/fio_report.h"
#include "workload/fio_runner.h"

using namespace afasim;
using namespace afasim::workload;
using Step = LatencyTargetSearch::Step;

namespace {

constexpr sim::Time kLatencyWindow = 100 * sim::kMillisecond;

LatencyTargetSpec latency_spec(double percentile = 100) {
  LatencyTargetSpec s;
  s.target_ns = sim::kMillisecond;
  s.window_ns = kLatencyWindow;
  s.percentile = percentile;
  return s;
}

// Drives `search` through one window from `now` with `ios` completions, `late` of them late.
Step judge_window(LatencyTargetSearch& search, sim::Time& now, std::uint64_t& completed, std::uint64_t ios,
            std::uint64_t late = 0) {
  Step step = Step::kNone;
  for (std::uint64_t i = 0; i < late; ++i) step = search.on_late_io();
  completed += ios;
  now += kLatencyWindow;
  if (step != Step::kNone) return step;
  return search.check(now, completed);
}

RunReport run_latency_job(const std::string& text) {
  const auto catalog = config::Catalog::embedded().value();
  const auto preset = catalog.system("ise-860-g3").value();
  sim::Simulator sim(1);
  controller::MemoryJournal journal;
  auto array = controller::Array::open(sim, catalog, preset, journal, journal.snapshot(), {}).value();
  auto file = parse_fio_job_file(text, "t.fio");
  REQUIRE_MESSAGE(file.is_ok(), file.status().message());
  auto report = run_fio(*array, sim, *file, {});
  REQUIRE_MESSAGE(report.is_ok(), report.status().message());
  return std::move(report).value();
}

const std::string kLatencyJob = "[lt]\nrw=randread\nbs=4k\nsize=16g\ntime_based\nruntime=5s\nlatency_window=100ms\n";

}  // namespace

TEST_CASE("latency_target: the depth doubles while windows hold, then one final window at the same depth ends it") {
  // fio lat_target_success with latency_qd_high == iodepth: qd *= 2, capped at iodepth; a
  // success that leaves it unchanged asks for the final run, the next one ends the job.
  LatencyTargetSearch search(latency_spec(), 16);
  sim::Time now = 0;
  std::uint64_t completed = 0;
  search.reset(now, completed);
  CHECK(search.depth() == 1);
  for (int expected : {2, 4, 8, 16}) {
    CHECK(judge_window(search, now, completed, 100) == Step::kNone);
    CHECK(search.depth() == expected);
  }
  CHECK(judge_window(search, now, completed, 100) == Step::kFinalRun);
  CHECK(search.final_run());
  search.new_cycle(now, completed);  // the session drains the queue, resets, then this
  CHECK(judge_window(search, now, completed, 100) == Step::kDone);
  CHECK(search.depth() == 16);
}

TEST_CASE("latency_target: a failed window bounds the search, which bisects below the bound and creeps up to it") {
  // By hand from io_u.c, iodepth 64: up 1 2 4 8 16 32; 32 fails: high 32, low 16, qd 24;
  // 24 holds: low 24, qd (24+32)/2 = 28; 28 fails: high 28, qd (28+24)/2 = 26; 26 holds: qd 27;
  // 27 holds with 27 + 1 == high: stable 1, qd (27+28)/2 = 27, unchanged: the final run; 27
  // holds again: stable 2, done.
  LatencyTargetSearch search(latency_spec(), 64);
  sim::Time now = 0;
  std::uint64_t completed = 0;
  search.reset(now, completed);
  for (int i = 0; i < 5; ++i) REQUIRE(judge_window(search, now, completed, 100) == Step::kNone);
  REQUIRE(search.depth() == 32);
  CHECK(judge_window(search, now, completed, 100, 1) == Step::kQuiesce);  // percentile 100: one late I/O
  CHECK(search.depth() == 24);
  search.new_cycle(now, completed);
  CHECK(judge_window(search, now, completed, 100) == Step::kNone);
  CHECK(search.depth() == 28);
  CHECK(judge_window(search, now, completed, 100, 1) == Step::kQuiesce);
  CHECK(search.depth() == 26);
  search.new_cycle(now, completed);
  CHECK(judge_window(search, now, completed, 100) == Step::kNone);
  CHECK(search.depth() == 27);
  CHECK(judge_window(search, now, completed, 100) == Step::kFinalRun);
  search.new_cycle(now, completed);
  CHECK(judge_window(search, now, completed, 100) == Step::kDone);
  CHECK(search.depth() == 27);
}

TEST_CASE("latency_target: a window's share within the target against latency_percentile, its length, depth 1") {
  // 99 %: 1 late of 100 holds (99.0 >= 99), 2 late of 100 fail (fio compares doubles).
  LatencyTargetSearch search(latency_spec(99), 8);
  sim::Time now = 0;
  std::uint64_t completed = 0;
  search.reset(now, completed);
  CHECK(judge_window(search, now, completed, 100, 1) == Step::kNone);
  CHECK(search.depth() == 2);
  CHECK(judge_window(search, now, completed, 100, 2) == Step::kQuiesce);
  CHECK(search.depth() == 1);
  search.new_cycle(now, completed);
  // At depth 1 a failed window changes nothing and starts no new window (fio ignores
  // __lat_target_failed's "give up" there): the same window is judged again, all it counted.
  CHECK(judge_window(search, now, completed, 100, 5) == Step::kNone);
  CHECK(search.depth() == 1);
  // 1,095 of 1,100 within (99.5 %) holds; the failure at 2 bounds the search, so it bisects
  // (1 + 2) / 2 = 1: unchanged, the final run at depth 1.
  CHECK(judge_window(search, now, completed, 1000) == Step::kFinalRun);
  CHECK(search.depth() == 1);
  // A window is judged only once its whole microseconds have run; one in which nothing
  // completed fails (fio's 0/0).
  LatencyTargetSearch fresh(latency_spec(99), 8);
  fresh.reset(0, 0);
  CHECK(fresh.check(kLatencyWindow - 1, 10) == Step::kNone);
  CHECK(fresh.depth() == 1);
  CHECK(fresh.check(kLatencyWindow, 10) == Step::kNone);
  CHECK(fresh.depth() == 2);
  CHECK(fresh.check(2 * kLatencyWindow, 10) == Step::kQuiesce);
  CHECK(fresh.depth() == 1);
  // With latency_percentile=100 one late I/O at depth 1 is fatal (fio lat_fatal).
  LatencyTargetSearch strict(latency_spec(100), 8);
  strict.reset(0, 0);
  CHECK(strict.on_late_io() == Step::kFatal);
}

TEST_CASE("latency_target on the array: the depth found falls with the target; the report is the final run's") {
  // A target far above the array's latencies: the search doubles to iodepth=16, then runs one
  // more window and reports it: fio 3.33 with ioengine=null, the same job: latency_depth 16,
  // read runtime 101 ms (one window, wall clock), latency_target 10000000, latency_window 100000.
  const RunReport loose = run_latency_job(kLatencyJob + "iodepth=16\nlatency_target=10ms\n");
  const auto j = to_fio_json(loose)["jobs"][0];
  CHECK(j["latency_depth"] == 16);
  CHECK(j["latency_target"] == 10'000'000);
  CHECK(j["latency_window"] == 100'000);
  CHECK(j["latency_percentile"] == 100.0);
  CHECK(j["read"]["runtime"].get<std::int64_t>() == doctest::Approx(100).epsilon(0.02));
  // Tighter targets at the 99th percentile settle lower, and the deepest queue the array
  // serves within 1 ms is shallower than 256 (at 2 ms the search reaches 256).
  auto depth = [](const std::string& target) {
    const RunReport r = run_latency_job(kLatencyJob + "iodepth=256\nlatency_percentile=99\nlatency_target=" + target + "\n");
    CHECK(r.results[0].error == 0);
    return r.results[0].latency_depth;
  };
  const int d300 = depth("300us"), d500 = depth("500us"), d1000 = depth("1ms");
  CHECK(d300 > 1);
  CHECK(d300 < d500);
  CHECK(d500 < d1000);
  CHECK(d1000 < 256);
}

TEST_CASE("latency_run keeps adjusting and never resets; max_latency and an unreachable target end the job with ETIMEDOUT") {
  // latency_run=1: no final run, so the statistics cover the whole runtime (5 s).
  const RunReport kept = run_latency_job(kLatencyJob + "iodepth=64\nlatency_target=500us\nlatency_percentile=99\nlatency_run=1\n");
  CHECK(kept.results[0].direction[0].runtime_ns == doctest::Approx(5 * sim::kSecond).epsilon(0.001));
  // A target under the array's fastest read: at depth 1 the first late I/O is fatal. fio 3.33
  // on a page-cached file with latency_target=1: err=110 after one 4096-byte read.
  const RunReport fatal = run_latency_job(kLatencyJob + "iodepth=8\nlatency_target=1\n");
  CHECK(fatal.results[0].error == ETIMEDOUT);
  CHECK(fatal.results[0].direction[0].io_count == 1);
  CHECK(fatal.results[0].error_message.find("exceeds specified max (1000 nsec)") != std::string::npos);
  // max_latency: read,write limits; only the read's applies to a read job.
  const RunReport capped = run_latency_job(kLatencyJob + "iodepth=8\nmax_latency=20us\n");
  CHECK(capped.results[0].error == ETIMEDOUT);
  CHECK(run_latency_job(kLatencyJob + "iodepth=8\nruntime=200ms\nmax_latency=100ms\n").results[0].error == 0);
  CHECK(run_latency_job(kLatencyJob + "iodepth=8\nruntime=200ms\nmax_latency=100ms,20us\n").results[0].error == 0);
}

TEST_CASE("latency_target as fio 3.33 runs it: windows judged on every pass, the final run within size=, disable_lat") {
  // Review 34. fio judges a window on every pass of its I/O loop, so with the default
  // latency_window=0 the pass after the first ramp-up finds a window without a completed I/O
  // (0/0): fio 3.33, ioengine=null, iodepth=32 latency_target=200ms: latency_depth 1, 1 I/O.
  const RunReport zero = run_latency_job("[z]\nrw=randread\nbs=4k\nsize=1g\niodepth=32\nlatency_target=200ms\n");
  CHECK(zero.results[0].latency_depth == 1);
  CHECK(zero.results[0].direction[0].io_count == 1);
  // iodepth=1: the first window's success is the final run with the queue already empty (the
  // run aborted, "clones still running"); and with a think time between I/Os.
  for (const char* extra : {"iodepth=1\n", "iodepth=8\nthinktime=1ms\n"}) {
    const RunReport r = run_latency_job("[one]\nrw=randread\nbs=4k\nsize=16m\nlatency_target=10ms\nlatency_window=5ms\n" +
                                        std::string(extra));
    CHECK(r.results[0].error == 0);
    CHECK(r.results[0].direction[0].io_count > 0);
    CHECK(r.results[0].direction[0].runtime_ns < 10 * sim::kMillisecond);  // the final window's
  }
  // The final run does not restart size=: what is left of the 3,072 I/Os of 12 MiB, not a
  // window's more (afasim issued 4,381). fio then reports depth 1: its reset zeroed the bytes
  // its loop counts, so it enters the loop again, which starts the search over and ends.
  const RunReport sized = run_latency_job("[s]\nrw=randread\nbs=4k\nsize=12m\niodepth=2\nlatency_target=200ms\nlatency_window=50ms\n");
  CHECK(sized.results[0].direction[0].io_count < 3072);
  CHECK(sized.results[0].latency_depth == 1);
  // number_ios counts afresh after the reset (fio zeroes io_blocks), and ending by it is not
  // fio's re-entry: the final run is a whole window at the settled depth (review 35).
  const RunReport counted = run_latency_job("[n]\nrw=randread\nbs=4k\nsize=1g\niodepth=4\nlatency_target=200ms\n"
                                            "latency_window=10ms\nnumber_ios=1500\n");
  CHECK(counted.results[0].latency_depth == 4);
  CHECK(counted.results[0].direction[0].runtime_ns == doctest::Approx(10 * sim::kMillisecond).epsilon(0.05));
  // verify=: the search stays in the write phase (fio's do_verify judges no window), so the
  // writes are all reported, not wiped by a final run during the read-back (review 35: W=0).
  const auto catalog = config::Catalog::embedded().value();
  sim::Simulator sim(1);
  controller::MemoryJournal journal;
  controller::ArrayOptions options;
  options.data_path.payload = datapac::PayloadKind::kMemory;
  auto array = controller::Array::open(sim, catalog, catalog.system("ise-860-g3").value(), journal, journal.snapshot(), options).value();
  auto verify_file = parse_fio_job_file("[v]\nrw=randwrite\nbs=4k\nsize=32m\niodepth=32\nlatency_target=500us\n"
                                        "latency_percentile=99\nlatency_window=20ms\nverify=crc32c\n", "t.fio");
  REQUIRE(verify_file.is_ok());
  auto verified = run_fio(*array, sim, *verify_file, {});
  REQUIRE(verified.is_ok());
  CHECK(verified->results[0].error == 0);
  CHECK(verified->results[0].direction[index_of(Direction::kRead)].io_count == 8192);
  CHECK(verified->results[0].direction[index_of(Direction::kWrite)].io_count > 0);
  // loops=: each loop starts the search over at depth 1 (fio's do_io runs lat_target_init), so
  // three loops report what one does (review 34b: one search across them reached 4, fio 2).
  const std::string looped = "[l]\nrw=randread\nbs=4k\nsize=4m\niodepth=8\nlatency_target=200ms\nlatency_window=50ms\n";
  const RunReport once = run_latency_job(looped);
  const RunReport thrice = run_latency_job(looped + "loops=3\n");
  CHECK(once.results[0].latency_depth == 2);
  CHECK(thrice.results[0].latency_depth == 2);
  CHECK(thrice.results[0].direction[0].io_count == 3 * once.results[0].direction[0].io_count);
  // disable_lat (and gtod_reduce): fio judges no latency, so every window holds (fio 3.33:
  // latency_target=1 with disable_lat=1, depth 4, err 0).
  for (const char* off : {"disable_lat=1\n", "gtod_reduce=1\n"}) {
    const RunReport r = run_latency_job("[d]\nrw=randread\nbs=4k\nsize=16m\niodepth=4\nlatency_target=1\n"
                                        "latency_window=1ms\nmax_latency=1\n" + std::string(off));
    CHECK(r.results[0].error == 0);
    CHECK(r.results[0].latency_depth == 4);
  }
}

TEST_CASE("latency options: bad values are refused with the reason") {
  for (const auto& [line, reason] : std::vector<std::pair<std::string, std::string>>{
           {"latency_percentile=101", "between 0 and 100"},
           {"latency_percentile=abc", "not a percentage"},
           {"latency_percentile=", "empty value"},
           {"latency_target=1.5us", "not a whole number"},
           {"latency_target=-5", ""},
           {"latency_window=1.5x", ""},
           {"max_latency=10us,0.5ms", "write 500us"}}) {
    auto r = parse_fio_job_file(kLatencyJob + line + "\n", "t.fio");
    REQUIRE_MESSAGE(!r.is_ok(), line);
    CHECK_MESSAGE(r.status().message().find(reason) != std::string::npos, r.status().message());
  }
  // latency_percentile takes fio's '%' and fractional values.
  auto ok = parse_fio_job_file(kLatencyJob + "latency_percentile=99.9%\nlatency_target=2ms\nlatency_run=1\n", "t.fio");
  REQUIRE_MESSAGE(ok.is_ok(), ok.status().message());
  CHECK(ok->jobs[0].latency.percentile == 99.9);
  CHECK(ok->jobs[0].latency.target_ns == 2 * sim::kMillisecond);
  CHECK(ok->jobs[0].latency.run);
}
