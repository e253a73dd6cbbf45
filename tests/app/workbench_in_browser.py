#!/usr/bin/env python3
"""The workbench (`locksim serve`) in headless Chromium, driven as a user clicks (chromedriver and
Selenium): open a catalogue scenario and run it, open a trial, step forward and back and read a
lock's holder at a moment, take the hint's choices until the checker fires, paste the URL into a
new tab and get the same trial, and see a Lua syntax error at its line. Keeps a screenshot of
each view.

Usage: workbench_in_browser.py LOCKSIM SCREENSHOT_DIR

Exits 77 (CTest: skipped) when Chromium, chromedriver or Selenium is not installed.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import served

LOCKSIM, SHOTS = (os.path.abspath(a) for a in sys.argv[1:3])
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    webdriver = None
    # Debian's python3 has scripts/setup's python3-selenium; another python3 first on the PATH may not.
    if os.access("/usr/bin/python3", os.X_OK) and not os.environ.get("LOCKSIM_REEXEC") and \
            os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.environ["LOCKSIM_REEXEC"] = "1"
        print(f"workbench_in_browser: {sys.executable} has no selenium; running under /usr/bin/python3", flush=True)
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__), *sys.argv[1:]])
if not CHROMIUM or not DRIVER or webdriver is None:
    print("skipped: chromium, chromedriver or python3-selenium is not installed")
    sys.exit(77)

failures = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # As root, in a container, offline: no sandbox, no GPU, nothing fetched from the network.
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--window-size=1920,1080"]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def text(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def wait(driver, condition, what, seconds=60):
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda d: condition(d))
    except Exception as e:
        check(what, False, f"not within {seconds} s ({type(e).__name__})")
        raise


def options(driver, element_id):
    """The texts of a select's options, read in one go (the page replaces them as it loads)."""
    return driver.execute_script(f"return [...document.getElementById('{element_id}').options].map(o => o.text)")


def holders(driver):
    """The 'Locks held' entries of the world panel at the cursor."""
    return driver.execute_script(
        "const out = []; let on = false;"
        "for (const n of document.getElementById('world').children) {"
        "  if (n.tagName === 'DT') on = n.textContent === 'Locks held';"
        "  else if (on && !n.classList.contains('muted')) out.push(n.textContent); }"
        "return out;")


def main():
    os.makedirs(SHOTS, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as profile:
        server, url = served.start(LOCKSIM, folder)
        driver = None
        try:
            started = time.monotonic()
            driver = browser(profile)
            driver.get(url)
            wait(driver, lambda d: len(options(d, "scenario")) > 40 and text(d, "status") == "ready", "the catalogue is listed")
            check("the page is up and lists the catalogue", True)
            print(f"     (browser start and first page: {time.monotonic() - started:.2f} s)")

            # Run and compare: a catalogue scenario, two strategies side by side.
            Select(driver.find_element(By.ID, "scenario")).select_by_value("two-clients-pause")
            wait(driver, lambda d: "redis-set-nx-ex-drop" in options(d, "strategy") and "two-clients-pause" in text(d, "scenario-about")
                 or "paused server" in text(d, "scenario-about"), "the scenario's strategies are listed")
            Select(driver.find_element(By.ID, "strategy")).select_by_visible_text("redis-set-nx-ex-drop")
            Select(driver.find_element(By.ID, "compare")).select_by_visible_text("unique-index")
            trials = driver.find_element(By.ID, "trials")
            trials.clear()
            trials.send_keys("30")
            driver.find_element(By.ID, "run").click()
            wait(driver, lambda d: "duplicate_rows" in text(d, "results"), "the run's table is shown")
            table = text(driver, "results")
            check("the run compares the two strategies", "redis-set-nx-ex-drop" in table and "unique-index" in table, table[:300])
            check("and draws the share of trials in which each checker fired", bool(driver.find_elements(By.CSS_SELECTOR, "#share-plot rect")))
            driver.save_screenshot(os.path.join(SHOTS, "workbench-run.png"))

            # Play a trial: the default order, stepped forward until a lock is held, and back.
            driver.find_element(By.CSS_SELECTOR, "header nav button[data-view=trial]").click()
            driver.find_element(By.ID, "play").click()
            wait(driver, lambda d: "two-clients-pause" in text(d, "trial-title"), "the trial opens")
            first_token = driver.execute_script("return state.trial.token")
            seen = []
            for _ in range(40):
                driver.find_element(By.ID, "forward").click()
                seen = holders(driver)
                if seen:
                    break
            at = text(driver, "now")
            check("stepping forward reaches a moment a lock is held, with its holder and lease",
                  bool(seen) and "lock:openid:0" in seen[0] and "app-" in seen[0] and "lease" in seen[0], f"{at}: {seen}")
            driver.find_element(By.ID, "back").click()
            check("one step back, before the grant, nobody holds it", holders(driver) == [], str(holders(driver)))
            driver.find_element(By.ID, "forward").click()
            check("and forward again, the same holder", holders(driver) == seen, str(holders(driver)))

            # Take the scheduler's seat: the hint's choices until duplicate_rows fires.
            Select(driver.find_element(By.ID, "property")).select_by_value("duplicate_rows")
            for _ in range(4):
                if "duplicate_rows" in text(driver, "verdict"):
                    break
                driver.find_element(By.ID, "hint").click()
                wait(driver, lambda d: "apply it" in text(d, "hint-words") or "already" in text(d, "hint-words"), "a hint")
                if "already" in text(driver, "hint-words"):
                    break
                before = driver.execute_script("return state.trial.token")
                driver.find_element(By.ID, "apply-hint").click()
                wait(driver, lambda d: d.execute_script("return state.trial.token") != before, "the branch is drawn")
            verdict = text(driver, "verdict")
            check("choosing other options at the choice points makes the checker fire", "duplicate_rows" in verdict, verdict)
            check("the branches are listed, the first one the default order", "the default order" in text(driver, "tree"))
            check("the story of the finding is told", "DUPLICATE" in text(driver, "story") or "duplicate" in text(driver, "explain"))
            driver.save_screenshot(os.path.join(SHOTS, "workbench-trial.png"))
            token = driver.execute_script("return state.trial.token")
            check("the branch is a new trial", token != first_token)
            check("the page gives the command that replays it", text(driver, "replay") == "locksim replay " + token)
            shared = driver.current_url
            check("the URL holds the trial's token", "#t=" in shared)

            # The URL in a new tab: the same trial.
            driver.switch_to.new_window("tab")
            driver.get(shared)
            wait(driver, lambda d: d.execute_script("return state.trial && state.trial.token") == token, "the shared URL opens the trial")
            check("a new tab with the URL shows the same trial and verdict", text(driver, "verdict") == verdict)

            # The same trial on the command line.
            replay = subprocess.run([LOCKSIM, "replay", token], capture_output=True, text=True, cwd=folder, timeout=120)
            check("`locksim replay TOKEN` gives the same findings", replay.returncode == 3 and "duplicate_rows" in replay.stdout,
                  replay.stdout[-300:] + replay.stderr[-300:])

            # Edit a Lua strategy: a syntax error is shown at its line.
            driver.find_element(By.CSS_SELECTOR, "header nav button[data-view=edit]").click()
            driver.execute_script(
                "editor.setValue('description = \"broken\"\\nfunction bind(req)\\n  if x then\\n    work(\\n  end\\nend\\n')")
            driver.find_element(By.ID, "lua-check").click()
            wait(driver, lambda d: d.find_elements(By.ID, "lua-error"), "the Lua check answers")
            error = text(driver, "lua-error")
            check("a Lua syntax error is shown at its line", error.startswith("line 5:"), error)
            check("and its line is marked in the editor", bool(driver.find_elements(By.CSS_SELECTOR, ".CodeMirror .bad-line")))
            driver.save_screenshot(os.path.join(SHOTS, "workbench-edit.png"))
            logs = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
            check("no error in the browser's console", not logs, str(logs[:3]))
        finally:
            if driver is not None:
                driver.quit()
            code = served.stop(server)
            check("locksim serve stops on Ctrl-C, exit 0", code == 0, f"exit {code}")
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
