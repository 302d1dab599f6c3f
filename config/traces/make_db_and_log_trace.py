#!/usr/bin/env python3
# Writes config/traces/db-and-log.blkparse.txt, the sample block trace the README replays with
# `afasim trace` (docs/workloads.md "Trace replay"). It is synthetic, made by this script once
# (seed 11), not recorded on a machine and not downloaded:
#
#   python3 config/traces/make_db_and_log_trace.py > config/traces/db-and-log.blkparse.txt
#
# Two devices in blkparse's default text format, as `blkparse -q` prints it (no closing
# summary), 4 s of trace:
# - 8,16, a database: 8 KiB random reads (70 %) and writes over its first 64 GiB, ~15 I/Os a
#   second, each with the Q, G, I, D and C lines blkparse shows for one request;
# - 8,0, its log: every 400 ms a run of 2 sequential 4 KiB writes, then a flush (a Q FWS line
#   without a sector, as jbd2 sends it).
# The C lines give recorded responses of 90-400 us (reads) and 30-120 us (writes), drawn
# uniformly (made up, not measured); `afasim trace` prints them beside its own.
import random

rng = random.Random(11)
DURATION_S = 4.0
SECTOR_BYTES = 512
DB_SECTORS = 64 * 2**30 // SECTOR_BYTES

events = []  # (time_s, cpu, pid, action, rwbs, sector, count, proc, device)


def request(t, device, cpu, pid, proc, rwbs, sector, count, response_s):
    """The lines blkparse prints for one request: queued, got a request, inserted, issued, completed."""
    for dt, action in ((0.0, "Q"), (0.0000008, "G"), (0.0000021, "I"), (0.0000043, "D")):
        events.append((t + dt, cpu, pid, action, rwbs, sector, count, proc, device))
    events.append((t + 0.0000043 + response_s, cpu, 0, "C", rwbs, sector, count, "0", device))


# The database: Poisson arrivals at 15 a second.
t = 0.0
while True:
    t += rng.expovariate(15.0)
    if t >= DURATION_S:
        break
    sector = rng.randrange(0, DB_SECTORS // 16) * 16  # 8 KiB aligned
    cpu = rng.randrange(4)
    if rng.random() < 0.7:
        request(t, "8,16", cpu, 4211, "postgres", "R", sector, 16, rng.uniform(90e-6, 400e-6))
    else:
        request(t, "8,16", cpu, 4211, "postgres", "WS", sector, 16, rng.uniform(30e-6, 120e-6))

# The log: every 400 ms, 2 sequential 4 KiB writes 50 us apart, then a flush.
log_sector = 2048
t = 0.1
while t < DURATION_S:
    for i in range(2):
        request(t + i * 50e-6, "8,0", 1, 388, "jbd2/sdb1-8", "WS", log_sector, 8, rng.uniform(30e-6, 120e-6))
        log_sector += 8
    events.append((t + 2 * 50e-6 + 20e-6, 1, 388, "Q", "FWS", None, None, "jbd2/sdb1-8", "8,0"))
    t += 0.4

events.sort(key=lambda e: e[0])
seq = {}
for time_s, cpu, pid, action, rwbs, sector, count, proc, device in events:
    maj, minor = device.split(",")
    seq[cpu] = seq.get(cpu, 0) + 1
    whole, nanos = divmod(round(time_s * 1e9), 10**9)
    head = f"{int(maj):3d},{int(minor):<3d} {cpu:2d} {seq[cpu]:8d} {whole:5d}.{nanos:09d} {pid:5d} {action:>2} {rwbs:>3}"
    if sector is None:
        print(f"{head} [{proc}]")
    else:
        print(f"{head} {sector} + {count} [{proc}]")
