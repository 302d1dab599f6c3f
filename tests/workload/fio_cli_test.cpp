// afasim fio on the command line, through the real binary (AFASIM_BINARY): the job file from
// standard input, and fio's report lines the parser tests do not reach.
#include <doctest/doctest.h>

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
