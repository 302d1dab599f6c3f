"""Drives the real `afasim serve` binary for the NBD integration tests.

Starts the binary on free loopback ports with a temporary --state directory, provisions
through the ReST API (urllib, no third-party package), and runs the real NBD clients
(nbdinfo, nbdcopy, nbdsh, qemu-img, fio). The binary's path comes from AFASIM_BINARY
(ctest sets it). A missing client tool makes the test exit 77, which ctest reports as
skipped, never as passed.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SKIP = 77
MiB = 1 << 20
GiB = 1 << 30

# The Debian interpreter: nbdsh and the `nbd` module (python3-libnbd) live there, whatever
# python3 comes first in PATH.
CLIENT_ENV = dict(os.environ, PATH="/usr/bin:/bin:" + os.environ.get("PATH", ""))


def log(*args):
    print(*args, flush=True)


def require_tools(*tools):
    missing = [t for t in tools if shutil.which(t, path=CLIENT_ENV["PATH"]) is None]
    if missing:
        log("SKIP: not installed: " + ", ".join(missing) + " (scripts/bootstrap.sh installs them)")
        sys.exit(SKIP)


def browser_address_space_problem():
    """Why Chromium cannot run here, or None. Chromium reserves tens of GiB of address space at
    its start and dies (SIGTRAP) under a limit on it: a new user's `make test` under `ulimit -v
    8000000` failed the browser tests with "chromedriver unexpectedly exited"."""
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    return (f"the address space is limited (ulimit -v {soft // 1024}) and Chromium does not start under a "
            "limit; run without one (ulimit -v unlimited)")


def run(cmd, timeout=120, check=True, input_bytes=None):
    """Runs a client; on an unexpected exit code prints its output and fails the test."""
    log("$ " + " ".join(str(c) for c in cmd))
    p = subprocess.run([str(c) for c in cmd], capture_output=True, timeout=timeout, env=CLIENT_ENV,
                       input=input_bytes)
    if check and p.returncode != 0:
        log(p.stdout.decode(errors="replace"))
        log(p.stderr.decode(errors="replace"))
        raise AssertionError(f"{cmd[0]} exited with {p.returncode}")
    return p


def expect(cond, what):
    if not cond:
        raise AssertionError(what)
    log("ok: " + what)


class Serve:
    """One `afasim serve` process over a state directory that outlives restarts."""

    def __init__(self, state_dir, system=None, pace="none", extra=()):
        self.binary = os.environ.get("AFASIM_BINARY")
        if not self.binary or not os.path.exists(self.binary):
            raise AssertionError("AFASIM_BINARY does not name the afasim binary: %r" % self.binary)
        self.state_dir = state_dir
        self.system = system
        self.pace = pace
        self.extra = list(extra)
        self.proc = None
        self.scheme = "http"
        self.log_path = os.path.join(os.path.dirname(state_dir), "serve.log")

    def start(self):
        """Starts on free ports (port 0) and reads the ports the process reports in its log."""
        cmd = [self.binary, "serve", "--state", self.state_dir, "--listen", "127.0.0.1:0",
               "--nbd-listen", "127.0.0.1:0", "--pace", self.pace] + self.extra
        if self.system:
            cmd += ["--system", self.system]
        log("$ " + " ".join(cmd))
        self.log_file = open(self.log_path, "ab")
        log_start = self.log_file.tell()
        self.proc = subprocess.Popen(cmd, stdout=self.log_file, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        self.rest_port = self.nbd_port = None
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.dump_log()
                raise AssertionError(f"afasim serve exited with {self.proc.returncode} at start")
            with open(self.log_path, "rb") as f:
                f.seek(log_start)
                text = f.read().decode(errors="replace")
            rest = re.search(r"listening on (https?)://127\.0\.0\.1:(\d+)", text)
            nbd = re.search(r"nbd: listening on 127\.0\.0\.1:(\d+)", text)
            if rest and nbd:
                self.scheme, self.rest_port, self.nbd_port = rest.group(1), int(rest.group(2)), int(nbd.group(1))
                if self.api("GET", "/system")[0] == 200:
                    return self
            time.sleep(0.05)
        self.dump_log()
        raise AssertionError("afasim serve did not report its ports within 60 s")

    def stop(self):
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.dump_log()
            raise AssertionError("afasim serve did not stop within 60 s of SIGTERM")
        self.proc = None
        self.log_file.close()
        if rc != 0:
            self.dump_log()
            raise AssertionError(f"afasim serve exited with {rc} after SIGTERM")

    def dump_log(self):
        try:
            with open(self.log_path, "rb") as f:
                log("---- afasim serve log ----\n" + f.read().decode(errors="replace")[-20000:])
        except OSError:
            pass

    def api(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.scheme}://127.0.0.1:{self.rest_port}/api/v1{path}", data=data,
                                     method=method)
        if self.authorization():
            req.add_header("Authorization", self.authorization())
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60, context=self.tls_context()) as r:
                raw = r.read()
                return r.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, (json.loads(raw) if raw else None)

    def tls_context(self):
        """For HTTPS: trust the self-signed certificate the server made (--tls self-signed)."""
        if self.scheme != "https":
            return None
        import ssl
        return ssl.create_default_context(cafile=self.cert_file())

    def cert_file(self):
        return os.path.join(self.state_dir, "tls", "afasim.crt")

    def authorization(self):
        """Basic credentials of the admin the first start created (its password file)."""
        import base64
        path = os.path.join(self.state_dir, "admin-password")
        if not os.path.exists(path):  # a server without authentication (an older afasim)
            return None
        with open(path) as f:
            password = f.read().strip()
        return "Basic " + base64.b64encode(f"admin:{password}".encode()).decode()

    def ok(self, method, path, body=None):
        status, doc = self.api(method, path, body)
        if status // 100 != 2:
            raise AssertionError(f"{method} {path} -> {status}: {doc}")
        return doc

    def uri(self, export):
        return f"nbd://127.0.0.1:{self.nbd_port}/{export}"

    # Provisioning
    def volume(self, name, size, raid="RAID5", provisioning="thin"):
        return self.ok("POST", "/volumes", {"name": name, "capacity_bytes": size, "raid_type": raid,
                                            "provisioning": provisioning})["id"]

    def host(self, name, addresses):
        return self.ok("POST", "/hosts", {"name": name,
                                          "initiators": [{"type": "nbd", "address": a} for a in addresses]})["id"]

    def map(self, volume_id, host_id, read_only=False):
        return self.ok("POST", "/mappings", {"volume_id": volume_id, "host_id": host_id,
                                             "access": "read_only" if read_only else "read_write"})["id"]

    def events(self, category=None):
        items = self.ok("GET", "/events?limit=1000")["items"]
        return [e for e in items if category is None or e["category"] == category]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if exc[0] is not None:
            self.dump_log()
            if self.proc is not None:
                self.proc.kill()
                self.proc.wait()
                self.proc = None
            return False
        self.stop()
        return False


class Workspace:
    """A temporary directory for one test: state/, files, the serve log."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="afasim-nbd-it-")
        self.state = os.path.join(self.dir, "state")

    def path(self, name):
        return os.path.join(self.dir, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)
        return False


def random_file(path, size, seed):
    """`size` bytes that depend on `seed` only (so a failure can be replayed)."""
    import random
    rng = random.Random(seed)
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, 4 * MiB)
            f.write(rng.randbytes(n))
            left -= n
    log(f"wrote {size} random bytes to {path} (seed {seed})")


def main(tests):
    """Runs the test named by argv[1] (all of them without an argument)."""
    names = sys.argv[1:] or list(tests)
    for name in names:
        log(f"=== {name}")
        started = time.time()
        tests[name]()
        log(f"=== {name}: passed in {time.time() - started:.1f} s")
