#!/usr/bin/env python3
"""Issue 15's report acceptance: `afasim run config/scenarios/drive-failure-rebuild.json
--html report.html` shows the rebuild's effect on latency.

Runs the command (with --format json on stdout, from the same run), then checks
  - the data: each volume's p99 latency while it is degraded (11 s to its "online again"
    event, when the rebuild has restored its extents), averaged over those seconds, is above
    the highest second's p99 before the failure (1-9 s) (docs/scenarios.md: archive 386-394 µs
    before, 633-784 µs array-wide while the RAID 5 extents are rebuilt);
  - the chart: in the HTML's latency panel, each volume's p99 line is drawn higher (a smaller
    SVG y) during the rebuild than before it, by more than the 0.1 px its points are printed to;
  - a headless Chromium screenshot of the page (build/test-artifacts/report/), not blank.
Exit 77 (skipped) without chromium, or under an address-space limit (Chromium does not start under one).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nbd"))
from harness import browser_address_space_problem  # noqa: E402

SOURCE = os.environ["AFASIM_SOURCE_DIR"]
BINARY = os.environ["AFASIM_BINARY"]
ARTIFACTS = os.path.join(os.environ.get("AFASIM_ARTIFACT_DIR", "."), "report")


def expect(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok: " + what, flush=True)


def p99_line(svg, volume):
    """(x, y) points of `volume`'s p99 polylines in the latency panel."""
    panel = re.search(r'<g id="panel-latency">(.*?)</g>', svg, re.S).group(1)
    points = []
    for attrs, title in re.findall(r"<polyline ([^>]*)><title>([^<]*)</title>", panel):
        if title == volume:
            pts = re.search(r'points="([^"]*)"', attrs).group(1)
            points += [tuple(float(v) for v in p.split(",")) for p in pts.split()]
    return points


def mean_y(points, x_from, x_to):
    ys = [y for x, y in points if x_from <= x <= x_to]
    return sum(ys) / len(ys)


def main():
    work = tempfile.mkdtemp(prefix="afasim-report-")
    try:
        html_path = os.path.join(work, "report.html")
        scenario = os.path.join(SOURCE, "config/scenarios/drive-failure-rebuild.json")
        p = subprocess.run([BINARY, "run", scenario, "--html", html_path, "--format", "json", "--quiet"],
                           capture_output=True, timeout=300)
        expect(p.returncode == 0, "afasim run --html exits 0: " + p.stderr.decode()[-400:])
        report = json.loads(p.stdout)
        rows = report["timeline"]
        ids = {v["name"]: v["id"] for v in report["volumes"]}
        degraded_until = {}
        for volume in ("db", "archive"):
            # The volume is degraded from the failure (20 s) until the rebuild restores its
            # extents (its "online again" event): the rows wholly inside that span.
            restored = [e["time_s"] for e in report["events"]
                        if e["object"] == f"volume/{ids[volume]}" and "online again" in e["message"]]
            expect(len(restored) == 1, f"{volume}: one 'online again' event after the rebuild")
            # Before: the seconds once the write cache destages by age (12 s on), as through the rebuild.
            before = max(r["volume_latency_us"][volume]["p99"] for r in rows if 13 <= r["t_s"] <= 19)
            degraded_until[volume] = restored[0]
            # While degraded, host I/O queues behind rebuild pieces at the SSDs (the controllers'
            # cores and DRAM are idle at this load: docs/performance-model.md), so the p99 rises
            # in the seconds a piece lands on the volume's SSDs: its mean over the span is above
            # the highest second before the failure (tests/workload/scenario_test.cpp asserts the
            # same of the whole array's latency).
            span = [r["volume_latency_us"][volume]["p99"] for r in rows if 21 <= r["t_s"] <= restored[0]]
            during = sum(span) / len(span)
            expect(during > before, f"{volume}: mean p99 during the rebuild {during:.1f} µs > before {before} µs")

        html = open(html_path, encoding="utf-8").read()
        expect(html.startswith("<!doctype html>") and "<script" not in html, "one HTML page, no script")
        marks = {float(t): float(x) for t, x in re.findall(r'class="action" data-t="([0-9.]+)" x1="([0-9.]+)"', html)}
        expect(sorted(marks) == [20.0, 50.0], "the fault and the replacement are marked at 20 s and 50 s")
        px_per_s = (marks[50.0] - marks[20.0]) / 30
        x_of = lambda t: marks[20.0] + (t - 20) * px_per_s  # noqa: E731
        for volume in ("db", "archive"):
            line = p99_line(html, volume)
            before, during = mean_y(line, x_of(13), x_of(19)), mean_y(line, x_of(21), x_of(degraded_until[volume]))
            # Drawn where the data is: higher (smaller y) while degraded, as the p99 values
            # above are; by more than the 0.1 px the points are printed to. How much higher
            # depends on the log scale's decades and the rise (this run: ~20 px of 150).
            expect(before - during > 1,
                   f"{volume}: the p99 line is drawn {before - during:.0f} px higher during the rebuild")

        chromium = shutil.which("chromium")
        if chromium is None:
            print("SKIP: chromium is not installed (scripts/bootstrap.sh installs it)")
            return 77
        problem = browser_address_space_problem()
        if problem:
            print("SKIP: " + problem)
            return 77
        os.makedirs(ARTIFACTS, exist_ok=True)
        png = os.path.join(ARTIFACTS, "drive-failure-rebuild.png")
        shutil.copy(html_path, os.path.join(ARTIFACTS, "drive-failure-rebuild.html"))
        if os.path.exists(png):
            os.remove(png)
        subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1200,1400", "--screenshot=" + png, "file://" + html_path],
                       capture_output=True, timeout=120)
        expect(os.path.exists(png) and os.path.getsize(png) > 50_000, "a screenshot of the report: " + png)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
