"""The interpreter that drives the real servers: one whose Python clients import. Started by a python3
without them (a pyenv or virtualenv one), a suite starts itself again under one that has them, and says
so; without one, the kinds that lack a client run the model side alone."""

import json
import os
import subprocess
import sys
import tempfile


CLIENT_PROBE = ("import importlib, json, sys\n"
                "found = {}\n"
                "for m in sys.argv[1:]:\n"
                "    try:\n"
                "        mod = importlib.import_module(m)\n"
                "        found[m] = getattr(mod, '__version__', '?') if getattr(mod, '__file__', None) else None\n"
                "    except Exception:\n"
                "        found[m] = None\n"
                "print(json.dumps(found))\n")


def clients_of(python, modules, prefix):
    """{module: version or None} for the client `modules` under the interpreter `python`, each imported as a
    real package (a bare folder of that name is none), run from an empty folder (a temporary one, its name
    begun with `prefix`) so that nothing there stands in."""
    with tempfile.TemporaryDirectory(prefix=prefix) as empty:
        try:
            p = subprocess.run([python, "-c", CLIENT_PROBE, *modules], cwd=empty, capture_output=True,
                               text=True, timeout=30)
            return json.loads(p.stdout) if p.returncode == 0 else {}
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return {}


def interpreters():
    """Debian's python3 first (scripts/setup installs its python3-pymysql, python3-psycopg2, python3-redis,
    python3-kazoo and python3-etcd3), then every python3 on the PATH."""
    seen, out = set(), []
    for path in ["/usr/bin/python3", *(os.path.join(d, "python3") for d in os.environ.get("PATH", "").split(os.pathsep))]:
        path = os.path.abspath(path)  # not resolved: a virtualenv's link to the system's python3 has other modules
        if path not in seen and os.access(path, os.X_OK):
            seen.add(path)
            out.append(path)
    return out


def choose_interpreter(needed, clients, reexec, script, prefix):
    """Says which interpreter drives the real servers, and with which clients (`clients`: each kind's
    module). When this one lacks a client the kinds in `needed` require and another python3 has them all,
    the suite (`script`, its file) starts itself again there, `reexec` set in its environment so that it
    looks no further; otherwise it goes on here and the kinds without a client run the model side alone.
    `prefix`: the name of the probe's empty folder begins with it."""
    mine = clients_of(sys.executable, clients.values(), prefix)
    if all(mine.get(clients[k]) for k in needed) or os.environ.get(reexec):
        return mine
    for python in interpreters():
        theirs = clients_of(python, clients.values(), prefix)
        if all(theirs.get(clients[k]) for k in needed):
            lacking = ", ".join(clients[k] for k in needed if not mine.get(clients[k]))
            print(f"conformance: {sys.executable} has no {lacking}; running under {python}", flush=True)
            os.environ[reexec] = python
            os.execv(python, [python, script, *sys.argv[1:]])
    return mine
