// bench_engine: how fast the I/O engine simulates. 4K random read at 16 jobs × iodepth 16
// on four RAID10 LUNs of an ISE 860 G3 (fixed volumes, payload none), and side by side a
// baseline: the bare event kernel running the same number of events with trivial actions.
// Prints simulated host I/Os per wall second, the real-time factor at the array's 4K read
// rate, and the engine's cost relative to the kernel alone. Then, side by side, the bare
// device: 4K random read on the Liqid LQD4500 (8 XG5-P behind a PCIe 4.0 switch) through
// the host NVMe queue model, 8 jobs x QD128, filled, with the I/Os per wall second of both
// and their ratio. Not a test: no thresholds.
#include <chrono>
#include <cstdio>
#include <ctime>

#include "config/preset.h"
#include "controller/array.h"
#include "ssd/device.h"
#include "workload/device_target.h"
#include "workload/fio_runner.h"

using namespace afasim;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds of this process: on a shared machine, wall time also counts other work.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const int sim_seconds = argc > 1 ? std::atoi(argv[1]) : 20;
  const auto catalog = config::Catalog::embedded().value();
  const auto preset = catalog.system("ise-860-g3").value();
  sim::Simulator sim(1);
  controller::MemoryJournal journal;
  auto array = controller::Array::open(sim, catalog, preset, journal, journal.snapshot()).value();
  std::string job =
      "[global]\nrw=randread\nbs=4k\niodepth=16\nnumjobs=4\nsize=128g\ntime_based\nruntime=" +
      std::to_string(sim_seconds) + "s\ngroup_reporting\n";
  for (int l = 0; l < 4; ++l) job += "[lun" + std::to_string(l) + "]\nfilename=lun" + std::to_string(l) + "\n";
  auto file = workload::parse_fio_job_file(job, "bench.fio").value();
  workload::FioRunOptions options;
  options.provisioning = controller::Provisioning::kFixed;
  AFASIM_ASSERT(workload::prepare_volumes(*array, file, options).is_ok(), "volumes");

  const std::uint64_t events_before = sim.events_executed();
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  auto report = workload::run_fio(*array, sim, file, options).value();
  const double engine_wall = seconds_since(t0);
  const double engine_cpu = cpu_seconds() - c0;
  const std::uint64_t events = sim.events_executed() - events_before;
  std::uint64_t ios = 0;
  for (const auto& r : report.results) ios += r.direction[0].io_count;
  const double sim_iops = static_cast<double>(ios) / sim_seconds;

  // Baseline: the kernel alone, 256 self-rescheduling events (the same number in flight),
  // the same number of events in total, spread over their 900 µs period as a run's I/O is
  // (sim::EventQueue's buckets are 1 µs: all 256 in one would be its worst case, not this).
  sim::Simulator bare(1);
  std::uint64_t left = events;
  struct Tick {
    sim::Simulator* s;
    std::uint64_t* left;
    sim::Time step;
    void operator()() const {
      if (*left == 0) return;
      --*left;
      s->after(step, Tick{s, left, step});
    }
  };
  for (int i = 0; i < 256; ++i) bare.after(i * 3'517, Tick{&bare, &left, 900'000});
  const auto t1 = std::chrono::steady_clock::now();
  bare.run();
  const double kernel_wall = seconds_since(t1);

  std::printf("bench_engine: 4K random read, RAID10, 16 jobs x QD16, payload none, %d s simulated\n", sim_seconds);
  std::printf("  simulated host I/Os      %12llu  (%.0f IOPS in virtual time)\n", static_cast<unsigned long long>(ios), sim_iops);
  std::printf("  engine wall time         %12.3f s  -> %.2f M simulated I/Os per wall second\n", engine_wall,
              static_cast<double>(ios) / engine_wall / 1e6);
  std::printf("  engine CPU time          %12.3f s  -> %.2f M simulated I/Os per CPU second\n", engine_cpu,
              static_cast<double>(ios) / engine_cpu / 1e6);
  std::printf("  real-time factor         %12.2f x  (virtual seconds per wall second at %.0fk IOPS)\n",
              sim_seconds / engine_wall, sim_iops / 1e3);
  std::printf("  events                   %12llu  (%.2f per I/O)\n", static_cast<unsigned long long>(events),
              static_cast<double>(events) / static_cast<double>(ios));
  std::printf("  baseline: bare kernel    %12.3f s for the same events -> %.1f M events/s\n", kernel_wall,
              static_cast<double>(events) / kernel_wall / 1e6);
  std::printf("  ratio engine / kernel    %12.2f x  (cost of the model over the event queue alone)\n",
              engine_wall / kernel_wall);

  // The bare device, same fio engine, no array.
  const int dev_ms = argc > 2 ? std::atoi(argv[2]) : 1000;
  sim::Simulator dsim(1);
  auto spec = catalog.device("liqid-lqd4500").value();
  workload::DeviceTarget target(dsim, ssd::Device::create(spec, {ssd::StartState::kFilled, 1.0}).value());
  const std::string djob = "[global]\nrw=randread\nbs=4k\niodepth=128\nnumjobs=8\nsize=1t\ntime_based\nruntime=" +
                           std::to_string(dev_ms) + "ms\ngroup_reporting\n[dev]\nfilename=dev\n";
  auto dfile = workload::parse_fio_job_file(djob, "bench-device.fio").value();
  const auto t2 = std::chrono::steady_clock::now();
  const double c2 = cpu_seconds();
  auto dreport = workload::run_fio(target, target.capacity_bytes(), dsim, dfile, {}).value();
  const double device_wall = seconds_since(t2);
  const double device_cpu = cpu_seconds() - c2;
  std::uint64_t dios = 0;
  for (const auto& r : dreport.results) dios += r.direction[0].io_count;
  const double device_rate = static_cast<double>(dios) / device_wall;
  std::printf("bench_engine: bare device liqid-lqd4500, 4K random read, 8 jobs x QD128, %d ms simulated\n", dev_ms);
  std::printf("  simulated device I/Os    %12llu  (%.0f IOPS in virtual time)\n", static_cast<unsigned long long>(dios),
              static_cast<double>(dios) * 1000.0 / dev_ms);
  std::printf("  wall time                %12.3f s  -> %.2f M simulated device I/Os per wall second\n", device_wall,
              device_rate / 1e6);
  std::printf("  CPU time                 %12.3f s  -> %.2f M simulated device I/Os per CPU second\n", device_cpu,
              static_cast<double>(dios) / device_cpu / 1e6);
  std::printf("  side by side (wall)      ISE engine %.2f M/s, bare LQD4500 %.2f M/s (ratio %.2f)\n",
              static_cast<double>(ios) / engine_wall / 1e6, device_rate / 1e6,
              device_rate / (static_cast<double>(ios) / engine_wall));
  std::printf("  side by side (CPU)       ISE engine %.2f M/s, bare LQD4500 %.2f M/s (ratio %.2f)\n",
              static_cast<double>(ios) / engine_cpu / 1e6, static_cast<double>(dios) / device_cpu / 1e6,
              (static_cast<double>(dios) / device_cpu) / (static_cast<double>(ios) / engine_cpu));
  return 0;
}
