#!/usr/bin/env python3
"""Hermitage's cases, run on the model, checked by the anomaly checker (docs/anomalies.md).

Each case of Hermitage's MySQL and PostgreSQL pages (conformance/sql-scripts/hermitage-*.json,
conformance/pg-scripts/hermitage-pg-*.json) is named for one anomaly and says in its description
whether its database prevents it at the case's level ("prevents", "does not prevent"). The
anomaly checker, reading only the model's history of the case's transactions, must find an
anomaly of that class where the page says the level lets it through, and none where the page
says it prevents it.

Usage: test_hermitage_anomalies.py LOCKSIM SOURCE_DIR
"""

import glob
import json
import os
import subprocess
import sys

# Each of Hermitage's anomalies, as the classes the checker counts it in: Lost Update (P4),
# Observed Transaction Vanishes (OTV) and Predicate-Many-Preceders (PMP) are G-single cycles in
# the dependency graph; G2 covers G2-item (a cycle of item anti-dependencies is one too).
CLASSES = {
    "g0": ["anomalies.g0"],
    "g1a": ["anomalies.g1a"],
    "g1b": ["anomalies.g1b"],
    "g1c": ["anomalies.g1c"],
    "g-single": ["anomalies.g_single"],
    "g2-item": ["anomalies.g2_item"],
    "g2-fekete": ["anomalies.g2", "anomalies.g2_item"],
    "g2": ["anomalies.g2", "anomalies.g2_item"],
    "p4": ["anomalies.g_single"],
    "otv": ["anomalies.g_single"],
    "pmp": ["anomalies.g_single"],
}
# Where a level prevents an anomaly, what must not be found, where that differs: OTV is no class
# of Adya's. Its case at READ UNCOMMITTED shows as a G-single inside one statement (T3 sees T2's
# x and T1's y, which T2 overwrites); at READ COMMITTED the same schedule reads row 1 before and
# after T2's commit, a non-repeatable read, which is a G-single too and one READ COMMITTED lets
# through (Adya's PL-2 proscribes G1 alone). So a level that prevents OTV must show no G1.
PREVENTED = {
    "otv": ["anomalies.g1a", "anomalies.g1b", "anomalies.g1c"],
}


def anomaly_of(path):
    """The anomaly a case's file name names: hermitage-[pg-]<anomaly>-<level>.json."""
    name = os.path.basename(path)[: -len(".json")]
    rest = name[len("hermitage-pg-"):] if name.startswith("hermitage-pg-") else name[len("hermitage-"):]
    return max((a for a in CLASSES if rest == a or rest.startswith(a + "-")), key=len)


def expected_found(description):
    """Whether the page says the level lets the anomaly through."""
    if "does not prevent" in description:
        return True
    if "prevents" in description:
        return False
    raise ValueError("the description says neither 'prevents' nor 'does not prevent'")


def main():
    locksim, source = sys.argv[1], sys.argv[2]
    cases = sorted(glob.glob(os.path.join(source, "conformance/sql-scripts/hermitage-*.json")) +
                   glob.glob(os.path.join(source, "conformance/pg-scripts/hermitage-pg-*.json")))
    if not cases:
        print("no Hermitage cases found under", source)
        return 1
    failures = []
    for case in cases:
        with open(case) as f:
            description = json.load(f)["description"]
        anomaly = anomaly_of(case)
        found_expected = expected_found(description)
        run = subprocess.run([locksim, "run", case, "--json"], capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            failures.append(f"{os.path.basename(case)}: locksim run exited {run.returncode}: {run.stderr.strip()}")
            continue
        results = json.loads(run.stdout)
        metrics = results["strategies"][0]["metrics"]
        classes = CLASSES[anomaly] if found_expected else PREVENTED.get(anomaly, CLASSES[anomaly])
        counts = {m: metrics[m]["total"] for m in classes}
        found = any(v > 0 for v in counts.values())
        shown = ", ".join(f"{m} = {v:g}" for m, v in counts.items())
        verdict = "found" if found else "none"
        print(f"{os.path.basename(case)}: {anomaly}, {'let through' if found_expected else 'prevented'} by the page; {verdict} ({shown})")
        if found != found_expected:
            failures.append(f"{os.path.basename(case)}: the page says {anomaly} is {'let through' if found_expected else 'prevented'}, "
                            f"the checker found {shown}")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(cases) - len(failures)} of {len(cases)} Hermitage cases as their pages say")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
