#!/usr/bin/env python3
"""Issue 15's browser test: the manager page in headless Chromium, against the real binary.

    web_test.py

Starts `afasim serve` (--pace realtime, payload in memory), drives the page with Selenium
and Debian's chromium/chromedriver: creates a volume, a host and a mapping through the
Storage view's forms and sees the volume listed; runs fio over NBD (3,000 4 KiB reads at
1,000 IOPS) and sees the volume's IOPS chart move; injects a drive failure through the
Events view (with its confirmation) and sees the event and the alert. Along the way it
checks /metrics: promtool accepts it while fio runs, and the volume's read counter rises by
exactly the I/Os fio reports. Screenshots of the four views go to
$AFASIM_ARTIFACT_DIR/web/ (ctest: build/test-artifacts/web/). Exit 77 (skipped) when
chromium, chromedriver, selenium, fio or promtool are missing, and under an address-space
limit (`ulimit -v`: Chromium does not start under one).
"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
STARTED = time.time()
sys.path.insert(0, os.path.join(HERE, "..", "nbd"))
from harness import (GiB, Serve, Workspace, browser_address_space_problem, expect, log,  # noqa: E402
                     require_tools, run)

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    log("SKIP: python3-selenium is not installed (scripts/bootstrap.sh installs it)")
    sys.exit(77)


def browser():
    opts = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1500,1000", "--no-first-run", "--disable-extensions", "--disable-sync",
              "--disable-background-networking", "--disable-component-update", "--no-default-browser-check",
              "--mute-audio"]:
        opts.add_argument(a)
    opts.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def metrics(serve):
    req = urllib.request.Request(f"http://127.0.0.1:{serve.rest_port}/metrics",
                                 headers={"Authorization": serve.authorization()})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode()


def counter(text, name, labels):
    m = re.search("^" + re.escape(name + "{" + labels + "}") + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def promtool_ok(text):
    p = subprocess.run(["promtool", "check", "metrics"], input=text.encode(), capture_output=True)
    if p.returncode != 0:
        log(p.stdout.decode(), p.stderr.decode())
    return p.returncode == 0


class Page:
    def __init__(self, driver, url, shots):
        self.d, self.url, self.shots = driver, url, shots
        self.wait = WebDriverWait(driver, 20, poll_frequency=0.1)

    def tab(self, view):
        self.d.find_element(By.CSS_SELECTOR, f'#tabs a[data-view="{view}"]').click()
        self.wait.until(lambda d: d.find_element(By.ID, "view-" + view).is_displayed())

    def fill(self, form, **fields):
        for name, value in fields.items():
            el = self.d.find_element(By.CSS_SELECTOR, f"#{form} [name={name}]")
            if el.tag_name == "select":
                self.choose(form, name, str(value))
            else:
                el.clear()
                el.send_keys(str(value))
        self.d.find_element(By.CSS_SELECTOR, f"#{form} button[type=submit]").click()

    def choose(self, form, name, text):
        # The page rebuilds a select's options when its lists refresh (fillSelect keeps the
        # chosen value, but the option elements Selenium holds go stale): choose again until
        # the choice reads back.
        selector = f"#{form} [name={name}]"

        def chosen(d):
            try:
                Select(d.find_element(By.CSS_SELECTOR, selector)).select_by_visible_text(text)
                return Select(d.find_element(By.CSS_SELECTOR, selector)).first_selected_option.text == text
            except StaleElementReferenceException:
                return False

        self.wait.until(chosen, message=f"{form}: choose {text!r} for {name}")

    def click(self, xpath, what):
        # The page re-renders its tables when they refresh: a button found just before may be
        # gone when clicked (StaleElementReferenceException: a fresh clone's make test met it once); find it again.
        def clicked(d):
            try:
                d.find_element(By.XPATH, xpath).click()
                return True
            except StaleElementReferenceException:
                return False

        self.wait.until(clicked, message=what)

    def until(self, predicate, what):
        # As click: the page re-renders while elements are read (a fresh clone's make test met
        # StaleElementReferenceException reading a drive's title); read them again.
        def holds(d):
            try:
                return predicate()
            except StaleElementReferenceException:
                return False

        self.wait.until(holds, message=what)
        log(f"ok ({time.time() - STARTED:.1f} s): " + what)

    def text_of(self, selector):
        return self.d.find_element(By.CSS_SELECTOR, selector).text

    def until_text(self, selector, pattern, what):
        self.wait.until(lambda d: re.search(pattern, d.find_element(By.CSS_SELECTOR, selector).text),
                        message=what)
        log(f"ok ({time.time() - STARTED:.1f} s): " + what)

    def no_error(self):
        err = self.d.find_element(By.ID, "error")
        expect(not err.is_displayed(), "no error shown" + ("" if not err.is_displayed() else ": " + err.text))

    def shot(self, name):
        path = os.path.join(self.shots, name + ".png")
        self.d.save_screenshot(path)
        log("screenshot " + path)


def test():
    require_tools("fio", "promtool", "chromium", "chromedriver")
    problem = browser_address_space_problem()
    if problem:
        log("SKIP: " + problem)
        sys.exit(77)
    shots = os.path.join(os.environ.get("AFASIM_ARTIFACT_DIR", "."), "web")
    os.makedirs(shots, exist_ok=True)
    with Workspace() as ws, Serve(ws.state, pace="realtime", extra=["--payload", "memory"]) as s:
        log(f"serve up after {time.time() - STARTED:.1f} s")
        d = browser()
        log(f"browser up after {time.time() - STARTED:.1f} s")
        try:
            page = Page(d, f"http://127.0.0.1:{s.rest_port}/", shots)
            d.get(page.url)
            # The API answers 401 until the page has logged in (POST /sessions with the admin's
            # password from the state directory); the page then keeps a bearer token.
            page.wait.until(lambda d: d.find_element(By.ID, "login").is_displayed(), message="the login form")
            with open(os.path.join(ws.state, "admin-password")) as f:
                page.fill("login-form", user="admin", password=f.read().strip())
            page.wait.until(lambda d: not d.find_element(By.ID, "login").is_displayed(), message="logged in")
            log(f"ok ({time.time() - STARTED:.1f} s): logged in through the page's form")
            page.until_text("#controllers", r"Controller A[\s\S]*Controller B", "physical view shows both controllers")

            # More QoS policies than one page of the API holds (1,000): the page lists them all
            # (hostile round 23: it drew the first 1,000 of a list without a word).
            for i in range(1001):
                s.ok("POST", "/qos-policies", {"name": f"bulk{i:04d}", "max_iops": 1000 + i})
            # Storage: a volume, a host with an NBD initiator, a mapping, all through the forms.
            page.tab("storage")
            page.until_text("#qos-table tbody", r"bulk0000[\s\S]*bulk1000", "all 1,001 bulk QoS policies are listed")
            page.fill("volume-form", name="web01", capacity="1GiB", provisioning="fixed", max_iops=5000)
            page.until_text("#volumes-table tbody", r"web01\s+1 GiB\s+RAID10\s+fixed\s+1 GiB\s+- / 5000 / -",
                            "the new volume is listed with its size, RAID type, provisioning and QoS")
            page.fill("volume-form", name="bad", capacity="1GiB", min_iops=9000, max_iops=10)
            page.until_text("#error", r"min_iops \(9000\) must not exceed max_iops \(10\)",
                            "a refused request shows the API's detail")
            d.find_element(By.ID, "error-close").click()
            page.fill("host-form", name="lab", initiator="nbd:127.0.0.1")
            page.until_text("#hosts-table tbody", r"lab\s+nbd:127\.0\.0\.1", "the host is listed")
            page.fill("mapping-form", volume_id="web01", host_id="lab")
            page.until_text("#mappings-table tbody", r"web01\s+lab\s+0", "the mapping is listed as LUN 0")
            page.no_error()
            page.shot("storage")

            # fio over NBD while the performance view is open.
            page.tab("performance")
            before = metrics(s)
            labels = 'volume_id="1",volume="web01",op="read"'
            reads_before = counter(before, "afasim_volume_ios_total", labels)
            expect(reads_before == 0, "the volume has served no reads yet")
            fio = subprocess.Popen(
                ["fio", "--ioengine=nbd", f"--uri=nbd://127.0.0.1:{s.nbd_port}/web01", "--rw=randread",
                 "--bs=4k", "--iodepth=8", "--size=256m", "--rate_iops=1000", "--number_ios=2500",
                 "--name=web", "--output-format=json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            page.wait.until(lambda d: d.execute_script(
                "const c = afasim.charts['chart-vol-iops'];"
                "const d = c && c.data.datasets.find((x) => x.label === 'web01');"
                "return d && d.data.filter((p) => p.y > 0).length >= 1;"), message="the volume's IOPS chart moves")
            log(f"ok ({time.time() - STARTED:.1f} s): the volume's IOPS chart moves")
            colours = d.execute_script(
                "const of = (id, label) => { const x = afasim.charts[id].data.datasets.find((d) => d.label === label);"
                "  return x ? x.borderColor + (x.borderDash.length ? ' dashed' : '') : null; };"
                "return [of('chart-vol-iops', 'web01'), of('chart-vol-mbps', 'web01'), of('chart-vol-latency', 'web01 p99'),"
                "        of('chart-vol-latency', 'web01 mean'), of('chart-ctl-iops', 'A'), of('chart-ctl-iops', 'B')];")
            expect(colours[0] and colours[0] == colours[1] == colours[2] and colours[3] == colours[0] + " dashed"
                   and len({colours[0], colours[4], colours[5]}) == 3,
                   f"one colour per object in every chart, its mean dashed, objects apart: {colours}")
            expect(fio.poll() is None, "fio is still running")
            expect(promtool_ok(metrics(s)), "promtool check metrics passes on /metrics under load")
            out, err = fio.communicate(timeout=60)
            expect(fio.returncode == 0, "fio finished: " + err.decode()[-500:])
            fio_reads = json.loads(out[out.index(b"{"):])["jobs"][0]["read"]["total_ios"]
            page.shot("performance")
            reads_after = counter(metrics(s), "afasim_volume_ios_total", labels)
            expect(fio_reads == 2500 and reads_after - reads_before == fio_reads,
                   f"the volume's read counter rose by what fio did over NBD ({fio_reads})")

            # Events and faults: inject a drive failure, confirm, see the event and the alert.
            page.tab("events")
            page.until_text("#stream-state", "live", "the event stream is live")
            page.fill("fault-form", type="drive_fail", drive=7)
            page.until_text("#confirm-text", r"Inject drive_fail on drive 7\?", "injecting asks for confirmation")
            d.find_element(By.ID, "confirm-yes").click()
            page.until_text("#events-table tbody", r"drive 7 .*failed", "the failure arrives over the stream")
            # web01's lost chunk rebuilds in well under a second: the alert is raised and
            # cleared, both as events.
            page.until_text("#events-table tbody", r"alert raised: volume_degraded: volume web01",
                            "the degraded volume raised an alert")
            page.fill("fault-form", type="supercap_degrade")
            d.find_element(By.ID, "confirm-yes").click()
            page.until_text("#alerts-list", r"supercap_degraded", "a degraded supercap is an active alert")
            page.fill("fault-form", type="drive_slow", drive=8, latency_multiplier=4)
            d.find_element(By.ID, "confirm-yes").click()
            page.until_text("#events-table tbody", r"drive 8 .*slow", "the slowed drive arrives over the stream")
            page.shot("events")

            page.tab("physical")
            page.until_text("#physical-alerts", r"supercap_degraded", "the physical view lists the alert")
            page.until_text("#power", r"degraded", "and shows the supercap degraded")
            page.until(lambda: len(d.find_elements(By.CSS_SELECTOR, "#drive-7.drive-failed")) == 1,
                       "drive 7 is drawn failed")

            def drawn_slow():
                slow = d.find_elements(By.CSS_SELECTOR, "#drive-8.drive-healthy.drive-slow")
                return len(slow) == 1 and "slowed ×4" in slow[0].get_attribute("title")

            page.until(drawn_slow, "drive 8 is drawn healthy and slowed (a new user saw only healthy)")
            page.no_error()
            page.shot("physical")

            # Clear the supercap fault from the faults table: its row then offers no Clear (it
            # offered one on a power_loss already restored, and the API said 409).
            page.tab("events")
            row = "//table[@id='faults-table']//tr[td[text()='supercap_degrade']]"
            page.click(row + "//button[@data-clear]", "the supercap fault's Clear")
            page.until_text("#confirm-text", r"supercap_restore", "clearing asks for confirmation")
            d.find_element(By.ID, "confirm-yes").click()
            page.until_text("#faults-table tbody", r"supercap_restore", "the restore is listed")
            page.wait.until(lambda d: not d.find_elements(By.XPATH, row + "//button[@data-clear]") and
                            "cleared" in d.find_element(By.XPATH, row).text,
                            message="the cleared fault offers no Clear")
            page.no_error()
            # The one refused request above is logged by the browser as a failed load.
            # So are the 401s that came before the login.
            console = [e for e in d.get_log("browser") if e["level"] == "SEVERE" and "status of 422" not in e["message"]
                       and "status of 401" not in e["message"]]
            expect(not console, f"no errors in the browser console: {console}")
        finally:
            d.quit()


if __name__ == "__main__":
    started = time.time()
    test()
    log(f"passed in {time.time() - started:.1f} s")
