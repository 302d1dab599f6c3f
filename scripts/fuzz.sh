#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a given time each (`make fuzz`).
#   scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]     (TARGET: http_request, cli, ...)
# Each target starts from its seed corpus (tests/fuzz/corpus/NAME, never written to) plus
# what earlier runs found (BUILD_DIR/fuzz-corpus/NAME). A crash leaves its input in
# BUILD_DIR/fuzz-crashes/; fix the bug, then copy the input into tests/fuzz/corpus/NAME so
# that `make test` replays it for good. Prints the executions per target and the coverage
# libFuzzer reached (cov: edges, ft: features; its last status line); exits 1 on a crash.
set -uo pipefail
build=${1:?build dir}
seconds=${2:?seconds}
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$build"/tests/fuzz/fuzz_*; do [[ -x $f ]] && targets+=("${f##*/fuzz_}"); done
fi
mkdir -p "$build/fuzz-crashes"
status=0
printf '%-14s %14s %10s %8s %8s %s\n' target executions exec/s cov ft result
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  work="$build/fuzz-corpus/$t"
  mkdir -p "$work"
  log="$build/fuzz-$t.log"
  "$bin" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$build/fuzz-crashes/$t-" "$work" "$src/tests/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  ft=$(grep -o 'ft: [0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  result=ok
  if ((rc != 0)); then
    result="CRASH (rc $rc): $(ls -t "$build"/fuzz-crashes/"$t"-* 2>/dev/null | head -1), log $log"
    status=1
  fi
  printf '%-14s %14s %10s %8s %8s %s\n' "$t" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
exit $status
