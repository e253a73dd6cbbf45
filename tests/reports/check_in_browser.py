#!/usr/bin/env python3
"""Opens report.html pages in headless Chromium: they render without a console message, and
the diagrams (with the arrows of the calls they draw) and plots are in the page Chromium built.
Keeps a screenshot of each.

Usage: check_in_browser.py LOCKSIM SCENARIO_DIR SCREENSHOT_DIR

The pages: the run reports of two catalogue scenarios (a lock service's GC-pause race, and the
sessions workload's deadlock) and the replay of a deadlock that explore finds. Exits 77 (CTest:
skipped) when Chromium is not installed.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

LOCKSIM, SCENARIOS, SHOTS = (os.path.abspath(a) for a in sys.argv[1:4])
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# As root, in a container, offline: no sandbox, no GPU, nothing fetched from the network.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]
failures = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


def chromium(page, *extra):
    with tempfile.TemporaryDirectory() as profile:
        p = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, "file://" + page],
                           capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def open_page(name, page, sequences, plots, calls=0):
    if not os.path.exists(page):
        check(name, False, f"{page} was not written")
        return
    code, dom, log = chromium(page, "--dump-dom", "--virtual-time-budget=2000")
    console = [line for line in log.splitlines() if "CONSOLE" in line]
    check(f"{name}: renders without a console message", code == 0 and not console, f"exit {code}: {console[:3]}")
    found = len(re.findall(r'<svg[^>]*class="sequence"', dom))
    check(f"{name}: {sequences} sequence diagram(s) or more in the rendered page", found >= sequences, f"{found} found")
    found = len(re.findall(r'<line [^>]*><title>[^<]* -&gt; [^<]*</title></line>', dom))
    check(f"{name}: {calls} call arrow(s) or more in its diagrams", found >= calls, f"{found} found")
    found = len(re.findall(r'<div class="plot"', dom))
    check(f"{name}: {plots} plot(s) or more in the rendered page", found >= plots, f"{found} found")
    shot = os.path.join(SHOTS, name.replace(" ", "-") + ".png")
    code, _, _ = chromium(page, f"--screenshot={shot}", "--window-size=1280,1600")
    check(f"{name}: screenshot kept in {shot}", code == 0 and os.path.getsize(shot) > 10_000, f"exit {code}")


def main():
    if CHROMIUM is None:
        print("Chromium is not installed (scripts/setup installs it): the browser check is skipped")
        return 77
    os.makedirs(SHOTS, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        def locksim(*args):
            return subprocess.run([LOCKSIM, *args], cwd=work, capture_output=True, text=True, timeout=300)

        locksim("run", os.path.join(SCENARIOS, "gc-pause-longer-than-lease.json"), "--trials", "5")
        open_page("gc-pause-longer-than-lease report", os.path.join(work, "reports/out/gc-pause-longer-than-lease/report.html"), 4, 2, 8)
        locksim("run", os.path.join(SCENARIOS, "three-inserts-one-rollback.json"), "--trials", "3")
        open_page("three-inserts-one-rollback report", os.path.join(work, "reports/out/three-inserts-one-rollback/report.html"), 1, 0)
        found = locksim("explore", os.path.join(SCENARIOS, "select-for-update-deadlock.json"), "--strategy", "select-for-update",
                        "--mode", "pct")
        check("explore finds the deadlock to replay", found.returncode == 3, found.stderr.strip()[-300:])
        open_page("select-for-update-deadlock replay", os.path.join(work, "reports/out/select-for-update-deadlock/replay/report.html"), 1, 0, 2)
    print(f"browser: {len(failures)} of the checks failed" if failures else "browser: every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
