#!/usr/bin/env python3
"""Issue 5's NBD acceptance line, with the real `afasim serve` binary and fio's nbd engine:

    over NBD with --pace realtime, fio against a volume with max_iops 2,000 measures
    2,000 IOPS ± 5 %.

It uses the NBD integration harness (tests/integration/nbd/harness.py, issue 4). Exit 77
(ctest: skipped, not passed) when fio is not installed.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, HERE)
from harness import GiB, Serve, Workspace, expect, log, main, require_tools, run  # noqa: E402

# fio's rate measurement over 10 s of wall time after a 2 s ramp; the limit is the model's.
RUNTIME_S = 10
MAX_IOPS = 2000
# latency_floor slows every SSD by this factor (the drive_slow fault, 1 to 1000).
SLOW_X = 40


def max_iops():
    """fio randread, 32 in flight, against a volume capped at 2,000 IOPS, paced to the wall clock."""
    require_tools("fio")
    with Workspace() as ws, Serve(ws.state, pace="realtime") as s:
        vol = s.volume("capped", 1 * GiB, "RAID10", provisioning="fixed")
        doc = s.ok("PATCH", f"/volumes/{vol}", {"max_iops": MAX_IOPS})
        expect(doc["effective_qos"]["max_iops"] == MAX_IOPS, "the volume's max_iops is 2,000")
        s.map(vol, s.host("any", ["*"]))
        job = ws.path("capped.fio")
        with open(job, "w") as f:
            f.write(f"""[global]
ioengine=nbd
uri={s.uri("capped")}
rw=randread
bs=4k
size=1g
iodepth=32
time_based
ramp_time=2s
runtime={RUNTIME_S}s
[capped]
""")
        p = run(["fio", "--output-format=json", job], check=False, timeout=120)
        out = p.stdout.decode(errors="replace")
        if p.returncode != 0 or "{" not in out:
            log(out)
            log(p.stderr.decode(errors="replace"))
            raise AssertionError(f"fio failed (exit {p.returncode})")
        result = json.loads(out[out.index("{"):])["jobs"][0]
        iops = result["read"]["iops"]
        log(f"fio: {iops:.1f} IOPS, mean latency {result['read']['lat_ns']['mean'] / 1e3:.0f} us")
        expect(result["error"] == 0, "fio finished without an error")
        expect(abs(iops - MAX_IOPS) <= 0.05 * MAX_IOPS, f"fio measures {iops:.0f} IOPS: 2,000 ± 5 %")
        status = s.ok("GET", f"/volumes/{vol}")["qos_status"]
        log(f"qos_status after the run: {status}")
        expect(status["throttled_time_ns"] > RUNTIME_S * 10**9 // 2,
               "the API shows the volume held back by its limit for most of the run")


def latency_floor():
    """Paced to the wall clock, no reply comes before the array's simulated latency
    (docs/nbd.md "Pacing"). Every SSD is slowed 40x, so a 4K read takes milliseconds in the
    array, far above the host's own costs and their noise. fio reads one block at a time,
    40 a second, so the model waits idle ~20 ms between reads: a request it then ran at its
    last event's time was answered early (model review 17: fio's median 74 us against the
    array's 179 us mean; with that bug planted here, fio's 5th percentile is the host's
    round trip, ~0.3 ms, against the array's ~4 ms).

    fio's total latency (lat: from before the request is sent to its completion) is used, not
    clat: clat starts when fio has stamped the I/O issued, after the send, and on a loaded host
    fio can be preempted between the two (under 3 busy processes clat's 5th percentile read
    15 us against the array's 179 us, though no reply had come early). A load only makes lat
    longer."""
    require_tools("fio")
    with Workspace() as ws, Serve(ws.state, pace="realtime", extra=["--payload", "none"]) as s:
        vol = s.volume("floor", 1 * GiB, "RAID10", provisioning="fixed")
        s.map(vol, s.host("any", ["*"]))
        drives = s.ok("GET", "/system")["counts"]["drives"]
        for d in range(1, drives + 1):
            s.ok("POST", "/faults", {"type": "drive_slow", "drive": d, "latency_multiplier": SLOW_X})
        p = run(["fio", "--output-format=json", "--name=floor", "--ioengine=nbd", f"--uri={s.uri('floor')}",
                 "--rw=randread", "--bs=4k", "--size=1g", "--iodepth=1", "--rate_iops=40", "--time_based",
                 "--runtime=4s", "--percentile_list=5:50", "--lat_percentiles=1"], check=False, timeout=120)
        out = p.stdout.decode(errors="replace")
        if p.returncode != 0 or "{" not in out:
            log(out)
            log(p.stderr.decode(errors="replace"))
            raise AssertionError(f"fio failed (exit {p.returncode})")
        read = json.loads(out[out.index("{"):])["jobs"][0]["read"]
        p5_us = read["lat_ns"]["percentile"]["5.000000"] / 1e3
        p50_us = read["lat_ns"]["percentile"]["50.000000"] / 1e3
        rows = [r for r in s.ok("GET", f"/volumes/{vol}/performance?limit=10")["samples"] if r["read_iops"] > 0]
        expect(rows, "the array's history has seconds with reads")
        array_us = min(r["latency_us_mean"] for r in rows)
        log(f"fio over NBD: p5 {p5_us:.0f} us, median {p50_us:.0f} us; the array's lowest per-second mean {array_us:.0f} us")
        expect(array_us > 1000, f"the slowed array's reads take milliseconds ({array_us:.0f} us)")
        # The array's reads vary little: fio's 5th percentile cannot be much below the array's
        # mean, and its median not below it.
        expect(p50_us >= array_us, f"fio's median {p50_us:.0f} us is not below the array's {array_us:.0f} us")
        expect(p5_us >= 0.8 * array_us, f"fio's 5th percentile {p5_us:.0f} us is within 20 % of the array's mean")


if __name__ == "__main__":
    main({"max_iops": max_iops, "latency_floor": latency_floor})
