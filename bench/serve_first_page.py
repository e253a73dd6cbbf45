#!/usr/bin/env python3
"""Starts `locksim serve --port 0`, fetches its page once, and stops it: `make bench` times the
whole of it. Usage: serve_first_page.py LOCKSIM"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request

with tempfile.TemporaryDirectory() as folder:
    server = subprocess.Popen([os.path.abspath(sys.argv[1]), "serve", "--port", "0"], stdout=subprocess.PIPE, text=True, cwd=folder)
    try:
        url = re.search(r"http://\S+/", server.stdout.readline()).group(0)
        page = urllib.request.urlopen(url, timeout=60).read()
        sys.exit(0 if b"locksim workbench" in page else 1)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
