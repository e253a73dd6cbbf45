#!/usr/bin/env python3
"""The conformance suite of the coordination services: each script runs on locksim's models of
ZooKeeper and etcd (models/coord) and on a real ZooKeeper 3.8 or etcd 3.4, and the outcomes are
compared step by step, as conformance.py compares the databases'.

usage: coord.py --driver LOCKSIM_COORD_SCRIPT [--scripts DIR] [--explained FILE] [--only NAME]...
                [--model-only | --real-only] [-v]
       coord.py --real-only [--only NAME]...

The driver (locksim_coord_script SCRIPT.json) runs a script on the model and prints
{"steps": [outcome, ...], "final": TEXT}; the real side runs it here. Both write each outcome as
below, and the report compares the texts.

A ZooKeeper script (zk-scripts/NAME.json): {"name": NAME, "description": ..., "zookeeper":
{"session_timeout_ms": 1000} (optional; the server's tickTime is 100 ms), "steps": [...]}, a step
one of
  {"session": S, "zk": ["create", PATH, DATA, MODE]}   ok PATH_CREATED  (MODE persistent, ephemeral,
                                                       persistent_sequential, ephemeral_sequential)
  ["delete", PATH] or ["delete", PATH, VERSION]        ok
  ["exists", PATH] or ["exists", PATH, "watch"]        STAT, or none
  ["get", PATH] or ["get", PATH, "watch"]              "DATA" STAT  (the data as a JSON string)
  ["set", PATH, DATA] or ["set", PATH, DATA, VERSION]  STAT
  ["children", PATH] or ["children", PATH, "watch"]    ["a","b"]  (sorted, compact JSON)
  ["events"]                                           the watch events the session's client took
                                                       since it last asked, in order, joined by ", ":
                                                       created PATH, deleted PATH, changed PATH,
                                                       child PATH; or none
  ["close"]                                            ok: the session ends; the session's next
                                                       step opens a new one
  {"pause": S} / {"resume": S}                         ok / session expired or session kept: S's
                                                       client process stopped (SIGSTOP) and
                                                       started again, then round trips 50 ms apart
                                                       (at most 10 s) until one succeeds
  {"sleep_ms": N}                                      ok
A failed request gives the client's exception without "Error": NoNode, NodeExists, NotEmpty,
BadVersion, NoChildrenForEphemerals, SessionExpired, ConnectionLoss. STAT is
  czxid=+A mzxid=+B pzxid=+C version=V cversion=W children=N owner=O
with the zxids counted from the script's base, and O none (a persistent node), the owning session's
name (c1; c1#2 for its second session, after a close or an expiry, and so on) or other.
A PATH is / or /a/b (a sequential node's may end in /). The final text is the nodes left under the
chroot, {path: data} as sorted compact JSON, compared as `nodes`.

An etcd script (etcd-scripts/NAME.json): {"name": NAME, "description": ..., "steps": [...]}, a
step one of
  {"session": S, "etcd": ["grant", TTL_S]}     lease L1 ttl T  (leases are L1, L2, ... in the order
                                               granted; T the granted TTL)
  ["keepalive", L]                             alive (the refresh gave a TTL), or gone
  ["revoke", L]                                ok rev +R, or error lease not found
  ["put", KEY, VALUE] or [..., L]              ok rev +R, or error lease not found
  ["get", KEY]                                 KV, or none
  ["range", PREFIX]                            the KVs of the keys under PREFIX, in key order,
                                               joined by "; ", or none
  ["del", KEY]                                 ok rev +R
  ["txn", IF, THEN, ELSE]                      succeeded rev +R, or failed rev +R; IF a list of
                                               [TARGET, KEY, OP, VALUE] (TARGET create_revision,
                                               mod_revision, version or value; OP =, <, > or !=;
                                               VALUE an integer, "+N" for a revision N after the
                                               base, or a string for value), THEN and ELSE lists
                                               of ["put", KEY, VALUE(, L)] and ["del", KEY]
  {"sleep_ms": N}                              ok
KV is KEY="VALUE" create=+C mod=+M version=V lease=L1 (lease=none without one); revisions count
from the script's base; another error is `error` and the server's message in lower case, without
"etcdserver: ". Keys start with "/". The final text is {key: "VALUE create=+C mod=+M version=V
lease=L"} as sorted compact JSON, compared as `keys`.

A script's name is its file's, unique across both folders. Each real server is started once for the
run, on a free loopback port in a private folder under one temporary folder, and stopped and
removed at the end, on failure too. Each script has a namespace of its own: ZooKeeper's sessions
are chrooted to a fresh /NAME, whose czxid is the base (the model's is 0), and etcd's keys are sent
under /NAME, the base being the store's revision before the first step (the model's is 1). Each
ZooKeeper session is a kazoo client in a worker process of its own (what a pause stops), the
sessions opened one after the other in the order they first appear, so that their opens take the
zxids +1, +2, ...; each etcd session an etcd3 client here.
Without Java and ZooKeeper's jar or etcd, without the Python clients (kazoo, etcd3), or with
--model-only, the model side runs alone and the report says the real side was skipped.

The report has one line per script, `agree` or `diverge at step N: model X, server Y`, and the last
line `conformance: A of N scripts agree (ZooKeeper a of n, etcd b of m)` (the services the run had
scripts of). Divergences are explained in docs/conformance.md's "Known divergences" table, as
conformance.py's are: the exit status is 1 on one that is not, or on a listed script that agrees
again (unless listed "sometimes"), 2 on bad input.

The suite is this file (the command line and the run) and these modules of conformance/suite/:
coord_scripts.py (the scripts and their checks), coord_servers.py (ZooKeeper and etcd started and
stopped), zk_side.py and etcd_side.py (a script on the real server), and, shared with conformance.py,
model_side.py (a script on the model, through the driver), inputs.py, interpreter.py, servers.py and
report.py.
"""

import ctypes  # noqa: F401  (imported here, not first in a forked child: servers.die_with_parent)
import faulthandler
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# A crash of the interpreter (a client module's C code) prints every thread's Python stack.
faulthandler.enable()
HERE = os.path.dirname(os.path.realpath(__file__))
# Python puts the script's folder first on its path: nothing here may stand in for a client module.
# The suite's own modules come from suite/, a folder of theirs alone.
sys.path = [p for p in sys.path if os.path.realpath(p or os.curdir) != HERE]
sys.path.insert(0, os.path.join(HERE, "suite"))

from coord_scripts import CLIENTS, KINDS, SERVICES, describe, load_scripts  # noqa: E402  (the path above first)
from coord_servers import ZK_JAR, Etcd, ZooKeeper  # noqa: E402
from etcd_side import EtcdRun  # noqa: E402
from inputs import BadInput, Parser, load_explained  # noqa: E402
from interpreter import choose_interpreter  # noqa: E402
from model_side import model_coord  # noqa: E402
from report import Verdicts, by_service, compare  # noqa: E402
from zk_side import real_zk, zk_worker  # noqa: E402

REEXEC = "LOCKSIM_COORD_INTERPRETER"  # set when this script has started itself again elsewhere


def main():
    ap = Parser(description="locksim's conformance suite of ZooKeeper and etcd: the models against "
                            "real servers")
    ap.add_argument("--driver",
                    help="the models' script driver (locksim_coord_script; may be left out with --real-only)")
    ap.add_argument("--scripts", default=HERE, help="the folder of zk-scripts/ and etcd-scripts/")
    ap.add_argument("--explained", default=os.path.join(HERE, "..", "docs", "conformance.md"))
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="run this script only (repeatable; a shell pattern such as 'zk-*' runs those it matches)")
    sides = ap.add_mutually_exclusive_group()
    sides.add_argument("--model-only", action="store_true")
    sides.add_argument("--real-only", action="store_true",
                       help="run the real side alone and print every step's outcome there (writing a script)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print both sides' outcomes of every step")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        if not a.driver and not a.real_only:
            raise BadInput("--driver is needed (it may be left out with --real-only)")
        if a.driver:
            a.driver = os.path.abspath(a.driver)
            if not os.path.isfile(a.driver) or not os.access(a.driver, os.X_OK):
                raise BadInput(f"{a.driver}: not an executable")
        scripts = load_scripts(a.scripts, set(a.only))
        explained = load_explained(a.explained)
    except BadInput as e:
        print(f"conformance: {e}", file=sys.stderr)
        return 2

    have = {"zk": ZooKeeper.available(), "etcd": Etcd.available()}
    needed = [kind for kind in KINDS if have[kind] and not a.model_only and any(s["_kind"] == kind for s in scripts)]
    # Debian's /usr/bin/python3 is where python3-kazoo and python3-etcd3 import.
    versions = choose_interpreter(needed, CLIENTS, REEXEC, os.path.abspath(__file__),
                                  "locksim-coord-probe-") if needed else {}
    if needed:
        print(f"conformance: python {sys.executable}: "
              + ", ".join(f"{CLIENTS[k]} {versions.get(CLIENTS[k]) or 'missing'}" for k in needed), flush=True)
    skipped = {}
    missing = {"zk": f"no java or no {ZK_JAR}: scripts/setup installs zookeeper",
               "etcd": "no etcd: scripts/setup installs etcd-server"}
    for kind in KINDS:
        if a.model_only:
            skipped[kind] = "--model-only"
        elif not have[kind]:
            skipped[kind] = missing[kind]
        elif not versions.get(CLIENTS[kind]):
            skipped[kind] = (f"no Python module {CLIENTS[kind]} under {sys.executable} or any python3 on the PATH: "
                             f"scripts/setup installs Debian's python3-{CLIENTS[kind]}")

    # The model side first: a script it refuses is bad input, found before a server starts.
    models = {}
    if not a.real_only:
        for script in scripts:
            try:
                models[script["name"]] = model_coord(a.driver, script)
            except BadInput as e:
                print(f"conformance: {e}", file=sys.stderr)
                return 2
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                models[script["name"]] = f"{type(e).__name__}: {e}"

    # A termination (CTest's timeout, a ^C) ends the run through the clean-up below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    root = tempfile.mkdtemp(prefix="locksim-coord-")
    servers = {}
    count = {k: sum(s["_kind"] == k for s in scripts) for k in KINDS}
    verdicts = Verdicts(KINDS, explained)
    ran = 0
    failed = False
    t0 = time.monotonic()
    try:
        for kind, server in (("zk", ZooKeeper), ("etcd", Etcd)):
            if kind not in skipped and count[kind]:
                began = time.monotonic()
                servers[kind] = server(root)
                try:
                    servers[kind].start()
                    print(f"conformance: {SERVICES[kind]} started ({time.monotonic() - began:.1f} s)", flush=True)
                except Exception as e:  # that service's real side fails; the other's still runs
                    print(f"conformance: {SERVICES[kind]} did not start: {type(e).__name__}: {e}", file=sys.stderr)
                    failed = True
                    servers[kind].stop()
                    del servers[kind]
        logdir = os.path.join(root, "sessions")
        worker = [sys.executable, os.path.abspath(__file__), "--zk-worker"]  # a ZooKeeper session's process
        os.makedirs(logdir)
        for script in scripts:
            name, kind = script["name"], script["_kind"]
            model = models.get(name)
            if isinstance(model, str):
                print(f"{name}: failed on the model: {model}", flush=True)
                failed = True
                continue
            if kind in skipped:
                if a.real_only:
                    print(f"{name}: real side skipped", flush=True)
                else:
                    print(f"{name}: model ran ({len(model[0])} steps); real side skipped", flush=True)
                continue
            if kind not in servers:
                print(f"{name}: failed on the server: {SERVICES[kind]} did not start", flush=True)
                continue
            began = time.monotonic()
            try:
                if kind == "zk":
                    real = real_zk(servers[kind], script, logdir, worker)
                else:
                    real = EtcdRun(servers[kind], script).run()
            except Exception as e:  # this script's real side: reported, the others still run
                print(f"{name}: failed on the server: {type(e).__name__}: {e}", flush=True)
                failed = True
                continue
            if a.real_only:
                ran += 1
                print(f"{name} ({SERVICES[kind]}):")
                for i, (step, r) in enumerate(zip(script["steps"], real[0]), 1):
                    who = step.get("session") or step.get("pause") or step.get("resume") or "-"
                    print(f"  step {i} {who}: {describe(step)} => {r}")
                for t in sorted(real[1]):
                    print(f"  {t}: {real[1][t]}")
                print(f"{name}: ran on the server ({time.monotonic() - began:.1f} s)", flush=True)
                continue
            if a.verbose:
                for i, (m, r) in enumerate(zip(model[0], real[0]), 1):
                    print(f"  {name} step {i}: model {m} | server {r}")
                for t in model[1]:
                    print(f"  {name} {t}: model {model[1][t]} | server {real[1].get(t)}")
            verdicts.add(name, kind, compare(script, model, real))
    except Exception as e:
        print(f"conformance: the real side failed: {type(e).__name__}: {e}", file=sys.stderr)
        failed = True
    finally:
        for s in servers.values():
            s.stop()
        shutil.rmtree(root, ignore_errors=True)
    for kind, why in skipped.items():
        if count[kind]:
            print(f"conformance: the real side of the {SERVICES[kind]} scripts was skipped ({why})"
                  + ("" if a.real_only else "; the model ran them"))
    failed = failed or verdicts.stale
    unexplained = verdicts.unexplained
    if unexplained:
        print(f"conformance: {unexplained} unexplained divergence{'s' if unexplained != 1 else ''}: fix the model or "
              f"list them in docs/conformance.md with the reason")
    print(f"conformance: {time.monotonic() - t0:.1f} s")
    if a.real_only:
        print(f"conformance: real side only: {ran} of {len(scripts)} scripts ran"
              + by_service({k: f"{count[k]}" for k in KINDS if count[k]}))
        return 1 if failed or ran < len(scripts) else 0
    last = (f"conformance: {verdicts.agree} of {len(scripts)} scripts agree"
            + by_service({k: f"{verdicts.agree_of[k]} of {count[k]}" for k in KINDS if count[k]}))
    if verdicts.compared < len(scripts) and not failed:
        last += f"; {len(scripts) - verdicts.compared} not compared (the real side was skipped)"
    print(last)
    return 1 if failed or unexplained else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--zk-worker"]:  # a session's worker process (ZkSession), not the suite
        sys.exit(zk_worker(sys.argv[2], float(sys.argv[3])))
    sys.exit(main())
