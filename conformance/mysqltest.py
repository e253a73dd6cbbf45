#!/usr/bin/env python3
"""MariaDB's own InnoDB locking tests as conformance scripts: reads parts of the mysqltest files
of mysql-test/suite/innodb/t/ (MariaDB 10.11, as Debian's `mariadb-test` package installs them
under /usr/share/mysql/mysql-test) and writes each part chosen in PARTS below as
conformance/sql-scripts/mtr-<test>-<part>.json, a script of the sessions workload whose truth
is the real server (conformance.py runs it on the model and on MariaDB 10.11).

usage: mysqltest.py [--tests DIR] [--out DIR]      write the scripts
       mysqltest.py --check [--tests DIR]          exit 1 when a committed mtr-*.json is not
                                                   what the tests make (or one is left over),
                                                   77 (skipped) when the installed tests are
                                                   of another version than SOURCES

The subset of the mysqltest language these parts use (docs/conformance.md, "MariaDB's InnoDB
tests"):

- `connect (name, ...)` / `--connect(name, ...)`: a session of that name; `connection name` /
  `--connection name`: the statements that follow run on it (the test starts on `default`);
  `disconnect name`: a `disconnect` step.
- `send STMT;` / `--send STMT` / `--send` before a statement: the statement is issued and
  left to wait; the suite issues the next step once it waits for a lock, as mysqltest does, so
  `reap` adds no step (the session's next step runs once the sent one has ended).
- `--error CODE`: the next statement's expected error, written into the script's `expect`
  (`steps.N.error`) where it names one error, so that `locksim run` checks the model against the
  test too; a list (`--error 0,ER_LOCK_DEADLOCK`) expects no one outcome and is left out.
- `let $wait_condition= ...;` and `--source include/wait_condition.inc`: the test waiting until
  a sent statement waits for its lock, which the suite does by itself; `--echo`, comments,
  `--source include/have_*.inc`, `count_sessions`, `--disable_*`, `--enable_*`: nothing.
- `CREATE TABLE`: into `database.tables`, as written; `DROP TABLE`: the end of the part,
  nothing; `SET DEBUG_SYNC = ...`: left out (each marks a point inside a statement at which the
  test holds it; the suite's steps run one after the other, in the order those points force).
- Every other statement is a step as written, but for one change: an `INSERT INTO t VALUES
  (...)` without a column list gets its table's columns in CREATE TABLE's order (`INSERT INTO
  t (a, b) VALUES (...)`, which MariaDB answers alike): the model takes an INSERT with its
  columns named only.

Anything else in a chosen part (`if`, `while`, `eval`, `SET GLOBAL`, a `--source` of
something else) is refused: the part is chosen wrongly. The parts' lines are of the test
files of Debian's mariadb-test 10.11.19 (their SHA-256 in SOURCES); another version's files
are refused rather than read at lines that may have moved.
"""

import argparse
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
TESTS = "/usr/share/mysql/mysql-test/suite/innodb/t"   # Debian's mariadb-test
OUT = os.path.join(HERE, "sql-scripts")
VERSION = "MariaDB 10.11.19 (Debian's mariadb-test 1:10.11.19-0+deb12u1)"

# The files read, each with the SHA-256 of the version the parts' lines are of.
SOURCES = {
    "skip_locked_nowait.test": "40c809f5013f1fc38778f876707f7fc8672248063d5a49fc98f5f439cfed1ffa",
    "innodb_lock_wait_timeout_1.test": "b4a4db09e5874a940e0079f3d5c03fd96eaa5868c8decd56430a1761082b9a91",
    "innodb-lock.test": "af1b54099f60f44bce434c345d7c06082107f28044f53f6e5642eef7c284a63b",
    "deadlock_detect.test": "b0d717794e487e1778365a23397117fffb4101a46c7944b7d9fdecb1ce335cdb",
    "deadlock_on_lock_upgrade.test": "2ef39994344f767009f89fc0bbf1c2afa3fdb44182bf7ea44998b34036b2a00d",
    "trx_deadlock.test": "241a40dcd44ccd884ee7357032edb4d84e3e860b3013a3796e83ecd32c84141d",
    "implicit_gap_lock_convertion.test": "05ee6206eaf687044810a92168a30d5b2876ac36f94141f8595884ca11951cf6",
    "innodb-timeout.test": "2ca315bf291b6dcfdde144dc74bbe472e44289ce15d67d1f9cfd8b9f5b9e4514",
    "innodb_mysql_rbk.test": "3475beabac03a2ad8f48c07e2bcf71af4ec4f9d6c742e67d187151aede7d185c",
    "insert_into_empty.test": "c1d04bf5716a64ab016e6e9e53e70ef48a27305e6fbbeb550a884f2a108a92fb",
}

# Options that a test's .opt file gives the server, as the scripts' database takes them.
OPTS = {
    "innodb_lock_wait_timeout_1.test": {"lock_wait_timeout_ms": 1000},  # -master.opt: --innodb_lock_wait_timeout=1
    "innodb_mysql_rbk.test": {"lock_wait_timeout_ms": 1000},           # -master.opt: --innodb_lock_wait_timeout=1
}

# (test, part, [(first line, last line), ...], what it shows, conformance options)
PARTS = [
    # skip_locked_nowait.test, case 1: a primary key; `default` holds shared locks on two rows
    ("skip_locked_nowait.test", "case1-share-then-skip-locked", [(7, 30)],
     "a second LOCK IN SHARE MODE of the first two free rows shares their locks; with SKIP LOCKED too", None),
    ("skip_locked_nowait.test", "case1-for-update-waits", [(7, 26), (32, 33)],
     "FOR UPDATE of the rows another session holds shared waits, and times out after its 1 s", None),
    ("skip_locked_nowait.test", "case1-for-update-nowait", [(7, 26), (35, 37)],
     "FOR UPDATE NOWAIT of rows held shared: 1205 at once; SKIP LOCKED gives the next two rows", None),
    ("skip_locked_nowait.test", "case1-range-nowait", [(7, 26), (39, 41)],
     "a primary-key range FOR UPDATE NOWAIT meets the shared rows: 1205; SKIP LOCKED passes them", None),
    ("skip_locked_nowait.test", "case1-upgrade-share-waits", [(7, 23), (45, 50)],
     "the holder's own FOR UPDATE upgrades its shared locks; another's LOCK IN SHARE MODE then waits and times out", None),
    ("skip_locked_nowait.test", "case1-upgrade-share-nowait", [(7, 23), (45, 48), (52, 54)],
     "LOCK IN SHARE MODE NOWAIT of rows held exclusive: 1205 at once; SKIP LOCKED gives the next two rows", None),
    ("skip_locked_nowait.test", "case1-upgrade-for-update-nowait", [(7, 23), (45, 48), (59, 61)],
     "FOR UPDATE NOWAIT of rows held exclusive: 1205 at once; SKIP LOCKED gives the next two rows", None),
    ("skip_locked_nowait.test", "case1-upgrade-range", [(7, 23), (45, 48), (63, 67)],
     "a range FOR UPDATE NOWAIT of rows held exclusive: 1205; SKIP LOCKED passes them", None),
    # case 2: a secondary index
    ("skip_locked_nowait.test", "case2a-secondary-nowait", [(7, 11), (74, 94)],
     "one row locked through a secondary index: the same search NOWAIT is 1205, SKIP LOCKED finds the next entry's row", None),
    ("skip_locked_nowait.test", "case2a-secondary-range", [(7, 11), (74, 91), (96, 98)],
     "a range of the secondary index NOWAIT meets the locked row: 1205; SKIP LOCKED passes it", None),
    ("skip_locked_nowait.test", "case2a-scan", [(7, 11), (74, 91), (100, 107)],
     "a scan FOR UPDATE NOWAIT meets the row locked through the secondary index: 1205; SKIP LOCKED passes it", None),
    ("skip_locked_nowait.test", "case2b-primary-blocks-secondary", [(7, 11), (74, 83), (109, 117)],
     "a row locked by its primary key: a search of the secondary index NOWAIT is 1205, SKIP LOCKED passes it", None),
    ("skip_locked_nowait.test", "case2b-scan", [(7, 11), (74, 83), (109, 114), (119, 126)],
     "a row locked by its primary key: a scan NOWAIT is 1205, SKIP LOCKED passes it", None),
    # innodb_lock_wait_timeout_1.test (its -master.opt: innodb_lock_wait_timeout=1)
    ("innodb_lock_wait_timeout_1.test", "bug40113-for-update", [(8, 28)],
     "FOR UPDATE of a row another transaction holds: 1205 after the 1 s timeout", None),
    ("innodb_lock_wait_timeout_1.test", "bug37183-update-waits", [(74, 76), (79, 89), (96, 97)],
     "two transactions update a row each; the first's UPDATE of the other's row times out (1205) and leaves its own", None),
    # innodb-lock.test
    ("innodb-lock.test", "bug12842206-insert-ignore", [(140, 153), (155, 161), (164, 168)],
     "two INSERT IGNOREs of an existing key take shared locks only; a FOR UPDATE scan then waits for the other, and goes on at its COMMIT", None),
    # deadlock_detect.test
    ("deadlock_detect.test", "deadlock", [(14, 19), (26, 26), (31, 47), (56, 61), (63, 64), (74, 74), (81, 82), (95, 95)],
     "three transactions hold shared locks; FOR UPDATE of row 1 waits for `default`, whose FOR UPDATE of row 2 closes a cycle: one of the two is the deadlock's victim", None),
    # deadlock_on_lock_upgrade.test
    ("deadlock_on_lock_upgrade.test", "scenario1-three-deletes", [(44, 58), (61, 95)],
     "three sessions delete one row by a unique key (autocommit): the first deletes it, the others find nothing", None),
    ("deadlock_on_lock_upgrade.test", "scenario2-upgrade-no-deadlock", [(107, 138)],
     "the holder of two row locks, with a waiter queued on the first, locks the whole table FOR UPDATE without a deadlock; the waiter goes on at its COMMIT", None),
    # trx_deadlock.test
    ("trx_deadlock.test", "mdev36959", [(9, 42), (44, 45), (47, 49)],
     "two transactions lock a row each and then the other's: the second is the deadlock's victim, its whole transaction rolled back; its updates then run in a new one", None),
    # implicit_gap_lock_convertion.test
    ("implicit_gap_lock_convertion.test", "serializable", [(4, 19)],
     "a SERIALIZABLE transaction inserts 20 and reads the range 10-30: an insert of 15 into that range waits and times out", None),
    # innodb-timeout.test
    ("innodb-timeout.test", "commit-wakes", [(8, 9), (11, 11), (13, 13), (16, 16), (21, 21), (32, 32), (35, 41), (62, 62), (74, 77)],
     "FOR UPDATE of a table whose rows another transaction inserted waits (timeout 10 s) and reads them at its COMMIT", None),
    ("innodb-timeout.test", "timeout", [(8, 9), (11, 11), (13, 13), (16, 16), (21, 21), (32, 32), (35, 37), (39, 41), (62, 62), (74, 89), (91, 91), (103, 109), (112, 113)],
     "then a FOR UPDATE of the table while a fourth row is inserted: 1205 after the session's 3 s", None),
    # innodb_mysql_rbk.test (its -master.opt: innodb_lock_wait_timeout=1; innodb_rollback_on_timeout=1 the suite's server does not take)
    ("innodb_mysql_rbk.test", "bug41453-update-range", [(12, 25)],
     "a row locked by a LIMIT 1 scan; an UPDATE of a range ORDER BY the key times out on it (1205)", None),
    ("innodb_mysql_rbk.test", "bug41453-update-range-2", [(12, 18), (27, 38)],
     "the same twice: the second UPDATE times out (1205) and its transaction reads no row changed", None),
    # skip_locked_nowait.test: each SKIP LOCKED alone, and the two cases whole
    ("skip_locked_nowait.test", "case1-skip-locked", [(7, 26), (37, 37)],
     "FOR UPDATE SKIP LOCKED of the first two free rows, two held shared: the next two", None),
    ("skip_locked_nowait.test", "case1-range-skip-locked", [(7, 26), (41, 41)],
     "a primary-key range FOR UPDATE SKIP LOCKED passes the two rows held shared", None),
    ("skip_locked_nowait.test", "case1-upgrade-for-update-waits", [(7, 23), (45, 48), (56, 57)],
     "FOR UPDATE of rows held exclusive waits and times out after its 1 s", None),
    ("skip_locked_nowait.test", "case1-upgrade-share-skip-locked", [(7, 23), (45, 48), (54, 54)],
     "LOCK IN SHARE MODE SKIP LOCKED of rows held exclusive: the next two", None),
    ("skip_locked_nowait.test", "case1-upgrade-range-skip-locked", [(7, 23), (45, 48), (65, 65)],
     "a range FOR UPDATE SKIP LOCKED of rows held exclusive: the next two", None),
    ("skip_locked_nowait.test", "case1", [(7, 72)],
     "case 1 whole: shared then exclusive locks against NOWAIT, SKIP LOCKED and waits that time out", None),
    ("skip_locked_nowait.test", "case2a-secondary-skip-locked", [(7, 11), (74, 91), (94, 94)],
     "one row locked through a secondary index: the same search SKIP LOCKED finds the next entry's row", None),
    ("skip_locked_nowait.test", "case2a-secondary-range-skip-locked", [(7, 11), (74, 91), (98, 98)],
     "a range of the secondary index SKIP LOCKED passes the row locked through it", None),
    ("skip_locked_nowait.test", "case2a-scan-skip-locked", [(7, 11), (74, 91), (102, 102)],
     "a scan FOR UPDATE SKIP LOCKED passes the row locked through the secondary index", None),
    ("skip_locked_nowait.test", "case2b-secondary-skip-locked", [(7, 11), (74, 83), (109, 114), (117, 117)],
     "a row locked by its primary key: a search of the secondary index SKIP LOCKED passes it", None),
    ("skip_locked_nowait.test", "case2b-scan-skip-locked", [(7, 11), (74, 83), (109, 114), (121, 121)],
     "a row locked by its primary key: a scan SKIP LOCKED passes it", None),
    ("skip_locked_nowait.test", "case2", [(7, 11), (74, 128)],
     "case 2 whole: locks through a secondary index and through the primary key against NOWAIT and SKIP LOCKED", None),
    # trx_deadlock.test, the deadlock alone
    ("trx_deadlock.test", "mdev36959-deadlock", [(9, 40)],
     "two transactions lock a row each and then the other's: the second is the deadlock's victim and the first goes on", None),
    # insert_into_empty.test (the session's foreign_key_checks is the server's default, 1)
    ("insert_into_empty.test", "duplicate-in-transaction", [(100, 106)],
     "an INSERT of three rows into an empty table, then one that meets a duplicate (1062): the statement is rolled back, the first kept", None),
    ("insert_into_empty.test", "mdev25315-duplicates", [(124, 133), (137, 137)],
     "duplicates in one transaction over two tables: each 1062 rolls back its statement; the COMMIT keeps the rest", None),
    ("insert_into_empty.test", "mdev29545-replace", [(266, 282)],
     "a REPLACE of one key twice in one statement, after another transaction's insert has committed", None),
]

ERRORS = {"ER_LOCK_WAIT_TIMEOUT": 1205, "ER_LOCK_DEADLOCK": 1213, "ER_DUP_ENTRY": 1062}
SKIPPED_SOURCES = re.compile(r"include/(have_\w+|count_sessions|wait_until_count_sessions|wait_condition)\.inc$")


class BadPart(Exception):
    pass


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def commands(lines, ranges):
    """The part's commands in order, each (line number, text): a `--` command is its line, any other
    one runs to the `;` that ends a line (a statement or command over several lines keeps them)."""
    out, pending, start = [], [], None
    for first, last in ranges:
        for n in range(first, last + 1):
            raw = lines[n - 1].rstrip("\n")
            s = raw.strip()
            if not pending:
                if not s or s.startswith("#"):
                    continue
                if s.startswith("--"):
                    out.append((n, s[2:].strip()))
                    continue
                start = n
            pending.append(raw if pending else s)
            if s.endswith(";"):
                text = "\n".join(pending).rstrip()
                out.append((start, text[:-1].rstrip()))
                pending = []
        if pending:
            raise BadPart(f"lines {first}-{last} end inside the statement of line {start}")
    return out


def columns_of(create):
    """A CREATE TABLE's name and its columns in order."""
    m = re.match(r"\s*CREATE\s+TABLE\s+`?(\w+)`?\s*\((.*)\)[^)]*$", create, re.I | re.S)
    if not m:
        raise BadPart(f"cannot read the table of {create!r}")
    body, cols, depth, cur = m.group(2), [], 0, ""
    for ch in body + ",":
        if ch == "," and depth == 0:
            word = re.match(r"\s*`?(\w+)`?", cur)
            if word and word.group(1).upper() not in ("PRIMARY", "UNIQUE", "KEY", "INDEX", "CONSTRAINT", "FOREIGN", "SPATIAL"):
                cols.append(word.group(1))
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    return m.group(1).lower(), cols


def with_columns(sql, tables):
    """An INSERT without a column list, given its table's columns; any other statement as it is."""
    m = re.match(r"(\s*(?:INSERT|REPLACE)(?:\s+IGNORE)?(?:\s+INTO)?\s+`?(\w+)`?)(\s*)(VALUES?\s*\(.*)$", sql, re.I | re.S)
    if not m:
        return sql
    table = m.group(2).lower()
    if table not in tables:
        raise BadPart(f"INSERT into {table}, a table the part does not create")
    return f"{m.group(1)} ({', '.join(tables[table])}){m.group(3) or ' '}{m.group(4)}"


def convert(test, part, ranges, note, conformance, tests_dir=TESTS):
    path = os.path.join(tests_dir, test)
    with open(path) as f:
        lines = f.readlines()
    tables, creates, steps, expect = {}, [], [], {}
    session, send_next, error_next = "default", False, None

    def fail(n, what):
        raise BadPart(f"{test}:{n}: {what} (mysqltest.py: {part})")

    for n, text in commands(lines, ranges):
        word = text.split(None, 1)[0].lower() if text else ""
        word = re.match(r"[a-z_]*", word).group(0)
        rest = text[len(word):].strip()
        if word in ("connect",):
            name = re.match(r"\(?\s*(\w+)", rest)
            if not name:
                fail(n, f"cannot read {text!r}")
            session = name.group(1)
        elif word == "connection":
            session = rest.strip()
        elif word == "disconnect":
            steps.append({"session": rest.strip(), "disconnect": True})
        elif word == "send":
            if rest:
                steps.append({"session": session, "sql": with_columns(rest, tables)})
            else:
                send_next = True
        elif word == "reap":
            if error_next is not None:
                # The expected error of a sent statement: that session's last step.
                mine = [i for i, st in enumerate(steps) if st.get("session") == session and "sql" in st]
                if error_next and mine:
                    expect[f"steps.{mine[-1]}.error"] = f"= {error_next}"
                error_next = None
        elif word == "error":
            codes = [c.strip() for c in rest.split(",")]
            one = [ERRORS.get(c, int(c) if c.isdigit() else None) for c in codes]
            if None in one:
                fail(n, f"an error the converter does not know: {rest!r}")
            error_next = one[0] if len(one) == 1 else 0
        elif word in ("echo", "disable_query_log", "enable_query_log", "disable_result_log", "enable_result_log",
                      "disable_warnings", "enable_warnings", "vertical_results", "horizontal_results",
                      "disable_info", "enable_info"):
            pass
        elif word == "source":
            if not SKIPPED_SOURCES.search(rest):
                fail(n, f"a source the converter does not take: {rest!r}")
        elif word == "let":
            if not rest.startswith("$wait_condition"):
                fail(n, f"a let the converter does not take: {rest!r}")
        elif word in ("if", "while", "eval", "inc", "dec", "sleep", "real_sleep", "call", "}"):
            fail(n, f"{word!r} is outside the subset")
        else:  # SQL
            upper = text.upper()
            if re.match(r"CREATE\s+TABLE", upper):
                name, cols = columns_of(text)
                tables[name] = cols
                creates.append(text)
            elif re.match(r"DROP\s+TABLE", upper):
                pass
            elif re.match(r"SET\s+DEBUG_SYNC", upper):
                pass
            elif re.match(r"SET\s+(GLOBAL|@@GLOBAL)", upper) or "INFORMATION_SCHEMA" in upper:
                fail(n, f"outside the sessions workload: {text!r}")
            else:
                steps.append({"session": session, "sql": with_columns(text, tables)})
                if error_next:
                    expect[f"steps.{len(steps) - 1}.error"] = f"= {error_next}"
                error_next = None
                send_next = False
                continue
        if send_next and word not in ("send",):
            send_next = False
    where = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in ranges)
    name = f"mtr-{test[:-len('.test')].replace('_', '-')}-{part}"
    doc = {
        "name": name,
        "description": f"MariaDB's mysql-test/suite/innodb/t/{test}, lines {where} ({VERSION}): {note}",
        "workload": "sessions",
        "database": {"tables": creates, **OPTS.get(test, {})},
        "steps": steps,
        "trials": 1,
    }
    if expect:
        doc["expect"] = expect
    if conformance:
        doc["conformance"] = conformance
    return doc


def render(doc):
    return json.dumps(doc, indent=2) + "\n"


class OtherVersion(Exception):
    """The installed tests are not of the version the parts' lines are of."""


SKIPPED = 77  # --check's exit status when the installed tests are of another version


def check_sources(tests_dir):
    for test, digest in SOURCES.items():
        path = os.path.join(tests_dir, test)
        if not os.path.exists(path):
            raise BadPart(f"{path}: missing (Debian's mariadb-test package installs it: scripts/setup)")
        if digest and sha256(path) != digest:
            raise OtherVersion(f"{path}: not the {VERSION} file the parts' lines are of (SHA-256 {sha256(path)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", default=TESTS)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    try:
        check_sources(a.tests)
    except OtherVersion as e:
        # Debian updates its MariaDB within 10.11: the scripts stay those of the version their
        # lines were read from, and the check, which needs those files, is skipped (CTest's
        # SKIP_RETURN_CODE), not failed; writing them refuses.
        print(f"mysqltest.py: {e}" + (": the check is skipped" if a.check else ""), file=sys.stderr)
        return SKIPPED if a.check else 2
    except (BadPart, OSError) as e:
        print(f"mysqltest.py: {e}", file=sys.stderr)
        return 2
    try:
        made = {}
        for test, part, ranges, note, conformance in PARTS:
            doc = convert(test, part, ranges, note, conformance, a.tests)
            if doc["name"] in made:
                raise BadPart(f"{doc['name']}: two parts of one name")
            made[doc["name"]] = render(doc)
    except (BadPart, OSError) as e:
        print(f"mysqltest.py: {e}", file=sys.stderr)
        return 2
    if not a.check:
        os.makedirs(a.out, exist_ok=True)
        for name, text in made.items():
            with open(os.path.join(a.out, name + ".json"), "w") as f:
                f.write(text)
        print(f"mysqltest.py: {len(made)} scripts in {a.out}")
        return 0
    bad = []
    for name, text in made.items():
        path = os.path.join(a.out, name + ".json")
        try:
            with open(path) as f:
                if f.read() != text:
                    bad.append(f"{path}: not what mysqltest.py makes of its test (run conformance/mysqltest.py)")
        except OSError:
            bad.append(f"{path}: missing (run conformance/mysqltest.py)")
    for f in sorted(os.listdir(a.out)):
        if f.startswith("mtr-") and f.endswith(".json") and f[:-5] not in made:
            bad.append(f"{os.path.join(a.out, f)}: made by no part of mysqltest.py's PARTS")
    for line in bad:
        print(line, file=sys.stderr)
    print(f"mysqltest.py: {len(made) - len([b for b in bad if 'made by no part' not in b])} of {len(made)} "
          f"scripts are what the tests make" + (f", {len(bad)} problems" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
