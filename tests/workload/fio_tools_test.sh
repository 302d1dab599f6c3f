#!/usr/bin/env bash
# fio's own post-processing tools on afasim's output (issue 16 part 2): fio_jsonplus_clat2csv
# (json+), fio2gnuplot (bw logs) and fio-histo-log-pctiles.py (histogram logs), as Debian's fio
# package ships them. Each must accept the files and agree with afasim's own counts. Then
# the CLI of issue 16: jobs on the command line, terse,json at once, --output, include,
# ${ENV} and --section; and afasim trace's exit codes and JSON lines.
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
# Jobs on the command line, two output formats at once, --output, and a job file with
# include, ${ENV} and --section.
"$bin" fio --name=cli --filename=/dev/sdb --size=16m --rw=randread --bs=4k --runtime=200ms \
  --time_based --output-format=terse,json --output cli.out --quiet
head -c 15 cli.out | grep -q '^3;fio-3.33;cli;' || { echo "terse line not first"; head -c 200 cli.out; exit 1; }
python3 - <<'PY'
text = open("cli.out").read()
import json
report = json.loads(text[text.index("\n") + 1:])
assert report["jobs"][0]["jobname"] == "cli", report["jobs"][0]["jobname"]
assert report["afasim"]["volumes"][0]["name"] == "sdb", report["afasim"]["volumes"]
assert report["jobs"][0]["read"]["total_ios"] > 0
PY
printf 'rw=randwrite\nbs=${BS}\n' > common.fio
printf '[a]\nfilename=a\nsize=8m\ninclude common.fio\nio_size=1m\n[b]\nfilename=b\nsize=8m\nio_size=1m\n' > two.fio
BS=64k "$bin" fio two.fio --section a --output-format json --quiet > two.json
python3 - <<'PY'
import json
report = json.load(open("two.json"))
assert [j["jobname"] for j in report["jobs"]] == ["a"], report["jobs"]
assert report["jobs"][0]["write"]["total_ios"] == 16, report["jobs"][0]["write"]["total_ios"]  # 1 MiB / 64 KiB
PY
if "$bin" fio two.fio --quiet > /dev/null 2> unset.err; then echo "an unset \${BS} passed"; exit 1; fi
grep -q 'common.fio:2: \${BS}: environment variable "BS" is not set' unset.err ||
  { echo "unexpected message:"; cat unset.err; exit 1; }

# afasim trace: a bad line stops the replay with FILE:LINE and exit 2; --skip-bad counts it;
# JSON lines end with the totals.
printf '0.0 0 0 8 1\n0.5 0 bad 8 1\n1.0 0 8 8 0\n' > t.disksim
if "$bin" trace t.disksim --quiet > /dev/null 2> trace.err; then echo "a bad trace line passed"; exit 1; fi
grep -qxF 'afasim trace: t.disksim:2: LBA "bad" is not a number (want a non-negative whole number)' trace.err ||
  { echo "unexpected message:"; cat trace.err; exit 1; }
"$bin" trace t.disksim --skip-bad --output-format json --quiet > trace.json
python3 - <<'PY'
import json
lines = [json.loads(l) for l in open("trace.json")]
totals = lines[-1]["totals"]
assert totals["records"] == 2 and totals["bad_lines"] == 1, totals
assert totals["first_bad"] == 't.disksim:2: LBA "bad" is not a number (want a non-negative whole number)', totals["first_bad"]
assert totals["volumes"][0]["volume"] == "dev0" and totals["volumes"][0]["reads"] == 1
assert any("row" in l for l in lines[:-1])
PY

echo "ok: json+ $read_ios reads, hist log $samples samples, fio2gnuplot $(wc -l < plots/result.average) lines"
