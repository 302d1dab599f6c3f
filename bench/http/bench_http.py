#!/usr/bin/env python3
"""bench_http: afasim's HTTP front end against the least server of the same library (issue 14).

Starts `afasim serve` (as `make run` does: realtime pace, file payload, SQLite state, its
default request log) on a fresh state directory, creates VOLUMES volumes through the API
(timing each POST at the client: they are durable, SQLite commits before the 201), then
takes the bytes of GET /api/v1/system and GET /api/v1/volumes and serves them from
afasim_http_baseline (Boost.Beast, the same threads, none of afasim's work). wrk runs
against both, in alternation, ROUNDS times; the table gives the medians and the ratio
afasim / baseline. Issue 14 asks for >= 0.5x and >= 10k req/s, p99 < 10 ms, and a POST p50
under 3 ms.

  --compare-httplib  also measures cpp-httplib 0.11's least server on the same bytes (the
                     front-end decision, docs/http-front-end.md)
  --hostile URL      instead: 64 slowloris and 64 idle keep-alive sockets from 127.0.0.2
                     against URL's server while 20 GETs of URL are timed from 127.0.0.1
                     (as the admin of --state DIR when it holds an admin-password file)

Not a test: it asserts nothing.

  bench_http [--afasim BIN] [--baseline BIN] [--duration S] [--rounds N] [--volumes N]
"""

import argparse
import base64
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

AFASIM = "@AFASIM_BINARY@"
BASELINE = "@AFASIM_HTTP_BASELINE@"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"bench_http: server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"bench_http: nothing listens on {port}")


def auth_header(state_dir):
    """Basic credentials for the admin when the server wrote a password file, else none."""
    path = os.path.join(state_dir, "admin-password")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        password = f.read().strip()
    token = base64.b64encode(f"admin:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def create_volumes(port, count, headers):
    """POSTs `count` volumes on one keep-alive connection; their client-side latencies, ms."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    took = []
    for i in range(count):
        body = json.dumps({"name": f"bench{i:04d}", "capacity_bytes": "1GiB"})
        start = time.perf_counter()
        conn.request("POST", "/api/v1/volumes", body,
                     {"Content-Type": "application/json", **headers})
        res = conn.getresponse()
        res.read()
        took.append((time.perf_counter() - start) * 1000)
        if res.status != 201:
            sys.exit(f"bench_http: POST /volumes answered {res.status}")
    conn.close()
    return took


def fetch(port, path, headers):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", path, headers=headers)
    res = conn.getresponse()
    body = res.read()
    conn.close()
    if res.status != 200:
        sys.exit(f"bench_http: GET {path} answered {res.status}")
    return body


def wrk(url, duration, connections, threads, headers):
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency"]
    for k, v in headers.items():
        cmd += ["-H", f"{k}: {v}"]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, float(p99.group(1)) * scale, int(errors.group(1)) if errors else 0


def start_afasim(binary, state, port):
    log = open(os.path.join(state, "serve.log"), "w")
    proc = subprocess.Popen(
        [binary, "serve", "--listen", f"127.0.0.1:{port}", "--nbd-listen", "none",
         "--nbd-socket", os.path.join(state, "nbd.sock"), "--state", state],
        stdout=log, stderr=subprocess.STDOUT)
    wait_listening(port, proc)
    time.sleep(0.5)  # the admin password file is written before the listener opens
    return proc


def start_baseline(binary, library, port, files):
    routes = [f"{path}={file}" for path, file in files.items()]
    proc = subprocess.Popen([binary, "--library", library, "--port", str(port), "--threads", "2",
                             *routes])
    wait_listening(port, proc)
    return proc


def measure(args):
    tmp = tempfile.mkdtemp(prefix="bench_http.")
    procs = []
    try:
        port = free_port()
        procs.append(start_afasim(args.afasim, tmp, port))
        headers = auth_header(tmp)
        posts = create_volumes(port, args.volumes, headers)
        files = {}
        for path in ("/api/v1/system", "/api/v1/volumes"):
            files[path] = os.path.join(tmp, path.rsplit("/", 1)[1] + ".json")
            with open(files[path], "wb") as f:
                f.write(fetch(port, path, headers))
        servers = {"afasim": (port, headers)}
        libraries = ["beast"] + (["httplib"] if args.compare_httplib else [])
        for lib in libraries:
            p = free_port()
            procs.append(start_baseline(args.baseline, lib, p, files))
            servers[f"{lib} baseline"] = (p, {})
        results = {}
        for r in range(args.rounds):
            for path in files:
                for name, (p, h) in servers.items():
                    rps, p99, bad = wrk(f"http://127.0.0.1:{p}{path}", args.duration,
                                        args.connections, args.threads, h)
                    results.setdefault((path, name), []).append((rps, p99, bad))
        report(results, files, servers, posts, args)
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def report(results, files, servers, posts, args):
    print(f"wrk -t{args.threads} -c{args.connections} -d{args.duration}s, {args.rounds} rounds, "
          f"medians; GET /volumes lists {args.volumes} volumes")
    print(f"{'path':18} {'server':18} {'req/s':>10} {'p99 ms':>8} {'non-2xx':>8} {'ratio':>7}")
    for path in files:
        base = statistics.median(r[0] for r in results[(path, "beast baseline")])
        for name in servers:
            rows = results[(path, name)]
            rps = statistics.median(r[0] for r in rows)
            p99 = statistics.median(r[1] for r in rows)
            bad = sum(r[2] for r in rows)
            print(f"{path:18} {name:18} {rps:10.0f} {p99:8.2f} {bad:8d} {rps / base:7.2f}")
    posts.sort()
    print(f"POST /volumes (durable, one client, keep-alive): p50 {statistics.median(posts):.2f} ms, "
          f"p99 {posts[int(len(posts) * 0.99) - 1]:.2f} ms over {len(posts)}")


def hostile(url_text, count, headers):
    """64 slowloris + 64 idle keep-alive sockets from 127.0.0.2; 20 timed GETs from 127.0.0.1."""
    m = re.match(r"http://([^:/]+):(\d+)(/.*)", url_text)
    host, port, path = m.group(1), int(m.group(2)), m.group(3)
    request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\n"
    socks, stop = [], threading.Event()
    for i in range(count * 2):
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        try:
            s.connect((host, port))
            s.sendall((request + ("X-Slow: " if i < count else "\r\n")).encode())
        except OSError:
            pass
        socks.append(s)

    def trickle():
        while not stop.is_set():
            for s in socks[:count]:
                try:
                    s.send(b"a")
                except OSError:
                    pass
            time.sleep(1)

    threading.Thread(target=trickle, daemon=True).start()
    took, failed = [], 0
    for _ in range(20):
        start = time.perf_counter()
        try:
            conn = http.client.HTTPConnection(host, port, timeout=10)
            conn.request("GET", path, headers=headers)
            res = conn.getresponse()
            res.read()
            if res.status != 200:
                failed += 1
            conn.close()
        except OSError:
            failed += 1
        took.append((time.perf_counter() - start) * 1000)
    stop.set()
    for s in socks:
        s.close()
    took.sort()
    print(f"{count} slowloris + {count} idle keep-alive sockets: 20 GETs of {url_text}: "
          f"p50 {statistics.median(took):.1f} ms, max {took[-1]:.1f} ms, {failed} failed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--afasim", default=AFASIM)
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--volumes", type=int, default=100)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--compare-httplib", action="store_true")
    ap.add_argument("--hostile", metavar="URL")
    ap.add_argument("--hostile-count", type=int, default=64)
    ap.add_argument("--state", help="with --hostile: the server's state directory (credentials)")
    args = ap.parse_args()
    if shutil.which("wrk") is None and not args.hostile:
        sys.exit("bench_http: wrk is not installed (make bench installs it: scripts/bootstrap.sh bench)")
    if args.hostile:
        hostile(args.hostile, args.hostile_count, auth_header(args.state) if args.state else {})
    else:
        measure(args)


if __name__ == "__main__":
    main()
