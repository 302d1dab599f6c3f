#!/usr/bin/env python3
"""Issue 4's acceptance lines, with the real `afasim serve` binary and the real NBD clients.

    nbd_test.py [clients | fio_restart | ssd_fault | full_pool | bad_requests | sparse | limits | tls]...

Each case starts its own `afasim serve` (--pace none unless it says otherwise) over a
temporary state directory, provisions through the ReST API and runs nbdinfo, nbdcopy,
qemu-img, fio's nbd engine or nbdsh against it. Data is random with a fixed seed per case,
printed, so a failure replays. Exit 77 (ctest: skipped) when a client is not installed.
"""

import json
import shutil
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (GiB, MiB, Serve, Workspace, expect, log, main, random_file, require_tools,  # noqa: E402
                     run)

HERE = os.path.dirname(os.path.abspath(__file__))


def fio_job(path, uri, *, rw="randrw", size="128m", offset="0", seed=1234, extra=""):
    """A fio job file for the nbd engine with crc32c verification; same seed, same I/O."""
    with open(path, "w") as f:
        f.write(f"""[global]
ioengine=nbd
uri={uri}
rw={rw}
bsrange=4k-64k
size={size}
offset={offset}
iodepth=16
verify=crc32c
verify_fatal=1
randrepeat=1
randseed={seed}
{extra}
[verify-job]
""")
    return path


def fio(job, *args, check=True, timeout=300):
    p = run(["fio", "--output-format=json", *args, job], check=False, timeout=timeout)
    out = p.stdout.decode(errors="replace")
    doc = None
    if "{" in out:
        try:
            doc = json.loads(out[out.index("{"):])
        except json.JSONDecodeError:
            pass
    if check and (p.returncode != 0 or doc is None or any(j["error"] for j in doc["jobs"])):
        log(out)
        log(p.stderr.decode(errors="replace"))
        raise AssertionError(f"fio {job} failed (exit {p.returncode})")
    return p, doc


def same_bytes(path_a, path_b, length):
    with open(path_a, "rb") as a, open(path_b, "rb") as b:
        left = length
        while left > 0:
            n = min(left, 4 * MiB)
            if a.read(n) != b.read(n):
                return False
            left -= n
    return True


def all_zero(path, offset, length):
    with open(path, "rb") as f:
        f.seek(offset)
        left = length
        while left > 0:
            chunk = f.read(min(left, 4 * MiB))
            if chunk.count(0) != len(chunk):
                return False
            left -= len(chunk)
    return True


# ---------------------------------------------------------------------------------------
def clients():
    """nbdinfo --list / --map / --can, nbdcopy both ways, qemu-img convert and compare."""
    require_tools("nbdinfo", "nbdcopy", "nbdsh", "qemu-img")
    with Workspace() as ws, Serve(ws.state) as s:
        vol1 = s.volume("vol1", 1 * GiB, "RAID5")
        vol2 = s.volume("vol2", 512 * MiB, "RAID10")
        img = s.volume("img", 256 * MiB, "RAID10")
        s.volume("unmapped", 256 * MiB)
        elsewhere = s.volume("elsewhere", 256 * MiB)
        me = s.host("me", ["127.0.0.1"])
        other = s.host("other", ["192.0.2.1"])
        s.map(vol1, me)
        s.map(vol2, me, read_only=True)
        s.map(img, me)
        s.map(elsewhere, other)

        listing = json.loads(run(["nbdinfo", "--list", "--json", f"nbd://127.0.0.1:{s.nbd_port}"]).stdout)
        exports = {e["export-name"]: e for e in listing["exports"]}
        expect(sorted(exports) == ["img", "vol1", "vol2"], "nbdinfo --list shows exactly the mapped volumes")
        expect(exports["vol1"]["export-size"] == 1 * GiB and exports["vol2"]["export-size"] == 512 * MiB
               and exports["img"]["export-size"] == 256 * MiB, "with their sizes")
        expect(exports["vol2"]["is_read_only"] and not exports["vol1"]["is_read_only"], "read-only as mapped")
        expect(exports["vol1"]["block_size_minimum"] == 512 and exports["vol1"]["block_size_maximum"] == 32 * MiB,
               "block sizes 512 / 32 MiB")

        # --can / --is: exit 0 for true, 2 for false (nbdinfo(1)); what the server implements.
        claims = [("flush", "vol1", True), ("fua", "vol1", True), ("trim", "vol1", True), ("zero", "vol1", True),
                  ("multi-conn", "vol1", True), ("df", "vol1", True), ("cache", "vol1", False),
                  ("fast-zero", "vol1", False), ("trim", "vol2", False), ("zero", "vol2", False),
                  ("read", "vol1", True), ("write", "vol1", True), ("write", "vol2", False)]
        for what, export, want in claims:
            rc = run(["nbdinfo", "--can", what, s.uri(export)], check=False).returncode
            expect(rc == (0 if want else 2), f"nbdinfo --can {what} {export}: {want}")
        expect(run(["nbdinfo", "--is", "read-only", s.uri("vol2")], check=False).returncode == 0, "--is read-only vol2")
        expect(run(["nbdinfo", "--is", "rotational", s.uri("vol1")], check=False).returncode == 2, "not rotational")
        expect(run(["nbdinfo", "--can", "structured-reply", s.uri("vol1")], check=False).returncode == 0,
               "--can structured-reply")
        expect(exports["vol1"]["contexts"] == ["base:allocation"], "the base:allocation meta context")
        for hidden in ("unmapped", "elsewhere"):
            p = run(["nbdinfo", s.uri(hidden)], check=False)
            log(p.stderr.decode(errors="replace"))
            # libnbd words NBD_REP_ERR_UNKNOWN as ENOENT ("No such file or directory").
            expect(p.returncode != 0 and b"No such file or directory for export: " + hidden.encode() in p.stderr,
                   f"nbdinfo {hidden}: unknown export (not mapped to this client's host)")

        # nbdcopy a 256 MiB random file in and back out.
        src, back = ws.path("random.img"), ws.path("back.img")
        random_file(src, 256 * MiB, seed=4)
        run(["nbdcopy", src, s.uri("vol1")], timeout=300)
        run(["nbdsh", "-u", s.uri("vol1"), "-c", "h.pwrite(b'\\x11' * 4096, 768 << 20)"])
        run(["nbdcopy", s.uri("vol1"), back], timeout=300)
        expect(os.path.getsize(back) == 1 * GiB, "nbdcopy out: the whole 1 GiB export")
        expect(same_bytes(src, back, 256 * MiB), "nbdcopy in and out: 256 MiB byte-identical")
        expect(all_zero(back, 256 * MiB, 512 * MiB), "the never-written range reads as zeros")

        # The thin map: 64 MiB extents; 4 of data, then the hole, the one extent written at
        # 768 MiB, and the hole to the end.
        ext = s.ok("GET", "/system")["extent_bytes"]["RAID5"]
        mapped = json.loads(run(["nbdinfo", "--map", "--json", s.uri("vol1")]).stdout)
        got = [(m["offset"], m["length"], m["type"]) for m in mapped]
        want = [(0, 256 * MiB, 0), (256 * MiB, 768 * MiB - 256 * MiB, 3), (768 * MiB, ext, 0),
                (768 * MiB + ext, 1 * GiB - 768 * MiB - ext, 3)]
        expect(got == want, f"nbdinfo --map shows holes and data as written: {got}")
        alloc = s.ok("GET", f"/volumes/{vol1}")["allocated_bytes"]
        expect(alloc == 256 * MiB + ext, f"the API's allocated_bytes agrees ({alloc})")

        # qemu-img convert into a volume of the file's size, then qemu-img compare.
        src2 = ws.path("random2.img")
        random_file(src2, 256 * MiB, seed=5)
        run(["qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", src2, s.uri("img")], timeout=300)
        p = run(["qemu-img", "compare", "-f", "raw", "-F", "raw", src2, s.uri("img")], check=False, timeout=300)
        expect(p.returncode == 0 and b"identical" in p.stdout, "qemu-img compare: identical")
        with open(src2, "r+b") as f:  # the comparison is not vacuous: one byte off is a difference
            f.seek(100 * MiB + 7)
            b = f.read(1)
            f.seek(100 * MiB + 7)
            f.write(bytes([b[0] ^ 1]))
        p = run(["qemu-img", "compare", "-f", "raw", "-F", "raw", src2, s.uri("img")], check=False, timeout=300)
        expect(p.returncode == 1, "qemu-img compare: a flipped byte is a difference")

        events = s.events("nbd")
        connects = [e for e in events if "connected to volume \"vol1\"" in e["message"]]
        disconnects = [e for e in events if "disconnected from volume \"vol1\"" in e["message"]]
        expect(len(connects) >= 3 and len(connects) == len(disconnects),
               f"the event log has each NBD connection ({len(connects)}) and its end")


# ---------------------------------------------------------------------------------------
def fio_restart():
    """fio verify passes; after a stop and start of afasim serve a verify-only pass does too."""
    require_tools("fio", "nbdsh")
    with Workspace() as ws:
        s = Serve(ws.state).start()
        try:
            vol = s.volume("fio", 1 * GiB, "RAID5")
            s.map(vol, s.host("any", ["*"]))
            _, doc = fio(fio_job(ws.path("job.fio"), s.uri("fio")))
            written = doc["jobs"][0]["write"]["io_bytes"]
            expect(written > 32 * MiB, f"fio randrw with verify=crc32c passed ({written} bytes written)")
        finally:
            s.stop()
        log("afasim serve stopped; starting it again on the same state directory")
        with s:
            job = fio_job(ws.path("job.fio"), s.uri("fio"))
            _, doc = fio(job, "--verify_only")
            expect(doc["jobs"][0]["read"]["io_bytes"] > 32 * MiB, "after the restart, fio --verify_only passed")
            # The check is real: a corrupted block makes the same verify-only pass fail.
            run(["nbdsh", "-u", s.uri("fio"), "-c", "h.pwrite(b'\\xff' * (1 << 20), 0)"])
            p, _ = fio(job, "--verify_only", check=False)
            expect(p.returncode != 0, "a corrupted block fails the verify-only pass")


# ---------------------------------------------------------------------------------------
def ssd_fault():
    """An SSD fails through POST /api/v1/faults while fio verify runs; fio still passes."""
    require_tools("fio")
    # --pace realtime: the rebuild takes wall time (0.3 s for this volume), so fio's reads
    # meet the degraded volume, then the rebuilt one.
    with Workspace() as ws, Serve(ws.state, pace="realtime") as s:
        # Fixed: every extent is allocated at creation, so every SSD of the pool holds some.
        vol = s.volume("busy", 2 * GiB, "RAID5", provisioning="fixed")
        s.map(vol, s.host("any", ["*"]))
        # Rate-limited so that the run spans the failure; verify_backlog interleaves verifying
        # reads with the writes, so verification happens while the volume is degraded too.
        # 24 MiB at 800 writes/s: ~8 s of wall time, the failure at 1.5 s, the rebuild done
        # by ~2 s.
        job = fio_job(ws.path("job.fio"), s.uri("busy"), size="24m", extra="rate_iops=800,800\nverify_backlog=32")
        log("$ fio " + job + " (in the background)")
        proc = subprocess.Popen(["fio", "--output-format=json", job], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.5)
        expect(proc.poll() is None, "fio is running when the SSD fails")
        fault = s.ok("POST", "/faults", {"type": "drive_fail", "drive": 7})
        state = s.ok("GET", f"/volumes/{vol}")["state"]
        log(f"fault: {fault}; volume state right after it: {state}")
        out, err = proc.communicate(timeout=300)
        text = out.decode(errors="replace")
        if proc.returncode != 0:
            log(text)
            log(err.decode(errors="replace"))
        doc = json.loads(text[text.index("{"):])
        expect(proc.returncode == 0 and doc["jobs"][0]["error"] == 0,
               "fio verify passed across the SSD failure (degraded reads, then rebuilt data)")
        events = s.events()
        failed = [e["time_ns"] for e in events if e["message"] == "drive 7 (DataPac 1) failed"]
        rebuilt = [e["time_ns"] for e in events if "rebuild of drive 7 complete" in e["message"]]
        ended = [e["time_ns"] for e in events if "disconnected from volume \"busy\"" in e["message"]
                 and " 0 reads " not in e["message"]]
        expect(len(failed) == 1 and len(rebuilt) == 1 and len(ended) == 1, "events: failure, rebuild, fio's end")
        expect(failed[0] < rebuilt[0] < ended[0],
               "the failure and the whole rebuild happened while fio's connection was open")
        expect(s.ok("GET", f"/volumes/{vol}")["state"] == "online", "the volume is online again after the rebuild")


# ---------------------------------------------------------------------------------------
def full_pool():
    """A full thin pool: ENOSPC for new extents only; data already written still verifies."""
    require_tools("fio")
    # The ISE 820 G3 is the smallest system: the filler volume is ~65 000 extents.
    with Workspace() as ws, Serve(ws.state, system="ise-820-g3") as s:
        vol = s.volume("thin", 1 * GiB, "RAID5")
        s.map(vol, s.host("any", ["*"]))
        first = fio_job(ws.path("first.fio"), s.uri("thin"), size="128m")
        fio(first)
        pool = s.ok("GET", "/pools")["items"][0]
        free = pool["capacity"]["free_bytes"]["RAID5"]
        started = time.time()
        s.volume("filler", free, "RAID5", provisioning="fixed")
        log(f"a fixed volume of {free} bytes fills the pool ({time.time() - started:.1f} s)")
        pool = s.ok("GET", f"/pools/{pool['id']}")
        expect(pool["capacity"]["free_bytes"]["RAID5"] == 0, "the pool has no free RAID5 extent")

        new = fio_job(ws.path("new.fio"), s.uri("thin"), rw="randwrite", size="64m", offset="512m", seed=99)
        p, doc = fio(new, check=False)
        text = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        errors = {j["error"] for j in doc["jobs"]} if doc else set()
        expect(p.returncode != 0 and 28 in errors, f"fio writing new extents gets ENOSPC (errors {errors})")
        log(text[-600:])
        _, doc = fio(first, "--verify_only")
        expect(doc["jobs"][0]["error"] == 0, "data written before the pool filled still verifies")
        again = fio_job(ws.path("again.fio"), s.uri("thin"), size="128m", seed=7)
        _, doc = fio(again)
        rewritten = doc["jobs"][0]["write"]["io_bytes"]
        expect(rewritten > 0 and doc["jobs"][0]["error"] == 0,
               f"overwrites of allocated extents (fio randrw with verify) still pass ({rewritten} bytes)")
        vol_doc = s.ok("GET", f"/volumes/{vol}")
        expect(vol_doc["allocated_bytes"] == 128 * MiB, "no extent was allocated by the refused writes")


# ---------------------------------------------------------------------------------------
def bad_requests():
    """nbdsh sends bad requests; each gets proto.md's error; the server keeps serving."""
    require_tools("nbdsh")
    with Workspace() as ws, Serve(ws.state) as s:
        rw = s.volume("rw", 256 * MiB, "RAID10")
        ro = s.volume("ro", 256 * MiB, "RAID10")
        h = s.host("any", ["*"])
        s.map(rw, h)
        s.map(ro, h, read_only=True)
        script = os.path.join(HERE, "bad_requests.nbdsh")
        env = {"AFASIM_NBD_RW": s.uri("rw"), "AFASIM_NBD_RO": s.uri("ro"), "AFASIM_NBD_PORT": str(s.nbd_port)}
        os.environ.update(env)
        from harness import CLIENT_ENV
        CLIENT_ENV.update(env)
        p = run(["nbdsh", "-n", "-c", f"exec(open({script!r}).read())"], check=False, timeout=120)
        log(p.stdout.decode(errors="replace"))
        if p.returncode != 0:
            log(p.stderr.decode(errors="replace"))
        expect(p.returncode == 0, "every bad request got its error and the server kept serving")
        listing = run(["nbdinfo", "--list", f"nbd://127.0.0.1:{s.nbd_port}"], check=False)
        expect(listing.returncode == 0, "the server still answers new clients")

# ---------------------------------------------------------------------------------------
def sparse():
    """nbdcopy a sparse image into a volume and back, with and without --allocated, and
    qemu-img convert both ways (issue 14: main refused WRITE_ZEROES over 32 MiB). 256 MiB:
    its holes (82 and 105 MiB) are still well over the 32 MiB that failed."""
    require_tools("nbdcopy", "qemu-img")
    with Workspace() as ws, Serve(ws.state) as s:
        vol = s.volume("sparse", 256 * MiB, "RAID5")
        s.map(vol, s.host("me", ["127.0.0.1"]))
        # Old data where the image has a hole: the copy must zero it, not skip it.
        old = ws.path("old.img")
        random_file(old, 64 * MiB, seed=21)
        run(["qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", old, s.uri("sparse")], timeout=300)
        src = ws.path("sparse.raw")
        with open(src, "wb") as f:
            f.truncate(256 * MiB)
        for offset, length, seed in ((64 * MiB, 4 * MiB, 22), (150 * MiB, 1 * MiB, 23), (256 * MiB - 64 * 1024, 64 * 1024, 24)):
            piece = ws.path("piece")
            random_file(piece, length, seed)
            with open(piece, "rb") as p, open(src, "r+b") as f:
                f.seek(offset)
                f.write(p.read())
        for flags in ([], ["--allocated"]):
            run(["nbdcopy", *flags, src, s.uri("sparse")], timeout=300)
            back = ws.path("back.raw")
            run(["nbdcopy", *flags, s.uri("sparse"), back], timeout=300)
            expect(same_bytes(src, back, 256 * MiB), f"nbdcopy {' '.join(flags)} in and out: byte-identical")
            os.remove(back)
            alloc = s.ok("GET", f"/volumes/{vol}")["allocated_bytes"]
            if flags:  # --allocated: zeroes written as data, every extent allocated
                expect(alloc == 256 * MiB, f"nbdcopy --allocated allocates the whole volume ({alloc} bytes)")
            else:  # the holes were zeroed by giving extents back: 3 extents of 64 MiB hold data
                expect(alloc <= 192 * MiB, f"nbdcopy leaves the holes unallocated ({alloc} bytes allocated)")
        run(["qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", src, s.uri("sparse")], timeout=300)
        out = ws.path("qemu.raw")
        run(["qemu-img", "convert", "-f", "raw", "-O", "raw", s.uri("sparse"), out], timeout=300)
        expect(same_bytes(src, out, 256 * MiB), "qemu-img convert in and out: byte-identical")


# ---------------------------------------------------------------------------------------
def nbd_greet(sock):
    """The fixed newstyle greeting; False when the server closed at once (refused)."""
    import socket as socket_module
    data = b""
    while len(data) < 18:
        try:
            chunk = sock.recv(18 - len(data))
        except (ConnectionResetError, socket_module.timeout):
            return False
        if not chunk:
            return False
        data += chunk
    return True


def nbd_go(sock, name):
    """Greeting, then NBD_OPT_EXPORT_NAME: the connection is in transmission; False if refused."""
    import struct
    if not nbd_greet(sock):
        return False
    sock.sendall(struct.pack(">I", 3))  # fixed newstyle, no zeroes
    sock.sendall(struct.pack(">QII", 0x49484156454F5054, 1, len(name)) + name.encode())
    reply = sock.recv(10)
    return len(reply) == 10


def closed_within(sock, seconds):
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except OSError:
        return False


def limits():
    """64 half-open and 64 idle connections from 127.0.0.2 while 127.0.0.1 reads and writes;
    the handshake and idle timeouts close them (issue 14: on main they locked everyone out)."""
    require_tools("nbdcopy")
    import socket
    with Workspace() as ws, Serve(ws.state, extra=["--nbd-idle-timeout", "3", "--nbd-handshake-timeout", "3"]) as s:
        vol = s.volume("vol", 256 * MiB, "RAID10")
        s.map(vol, s.host("any", ["*"]))

        def connect():
            sock = socket.socket()
            sock.bind(("127.0.0.2", 0))
            sock.connect(("127.0.0.1", s.nbd_port))
            sock.settimeout(5)
            return sock

        idle = [connect() for _ in range(64)]
        in_transmission = [sk for sk in idle if nbd_go(sk, "vol")]
        half_open = [connect() for _ in range(64)]
        greeted = [sk for sk in half_open if nbd_greet(sk)]
        log(f"from 127.0.0.2: {len(in_transmission)} idle in transmission, {len(greeted)} half-open admitted")
        expect(len(in_transmission) + len(greeted) <= 16, "at most 16 connections from one address")
        src, back = ws.path("data.img"), ws.path("back.img")
        random_file(src, 16 * MiB, seed=31)
        run(["nbdcopy", src, s.uri("vol")], timeout=120)
        run(["nbdcopy", s.uri("vol"), back], timeout=120)
        expect(same_bytes(src, back, 16 * MiB), "127.0.0.1 writes and reads while 127.0.0.2 holds its slots")
        expect(all(closed_within(sk, 8) for sk in in_transmission), "idle connections closed by the idle timeout")
        expect(all(closed_within(sk, 8) for sk in greeted), "half-open connections closed by the handshake timeout")
        for sk in idle + half_open:
            sk.close()
        again = connect()
        expect(nbd_go(again, "vol"), "127.0.0.2 is served again once its slots are free")
        again.close()



# ---------------------------------------------------------------------------------------
def tls():
    """--tls self-signed: curl --cacert over HTTPS, nbdinfo nbds:// with the certificate;
    --nbd-tls require refuses plain NBD clients (issue 14 item 5)."""
    require_tools("curl", "nbdinfo", "nbdcopy")
    with Workspace() as ws, Serve(ws.state, extra=["--tls", "self-signed", "--nbd-tls", "require"]) as s:
        expect(s.scheme == "https", "the API listens on https")
        vol = s.volume("secure", 64 * MiB, "RAID10")
        s.map(vol, s.host("me", ["127.0.0.1"]))
        with open(os.path.join(s.state_dir, "admin-password")) as f:
            password = f.read().strip()
        p = run(["curl", "-sS", "--cacert", s.cert_file(), "-u", f"admin:{password}",
                 f"https://127.0.0.1:{s.rest_port}/api/v1/system"], check=False)
        expect(p.returncode == 0 and b'"counts"' in p.stdout, "curl --cacert https://.../system answers")
        p = run(["curl", "-sS", f"https://127.0.0.1:{s.rest_port}/api/v1/system"], check=False)
        expect(p.returncode != 0, "curl without the certificate refuses the server")
        # libnbd reads ca-cert.pem from the directory tls-certificates names.
        certs = ws.path("certs")
        os.makedirs(certs)
        shutil.copy(s.cert_file(), os.path.join(certs, "ca-cert.pem"))
        uri = f"nbds://127.0.0.1:{s.nbd_port}/secure?tls-certificates={certs}"
        p = run(["nbdinfo", "--json", uri], check=False)
        log(p.stderr.decode(errors="replace"))
        expect(p.returncode == 0 and json.loads(p.stdout)["exports"][0]["export-size"] == 64 * MiB,
               "nbdinfo nbds:// with the certificate: the export over TLS")
        src, back = ws.path("src.img"), ws.path("back.img")
        random_file(src, 8 * MiB, seed=41)
        run(["nbdcopy", src, uri.replace("/secure?", "/secure?")], timeout=120)
        run(["nbdcopy", uri, back], timeout=120)
        expect(same_bytes(src, back, 8 * MiB), "nbdcopy over TLS: in and out byte-identical")
        p = run(["nbdinfo", s.uri("secure")], check=False)
        expect(p.returncode != 0, "a plain NBD client is refused (--nbd-tls require)")


if __name__ == "__main__":
    main({"clients": clients, "fio_restart": fio_restart, "ssd_fault": ssd_fault, "full_pool": full_pool,
          "bad_requests": bad_requests, "sparse": sparse, "limits": limits,
          "tls": tls})
