#!/usr/bin/env python3
"""The scenario schema, checked from outside by a validator of its own (python3-jsonschema):

- `locksim schema` prints a valid draft 2020-12 schema;
- every catalogue file validates against it;
- documents the loader accepts, the schema accepts; documents the loader refuses for a
  reason a schema can say (an unknown key, a value out of range, a wrong kind, a missing
  key), the schema refuses too.

usage: check_schema.py LOCKSIM SOURCE_DIR
"""

import copy
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

BASE = {"name": "x", "trials": 1}


def with_(change):
    doc = copy.deepcopy(BASE)
    doc.update(change)
    return doc


# Each accepted by the loader and by the schema.
ACCEPTED = [
    BASE,
    with_({"$schema": "../docs/scenario.schema.json"}),
    with_({"workload": "batch-scheduler"}),
    with_({"clients": {"traffic": {"rate_per_s": 200, "duration_s": 2, "keys": {"kind": "uniform", "count": 5}}}}),
    with_({"clients": {"arrival": {"kind": "listed", "times_ms": [0, 5]}}}),
    with_({"topology": {"app_work": {"mixture": [[0.99, {"normal_ms": [10, 2]}], [0.01, {"pareto_ms": {"scale": 1000, "shape": 1.5}}]]}}}),
    with_({"topology": {"app_work": {"empirical_ms": [1, 2, 250]}}}),
    with_({"faults": {"pauses": [{"node": "app-1", "at_ms": 5, "length_ms": 100}]}}),
    with_({"strategies": ["unique-index", {"name": "redlock", "as": "r", "params": {"ttl_ms": 3000}}],
           "expect": {"r": {"duplicate_rows.per_million": "< 5"}, "unique-index": {"duplicate_rows": "= 0 in every trial"}}}),
    with_({"workload": "sessions",
           "database": {"tables": ["CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT)"], "rows": {"t": [{"k": 1}]}},
           "steps": [{"session": "s1", "sql": "SELECT id FROM t WHERE k = ?", "args": [1], "at_ms": {"uniform_ms": [0, 1]}}],
           "expect": {"steps.1.error": "= 0"}}),
]

# Each refused by the loader (exit 2) and by the schema.
REFUSED = [
    {"trials": 1},                                                     # no name
    with_({"trails": 5}),                                              # an unknown key
    with_({"trials": 0}),                                              # out of range
    with_({"topology": {"workers": 1.5}}),                             # not an integer
    with_({"topology": {"balance": "least_loaded"}}),                  # not a choice
    with_({"topology": {"app_work": {"uniform_ms": [1, 2], "fixed_ms": 1}}}),  # two forms of a distribution
    with_({"topology": {"app_work": {"normal_ms": 5}}}),               # a distribution's form misread
    with_({"clients": {"traffic": {"rate_per_s": 0, "operations": 1}}}),  # a rate of 0
    with_({"clients": {"traffic": {"operations": 1}}}),                # no rate
    with_({"clients": {"traffic": {"rate_per_s": 1, "operations": 1, "keys": {"kind": "zipf"}}}}),  # no key count
    with_({"clients": {"arrival": {"kind": "listed"}}}),               # no times
    with_({"faults": {"gc_pause": {}}}),                               # an unknown fault kind
    with_({"faults": {"pauses": [{"node": "app-1", "length_ms": 5, "when": 3}]}}),  # an unknown key in a list item
    with_({"strategies": []}),                                         # no strategy
    with_({"expect": {"unique-index": {"duplicate_rows": "about 0"}}}),  # not a comparison
    with_({"workload": "sessions"}),                                   # no steps
    with_({"redis": {"persistence": "rdb"}}),                          # not a choice
]


def loader_accepts(locksim, doc):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        path = f.name
    try:
        run = subprocess.run([locksim, "run", path, "--print-config"], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(path)
    if run.returncode not in (0, 2):
        raise SystemExit(f"locksim exited {run.returncode} on {json.dumps(doc)}: {run.stderr.strip()}")
    return run.returncode == 0, run.stderr.strip()


def main():
    locksim, source = sys.argv[1], sys.argv[2]
    schema = json.loads(subprocess.run([locksim, "schema"], capture_output=True, text=True, check=True, timeout=60).stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []

    catalogue = sorted(os.path.join(source, "scenarios", f) for f in os.listdir(os.path.join(source, "scenarios")) if f.endswith(".json"))
    for path in catalogue:
        with open(path) as f:
            for error in validator.iter_errors(json.load(f)):
                failures.append(f"{path}: /{'/'.join(map(str, error.absolute_path))}: {error.message}")

    for doc in ACCEPTED:
        ok, why = loader_accepts(locksim, doc)
        if not ok:
            failures.append(f"the loader refuses an accepted document {json.dumps(doc)}: {why}")
        for error in validator.iter_errors(doc):
            failures.append(f"the schema refuses {json.dumps(doc)}: /{'/'.join(map(str, error.absolute_path))}: {error.message}")

    for doc in REFUSED:
        ok, _ = loader_accepts(locksim, doc)
        if ok:
            failures.append(f"the loader accepts a refused document {json.dumps(doc)}")
        if validator.is_valid(doc):
            failures.append(f"the schema accepts what the loader refuses: {json.dumps(doc)}")

    for failure in failures:
        print(failure)
    print(f"schema: {len(catalogue)} catalogue files, {len(ACCEPTED)} accepted and {len(REFUSED)} refused documents, "
          f"{len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
