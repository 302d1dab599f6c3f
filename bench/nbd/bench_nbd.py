#!/usr/bin/env python3
"""bench_nbd: afasim's NBD target against `nbdkit memory`, side by side (issue 4).

Runs fio's nbd engine against three servers on loopback TCP, in alternation, several rounds:

  afasim serve --pace none --payload memory: a thin RAID5 volume of SIZE, its bytes in RAM
      (like for like with the reference)
  afasim serve --pace none: the same with serve's default payload, files in the state
      directory (what `make run` does)
  nbdkit memory SIZE: the reference, a RAM disk with no model at all

Workloads (each preceded by a sequential fill of the region, so reads hit written data on
both): 4K random read at iodepth 32, and 128K sequential write at iodepth 32, each after one
warm-up pass over the region per server that is not counted. Prints each round, the median per server, the ratio afasim/nbdkit (issue 4 aims for at least 0.8), and
the servers' CPU time per I/O from /proc (where the time goes; afasim's split between its
NBD I/O thread and the rest, the model thread). Not a test: it asserts nothing.

  bench_nbd [--afasim BINARY] [--size-mib N] [--runtime S] [--rounds N]
"""

import argparse
import base64
import functools
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HZ = os.sysconf("SC_CLK_TCK")
# afasim's write cache destages data 10 s old even when idle (docs/write-cache.md "Destage").
# Under --pace none each server's idle spell while the others run its rounds runs the clock
# on, so every round of 128K writes would start from a cache aged clean: its blocks' bytes
# freed, each write allocating and first-touching 32 fresh pages (3-18 us a page on a VM that
# backs memory on first touch: docs/nbd.md). Measured 2026-12-07: afasim-mem / nbdkit 0.33
# with the age destage, 0.95 and 1.01 without. The bench measures the NBD path and the
# cache's insertion against a RAM disk, as it did before the age destage (its 1 GiB region
# stays under the cache's 40 % watermark, so no round destaged then either): --destage-age 0,
# or BENCH_NBD_DESTAGE_AGE=10 for the array's default.
DESTAGE_AGE = os.environ.get("BENCH_NBD_DESTAGE_AGE", "0")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """(process CPU, {thread name: CPU}) in seconds, from /proc. The process figure counts
    threads that have exited too (nbdkit's per-connection threads); the split only the
    live ones."""
    def times(path):
        with open(path) as f:
            stat = f.read()
        fields = stat[stat.rindex(")") + 2:].split()
        return stat[stat.index("(") + 1:stat.rindex(")")], (int(fields[11]) + int(fields[12])) / HZ

    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name, t = times(f"/proc/{pid}/task/{tid}/stat")
        except OSError:
            continue
        threads[name] = threads.get(name, 0.0) + t
    return times(f"/proc/{pid}/stat")[1], threads


def fio(uri, rw, bs, iodepth, size_mib, runtime):
    cmd = ["fio", "--name=bench", "--ioengine=nbd", f"--uri={uri}", f"--rw={rw}", f"--bs={bs}",
           f"--iodepth={iodepth}", f"--size={size_mib}m", "--output-format=json"]
    if runtime:
        cmd += ["--time_based", f"--runtime={runtime}"]
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0 or "{" not in out:
        sys.exit(f"bench_nbd: fio failed on {uri}:\n{out}\n{p.stderr.decode(errors='replace')}")
    job = json.loads(out[out.index("{"):])["jobs"][0]
    d = job["read"] if rw in ("read", "randread") else job["write"]
    return d["iops"], d["bw_bytes"], d["total_ios"]


def admin_credentials(state_dir):
    """The Authorization header of serve's admin, whose password serve wrote into its state
    directory on first start (docs/api.md, "Authentication")."""
    with open(os.path.join(state_dir, "admin-password")) as f:
        user_pass = "admin:" + f.read().strip()
    return {"Authorization": "Basic " + base64.b64encode(user_pass.encode()).decode()}


@functools.lru_cache(maxsize=None)
def destage_age_args(binary):
    """["--destage-age", DESTAGE_AGE], or nothing for an afasim from before that flag (its
    cache had no age destage)."""
    help_text = subprocess.run([binary, "serve", "--help"], capture_output=True, timeout=60).stdout
    return ["--destage-age", DESTAGE_AGE] if b"--destage-age" in help_text else []


def start_afasim(binary, work, size_mib, payload):
    state = os.path.join(work, f"state-{payload}")
    log_path = os.path.join(work, f"serve-{payload}.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen([binary, "serve", "--state", state, "--listen",
                             "127.0.0.1:0", "--nbd-listen", "127.0.0.1:0", "--pace", "none", "--payload", payload,
                             "--log-level", "warn"] + destage_age_args(binary),
                            stdout=log, stderr=subprocess.STDOUT)
    # The ports are in the info lines, which warn hides: ask the kernel instead.
    deadline = time.time() + 60
    rest = nbd = None
    while time.time() < deadline and (rest is None or nbd is None):
        if proc.poll() is not None:
            sys.exit("bench_nbd: afasim serve exited:\n" + open(log_path).read())
        ports = listening_ports(proc.pid)
        for port in ports:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/system", timeout=1):
                    rest = port
            except urllib.error.HTTPError:
                rest = port  # the ReST API, asking for credentials (401)
            except Exception:
                pass
        if rest is not None:
            nbd = next((p for p in ports if p != rest), None)
        time.sleep(0.1)
    if rest is None or nbd is None:
        proc.kill()  # not yet in main's list of servers to stop
        proc.wait()
        sys.exit("bench_nbd: afasim serve did not start")

    try:
        headers = {"Content-Type": "application/json", **admin_credentials(state)}

        def post(path, body):
            req = urllib.request.Request(f"http://127.0.0.1:{rest}/api/v1{path}",
                                         data=json.dumps(body).encode(), method="POST", headers=headers)
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read())

        vol = post("/volumes", {"name": "bench", "capacity_bytes": size_mib << 20, "raid_type": "RAID5"})
        host = post("/hosts", {"name": "bench", "initiators": [{"type": "nbd", "address": "*"}]})
        post("/mappings", {"volume_id": vol["id"], "host_id": host["id"]})
    except BaseException:
        proc.kill()  # a failed set-up (credentials, a refused POST) must not leave serve running
        proc.wait()
        raise
    return proc, f"nbd://127.0.0.1:{nbd}/bench"


def listening_ports(pid):
    """TCP ports process `pid` listens on (from /proc/net/tcp and its fds)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", target)
        if m:
            inodes.add(m.group(1))
    ports = []
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            parts = line.split()
            if parts[3] == "0A" and parts[9] in inodes:  # LISTEN
                ports.append(int(parts[1].split(":")[1], 16))
    return sorted(ports)


def start_nbdkit(size_mib):
    port = free_port()
    proc = subprocess.Popen(["nbdkit", "-f", "-p", str(port), "memory", f"{size_mib}M"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"nbd://127.0.0.1:{port}/"
        except OSError:
            time.sleep(0.05)
    sys.exit("bench_nbd: nbdkit did not start")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--afasim", default=os.environ.get("AFASIM_BINARY", "@AFASIM_BINARY@"))
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--runtime", type=int, default=5, help="seconds per fio run")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    for tool in ("fio", "nbdkit"):
        if shutil.which(tool) is None:
            print(f"bench_nbd: {tool} is not installed (make bench installs it: scripts/bootstrap.sh bench); skipped")
            return 0

    work = tempfile.mkdtemp(prefix="afasim-bench-nbd-")
    servers = {}
    try:
        servers["afasim-mem"] = start_afasim(args.afasim, work, args.size_mib, "memory")
        servers["afasim-file"] = start_afasim(args.afasim, work, args.size_mib, "file")
        servers["nbdkit"] = start_nbdkit(args.size_mib)
        print(f"afasim-mem:  afasim serve --pace none --payload memory {' '.join(destage_age_args(args.afasim))}, "
              f"a thin RAID5 volume of {args.size_mib} MiB")
        print(f"afasim-file: the same with --payload file (serve's default), payload files under {work}")
        print(f"nbdkit:      nbdkit memory {args.size_mib}M")
        print(f"fio's nbd engine, {args.runtime} s per run, {args.rounds} rounds, servers alternating; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
        for name, (proc, uri) in servers.items():
            fio(uri, "write", "1m", 8, args.size_mib, 0)  # fill: reads hit written data
        workloads = [("4K random read, iodepth 32", "randread", "4k", 32, "IOPS"),
                     ("128K sequential write, iodepth 32", "write", "128k", 32, "MB/s")]
        summary = []
        for title, rw, bs, qd, unit in workloads:
            print(f"\n{title}")
            results = {name: [] for name in servers}
            cpu = {name: [] for name in servers}
            # A warm-up pass over the whole region per server, not counted (fio's ramp_time,
            # as a whole run): the first 128K writes allocate afasim's write-cache blocks, and
            # on a virtual machine that backs memory only when first touched that alone cost
            # 3-10x per write (docs/nbd.md); nbdkit's memory was touched by the fill.
            for name, (proc, uri) in servers.items():
                fio(uri, rw, bs, qd, args.size_mib, 0)
            for r in range(args.rounds):
                line = []
                for name, (proc, uri) in servers.items():
                    before, threads_before = cpu_seconds(proc.pid)
                    iops, bw, ios = fio(uri, rw, bs, qd, args.size_mib, args.runtime)
                    after, threads_after = cpu_seconds(proc.pid)
                    value = iops if unit == "IOPS" else bw / 1e6
                    results[name].append(value)
                    per_io_us = (after - before) / ios * 1e6 if ios else 0.0
                    split = {t: (threads_after[t] - threads_before.get(t, 0.0)) / ios * 1e6
                             for t in threads_after if ios}
                    cpu[name].append((per_io_us, split))
                    line.append(f"{name} {value:8.0f} ({per_io_us:5.1f} us CPU/I/O)")
                print(f"  round {r + 1} ({unit}): " + "  ".join(line))
            med = {n: statistics.median(v) for n, v in results.items()}
            print("  median: " + ", ".join(f"{n} {v:.0f} {unit}" for n, v in med.items()))
            for name in ("afasim-mem", "afasim-file"):
                ratio = med[name] / med["nbdkit"] if med["nbdkit"] else float("nan")
                per_io = statistics.median(c[0] for c in cpu[name])
                threads = cpu[name][len(cpu[name]) // 2][1]
                busy = ", ".join(f"{t} {us:.1f}" for t, us in sorted(threads.items(), key=lambda kv: -kv[1])
                                 if us >= 0.05)
                print(f"  {name}/nbdkit = {ratio:.2f}; CPU per I/O {per_io:.1f} us ({busy})")
                summary.append((f"{title}, {name}", ratio))
            print(f"  nbdkit CPU per I/O {statistics.median(c[0] for c in cpu['nbdkit']):.1f} us")
        print("\nsummary (issue 4 aims for >= 0.8):")
        for title, ratio in summary:
            print(f"  {title}: {ratio:.2f}")
    finally:
        for proc, _ in servers.values():
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
