// Which launcher started afasim (sweep/sweep_mpi.h, mpi_launch_from_environment): the
// variables Open MPI's mpirun, a PMIx launcher (srun --mpi=pmix) and a PMI-1/2 launcher
// (MPICH's hydra, srun --mpi=pmi2) set, as `mpirun -np 4 env` shows them with Open MPI 4.1.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sweep/sweep_mpi.h"

namespace afasim::sweep {
namespace {

const char* const kLauncherVariables[] = {"OMPI_COMM_WORLD_RANK",
                                          "OMPI_COMM_WORLD_SIZE",
                                          "PMIX_RANK",
                                          "SLURM_STEP_NUM_TASKS",
                                          "PMI_RANK",
                                          "PMI_SIZE"};

// Sets exactly `vars` of the launcher variables for its lifetime, then puts back what was there
// (the test may itself run under a launcher).
class LauncherEnvironment {
 public:
  explicit LauncherEnvironment(const std::vector<std::pair<const char*, const char*>>& vars) {
    for (const char* name : kLauncherVariables) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      unsetenv(name);
    }
    for (const auto& [name, value] : vars) setenv(name, value, 1);
  }
  ~LauncherEnvironment() {
    for (const auto& [name, value] : saved_)
      value ? (void)setenv(name, value->c_str(), 1) : (void)unsetenv(name);
  }

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

std::optional<std::pair<int, int>> launch(
    const std::vector<std::pair<const char*, const char*>>& vars) {
  LauncherEnvironment env(vars);
  const auto l = mpi_launch_from_environment();
  if (!l) return std::nullopt;
  return std::pair{l->rank, l->size};
}

}  // namespace

TEST_CASE(
    "mpi_launch_from_environment: a plain afasim sweep, mpirun, srun --mpi=pmix, a PMI launcher") {
  CHECK(launch({}) == std::nullopt);
  // Open MPI's mpirun sets PMIX_RANK too; its own variables come first.
  CHECK(
      launch({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"PMIX_RANK", "2"}}) ==
      std::pair{2, 4});
  CHECK(launch({{"PMIX_RANK", "0"}, {"SLURM_STEP_NUM_TASKS", "64"}}) == std::pair{0, 64});
  CHECK(launch({{"PMIX_RANK", "3"}}) == std::pair{3, 0});  // size unknown
  CHECK(launch({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}) == std::pair{1, 2});
  // Not numbers: no launcher of ours.
  CHECK(launch({{"PMI_RANK", "one"}}) == std::nullopt);
  CHECK(launch({{"OMPI_COMM_WORLD_RANK", "-1"}}) == std::nullopt);
  CHECK(launch({{"OMPI_COMM_WORLD_RANK", ""}}) == std::nullopt);
  // SLURM_STEP_NUM_TASKS alone (a batch script, not a task srun started) is no launch.
  CHECK(launch({{"SLURM_STEP_NUM_TASKS", "4"}}) == std::nullopt);
}

}  // namespace afasim::sweep
