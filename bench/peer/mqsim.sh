#!/usr/bin/env bash
# MQSim (CMU SAFARI's SSD simulator, FAST'18) and afasim on the same DiskSim-format trace:
# prints requests per CPU-second (and peak RSS) for both. MQSim is not part of the repo: build
# it yourself and point MQSIM at the binary (docs/performance.md, "Side by side with MQSim").
#
# Usage: MQSIM=/path/to/MQSim bench/peer/mqsim.sh [REQUESTS] [READ_PERCENT]
#   REQUESTS      4 KiB requests in the trace (default 1,000,000)
#   READ_PERCENT  share of reads (default 100)
#   AFASIM        the afasim binary (default build/app/afasim)
#   MQSIM_CONFIG  MQSim's SSD configuration (default: ssdconfig.xml beside the MQSim binary,
#                 as its repository ships it; MQSim's built-in default SSD is far larger and
#                 spends many minutes preconditioning)
#
# The trace: REQUESTS 4 KiB requests, uniformly random over 64 GiB, one every 10 µs
# (100,000 IOPS), on one device. afasim reads it as DiskSim ASCII (arrival in ms) and replays
# it as recorded on an ISE 860 G3 (RAID10, thin volume); MQSim gets the same lines with the
# arrival in ns (its Time_Unit NANOSECOND), its shipped SSD configuration, 50 % preconditioned.
set -euo pipefail
: "${MQSIM:?set MQSIM=/path/to/MQSim (how to build it: docs/performance.md)}"
afasim=${AFASIM:-build/app/afasim}
requests=${1:-1000000}
read_percent=${2:-100}
[[ -x $MQSIM ]] || { echo "mqsim.sh: $MQSIM is not an executable" >&2; exit 2; }
[[ -x $afasim ]] || { echo "mqsim.sh: $afasim is not built (make build)" >&2; exit 2; }
afasim=$(realpath "$afasim")
mqsim=$(realpath "$MQSIM")
config=$(realpath "${MQSIM_CONFIG:-$(dirname "$mqsim")/ssdconfig.xml}")
[[ -f $config ]] || { echo "mqsim.sh: no SSD configuration $config (set MQSIM_CONFIG)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

awk -v n="$requests" -v reads="$read_percent" 'BEGIN {
  srand(1);
  for (i = 0; i < n; i++) {
    lba = int(rand() * 16777216) * 8;          # 64 GiB in 512-byte sectors, 4 KiB aligned
    flag = (rand() * 100 < reads) ? 1 : 0;     # DiskSim / MQSim: 1 = read, 0 = write
    printf "%.3f 0 %d 8 %d\n", i * 0.01, lba, flag > "trace.disksim";
    printf "%d 0 %d 8 %d\n", i * 10000, lba, flag > "trace.mqsim";
  }
}'

cat > workload.xml <<XML
<?xml version="1.0" encoding="us-ascii"?>
<MQSim_IO_Scenarios>
  <IO_Scenario>
    <IO_Flow_Parameter_Set_Trace_Based>
      <Priority_Class>HIGH</Priority_Class>
      <Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>
      <Channel_IDs>0,1,2,3,4,5,6,7</Channel_IDs>
      <Chip_IDs>0,1,2,3</Chip_IDs>
      <Die_IDs>0,1</Die_IDs>
      <Plane_IDs>0,1</Plane_IDs>
      <Initial_Occupancy_Percentage>50</Initial_Occupancy_Percentage>
      <File_Path>$dir/trace.mqsim</File_Path>
      <Percentage_To_Be_Executed>100</Percentage_To_Be_Executed>
      <Relay_Count>1</Relay_Count>
      <Time_Unit>NANOSECOND</Time_Unit>
    </IO_Flow_Parameter_Set_Trace_Based>
  </IO_Scenario>
</MQSim_IO_Scenarios>
XML

# Runs a command; prints "CPU_SECONDS PEAK_RSS_MB" (wait4 of the child).
measure() {
  python3 -c '
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=open("run.out", "w"),
                     stderr=open("run.err", "w"))
_, status, u = os.wait4(p.pid, 0)
if status != 0:
    sys.exit("mqsim.sh: %s failed (see %s)" % (sys.argv[1], os.getcwd()))
print("%.3f %.0f" % (u.ru_utime + u.ru_stime, u.ru_maxrss / 1024))' "$@"
}

cp "$config" ssdconfig.xml
read -r mq_cpu mq_rss < <(measure "$mqsim" -i "$dir/ssdconfig.xml" -w "$dir/workload.xml")
grep -q "total requests serviced:$requests" run.out ||
  { echo "mqsim.sh: MQSim did not serve all $requests requests:"; tail -5 run.out; exit 1; }
read -r af_cpu af_rss < <(measure "$afasim" trace trace.disksim --format disksim --volume-size 64g \
  --output-format json --quiet)

awk -v n="$requests" -v mc="$mq_cpu" -v mr="$mq_rss" -v ac="$af_cpu" -v ar="$af_rss" -v r="$read_percent" 'BEGIN {
  printf "mqsim.sh: %d requests of 4 KiB (%d %% reads), uniform over 64 GiB, 100k IOPS as recorded\n", n, r;
  printf "  %-8s %12s %14s %10s\n", "", "CPU s", "requests/CPU-s", "peak RSS";
  printf "  %-8s %12.2f %14.0f %7.0f MB\n", "MQSim", mc, n / mc, mr;
  printf "  %-8s %12.2f %14.0f %7.0f MB\n", "afasim", ac, n / ac, ar;
  printf "  afasim / MQSim: %.1fx requests per CPU-second\n", (n / ac) / (n / mc);
}'
