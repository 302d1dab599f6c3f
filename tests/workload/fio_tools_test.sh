#!/usr/bin/env bash
# fio's own post-processing tools on afasim's output (issue 16 part 2): fio_jsonplus_clat2csv
# (json+), fio2gnuplot (bw logs) and fio-histo-log-pctiles.py (histogram logs), as Debian's fio
# package ships them. Each must accept the files and agree with afasim's own counts.
# Exit 77 (skipped) when a tool is missing.
set -euo pipefail
bin=${AFASIM_BINARY:?run through ctest}
histo_gz=/usr/share/doc/fio/fio-histo-log-pctiles.py.gz
for tool in fio_jsonplus_clat2csv fio2gnuplot python3; do
  command -v "$tool" >/dev/null || { echo "skip: $tool missing"; exit 77; }
done
[[ -f $histo_gz ]] || { echo "skip: $histo_gz missing"; exit 77; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
cat > job.fio <<'JOB'
[global]
filename=v
size=64m
time_based
runtime=2s
iodepth=8
write_bw_log=t
write_lat_log=t
write_iops_log=t
write_hist_log=t
log_hist_msec=500
log_avg_msec=250
[r]
rw=randrw
bs=4k
JOB
"$bin" fio job.fio --output-format json+ --output out.json --quiet
read_ios=$(python3 -c 'import json; print(json.load(open("out.json"))["jobs"][0]["read"]["total_ios"])')
write_ios=$(python3 -c 'import json; print(json.load(open("out.json"))["jobs"][0]["write"]["total_ios"])')

# json+ -> CSV, then the tool's own check of the CSV against the JSON bins.
fio_jsonplus_clat2csv out.json out.csv > csv.log
fio_jsonplus_clat2csv out.json out.csv --validate | grep -q "out_job0.csv validated"
# The last read clat cumulative count is every read.
csv_reads=$(python3 - <<'PY'
import csv
rows = list(csv.reader(open("out_job0.csv")))
col = [c.strip() for c in rows[0]].index("read_clat_ns_cumulative")
print(max(int(r[col]) for r in rows[1:] if r[col].strip()))
PY
)
[[ $csv_reads == "$read_ios" ]] || { echo "json+ CSV has $csv_reads reads, JSON $read_ios"; exit 1; }

# bw logs -> fio2gnuplot's per-file statistics and gnuplot scripts (no rendering).
mkdir plots
fio2gnuplot -b -d plots > plots.log
[[ -s plots/result.average ]] || { echo "fio2gnuplot wrote no averages"; cat plots.log; exit 1; }
grep -q "t_bw.1.log" plots.log

# histogram log -> percentiles per second; its sample counts add up to every completion.
zcat "$histo_gz" > histo.py
python3 histo.py t_clat_hist.1.log > pctiles.txt
samples=$(awk -F, '/^ *[0-9]+,/ {s += $2} END {print s}' pctiles.txt)
[[ $samples == $((read_ios + write_ios)) ]] ||
  { echo "histogram log has $samples samples, JSON $((read_ios + write_ios))"; cat pctiles.txt; exit 1; }
echo "ok: json+ $read_ios reads, hist log $samples samples, fio2gnuplot $(wc -l < plots/result.average) lines"
