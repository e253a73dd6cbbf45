#!/usr/bin/env python3
"""The conformance suite: each script runs on locksim's model and on a real server, and the
outcomes are compared step by step.

usage: conformance.py LOCKSIM [--redis-driver DRIVER] [--scripts DIR] [--explained FILE]
                      [--only NAME] [--model-only] [--repeat N]
       conformance.py [LOCKSIM] --real-only [--only NAME]

A script is a scenario file of the sessions workload (docs/scenario.md) with one key more,
`conformance`, which the model never sees:

  "conformance": {
    "interchangeable": [[4, 6]],   # steps whose outcomes compare as a multiset: the server picks
                                   # which session gets which (the deadlock victim)
    "ignore_ids": true,            # insert ids and the id column are left out of the comparison
    "repeat": 20                   # a race: runs 20 times on each side (the model with seeds 1-20)
  }

A race script (`repeat`) agrees when every outcome the server gave is one the model gave too; how
often each came is printed beside it and never fails the suite, since the server's rates move with the
machine's load. `--repeat N` prints those rates for any script.

A table's final rows compare in id order, or sorted where the table has no id (a primary key on other
columns).

A PostgreSQL script (conformance/pg-scripts/, `"database": {"engine": "postgresql", ...}`) is one too:
the model runs it on its PostgreSQL engine, a real PostgreSQL 15 through psycopg2, and the errors
compare by their SQLSTATE (the model's `code`). A Redis script (conformance/redis-scripts/) has
`redis` steps instead, run by the Redis driver on the model and by redis-py on the real server.
A script's name is unique across the folders.

The real MariaDB, PostgreSQL and Redis are started here, each with a private data folder under
one temporary folder, on a socket or a free loopback port, and stopped and removed at the end, on
failure too. Without `mariadbd`, PostgreSQL's `initdb` and `postgres` or `redis-server` (or with
--model-only) the model side runs alone and the report says the real side was skipped.
--real-only runs the real side alone and prints every step's outcome there (for writing scripts).

The report has one line per script, `agree` or `diverge at step N: model X, server Y`, and the
last line `conformance: A of N scripts agree (MariaDB a of n, PostgreSQL b of m, Redis c of k)`
(the engines the run had scripts of). A divergence listed in docs/conformance.md (its
script's name in the first column of the table) is explained; the exit status is 1 when one is
not, or when a listed script agrees again (the list must say what is true) unless its step
column says "sometimes" (the server's outcome varies from run to run), 2 on bad input.

The suite is this file (the command line and the run) and the modules of conformance/suite/, which
coord.py shares: inputs.py (bad input, the scripts' folders, the explained divergences), db_scripts.py
(the kinds of script here and their checks), interpreter.py (a python3 whose clients import), servers.py
(MariaDB, PostgreSQL and Redis started and stopped), model_side.py (a script on the model), sql_side.py
and redis_side.py (a script on the real server), outcomes.py (a step's outcome as text) and report.py
(the comparison and the report).
"""

import faulthandler
import os
import shutil
import signal
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

from db_scripts import CLIENTS, ENGINES, KINDS, load_scripts  # noqa: E402  (the path above first)
from inputs import BadInput, Parser, load_explained  # noqa: E402
from interpreter import choose_interpreter  # noqa: E402
from model_side import model_redis, model_sql  # noqa: E402
from redis_side import real_redis  # noqa: E402
from report import Verdicts, by_engine, compare, print_rates, race_verdict  # noqa: E402
from servers import PG_BIN, MariaDB, PostgreSQL, Redis, pg_bindir, program  # noqa: E402
from sql_side import real_pg, real_sql, without_model  # noqa: E402

REEXEC = "LOCKSIM_CONFORMANCE_INTERPRETER"       # set when this script has started itself again elsewhere


def main():
    ap = Parser(description="locksim's conformance suite: the model against real servers")
    ap.add_argument("locksim", nargs="?", help="the locksim binary (may be left out with --real-only)")
    ap.add_argument("--redis-driver", help="the Redis model's script driver (locksim_redis_script)")
    ap.add_argument("--scripts", default=HERE)
    ap.add_argument("--explained", default=os.path.join(HERE, "..", "docs", "conformance.md"))
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="run this script only (repeatable; a shell pattern such as 'hermitage-pg-*' runs those it matches)")
    sides = ap.add_mutually_exclusive_group()
    sides.add_argument("--model-only", action="store_true")
    sides.add_argument("--real-only", action="store_true",
                       help="run the real side alone and print every step's outcome there (writing a script)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print both sides' outcomes of every step (the model's alone under --model-only)")
    ap.add_argument("--repeat", type=int, metavar="N",
                    help="run each SQL script N times on each side (the model's trials with seeds 1 to N) and print "
                         "how often each outcome came, instead of comparing one run (a race's rates)")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        return 2 if e.code else 0
    if a.locksim:
        a.locksim = os.path.abspath(a.locksim)
    if a.redis_driver:
        a.redis_driver = os.path.abspath(a.redis_driver)
    try:
        if a.redis_driver and not os.access(a.redis_driver, os.X_OK):
            raise BadInput(f"{a.redis_driver}: not an executable")
        if not a.locksim and not a.real_only:
            raise BadInput("the locksim binary is needed (it may be left out with --real-only)")
        if a.locksim and not os.access(a.locksim, os.X_OK):
            raise BadInput(f"{a.locksim}: not an executable")
        if a.repeat is not None and not 1 <= a.repeat <= 1000:
            raise BadInput(f"--repeat {a.repeat}: expected a number of runs from 1 to 1000")
        scripts = load_scripts(a.scripts, set(a.only))
        if a.repeat is not None:
            redis = [s["name"] for s in scripts if s["_kind"] == "redis"]
            if redis:
                raise BadInput(f"--repeat runs SQL scripts only; {redis[0]} is a Redis script")
        explained = load_explained(a.explained)
    except BadInput as e:
        print(f"conformance: {e}", file=sys.stderr)
        return 2

    pg_bin = pg_bindir()
    have = {"sql": program("mariadbd") and program("mariadb-install-db"), "pg": pg_bin,
            "redis": program("redis-server")}
    if not a.redis_driver and not a.real_only and any(s["_kind"] == "redis" for s in scripts):
        print("conformance: the Redis scripts were not run (no --redis-driver)")
        scripts = [s for s in scripts if s["_kind"] != "redis"]
    needed = [kind for kind in KINDS if have[kind] and not a.model_only and any(s["_kind"] == kind for s in scripts)]
    versions = choose_interpreter(needed, CLIENTS, REEXEC, os.path.abspath(__file__),
                                  "locksim-conformance-probe-") if needed else {}
    if needed:
        print(f"conformance: python {sys.executable}: "
              + ", ".join(f"{CLIENTS[k]} {versions.get(CLIENTS[k]) or 'missing'}" for k in needed), flush=True)
    skipped = {}
    missing = {"sql": "no mariadbd: scripts/setup installs it",
               "pg": f"no initdb and postgres in {PG_BIN} or on the PATH: scripts/setup installs postgresql-15",
               "redis": "no redis-server: scripts/setup installs it"}
    for kind in KINDS:
        if a.model_only:
            skipped[kind] = "--model-only"
        elif not have[kind]:
            skipped[kind] = missing[kind]
        elif not versions.get(CLIENTS[kind]):
            skipped[kind] = (f"no Python module {CLIENTS[kind]} under {sys.executable} or any python3 on the PATH: "
                             f"scripts/setup installs Debian's python3-{CLIENTS[kind]}")

    # A termination (CTest's timeout, a ^C) ends the run through the clean-up below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    root = tempfile.mkdtemp(prefix="locksim-conformance-")
    servers = {}
    count = {k: sum(s["_kind"] == k for s in scripts) for k in KINDS}
    verdicts = Verdicts(KINDS, explained)
    ran = 0
    failed = False
    t0 = time.monotonic()
    try:
        if any(s["_kind"] == "sql" for s in scripts) and "sql" not in skipped:
            servers["sql"] = MariaDB(root)
            servers["sql"].start()
        if any(s["_kind"] == "pg" for s in scripts) and "pg" not in skipped:
            servers["pg"] = PostgreSQL(root)
            servers["pg"].start()
        if "redis" not in skipped:
            servers["redis"] = Redis(root)
        for n, script in enumerate(scripts, 1):
            name, kind = script["name"], script["_kind"]
            model = None
            if not a.real_only:
                try:
                    model = (model_redis(a.redis_driver, script, root) if kind == "redis"
                             else model_sql(a.locksim, script, root, 1 if a.repeat or "repeat" in script.get("conformance", {}) else None))
                except BadInput as e:
                    print(f"conformance: {e}", file=sys.stderr)
                    return 2
            if a.repeat is not None:
                model_runs = [] if a.real_only else [model[:2]] + [
                    model_sql(a.locksim, script, root, seed)[:2] for seed in range(2, a.repeat + 1)]
                real_runs = []
                real_side = real_sql if kind == "sql" else real_pg
                for run in range(0 if kind in skipped else a.repeat):
                    try:
                        timeline = model[2] if model else without_model(script)
                        real_runs.append(real_side(servers[kind], script, n, a.locksim, root, timeline))
                    except Exception as e:
                        print(f"{name}: failed on the server (run {run + 1}): {type(e).__name__}: {e}", flush=True)
                        failed = True
                        break
                print_rates(script, a.repeat, model_runs, real_runs)
                ran += 1
                continue
            runs = script.get("conformance", {}).get("repeat")
            if runs and not a.real_only and kind != "redis" and kind not in skipped:
                model_runs = [model[:2]] + [model_sql(a.locksim, script, root, seed)[:2] for seed in range(2, runs + 1)]
                real_side = real_sql if kind == "sql" else real_pg
                try:
                    real_runs = [real_side(servers[kind], script, n, a.locksim, root, model[2]) for _ in range(runs)]
                except Exception as e:
                    print(f"{name}: failed on the server: {type(e).__name__}: {e}", flush=True)
                    failed = True
                    continue
                if a.verbose:
                    print_rates(script, runs, model_runs, real_runs)
                verdicts.add(name, kind, race_verdict(script, model_runs, real_runs))
                continue
            if kind in skipped:
                if a.real_only:
                    print(f"{name}: real side skipped", flush=True)
                else:
                    print(f"{name}: model ran ({len(model[0])} steps); real side skipped", flush=True)
                    if a.verbose and model:
                        for i, m in enumerate(model[0], 1):
                            print(f"  {name} step {i}: model {m}")
                        for t in model[1]:
                            print(f"  {name} {t}: model {model[1][t]}")
                continue
            began = time.monotonic()
            try:
                timeline = None if kind == "redis" else model[2] if model else without_model(script)
                if kind == "sql":
                    real = real_sql(servers["sql"], script, n, a.locksim, root, timeline)
                elif kind == "pg":
                    real = real_pg(servers["pg"], script, n, a.locksim, root, timeline)
                else:
                    real = real_redis(servers["redis"], script)
            except Exception as e:  # this script's real side: reported, the others still run
                print(f"{name}: failed on the server: {type(e).__name__}: {e}", flush=True)
                failed = True
                continue
            if a.real_only:
                ran += 1
                print(f"{name} ({ENGINES[kind]}):")
                for i, (step, r) in enumerate(zip(script["steps"], real[0]), 1):
                    what = step.get("sql") or " ".join(map(str, step.get("redis", []))) or \
                        next((f"{k} {step[k]}" for k in ("sleep_ms", "kill", "restart", "disconnect") if k in step), "")
                    print(f"  step {i} {step.get('session', '-')}: {what} => {r}")
                for t in sorted(real[1]):
                    print(f"  table {t}: {real[1][t]}")
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
        if any(s["_kind"] == kind for s in scripts):
            print(f"conformance: the real side of the {kind} scripts was skipped ({why})"
                  + ("" if a.real_only else "; the model ran them"))
    failed = failed or verdicts.stale
    unexplained = verdicts.unexplained
    if unexplained:
        print(f"conformance: {unexplained} unexplained divergence{'s' if unexplained != 1 else ''}: fix the model or "
              f"list them in docs/conformance.md with the reason")
    print(f"conformance: {time.monotonic() - t0:.1f} s")
    if a.repeat is not None:
        print(f"conformance: {ran} of {len(scripts)} scripts repeated {a.repeat} times")
        return 1 if failed else 0
    if a.real_only:
        print(f"conformance: real side only: {ran} of {len(scripts)} scripts ran"
              + by_engine({k: f"{count[k]}" for k in KINDS if count[k]}))
        return 1 if failed or ran < len(scripts) else 0
    last = (f"conformance: {verdicts.agree} of {len(scripts)} scripts agree"
            + by_engine({k: f"{verdicts.agree_of[k]} of {count[k]}" for k in KINDS if count[k]}))
    if verdicts.compared < len(scripts) and not failed:
        last += f"; {len(scripts) - verdicts.compared} not compared (the real side was skipped)"
    print(last)
    return 1 if failed or unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
