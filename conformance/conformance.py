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
"""

import argparse
import decimal
import fnmatch
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib

HERE = os.path.dirname(os.path.realpath(__file__))
# Python puts the script's folder first on its path: nothing here may stand in for a client module.
sys.path = [p for p in sys.path if os.path.realpath(p or os.curdir) != HERE]
KINDS = ("sql", "pg", "redis")                 # the kinds of script, each in a folder of its own
FOLDERS = {"sql": "sql-scripts", "pg": "pg-scripts", "redis": "redis-scripts"}
ENGINES = {"sql": "MariaDB", "pg": "PostgreSQL", "redis": "Redis"}
CLIENTS = {"sql": "pymysql", "pg": "psycopg2", "redis": "redis"}  # the module each kind's real side is driven with
PG_BIN = "/usr/lib/postgresql/15/bin"           # Debian's postgresql-15: initdb and postgres are not on the PATH
REEXEC = "LOCKSIM_CONFORMANCE_INTERPRETER"       # set when this script has started itself again elsewhere
MODEL_WAIT_MS = 50      # a step of the model that waited this long for a lock has waited
STEP_LIMIT_S = 20       # no statement or command may take longer
MAX_RACE_RUNS = 100     # a race script's runs on each side, at most
START_LIMIT_S = 30      # server start-up
SCRIPT_LIMIT_S = 60     # one script on the real server


class BadInput(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# The interpreter: one whose clients import


CLIENT_PROBE = ("import importlib, json, sys\n"
                "found = {}\n"
                "for m in sys.argv[1:]:\n"
                "    try:\n"
                "        mod = importlib.import_module(m)\n"
                "        found[m] = getattr(mod, '__version__', '?') if getattr(mod, '__file__', None) else None\n"
                "    except Exception:\n"
                "        found[m] = None\n"
                "print(json.dumps(found))\n")


def clients_of(python):
    """{module: version or None} for the client modules under the interpreter `python`, each imported as a
    real package (a bare folder of that name is none), run from an empty folder so that nothing there stands in."""
    with tempfile.TemporaryDirectory(prefix="locksim-conformance-probe-") as empty:
        try:
            p = subprocess.run([python, "-c", CLIENT_PROBE, *CLIENTS.values()], cwd=empty, capture_output=True,
                               text=True, timeout=30)
            return json.loads(p.stdout) if p.returncode == 0 else {}
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return {}


def interpreters():
    """Debian's python3 first (scripts/setup installs its python3-pymysql, python3-psycopg2 and python3-redis),
    then every python3 on the PATH."""
    seen, out = set(), []
    for path in ["/usr/bin/python3", *(os.path.join(d, "python3") for d in os.environ.get("PATH", "").split(os.pathsep))]:
        path = os.path.abspath(path)  # not resolved: a virtualenv's link to the system's python3 has other modules
        if path not in seen and os.access(path, os.X_OK):
            seen.add(path)
            out.append(path)
    return out


def choose_interpreter(needed):
    """Says which interpreter drives the real servers, and with which clients. When this one lacks a client
    the kinds in `needed` require and another python3 has them all, the suite starts itself again there;
    otherwise it goes on here and the kinds without a client run the model side alone."""
    mine = clients_of(sys.executable)
    if all(mine.get(CLIENTS[k]) for k in needed) or os.environ.get(REEXEC):
        return mine
    for python in interpreters():
        theirs = clients_of(python)
        if all(theirs.get(CLIENTS[k]) for k in needed):
            lacking = ", ".join(CLIENTS[k] for k in needed if not mine.get(CLIENTS[k]))
            print(f"conformance: {sys.executable} has no {lacking}; running under {python}", flush=True)
            os.environ[REEXEC] = python
            os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])
    return mine


# ---------------------------------------------------------------------------------------------
# Outcomes: what a step got, in one comparable form for both sides


def norm_cell(v):
    if isinstance(v, (bytes, bytearray)):
        v = v.decode("utf-8", "replace")
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (decimal.Decimal, float)):  # MariaDB's SUM is a DECIMAL: whole ones compare as integers
        try:
            return int(v) if v == int(v) else str(v)
        except (ValueError, OverflowError, decimal.InvalidOperation):  # NaN, infinity
            return str(v)
    if v is None:
        return None
    if not isinstance(v, (int, str)):
        return str(v)
    return v


def sql_outcome(kind, error=None, rows=None, affected=0, insert_id=0, warnings=0, waited=False, ignore_ids=False,
                sql="", message="", unordered=False):
    """kind: 'rows' (a SELECT), 'write', 'ok', 'error', 'not issued', 'still waiting'. An ALTER's error
    carries its message too: which duplicated value a failed unique build names is part of its outcome.
    unordered: the rows come in no defined order (PostgreSQL's without ORDER BY) and are written sorted."""
    if kind in ("not issued", "still waiting"):
        text = kind
    elif error:
        text = f"error {error}"
        if is_alter(sql) and message:
            text += f" {message}"
    elif kind == "rows":
        cells = [[norm_cell(c) for c in r] for r in rows]
        if unordered:
            cells.sort(key=json.dumps)
        text = f"{len(cells)} rows " + json.dumps(cells)
    elif kind == "write":
        text = f"{affected} affected"
        if affected and insert_id and not ignore_ids:
            text += f", id {insert_id}"
        if warnings:
            text += f", {warnings} warnings"
    else:
        text = "ok"
    if waited and kind != "not issued":
        text += ", waited"
    return text


def is_select(sql):
    return re.match(r"\s*select\b", sql, re.I) is not None


def is_write(sql):
    return re.match(r"\s*(insert|replace|update|delete)\b", sql, re.I) is not None


def returns_rows(sql):
    """PostgreSQL's INSERT, UPDATE or DELETE ... RETURNING answers with rows, as a SELECT does."""
    return is_write(sql) and re.search(r"\breturning\b", sql, re.I) is not None


def unordered(sql):
    """A statement's rows without ORDER BY come in no defined order: PostgreSQL gives them in the heap's,
    where an updated row moves to the end, so a PostgreSQL script's compare sorted."""
    return re.search(r"\border\s+by\b", sql, re.I) is None


def is_alter(sql):
    """An online ALTER runs as long as its index build: its time is no lock wait on either side."""
    return re.match(r"\s*alter\b", sql, re.I) is not None


# ---------------------------------------------------------------------------------------------
# Scripts


def load_folders(folder, kinds, folders, only, check, none):
    """Every script of the kinds' folders (`folders[kind]` under `folder`), read and checked: an object
    with a non-empty list of steps, named as its file, a name in one folder only, then `check(doc,
    kind, path)`, the suite's own checks. `only`: the names (patterns) to keep; `none`: what to say
    when there is no script. The coordination services' suite loads its scripts the same way."""
    scripts = []
    seen = {}
    for kind in kinds:
        d = os.path.join(folder, folders[kind])
        if not os.path.isdir(d):
            continue
        for file in sorted(os.listdir(d)):
            if not file.endswith(".json"):
                continue
            path = os.path.join(d, file)
            try:
                with open(path) as f:
                    doc = json.load(f)
            except (OSError, ValueError) as e:
                raise BadInput(f"{path}: {e}")
            if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list) or not doc["steps"]:
                raise BadInput(f"{path}: a script is an object with a non-empty list of steps")
            if doc.get("name") != file[:-5]:
                raise BadInput(f"{path}: its name must be its file name, {file[:-5]!r}")
            if doc["name"] in seen:
                raise BadInput(f"{path}: {seen[doc['name']]} has the same name: a script's name is unique across "
                               f"{', '.join(folders.values())}")
            seen[doc["name"]] = path
            check(doc, kind, path)
            doc["_kind"] = kind
            doc["_path"] = path
            if only and not any(fnmatch.fnmatchcase(doc["name"], o) for o in only):
                continue
            scripts.append(doc)
    if only:
        missing = {o for o in only if not any(fnmatch.fnmatchcase(d["name"], o) for d in scripts)}
        if missing:
            raise BadInput(f"no script named {', '.join(sorted(missing))}")
    if not scripts:
        raise BadInput(none)
    return scripts


def check_sql_script(doc, sub, path):
    """A script of pg-scripts says `"engine": "postgresql"` in its database, and no other does."""
    database = doc.get("database")
    engine = database.get("engine") if isinstance(database, dict) else None
    if sub == "pg" and engine != "postgresql":
        raise BadInput(f"{path}: /database/engine: a script of {FOLDERS['pg']} runs on PostgreSQL: "
                       f"expected \"postgresql\"")
    if sub != "pg" and engine == "postgresql":
        raise BadInput(f"{path}: /database/engine: a PostgreSQL script belongs in {FOLDERS['pg']}")
    wait_ms = database.get("lock_wait_timeout_ms") if isinstance(database, dict) else None
    if sub == "sql" and wait_ms is not None and (not isinstance(wait_ms, (int, float)) or wait_ms <= 0
                                                 or wait_ms % 1000 != 0):
        # innodb_lock_wait_timeout is whole seconds: 300 ms would be compared with a 1 s wait.
        raise BadInput(f"{path}: /database/lock_wait_timeout_ms: MariaDB waits whole seconds "
                       f"(innodb_lock_wait_timeout): expected a multiple of 1000, got {wait_ms!r}")
    conf = doc.get("conformance", {})
    if not isinstance(conf, dict) or set(conf) - {"interchangeable", "ignore_ids", "repeat"}:
        raise BadInput(f"{path}: /conformance: expected an object with interchangeable, ignore_ids and repeat")
    repeat = conf.get("repeat", 2)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 2 <= repeat <= MAX_RACE_RUNS:
        raise BadInput(f"{path}: /conformance/repeat: expected a number of runs from 2 to {MAX_RACE_RUNS}, got {repeat!r}")
    for group in conf.get("interchangeable", []):
        if not isinstance(group, list) or not all(isinstance(i, int) and 1 <= i <= len(doc["steps"])
                                                  for i in group):
            raise BadInput(f"{path}: /conformance/interchangeable: lists of step numbers")


def load_scripts(folder, only):
    """Every script of the kinds' folders, each checked by check_sql_script."""
    return load_folders(folder, KINDS, FOLDERS, only, check_sql_script, f"{folder}: no scripts")


def load_explained(path):
    """The scripts docs/conformance.md lists as known divergences: the first cell of each row of
    the table under "## Known divergences"."""
    explained = {}
    try:
        with open(path) as f:
            section = False
            for line in f:
                if line.startswith("## "):
                    section = line.strip() == "## Known divergences"
                m = section and re.match(r"\|\s*`?([A-Za-z0-9_.+-]+)`?\s*\|\s*(.*?)\s*\|", line)
                if m and m.group(1) not in ("script", "---"):
                    explained[m.group(1)] = m.group(2)
    except OSError as e:
        raise BadInput(f"{path}: {e}")
    return explained


# ---------------------------------------------------------------------------------------------
# The model side


def model_sql(locksim, script, workdir, seed=None):
    """One trial of the script on the model (of the given seed; without one, the scenario's own)."""
    doc = {k: v for k, v in script.items() if not k.startswith("_") and k != "conformance"}
    doc.setdefault("trials", 1)
    path = os.path.join(workdir, script["name"] + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    p = subprocess.run([locksim, "run", path, "--json", "--trials", "1"] + ([] if seed is None else ["--seed", str(seed)]),
                       cwd=workdir, capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):  # 1: an expectation of the file did not hold, which is not ours to judge
        raise BadInput(f"{script['_path']}: the model refused it: {p.stderr.strip() or p.stdout.strip()}")
    results = json.loads(p.stdout)
    strategy = results["strategies"][0]
    ignore = script.get("conformance", {}).get("ignore_ids", False)
    pg = script["_kind"] == "pg"  # errors by their SQLSTATE, the model's `code`; no insert id
    outcomes = []
    timeline = [(st["issued_ms"], st["finished_ms"], st.get("applied_ms")) for st in strategy["steps"]]
    for st in strategy["steps"]:
        if st["issued_ms"] is None:
            outcomes.append(sql_outcome("not issued"))
        elif st["finished_ms"] is None:
            outcomes.append(sql_outcome("still waiting", waited=True))
        else:
            kind = "rows" if st["columns"] or is_select(st["sql"]) or (pg and returns_rows(st["sql"])) else (
                "write" if is_write(st["sql"]) else "ok")
            # A deadlock victim's request is queued and refused at once: it has not waited.
            waited = st["waited"] and st["waited_ms"] >= MODEL_WAIT_MS and not is_alter(st["sql"])
            if pg and "code" not in st:
                raise BadInput(f"{script['_path']}: the model's results give no `code` (the SQLSTATE) for its steps")
            error = (st["code"] or None) if pg else st["error"]
            outcomes.append(sql_outcome(kind, error=error, rows=st["rows"], affected=st["affected"],
                                        insert_id=st["insert_id"], warnings=st["warnings"], waited=waited,
                                        ignore_ids=ignore, sql=st["sql"], message=st.get("message", ""),
                                        unordered=pg and unordered(st["sql"])))
    tables = {}
    for name, t in strategy["tables"].items():
        if t["row_count"] > BIG_TABLE:  # the model keeps its first rows, the count of all and their digest
            if ignore:
                raise BadInput(f"{script['_path']}: ignore_ids over a table of more than {BIG_TABLE} rows is not compared")
            tables[name] = big_table_text(t["row_count"], t["checksum"])
        else:
            tables[name] = table_text(t["columns"], t["rows"], ignore)
    return outcomes, tables, timeline


BIG_TABLE = 1000  # rows: a larger table compares by its count and a digest of its rows


def table_text(columns, rows, ignore_ids):
    keep = [i for i, c in enumerate(columns) if not (ignore_ids and c == "id")]
    if len(rows) > BIG_TABLE:
        return big_table_text(len(rows), sum(zlib.crc32(",".join(str(norm_cell(r[i])) for i in keep).encode())
                                             for r in rows))
    out = [[norm_cell(r[i]) for i in keep] for r in rows]
    if ignore_ids or "id" not in columns:  # a table keyed by other columns: its rows in one order on both sides
        out.sort(key=json.dumps)
    return f"{len(out)} rows " + json.dumps(out)


def big_table_text(count, checksum):
    """A table of more than BIG_TABLE rows (a legacy table) by its count and the sum of its rows' CRC32s
    (each row's cells joined by commas, as MariaDB's CONCAT_WS writes them): the server computes it
    itself, so its rows need not come back."""
    return f"{count} rows, checksum {checksum}"


def real_table_text(cursor, table, ignore_ids):
    cursor.execute(f"SELECT COUNT(*) FROM {table}")
    count = cursor.fetchone()[0]
    if count <= BIG_TABLE:
        cursor.execute(f"SELECT * FROM {table} LIMIT 0")
        columns = [d[0] for d in cursor.description]
        cursor.fetchall()
        order = "id" if "id" in columns else ", ".join(str(i) for i in range(1, len(columns) + 1))
        cursor.execute(f"SELECT * FROM {table} ORDER BY {order}")
        return table_text([d[0] for d in cursor.description], cursor.fetchall(), ignore_ids)
    cursor.execute(f"SELECT * FROM {table} LIMIT 0")
    columns = [d[0] for d in cursor.description if not (ignore_ids and d[0] == "id")]
    cursor.fetchall()
    cursor.execute(f"SELECT COALESCE(SUM(CRC32(CONCAT_WS(',', {', '.join(columns)}))), 0) FROM {table}")
    return big_table_text(count, int(cursor.fetchone()[0]))


def seeded_rows(locksim, script, workdir):
    """The script's seeded rows, listed and generated (database.legacy), as `locksim rows` prints them:
    one INSERT a row, each table's in id order. Returns [(prefix, [values, ...])] to send as multi-row
    INSERTs, in order."""
    if not locksim:
        raise BadInput(f"{script['_path']}: its database.legacy rows come from `locksim rows`: give LOCKSIM")
    path = os.path.join(workdir, script["name"] + ".rows.json")
    with open(path, "w") as f:
        json.dump({k: v for k, v in script.items() if not k.startswith("_") and k != "conformance"}, f)
    p = subprocess.run([locksim, "rows", path], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise BadInput(f"{script['_path']}: locksim rows refused it: {p.stderr.strip()}")
    groups = []
    for line in p.stdout.splitlines():
        head, sep, values = line.partition(" VALUES ")
        if not sep or not values.endswith(";"):
            raise RuntimeError(f"locksim rows printed {line[:80]!r}")
        if not groups or groups[-1][0] != head:
            groups.append((head, []))
        groups[-1][1].append(values[:-1])
    return groups


def load_seeded(cursor, groups, batch=5000):
    for head, values in groups:
        for i in range(0, len(values), batch):
            cursor.execute(f"{head} VALUES {', '.join(values[i:i + batch])}")


# ---------------------------------------------------------------------------------------------
# Real servers


def create_tables(cursor, script, locksim, workdir):
    """The script's database.tables, then its rows: the listed ones, or the generated legacy rows as the
    model loads them, in multi-row INSERTs."""
    database = script.get("database", {})
    for create in database.get("tables", []):
        cursor.execute(create)
    if "legacy" in database:
        load_seeded(cursor, seeded_rows(locksim, script, workdir))
        return
    for table, rows in database.get("rows", {}).items():
        for row in rows:
            cols = list(row)
            cursor.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})",
                           [row[k] for k in cols])


def program(name):
    """A server program on the PATH, or in /usr/sbin where Debian puts mariadbd (not on every user's PATH)."""
    return shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/usr/local/sbin")


def pg_bindir():
    """The folder of PostgreSQL's initdb and postgres: Debian's postgresql-15 folder, else one on the PATH."""
    for d in [PG_BIN, *os.environ.get("PATH", "").split(os.pathsep)]:
        if d and all(os.path.isfile(os.path.join(d, n)) and os.access(os.path.join(d, n), os.X_OK)
                     for n in ("initdb", "postgres")):
            return d
    return None


def log_tail(path, lines=5):
    try:
        with open(path, errors="replace") as f:
            return " / ".join(line.strip() for line in f.read().splitlines()[-lines:])
    except OSError:
        return "(no log)"


def die_with_parent():
    """In the server's child process: the kernel kills it when the suite dies, however it dies."""
    import ctypes
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, limit_s, what):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not come up within {limit_s} s")


def wait_for_server(proc, connect, what, exited):
    """Until `connect()` gets a connection (closed at once) or START_LIMIT_S pass; `exited()` is the
    message when the server process ends first."""
    def up():
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited at start: {exited()}")
        try:
            connect().close()
            return True
        except Exception:
            return False
    wait_until(up, START_LIMIT_S, what)


def stop(proc, limit_s=10):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(limit_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(limit_s)


class MariaDB:
    """mariadbd on a socket, networking off, grant tables skipped, in a private data folder."""

    def __init__(self, root):
        self.dir = os.path.join(root, "mariadb")
        self.sock = os.path.join(self.dir, "mariadb.sock")
        self.proc = None

    def start(self):
        import pymysql  # noqa: F401  (fails here, before a server starts, when the client is missing)
        os.makedirs(self.dir)
        data = os.path.join(self.dir, "data")
        user = ["--user=root"] if os.geteuid() == 0 else []
        log = open(os.path.join(self.dir, "install.log"), "w")
        subprocess.run([program("mariadb-install-db"), "--no-defaults", f"--datadir={data}", "--skip-test-db",
                        "--auth-root-authentication-method=normal", *user], stdout=log, stderr=log, check=True,
                       timeout=START_LIMIT_S)
        self.proc = subprocess.Popen(
            [program("mariadbd"), "--no-defaults", f"--datadir={data}", f"--socket={self.sock}", "--skip-networking",
             "--skip-grant-tables", f"--pid-file={os.path.join(self.dir, 'mariadbd.pid')}",
             f"--log-error={os.path.join(self.dir, 'error.log')}", "--innodb-buffer-pool-size=32M",
             "--innodb-log-file-size=8M", "--skip-log-bin", "--innodb-flush-log-at-trx-commit=2", *user],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)

        wait_for_server(self.proc, self.connect, "mariadbd", lambda: "see its error log")

    def connect(self, db=None):
        import pymysql
        return pymysql.connect(unix_socket=self.sock, user="root", database=db, autocommit=True,
                               connect_timeout=5, read_timeout=STEP_LIMIT_S, write_timeout=STEP_LIMIT_S)

    def stop(self):
        stop(self.proc)


class PostgreSQL:
    """postgres on a Unix socket in a private folder, TCP off, trust authentication (initdb --auth=trust
    -U postgres), fsync off, in a private data folder. initdb and postgres refuse to run as root: under
    root both run as the `postgres` user (Debian's postgresql-15 makes it), else as `nobody`, and their
    folders are that user's."""

    PORT = 5432  # names the socket only (.s.PGSQL.5432, in a folder of its own): no TCP

    def __init__(self, root):
        self.root = root
        self.dir = os.path.join(root, "postgresql")
        self.sock = os.path.join(self.dir, "sock")
        self.bindir = pg_bindir()
        self.proc = None

    @staticmethod
    def account():
        """subprocess's user, group and extra_groups to run initdb and postgres with: none unless root."""
        if os.geteuid() != 0:
            return {}
        import pwd
        for name in ("postgres", "nobody"):
            try:
                pw = pwd.getpwnam(name)
            except KeyError:
                continue
            return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        raise RuntimeError("running as root, with no user postgres or nobody to run PostgreSQL as")

    def start(self):
        import psycopg2  # noqa: F401  (fails here, before a server starts, when the client is missing)
        account = self.account()
        os.makedirs(self.sock)
        if account:
            os.chmod(self.root, 0o711)  # that user passes through the run's folder (and lists nothing there)
            for d in (self.dir, self.sock):
                os.chown(d, account["user"], account["group"])
        os.chmod(self.dir, 0o700)
        data = os.path.join(self.dir, "data")
        install_log = os.path.join(self.dir, "initdb.log")
        with open(install_log, "w") as log:
            p = subprocess.run([os.path.join(self.bindir, "initdb"), "-D", data, "--auth=trust", "-U", "postgres",
                                "--no-sync", "--no-locale", "--encoding=UTF8"], stdout=log, stderr=log,
                               cwd=self.dir, timeout=START_LIMIT_S, preexec_fn=die_with_parent, **account)
        if p.returncode != 0:
            raise RuntimeError(f"initdb failed ({p.returncode}): {log_tail(install_log)}")
        self.log = os.path.join(self.dir, "postgres.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [os.path.join(self.bindir, "postgres"), "-D", data, "-p", str(self.PORT), "-k", self.sock,
                 "-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
                 "-c", "full_page_writes=off", "-c", "max_connections=50"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.dir, preexec_fn=die_with_parent,
                **account)

        wait_for_server(self.proc, self.connect, "postgres", lambda: log_tail(self.log))

    def connect(self, db=None):
        """A connection in autocommit: a script's BEGIN and COMMIT open and end its transactions."""
        import psycopg2
        conn = psycopg2.connect(host=self.sock, port=self.PORT, user="postgres", dbname=db or "postgres",
                                connect_timeout=5)
        conn.autocommit = True
        return conn

    def stop(self):
        """A fast shutdown (SIGINT): the sessions' backends are ended, not waited for."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class Redis:
    """redis-server on a free loopback port, in a private folder; killed and restarted by the scripts."""

    def __init__(self, root):
        self.dir = os.path.join(root, "redis")
        self.proc = None
        self.port = None
        self.args = []

    def start(self, appendonly="none"):
        import redis  # noqa: F401
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        aof = [] if appendonly == "none" else ["--appendonly", "yes", "--appendfsync", appendonly]
        self.args = ["--bind", "127.0.0.1", "--dir", self.dir, "--save", "", "--daemonize", "no", "--logfile",
                     os.path.join(self.dir, "redis.log"), *(aof or ["--appendonly", "no"])]
        self.launch()

    def launch(self):
        self.port = free_port()
        self.proc = subprocess.Popen([program("redis-server"), "--port", str(self.port), *self.args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError("redis-server exited at start: see its log")
            try:
                return self.client().ping()
            except Exception:
                return False
        wait_until(up, START_LIMIT_S, "redis-server")

    def client(self):
        import redis
        c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=STEP_LIMIT_S, decode_responses=True)
        c.response_callbacks.clear()  # the server's replies as they come (PEXPIRE's 1, not True)
        return c

    def kill9(self):
        if "--appendfsync" in self.args:
            self.wait_for_aof_write()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def wait_for_aof_write(self):
        """Until Redis has written every command it acknowledged to its AOF (the OS page cache, which a
        process kill keeps), at most STEP_LIMIT_S. With appendfsync everysec Redis postpones that write,
        for up to 2 s, while its last background fsync is still running: on a busy disk a kill right
        after a write can lose it. That depends on the machine's disk and load, not on the rules the
        scripts pin (docs/conformance.md, "Redis"), so the kill waits for the write."""
        c = self.client()
        try:
            deadline = time.monotonic() + STEP_LIMIT_S
            while True:
                info = c.execute_command("INFO", "persistence")
                info = info.decode() if isinstance(info, bytes) else info
                fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
                if fields.get("aof_buffer_length", "0").strip() == "0":
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not write its AOF within {STEP_LIMIT_S} s")
                time.sleep(0.01)
        finally:
            c.close()

    def stop(self):
        stop(self.proc)


# ---------------------------------------------------------------------------------------------
# The real side of an SQL script: MariaDB's or PostgreSQL's


class SqlSession(threading.Thread):
    """One session of a script on MariaDB: a connection on a thread of its own."""
    last_finish = 0.0  # when a statement of any session last returned: locks change only then
    ID_QUERY = "SELECT CONNECTION_ID()"

    # Whether the server still has a session (a disconnect step waits until it has none).
    GONE_QUERY = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s"

    def __init__(self, server, db, setup):
        super().__init__(daemon=True)
        self.server, self.db, self.setup = server, db, setup
        self.conn = self.connect()
        self.current = None  # the record of the statement running now, if any
        self.issued = []     # the records of every statement issued to it
        self.jobs = queue.Queue()
        self.closing = False
        self.start()

    def connect(self):
        conn = self.server.connect(self.db)
        with conn.cursor() as c:
            for statement in self.setup:
                c.execute(statement)
            c.execute(self.ID_QUERY)
            self.connection_id = c.fetchone()[0]
        return conn

    def disconnect(self):
        """A disconnect step: the connection closes, and the step ends once the server has ended its
        session (rolled back its transaction, released its locks), as the model's ends when its server
        answers the close; the session's next step runs on a new connection."""
        old = self.connection_id
        self.conn.close()
        self.conn = self.connect()
        deadline = time.monotonic() + STEP_LIMIT_S
        with self.conn.cursor() as c:
            while time.monotonic() < deadline:
                c.execute(self.GONE_QUERY, (old,))
                if c.fetchone()[0] == 0:
                    return
                time.sleep(0.01)
        raise RuntimeError(f"the server kept session {old} for {STEP_LIMIT_S} s after its connection closed")

    def issue(self, sql, args, record):
        """A statement issued while the session still runs an earlier one waits for it, as on the model:
        blocked from the start, so the next step comes at once."""
        if any(not r["done"].is_set() for r in self.issued):
            record["blocked"].set()
        self.issued.append(record)
        self.jobs.put((sql, args, record))

    def run(self):
        while True:
            job = self.jobs.get()
            if job is None or self.closing:
                return
            sql, args, record = job
            self.current = record
            if record.get("together") is not None:  # a step of a same-instant group: all start at once
                try:
                    record["together"].wait(STEP_LIMIT_S)
                except threading.BrokenBarrierError:
                    pass
            if sql is None:
                self.disconnect()
            else:
                self.execute(sql, args, record)
            self.current = None
            SqlSession.last_finish = time.monotonic()
            record["done"].set()

    def execute(self, sql, args, record):
        import pymysql
        try:
            with self.conn.cursor() as c:
                c.execute(sql, args or None)
                record["affected"] = c.rowcount if c.rowcount and c.rowcount > 0 else 0
                record["insert_id"] = c.lastrowid or 0
                record["warnings"] = c._result.warning_count if c._result else 0
                record["rows"] = list(c.fetchall()) if c.description else None
        except pymysql.err.MySQLError as e:
            record["error"] = e.args[0] if e.args else -1
            record["message"] = e.args[1] if len(e.args) > 1 else str(e)
        except Exception as e:  # the connection lost: counts as the step's outcome
            record["error"] = -1
            record["message"] = str(e)

    def close(self):
        self.jobs.put(None)
        try:
            self.conn.close()
        except Exception:
            pass


class PgSession(SqlSession):
    """One session of a script on PostgreSQL: a psycopg2 connection in autocommit, on a thread of its own."""
    ID_QUERY = "SELECT pg_backend_pid()"
    GONE_QUERY = "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = %s"

    def execute(self, sql, args, record):
        import psycopg2
        try:
            with self.conn.cursor() as c:
                c.execute(sql, args)
                record["rows"] = list(c.fetchall()) if c.description is not None else None
                record["affected"] = c.rowcount if c.rowcount and c.rowcount > 0 else 0
        except psycopg2.Error as e:
            record["error"] = e.pgcode or -1  # None: the connection lost, which counts as the step's outcome
            record["message"] = str(e).strip()
        except Exception as e:
            record["error"] = -1
            record["message"] = str(e)

    def close(self):
        """A statement still running (one still waiting at the script's time limit) is cancelled first:
        psycopg2 closes a connection only once its statement has returned. Statements queued behind it
        are dropped."""
        self.closing = True
        while True:
            try:
                self.jobs.get_nowait()
            except queue.Empty:
                break
        self.jobs.put(None)
        deadline = time.monotonic() + STEP_LIMIT_S
        while self.is_alive() and time.monotonic() < deadline:
            if self.current is not None:
                try:
                    self.conn.cancel()
                except Exception:
                    pass
            self.join(0.1)
        if not self.is_alive():
            try:
                self.conn.close()
            except Exception:
                pass


class LockWaits(threading.Thread):
    """Watches the server for the sessions' statements that wait for a lock, as the server itself says:
    a row or table lock (information_schema.INNODB_TRX, `LOCK WAIT`) or a metadata lock (the process
    list's `Waiting for ... lock`). A step has waited when it was seen waiting for a row or table lock
    at two polls in a row: a statement the server checks for a deadlock and refuses at once is not
    seen twice, and one that waits until a later step releases it is, since that step is issued only
    once this one is seen blocked. No clock decides it, so a busy machine changes nothing."""

    # InnoDB refills INNODB_TRX from its transactions only when the table was last read more than 0.1 s
    # before (trx_i_s_possibly_fetch_data_into_cache): polled faster, it would show the same rows forever.
    POLL_S = 0.12
    SIGHTINGS = 2  # polls in a row that show a step waiting before it counts as waiting

    def __init__(self, server, sessions):
        super().__init__(daemon=True)
        self.conn = server.connect()
        self.sessions = sessions
        self.stopping = threading.Event()
        self.start()

    def waiting(self, c):
        """{connection id: "row" or "metadata"} of the statements the server shows waiting for a lock; a
        GET_LOCK() waiting for a user lock (the process list's `User lock`) counts as a row lock's wait."""
        waiting = {}
        c.execute("SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'")
        waiting.update((row[0], "row") for row in c.fetchall())
        c.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE STATE = 'User lock'")
        waiting.update((row[0], "row") for row in c.fetchall())
        c.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting for%lock%'")
        waiting.update((row[0], "metadata") for row in c.fetchall() if row[0] not in waiting)
        return waiting

    def run(self):
        streak = {}
        while not self.stopping.is_set():
            polled = time.monotonic()
            running = {s.connection_id: s.current for s in list(self.sessions.values()) if s.current}
            waiting = {}
            if running:
                with self.conn.cursor() as c:
                    waiting = self.waiting(c)
            for cid, record in running.items():
                kind = waiting.get(cid)
                if not kind or record["done"].is_set():
                    streak.pop(id(record), None)
                    record["lock_wait_seen"] = None
                    continue
                streak[id(record)] = streak.get(id(record), 0) + 1
                if streak[id(record)] >= self.SIGHTINGS:
                    if kind == "row":
                        record["waited"] = True
                    record["lock_wait_seen"] = polled
                    record["blocked"].set()
            self.stopping.wait(self.POLL_S)

    def close(self):
        self.stopping.set()
        self.join(STEP_LIMIT_S)
        try:
            self.conn.close()
        except Exception:
            pass


class PgLockWaits(LockWaits):
    """PostgreSQL's: a backend waits for a lock when pg_stat_activity shows it waiting on one
    (wait_event_type 'Lock': a row's, a transaction's, an advisory lock's, a table's) and pg_locks
    holds its request not granted. The lock manager grants a waiter's request as the holder releases
    it, before the holder's COMMIT returns, so a woken backend never reads as still waiting; and no
    request is refused at once after queueing (a deadlock is looked for only after deadlock_timeout),
    so one sighting counts, at a poll every 20 ms: a wait of lock_timeout = '100ms' is seen."""

    POLL_S = 0.02
    SIGHTINGS = 1

    def waiting(self, c):
        c.execute("SELECT a.pid FROM pg_stat_activity a WHERE a.wait_event_type = 'Lock' "
                  "AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted)")
        return {row[0]: "row" for row in c.fetchall()}


def pymysql_placeholders(sql):
    """A step's `?`s as PyMySQL's `%s` (outside quotes), its `%`s doubled."""
    out, quote, i = [], None, 0
    while i < len(sql):
        ch = sql[i]
        if quote:
            if ch == "\\" and i + 1 < len(sql):
                out.append(sql[i:i + 2].replace("%", "%%"))
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'`":
            quote = ch
        elif ch == "?":
            ch = "%s"
        out.append("%%" if ch == "%" else ch)
        i += 1
    return "".join(out)


def psycopg2_placeholders(sql, args):
    """A PostgreSQL step's `$1`, `$2`, ... (outside quotes) as psycopg2's `%(p1)s`, ..., its `%`s doubled:
    the statement and the parameters by name."""
    out, quote, i = [], None, 0
    while i < len(sql):
        ch = sql[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "$":
            m = re.match(r"\$(\d+)", sql[i:])
            if m:
                out.append(f"%(p{m.group(1)})s")
                i += len(m.group(0))
                continue
        out.append("%%" if ch == "%" else ch)
        i += 1
    return "".join(out), {f"p{n}": v for n, v in enumerate(args, 1)}


def waits_for_a_lock(record):
    """Whether the server shows the step waiting for a lock now, itself or behind its session's
    statement that does (the server gave the lock the model gave another session: interchangeable
    steps). Now: seen waiting at a poll begun after any statement last returned, since only a
    statement's end (a commit, a rollback, a timeout) releases a lock."""
    def seen_now(r):
        return r is not None and r.get("lock_wait_seen") is not None and r["lock_wait_seen"] > SqlSession.last_finish
    running = record["session"].current
    return seen_now(record) or (running is not record and seen_now(running))


def follow_model(script, i, records, model_timeline, deadline):
    """Step i is issued only once every step the model had finished, or whose reads and writes the
    model had made, by its issue time has finished on the server too, or the server shows that step
    itself waiting for a lock (a divergence its outcome will show; waiting for its busy session does
    not count): a busy server that runs late keeps the model's order. A woken statement the model
    had applied but not yet answered (T2's UPDATE the moment T1 commits) is thus in place before the
    next step reads, as it is in the model, whatever the machine's load. A step the model had still building
    then (an online ALTER, whose time is work, not a wait) must still build on the server; when the
    server has already finished it (a server much faster than the script's timing allows), the step
    cannot be placed and the script says so."""
    issued = model_timeline[i][0]
    if issued is None:
        return
    for j, record in enumerate(records):
        finished, applied = model_timeline[j][1], model_timeline[j][2]
        if (finished is not None and finished <= issued) or (applied is not None and applied <= issued):
            while not (record["done"].is_set() or waits_for_a_lock(record)) and time.monotonic() < deadline:
                record["done"].wait(0.01)
    if not isinstance(script["steps"][i].get("at_ms"), (int, float)):
        return
    for j, record in enumerate(records):
        began, finished, _ = model_timeline[j]
        if is_alter(record["sql"]) and began is not None and began <= issued and (finished is None or finished > issued) \
                and record["done"].is_set():
            raise RuntimeError(f"step {i + 1} is placed inside step {j + 1}, which this server had already "
                               f"finished at {script['steps'][i]['at_ms']} ms: its timing is too fast for the script")


def without_model(script):
    """--real-only: a timeline as if the model had finished each step before the next, so that each step
    waits for the ones before it to finish or to wait for a lock."""
    return [(0.0, 0.0, None)] * len(script["steps"])


def same_instant(steps, i):
    """The steps from i on that share its at_ms, each on a session of its own: issued at one instant."""
    at = steps[i].get("at_ms")
    if not isinstance(at, (int, float)):
        return [i]
    group, names = [i], {steps[i]["session"]}
    for k in range(i + 1, len(steps)):
        if steps[k].get("at_ms") != at or steps[k]["session"] in names:
            break
        group.append(k)
        names.add(steps[k]["session"])
    return group


def run_steps(server, script, open_session, monitor_class, placeholders, model_timeline):
    """Runs the script's steps on the server, each session a connection on a thread of its own; returns
    each step's outcome, as sql_outcome writes it. Steps that share an at_ms, on idle sessions of their own,
    start together behind a barrier, as the model issues them at one instant (a race's rate,
    --repeat)."""
    pg = script["_kind"] == "pg"
    ignore = script.get("conformance", {}).get("ignore_ids", False)
    sessions = {}
    records = []
    monitor = monitor_class(server, sessions)
    start = time.monotonic()
    deadline = start + SCRIPT_LIMIT_S
    together = {}  # step number -> the barrier its same-instant group starts behind
    try:
        for i, step in enumerate(script["steps"]):
            name = step["session"]
            group = same_instant(script["steps"], i) if i not in together else []
            if len(group) > 1:
                for k in group:
                    if script["steps"][k]["session"] not in sessions:
                        sessions[script["steps"][k]["session"]] = open_session()
                idle = [all(r["done"].is_set() for r in sessions[script["steps"][k]["session"]].issued) for k in group]
                barrier = threading.Barrier(len(group)) if all(idle) else None
                together.update({k: barrier for k in group})
            if name not in sessions:
                sessions[name] = open_session()
            if isinstance(step.get("at_ms"), (int, float)):
                time.sleep(max(0.0, start + step["at_ms"] / 1000 - time.monotonic()))
            follow_model(script, i, records, model_timeline, deadline)
            sql = step.get("sql")  # none: a disconnect step
            args = step.get("args")
            # blocked: the next step may come (the step waits for a lock, or for its busy session);
            # lock_wait_seen: when the server last showed this step itself waiting for a lock.
            record = {"done": threading.Event(), "blocked": threading.Event(), "lock_wait_seen": None,
                      "sql": sql or "disconnect", "session": sessions[name], "together": together.get(i)}
            records.append(record)
            statement, params = placeholders(sql, args) if args else (sql, None)
            sessions[name].issue(statement, params, record)
            # The next step comes once this one has finished or the server says it waits for a lock;
            # one with at_ms comes at its time, whether this one has finished or not, as the model issues it.
            following = script["steps"][i + 1] if i + 1 < len(script["steps"]) else {}
            until = deadline
            if isinstance(following.get("at_ms"), (int, float)):
                until = min(deadline, start + following["at_ms"] / 1000)
            while not (record["done"].is_set() or record["blocked"].is_set()) and time.monotonic() < until:
                record["done"].wait(0.01)
        for record in records:
            record["done"].wait(max(0.0, deadline - time.monotonic()))
        outcomes = []
        for record in records:
            if not record["done"].is_set():
                outcomes.append(sql_outcome("still waiting", waited=True))
                continue
            sql = record["sql"]
            waited = record.get("waited", False) and not is_alter(sql)
            if pg:  # rows whenever the statement answers with them (a SELECT, a RETURNING); no insert id
                kind = "rows" if record.get("rows") is not None else ("write" if is_write(sql) else "ok")
            else:
                kind = "rows" if record.get("rows") is not None and is_select(sql) else (
                    "write" if is_write(sql) else "ok")
            outcomes.append(sql_outcome(kind, error=record.get("error"), rows=record.get("rows"),
                                        affected=record.get("affected", 0), insert_id=record.get("insert_id", 0),
                                        warnings=record.get("warnings", 0), waited=waited, ignore_ids=ignore,
                                        sql=sql, message=record.get("message", ""), unordered=pg and unordered(sql)))
        return outcomes
    finally:
        monitor.close()
        for s in sessions.values():
            s.close()


def table_names(script):
    """The tables the script's database.tables create, as the server names them (PostgreSQL folds an
    unquoted name to lower case); a CREATE INDEX among them is none."""
    names = []
    for create in script.get("database", {}).get("tables", []):
        m = re.match(r"\s*create\s+table\s+(?:if\s+not\s+exists\s+)?[`\"]?(\w+)", create, re.I)
        if m:
            names.append(m.group(1).lower() if script["_kind"] == "pg" else m.group(1))
    return names


def real_sql(server, script, number, locksim, workdir, model_timeline):
    db = f"c{number}"
    admin = server.connect()
    with admin.cursor() as c:
        c.execute(f"DROP DATABASE IF EXISTS {db}")
        c.execute(f"CREATE DATABASE {db}")
        c.execute(f"USE {db}")
        database = script.get("database", {})
        create_tables(c, script, locksim, workdir)
    isolation = {"read_committed": "READ COMMITTED", "read_uncommitted": "READ UNCOMMITTED",
                 "serializable": "SERIALIZABLE"}.get(database.get("isolation"), "REPEATABLE READ")
    lock_wait_s = max(1, round(database.get("lock_wait_timeout_ms", 50000) / 1000))
    ignore = script.get("conformance", {}).get("ignore_ids", False)
    setup = [f"SET SESSION innodb_lock_wait_timeout = {lock_wait_s}",
             f"SET SESSION TRANSACTION ISOLATION LEVEL {isolation}"]
    outcomes = run_steps(server, script, lambda: SqlSession(server, db, setup), LockWaits,
                         lambda sql, args: (pymysql_placeholders(sql), args), model_timeline)
    tables = {}
    with admin.cursor() as c:
        for table in table_names(script):
            tables[table] = real_table_text(c, table, ignore)
        c.execute(f"DROP DATABASE {db}")
    admin.close()
    return outcomes, tables


PG_ISOLATION = {"read_committed": "READ COMMITTED", "read_uncommitted": "READ UNCOMMITTED",
                "repeatable_read": "REPEATABLE READ", "serializable": "SERIALIZABLE"}


def real_pg(server, script, number, locksim, workdir, model_timeline):
    """A PostgreSQL script on the real server: a fresh database s<number>, its tables and first rows,
    one connection a session with the script's isolation level (database.isolation; without it
    PostgreSQL's own default, READ COMMITTED) and lock_timeout (database.lock_wait_timeout_ms;
    without it, or 0, none: PostgreSQL's default, as the model's)."""
    db = f"s{number}"
    database = script.get("database", {})
    ignore = script.get("conformance", {}).get("ignore_ids", False)
    admin = server.connect()
    try:
        with admin.cursor() as c:
            c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
            c.execute(f"CREATE DATABASE {db}")
        loader = server.connect(db)
        try:
            with loader.cursor() as c:
                create_tables(c, script, locksim, workdir)
            setup = []
            if database.get("isolation") in PG_ISOLATION:
                setup.append(f"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL "
                             f"{PG_ISOLATION[database['isolation']]}")
            if isinstance(database.get("lock_wait_timeout_ms"), (int, float)):
                setup.append(f"SET lock_timeout = {round(database['lock_wait_timeout_ms'])}")  # 0: none
            outcomes = run_steps(server, script, lambda: PgSession(server, db, setup), PgLockWaits,
                                 psycopg2_placeholders, model_timeline)
            tables = {}
            with loader.cursor() as c:
                for table in table_names(script):
                    tables[table] = pg_table_text(c, table, ignore)
        finally:
            loader.close()
        with admin.cursor() as c:
            c.execute(f"DROP DATABASE {db} WITH (FORCE)")
    finally:
        admin.close()
    return outcomes, tables


def pg_table_text(cursor, table, ignore_ids):
    """A table's committed rows in id order (in the order of its columns without an id), every row read
    back: a large one compares by its count and digest, computed here as table_text computes it."""
    cursor.execute(f"SELECT * FROM {table} LIMIT 0")
    columns = [d[0] for d in cursor.description]
    order = "id" if "id" in columns else ", ".join(str(i) for i in range(1, len(columns) + 1))
    cursor.execute(f"SELECT * FROM {table} ORDER BY {order}")
    return table_text(columns, cursor.fetchall(), ignore_ids)


# ---------------------------------------------------------------------------------------------
# Redis scripts: the model side through the driver, the real side through redis-py


def redis_outcome(reply):
    """A raw reply (redis-py's reply callbacks off) in the driver's form."""
    if isinstance(reply, Exception):
        return "error"
    if reply is None:
        return "nil"
    if isinstance(reply, int):
        return f"(integer) {reply}"
    if reply == "OK":  # a status reply; the scripts store no value "OK"
        return "OK"
    return json.dumps(reply)


def model_redis(driver, script, workdir):
    path = os.path.join(workdir, script["name"] + ".json")
    with open(path, "w") as f:
        json.dump({k: v for k, v in script.items() if not k.startswith("_") and k != "conformance"}, f)
    p = subprocess.run([driver, path], capture_output=True, text=True, timeout=60)
    if p.returncode == 2:
        raise BadInput(f"{script['_path']}: the model refused it: {p.stderr.strip()}")
    if p.returncode != 0:
        raise RuntimeError(f"{script['_path']}: the Redis driver failed: {p.stderr.strip()}")
    replies = json.loads(p.stdout)
    return [pttl_band(step, r) for step, r in zip(script["steps"], replies["steps"])], {"keys": replies["keys"]}


def pttl_band(step, reply):
    """A PTTL's exact figure depends on the real clock: it compares by the band the script gives."""
    band = step.get("within_ms")
    if band and isinstance(reply, str) and reply.startswith("(integer) "):
        n = int(reply.split()[1])
        lo, hi = band
        return "(integer) " + (f"in [{lo}, {hi}]" if lo <= n <= hi else str(n))
    return reply


CAS_DEL = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
CAS_PEXPIRE = ("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) "
               "else return 0 end")


def real_redis(server, script):
    server.start(script.get("redis", {}).get("appendfsync", "none"))
    try:
        outcomes = []
        clients = {}
        deadline = time.monotonic() + SCRIPT_LIMIT_S
        for step in script["steps"]:
            if time.monotonic() > deadline:
                raise RuntimeError("the script ran past its time limit")
            if "sleep_ms" in step:
                time.sleep(step["sleep_ms"] / 1000)
                outcomes.append("ok")
                continue
            if step.get("kill"):
                server.kill9()
                clients = {}
                outcomes.append("ok")
                continue
            if step.get("restart"):
                server.launch()
                outcomes.append("ok")
                continue
            name = step["session"]
            if name not in clients:
                clients[name] = server.client()
            c = clients[name]
            cmd = step["redis"]
            op = cmd[0].upper()
            try:
                if op == "CAS_DEL":
                    reply = c.eval(CAS_DEL, 1, cmd[1], cmd[2])
                elif op == "CAS_PEXPIRE":
                    reply = c.eval(CAS_PEXPIRE, 1, cmd[1], cmd[2], cmd[3])
                else:
                    reply = c.execute_command(*cmd)
            except Exception as e:
                reply = e
            outcomes.append(pttl_band(step, redis_outcome(reply)))
        keys = {}
        c = server.client()
        for k in sorted(c.keys("*")):
            keys[k] = c.get(k)
        return outcomes, {"keys": json.dumps(keys, sort_keys=True, separators=(",", ":"))}
    finally:
        server.stop()


# ---------------------------------------------------------------------------------------------
# Comparison


def compare(script, model, real):
    (m_steps, m_tables), (r_steps, r_tables) = model[:2], real
    groups = script.get("conformance", {}).get("interchangeable", [])
    in_group = {i: g for g in groups for i in g}
    for i in range(1, len(m_steps) + 1):
        if i in in_group:
            g = in_group[i]
            m = sorted(m_steps[j - 1] for j in g)
            r = sorted(r_steps[j - 1] for j in g)
            if m != r:
                return f"diverge at step {i}: model {' | '.join(m)}, server {' | '.join(r)} (steps {g} in any order)"
            continue
        if m_steps[i - 1] != r_steps[i - 1]:
            return f"diverge at step {i}: model {m_steps[i - 1]}, server {r_steps[i - 1]}"
    for name in sorted(set(m_tables) | set(r_tables)):
        m, r = str(m_tables.get(name)), str(r_tables.get(name))
        if m != r:
            return f"diverge at step end ({name}): model {m}, server {r}"
    return "agree"


def race_verdict(script, model_runs, real_runs):
    """A race script's verdict: "agree" when each outcome the server gave is one some model run gave
    (compared as one run is: interchangeable steps as a multiset), with both sides' tallies; else the
    first server outcome no model run gave, against the model's commonest."""
    for real in real_runs:
        if not any(compare(script, model, real) == "agree" for model in model_runs):
            commonest = max(model_runs, key=lambda m: sum(compare(script, m, other) == "agree" for other in model_runs))
            return compare(script, commonest, real) + " (an outcome none of the model's runs gave)"
    def kinds(runs):
        classes = []
        for run in runs:
            for c in classes:
                if compare(script, c[0], run) == "agree":
                    c.append(run)
                    break
            else:
                classes.append([run])
        return len(classes)
    server, model = kinds(real_runs), kinds(model_runs)
    return (f"agree (a race, {len(real_runs)} runs a side: the server gave {server} outcome"
            f"{'s' if server != 1 else ''}, each one of the model's {model})")


def tally(outcomes):
    """How often each outcome (its steps' and tables' text) came, most frequent first."""
    counts = {}
    for steps, tables in outcomes:
        key = (tuple(steps), tuple(sorted((k, str(v)) for k, v in tables.items())))
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def print_rates(script, runs, model_runs, real_runs):
    """--repeat: each outcome either side had, with how many of the runs had it on each side, told by
    the steps and tables in which the outcomes differ."""
    seen = {}
    for side, outcomes in (("model", model_runs), ("server", real_runs)):
        for key, n in tally(outcomes):
            seen.setdefault(key, {"model": 0, "server": 0})[side] = n
    keys = sorted(seen, key=lambda k: -(seen[k]["server"] + seen[k]["model"]))
    steps_vary = [i for i in range(len(script["steps"])) if len({k[0][i] for k in keys if i < len(k[0])}) > 1]
    tables_vary = [t for t in sorted({name for k in keys for name, _ in k[1]}) if len({dict(k[1]).get(t) for k in keys}) > 1]
    sides = [(side, len(outcomes)) for side, outcomes in (("model", model_runs), ("server", real_runs)) if outcomes]
    print(f"{script['name']}: {runs} runs on " + (
        "each side" if len(sides) == 2 else f"the {sides[0][0]} (the other side was skipped)" if sides else "neither side"))
    for n, key in enumerate(keys, 1):
        print(f"  outcome {n}: " + ", ".join(f"{side} {seen[key][side]} of {total}" for side, total in sides))
        for i in steps_vary:
            step = script["steps"][i]
            print(f"    step {i + 1} {step.get('session', '-')}: {key[0][i]}")
        for t in tables_vary:
            print(f"    table {t}: {dict(key[1]).get(t)}")
    sys.stdout.flush()


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        print(f"conformance: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def by_engine(figures):
    """ (MariaDB 3 of 4, PostgreSQL 2 of 2): each engine the run had scripts of."""
    return " (" + ", ".join(f"{ENGINES[k]} {v}" for k, v in figures.items()) + ")" if figures else ""


def judge(name, verdict, explained):
    """A script's line in the report, and what it counts as: "agree"; "stale" (it agrees, yet the list
    of explained divergences has it without "sometimes": the list must say what is true); "explained"
    (it diverges as the list says); "unexplained". The coordination services' suite judges the same way."""
    if verdict.startswith("agree"):  # "agree", or a race's "agree (...)"
        if name in explained and not explained[name].startswith("sometimes"):
            return verdict + " (listed in docs/conformance.md as diverging: take it off the list)", "stale"
        return verdict, "agree"
    if name in explained:
        return verdict + " (explained in docs/conformance.md)", "explained"
    return verdict + " (unexplained)", "unexplained"


class Verdicts:
    """The scripts judged so far: how many agree (each kind's too), how many diverge unexplained, and
    whether the list of explained divergences has gone stale. The coordination services' suite keeps
    one too."""

    def __init__(self, kinds, explained):
        self.explained = explained
        self.agree_of = dict.fromkeys(kinds, 0)
        self.agree = self.compared = self.unexplained = 0
        self.stale = False

    def add(self, name, kind, verdict):
        """Judges one script's verdict (judge), counts it and prints its line."""
        text, outcome = judge(name, verdict, self.explained)
        self.compared += 1
        if outcome in ("agree", "stale"):
            self.agree += 1
            self.agree_of[kind] += 1
        self.stale = self.stale or outcome == "stale"
        self.unexplained += outcome == "unexplained"
        print(f"{name}: {text}", flush=True)


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
    versions = choose_interpreter(needed) if needed else {}
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
