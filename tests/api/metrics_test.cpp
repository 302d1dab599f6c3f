// GET /metrics content: the families collect_metrics() builds from an Array and its
// Telemetry, in the text format, checked value by value against the I/O the test issued
// and the array's own state, and checked by promtool (Debian's `prometheus` package).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

#include "api/metrics.h"
#include "controller/array.h"
#include "controller/telemetry.h"
#include "tests/controller/array_with_volumes.h"

using namespace afasim;
using namespace afasim::controller;
using sim::kSecond;

namespace {

struct Fixture : afasim::controller::testing::ArrayWithVolumes {
  std::unique_ptr<Telemetry> telemetry = Telemetry::create(*array, {}).value();

  void io(Id v, IoOp op, int count, std::int64_t bytes) {
    for (int i = 0; i < count; ++i) {
      HostIo io;
      io.op = op;
      io.volume_id = v;
      io.offset_bytes = i * bytes;
      io.length_bytes = bytes;
      array->submit(io, [](const IoCompletion& c) { REQUIRE(c.status.is_ok()); });
    }
  }

  std::string text(std::optional<api::NbdMetrics> nbd = std::nullopt) {
    api::MetricsContext context{"ise-860-g3", "0.1.0", nbd};
    return api::metrics_text(api::collect_metrics(*array, telemetry.get(), context));
  }
};

// "name{labels} value" lines → value, keyed by everything before the value.
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

// Runs `promtool check metrics` on `text`; returns its exit status and output.
std::pair<int, std::string> promtool(const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string in = (dir / ("afasim-metrics-" + std::to_string(::getpid()) + ".txt")).string();
  const std::string out = in + ".out";
  std::ofstream(in) << text;
  const int status = std::system(("promtool check metrics < " + in + " > " + out + " 2>&1").c_str());
  std::ifstream o(out);
  std::stringstream ss;
  ss << o.rdbuf();
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  return {WEXITSTATUS(status), ss.str()};
}

}  // namespace

TEST_CASE("volume counters and histograms count the I/O the test issued") {
  Fixture f;
  const Id a = f.volume("db01");
  f.io(a, IoOp::kRead, 300, 4096);
  f.io(a, IoOp::kWrite, 120, 8192);
  f.sim.run_until(2 * kSecond);
  const auto m = samples(f.text());
  const std::string l = "volume_id=\"" + std::to_string(a) + "\",volume=\"db01\"";
  CHECK(m.at("afasim_volume_ios_total{" + l + ",op=\"read\"}") == 300);
  CHECK(m.at("afasim_volume_ios_total{" + l + ",op=\"write\"}") == 120);
  CHECK(m.at("afasim_volume_bytes_total{" + l + ",op=\"read\"}") == 300 * 4096);
  CHECK(m.at("afasim_volume_bytes_total{" + l + ",op=\"write\"}") == 120 * 8192);
  CHECK(m.at("afasim_volume_errors_total{" + l + "}") == 0);
  CHECK(m.at("afasim_volume_latency_seconds_count{" + l + ",op=\"read\"}") == 300);
  CHECK(m.at("afasim_volume_latency_seconds_bucket{" + l + ",op=\"read\",le=\"+Inf\"}") == 300);
  // Reads through an idle ISE take ~0.1-0.2 ms (docs/performance-model.md): none under
  // 50 µs, all under 10 ms.
  CHECK(m.at("afasim_volume_latency_seconds_bucket{" + l + ",op=\"read\",le=\"5e-05\"}") == 0);
  CHECK(m.at("afasim_volume_latency_seconds_bucket{" + l + ",op=\"read\",le=\"0.01\"}") == 300);
  CHECK(m.at("afasim_volume_state{" + l + ",state=\"online\"}") == 1);
  CHECK(m.at("afasim_volume_state{" + l + ",state=\"degraded\"}") == 0);
  CHECK(m.at("afasim_volume_capacity_bytes{" + l + "}") == 1 << 30);
  // A fixed volume is allocated whole.
  CHECK(m.at("afasim_volume_allocated_bytes{" + l + "}") >= 1 << 30);
  // The controller that owns it served them all; the array's clock is where the test left it.
  CHECK(m.at("afasim_controller_ios_total{controller=\"A\",op=\"read\"}") +
            m.at("afasim_controller_ios_total{controller=\"B\",op=\"read\"}") ==
        300);
  CHECK(m.at("afasim_simulated_time_seconds") == 2);
  CHECK(m.at("afasim_controller_state{controller=\"A\",state=\"active\"}") == 1);
  CHECK(m.at("afasim_power_mains_on") == 1);
  CHECK(m.at("afasim_drive_state{drive=\"1\",datapac=\"1\",slot=\"1\",state=\"healthy\"}") == 1);
}

TEST_CASE("pool, drive, rebuild and alert families follow a drive failure") {
  Fixture f;
  const Id a = f.volume("db01");
  const int drive = f.array->data_path().extent_records(a).front().members.front().drive + 1;
  FaultSpec fail;
  fail.type = "drive_fail";
  fail.drive = drive;
  REQUIRE(f.array->inject_fault(fail).is_ok());
  f.sim.run_until(f.sim.now() + 1);
  const auto m = samples(f.text());
  const int datapac = drive <= 20 ? 1 : 2;
  const int slot = drive <= 20 ? drive : drive - 20;
  const std::string d = "drive=\"" + std::to_string(drive) + "\",datapac=\"" + std::to_string(datapac) +
                        "\",slot=\"" + std::to_string(slot) + "\"";
  CHECK(m.at("afasim_drive_state{" + d + ",state=\"failed\"}") == 1);
  CHECK(m.at("afasim_rebuild_active") == 1);
  CHECK(m.at("afasim_rebuild_total_bytes") > 0);
  CHECK(m.at("afasim_alerts_active") == 2);  // the volume degraded, the SSD failed
  CHECK(m.at("afasim_alert_active{kind=\"volume_degraded\",object=\"volume/" + std::to_string(a) +
             "\",severity=\"warning\"}") == 1);
  CHECK(m.at("afasim_alert_active{kind=\"drive_failed\",object=\"drive/" + std::to_string(drive) +
             "\",severity=\"error\"}") == 1);
  const PoolCapacity cap = f.array->pool_capacity(f.array->pools().begin()->first);
  CHECK(m.at("afasim_pool_provisioned_bytes{pool_id=\"1\",pool=\"" + f.array->pools().begin()->second.name +
             "\"}") == static_cast<double>(cap.provisioned_bytes));
}

TEST_CASE("promtool check metrics passes on the whole exposition, NBD families included") {
  Fixture f;
  const Id a = f.volume("db01");
  f.volume("logs.v2-x_y");  // every character a name may hold
  f.io(a, IoOp::kRead, 50, 4096);
  f.sim.run_until(kSecond + 1);
  const std::string text = f.text(api::NbdMetrics{2, 5, 0, 3, 1234, 1, 0});
  const auto m = samples(text);
  CHECK(m.at("afasim_nbd_connections") == 2);
  CHECK(m.at("afasim_nbd_requests_total") == 1234);
  CHECK(m.at("afasim_nbd_connections_evicted_total") == 3);
  const auto [status, output] = promtool(text);
  INFO(output);
  CHECK(status == 0);
  // Without NBD context the NBD families are absent.
  CHECK(f.text().find("afasim_nbd_") == std::string::npos);
}
