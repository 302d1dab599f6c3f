#!/usr/bin/env bash
# Replays a synthetic DiskSim trace of GB gigabytes (default 10) through `afasim trace -`,
# generated on the fly into a pipe (no file on disk), and prints the records replayed, the
# CPU time and the peak RSS: the trace is streamed, so RSS stays flat whatever its length
# (docs/workloads.md "Trace replay", docs/performance.md).
# Usage: bench/trace/big_trace.sh [GB, may be fractional] [AFASIM_BINARY]
set -euo pipefail
gb=${1:-10}
bin=${2:-${AFASIM_BINARY:-build/app/afasim}}
bytes=$(awk -v gb="$gb" 'BEGIN { printf "%.0f", gb * 1e9 }')
# 4K I/O, 70 % reads, 4 devices of 128 GiB, one arrival every 5 µs; ~40 bytes a line.
generate() {
  awk -v limit="$bytes" 'BEGIN {
    srand(1); t = 0; n = 0; written = 0;
    while (written < limit) {
      line = sprintf("%.3f %d %d 8 %d\n", t, n % 4, int(rand() * 33554432) * 8, rand() < 0.7);
      printf "%s", line; written += length(line); t += 0.005; n++;
    }
  }'
}
replay=$(cat <<'PY'
import os, subprocess, sys, json
proc = subprocess.Popen([sys.argv[1], "trace", "-", "--format", "disksim", "--iodepth", "256",
                         "--volume-size", "128g", "--interval", "60s", "--output-format", "json",
                         "--quiet"], stdin=sys.stdin, stdout=subprocess.PIPE)
last = b""
for line in proc.stdout:
    last = line
_, status, usage = os.wait4(proc.pid, 0)
totals = json.loads(last)["totals"]
cpu = usage.ru_utime + usage.ru_stime
print(f"big_trace: {totals['records']} records replayed (exit {status >> 8}), "
      f"{totals['end_s']:.0f} s simulated, {cpu:.0f} CPU-s "
      f"({totals['records'] / cpu / 1e6:.2f} M per CPU-s), peak RSS {usage.ru_maxrss / 1024:.0f} MB")
PY
)
generate | python3 -c "$replay" "$bin"
