// Runs fio jobs against the simulated array in virtual time (docs/workloads.md).
//
// Each clone (numjobs) of each job keeps `iodepth` I/Os in flight on its volume through
// controller::Array::submit — the same path NBD clients take — paced by rate_iops /
// rate_bytes_per_second, ramped and timed by ramp_time / runtime / time_based, in
// reporting groups ordered by stonewall / wait_for. Results fill workload::RunReport, which
// formats as fio's text or JSON. Volumes named by `filename=` are created in the array's
// pool (or reused when they exist and are large enough).
//
// Deterministic: the same array state, job files, options and seed give the same report.
// Not thread-safe: runs on the thread that owns the Simulator and Array.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "controller/array.h"
#include "sim/simulator.h"
#include "workload/fio_job.h"
#include "workload/fio_report.h"

namespace afasim::workload {

struct FioRunOptions {
  std::uint64_t seed = 1;
  // How volumes that do not exist yet are created.
  raid::RaidType raid_type = raid::RaidType::kRaid10;
  controller::Provisioning provisioning = controller::Provisioning::kThin;
  // Called every simulated 100 ms with a one-line status; the caller decides whether to
  // print (e.g. once per wall second). Never changes the run.
  std::function<void(const std::string& line)> progress;
};

// Creates (or checks) the volumes `file` names. kUnprocessable naming the job file and line
// when an existing volume is too small or has another RAID type; the Array's errors
// otherwise (kNoSpace for fixed volumes that do not fit).
sim::Status prepare_volumes(controller::Array& array, const FioJobFile& file, const FioRunOptions& options);

// Runs every job of `file` to completion. The result holds one JobResult per clone.
// Errors of the I/O itself (ENOSPC, EIO) stop the clone and are reported in its result,
// as fio does; the Status is for failures to set up (volumes).
sim::Result<RunReport> run_fio(controller::Array& array, sim::Simulator& sim, const FioJobFile& file,
                               const FioRunOptions& options);

}  // namespace afasim::workload
