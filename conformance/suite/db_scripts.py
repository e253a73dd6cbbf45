"""The database suite's scripts (conformance.py): its kinds, each in a folder of its own (MariaDB's
sql-scripts/, PostgreSQL's pg-scripts/, Redis's redis-scripts/), the engine and the Python client each
kind's real side is driven with, and the checks a script passes as it is loaded (check_sql_script)."""

from inputs import BadInput, load_folders

KINDS = ("sql", "pg", "redis")                 # the kinds of script, each in a folder of its own
FOLDERS = {"sql": "sql-scripts", "pg": "pg-scripts", "redis": "redis-scripts"}
ENGINES = {"sql": "MariaDB", "pg": "PostgreSQL", "redis": "Redis"}
CLIENTS = {"sql": "pymysql", "pg": "psycopg2", "redis": "redis"}  # the module each kind's real side is driven with
MAX_RACE_RUNS = 100     # a race script's runs on each side, at most


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
