// FioSession: fio job files in a simulation the caller drives. run_fio is a session plus
// its own loop, so both must give the same report; several sessions share one array;
// stop() ends a session mid-run and late completions do not change its report.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "config/preset.h"
#include "controller/array.h"
#include "workload/distribution.h"
#include "workload/fio_runner.h"
#include "workload/io_target.h"

using namespace afasim;
using namespace afasim::workload;

namespace {

struct Fixture {
  config::Catalog catalog = config::Catalog::embedded().value();
  config::SystemPreset preset = catalog.system("ise-860-g3").value();
  sim::Simulator sim{1};
  controller::MemoryJournal journal;
  std::unique_ptr<controller::Array> array;
  Fixture() {
    array = controller::Array::open(sim, catalog, preset, journal, journal.snapshot()).value();
  }
};

FioJobFile parse_session_job(const std::string& text, const std::string& name) {
  auto f = parse_fio_job_file(text, name);
  REQUIRE_MESSAGE(f.is_ok(), f.status().message());
  return std::move(f).value();
}

const char* kMixed = R"([global]
filename=lun0
size=1g
[mixed]
rw=randrw
bs=8k
iodepth=8
numjobs=2
time_based
ramp_time=100ms
runtime=500ms
[seq]
stonewall
rw=write
bs=128k
size=64m
)";

std::uint64_t measured_ios(const RunReport& r) {
  std::uint64_t n = 0;
  for (const auto& res : r.results)
    for (const auto& d : res.direction) n += d.io_count;
  return n;
}

}  // namespace

TEST_CASE("run_fio and a FioSession driven by hand give the same report, byte for byte") {
  const FioJobFile file = parse_session_job(kMixed, "mixed.fio");
  FioRunOptions o;
  o.seed = 3;
  Fixture a;
  auto via_run = run_fio(*a.array, a.sim, file, o);
  REQUIRE(via_run.is_ok());

  Fixture b;
  REQUIRE(prepare_volumes(*b.array, file, o).is_ok());
  FioSession session(*b.array, b.sim, file, o);
  std::uint64_t observed = 0, observed_measured = 0;
  session.set_observer([&](const FioCompletion& c) {
    ++observed;
    observed_measured += c.measured;
    CHECK(c.io->status.is_ok());
    CHECK(c.volume_id == b.array->volume_by_name("lun0")->id);
  });
  CHECK_FALSE(session.started());
  REQUIRE(session.start().is_ok());
  while (!session.finished() && b.sim.step()) {
  }
  REQUIRE(session.finished());
  // run_fio's loop (the session stops the simulator as it finishes) ends at the same event as
  // this one: not one event more.
  CHECK(a.sim.events_executed() == b.sim.events_executed());
  CHECK(a.sim.now() == b.sim.now());
  CHECK(format_json(session.report()) == format_json(*via_run));
  CHECK(format_normal(session.report()) == format_normal(*via_run));
  // The observer sees every completion; the measured ones are the report's I/Os.
  CHECK(observed == static_cast<std::uint64_t>(session.ios_done()));
  CHECK(observed_measured == measured_ios(session.report()));
  CHECK(observed > observed_measured);  // the ramp's I/Os
}

TEST_CASE("two sessions run at once on one array, each with its own results") {
  Fixture f;
  const FioJobFile reads = parse_session_job(
      "[r]\nfilename=a\nsize=1g\nrw=randread\nrate_iops=1000\ntime_based\nruntime=1s\n", "r.fio");
  const FioJobFile writes =
      parse_session_job("[w]\nfilename=b\nsize=1g\nrw=write\nbs=64k\nio_size=32m\n", "w.fio");
  FioRunOptions o;
  REQUIRE(prepare_volumes(*f.array, reads, o).is_ok());
  REQUIRE(prepare_volumes(*f.array, writes, o).is_ok());
  FioSession r(*f.array, f.sim, reads, o), w(*f.array, f.sim, writes, o);
  REQUIRE(r.start().is_ok());
  f.sim.run_until(250 * sim::kMillisecond);
  REQUIRE(w.start().is_ok());  // later: its startdelay counts from here
  while (!(r.finished() && w.finished()) && f.sim.step()) {
  }
  // 1000 IOPS for 1 s: the slot at 1.000 s is the runtime's end, so no I/O is issued there
  // (fio's rate_ddir; until hostile round 15 the 1.000 s slot was scheduled at 0.999 s and ran).
  CHECK(r.report().results[0].direction[0].io_count == 1000);
  CHECK(w.report().results[0].direction[1].io_count == 512);  // 32 MiB of 64 KiB
  CHECK(w.report().results[0].start_ns == 250 * sim::kMillisecond);
  CHECK(f.array->data_path().volume_stats(f.array->volume_by_name("a")->id)->read_ops == 1000);
}

TEST_CASE(
    "stop() ends every job now; I/O still in flight is not counted; unstarted jobs never start") {
  Fixture f;
  const FioJobFile file = parse_session_job(
      "[a]\nfilename=v\nsize=1g\nrw=randwrite\niodepth=16\ntime_based\nruntime=10s\n"
      "[b]\nfilename=v\nsize=1g\nstonewall\nrw=read\n",
      "s.fio");
  FioRunOptions o;
  REQUIRE(prepare_volumes(*f.array, file, o).is_ok());
  FioSession s(*f.array, f.sim, file, o);
  std::int64_t observed = 0;
  s.set_observer([&](const FioCompletion&) { ++observed; });
  REQUIRE(s.start().is_ok());
  f.sim.run_until(200 * sim::kMillisecond);
  CHECK(s.clones_running() == 1);
  s.stop();
  CHECK(s.finished());
  CHECK(s.clones_running() == 0);
  const std::string at_stop = format_json(s.report());
  const std::int64_t ios_at_stop = s.ios_done();
  f.sim.run_until(sim::kSecond);  // the 16 in-flight writes complete; job b must not start
  CHECK(format_json(s.report()) == at_stop);
  CHECK(s.ios_done() == ios_at_stop);
  CHECK(observed == ios_at_stop);
  CHECK(s.report().results[0].end_ns == 200 * sim::kMillisecond);
  CHECK(s.report().results[1].direction[0].io_count == 0);
}

TEST_CASE("start() names the job file and line when a volume is missing") {
  Fixture f;
  const FioJobFile file = parse_session_job("[a]\nsize=1m\n\n[b]\nfilename=nope\nsize=1m\n", "m.fio");
  FioSession s(*f.array, f.sim, file, {});
  const auto st = s.start();
  CHECK(st.code() == sim::Code::kNotFound);
  CHECK(st.message() == "m.fio:1: filename: no volume \"a.0.0\" in the array");
}

namespace {

// A target that completes every I/O 100 µs after its submission and records the submissions
// and the hints (IoTarget::hint) it is given.
class RecordingTarget final : public IoTarget {
 public:
  explicit RecordingTarget(sim::Simulator& sim) : sim_(sim) {}
  std::string name() const override { return "recorder"; }
  sim::Result<controller::Id> volume(const std::string&) const override { return controller::Id{1}; }
  void submit(const controller::HostIo& io, controller::IoCallback done) override {
    submitted.push_back(io);
    const sim::Time at = sim_.now() + 100 * sim::kMicrosecond;
    sim_.at(at, [d = std::move(done), now = sim_.now(), at]() mutable {
      d(controller::IoCompletion{sim::Status::ok(), now, at});
    });
  }
  void hint(const controller::HostIo& io) override { hinted.push_back(io); }
  bool keeps_payload() const override { return false; }
  std::string payload_refusal() const override { return "no payload"; }

  std::vector<controller::HostIo> submitted, hinted;

 private:
  sim::Simulator& sim_;
};

}  // namespace

TEST_CASE("the next I/O is drawn one early for the target's hint; the sequence stays the pattern's") {
  sim::Simulator sim(1);
  RecordingTarget target(sim);
  const FioJobFile file = parse_session_job(
      "[mix]\nfilename=a\nrw=randrw\nrwmixread=60\nbs=4k\niodepth=4\nsize=1m\nio_size=1200k\n", "hint.fio");
  FioRunOptions options;
  REQUIRE(run_fio(target, std::int64_t{1} << 30, sim, file, options).is_ok());
  REQUIRE(target.submitted.size() == 300);
  // What the pattern gives on demand, unit by unit (workload/distribution.h).
  AccessPattern pattern(file.jobs[0], 0, access_pattern_rng(options.seed, file.jobs[0], 0, 0));
  for (std::size_t i = 0; i < target.submitted.size(); ++i) {
    const IoUnit u = pattern.next();
    INFO("I/O " << i);
    CHECK(target.submitted[i].offset_bytes == u.offset_bytes);
    CHECK(target.submitted[i].length_bytes == u.size_bytes);
    CHECK((target.submitted[i].op == controller::IoOp::kRead) == (u.direction == Direction::kRead));
  }
  // Each hint names the I/O submitted after the one it came with.
  REQUIRE(target.hinted.size() == target.submitted.size());
  for (std::size_t i = 0; i + 1 < target.submitted.size(); ++i) {
    CHECK(target.hinted[i].offset_bytes == target.submitted[i + 1].offset_bytes);
    CHECK(target.hinted[i].op == target.submitted[i + 1].op);
  }
}
