// afasim fio on the command line, through the real binary (AFASIM_BINARY): the job file from
// standard input, and fio's report lines the parser tests do not reach.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/workload/cli_test_support.h"
#include "workload/fio_job.h"

using namespace afasim;
using afasim::workload::testing::Cli;
using afasim::workload::testing::run_cli;
using afasim::workload::testing::write_temp;

TEST_CASE("afasim fio - reads the job file from standard input, as fio does (new-user finding)") {
  const std::string job = write_temp("stdin.fio", "[r]\nrw=randread\nfilename=v\nsize=1g\nruntime=20ms\ntime_based\n");
  const auto piped = run_cli("fio --quiet --output-format terse - < " + job);
  CHECK(piped.exit_code == 0);
  CHECK(piped.err.empty());
  // The same report as the file read from disk.
  CHECK(piped.out == run_cli("fio --quiet --output-format terse " + job).out);
  CHECK(piped.out.find(";r;") != std::string::npos);
  const auto twice = run_cli("fio --quiet - - < " + job);
  CHECK(twice.exit_code == 2);
  CHECK(twice.err == "afasim fio: -: standard input can be read as one job file only\n");
  const std::string big = write_temp("big.fio", std::string(workload::kMaxFileBytes + 1, '#'));
  const auto large = run_cli("fio --quiet - < " + big);
  CHECK(large.exit_code == 2);
  CHECK(large.err == "afasim fio: -: the job file on standard input is larger than 1 MiB\n");
}

TEST_CASE("the array's flags beside --device, and --device-state without it, are refused (exit 2), not ignored") {
  // Hostile round 28: --device X --raid-type RAID5 printed the same report as --device X, and
  // --device-state fresh on an array run changed nothing, without a word.
  const std::string job = "fio --quiet --output-format terse --name=j --filename=v --size=1g --rw=randread --io_size=1m ";
  for (const char* flag : {"--raid-type RAID5", "--system ise-820-g3", "--provisioning fixed"}) {
    const auto both = run_cli(job + "--device liqid-lqd4500 " + flag);
    INFO(flag << ": " << both.err);
    CHECK(both.exit_code == 2);
    CHECK(both.err.find("excludes --device") != std::string::npos);
  }
  const auto alone = run_cli(job + "--device-state fresh");
  CHECK(alone.exit_code == 2);
  CHECK(alone.err.find("--device-state requires --device") != std::string::npos);
  CHECK(run_cli(job + "--device liqid-lqd4500 --device-state fresh").exit_code == 0);
  CHECK(run_cli(job + "--raid-type RAID5").exit_code == 0);
}

TEST_CASE("a trim job's run status group line is fio's '   TRIM:' (hostile round 16: '(null):' read past the names)") {
  const auto trim = run_cli("fio --quiet --name=j --filename=v --size=1g --rw=randtrim --runtime=100ms --time_based");
  CHECK(trim.exit_code == 0);
  CHECK(trim.out.find("\nRun status group 0 (all jobs):\n   TRIM: bw=") != std::string::npos);
  CHECK(trim.out.find("(null)") == std::string::npos);
}

TEST_CASE("--config-dir's calibration is the one the array runs (model review 17: the built-in one ran)") {
  const char* source = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const auto dir = afasim::workload::testing::cli_temp_dir() / "config";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(std::filesystem::path(source) / "config", dir, std::filesystem::copy_options::recursive);
  // A host read command 30 µs longer than the built-in 30 µs (config/calibration/ise-860-g3.json).
  const auto file = dir / "calibration" / "ise-860-g3.json";
  std::string text = afasim::workload::testing::slurp(file);
  const std::string from = "\"cpu_host_read_ns\":                {\"value\": 30000,";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "\"cpu_host_read_ns\":                {\"value\": 60000,");
  write_temp("config/calibration/ise-860-g3.json", text);
  const std::string job =
      "fio --quiet --output-format json --name=a --filename=v --size=16g --rw=randread --iodepth=1 --runtime=200ms "
      "--time_based --norandommap";
  const auto mean_us = [](const std::string& out) {
    return nlohmann::json::parse(out)["jobs"][0]["read"]["clat_ns"]["mean"].get<double>() / 1000.0;
  };
  const auto built_in = run_cli(job);
  REQUIRE(built_in.exit_code == 0);
  const auto folder = run_cli(job + " --config-dir " + dir.string());
  REQUIRE(folder.exit_code == 0);
  // At one outstanding read each one pays the longer command once: the mean moves by 30 µs
  // (the cores' service time varies around its mean, cpu_service_cv 0.2, so allow ±3 µs).
  const double moved = mean_us(folder.out) - mean_us(built_in.out);
  INFO("built-in " << mean_us(built_in.out) << " us, folder " << mean_us(folder.out) << " us");
  CHECK(moved > 27.0);
  CHECK(moved < 33.0);

  // A bad calibration in the folder is refused with where and why (exit 2: bad input), not run.
  std::string negative = text;
  const std::string longer = "{\"value\": 60000,";
  negative.replace(negative.find(longer), longer.size(), "{\"value\": -5,");
  write_temp("config/calibration/ise-860-g3.json", negative);
  const auto refused = run_cli(job + " --config-dir " + dir.string());
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("calibration/ise-860-g3.json: parameters.cpu_host_read_ns.value: must be >= 0") !=
        std::string::npos);
  write_temp("config/calibration/ise-860-g3.json", "[1, 2]");
  const auto not_object = run_cli(job + " --config-dir " + dir.string());
  CHECK(not_object.exit_code == 2);
  CHECK(not_object.err.find("not a JSON object") != std::string::npos);
  // Bad input, exit 2, as a bad system or SSD preset is and as afasim run says (it was 1 in fio).
  const auto run = run_cli("run drive-failure-short --quiet --config-dir " + dir.string());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("not a JSON object") != std::string::npos);
  // A calibration whose cpu_cores disagrees with the preset's: sweep and serve refuse it before
  // any run and before the state directory is made (hostile review 42: every sweep run failed
  // one by one; serve exited 1 and left a state folder).
  std::string one_core = text;
  const std::string cores = "\"cpu_cores\":";
  const std::size_t at = one_core.find("{\"value\": 6,", one_core.find(cores));
  REQUIRE(at != std::string::npos);
  one_core.replace(at, std::strlen("{\"value\": 6,"), "{\"value\": 1,");
  write_temp("config/calibration/ise-860-g3.json", one_core);
  const std::string disagree = "parameters.cpu_cores is 1 but system \"ise-860-g3\"";
  const auto out_dir = afasim::workload::testing::cli_temp_dir() / "sweep-out";
  const auto sweep = run_cli("sweep raid-vs-rebuild-rate --quiet --out " + out_dir.string() + " --config-dir " + dir.string());
  CHECK(sweep.exit_code == 2);
  CHECK(sweep.err.find(disagree) != std::string::npos);
  CHECK(!std::filesystem::exists(out_dir / "rows.jsonl"));
  const auto state = afasim::workload::testing::cli_temp_dir() / "serve-state";
  std::filesystem::remove_all(state);
  const auto serve = run_cli("serve --state " + state.string() + " --config-dir " + dir.string());
  CHECK(serve.exit_code == 2);
  CHECK((serve.err + serve.out).find(disagree) != std::string::npos);
  CHECK(!std::filesystem::exists(state));
  // run names the calibration file, not the scenario's options (re-test of hostile review 42).
  const auto scenario = run_cli("run drive-failure-short --quiet --config-dir " + dir.string());
  CHECK(scenario.exit_code == 2);
  CHECK(scenario.err.rfind("afasim run: " + (dir / "calibration" / "ise-860-g3.json").string() + ": parameters.cpu_cores is 1", 0) == 0);
}

TEST_CASE("sequential readers beyond the stream detector's slots are not slower than random ones") {
  // Model review 17: 16 sequential readers on one LUN (fio's numjobs=16, the detector keeps 8
  // streams a volume) evicted each other's streams, and each stream declared again read its
  // old window ahead once more: 4,124 IOPS at 15 ms against 140,623 for random reads. A
  // sequential workload is at worst served as random reads.
  const std::string job =
      "fio --quiet --output-format json --provisioning fixed --name=l --filename=lun0 --bs=4k --iodepth=4 "
      "--numjobs=16 --size=1g --offset_increment=1g --time_based --ramp_time=200ms --runtime=300ms "
      "--group_reporting --norandommap --rw=";
  const auto iops = [](const std::string& out) {
    return nlohmann::json::parse(out)["jobs"][0]["read"]["iops"].get<double>();
  };
  const auto sequential = run_cli(job + "read");
  const auto random = run_cli(job + "randread");
  REQUIRE(sequential.exit_code == 0);
  REQUIRE(random.exit_code == 0);
  INFO("sequential " << iops(sequential.out) << " IOPS, random " << iops(random.out));
  CHECK(iops(sequential.out) >= iops(random.out));
}

TEST_CASE("write-through is not faster than the write-back steady state: every write pays the write path") {
  // Model review 17: losing the write cache (FUA, write-through, a cut link) made RAID 10 4K
  // random writes 28 % faster, 223,577 against 174,488 IOPS, because only cached writes paid
  // cpu_mirror_ns, fitted as the whole write path's residual. At 16 jobs x QD16 the cores
  // bound the writes at 12 cores / (command + write path + 2 back-end writes): the RAID 10 4K
  // random write figure the fit came from, 174,572 IOPS (StorageReview, ISE 860 G3;
  // config/calibration/ise-860-g3.json).
  std::string job = "[global]\nrw=randwrite\nbs=4k\niodepth=16\nnumjobs=4\nsize=8g\noffset_increment=8g\n"
                    "time_based\nramp_time=200ms\nruntime=300ms\ngroup_reporting\nnorandommap\nsync=1\n";
  for (int lun = 0; lun < 4; ++lun) job += "[lun" + std::to_string(lun) + "]\nfilename=lun" + std::to_string(lun) + "\n";
  const auto r = run_cli("fio --quiet --output-format json --provisioning fixed --raid-type RAID10 " +
                         write_temp("fua.fio", job));
  REQUIRE(r.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  double iops = 0;
  for (const auto& j : doc["jobs"]) iops += j["write"]["iops"].get<double>();
  INFO("FUA 4K random writes: " << iops << " IOPS");
  CHECK(iops < 174'572 * 1.02);
  CHECK(iops > 174'572 * 0.9);  // and still bound by the cores, not something slower
}

TEST_CASE("a read_iolog= error names the option's line, in the section or in [global] (hostile round 17)") {
  const auto in_job = run_cli("fio --quiet " + write_temp("iolog1.fio", "[global]\nsize=1g\n\n[j]\nfilename=v\n\nread_iolog=/nonexistent-trace\n"));
  CHECK(in_job.exit_code != 0);
  CHECK(in_job.err.find("iolog1.fio:7: read_iolog: /nonexistent-trace: cannot open the trace") != std::string::npos);
  const auto in_global = run_cli("fio --quiet " + write_temp("iolog2.fio", "[global]\nsize=1g\nread_iolog=/nonexistent-trace\n[j]\nfilename=v\n"));
  CHECK(in_global.exit_code != 0);
  CHECK(in_global.err.find("iolog2.fio:3: read_iolog:") != std::string::npos);
}

TEST_CASE("a bad line deep in a read_iolog= trace stops the run before it starts, naming the line") {
  // Until 2026-12-06 the replay ran 2,000 reads and ended the job at the bad line (err=22).
  // fio 3.33 reads the whole iolog before the job starts (iolog.c read_iolog).
  std::string trace = "fio version 2 iolog\n/dev/sda add\n/dev/sda open\n";
  for (int i = 0; i < 2000; ++i) trace += "/dev/sda read " + std::to_string(i * 4096) + " 4096\n";
  trace += "/dev/sda read notanumber 4096\n/dev/sda close\n";
  const std::string path = write_temp("bad-deep.log", trace);
  const auto r = run_cli("fio --quiet --output-format json " +
                         write_temp("bad-deep.fio", "[j]\nfilename=v\nsize=1g\nread_iolog=" + path + "\n"));
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("bad-deep.fio:4: read_iolog: " + path + ":2004: OFFSET \"notanumber\" is not a number") !=
        std::string::npos);
  CHECK(r.out.find("\"jobs\"") == std::string::npos);  // no report: nothing ran
}

TEST_CASE("a FIFO nobody writes is refused as one instead of hanging (hostile rounds 17 and 44)") {
  const auto fifo = afasim::workload::testing::cli_temp_dir() / "nobody-writes";
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto r = run_cli("fio --quiet " + fifo.string());  // it waited for ever (ctest's timeout ends a hang)
  CHECK(r.exit_code == 2);
  // It said "no job sections", as if the file were empty (hostile round 44).
  CHECK(r.err.find(": a FIFO with no writer (start its writer first) or an empty one") != std::string::npos);
}

TEST_CASE("a FIFO nobody writes is an empty iolog or session record instead of a hang (hostile round 17); trace waits, as cat") {
  const auto fifo = afasim::workload::testing::cli_temp_dir() / "nobody-writes-stream";
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Each waited for ever on the open (ctest's timeout ends a hang). `afasim trace` waits for a
  // writer as cat does (hostile round 37: a live blkparse into a FIFO started second was "the
  // trace is empty"), says so, and a SIGTERM ends the wait with its own message.
  const char* binary = std::getenv("AFASIM_BINARY");
  REQUIRE(binary != nullptr);
  const auto dir = afasim::workload::testing::cli_temp_dir();
  const std::string cmd = "timeout -s TERM 1 " + std::string(binary) + " trace " + fifo.string() + " >" +
                          (dir / "fifo.out").string() + " 2>" + (dir / "fifo.err").string();
  (void)std::system(cmd.c_str());
  const std::string waited = afasim::workload::testing::slurp(dir / "fifo.err");
  CHECK(waited.find(fifo.string() + " is a FIFO: reading from its writer (Ctrl-C to stop)") != std::string::npos);
  CHECK(waited.find("afasim trace: interrupted by SIGTERM before the first record") != std::string::npos);
  // Two signals at once are one (timeout sends its signal to the command, then to its process
  // group): the second killed the process before its message, a flake under load.
  const std::string twice = "sh -c '" + std::string(binary) + " trace " + fifo.string() + " >/dev/null 2>" +
                            (dir / "fifo2.err").string() + " & pid=$!; sleep 0.5; kill -TERM $pid; kill -TERM $pid; wait $pid'";
  (void)std::system(twice.c_str());
  CHECK(afasim::workload::testing::slurp(dir / "fifo2.err").find("interrupted by SIGTERM before the first record") !=
        std::string::npos);
  const auto iolog = run_cli("fio --quiet " + write_temp("fifo-iolog.fio", "[j]\nfilename=v\nsize=1g\nread_iolog=" + fifo.string() + "\n"));
  CHECK(iolog.exit_code == 2);
  CHECK(iolog.err.find("fifo-iolog.fio:4: read_iolog: " + fifo.string() + ": the trace is empty") != std::string::npos);
  const auto replay = run_cli("replay " + fifo.string());
  CHECK(replay.exit_code == 2);
  CHECK(replay.err.find("is not an afasim session record") != std::string::npos);
}

TEST_CASE("an empty option value, or more new volumes than the array holds, is refused before the run (hostile rounds 18, 23)") {
  // `serve --record ''` started an unrecorded session, `--config-dir ''` the built-in presets.
  const auto record = run_cli("serve --record '' --state /nonexistent-afasim-state");
  CHECK(record.exit_code == 2);
  CHECK(record.err == "afasim serve: --record: an empty value (leave the option out for its default)\n");
  const auto config = run_cli("fio --quiet --config-dir '' --name=a --filename=v --size=1g");
  CHECK(config.exit_code == 2);
  CHECK(config.err == "afasim fio: --config-dir: an empty value (leave the option out for its default)\n");
  // Hostile round 23: `fio --device ''` ran on the array, `capacity --system ''` printed every system.
  const auto device = run_cli("fio --quiet --device '' --name=a --filename=v --size=1g");
  CHECK(device.exit_code == 2);
  CHECK(device.err == "afasim fio: --device: an empty value (leave the option out for its default)\n");
  // Hostile round 28: `calibrate --only ''` matched every figure and ran the whole calibration.
  const auto only = run_cli("calibrate --only ''");
  CHECK(only.exit_code == 2);
  CHECK(only.err == "afasim calibrate: --only: an empty value (leave the option out for its default)\n");
  // --ramp without --runtime was dropped without a word (hostile review 42).
  const auto ramp = run_cli("calibrate --ramp 3600 --only 4k-randread-raid5-iops");
  CHECK(ramp.exit_code == 2);
  CHECK(ramp.err == "afasim calibrate: --ramp applies with --runtime only (the job files set their own ramp)\n");
  // A required one has no default to fall back on (hostile review 42).
  const auto out = run_cli("sweep raid-vs-rebuild-rate --out ''");
  CHECK(out.exit_code == 2);
  CHECK(out.err == "afasim sweep: --out: an empty value (it needs one)\n");
  // `trace --format ''` detected the format as if it were left out (hostile review 43).
  const auto format = run_cli("trace x.trace --format ''");
  CHECK(format.exit_code == 2);
  CHECK(format.err == "afasim trace: --format: an empty value (leave the option out for its default)\n");
  // And a VDBench file that cannot be read says why, as the other commands' files do.
  const auto parm = run_cli("vdbench /nonexistent-afasim.vdb --device liqid-lqd4500");
  CHECK(parm.exit_code == 2);
  CHECK(parm.err.find("/nonexistent-afasim.vdb: No such file or directory") != std::string::npos);
  // Hostile round 25: `serve --nbd-socket ''` served no socket without a word.
  const auto socket = run_cli("serve --nbd-socket '' --state /nonexistent-afasim-state");
  CHECK(socket.exit_code == 2);
  CHECK(socket.err == "afasim serve: --nbd-socket: an empty value (leave the option out for its default)\n");
  // Hostile round 25b: --nbd-tls require without a certificate served plain NBD without a word.
  const auto plain = run_cli("serve --nbd-tls require --state /nonexistent-afasim-state");
  CHECK(plain.exit_code == 2);
  CHECK(plain.err.find("--nbd-tls require needs TLS: --tls self-signed, or --tls-cert and --tls-key") !=
        std::string::npos);
  // numjobs x nrfiles past the array's 4,096 volumes: the count, before any volume is made
  // (it blamed a filename= line there was none of, and said "delete one first").
  const auto many = run_cli("fio --quiet --name=x --rw=read --size=1m --runtime=1ms --numjobs=4096 --nrfiles=2");
  CHECK(many.exit_code == 2);
  CHECK(many.err == "afasim fio: <command line>: the jobs name 8192 new volumes (filename=, or numjobs x nrfiles of "
                    "their own); the array holds at most 4096, 0 of them made already\n");
  const auto system = run_cli("capacity --system ''");
  CHECK(system.exit_code == 2);
  CHECK(system.out.empty());
}

TEST_CASE("fio's outputs may not replace what the run reads: --output, or a log named like an input (hostile round 23)") {
  // `--output job.fio` replaced the job file with the report; a job file or a read_iolog
  // trace named NAME_lat.log was replaced by write_lat_log=NAME with per_job_logs=0.
  const std::string job = write_temp("own.fio", "[x]\nrw=randread\nfilename=v\nsize=1g\nruntime=10ms\ntime_based\n");
  const auto output = run_cli("fio --quiet " + job + " --output " + job);
  CHECK(output.exit_code == 2);
  CHECK(output.err == "afasim fio: --output: " + job + " is " + job + ", which this command reads: give another file\n");
  const std::string folder = std::filesystem::path(job).parent_path().string();
  const std::string self = write_temp("self_lat.log", "[self]\nrw=randread\nfilename=v\nsize=1g\nruntime=10ms\n"
                                                      "time_based\nwrite_lat_log=" + folder + "/self\nper_job_logs=0\n");
  const auto log = run_cli("fio --quiet " + self + " --output /dev/null");
  CHECK(log.exit_code == 2);
  CHECK(log.err == "afasim fio: " + self + ": the log file would replace " + self +
                       ", which this run reads: give the log another name\n");
  CHECK(std::filesystem::file_size(self) > 0);
  CHECK(run_cli("fio --quiet " + job + " --output " + folder + "/own.out").exit_code == 0);
  // An include is found beside the file that includes it, at any depth, and is an input too
  // (review, round 23: d/job.fio's include of sub/b.inc was looked for in ./, and
  // `--output d/common.inc` replaced the include).
  std::filesystem::create_directories(folder + "/d/sub");
  const std::string common = write_temp("d/common.inc", "size=1m\ninclude sub/b.inc\n");
  write_temp("d/sub/b.inc", "rw=read\n");
  const std::string nested = write_temp("d/job.fio", "[j]\nfilename=v\ninclude common.inc\nruntime=1ms\n");
  const auto read = run_cli("fio --quiet --output-format terse " + nested);
  CHECK(read.exit_code == 0);
  CHECK(read.err.empty());
  // A scenario's workloads' logs are checked against the scenario file too.
  const std::string scenario = write_temp("scen_lat.1.log",
      R"({"schema": "afasim.scenario/1", "name": "s", "options": {"payload": "none"}, "duration_s": 0.1,
          "workloads": [{"name": "w", "fio": ["[w]", "filename=v", "size=64m", "rw=randread", "time_based",
                                              "runtime=1s", "write_lat_log=)" + folder + R"(/scen"]}]})");
  const auto run = run_cli("run --quiet " + scenario);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find(": the log file would replace " + scenario + ", which this run reads") != std::string::npos);
  CHECK(std::filesystem::file_size(scenario) > 100);
  const auto over = run_cli("fio --quiet " + nested + " --output " + common);
  CHECK(over.exit_code == 2);
  CHECK(over.err == "afasim fio: --output: " + common + " is " + common + ", which this command reads: give another file\n");
}

TEST_CASE("what a job file holds reaches the terminal without its control characters (hostile round 23)") {
  // A description cleared the screen in the text report; an option name did in an error.
  const std::string job = write_temp("esc.fio", "[j]\nfilename=v\nsize=1m\nrw=read\nruntime=1ms\n"
                                                "description=a\x1b[2Jb\n");
  const auto text = run_cli("fio --quiet " + job);
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("  Description  : [a\\x1b[2Jb]\n") != std::string::npos);
  CHECK(text.out.find('\x1b') == std::string::npos);
  const auto bad = run_cli("fio --quiet " + write_temp("esc2.fio", "[j]\nfilename=v\nsize=1m\n\x1b]0;t\x07x=1\n"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("\\x1b]0") != std::string::npos);
  CHECK(bad.err.find('\x1b') == std::string::npos);
}

TEST_CASE("fio's own command-line flags that scripts pass: taken as fio takes them, or ignored when only fio's console") {
  // fio review 32: --eta=never, --minimal, --status-interval, ... were read as job options
  // ("<command line>:13: eta: unknown option") and --eta never opened "never" as a job file.
  const std::string job = " --name=x --rw=randread --bs=4k --size=64m --runtime=50ms --time_based --quiet";
  for (const std::string flags : {"--eta=never", "--eta never", "--eta-newline=1", "--status-interval=1",
                                  "--max-jobs=8 --debug=io --aux-path=/tmp --alloc-size=1024"}) {
    CAPTURE(flags);
    const Cli r = run_cli("fio " + flags + job);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Run status group 0 (all jobs):") != std::string::npos);
  }
  const Cli minimal = run_cli("fio --minimal" + job);
  CHECK(minimal.exit_code == 0);
  CHECK(minimal.out.rfind("3;fio-3.33;x;", 0) == 0);
  CHECK(minimal.out.find("Run status group") == std::string::npos);
  const Cli appended = run_cli("fio --append-terse" + job);
  CHECK(appended.out.find("3;fio-3.33;x;") != std::string::npos);
  CHECK(appended.out.find("Run status group 0 (all jobs):") != std::string::npos);
  const Cli v2 = run_cli("fio --terse-version=2" + job);
  CHECK(v2.exit_code == 2);
  CHECK(v2.err.find("--terse-version=2: afasim writes terse version 3 (fio's default) only") != std::string::npos);
  const Cli parsed = run_cli("fio --parse-only" + job);
  CHECK(parsed.exit_code == 0);
  CHECK(parsed.out.empty());
  CHECK(run_cli("fio --parse-only --name=x --rw=sideways --size=1m").exit_code == 2);
  const Cli readonly = run_cli("fio --readonly --name=w --rw=randwrite --size=64m --quiet");
  CHECK(readonly.exit_code == 2);
  CHECK(readonly.err.find("--readonly: job \"w\" writes (rw=randwrite)") != std::string::npos);
  CHECK(run_cli("fio --readonly" + job).exit_code == 0);
  // A job-file warning (4KiB is 4000 bytes under fio's kb_base) stops the run.
  const Cli fatal = run_cli("fio --warnings-fatal" + job + " --io_size=4KiB");
  CHECK(fatal.exit_code == 2);
  CHECK(fatal.err.find("--warnings-fatal: the job file has warnings (above)") != std::string::npos);
  CHECK(run_cli("fio" + job + " --io_size=4KiB").exit_code == 0);
}

TEST_CASE("afasim vdbench - reads the parameter file from standard input, as fio and trace do (hostile round 32)") {
  const std::string parm = write_temp("stdin.vdb", "sd=sd1,lun=/dev/x\nwd=w,sd=sd1,xfersize=4k,rdpct=100\n"
                                                   "rd=r,wd=w,iorate=max,elapsed=1,interval=1,threads=1\n");
  const Cli r = run_cli("vdbench - --device memblaze-pblaze5-916-aic-3200gb --elapsed 1 < " + parm);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("cannot read -") == std::string::npos);
  CHECK(r.out.find("avg_") != std::string::npos);
}

TEST_CASE("afasim fio --volume-size: a job without size= covers a volume that large; a bad size says why (exit 2)") {
  // fio's examples write device jobs without size= (examples/jesd219.fio on /dev/nvme0n1).
  const std::string job = "fio --quiet --output-format json --name=j --filename=/dev/nvme0n1 --rw=read --bs=1m ";
  const auto ok = run_cli(job + "--volume-size 64m");
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
  CHECK(ok.out.find("\"io_bytes\": 67108864") != std::string::npos);  // the whole 64 MiB, once
  const auto missing = run_cli(job);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("afasim fio --volume-size") != std::string::npos);
  for (const char* bad : {"\"\"", "1000", "2p", "-5g"}) {
    const auto r = run_cli(job + "--volume-size " + bad);
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--volume-size") != std::string::npos);
  }
  CHECK(run_cli(job + "--volume-size 1g --device liqid-lqd4500").err.find("--device excludes --volume-size") != std::string::npos);
}

TEST_CASE("verify= that this machine's memory cannot hold, and '--size 1m' for --size=1m, are refused before the run (review 34)") {
  // 1000 TiB verified: more than any machine running the tests has. Under a 4 GB address
  // limit, so that a missing check fails this test instead of the machine.
  const char* binary = std::getenv("AFASIM_BINARY");
  REQUIRE(binary != nullptr);
  const auto dir = afasim::workload::testing::cli_temp_dir();
  const std::string cmd = std::string("(ulimit -v 4000000; ") + binary +
                          " fio --quiet --name=v --filename=v1 --rw=randwrite --bs=1m --size=1000t --verify=crc32c) >" +
                          (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  const std::string err = afasim::workload::testing::slurp(dir / "err");
  CHECK(err.find("verify= keeps every byte written in memory to read it back: the verifying jobs' regions hold "
                 "1000.00 TiB, more than the") != std::string::npos);
  // Under that limit, 20 GiB is more than the process may use, on any machine (review 35: it
  // was compared with the machine's memory alone, and ran into the limit).
  const std::string limited = std::string("(ulimit -v 4000000; ") + binary +
                              " fio --quiet --name=v --filename=v1 --rw=write --bs=1m --size=20g --verify=crc32c) >" +
                              (dir / "out").string() + " 2>" + (dir / "err").string();
  const int limited_status = std::system(limited.c_str());
  CHECK(WEXITSTATUS(limited_status) == 2);
  CHECK(afasim::workload::testing::slurp(dir / "err").find("of memory this process may use") != std::string::npos);
  // fio takes "--size 1m"; afasim reads "1m" as a job file, and says so.
  const auto spaced = run_cli("fio --quiet --name=x --rw=read --size 1m");
  CHECK(spaced.exit_code == 2);
  CHECK(spaced.err.find("1m: cannot open the job file") != std::string::npos);
  CHECK(spaced.err.find("write --size=VALUE") != std::string::npos);
}

TEST_CASE("a synchronous ioengine keeps one I/O in flight, as fio caps it; no engine named says how afasim differs") {
  // Hostile review 43: ioengine=psync iodepth=32 ran 187k IOPS at depth 32 where fio 3.33 prints
  // "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be
  // capped at 1" (init.c fixup_options) and runs at depth 1.
  const std::string job =
      "fio --quiet --output-format json --provisioning fixed --name=x --filename=v --rw=randread --bs=4k --size=1g "
      "--runtime=100ms --time_based --norandommap";  // fixed: reads of a new thin volume reach no SSD, and say so
  const auto iops = [](const Cli& r) { return nlohmann::json::parse(r.out)["jobs"][0]["read"]["total_ios"].get<long>(); };
  const Cli psync = run_cli(job + " --ioengine=psync --iodepth=32");
  const Cli depth1 = run_cli(job + " --ioengine=libaio --iodepth=1");
  const Cli libaio = run_cli(job + " --ioengine=libaio --iodepth=32");
  REQUIRE(psync.exit_code == 0);
  REQUIRE(depth1.exit_code == 0);
  REQUIRE(libaio.exit_code == 0);
  CHECK(iops(psync) == iops(depth1));  // the same I/Os: one in flight
  CHECK(iops(libaio) > 4 * iops(depth1));
  CHECK(psync.err ==
        "afasim fio: <command line>:10: ioengine: note: both iodepth >= 1 and synchronous I/O engine are selected, "
        "queue depth will be capped at 1 (ioengine=psync, as fio)\n");
  CHECK(libaio.err.empty());
  // sg is synchronous in fio 3.33 (engines/sg.c: FIO_SYNCIO), http does no block I/O (its re-test).
  CHECK(run_cli(job + " --ioengine=sg --iodepth=4").err.find("(ioengine=sg, as fio)") != std::string::npos);
  CHECK(run_cli(job + " --ioengine=http").exit_code == 2);
  // --section before the job file, as fio is usually called: the file was taken for a section.
  const std::string two = write_temp("two.fio", "[a]\nfilename=v\nsize=64m\nruntime=20ms\ntime_based\n"
                                                "[b]\nfilename=w\nsize=64m\nruntime=20ms\ntime_based\n");
  const Cli section = run_cli("fio --quiet --output-format terse --section=b " + two);
  CHECK(section.exit_code == 0);
  CHECK(section.out.rfind("3;fio-3.33;b;", 0) == 0);
  // A note, not a warning: fio's --warnings-fatal passes it.
  CHECK(run_cli(job + " --ioengine=pvsync2 --iodepth=8 --warnings-fatal").exit_code == 0);
  // No engine named: afasim queues as libaio would, and says so once.
  const Cli unnamed = run_cli(job + " --iodepth=32 --numjobs=2");
  CHECK(unnamed.exit_code == 0);
  CHECK(iops(unnamed) > 4 * iops(depth1));
  CHECK(unnamed.err ==
        "afasim fio: note: job \"x\" names no ioengine: afasim keeps its iodepth=32 I/Os in flight, as libaio "
        "would; fio's default engine, psync, would keep one (docs/workloads.md \"I/O engines\")\n");
}

TEST_CASE("--output that names a log file a job writes is refused before the run (hostile review 43)") {
  // The report and the iops log wrote over each other: 1,686 of 1,774 log lines survived.
  const std::string dir = afasim::workload::testing::cli_temp_dir().string();
  const std::string job = write_temp("logged.fio", "[j]\nfilename=v\nsize=64m\nruntime=50ms\ntime_based\nrw=randread\n"
                                                   "write_iops_log=" + dir + "/out\n");
  const Cli r = run_cli("fio --quiet " + job + " --output " + dir + "/./out_iops.1.log");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "afasim fio: --output: " + dir + "/./out_iops.1.log is the log file " + dir +
                     "/out_iops.1.log job \"j\" writes: give one of them another name\n");
  CHECK(!std::filesystem::exists(dir + "/out_iops.1.log"));
  CHECK(run_cli("fio --quiet " + job + " --output " + dir + "/report.txt").exit_code == 0);
}

TEST_CASE("an output inside --config-dir is refused: the command reads its presets there (hostile review 43)") {
  // calibrate --svg over DIR/calibration/ise-860-g3.json exited 0, and the next run found '<'.
  const char* source = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const auto dir = afasim::workload::testing::cli_temp_dir() / "config-out";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(std::filesystem::path(source) / "config", dir, std::filesystem::copy_options::recursive);
  const std::string calibration = (dir / "calibration" / "ise-860-g3.json").string();
  const std::string before = afasim::workload::testing::slurp(calibration);
  const auto svg = run_cli("calibrate --engine model --sweep ise860-8k-7030-sweep.fio --runtime 0.01 --config-dir " +
                           dir.string() + " --svg " + dir.string() + "/./calibration/ise-860-g3.json");
  CHECK(svg.exit_code == 2);
  CHECK(svg.err == "afasim calibrate: --svg: " + dir.string() + "/./calibration/ise-860-g3.json is inside --config-dir " +
                       dir.string() + ", whose presets this command reads: write it elsewhere\n");
  const auto output = run_cli("fio --quiet --name=x --filename=v --size=1m --config-dir " + dir.string() + " --output " +
                              dir.string() + "/systems/ise-860-g3.json");
  CHECK(output.exit_code == 2);
  CHECK(output.err.find("is inside --config-dir") != std::string::npos);
  CHECK(afasim::workload::testing::slurp(calibration) == before);
  // A hard link to a preset, outside the folder, is that preset (its re-test).
  const auto linked = afasim::workload::testing::cli_temp_dir() / "linked-preset.json";
  std::filesystem::remove(linked);
  std::filesystem::create_hard_link(dir / "systems" / "ise-860-g3.json", linked);
  const auto hard = run_cli("fio --quiet --name=x --filename=v --size=1m --config-dir " + dir.string() + " --output " +
                            linked.string());
  CHECK(hard.exit_code == 2);
  CHECK(hard.err.find(" of --config-dir " + dir.string() + ", whose presets this command reads") != std::string::npos);
  // A calibration that is no regular file is refused, not read for ever (/dev/zero grew to 4 GB).
  std::filesystem::remove(calibration);
  std::filesystem::create_symlink("/dev/zero", calibration);
  const auto zero = run_cli("fio --quiet --name=x --filename=v --size=1m --config-dir " + dir.string());
  CHECK(zero.exit_code == 2);
  CHECK(zero.err == "afasim fio: " + calibration + ": not a regular file where a JSON file belongs\n");
}
