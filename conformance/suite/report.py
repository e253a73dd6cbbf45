"""The two sides compared, and the report both suites print: a script's verdict (compare; race_verdict
over a race script's runs), the rates of --repeat (print_rates), the verdict judged against the
divergences docs/conformance.md explains (judge) and counted (Verdicts), and the engines' or services'
figures of the last line (by_engine, by_service)."""

import sys

from coord_scripts import SERVICES
from db_scripts import ENGINES


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


def by_engine(figures):
    """ (MariaDB 3 of 4, PostgreSQL 2 of 2): each engine the run had scripts of."""
    return " (" + ", ".join(f"{ENGINES[k]} {v}" for k, v in figures.items()) + ")" if figures else ""


def by_service(figures):
    """ (ZooKeeper 3 of 4, etcd 2 of 2): each service the run had scripts of."""
    return " (" + ", ".join(f"{SERVICES[k]} {v}" for k, v in figures.items()) + ")" if figures else ""


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
