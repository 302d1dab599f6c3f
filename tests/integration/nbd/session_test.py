#!/usr/bin/env python3
"""Serve sessions with the real binary (issue 11): record and replay, and FLUSH across kill -9.

    session_test.py [record_replay | bad_records | kill_after_flush]...

record_replay: `afasim serve --record` under fio over NBD (verify=crc32c, flushes), ReST
mutations and a drive failure; `afasim replay` must reproduce every record byte for byte
(its own --record output is cmp-identical), and a record whose ReST body was changed must
be reported as a divergence. redfish_record_replay: the same with changes through Redfish
(/redfish/v1: volumes, endpoint groups, connections, accounts) mixed with ReST ones and NBD
writes; no password reaches the record. bad_records: cut and damaged files get clear errors.
kill_after_flush: writes over NBD with FLUSH under load, SIGKILL of afasim serve, restart:
every write acknowledged before a completed FLUSH reads back (docs/nbd.md).
"""

import os
import random
import re
import signal
import json
import struct
import subprocess
import time
import sys
import urllib.error
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import MiB, Serve, Workspace, expect, log, main, require_tools, run  # noqa: E402
from nbd_test import fio_job  # noqa: E402

MAGIC = b"AFASIMSR"


# ---------------------------------------------------------------------------------------
# The record file format (docs/record-replay.md), read and written independently of afasim.

def read_session(path):
    """(header bytes, [(type, kind, time_ns, events, payload)]) of a well-formed record file."""
    data = open(path, "rb").read()
    assert data[:8] == MAGIC
    version, hlen = struct.unpack_from("<II", data, 8)
    assert version == 2
    header = data[:16 + hlen + 4]
    pos, records = len(header), []
    while True:
        rtype, klen = data[pos], data[pos + 1]
        kind = data[pos + 2:pos + 2 + klen].decode()
        t, events, plen = struct.unpack_from("<qQQ", data, pos + 2 + klen)
        body_end = pos + 2 + klen + 24 + plen
        payload = data[pos + 2 + klen + 24:body_end]
        (crc,) = struct.unpack_from("<I", data, body_end)
        assert crc == zlib.crc32(data[pos:body_end]), f"record at {pos}: checksum"
        pos = body_end + 4
        if rtype == ord("Z"):
            assert pos == len(data)
            return header, records
        records.append((rtype, kind, t, events, payload))


def write_session(path, header, records):
    out = bytearray(header)
    for rtype, kind, t, events, payload in records + [(ord("Z"), "end", 0, 0, struct.pack("<Q", len(records)))]:
        body = bytes([rtype, len(kind)]) + kind.encode() + struct.pack("<qQQ", t, events, len(payload)) + payload
        out += body + struct.pack("<I", zlib.crc32(body))
    open(path, "wb").write(bytes(out))


def first_batch_of_a_huge_export(records):
    """The first NBD batch's index, its payload with the export's size made 1 PiB, and the
    offset of its request count (nbd_record.cpp replay_io's layout)."""
    first = next(i for i, r in enumerate(records) if r[1] == "nbd.io")
    p = records[first][4]
    o = 8 + 8 + struct.unpack_from("<Q", p, 8)[0]   # connection id, export name
    size_at = o + 32                               # volume, mapping, host, lun ids
    p = p[:size_at] + struct.pack("<q", 1 << 50) + p[size_at + 8:]
    o = size_at + 8 + 1                            # size, read_only
    o += 8 + struct.unpack_from("<Q", p, o)[0]      # description
    return first, p, o


def replay(*args, check=True):
    binary = os.environ["AFASIM_BINARY"]
    p = run([binary, "replay", *args], check=False, timeout=300)
    text = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    log(text[-3000:])
    if check and p.returncode != 0:
        raise AssertionError(f"afasim replay exited with {p.returncode}")
    return p.returncode, text


def session_fio_job(path, uri, rw, seed):
    """nbd_test's verifying fio job (16 MiB), with a FLUSH every 32 writes."""
    return fio_job(path, uri, rw=rw, size="16m", seed=seed, extra="fsync=32")


# ---------------------------------------------------------------------------------------
def record_a_session(ws):
    """A session with fio over NBD, ReST mutations and a drive failure; returns the record path."""
    rec = ws.path("session.rec")
    # Memory payload: each FLUSH here would otherwise fdatasync 40 payload files; FLUSH still
    # goes through the model (a destage) and is recorded and replayed the same way.
    with Serve(ws.state, pace="realtime", extra=["--record", rec, "--payload", "memory"]) as s:
        policy = s.ok("POST", "/qos-policies", {"name": "gold", "min_iops": 1000, "max_iops": 50000})["id"]
        v5 = s.volume("r5", 256 * MiB, "RAID5")
        v10 = s.volume("r10", 128 * MiB, "RAID10", provisioning="fixed")
        host = s.host("lab", ["*"])
        s.map(v5, host)
        s.map(v10, host)
        s.ok("PATCH", f"/volumes/{v5}", {"qos_policy_id": policy})
        expect(s.api("POST", "/volumes", {"name": "r5", "capacity_bytes": "1GiB"})[0] == 409,
               "a refused mutation (duplicate name) is part of the session too")
        run(["fio", session_fio_job(ws.path("w5.fio"), s.uri("r5"), "randrw", 11)], timeout=300)
        run(["fio", session_fio_job(ws.path("w10.fio"), s.uri("r10"), "randwrite", 12)], timeout=300)
        s.ok("POST", "/faults", {"type": "drive_fail", "drive": 7})
        # Degraded reads (RAID 5 reconstruction) and more writes while the rebuild runs.
        run(["fio", "--verify_only", session_fio_job(ws.path("w5.fio"), s.uri("r5"), "randrw", 11)], timeout=300)
        run(["fio", session_fio_job(ws.path("w10b.fio"), s.uri("r10"), "randrw", 13)], timeout=300)
        s.ok("GET", "/system")
    return rec


def record_replay():
    require_tools("fio")
    with Workspace() as ws:
        rec = record_a_session(ws)
        header, records = read_session(rec)
        kinds = {}
        for r in records:
            kinds[r[1]] = kinds.get(r[1], 0) + 1
        log(f"{len(records)} records: {kinds}")
        expect(kinds.get("nbd.io", 0) > 100 and kinds.get("nbd.done", 0) > 1000,
               "the record holds the NBD batches and their completions")
        expect(kinds.get("rest", 0) >= 9 and kinds.get("rest.error", 0) == 1, "and every ReST call, the 409 included")
        expect(kinds.get("event", 0) > 5 and kinds.get("final") == 1, "and the events and the final state")
        # The API's calls were the admin's: their events name it last (the actor field), and
        # the replay must make the same.
        expect(any(r[1] == "event" and r[4].endswith(struct.pack("<Q", 5) + b"admin") for r in records),
               "and the events the admin's calls made name the admin")
        expect(any(r[1] == "rest" and b"drive_fail" in r[4] for r in records), "and the drive failure")

        replayed = ws.path("replay.rec")
        rc, text = replay(rec, "--record", replayed)
        expect(rc == 0 and f"{len(records)} records reproduced byte for byte" in text,
               "afasim replay reproduces every record")
        expect(open(rec, "rb").read() == open(replayed, "rb").read(),
               "the replay's own record is byte-identical to the session's")

        # Plant a difference: the RAID 5 volume's POST asks for 255 MiB instead of 256 MiB.
        planted = [(r[0], r[1], r[2], r[3], r[4].replace(b'268435456', b'267386880') if r[1] == "rest" else r[4])
                   for r in records]
        expect(planted != records, "planted: the volume's capacity in its POST")
        write_session(ws.path("planted.rec"), header, planted)
        rc, text = replay(ws.path("planted.rec"), check=False)
        expect(rc == 1 and "diverged" in text and "differs" in text,
               "a record whose ReST body changed is reported as a divergence")

        # Hostile round 17: a difference inside a payload (the first NBD batch's connection id)
        # printed two identical lines; the first differing byte is named.
        first = next(i for i, r in enumerate(records) if r[1] == "nbd.io")
        edited = list(records)
        edited[first] = records[first][:4] + (b"\xff" * 8 + records[first][4][8:],)
        write_session(ws.path("connection.rec"), header, edited)
        rc, text = replay(ws.path("connection.rec"), check=False)
        conn = records[first][4][:8].hex(" ")
        expect(rc == 1 and f"the payloads first differ at byte 0: recorded {conn}, replayed ff ff ff ff ff ff ff ff" in text,
               "a divergence inside a payload names the first differing byte")

        # Hostile round 16: an edited record (checksums recomputed) whose export claims 1 PiB
        # and whose first request is a BLOCK_STATUS of 4 GiB past the volume's end passed the
        # replay's check against the recorded size and aborted on an assertion (exit 134).
        first, p, o = first_batch_of_a_huge_export(records)
        o += 4                                         # the request count
        kind, _, handle, _, length = struct.unpack_from("<HHQQI", p, o)
        rest = p[o + 24:]
        if kind == 1:  # a write: its payload goes with it
            rest = rest[8 + struct.unpack_from("<Q", rest, 0)[0]:]
        p = p[:o] + struct.pack("<HHQQI", 7, 0, handle, 0, 0xFFFFFE00) + rest
        edited = list(records)
        edited[first] = records[first][:4] + (p,)
        write_session(ws.path("block-status.rec"), header, edited)
        rc, text = replay(ws.path("block-status.rec"), check=False)
        expect(rc == 1 and "diverged" in text and "assertion" not in text,
               "a BLOCK_STATUS past the volume's end in an edited record is a divergence, not an abort")

        # Hostile review 43: --state naming a file said "is not empty".
        rc, text = replay(ws.path("planted.rec"), "--state", ws.path("planted.rec"), check=False)
        expect(rc == 2 and "is a file: a replay needs a new state directory" in text,
               "replay --state naming a file says so")
        os.symlink("/nonexistent/afasim-state", ws.path("dangling-state"))
        rc, text = replay(ws.path("planted.rec"), "--state", ws.path("dangling-state"), check=False)
        expect(rc == 2 and "is a file: a replay needs a new state directory" in text,
               "and a dangling link is no new state directory either (exit 2, not 1)")

        # Hostile review 43: a forged batch of 64 READs of 256 MiB allocated their buffers as the
        # record was decoded (5.8 GB, then bad_alloc); a batch holds at most 256 MiB of data.
        first, p, o = first_batch_of_a_huge_export(records)
        reads = b"".join(struct.pack("<HHQQI", 0, 0, i, i << 28, 1 << 28) for i in range(64))
        edited = list(records)
        edited[first] = records[first][:4] + (p[:o] + struct.pack("<I", 64) + reads,)
        write_session(ws.path("big-reads.rec"), header, edited)
        started = time.monotonic()
        rc, text = replay(ws.path("big-reads.rec"), check=False)
        expect(rc == 2 and "more than 268435456 bytes of data" in text and time.monotonic() - started < 30,
               "a forged batch of 16 GiB of reads is refused as it is decoded, not allocated (a bad record: exit 2)")

        # Review of hostile round 43: a record whose payload does not decode was exit 1, "the
        # replay diverged", as if the model had; it is a bad record file, exit 2, as the docs say.
        edited = list(records)
        edited[first] = records[first][:4] + (records[first][4][:5],)
        write_session(ws.path("cut-payload.rec"), header, edited)
        rc, text = replay(ws.path("cut-payload.rec"), check=False)
        expect(rc == 2 and f"record #{first + 1} does not decode" in text and "diverged" not in text,
               "a payload cut short is a bad record: exit 2")
        edited[first] = records[first][:1] + ("nbd.teleport",) + records[first][2:]
        write_session(ws.path("unknown-kind.rec"), header, edited)
        rc, text = replay(ws.path("unknown-kind.rec"), check=False)
        expect(rc == 2 and "a request of a kind this afasim cannot replay: nbd.teleport" in text,
               "a request of an unknown kind is a bad record: exit 2")

        # Hostile round 22: a final state that differs printed both whole states (about 3,000
        # lines each for this array); only the lines that differ are shown.
        last = next(i for i, r in enumerate(records) if r[1] == "final")
        final = records[last][4]
        edited_final = re.sub(rb'"events_total": (\d+)', lambda m: b'"events_total": ' + str(int(m.group(1)) + 1).encode(), final)
        expect(edited_final != final and final.count(b"\n") > 500, "planted: the final state's event count")
        edited = list(records)
        edited[last] = records[last][:4] + (edited_final,)
        write_session(ws.path("final.rec"), header, edited)
        rc, text = replay(ws.path("final.rec"), check=False)
        total = int(re.search(rb'"events_total": (\d+)', final).group(1))
        expect(rc == 1 and "the final states differ in 1 place(s):" in text and
               f"\n  /events_total: recorded {total + 1}, replayed {total}" in text and text.count("\n") < 60,
               "a differing final state names where it differs (/events_total), not the whole state")


# ---------------------------------------------------------------------------------------
STORAGE = "/Storage/1"
# Passwords of the accounts the Redfish session makes: none may appear in the record.
OPS_PASSWORD, OPS_PASSWORD_2, WATCHER_PASSWORD = "ops-first-Pa55", "ops-second-Pa55", "watcher-Pa55-word"


def redfish(s, method, path, body=None, headers=None, user=None):
    """A request under /redfish/v1 with Basic credentials (the admin's, or `user`'s (name, password)):
    (status, response headers, JSON document or None)."""
    import base64
    h = dict(headers or {})
    h["Authorization"] = s.authorization() if user is None else \
        "Basic " + base64.b64encode(f"{user[0]}:{user[1]}".encode()).decode()
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(f"{s.scheme}://127.0.0.1:{s.rest_port}/redfish/v1{path}", data=data, method=method,
                                 headers=h)
    try:
        with urllib.request.urlopen(req, timeout=60, context=s.tls_context()) as r:
            raw = r.read()
            return r.status, dict(r.headers), (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, dict(e.headers), (json.loads(raw) if raw else None)


def record_a_redfish_session(ws):
    """ReST and Redfish changes, NBD writes to a Redfish volume through a Redfish connection, and
    account changes through both APIs; returns (record path, Redfish changes that reached the
    model, of them refused)."""
    rec = ws.path("redfish.rec")
    changes = refused = 0

    def rf(s, method, path, body=None, status=200, headers=None, user=None):
        nonlocal changes, refused
        code, hdrs, doc = redfish(s, method, path, body, headers, user)
        if code != status:
            raise AssertionError(f"Redfish {method} {path} -> {code} (wanted {status}): {doc}")
        if method != "GET" and not path.startswith("/AccountService"):
            changes += 1
            refused += code >= 400
        return doc, hdrs

    with Serve(ws.state, pace="realtime", extra=["--record", rec, "--payload", "memory"]) as s:
        policy = s.ok("POST", "/qos-policies", {"name": "gold", "min_iops": 1000, "max_iops": 50000})["id"]
        vol, _ = rf(s, "POST", STORAGE + "/Volumes", {"Name": "rf5", "CapacityBytes": 64 * MiB, "RAIDType": "RAID5"}, 201)
        group, _ = rf(s, "POST", STORAGE + "/EndpointGroups",
                      {"Name": "rfhost", "Oem": {"Afasim": {"Initiators": [{"Type": "nbd", "Address": "*"}]}}}, 201)
        connect = {"VolumeInfo": [{"Volume": {"@odata.id": vol["@odata.id"]}, "AccessCapabilities": ["Read", "Write"]}],
                   "Links": {"InitiatorEndpointGroups": [{"@odata.id": group["@odata.id"]}]}}
        rf(s, "POST", STORAGE + "/Connections", connect, 201)
        r10 = s.volume("r10", 32 * MiB, "RAID10")   # ReST, mapped to the Redfish host
        s.map(r10, int(group["Id"]))
        run(["fio", session_fio_job(ws.path("rf5.fio"), s.uri("rf5"), "randwrite", 21)], timeout=300)
        run(["fio", session_fio_job(ws.path("r10.fio"), s.uri("r10"), "randrw", 22)], timeout=300)
        # A PATCH with the ETag a GET gave (the GET is not recorded), then refusals that reached
        # the model: the same ETag again (412) and an unknown property (400).
        _, hdrs = rf(s, "GET", STORAGE + f"/Volumes/{vol['Id']}")
        grow = {"CapacityBytes": 96 * MiB, "Oem": {"Afasim": {"QosPolicyId": policy}}}
        rf(s, "PATCH", STORAGE + f"/Volumes/{vol['Id']}", grow, 200, {"If-Match": hdrs["ETag"]})
        rf(s, "PATCH", STORAGE + f"/Volumes/{vol['Id']}", {"Name": "late"}, 412, {"If-Match": hdrs["ETag"]})
        rf(s, "PATCH", STORAGE + f"/Volumes/{vol['Id']}", {"Bogus": 1}, 400)
        # Made and deleted again: a fixed volume, its connection, a second endpoint group.
        scratch, _ = rf(s, "POST", STORAGE + "/Volumes",
                        {"Name": "scratch", "CapacityBytes": 16 * MiB, "ProvisioningPolicy": "Fixed"}, 201)
        connect["VolumeInfo"][0]["Volume"]["@odata.id"] = scratch["@odata.id"]
        conn, _ = rf(s, "POST", STORAGE + "/Connections", connect, 201)
        rf(s, "DELETE", STORAGE + f"/Connections/{conn['Id']}", None, 204)
        rf(s, "DELETE", STORAGE + f"/Volumes/{scratch['Id']}", None, 204)
        group2, _ = rf(s, "POST", STORAGE + "/EndpointGroups", {"Name": "gone"}, 201)
        rf(s, "DELETE", STORAGE + f"/EndpointGroups/{group2['Id']}", None, 204)
        # Accounts through both APIs; the operator's own change through Redfish names it.
        acct, _ = rf(s, "POST", "/AccountService/Accounts",
                     {"UserName": "ops", "Password": OPS_PASSWORD, "RoleId": "Operator"}, 201)
        rf(s, "PATCH", f"/AccountService/Accounts/{acct['Id']}", {"Password": OPS_PASSWORD_2})
        s.ok("POST", "/users", {"name": "watcher", "role": "monitor", "password": WATCHER_PASSWORD})
        rf(s, "POST", STORAGE + "/Volumes", {"Name": "ops-vol", "CapacityBytes": 16 * MiB}, 201,
           user=("ops", OPS_PASSWORD_2))
        rf(s, "DELETE", f"/AccountService/Accounts/{acct['Id']}", None, 204)
        run(["fio", "--verify_only", session_fio_job(ws.path("rf5.fio"), s.uri("rf5"), "randwrite", 21)], timeout=300)
        run(["fio", session_fio_job(ws.path("r10b.fio"), s.uri("r10"), "randwrite", 23)], timeout=300)
        rf(s, "GET", STORAGE + "/Volumes")
        admin_password = open(os.path.join(ws.state, "admin-password")).read().strip()
    return rec, changes, refused, admin_password


def redfish_record_replay():
    require_tools("fio")
    with Workspace() as ws:
        rec, changes, refused, admin_password = record_a_redfish_session(ws)
        header, records = read_session(rec)
        kinds = {}
        for r in records:
            kinds[r[1]] = kinds.get(r[1], 0) + 1
        log(f"{len(records)} records: {kinds}")
        expect(kinds.get("redfish", 0) == changes == 13 and kinds.get("redfish.error", 0) == refused == 2 and
               kinds.get("redfish.reply", 0) == changes - refused,
               "every Redfish change that reached the model is a redfish request with its answer; reads are not")
        expect(kinds.get("user.event", 0) == 4, "the account changes (3 Redfish, 1 ReST) are user.event requests")
        expect(kinds.get("rest", 0) >= 3 and kinds.get("nbd.io", 0) > 50, "beside the ReST calls and NBD batches")
        data = open(rec, "rb").read()
        for secret in (OPS_PASSWORD, OPS_PASSWORD_2, WATCHER_PASSWORD, admin_password):
            expect(secret.encode() not in data, f"no password in the record ({secret[:3]}...)")
        expect(any(r[1] == "event" and r[4].endswith(struct.pack("<Q", 3) + b"ops") for r in records),
               "the operator's Redfish change made an event that names it")

        replayed = ws.path("replay.rec")
        rc, text = replay(rec, "--record", replayed)
        expect(rc == 0 and f"{len(records)} records reproduced byte for byte" in text,
               "afasim replay reproduces a session mixing /api/v1 and /redfish/v1 changes")
        expect(data == open(replayed, "rb").read(), "the replay's own record is byte-identical to the session's")

        # Planted: without the first Redfish change, or the first account change, the replay
        # must report a divergence (as it did for every Redfish session before they were recorded).
        for kind in ("redfish", "user.event"):
            first = next(i for i, r in enumerate(records) if r[1] == kind)
            write_session(ws.path("planted.rec"), header, records[:first] + records[first + 1:])
            rc, text = replay(ws.path("planted.rec"), check=False)
            expect(rc == 1 and "diverged" in text, f"a record without its first {kind} request diverges")


def bad_records():
    require_tools("fio")
    with Workspace() as ws:
        with Serve(ws.state, extra=["--record", ws.path("s.rec")]) as s:
            s.volume("v", 64 * MiB, "RAID10")
        data = open(ws.path("s.rec"), "rb").read()
        cases = {
            "cut.rec": (data[:len(data) - 30], "cut short"),
            "flipped.rec": (data[:200] + bytes([data[200] ^ 0xFF]) + data[201:], "checksum does not match"),
            "text.rec": (b"hello\n", "not an afasim session record"),
            "v9.rec": (MAGIC + struct.pack("<I", 9) + data[12:], "format version 9"),
        }
        # A header seed of -1 was read as 2^64-1 and the replay "diverged" at its first completion.
        hlen = struct.unpack_from("<I", data, 12)[0]
        seed_neg = re.sub(rb'"seed":\s*\d+', b'"seed":-1', data[16:16 + hlen])
        cases["seed.rec"] = (data[:12] + struct.pack("<I", len(seed_neg)) + seed_neg +
                             struct.pack("<I", zlib.crc32(seed_neg)) + data[16 + hlen + 4:],
                             "header: seed: must be a whole number from 0 to 2^64-1")
        # Hostile round 28a (L3): a record of its end alone "reproduced 0 records" and passed.
        header, _ = read_session(ws.path("s.rec"))
        write_session(ws.path("empty.rec"), header, [])
        cases["empty.rec"] = (open(ws.path("empty.rec"), "rb").read(), "holds no records")
        for name, (content, message) in cases.items():
            open(ws.path(name), "wb").write(content)
            rc, text = replay(ws.path(name), check=False)
            expect(rc == 2 and message in text, f"{name}: exit 2, \"{message}\"")
        rc, text = replay(ws.path("missing.rec"), check=False)
        expect(rc == 2 and "cannot open" in text, "a missing file: exit 2")
        # A state directory that already holds an array cannot be recorded (a replay starts new).
        p = subprocess.run([os.environ["AFASIM_BINARY"], "serve", "--state", ws.state, "--listen", "127.0.0.1:0",
                            "--nbd-listen", "127.0.0.1:0", "--record", ws.path("again.rec")], capture_output=True,
                           timeout=60)
        expect(p.returncode == 2 and b"--record needs a new state directory" in p.stdout + p.stderr,
               "--record on a used state directory is refused")
        expect(not os.path.exists(ws.path("again.rec")), "the refused start leaves no record file")
        # An uncreatable record file is refused before the new state directory is created.
        fresh = ws.path("fresh-state")
        p = subprocess.run([os.environ["AFASIM_BINARY"], "serve", "--state", fresh, "--listen", "127.0.0.1:0",
                            "--nbd-listen", "127.0.0.1:0", "--record", ws.path("no/such/dir/x.rec")],
                           capture_output=True, timeout=60)
        expect(p.returncode == 2 and b"--record: cannot create" in p.stdout + p.stderr,
               "an uncreatable --record file: exit 2")
        expect(not os.path.exists(fresh), "the refused start leaves the state directory untouched")


# ---------------------------------------------------------------------------------------
BLOCK = 4096
BLOCKS = 16384  # 64 MiB volume: every write goes to a block of its own


def pattern(block):
    return (struct.pack("<Q", block) + bytes(range(256)) * 16)[:BLOCK]


def write_flush_until_killed(s, uri, flushes_wanted):
    """Writes every block once (random order, 32 in flight), a FLUSH after every 200 writes;
    once `flushes_wanted` FLUSHes completed, kill -9 the server with writes in flight.
    Returns the blocks whose write was acknowledged before a FLUSH that completed was sent."""
    import nbd
    h = nbd.NBD()
    h.connect_uri(uri)
    order = list(range(BLOCKS))
    random.Random(5).shuffle(order)
    writes, flushes = {}, {}  # cookie -> block; cookie -> blocks acknowledged when it was sent
    acked, durable = set(), set()
    issued = completed_flushes = 0
    while completed_flushes < flushes_wanted and (issued < BLOCKS or writes or flushes):
        while len(writes) < 32 and issued < BLOCKS:
            b = order[issued]
            issued += 1
            writes[h.aio_pwrite(pattern(b), b * BLOCK)] = b
            if issued % 200 == 0:
                flushes[h.aio_flush()] = set(acked)
        h.poll(-1)
        for c in [c for c in writes if h.aio_command_completed(c)]:
            acked.add(writes.pop(c))
        for c in [c for c in flushes if h.aio_command_completed(c)]:
            durable |= flushes.pop(c)
            completed_flushes += 1
    log(f"{issued} writes issued, {len(writes)} in flight, {len(durable)} acknowledged before a completed FLUSH;"
        " kill -9")
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    s.proc = None
    s.log_file.close()
    return durable


def kill_after_flush():
    """Writes with FLUSH under load; kill -9 mid-stream; after a restart the flushed writes are there."""
    require_tools("nbdsh")
    import nbd
    with Workspace() as ws:
        s = Serve(ws.state, pace="realtime").start()
        try:
            vol = s.volume("k", BLOCKS * BLOCK, "RAID5")
            s.map(vol, s.host("any", ["*"]))
            # Each FLUSH fdatasyncs 40 payload files (about 1 s on a slow disk): 6 of them.
            durable = write_flush_until_killed(s, s.uri("k"), 6)
        finally:
            if s.proc is not None:
                s.proc.kill()
                s.proc.wait()
        expect(len(durable) >= 800, f"{len(durable)} flushed writes to check")
        with Serve(ws.state) as s2:
            h = nbd.NBD()
            h.connect_uri(s2.uri("k"))
            lost = [b for b in sorted(durable) if h.pread(BLOCK, b * BLOCK) != pattern(b)]
            expect(not lost, f"every flushed write reads back after kill -9 and a restart (lost: {lost[:10]})")


if __name__ == "__main__":
    main({"record_replay": record_replay, "redfish_record_replay": redfish_record_replay,
          "bad_records": bad_records, "kill_after_flush": kill_after_flush})
