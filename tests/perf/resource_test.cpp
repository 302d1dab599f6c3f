// perf::Resource and perf::Flow: FIFO service in arrival order, parallel servers, bandwidth,
// latency, and the property the old busy-until data path lacked: nothing is booked ahead of
// its time (issue 13).
#include <doctest/doctest.h>

#include <array>

#include "perf/flow.h"
#include "perf/resource.h"

using namespace afasim;
using sim::kMicrosecond;

namespace {
perf::ResourceOptions opts(int servers, std::int64_t bps = 0, sim::Time op = 0, sim::Time lat = 0) {
  perf::ResourceOptions o;
  o.name = "r";
  o.servers = servers;
  o.bytes_per_second = bps;
  o.ns_per_op = op;
  o.latency_ns = lat;
  return o;
}
}  // namespace

TEST_CASE("Resource: one server serves in arrival order; the second waits for the first") {
  perf::Resource r(opts(1, 0, 10 * kMicrosecond));
  CHECK(r.admit(0, 0) == 10 * kMicrosecond);
  CHECK(r.admit(2 * kMicrosecond, 0) == 20 * kMicrosecond);  // queued 8 µs behind the first
  CHECK(r.admit(30 * kMicrosecond, 0) == 40 * kMicrosecond);  // idle server: no wait
  CHECK(r.stats().wait_ns == 8 * kMicrosecond);
  CHECK(r.stats().ops == 3);
}

TEST_CASE("Resource: k servers serve k at once; bytes cost bytes / rate; latency occupies no server") {
  // 800 MB/s (an 8 Gb FC port's payload rate, config/sources.json fc-8g): 8 KiB in 10.24 µs.
  perf::Resource port(opts(1, 800'000'000, 0, 10 * kMicrosecond));
  CHECK(port.service_ns(8192) == 10'240);
  CHECK(port.admit(0, 8192) == 10'240 + 10'000);
  CHECK(port.admit(0, 8192) == 20'480 + 10'000);  // the wire is busy, the latency overlaps
  perf::Resource cores(opts(6));
  for (int i = 0; i < 6; ++i) CHECK(cores.admit(0, 0, 30 * kMicrosecond) == 30 * kMicrosecond);
  CHECK(cores.admit(0, 0, 30 * kMicrosecond) == 60 * kMicrosecond);  // the seventh waits
  CHECK(cores.utilisation(60 * kMicrosecond) == doctest::Approx(7.0 * 30 / (6 * 60)));
}

TEST_CASE("ResourceOptions: out-of-range values are errors naming the field") {
  CHECK(opts(0).validate().message().find("servers") != std::string::npos);
  CHECK(opts(1, -1).validate().message().find("bytes_per_second") != std::string::npos);
  CHECK(opts(1, 0, -5).validate().message().find("ns_per_op") != std::string::npos);
  CHECK(opts(1, 0, 0, -1).validate().message().find("latency_ns") != std::string::npos);
  CHECK(opts(4, 1000, 5, 5).validate().is_ok());
}

TEST_CASE("Flow: a step is admitted when the request reaches it, not when the request starts") {
  // The bug of the old data mover (issue 13): a read that will need the data mover after a
  // 100 µs SSD read booked it at submission, so a write arriving at 50 µs queued behind a
  // booking for 100 µs. With Flow the write finds the mover free at 50 µs.
  sim::Simulator s(1);
  perf::Flow flow(s);
  perf::Resource ssd(opts(1, 0, 100 * kMicrosecond));
  perf::Resource mover(opts(1, 0, 10 * kMicrosecond));
  sim::Time read_done = -1, write_done = -1;
  const std::array<perf::Step, 2> read{perf::Step{&ssd, 0, 0}, perf::Step{&mover, 0, 0}};
  flow.start(read, [&](sim::Time t) { read_done = t; });
  s.at(50 * kMicrosecond, [&] {
    const std::array<perf::Step, 1> write{perf::Step{&mover, 0, 0}};
    flow.start(write, [&](sim::Time t) { write_done = t; });
  });
  s.run();
  CHECK(write_done == 60 * kMicrosecond);   // the old model gave 120 µs
  CHECK(read_done == 110 * kMicrosecond);
  CHECK(mover.stats().wait_ns == 0);
  CHECK(flow.in_flight() == 0);
}

TEST_CASE("Flow: a join finishes when its last branch does") {
  sim::Simulator s(1);
  perf::Flow flow(s);
  perf::Resource a(opts(1, 0, 30 * kMicrosecond)), b(opts(1, 0, 70 * kMicrosecond));
  sim::Time done_at = -1;
  const auto join = flow.join(2, [&](sim::Time t) { done_at = t; });
  const std::array<perf::Step, 1> sa{perf::Step{&a, 0, 0}}, sb{perf::Step{&b, 0, 0}};
  flow.start(sa, flow.branch_done(join));
  flow.start(sb, flow.branch_done(join));
  s.run();
  CHECK(done_at == 70 * kMicrosecond);
}
