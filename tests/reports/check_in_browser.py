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


# Measures, in the page Chromium laid out, each word of the sequence diagrams against each arrow
# (its line and its head; the dashed grey lifelines are not arrows): a word an arrow runs
# through reads as struck through.
CROSSINGS_SCRIPT = r"""
<script>
function clip(x1, y1, x2, y2, r) {  // Liang-Barsky: does the segment enter the rectangle?
  let t0 = 0, t1 = 1;
  const dx = x2 - x1, dy = y2 - y1;
  for (const [p, q] of [[-dx, x1 - r.x], [dx, r.x + r.width - x1], [-dy, y1 - r.y], [dy, r.y + r.height - y1]]) {
    if (p === 0) { if (q < 0) return false; continue; }
    const t = q / p;
    if (p < 0) { if (t > t1) return false; if (t > t0) t0 = t; }
    else { if (t < t0) return false; if (t < t1) t1 = t; }
  }
  return true;
}
window.onload = () => {
  const found = [];
  let words = 0;
  for (const svg of document.querySelectorAll('svg.sequence')) {
    const lines = [...svg.querySelectorAll('line')].filter(l => l.getAttribute('stroke') !== '#bbbbbb');
    const heads = [...svg.querySelectorAll('polygon')].map(p => p.getBBox());
    for (const text of svg.querySelectorAll('text')) {
      const shown = [...text.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent).join('');
      if (shown === '' || shown === 'x') continue;  // x: where a message was lost, on its line by design
      words++;
      const b = text.getBBox();
      const r = {x: b.x + 0.5, y: b.y + 0.5, width: b.width - 1, height: b.height - 1};
      for (const l of lines) {
        const [x1, y1, x2, y2] = ['x1', 'y1', 'x2', 'y2'].map(a => +l.getAttribute(a));
        if (clip(x1, y1, x2, y2, r)) found.push(shown + ' crossed by the line ' + [x1, y1, x2, y2].join(','));
      }
      for (const h of heads)
        if (h.x < r.x + r.width && r.x < h.x + h.width && h.y < r.y + r.height && r.y < h.y + h.height)
          found.push(shown + ' under an arrow head at ' + h.x + ',' + h.y);
    }
  }
  const out = document.createElement('pre');
  out.id = 'crossings';
  out.textContent = words + ' words, ' + found.length + ' crossed\n' + found.slice(0, 5).join('\n');
  document.body.appendChild(out);
};
</script>
"""


def sequence_svgs(html):
    """Each sequence diagram's <svg> element, whole: a part of a long one holds a nested <svg>."""
    out = []
    for start in re.finditer(r'<svg[^>]*class="sequence"', html):
        depth, at = 0, start.start()
        for tag in re.finditer(r'<(/?)svg\b', html[at:]):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                end = at + tag.end() + html[at + tag.end():].index(">") + 1
                out.append(html[at:end])
                break
    return out


def no_word_crossed(name, page):
    with open(page, encoding="utf-8") as f:
        svgs = sequence_svgs(f.read())
    probe = os.path.join(SHOTS, name.replace(" ", "-") + "-crossings.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>" + "".join(svgs) + CROSSINGS_SCRIPT + "</body></html>")
    code, dom, _ = chromium(probe, "--dump-dom", "--virtual-time-budget=2000")
    m = re.search(r'<pre id="crossings">(\d+) words, (\d+) crossed\n?([^<]*)</pre>', dom)
    check(f"{name}: no word in its diagrams is crossed by an arrow", code == 0 and m is not None and m.group(2) == "0",
          f"exit {code}: " + (f"{m.group(2)} of {m.group(1)} words: {m.group(3)}" if m else "no measurement"))


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
    no_word_crossed(name, page)
    shot = os.path.join(SHOTS, name.replace(" ", "-") + ".png")
    code, _, _ = chromium(page, f"--screenshot={shot}", "--window-size=1280,1600")
    check(f"{name}: screenshot kept in {shot}", code == 0 and os.path.getsize(shot) > 10_000, f"exit {code}")


def long_trial(locksim, work):
    """A design at 200 requests/s for 60 s: the replay of a lease that ran out (not shrunk: the whole
    trial) is told around it."""
    found = locksim("explore", os.path.join(SCENARIOS, "evaluate-redis-lock.json"), "--strategy", "redis-token-cas-unlock",
                    "--property", "lease_expiry_violations", "--set", "clients.traffic.duration_s=60", "--no-shrink")
    check("explore finds a lease that ran out at 200 requests/s for 60 s", found.returncode == 3, found.stderr.strip()[-300:])
    page = os.path.join(work, "reports/out/evaluate-redis-lock/replay/report.html")
    if not os.path.exists(page):
        check("the long trial's replay page was written", False, page)
        return
    size = os.path.getsize(page)
    check("the long trial's page is under 2 MB", size < 2_000_000, f"{size} bytes")
    open_page("evaluate-redis-lock long-trial replay", page, 1, 1)
    with open(page, encoding="utf-8") as f:
        html = f.read()
    diagram = re.search(r'<svg[^>]*class="sequence".*?</svg>', html, re.S).group(0)
    # The holds whose lease ran out, from the paragraphs: each is in the diagram's window, with
    # the statements its operation ran while it believed it held the lock.
    lost = re.findall(r"app-\d worker \d+'s lease on (lock:openid:(\d+)) ran out at the lock service at t=([\d.]+) s", html)
    check("the long trial's page says whose lease ran out", len(lost) > 0, "no lease paragraph")
    times = set(re.findall(r'fill="#666666">([\d.]+) s</text>', diagram))
    for lock, key, at in lost:
        check(f"the diagram draws {lock}'s lease running out, at t={at} s", f"lease ran out: {lock}" in diagram and at in times,
              f"rows at {sorted(times)[:3]}...")
        check(f"the diagram draws the INSERT of openid:{key}", f"VALUES ('openid:{key}'" in diagram, "no such statement")


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
        long_trial(locksim, work)
    print(f"browser: {len(failures)} of the checks failed" if failures else "browser: every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
