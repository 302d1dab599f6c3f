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


if __name__ == "__main__":
    main({"max_iops": max_iops})
