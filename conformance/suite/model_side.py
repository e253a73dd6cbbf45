"""The model side: a script run on locksim's models. A MariaDB or PostgreSQL script by `locksim run`
(one trial, of a given seed or the scenario's own; model_sql), a Redis script by the Redis driver
(locksim_redis_script; model_redis), a ZooKeeper or etcd script by the coordination driver
(locksim_coord_script; model_coord). Each gives the steps' outcomes and the final state as the real side
writes them; what the model refuses is bad input."""

import json
import os
import subprocess

from coord_scripts import FINAL
from inputs import BadInput
from outcomes import (BIG_TABLE, big_table_text, is_alter, is_select, is_write, pttl_band, returns_rows,
                      sql_outcome, table_text, unordered)
from servers import SCRIPT_LIMIT_S

MODEL_WAIT_MS = 50      # a step of the model that waited this long for a lock has waited


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


def model_coord(driver, script):
    """A ZooKeeper or etcd script: the driver's steps and final text; its exit 2 is bad input (its line names the script's file)."""
    p = subprocess.run([driver, script["_path"]], capture_output=True, text=True, timeout=SCRIPT_LIMIT_S)
    if p.returncode == 2:
        said = " / ".join(line.strip() for line in (p.stderr.strip() or p.stdout.strip()).splitlines())
        raise BadInput(f"the model refused {script['name']}: {said}")
    if p.returncode != 0:
        raise RuntimeError(f"the driver failed ({p.returncode}): {p.stderr.strip()}")
    try:
        out = json.loads(p.stdout)
        steps, final = out["steps"], out["final"]
        if not isinstance(final, str) or not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
            raise ValueError("steps: a list of strings, final: a string")
    except (ValueError, KeyError, TypeError) as e:
        raise RuntimeError(f"the driver printed {p.stdout.strip()[:200]!r} ({e})")
    if len(steps) != len(script["steps"]):
        raise RuntimeError(f"the driver gave {len(steps)} outcomes for {len(script['steps'])} steps")
    return steps, {FINAL[script["_kind"]]: final}
