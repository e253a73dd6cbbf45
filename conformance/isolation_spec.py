#!/usr/bin/env python3
"""Makes conformance scripts of PostgreSQL's own isolation specs (src/test/isolation/specs/*.spec of
a PostgreSQL source tree): each permutation of a chosen spec (CHOSEN) becomes a script of the
sessions workload, conformance/pg-scripts/pgiso-<spec>-<n>.json (n counts the spec's permutations
from 1), which the suite runs on the model and on the real PostgreSQL as it runs every script of
pg-scripts/. The scripts are committed; the specs are not (they are PostgreSQL's test code), so
this is run only to regenerate the scripts or to check them against a source tree.

usage: isolation_spec.py --specs DIR [--out DIR] [--check]

  --specs DIR   PostgreSQL's src/test/isolation/specs (or the source tree's top folder)
  --out DIR     where the scripts go; conformance/pg-scripts beside this file by default. A
                pgiso-*.json there that no chosen spec makes any more is removed.
  --check       writes nothing: compares the scripts the specs make with those in --out and
                prints each difference; exit 1 on a difference, 2 on bad input (a folder or spec
                missing, a spec this reader cannot read), 0 when they agree

A spec is read as isolationtester reads it (src/test/isolation/README, specparse.y):

  setup { SQL }                  any number, run in order before the sessions connect
  teardown { SQL }               ignored here: each script gets a fresh database
  session NAME
    setup { SQL }                run on that session before the permutation's first step
    step NAME { SQL }            ...
    teardown { SQL }             run on that session after the permutation's last step
  permutation NAME NAME ...      the steps in order; a NAME(...) carries a blocking marker

Names are identifiers or double-quoted strings; `#` starts a comment outside braces. A spec with no
permutation runs every interleaving of its sessions' steps, each session's in order, as
isolationtester generates them (the first session's next step first); one with more than
MAX_INTERLEAVINGS of them is left out.

The script: the spec's setup CREATE TABLEs go into database.tables as written and its INSERT ...
VALUES rows into database.rows (by the CREATE TABLE's columns where the INSERT names none;
DROP TABLE IF EXISTS does nothing in a fresh database); each session's setup, then each step of the
permutation, then each session's teardown, one step of that session per statement (a step's SQL
with several statements, `SELECT ...; SAVEPOINT foo;`, is several steps, issued one after the
other on its session as the server runs them). The suite's harness issues a step once the one
before it has finished or the server shows it waiting for a lock, as isolationtester does, so
the spec's order is the scripts' order. Its description names the spec file, the PostgreSQL
commit it was read from (CHOSEN) and the permutation as isolationtester's output writes it
(`starting permutation: s1a s2a ...`); CONFORMANCE gives a script its `conformance` key where one
is needed.

A permutation is left out, with its reason (docs/conformance.md, "PostgreSQL's isolation specs",
lists each), when its SQL has what the model does not run (see `refusal`) or when LEFT_OUT names
it: by the real server's behaviour (an outcome that varies from run to run) or by the model's.
NOT_CHOSEN lists the specs not read at all, with why.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPECS_UNDER = os.path.join("src", "test", "isolation", "specs")
PREFIX = "pgiso-"

# The specs read, each with the postgres/postgres commit whose text of it made the committed
# scripts (the file as it stands there; the truth of every permutation is the real PostgreSQL 15
# the suite starts, never PostgreSQL's expected output). A spec re-read from another commit has its
# commit updated here, and its scripts regenerated and run on the server before they are committed.
CHOSEN = {
    "insert-conflict-do-nothing": "989d23b04beac0c26f44c379b04ac781eaa4265e",
    "insert-conflict-do-nothing-2": "5cb74a8035c7d18e322188dd74414075bc9231ce",
    "nowait": "a443c1b2d6a646cf90a8afc193c07ed12a2bf045",
    "nowait-2": "94d8d8d89fe8e2fc4109a6c379cfdbd5025f4da7",
    "nowait-3": "9ee16b49f0aac819bd4823d9b94485ef608b34e8",
    "skip-locked": "ad9827a90d9001e841dfb8b948f33917331d4a5b",
    "skip-locked-2": "a443c1b2d6a646cf90a8afc193c07ed12a2bf045",
    "skip-locked-3": "a443c1b2d6a646cf90a8afc193c07ed12a2bf045",
    "tuplelock-conflict": "5179a1ab773c9305192b0261fbb1f9e223d94a3d",
}

# Specs of the same ground not read, as none of their permutations would run on the model; each
# with its reason (docs/conformance.md lists them too, and a test checks that it does).
NOT_CHOSEN = {
    "deadlock-simple": "LOCK TABLE, and tables without columns",
    "deadlock-hard": "LOCK TABLE, and tables without columns",
    "deadlock-soft": "LOCK TABLE, and tables without columns",
    "classroom-scheduling": "a primary key on two columns, timestamp with time zone, INSERT without a column list",
    "partial-index": "a table without a primary key, filled by generate_series()",
    "read-write-unique": "INSERT without a column list in every permutation",
    "read-write-unique-2": "INSERT without a column list in every permutation",
    "read-write-unique-3": "a SQL function (CREATE FUNCTION)",
    "update-conflict-out": "INSERT ... SELECT without a column list",
    "insert-conflict-do-update": "|| in every upsert",
    "insert-conflict-do-update-2": "a unique index on an expression (lower(key)), ||",
    "insert-conflict-do-update-3": "WITH, boolean columns",
    "lock-update-delete": "pg_advisory_lock() inside a WHERE, which decides when the locking read takes its snapshot",
    "lock-committed-update": "pg_advisory_lock() inside a WHERE, which decides when the locking read takes its snapshot",
    "lock-committed-keyupdate": "pg_advisory_lock() inside a WHERE; an UPDATE of the key",
    "nowait-4": "pg_advisory_lock() inside a WHERE, which decides when the locking read takes its snapshot",
    "skip-locked-4": "pg_advisory_lock() inside a WHERE, which decides when the locking read takes its snapshot",
    "nowait-5": "PREPARE and EXECUTE, generate_series(), system columns",
    "tuplelock-update": "SERIAL with DEFAULT, a function in a WHERE, step markers",
    "eval-plan-qual": "numeric and generated columns, functions, inheritance, partitions, joins and writable CTEs in its one setup",
}

# A script's `conformance` key, by script name (pgiso-<spec>-<n>), where one is needed
# (conformance.py: interchangeable, ignore_ids, repeat). None is, so far.
CONFORMANCE = {}

MAX_INTERLEAVINGS = 24  # a spec without permutations: at most this many interleavings run

# Permutations left out by name (`<spec>` for all of a spec's, `<spec>-<n>` for one), each with its
# reason; docs/conformance.md lists them too (a test checks that it does).
LEFT_OUT = {}


class SpecError(Exception):
    """A spec this reader cannot read: bad input (exit 2)."""


class Spec:
    def __init__(self, name):
        self.name = name
        self.setup = []        # SQL blocks
        self.sessions = []     # [{"name", "setup": [sql], "steps": [(name, sql)], "teardown": [sql]}]
        self.permutations = []  # [[(step name, marker text or None), ...]]

    def step(self, name):
        for session in self.sessions:
            for step, sql in session["steps"]:
                if step == name:
                    return session, sql
        raise SpecError(f"{self.name}: a permutation names step {name!r}, which no session has")


TOKEN = re.compile(r"""
    (?P<space>\s+) | (?P<comment>\#[^\n]*) | (?P<sql>\{[^}]*\}) | (?P<quoted>"[^"]*")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*) | (?P<number>\d+) | (?P<punct>[(),*])
""", re.X)


def tokens(text, where):
    pos = 0
    out = []
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            line = text.count("\n", 0, pos) + 1
            raise SpecError(f"{where}:{line}: unexpected {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        if kind == "sql":
            out.append(("sql", m.group()[1:-1].strip()))
        elif kind == "quoted":
            out.append(("name", m.group()[1:-1]))
        elif kind == "ident":
            out.append(("name", m.group()))
        elif kind in ("number", "punct"):
            out.append((kind, m.group()))
        pos = m.end()
    return out


def parse(text, name):
    """A spec's text as a Spec."""
    spec = Spec(name)
    toks = tokens(text, name)
    i = 0

    def take(kind):
        nonlocal i
        if i >= len(toks) or toks[i][0] != kind:
            got = toks[i][1] if i < len(toks) else "the end"
            raise SpecError(f"{name}: expected {'an SQL block' if kind == 'sql' else kind} after "
                            f"{toks[i - 1][1] if i else 'the start'!r}, got {got!r}")
        i += 1
        return toks[i - 1][1]

    def at(word):
        return i < len(toks) and toks[i] == ("name", word)

    while i < len(toks):
        word = take("name")
        if word == "setup":
            spec.setup.append(take("sql"))
        elif word == "teardown":
            take("sql")
        elif word == "session":
            session = {"name": take("name"), "setup": [], "steps": [], "teardown": []}
            spec.sessions.append(session)
            while i < len(toks) and toks[i][0] == "name" and toks[i][1] in ("setup", "step", "teardown"):
                what = take("name")
                if what == "step":
                    step = take("name")
                    session["steps"].append((step, take("sql")))
                else:
                    session[what].append(take("sql"))
            if not session["steps"]:
                raise SpecError(f"{name}: session {session['name']!r} has no step")
        elif word == "permutation":
            perm = []
            while i < len(toks) and toks[i][0] == "name" and toks[i][1] not in ("permutation", "session",
                                                                             "setup", "teardown"):
                step = take("name")
                marker = None
                if i < len(toks) and toks[i] == ("punct", "("):
                    start = i
                    while i < len(toks) and toks[i] != ("punct", ")"):
                        i += 1
                    take("punct")
                    marker = " ".join(t[1] for t in toks[start + 1:i - 1])
                perm.append((step, marker))
            if not perm:
                raise SpecError(f"{name}: a permutation with no step")
            spec.permutations.append(perm)
        else:
            raise SpecError(f"{name}: expected setup, teardown, session or permutation, got {word!r}")
    if not spec.sessions:
        raise SpecError(f"{name}: no session")
    names = [s for session in spec.sessions for s, _ in session["steps"]]
    if len(names) != len(set(names)):
        raise SpecError(f"{name}: two steps of one name")
    for perm in spec.permutations:
        for step, _ in perm:
            spec.step(step)
    return spec


def interleavings(spec):
    """Every interleaving of the sessions' steps, in isolationtester's order
    (run_all_permutations_recurse: at each place the first session with a step left goes first)."""
    out = []
    piles = [0] * len(spec.sessions)
    current = []

    def recurse():
        found = False
        for k, session in enumerate(spec.sessions):
            if piles[k] < len(session["steps"]):
                current.append((session["steps"][piles[k]][0], None))
                piles[k] += 1
                recurse()
                piles[k] -= 1
                current.pop()
                found = True
        if not found:
            out.append(list(current))
    recurse()
    return out


def permutations(spec):
    """The spec's permutations, or its interleavings where it lists none (None: too many to run)."""
    if spec.permutations:
        return spec.permutations
    count = 1
    total = 0
    for session in spec.sessions:  # the multinomial: (n1 + n2 + ...)! / (n1! n2! ...)
        for _ in session["steps"]:
            total += 1
            count = count * total
        for k in range(1, len(session["steps"]) + 1):
            count //= k
    return None if count > MAX_INTERLEAVINGS else interleavings(spec)


def statements(sql):
    """One SQL block's statements, split at `;` outside quotes, each without its `;`."""
    out, cur, quote = [], [], None
    for ch in sql:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == ";":
            if "".join(cur).strip():
                out.append(" ".join("".join(cur).split()))
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append(" ".join("".join(cur).split()))
    return out


def split_top(text):
    """Splits at commas outside parentheses and quotes."""
    parts, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch == "'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


CONSTRAINT_WORDS = {"primary", "unique", "constraint", "check", "foreign", "exclude", "like"}


def table_columns(create):
    """(table, [column, ...], has a primary key) of a CREATE TABLE."""
    m = re.match(r"create\s+table\s+(\w+)\s*\((.*)\)\s*$", create, re.I | re.S)
    if not m:
        raise SpecError(f"not a CREATE TABLE this reader takes: {create!r}")
    cols = []
    for part in split_top(m.group(2)):
        word = part.split()[0].lower() if part.split() else ""
        if word and word not in CONSTRAINT_WORDS:
            cols.append(part.split()[0].strip('"').lower())
    return m.group(1).lower(), cols, re.search(r"\bprimary\s+key\b", m.group(2), re.I) is not None


def literal(text):
    """A value of a setup INSERT: an integer, a quoted string, NULL, TRUE or FALSE."""
    t = text.strip()
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    if len(t) >= 2 and t[0] == "'" and t[-1] == "'":
        return t[1:-1].replace("''", "'")
    if t.lower() == "null":
        return None
    raise ValueError(t)


def setup_rows(insert, tables):
    """(table, [row dict, ...]) of a setup's INSERT INTO t [(cols)] VALUES (...), ...; None when it is
    another form (INSERT ... SELECT, DEFAULT, expressions)."""
    m = re.match(r"insert\s+into\s+(\w+)\s*(\(([^)]*)\))?\s*values\s*(.*)$", insert, re.I | re.S)
    if not m or m.group(1).lower() not in tables:
        return None
    table = m.group(1).lower()
    cols = [c.strip().lower() for c in m.group(3).split(",")] if m.group(2) else tables[table]
    rows = []
    for group in split_top(m.group(4)):
        if not (group.startswith("(") and group.endswith(")")):
            return None
        try:
            values = [literal(v) for v in split_top(group[1:-1])]
        except ValueError:
            return None
        if len(values) > len(cols):
            return None
        rows.append(dict(zip(cols, values)))
    return table, rows


# What the model does not run (docs/sql.md, "PostgreSQL" and "Not supported"), looked for in a
# statement of a step or of a session's setup or teardown: (pattern, reason).
NOT_MODELLED = [
    (r"^\s*insert\s+into\s+\w+\s+(values|select)\b", "INSERT without a column list"),
    (r"^\s*insert\s+into\s+\w+\s*\([^)]*\)\s*select\b", "INSERT ... SELECT"),
    (r"\|\|", "the || operator"),
    (r"^\s*lock\s+table\b", "LOCK TABLE"),
    (r"^\s*(prepare|execute)\b", "PREPARE and EXECUTE"),
    (r"\bwith\b.*\bas\s*\(", "WITH queries"),
    (r"\bwhere\b.*\bpg_advisory\w*\s*\(", "a function in a WHERE"),
    (r"\bgenerate_series\s*\(", "generate_series()"),
    (r"\b(xmin|xmax|ctid)\b", "system columns"),
    (r"^\s*set\s+deadlock_timeout\b", None),  # modelled: none
]


def refusal(sql):
    """Why the model would refuse a statement, or None."""
    for pattern, reason in NOT_MODELLED:
        if reason and re.search(pattern, sql, re.I | re.S):
            return reason
    return None


def database(spec):
    """database.tables and database.rows of the spec's setup; raises SpecError with the reason when
    the setup has what the model or this reader does not take."""
    tables, creates, rows = {}, [], {}
    for block in spec.setup:
        for sql in statements(block):
            low = sql.lower()
            if re.match(r"drop\s+table\s+if\s+exists\b", low):
                continue
            if low.startswith("create table"):
                table, cols, keyed = table_columns(sql)
                if not keyed:
                    raise SpecError(f"table {table} has no primary key (the model's tables have one)")
                tables[table] = cols
                creates.append(sql)
                continue
            found = setup_rows(sql, tables) if low.startswith("insert") else None
            if found is None:
                raise SpecError(f"its setup runs {sql[:60]!r}, which is no CREATE TABLE or INSERT ... VALUES of literals")
            rows.setdefault(found[0], []).extend(found[1])
    if not creates:
        raise SpecError("its setup creates no table")
    out = {"engine": "postgresql", "isolation": "read_committed", "tables": creates}
    if rows:
        out["rows"] = rows
    return out


def script(spec, number, perm, db, source):
    """The conformance script of permutation `number` (from 1); `source` says where the spec was read."""
    steps = []
    for session in spec.sessions:
        for block in session["setup"]:
            steps += [{"session": session["name"], "sql": s} for s in statements(block)]
    for step, _ in perm:
        session, sql = spec.step(step)
        steps += [{"session": session["name"], "sql": s} for s in statements(sql)]
    for session in spec.sessions:
        for block in session["teardown"]:
            steps += [{"session": session["name"], "sql": s} for s in statements(block)]
    doc = {
        "name": f"{PREFIX}{spec.name}-{number}",
        "description": f"PostgreSQL's isolation spec {spec.name}.spec ({source}), permutation {number}, "
                       f"isolationtester's \"starting permutation: {' '.join(s for s, _ in perm)}\"; "
                       "what it must give is what the real server gives.",
        "workload": "sessions",
        "database": db,
        "steps": steps,
        "trials": 1,
    }
    if doc["name"] in CONFORMANCE:
        doc["conformance"] = CONFORMANCE[doc["name"]]
    return doc


def source_of(name):
    """Where a spec was read from, as its scripts' descriptions say it."""
    commit = CHOSEN.get(name)
    where = "src/test/isolation/specs/ of postgres/postgres"
    return f"{where} at commit {commit}" if commit else where


def convert(spec, source=None):
    """[(name, script or None, reason left out or None)] for each of the spec's permutations; a spec
    left out as a whole gives one entry, named as the spec."""
    source = source or source_of(spec.name)
    if spec.name in LEFT_OUT:
        return [(spec.name, None, LEFT_OUT[spec.name])]
    try:
        db = database(spec)
    except SpecError as e:
        return [(spec.name, None, str(e))]
    perms = permutations(spec)
    if perms is None:
        return [(spec.name, None, f"it lists no permutation and has more than {MAX_INTERLEAVINGS} interleavings")]
    out = []
    for n, perm in enumerate(perms, 1):
        name = f"{spec.name}-{n}"
        why = LEFT_OUT.get(name)
        if why is None and any(marker is not None for _, marker in perm):
            why = "a step marker (isolationtester's blocking annotation), which the harness does not keep"
        if why is None:
            doc = script(spec, n, perm, db, source)
            why = next((f"{r}: {s['sql'][:60]!r}" for s in doc["steps"] for r in [refusal(s["sql"])] if r), None)
            if why is None:
                out.append((name, doc, None))
                continue
        out.append((name, None, why))
    return out


def load_spec(path):
    with open(path) as f:
        return parse(f.read(), os.path.basename(path)[:-len(".spec")])


def specs_folder(folder):
    """The specs folder of `folder`: itself, or src/test/isolation/specs under a source tree."""
    under = os.path.join(folder, SPECS_UNDER)
    return under if os.path.isdir(under) else folder


def generate(folder, chosen=None):
    """({file name: text}, [(name, reason)]): the scripts the chosen specs of `folder` make, each as
    it is committed, and what is left out; raises SpecError or OSError on bad input."""
    folder = specs_folder(folder)
    if not os.path.isdir(folder):
        raise SpecError(f"{folder}: no such folder (PostgreSQL's {SPECS_UNDER})")
    files, left = {}, []
    for name in sorted(CHOSEN if chosen is None else chosen):
        path = os.path.join(folder, name + ".spec")
        if not os.path.isfile(path):
            raise SpecError(f"{path}: no such spec")
        for what, doc, why in convert(load_spec(path)):
            if doc is None:
                left.append((what, why))
            else:
                files[doc["name"] + ".json"] = json.dumps(doc, indent=2) + "\n"
    return files, left


def committed(out):
    """{file name: text} of the pgiso-*.json in `out`."""
    found = {}
    if os.path.isdir(out):
        for file in sorted(os.listdir(out)):
            if file.startswith(PREFIX) and file.endswith(".json"):
                with open(os.path.join(out, file)) as f:
                    found[file] = f.read()
    return found


def main(argv):
    parser = argparse.ArgumentParser(prog="isolation_spec.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--specs", required=True, metavar="DIR",
                        help="PostgreSQL's src/test/isolation/specs, or the source tree's top folder")
    parser.add_argument("--out", default=os.path.join(HERE, "pg-scripts"), metavar="DIR",
                        help="where the scripts are (default: conformance/pg-scripts)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the scripts in --out instead of writing them")
    try:
        a = parser.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        files, left = generate(a.specs)
        have = committed(a.out)
    except (OSError, SpecError, UnicodeDecodeError) as e:
        print(f"isolation_spec.py: {e}", file=sys.stderr)
        return 2
    for name, why in left:
        print(f"{PREFIX}{name}: left out: {why}")
    if a.check:
        differ = [f"{file}: not in {a.out}" for file in files if file not in have]
        differ += [f"{file}: differs from what {specs_folder(a.specs)} makes"
                   for file in files if file in have and have[file] != files[file]]
        differ += [f"{file}: no chosen spec makes it" for file in have if file not in files]
        for line in sorted(differ):
            print(line)
        if differ:
            print(f"{len(differ)} of {len(set(files) | set(have))} scripts differ")
            return 1
        print(f"{len(files)} scripts of {len(CHOSEN)} specs agree with {a.out}")
        return 0
    os.makedirs(a.out, exist_ok=True)
    for file in have:
        if file not in files:
            os.remove(os.path.join(a.out, file))
    for file, text in files.items():
        if have.get(file) != text:
            with open(os.path.join(a.out, file), "w") as f:
                f.write(text)
    print(f"{len(files)} scripts of {len(CHOSEN)} specs written to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
