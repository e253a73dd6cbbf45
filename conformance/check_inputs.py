#!/usr/bin/env python3
"""The conformance suite's own inputs: bad ones get one line and exit 2, without servers the model
side runs alone and the report says the real side was skipped, started by a python3 without
the clients the suite runs under one that has them, and --real-only runs a PostgreSQL script on
the real server alone. The same of coord.py, ZooKeeper's and etcd's suite, for its bad input and
its model side alone (through a stand-in for its driver: no server, no locksim_coord_script).

usage: check_inputs.py LOCKSIM REDIS_DRIVER SOURCE_DIR
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

locksim, driver, source = sys.argv[1:4]
suite = os.path.join(source, "conformance", "conformance.py")
failures = []


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def refused(what, args, says):
    rc, out, err = run(args)
    lines = err.strip().splitlines()
    if rc != 2 or len(lines) != 1 or says not in lines[0]:
        failures.append(f"{what}: expected exit 2 and one line saying {says!r}, got {rc}: {err.strip()!r}")


with tempfile.TemporaryDirectory(prefix="locksim-conformance-inputs-") as d:
    def script(name, doc, sub="redis"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
        path = os.path.join(d, sub, name + ".json")
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    bad_command = script("x", {"name": "x", "steps": [{"session": "c1", "redis": ["FLUSHALL"]}]})
    refused("an unknown Redis command", [driver, bad_command], "command 'FLUSHALL'")
    refused("a SET option the model lacks", [driver, script("y", {"name": "y", "steps": [{"session": "c1", "redis": ["SET", "k", "v", "EX", "1"]}]})],
            "SET option 'EX'")
    refused("a bad appendfsync", [driver, script("z", {"name": "z", "redis": {"appendfsync": "sometimes"}, "steps": [{"sleep_ms": 1}]})],
            "/redis/appendfsync")
    refused("a file that is not JSON", [driver, script("w", "{")], "not JSON")
    refused("a step of no known kind", [driver, script("v", {"name": "v", "steps": [{"wait": 1}]})], "/steps/0")

    bad_dir = os.path.join(d, "bad")
    os.makedirs(os.path.join(bad_dir, "sql-scripts"))
    with open(os.path.join(bad_dir, "sql-scripts", "n.json"), "w") as f:
        json.dump({"name": "other", "steps": [{"session": "s1", "sql": "BEGIN"}]}, f)
    refused("a script named apart from its file", [sys.executable, suite, locksim, "--scripts", bad_dir], "must be its file name")

    def scripts_dir(name, files):
        top = os.path.join(d, name)
        for sub, doc in files:
            os.makedirs(os.path.join(top, sub), exist_ok=True)
            with open(os.path.join(top, sub, doc["name"] + ".json"), "w") as f:
                json.dump(doc, f)
        return top

    def sql_script(name, engine=None):
        database = {"tables": ["CREATE TABLE t (id INT PRIMARY KEY)"]}
        if engine:
            database["engine"] = engine
        return {"name": name, "workload": "sessions", "database": database, "steps": [{"session": "s1", "sql": "BEGIN"}]}

    refused("a PostgreSQL script that does not say its engine",
            [sys.executable, suite, locksim, "--scripts", scripts_dir("pg-bare", [("pg-scripts", sql_script("p"))])],
            "/database/engine")
    refused("a PostgreSQL script among the MariaDB ones",
            [sys.executable, suite, locksim, "--scripts",
             scripts_dir("pg-misplaced", [("sql-scripts", sql_script("p", "postgresql"))])], "belongs in pg-scripts")
    refused("one name in two folders",
            [sys.executable, suite, locksim, "--scripts",
             scripts_dir("twice", [("sql-scripts", sql_script("same")), ("pg-scripts", sql_script("same", "postgresql"))])],
            "unique across")
    sub_second = sql_script("wait")
    sub_second["database"]["lock_wait_timeout_ms"] = 300
    refused("a MariaDB script whose lock wait is not whole seconds",
            [sys.executable, suite, locksim, "--scripts", scripts_dir("sub-second", [("sql-scripts", sub_second)])],
            "/database/lock_wait_timeout_ms: MariaDB waits whole seconds")
    for repeat in (1, "20", True):
        race = sql_script("race")
        race["conformance"] = {"repeat": repeat}
        refused(f"a race script repeated {repeat!r} times",
                [sys.executable, suite, locksim, "--scripts", scripts_dir(f"race-{repeat}", [("sql-scripts", race)])],
                "/conformance/repeat: expected a number of runs from 2 to 100")
    refused("--model-only with --real-only", [sys.executable, suite, locksim, "--model-only", "--real-only"], "--real-only")
    refused("an unknown flag", [sys.executable, suite, locksim, "--no-such-flag"], "--no-such-flag")
    refused("an unknown script", [sys.executable, suite, locksim, "--only", "no-such-script"], "no-such-script")
    refused("--repeat 0", [sys.executable, suite, locksim, "--repeat", "0"], "from 1 to 1000")
    refused("--repeat of a Redis script", [sys.executable, suite, locksim, "--repeat", "2", "--only", "incr-counter"],
            "SQL scripts only")

    # coord.py: its scripts checked before the model or a server runs them, one line and exit 2.
    coord = os.path.join(source, "conformance", "coord.py")
    stand_in = os.path.join(d, "coord_driver")  # locksim_coord_script's output for a one-step script
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\n"
                "case \"$1\" in *refused*) echo \"locksim_coord_script: $1: /steps/0/zk/0: operation 'sync'\" >&2; exit 2;; esac\n"
                "echo '{\"steps\": [\"none\"], \"final\": \"{}\"}'\n")
    os.chmod(stand_in, 0o755)

    def coord_refused(what, folder, doc, says, *args, file=None):
        top = os.path.join(d, "coord-" + (file or doc["name"]))
        os.makedirs(os.path.join(top, folder))
        with open(os.path.join(top, folder, (file or doc["name"]) + ".json"), "w") as f:
            json.dump(doc, f)
        refused(f"coord.py: {what}", [sys.executable, coord, "--driver", stand_in, "--scripts", top, *args], says)

    def zk(name, *steps):
        return {"name": name, "steps": list(steps) or [{"session": "c1", "zk": ["exists", "/"]}]}

    coord_refused("a step of no known kind", "zk-scripts", zk("a", {"wait": 1}), "/steps/0: expected zk")
    coord_refused("an unknown ZooKeeper request", "zk-scripts", zk("b", {"session": "c1", "zk": ["sync", "/"]}),
                  "/steps/0/zk/0: expected an operation")
    coord_refused("a session paused and never resumed", "zk-scripts",
                  zk("c", {"session": "c1", "zk": ["exists", "/"]}, {"pause": "c1"}), "c1 is not")
    coord_refused("a lease not granted before", "etcd-scripts",
                  {"name": "e", "steps": [{"session": "c1", "etcd": ["put", "/k", "v", "L1"]}]}, "/steps/0/etcd/3")
    coord_refused("an etcd key without its /", "etcd-scripts",
                  {"name": "f", "steps": [{"session": "c1", "etcd": ["get", "k"]}]}, "a key starting with /")
    coord_refused("a ZooKeeper request among etcd's", "etcd-scripts", zk("g"), "/steps/0: expected etcd")
    coord_refused("a script named apart from its file", "zk-scripts", zk("other"), "must be its file name", file="h")
    coord_refused("a script the model refuses", "zk-scripts", zk("refused"), "the model refused refused", "--model-only")
    coord_refused("--model-only with --real-only", "zk-scripts", zk("i"), "--real-only", "--model-only", "--real-only")
    refused("coord.py without its driver", [sys.executable, coord, "--only", "x"], "--driver is needed")

    # Its model side alone: the report says the real side was skipped.
    top = os.path.join(d, "coord-model-only")
    os.makedirs(os.path.join(top, "zk-scripts"))
    with open(os.path.join(top, "zk-scripts", "m.json"), "w") as f:
        json.dump(zk("m"), f)
    rc, out, err = run([sys.executable, coord, "--driver", stand_in, "--scripts", top, "--model-only"])
    if rc != 0 or "m: model ran (1 steps); real side skipped" not in out \
            or not out.strip().endswith("conformance: 0 of 1 scripts agree (ZooKeeper 0 of 1); 1 not compared "
                                        "(the real side was skipped)"):
        failures.append(f"coord.py --model-only: expected the model side alone and the skip said, got {rc}: {out!r} {err!r}")

# Without servers: the model side alone, and the report says so.
rc, out, err = run([sys.executable, suite, locksim, "--redis-driver", driver, "--model-only",
                    "--only", "duplicate-wait-commit-unique", "--only", "set-nx-px-expires"])
if rc != 0 or "real side skipped" not in out or "the real side of the sql scripts was skipped" not in out \
        or not out.strip().endswith("not compared (the real side was skipped)"):
    failures.append(f"--model-only: expected the model side alone and the skip said, got {rc}: {out!r} {err!r}")

# --repeat: the model's trials with seeds 1 to N, each outcome with its count. In delete-commit-unique
# either waiter may win (the later woken at odds 9 to 1, as MariaDB runs them), and the loser meets a
# duplicate or, when the purge came first, is a deadlock's victim: 30 trials show all four.
rc, out, err = run([sys.executable, suite, locksim, "--model-only", "--repeat", "30", "--only", "delete-commit-unique"])
counts = [int(line.split("model ")[1].split(" of ")[0]) for line in out.splitlines() if line.startswith("  outcome ")]
if rc != 0 or len(counts) != 4 or sum(counts) != 30 or "30 runs on the model (the other side was skipped)" not in out \
        or not all(f"step 4 s2: {o}, waited" in out for o in ("error 1062", "error 1213", "1 affected")):
    failures.append(f"--repeat: expected four outcomes over 30 model trials, got {rc}: {out!r} {err!r}")

# Started by a python3 without the clients (a virtualenv without the system's packages), the suite
# starts itself again under one that has them, says so, and runs the real side.
if shutil.which("redis-server", path=os.environ.get("PATH", "") + os.pathsep + "/usr/sbin"):
    with tempfile.TemporaryDirectory(prefix="locksim-conformance-venv-") as venv:
        made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], capture_output=True, text=True)
        bare = os.path.join(venv, "bin", "python3")
        if made.returncode != 0 or run([bare, "-c", "import redis"])[0] == 0:
            failures.append(f"could not make a python3 without the clients: {made.stderr.strip()!r}")
        else:
            rc, out, err = run([bare, suite, locksim, "--redis-driver", driver, "--only", "incr-counter"])
            if rc != 0 or "has no redis; running under /usr/bin/python3" not in out or "incr-counter: agree" not in out \
                    or not out.strip().splitlines()[-1].startswith("conformance: 1 of 1 scripts agree"):
                failures.append(f"a python3 without the clients: expected the suite under another, got {rc}: {out!r} {err!r}")
else:
    print("no redis-server: the run under a python3 without the clients was not tried (scripts/setup installs it)")

# --real-only: a PostgreSQL script on the real server alone (no model needed), every step's outcome
# printed; without PostgreSQL the report says its real side was skipped.
rc, out, err = run([sys.executable, suite, "--real-only", "--only", "pg-duplicate-wait-commit-unique"])
if any(os.access(os.path.join(b, "postgres"), os.X_OK) and os.access(os.path.join(b, "initdb"), os.X_OK)
       for b in ["/usr/lib/postgresql/15/bin", *os.environ.get("PATH", "").split(os.pathsep)] if b):
    if rc != 0 or "step 3 s2: INSERT INTO t (k) VALUES ('a') => error 23505, waited" not in out \
            or "pg-duplicate-wait-commit-unique: ran on the server" not in out \
            or not out.strip().endswith("real side only: 1 of 1 scripts ran (PostgreSQL 1)"):
        failures.append(f"--real-only on PostgreSQL: expected the script's real outcomes, got {rc}: {out!r} {err!r}")
elif rc != 1 or "the real side of the pg scripts was skipped" not in out:
    failures.append(f"--real-only without PostgreSQL: expected the skip said, got {rc}: {out!r} {err!r}")

for f in failures:
    print(f)
print(f"{len(failures)} failure(s)" if failures else "the conformance suite refuses bad input and runs without servers")
sys.exit(1 if failures else 0)
