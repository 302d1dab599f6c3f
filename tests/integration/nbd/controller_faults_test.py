#!/usr/bin/env python3
"""Issue 6's serve-mode acceptance, with the real `afasim serve` binary and fio's nbd engine:

    fio over NBD with verify=crc32c writes; power_loss, power_restore; a verify-only pass
    finds every block. The same with controller_fail during the writes.

    controller_faults_test.py [power_cycle | controller_fail]...

Exit 77 (ctest: skipped) when fio or nbdsh is not installed. fio's data is seeded (randseed
in the job), so a failure replays.
"""

import base64
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import GiB, MiB, Serve, Workspace, expect, log, main, require_tools, run  # noqa: E402
from nbd_test import fio, fio_job  # noqa: E402


# The write cache keeps dirty data below its low watermark until a FLUSH, a stop or more writes
# (no age destage): what the vault tests need across idle gaps under --pace none.
NO_AGE_DESTAGE = ["--destage-age", "0"]


def wait_for(what, predicate, timeout_s=60):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if predicate():
            log("ok: " + what)
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for: " + what)


def write_and_verify_jobs(ws, name, uri, size, seed, extra=""):
    """Two fio jobs with the same I/O and data: one only writes (no read-back, no FLUSH),
    the other is its verify-only pass."""
    write = fio_job(ws.path(name + "-write.fio"), uri, rw="randwrite", size=size, seed=seed,
                    extra="do_verify=0\n" + extra)
    verify = fio_job(ws.path(name + "-verify.fio"), uri, rw="randwrite", size=size, seed=seed)
    return write, verify


def dirty_bytes(s):
    return sum(c["dirty_bytes"] for c in s.ok("GET", "/controllers")["items"])


def power_cycle():
    """Writes acknowledged into the write-back cache, never flushed, survive a power cut."""
    require_tools("fio", "nbdsh")
    # --destage-age 0: under --pace none the idle gap between fio's end and the power cut runs
    # the model's clock on, and the write cache would age its dirty data out (10 s) before the
    # cut; this test needs it still there.
    with Workspace() as ws, Serve(ws.state, extra=NO_AGE_DESTAGE) as s:
        host = s.host("any", ["*"])
        jobs = []
        for name, raid in (("pwr10", "RAID10"), ("pwr5", "RAID5")):
            vol = s.volume(name, 1 * GiB, raid)
            s.map(vol, host)
            jobs.append(write_and_verify_jobs(ws, name, s.uri(name), "48m", 4321))
        for job, _ in jobs:
            _, doc = fio(job)
            expect(doc["jobs"][0]["write"]["io_bytes"] == 48 * MiB, f"{os.path.basename(job)}: 48 MiB written")
        dirty = dirty_bytes(s)
        expect(dirty > 16 * MiB, f"{dirty} bytes acknowledged but only in the controllers' caches (not flushed)")

        s.ok("POST", "/faults", {"type": "power_loss"})
        wait_for("the array is off after vaulting", lambda: s.ok("GET", "/system")["power"]["state"] == "off")
        p = run(["nbdsh", "-u", s.uri("pwr5"), "-c", "h.pread(4096, 0)"], check=False)
        expect(p.returncode != 0, "an NBD client gets an error while the array is off")
        status, _ = s.api("POST", "/volumes", {"name": "x", "capacity_bytes": GiB, "raid_type": "RAID5",
                                               "provisioning": "thin"})
        log(f"provisioning while off -> {status}")

        s.ok("POST", "/faults", {"type": "power_restore"})
        wait_for("the array is online again", lambda: s.ok("GET", "/system")["state"] == "online")
        events = [e["message"] for e in s.events()]
        expect(any("vault" in m and "replay" in m for m in events), "the vault was replayed (event log)")
        for _, job in jobs:
            _, doc = fio(job, "--verify_only")
            expect(doc["jobs"][0]["read"]["io_bytes"] == 48 * MiB,
                   f"{os.path.basename(job)}: the verify-only pass read back every block")


def controller_fail():
    """Controller A fails while fio writes; fio finishes, every block verifies, failback follows."""
    require_tools("fio")
    # --pace realtime: the writes span wall time, so the failure lands in the middle of them.
    # --speed 4: the array's clock runs 4x wall time, so controller A's restore (a 20 s boot,
    # controller/controller_states.h) takes 5 s of the test's wall time instead of 20; fio's
    # rate_iops paces the writes in wall time, so they still span the failure.
    with Workspace() as ws, Serve(ws.state, pace="realtime", extra=["--speed", "4"]) as s:
        host = s.host("any", ["*"])
        vol = s.volume("ctl", 1 * GiB, "RAID5")
        s.ok("PATCH", f"/volumes/{vol}", {"preferred_controller": 1})
        s.map(vol, host)
        job, verify = write_and_verify_jobs(ws, "ctl", s.uri("ctl"), "32m", 99, extra="rate_iops=1500")
        log("$ fio " + job + " (in the background)")
        proc = subprocess.Popen(["fio", "--output-format=json", job], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.5)
        expect(proc.poll() is None, "fio is writing when controller A fails")
        s.ok("POST", "/faults", {"type": "controller_fail", "controller": 1})
        wait_for("controller B owns the volume",
                 lambda: s.ok("GET", f"/volumes/{vol}").get("owner_controller") == 2)
        out, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            log(out.decode(errors="replace"))
            log(err.decode(errors="replace"))
        expect(proc.returncode == 0, "fio's writes all completed across the failover")

        _, doc = fio(verify, "--verify_only")
        expect(doc["jobs"][0]["read"]["io_bytes"] == 32 * MiB, "the verify-only pass read back every block")

        s.ok("POST", "/faults", {"type": "controller_restore", "controller": 1})
        wait_for("the volume failed back to controller A",
                 lambda: s.ok("GET", f"/volumes/{vol}").get("owner_controller") == 1)
        _, doc = fio(verify, "--verify_only")
        expect(doc["jobs"][0]["read"]["io_bytes"] == 32 * MiB, "after failback every block verifies again")


def stop_while_off():
    """A clean stop while the mains are off keeps what the controllers vaulted (hostile round
    17: the stop destaged only serving controllers, none while off, and the vaulted writes read
    back as zeros after the next start), and so does one after a second stop signal during the
    stop's destage (hostile round 17: a thread started before the signals were blocked took
    the second SIGTERM and the process died mid-destage, 211-228 MiB lost)."""
    require_tools("fio", "nbdsh")
    # --destage-age 0: as power_cycle.
    with Workspace() as ws, Serve(ws.state, extra=NO_AGE_DESTAGE) as s:  # a failure kills the server it left running
        vol = s.volume("off", 1 * GiB, "RAID10")
        s.map(vol, s.host("any", ["*"]))
        write, verify = write_and_verify_jobs(ws, "off", s.uri("off"), "48m", 2468)
        fio(write)
        dirty = dirty_bytes(s)
        expect(dirty > 16 * MiB, f"{dirty} bytes acknowledged but only in the controllers' caches")
        s.ok("POST", "/faults", {"type": "power_loss"})
        wait_for("the array is off after vaulting", lambda: s.ok("GET", "/system")["power"]["state"] == "off")
        s.stop()
        s.start()  # on new ports: the job file again, with the same data
        _, verify = write_and_verify_jobs(ws, "off", s.uri("off"), "48m", 2468)
        _, doc = fio(verify, "--verify_only")
        expect(doc["jobs"][0]["read"]["io_bytes"] == 48 * MiB, "every vaulted block reads back after the stop")

        write_dirty(ws, s, "twice", "256m", 1357, 128 * MiB)
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.02)
        s.proc.send_signal(signal.SIGTERM)
        s.stop()  # expects exit 0
        expect_logged(s, b"SIGTERM received while stopping", "the second SIGTERM is answered in the log")
        reads_back(ws, s, "twice", "256m", 1357, "every block reads back after two SIGTERMs")

        # SIGHUP (the terminal of `make run` closed) stops as cleanly (hostile round 25b: it
        # ended the process at once and 20,162 acknowledged writes in the caches were lost).
        write_dirty(ws, s, "hup", "64m", 8642, 16 * MiB)
        s.proc.send_signal(signal.SIGHUP)
        rc = s.proc.wait(timeout=60)
        expect(rc == 0, f"SIGHUP stops the server cleanly (exit {rc})")
        s.proc = None
        s.log_file.close()
        expect_logged(s, b"SIGHUP received, shutting down", "SIGHUP is answered in the log")
        reads_back(ws, s, "hup", "64m", 8642, "every block reads back after SIGHUP")


def write_dirty(ws, s, name, size, seed, at_least):
    """Writes `size` with fio's verify pattern `seed` to volume "off"; expects more than
    `at_least` bytes of it still only in the controllers' caches."""
    write, _ = write_and_verify_jobs(ws, name, s.uri("off"), size, seed)
    fio(write)
    dirty = dirty_bytes(s)
    expect(dirty > at_least, f"{dirty} bytes acknowledged but only in the controllers' caches")


def reads_back(ws, s, name, size, seed, what):
    """Starts the server again and verifies every block write_dirty wrote."""
    s.start()
    _, verify = write_and_verify_jobs(ws, name, s.uri("off"), size, seed)
    _, doc = fio(verify, "--verify_only")
    expected = int(size[:-1]) * MiB
    expect(doc["jobs"][0]["read"]["io_bytes"] == expected, what)


def expect_logged(s, text, what):
    with open(s.log_path, "rb") as f:
        expect(text in f.read(), what)


def log_pipe_closed():
    """A log whose reader went away (`afasim serve | tee log`, tee killed) does not end the
    server: SIGPIPE is ignored (hostile round 25b: the next log line killed it, exit 141, and
    14,507 acknowledged writes read back as zeros). Its requests go on being answered, and it
    stops cleanly, exit 1 as any command whose standard output could not be written."""
    with Workspace() as ws:
        binary = os.environ["AFASIM_BINARY"]
        cmd = [binary, "serve", "--state", ws.state, "--listen", "127.0.0.1:0", "--nbd-listen", "127.0.0.1:0",
               "--pace", "none", "--payload", "none"]
        log("$ " + " ".join(cmd) + " | (reader closed)")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            port, text = None, b""
            deadline = time.time() + 60
            while port is None and time.time() < deadline:
                line = proc.stdout.readline()
                expect(line != b"" or proc.poll() is None, "afasim serve is running")
                m = re.search(rb"listening on http://127\.0\.0\.1:(\d+)", line)
                port = int(m.group(1)) if m else None
            expect(port is not None, "afasim serve reported its port")
            proc.stdout.close()  # the reader goes away; every request below writes a log line
            with open(os.path.join(ws.state, "admin-password")) as f:
                password = f.read().strip()
            auth = "Basic " + base64.b64encode(f"admin:{password}".encode()).decode()
            for i in range(200):
                req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/system", headers={"Authorization": auth})
                with urllib.request.urlopen(req, timeout=10) as r:
                    expect(r.status == 200, "the array answers")
            expect(proc.poll() is None, f"afasim serve is still running (exit {proc.returncode})")
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=60)
            # 1, not a signal: stopped cleanly, and says that its log (standard output) was lost.
            expect(rc == 1, f"afasim serve stopped after SIGTERM, exit 1 for the lost log (exit {rc})")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main({"power_cycle": power_cycle, "controller_fail": controller_fail, "stop_while_off": stop_while_off,
          "log_pipe_closed": log_pipe_closed})
