#!/usr/bin/env bash
# afasim sweep over MPI (issue 18 part 2, docs/sweeps.md "MPI and Slurm"), with Open MPI's
# mpirun on this machine, more ranks than cores (--oversubscribe):
#  1. the shipped config/sweeps/raid-vs-rebuild-rate.json (48 runs): 3 runs on one rank
#     (-np 1: rank 0 coordinates and runs; --max-runs stops it), then the rest resumed on 4
#     ranks, give results.csv, summary.csv and results.json byte for byte as `afasim sweep
#     --jobs 2` without MPI;
#  2. bad input under mpirun -np 4 ends every rank, with the exit code of the command without
#     MPI and one message: a bad sweep file (2), an --out that cannot be created (1), a
#     rows.jsonl of another sweep (2). Each mpirun has a `timeout`: a hang fails the case.
# Environment (CMake sets it): AFASIM_BINARY, AFASIM_SOURCE_DIR, AFASIM_MPIEXEC.
# Exit 77 (skipped) when AFASIM_MPIEXEC is not Open MPI's mpirun (its flags are used here).
set -euo pipefail

afasim=${AFASIM_BINARY:?set by ctest}
source_dir=${AFASIM_SOURCE_DIR:?set by ctest}
mpirun=${AFASIM_MPIEXEC:?set by ctest}
sweep=$source_dir/config/sweeps/raid-vs-rebuild-rate.json
limit_s=120  # per mpirun: the whole sweep takes ~5 s of wall on 2 idle cores

if ! "$mpirun" --version 2>/dev/null | grep -qE "Open MPI|OpenRTE"; then
  echo "sweep_mpi: $mpirun is not Open MPI's mpirun; skipped" >&2
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# mpi NP ARGS...: afasim under mpirun with NP ranks; its stderr in $work/err, exit code in $code.
mpi() {
  local np=$1
  shift
  code=0
  timeout "$limit_s" "$mpirun" --oversubscribe -np "$np" "$afasim" "$@" 2>"$work/err" >/dev/null || code=$?
  if ((code == 124)); then fail "mpirun -np $np afasim $* did not end within $limit_s s"; fi
}

# 1. The shipped sweep: without MPI on two threads; under MPI on 1 rank, then 4.
"$afasim" sweep "$sweep" --out "$work/threads" --jobs 2 --quiet
mpi 1 sweep "$sweep" --out "$work/ranks" --max-runs 3 --quiet
((code == 0)) || fail "-np 1 --max-runs 3: exit $code: $(cat "$work/err")"
grep -q "stopped by --max-runs: 3 of 48 runs done" "$work/err" || fail "-np 1 --max-runs 3: $(cat "$work/err")"
[[ ! -e $work/ranks/results.csv ]] || fail "-np 1 --max-runs 3 wrote results.csv before every run had a row"
mpi 4 sweep "$sweep" --out "$work/ranks" --quiet
((code == 0)) || fail "-np 4: exit $code: $(cat "$work/err")"
grep -q "afasim sweep: 48 runs (6 points × 8 seeds), 0 failed" "$work/err" || fail "-np 4: $(cat "$work/err")"
rows=$(($(wc -l <"$work/ranks/rows.jsonl") - 1))
((rows == 48)) || fail "rows.jsonl holds $rows rows, not 48 (3 from -np 1, 45 from -np 4)"
for f in results.csv summary.csv results.json; do
  cmp "$work/threads/$f" "$work/ranks/$f" || fail "$f differs between --jobs 2 and mpirun"
done
lines=$(wc -l <"$work/ranks/results.csv")
((lines == 49)) || fail "results.csv has $lines lines, not a header and 2 RAID × 3 rates × 8 seeds"

# 2. Bad input: every rank ends, with the code of the command without MPI, one message.
# expect_failure CODE MESSAGE ARGS...: afasim ARGS under -np 4 exits CODE, MESSAGE once on stderr.
expect_failure() {
  local want=$1 message=$2
  shift 2
  mpi 4 "$@"
  ((code == want)) || fail "afasim $*: exit $code under mpirun, not $want: $(cat "$work/err")"
  local said
  said=$(grep -cF "$message" "$work/err" || true)
  ((said == 1)) || fail "afasim $*: '$message' printed $said times, not once: $(cat "$work/err")"
}
echo '{"schema": "afasim.sweep/1", "name": "b", "axes": [], "seeds": [1]}' >"$work/bad.json"
expect_failure 2 "afasim sweep: $work/bad.json: " sweep "$work/bad.json" --out "$work/bad"
touch "$work/file"
expect_failure 1 "afasim sweep: cannot create the folder $work/file/out" sweep "$sweep" --out "$work/file/out"
mkdir "$work/other"
echo '{"schema": "afasim.sweep-rows/1", "sweep": "x", "fingerprint": "0123456789abcdef"}' >"$work/other/rows.jsonl"
expect_failure 2 "afasim sweep: $work/other/rows.jsonl: the rows of another sweep" sweep "$sweep" --out "$work/other"

if ((failures > 0)); then
  echo "sweep_mpi: $failures failed" >&2
  exit 1
fi
echo "sweep_mpi: passed"
