#!/usr/bin/env bash
# Golden outputs: what a change to the engine must leave byte-identical (docs/performance.md).
#
#   scripts/golden.sh BIN OUTDIR      run BIN (an afasim binary) on the shipped job files
#                                     (each with RAID10 and RAID5, runtime cut to 2 s and
#                                     ramp_time to 0.5 s, json+, seed 1) and the shipped
#                                     scenarios (JSON report, seed 1); one file per run in OUTDIR
#   scripts/golden.sh --compare A B   cmp every file of A with B's; exit 1 when any differ
#
# Two binaries are compared by running each into its own folder, then --compare. Paths inside
# the outputs (the job file's own) are written relative to OUTDIR so two folders compare equal.
set -euo pipefail

if [[ "${1:-}" == "--compare" ]]; then
  [[ $# -eq 3 ]] || { echo "usage: $0 --compare DIR_A DIR_B" >&2; exit 2; }
  same=0 differ=0
  for a in "$2"/*.json; do
    b="$3/$(basename "$a")"
    if [[ -f "$b" ]] && cmp -s "$a" "$b"; then same=$((same + 1)); else differ=$((differ + 1)); echo "differs: $(basename "$a")"; fi
  done
  echo "$same identical, $differ differ"
  [[ $differ -eq 0 ]]
  exit
fi

[[ $# -eq 2 ]] || { echo "usage: $0 BIN OUTDIR | $0 --compare DIR_A DIR_B" >&2; exit 2; }
bin=$(realpath "$1")
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$2"
out=$(realpath "$2")
cd "$out"
for job in "$src"/config/workloads/*.fio; do
  name=$(basename "$job" .fio)
  sed -E -e 's/^runtime=[1-9][0-9]*s?$/runtime=2s/' -e 's/^ramp_time=[1-9][0-9]*s?$/ramp_time=500ms/' "$job" > "$name.fio"
  for raid in RAID10 RAID5; do
    echo "== $name $raid" >&2
    "$bin" fio "$name.fio" --raid-type "$raid" --seed 1 --output-format json+ --quiet > "$name-$raid.json" || echo "   exit $?" >&2
  done
done
for scenario in "$src"/config/scenarios/*.json; do
  name=$(basename "$scenario" .json)
  echo "== scenario $name" >&2
  "$bin" run "$scenario" --format json --seed 1 --quiet > "scenario-$name.json" || echo "   exit $?" >&2
done
