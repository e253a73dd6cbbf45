#!/usr/bin/env python3
"""Runs locksim under `mpirun -n 2` and alone, and checks that the results are the same.

Usage: check_cluster.py LOCKSIM SCENARIO_DIR

- run: results.json equal apart from wall times, for a client workload (timelines, latency
  histograms) and the sessions workload (steps, tables);
- sweep: points.json equal;
- explore random and dfs (exhaustive and finding; branched runs checked on each rank): the same finding,
  token and count of runs, and the same count of classes of equivalent runs;
- a rank that fails (bad input on it alone) ends the whole run with its message, exit 2;
- a rank that reads other work than rank 0 is refused, exit 2;
- a rank killed in the middle of a run ends the whole run (mpirun ends the others).
Every mpirun is bounded in time: a hang is a failure, not a wait.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

LOCKSIM, SCENARIOS = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
LIMIT_S = 180
failures = []


def run(args, cwd, mpi_ranks=None, mpmd=None, kill_rank_1_after_s=None):
    """Runs locksim (under mpirun with `mpi_ranks` ranks, or the ranks' own argument lists
    in `mpmd`, rank 1 killed with SIGKILL after `kill_rank_1_after_s` if given) in `cwd`;
    returns (exit code, stdout, stderr)."""
    if mpmd:
        cmd = list(MPIRUN)
        for i, rank_args in enumerate(mpmd):
            killer = ["timeout", "-s", "KILL", str(kill_rank_1_after_s)] if i == 1 and kill_rank_1_after_s else []
            cmd += ([":"] if i else []) + ["-n", "1"] + killer + [LOCKSIM] + rank_args
    elif mpi_ranks:
        cmd = MPIRUN + ["-n", str(mpi_ranks), LOCKSIM] + args
    else:
        cmd = [LOCKSIM] + args
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=LIMIT_S, start_new_session=True)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {LIMIT_S} s: {' '.join(cmd)}"
    return p.returncode, p.stdout, p.stderr


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


def without_wall_times(doc):
    """results.json less what depends on the machine: the wall times."""
    if isinstance(doc, dict):
        return {k: without_wall_times(v) for k, v in doc.items() if k not in ("timing", "wall_s")}
    if isinstance(doc, list):
        return [without_wall_times(v) for v in doc]
    return doc


def scenario(name):
    return os.path.join(SCENARIOS, name + ".json")


def same_run(name, args):
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        a = run(args + ["--json", "--jobs", "1"], one)
        b = run(args + ["--json", "--jobs", "1"], two, mpi_ranks=2)
        if a[0] is None or b[0] is None or a[0] != b[0]:
            check(name, False, f"exit codes {a[0]} and {b[0]}: {a[2].strip()} {b[2].strip()}")
            return
        ja, jb = without_wall_times(json.loads(a[1])), without_wall_times(json.loads(b[1]))
        check(name, ja == jb, "results.json differ")


def explore_summary(out):
    """The lines of explore's output that must not depend on the ranks: counts and token."""
    lines = []
    for line in out.splitlines():
        if line.startswith(("found after", "nothing found", "dfs:", "token:", "shrunk token:")):
            lines.append(re.sub(r"\(\d+\.\d+ s, ", "(", line))
    return lines


def same_explore(name, args):
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        a = run(args + ["--jobs", "1", "--no-shrink"], one)
        b = run(args + ["--jobs", "1", "--no-shrink"], two, mpi_ranks=2)
        sa, sb = explore_summary(a[1]), explore_summary(b[1])
        check(name, a[0] is not None and a[0] == b[0] and sa and sa == sb, f"exit {a[0]} / {b[0]}: {sa} vs {sb} {b[2].strip()}")


def main():
    if shutil.which("mpirun") is None:
        print("mpirun is not installed (scripts/setup installs openmpi-bin)")
        return 1
    same_run("run over 2 ranks: results.json as in one process (client workload, timelines)",
             ["run", scenario("del-removes-another-lock"), "--trials", "6"])
    same_run("run over 2 ranks: results.json as in one process (sessions workload, steps and tables)",
             ["run", scenario("three-inserts-one-rollback"), "--trials", "6"])
    same_run("run over 2 ranks: results.json as in one process (a Lua workload, its check's metrics)",
             ["run", scenario("claiming-jobs"), "--trials", "6"])

    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        args = ["sweep", scenario("del-removes-another-lock"), "--vary", "clients.timeout_ms=100:700:300",
                "--trials", "3", "--jobs", "1"]
        a, b = run(args, one), run(args, two, mpi_ranks=2)
        files = []
        for folder in (one, two):
            found = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f == "points.json"]
            files.append(open(found[0]).read() if len(found) == 1 else None)
        check("sweep over 2 ranks: points.json as in one process", a[0] == 0 and b[0] == 0 and files[0] and files[0] == files[1],
              f"exit {a[0]} / {b[0]} {b[2].strip()}")

    same_explore("explore random over 2 ranks: the same finding, token and runs",
                 ["explore", scenario("gc-pause-longer-than-lease"), "--strategy", "redis-set-nx-ex-drop", "--mode", "random"])
    same_explore("explore dfs over 2 ranks: the same finding, token and runs",
                 ["explore", scenario("two-clients-pause"), "--strategy", "redis-set-nx-ex-drop", "--mode", "dfs"])
    same_explore("explore dfs over 2 ranks: the same exhaustive count, and the same classes of equivalent runs",
                 ["explore", scenario("two-clients-pause"), "--strategy", "unique-index", "--mode", "dfs", "--count-classes"])
    # Each rank branches the groups of runs it takes from their parent's saved run, and checks every
    # branched run against the same run from time zero (a mismatch fails that rank, and the run).
    same_explore("explore dfs over 2 ranks, branched runs checked on each rank: the same exhaustive count",
                 ["explore", scenario("two-clients-pause"), "--strategy", "fencing-token", "--mode", "dfs", "--bound", "2",
                  "--budget", "20000", "--check-branches"])

    with tempfile.TemporaryDirectory() as folder:
        good = ["run", scenario("three-inserts-one-rollback"), "--trials", "50"]
        code, out, err = run([], folder, mpmd=[good, good + ["--set", "clients.count=lots"]])
        check("a rank that fails ends the run with its message, exit 2", code == 2 and "rank 1:" in err and "clients/count" in err,
              f"exit {code}: {err.strip()[-400:]}")
        code, out, err = run([], folder, mpmd=[good, ["run", scenario("three-inserts-one-rollback"), "--trials", "51"]])
        check("a rank that reads other work than rank 0 is refused, exit 2", code == 2 and "other work" in err,
              f"exit {code}: {err.strip()[-400:]}")
        code, out, err = run([], folder, mpmd=[good, ["list"]])
        check("a rank that does not take part ends the run instead of leaving it waiting", code == 2 and "rank 1" in err,
              f"exit {code}: {err.strip()[-400:]}")

    with tempfile.TemporaryDirectory() as folder:
        long_run = ["run", scenario("account-bind"), "--trials", "2000", "--jobs", "1"]
        code, out, err = run([], folder, mpmd=[long_run, long_run], kill_rank_1_after_s=2)
        check("a rank killed in the middle of a run ends the whole run", code not in (None, 0) and "rank 1" in err,
              f"exit {code}: {err.strip()[-400:]}")

    print(f"cluster: {len(failures)} of the checks failed" if failures else "cluster: every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
