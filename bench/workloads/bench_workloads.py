#!/usr/bin/env python3
"""bench_workloads: how fast afasim simulates, side by side with a baseline build.

For each workload of issue 16 (ISE 860 G3, four 128 GiB LUNs, 16 jobs x 16 outstanding
I/Os: 4K random read on RAID10, 4K random write on RAID5 with the write-back cache, 8K 70/30
on RAID5) and for a trace replay (a DiskSim trace of 4K random I/O on four devices), it
prints simulated host I/Os per CPU-second and peak RSS, for this tree's afasim and for the
baseline, and their ratio. Not a test: no thresholds.

Method: each workload runs twice, for a short and a long simulated time; the rate is the
difference in completed I/Os over the difference in CPU time (user + system, from wait4),
so the array's setup (volume allocation, process start) cancels out. Peak RSS is the long
run's maxrss. On a shared machine one such rate scatters by +-20 % from run to run
(docs/performance.md), so each is measured BENCH_ROUNDS times (default 5), the binaries
alternated within each round in an order that turns from round to round, and the line
gives the median, the range, and the ratio of
the medians.

Baseline: the afasim of commit AFASIM_BASELINE_COMMIT (default 4676db3, the commit before
issue 16), from AFASIM_BASELINE=/path/to/afasim if set, else built once from the repository
(git archive of that commit into BUILD/bench-baseline/COMMIT, same build type as this
build) and reused on later runs. The baseline has no `afasim trace`: that row shows this
tree only.
"""
import json
import os
import shutil
import subprocess
import statistics
import sys
import tempfile

SOURCE_DIR = "@PROJECT_SOURCE_DIR@"
BUILD_DIR = "@PROJECT_BINARY_DIR@"
BUILD_TYPE = "@CMAKE_BUILD_TYPE@"
AFASIM = "@AFASIM_BINARY@"
BASELINE_COMMIT = os.environ.get("AFASIM_BASELINE_COMMIT", "4676db3")
RELEASE = os.environ.get("AFASIM_RELEASE", "")
SHORT_S, LONG_S = 1, 4  # simulated seconds of the two runs of each workload

WORKLOADS = [
    # (label, rw, bs, extra options, RAID type)
    ("4K random read, RAID10", "randread", "4k", "", "RAID10"),
    ("4K random write, RAID5 (write-back, parity)", "randwrite", "4k", "", "RAID5"),
    ("8K random 70/30, RAID5", "randrw", "8k", "rwmixread=70\n", "RAID5"),
]


# Volume layouts, all 16 jobs x QD16: the four 128 GiB LUNs of the workloads above; one
# 1,000 GiB volume; 1,000 volumes of 1 GiB, each job spreading its I/O round-robin over 62 or
# 63 of them (filename=a:b:...), so that the two differ only in how many volumes are active.
LAYOUT_LUNS, LAYOUT_ONE, LAYOUT_MANY = "4 LUNs", "1 volume", "1,000 volumes"
MANY_VOLUMES = 1000


def rounds_from_env():
    """BENCH_ROUNDS: how many alternated rounds each rate and the 1,000-volume cost ratio are
    measured in (default 5, 1-100)."""
    text = os.environ.get("BENCH_ROUNDS", "5")
    if not text.isdigit() or not 1 <= int(text) <= 100:
        sys.exit(f"bench_workloads: BENCH_ROUNDS={text!r}: expected a whole number of rounds, 1 to 100")
    return int(text)


ROUNDS = rounds_from_env()


def job_text(rw, bs, extra, seconds, layout=LAYOUT_LUNS):
    text = (f"[global]\nrw={rw}\nbs={bs}\n{extra}iodepth=16\nnorandommap\n"
            f"time_based\nruntime={seconds}s\ngroup_reporting\n")
    if layout == LAYOUT_LUNS:
        text += "numjobs=4\nsize=128g\n"
        for lun in range(4):
            text += f"[lun{lun}]\nfilename=lun{lun}\n"
    elif layout == LAYOUT_ONE:
        text += "numjobs=16\nsize=1000g\n[vol]\nfilename=vol\n"
    else:
        for job in range(16):
            volumes = [f"vol{v}" for v in range(job, MANY_VOLUMES, 16)]
            text += f"[job{job}]\nsize={len(volumes)}g\nfilename={':'.join(volumes)}\n"
    return text


class RunFailed(Exception):
    pass


def run(argv, cwd):
    """Runs argv; returns (stdout, cpu seconds, peak RSS in bytes). RunFailed with its stderr."""
    with open(os.path.join(cwd, "out"), "wb") as out, open(os.path.join(cwd, "err"), "wb") as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise RunFailed(f"{' '.join(argv)} failed:\n" + open(os.path.join(cwd, "err")).read())
    return open(os.path.join(cwd, "out")).read(), usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def fio_ios(report):
    ios = 0
    for job in json.loads(report)["jobs"]:
        for d in ("read", "write", "trim", "mixed"):
            if d in job:
                ios += job[d]["total_ios"]
    return ios


def measure_fio(binary, rw, bs, extra, raid, tmp, layout=LAYOUT_LUNS):
    points = []
    for seconds in (SHORT_S, LONG_S):
        path = os.path.join(tmp, f"job-{seconds}.fio")
        with open(path, "w") as f:
            f.write(job_text(rw, bs, extra, seconds, layout))
        out, cpu, rss = run([binary, "fio", path, "--raid-type", raid, "--provisioning", "fixed",
                             "--output-format", "json", "--quiet"], tmp)
        points.append((fio_ios(out), cpu, rss))
    return rate(points)


def rate(points):
    (ios1, cpu1, _), (ios2, cpu2, rss2) = points
    return (ios2 - ios1) / max(cpu2 - cpu1, 1e-3), rss2


def write_trace(path, seconds, iops=200_000):
    """A DiskSim trace: 4K I/O, 70 % reads, on 4 devices of 128 GiB, at `iops` arrivals/s."""
    rng = 0x9E3779B97F4A7C15
    step_ms = 1000.0 / iops
    with open(path, "w") as f:
        for i in range(int(seconds * iops)):
            rng = (rng * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
            lba = ((rng >> 20) % (128 * 2**30 // 4096)) * 8
            f.write(f"{i * step_ms:.4f} {i % 4} {lba} 8 {1 if (rng >> 8) % 10 < 7 else 0}\n")


def measure_trace(binary, tmp):
    points = []
    for seconds in (0.5, 2):
        path = os.path.join(tmp, f"trace-{seconds}.disksim")
        write_trace(path, seconds)
        out, cpu, rss = run([binary, "trace", path, "--volume-size", "128g", "--output-format", "json",
                             "--quiet"], tmp)
        totals = json.loads(out.strip().splitlines()[-1])["totals"]
        points.append((sum(v["ios"] for v in totals["volumes"]), cpu, rss))
    return rate(points)


def baseline_binary():
    if os.environ.get("AFASIM_BASELINE"):
        return os.environ["AFASIM_BASELINE"]
    root = os.path.join(BUILD_DIR, "bench-baseline", BASELINE_COMMIT)
    binary = os.path.join(root, "build", "app", "afasim")
    if os.path.exists(binary):
        return binary
    if subprocess.call(["git", "-C", SOURCE_DIR, "cat-file", "-e", BASELINE_COMMIT + "^{commit}"],
                       stderr=subprocess.DEVNULL) != 0:
        print(f"  (no baseline: commit {BASELINE_COMMIT} is not in {SOURCE_DIR}; set AFASIM_BASELINE)")
        return None
    print(f"  building the baseline afasim of {BASELINE_COMMIT} in {root} (once; a few minutes)...",
          flush=True)
    src = os.path.join(root, "src")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(src)
    archive = subprocess.Popen(["git", "-C", SOURCE_DIR, "archive", BASELINE_COMMIT], stdout=subprocess.PIPE)
    subprocess.check_call(["tar", "-x", "-C", src], stdin=archive.stdout)
    archive.wait()
    build = os.path.join(root, "build")
    subprocess.check_call(["cmake", "-S", src, "-B", build, "-G", "Ninja", f"-DCMAKE_BUILD_TYPE={BUILD_TYPE}"],
                          stdout=subprocess.DEVNULL)
    subprocess.check_call(["cmake", "--build", build, "--target", "afasim"], stdout=subprocess.DEVNULL)
    return binary


def main():
    print(f"bench_workloads: ISE 860 G3, 4 LUNs x 128 GiB (fixed), 16 jobs x QD16; rates from "
          f"{SHORT_S} s and {LONG_S} s simulated runs, median (range) of {ROUNDS} alternated rounds; "
          f"build type {BUILD_TYPE}")
    baseline = baseline_binary()
    release = RELEASE if RELEASE and os.access(RELEASE, os.X_OK) else None
    if RELEASE and not release:
        print(f"  (no release build at AFASIM_RELEASE={RELEASE}: `make release` builds it)")
    # AFASIM_BASELINE names a binary of any commit: the column says which file, not 4676db3.
    label = f"baseline {BASELINE_COMMIT}" if not os.environ.get("AFASIM_BASELINE") else "baseline (AFASIM_BASELINE)"
    print(f"  {'workload':45s} {'this tree':>30s}   {label:>30s}   ratio")
    print(f"  {'':45s} {'I/Os per CPU-s':>20s} {'peak RSS':>9s}   {'I/Os per CPU-s':>20s} {'peak RSS':>9s}")
    binaries = {"mine": AFASIM, "base": baseline, "release": release}
    with tempfile.TemporaryDirectory() as tmp:
        for name, rw, bs, extra, raid in WORKLOADS:
            got = {who: [] for who, binary in binaries.items() if binary}
            for r in range(ROUNDS):
                # The order turns each round, so no binary always runs first (a machine's
                # load drifts within a round too).
                order = list(got)
                for who in order[r % len(order):] + order[:r % len(order)]:
                    got[who].append(measure_fio(binaries[who], rw, bs, extra, raid, tmp))
                if sys.stderr.isatty():  # a progress line, overwritten by the result's
                    print(f"  ({name}: round {r + 1} of {ROUNDS})", end="\r", file=sys.stderr, flush=True)
            base = got.get("base")
            print(row(name, got["mine"], base), flush=True)
            if release:
                print(row("  release build (make release)", got["release"], base), flush=True)
        mine, mine_rss = measure_trace(AFASIM, tmp)
        print(row("trace replay: DiskSim, 4K 70/30, 200k IOPS", (mine, mine_rss),
                  "(afasim trace is new: no baseline)"), flush=True)
        many_volumes(baseline, tmp)


def many_volumes(baseline, tmp):
    """What an I/O costs with 1,000 active volumes against one: 4K random read, RAID10, the
    same 16 jobs x QD16 (LAYOUT_ONE, LAYOUT_MANY), side by side with the baseline.

    On a shared machine one pair of measurements scatters by +-25 % (docs/performance.md), so
    the cost ratio is measured ROUNDS times (one volume and 1,000, their order turned each
    round, alternated with the baseline's) and the median and the range are printed; the rate lines are the
    first round's."""
    ratios = {"this tree": [], "baseline": []}
    for r in range(ROUNDS):
        mine, base = {}, {}
        for layout in ((LAYOUT_ONE, LAYOUT_MANY) if r % 2 == 0 else (LAYOUT_MANY, LAYOUT_ONE)):
            for who in (("mine", "base") if r % 2 == 0 else ("base", "mine")):
                if who == "mine":
                    mine[layout] = measure_fio(AFASIM, "randread", "4k", "", "RAID10", tmp, layout)
                elif baseline:
                    try:
                        base[layout] = measure_fio(baseline, "randread", "4k", "", "RAID10", tmp, layout)
                    except RunFailed:
                        base[layout] = "(the baseline refused the job)"  # an older afasim may refuse filename=a:b

        if r == 0:
            for layout in (LAYOUT_ONE, LAYOUT_MANY):
                print(row("4K random read, RAID10, " + layout, mine[layout], base.get(layout)), flush=True)
        ratios["this tree"].append(mine[LAYOUT_ONE][0] / mine[LAYOUT_MANY][0])
        if all(isinstance(base.get(layout), tuple) for layout in (LAYOUT_ONE, LAYOUT_MANY)):
            ratios["baseline"].append(base[LAYOUT_ONE][0] / base[LAYOUT_MANY][0])
        print(f"  cost per I/O, 1,000 volumes / 1 volume, round {r + 1} of {ROUNDS}: " +
              ", ".join(f"{who} {v[-1]:.2f}x" for who, v in ratios.items() if v), flush=True)
    print("  cost per I/O, 1,000 volumes / 1 volume, median (range) of "
          f"{ROUNDS} rounds: " +
          ", ".join(f"{who} {statistics.median(v):.2f}x ({min(v):.2f}-{max(v):.2f})"
                    for who, v in ratios.items() if v), flush=True)


def row(name, mine, base):
    """One output line: this tree's rate and peak RSS, then the baseline's and the ratio.

    `mine` and `base` are a (rate, RSS) or a list of them from alternated rounds (the median
    rate with the range, and the largest RSS); `base` may be None (no baseline) or a sentence
    saying why there is none."""
    line = f"  {name:45s} {cell(mine)}"
    if isinstance(base, (tuple, list)):
        line += f"   {cell(base)}   {median_rate(mine) / median_rate(base):5.2f}x"
    elif base:
        line += "   " + base
    return line


def median_rate(points):
    return statistics.median(p[0] for p in points) if isinstance(points, list) else points[0]


def cell(points):
    """'1.36 M (1.17-1.48)  181 MB' for rounds, '1.36 M  181 MB' for one measurement."""
    if not isinstance(points, list):
        points = [points]
    rates = [p[0] / 1e6 for p in points]
    spread = f"({min(rates):.2f}-{max(rates):.2f})" if len(rates) > 1 else ""
    return f"{median_rate(points) / 1e6:6.2f} M {spread:>11s} {max(p[1] for p in points) / 2**20:6.0f} MB"


if __name__ == "__main__":
    try:
        main()
    except RunFailed as e:
        sys.exit(f"bench_workloads: {e}")
