"""`locksim serve` for a test: started on a free port of loopback with --dir, and stopped as a user
stops it (Ctrl-C). Shared by serve_requests.py and workbench_in_browser.py."""

import os
import re
import signal
import subprocess
import sys


def start(locksim, folder, tmp=None):
    """The running server and its URL; exits the test when it prints none. `tmp`: the folder it
    keeps its drafts under (TMPDIR), for a test that checks they go; another test's server may
    be running beside it."""
    env = dict(os.environ, TMPDIR=tmp) if tmp else None
    server = subprocess.Popen([locksim, "serve", "--port", "0", "--dir", folder], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, cwd=folder, env=env)
    line = server.stdout.readline()
    match = re.search(r"http://\S+/", line)
    if not match:
        server.kill()
        sys.exit(f"locksim serve printed no URL: {line!r}")
    return server, match.group(0)


def stop(server, seconds=60):
    """Ctrl-C, then its exit code; None when it did not stop within `seconds` (it is killed)."""
    server.send_signal(signal.SIGINT)
    try:
        return server.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        server.kill()
        return None
