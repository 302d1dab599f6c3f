// afasim fio on the command line, through the real binary (AFASIM_BINARY): the job file from
// standard input, and fio's report lines the parser tests do not reach.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/workload/cli_test_support.h"
#include "workload/fio_job.h"

using namespace afasim;
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
