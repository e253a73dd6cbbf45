"""The real side of an SQL script, MariaDB's or PostgreSQL's: a fresh database with the script's tables
and rows; each session a connection on a thread of its own; each step issued in the model's order
(follow_model), once the one before it has finished or the server shows it waiting for a lock
(LockWaits, PgLockWaits); every step's outcome as sql_outcome writes it, and the tables' rows at the
end."""

import json
import os
import queue
import re
import subprocess
import threading
import time

from inputs import BadInput
from outcomes import BIG_TABLE, big_table_text, is_alter, is_select, is_write, sql_outcome, table_text, unordered
from servers import SCRIPT_LIMIT_S, STEP_LIMIT_S


# ---------------------------------------------------------------------------------------------
# The script's database: its tables and rows, made on the server and read back


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


# ---------------------------------------------------------------------------------------------
# Sessions, and the server's view of their lock waits


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


# ---------------------------------------------------------------------------------------------
# The steps: issued in the model's order, each session's statements on its own thread


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


# ---------------------------------------------------------------------------------------------
# A script on MariaDB and on PostgreSQL


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
