#!/bin/bash
# release_build.sh DIR JOBS: the release afasim, profile-guided (GCC -fprofile-use), in DIR/use/app/afasim.
#
# Three steps (docs/build.md "The release build"):
#   1. DIR/gen: afasim built with -fprofile-generate, its profile written under DIR/profile;
#   2. training (~30 s): that binary runs the shipped job files (config/workloads/*.fio, each
#      cut to 1 s, on RAID10 and RAID5) and the shorter shipped scenarios (TRAINING_SCENARIOS:
#      failover, rebuild, QoS, thin provisioning), seed 1;
#   3. DIR/use: afasim built with -fprofile-use from that profile, and link-time optimisation
#      (GCC -flto: inlining across the libraries, e.g. the event kernel's calls into the
#      controller's; GNU ld, as lld cannot read GCC's LTO objects).
# The code is the same and so are its results (the flags change only where GCC places and
# inlines code, not what it computes: no -ffast-math, no -march); what changes is speed, ~1.2x
# on the workloads of `make bench`, mostly fewer instruction-cache misses (docs/performance.md).
# Both builds are incremental; the profile is retrained on every run.
set -euo pipefail
dir=$(realpath -m "${1:?usage: release_build.sh DIR JOBS}")
jobs=${2:-$(nproc)}
src=$(cd "$(dirname "$0")/.." && pwd)
profile="$dir/profile"
export CCACHE_DISABLE=1  # the objects depend on the profile, which ccache's hash does not see

configure() {  # configure BUILD_DIR FLAGS [CMAKE_ARGS...]
  cmake -S "$src" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$2" "${@:3}" >/dev/null
}

echo "release build: 1/3 instrumented afasim in $dir/gen"
configure "$dir/gen" "-fprofile-generate=$profile -fprofile-prefix-path=$dir/gen -fprofile-update=single"
cmake --build "$dir/gen" -j "$jobs" --target afasim

echo "release build: 2/3 training on the shipped job files and scenarios"
rm -rf "$profile" "$dir/train"
mkdir -p "$dir/train"
for job in "$src"/config/workloads/*.fio; do
  name=$(basename "$job" .fio)
  sed -E 's/^runtime=.*/runtime=1s/' "$job" > "$dir/train/$name.fio"
  for raid in RAID10 RAID5; do
    (cd "$dir/train" && "$dir/gen/app/afasim" fio "$name.fio" --raid-type "$raid" --quiet >/dev/null)
  done
done
TRAINING_SCENARIOS="controller-failover drive-failure-rebuild drive-failure-short qos-burst qos-policy-change thin-fill"
for scenario in $TRAINING_SCENARIOS; do
  "$dir/gen/app/afasim" run "$src/config/scenarios/$scenario.json" --seed 1 --quiet >/dev/null
done

echo "release build: 3/3 profile-guided afasim in $dir/use"
# -Wno-coverage-mismatch: the sources generated into the build folder (the embedded presets,
# page and OpenAPI document) have a different path in gen/ and use/, which GCC reports as a
# changed function; everything else is built from the same files the profile was trained on.
# The LTO link gets -g, not the objects' -g1: GCC 12's link-time compiler stops with an internal
# error (force_decl_die, dwarf2out.cc) writing -g1 debug information; with -g the binary keeps
# its line tables for perf; -flto=JOBS (after CMake's -flto=auto) keeps the link to JOBS cores.
# -Wno-stringop-overflow: the link re-runs GCC's warnings over the inlined code and reports
# libstdc++'s own char_traits copy, which it cannot see is in bounds.
configure "$dir/use" "-fprofile-use=$profile -fprofile-prefix-path=$dir/use -fprofile-partial-training \
  -Wno-missing-profile -Wno-coverage-mismatch" -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON \
  -DCMAKE_EXE_LINKER_FLAGS="-g -flto=$jobs -Wno-stringop-overflow"
cmake --build "$dir/use" -j "$jobs" --target afasim
echo "release build: $dir/use/app/afasim"
