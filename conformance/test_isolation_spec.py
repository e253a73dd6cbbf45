#!/usr/bin/env python3
"""isolation_spec.py, the generator of the pgiso-* scripts from PostgreSQL's isolation specs, on
specs of its own written in the isolation-spec syntax (no PostgreSQL source tree needed): the
parser, the script a permutation makes, every interleaving of a spec without permutations, what
is left out and why, writing the scripts and --check; and that docs/conformance.md lists every
spec or permutation left out and the committed pgiso-* scripts come from the chosen specs.

usage: test_isolation_spec.py SOURCE_DIR
"""

import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest

SOURCE = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
HERE = os.path.join(SOURCE, "conformance")
_spec = importlib.util.spec_from_file_location("isolation_spec", os.path.join(HERE, "isolation_spec.py"))
iso = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(iso)

# Two sessions taking row locks on one table: setup and teardown, a session's own setup and
# teardown, a step of two statements, quoted names, a comment, a blocking marker.
SPEC = """
# accounts locked by two tellers
setup
{
  CREATE TABLE account (no int PRIMARY KEY, owner text NOT NULL, balance int NOT NULL);
  INSERT INTO account VALUES (1, 'ann', 10), (2, 'bob', 20);
}
teardown { DROP TABLE account; }

session "t1"
setup       { BEGIN; }
step lock1  { SELECT * FROM account WHERE no = 1 FOR UPDATE; }
step pay1   { UPDATE account SET balance = balance - 5 WHERE no = 1; SAVEPOINT paid; }
step end1   { COMMIT; }

session t2
setup       { BEGIN; }
step "try2" { SELECT * FROM account WHERE no = 1 FOR UPDATE NOWAIT; }
step end2   { ROLLBACK; }
teardown    { SELECT balance FROM account WHERE no = 1; }

permutation lock1 try2 pay1 end1 end2
permutation lock1 pay1 end1 try2 end2
permutation lock1 try2(end1) pay1 end1 end2
permutation lock1 pay1 end1 try2 end2 "ins2"
"""

# No permutation: every interleaving of 2 + 2 steps, 4! / (2! 2!) = 6.
SPEC_ALL = """
setup { CREATE TABLE item (id int PRIMARY KEY, qty int); INSERT INTO item (id, qty) VALUES (7, 1); }
session a
step a1 { SELECT qty FROM item WHERE id = 7 FOR SHARE; }
step a2 { COMMIT; }
session b
setup { BEGIN; }
step b1 { DELETE FROM item WHERE id = 7; }
step b2 { COMMIT; }
"""


def spec_text(extra=""):
    """SPEC with its last permutation's step "ins2" given to t2 (the INSERT without a column list)."""
    return SPEC.replace("step end2", "step ins2   { INSERT INTO account VALUES (3, 'cy', 0); }\nstep end2") + extra


class Parsing(unittest.TestCase):
    def test_sessions_steps_and_permutations(self):
        spec = iso.parse(spec_text(), "tellers")
        self.assertEqual(len(spec.setup), 1)
        self.assertEqual([s["name"] for s in spec.sessions], ["t1", "t2"])
        self.assertEqual([name for name, _ in spec.sessions[0]["steps"]], ["lock1", "pay1", "end1"])
        self.assertEqual([name for name, _ in spec.sessions[1]["steps"]], ["try2", "ins2", "end2"])
        self.assertEqual(spec.sessions[1]["teardown"], ["SELECT balance FROM account WHERE no = 1;"])
        self.assertEqual(len(spec.permutations), 4)
        self.assertEqual(spec.permutations[2][1], ("try2", "end1"))
        self.assertEqual(iso.statements("SELECT 'a;b'; COMMIT;"), ["SELECT 'a;b'", "COMMIT"])

    def test_no_permutation_runs_every_interleaving(self):
        spec = iso.parse(SPEC_ALL, "item")
        perms = iso.permutations(spec)
        self.assertEqual(len(perms), 6)
        # isolationtester's order: the first session's next step first
        self.assertEqual([[s for s, _ in p] for p in perms], [
            ["a1", "a2", "b1", "b2"], ["a1", "b1", "a2", "b2"], ["a1", "b1", "b2", "a2"],
            ["b1", "a1", "a2", "b2"], ["b1", "a1", "b2", "a2"], ["b1", "b2", "a1", "a2"]])
        self.assertEqual(len(iso.convert(spec)), 6)

    def test_bad_spec(self):
        for text in ["session s1\nstep a { SELECT 1; }\npermutation b\n",  # no step b
                     "setup { CREATE TABLE t (id int PRIMARY KEY); }\n",  # no session
                     "session s1\nstep a { SELECT 1; }\nstep a { SELECT 2; }\n",  # two steps a
                     "session s1\nstep a SELECT 1;\n"]:  # no SQL block
            with self.assertRaises(iso.SpecError, msg=text):
                iso.parse(text, "x")


class Scripts(unittest.TestCase):
    def setUp(self):
        self.out = iso.convert(iso.parse(spec_text(), "tellers"), "a test's own spec")

    def test_one_script_per_permutation_that_runs(self):
        self.assertEqual([name for name, _, _ in self.out], ["tellers-1", "tellers-2", "tellers-3", "tellers-4"])
        self.assertEqual([doc is not None for _, doc, _ in self.out], [True, True, False, False])

    def test_the_script(self):
        doc = self.out[0][1]
        self.assertEqual(doc["name"], "pgiso-tellers-1")
        self.assertEqual(doc["workload"], "sessions")
        self.assertEqual(doc["database"], {
            "engine": "postgresql", "isolation": "read_committed",
            "tables": ["CREATE TABLE account (no int PRIMARY KEY, owner text NOT NULL, balance int NOT NULL)"],
            "rows": {"account": [{"no": 1, "owner": "ann", "balance": 10},
                                 {"no": 2, "owner": "bob", "balance": 20}]}})
        # each session's setup, the permutation (pay1 is two steps), then t2's teardown
        self.assertEqual([(s["session"], s["sql"]) for s in doc["steps"]], [
            ("t1", "BEGIN"), ("t2", "BEGIN"),
            ("t1", "SELECT * FROM account WHERE no = 1 FOR UPDATE"),
            ("t2", "SELECT * FROM account WHERE no = 1 FOR UPDATE NOWAIT"),
            ("t1", "UPDATE account SET balance = balance - 5 WHERE no = 1"), ("t1", "SAVEPOINT paid"),
            ("t1", "COMMIT"), ("t2", "ROLLBACK"),
            ("t2", "SELECT balance FROM account WHERE no = 1")])
        self.assertIn("tellers.spec", doc["description"])
        self.assertIn("a test's own spec", doc["description"])
        self.assertIn('"starting permutation: lock1 try2 pay1 end1 end2"', doc["description"])
        self.assertNotIn("conformance", doc)

    def test_left_out_with_reasons(self):
        self.assertEqual(self.out[2][2], "a step marker (isolationtester's blocking annotation), which the harness does not keep")
        self.assertTrue(self.out[3][2].startswith("INSERT without a column list: "), self.out[3][2])
        keyless = iso.parse(spec_text().replace("no int PRIMARY KEY", "no int"), "tellers")
        self.assertEqual(iso.convert(keyless), [("tellers", None, "table account has no primary key (the model's tables have one)")])

    def test_left_out_by_name(self):
        old = dict(iso.LEFT_OUT)
        try:
            iso.LEFT_OUT["tellers-2"] = "a race"
            out = iso.convert(iso.parse(spec_text(), "tellers"))
            self.assertEqual(out[1], ("tellers-2", None, "a race"))
        finally:
            iso.LEFT_OUT.clear()
            iso.LEFT_OUT.update(old)


class CommandLine(unittest.TestCase):
    """--specs DIR writes the scripts, --check compares them: on a tree of this test's own specs."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="locksim-isolation-spec-")
        self.specs = os.path.join(self.tmp.name, "postgres", "src", "test", "isolation", "specs")
        self.scripts = os.path.join(self.tmp.name, "pg-scripts")
        os.makedirs(self.specs)
        for name, text in [("tellers", spec_text()), ("item", SPEC_ALL)]:
            with open(os.path.join(self.specs, name + ".spec"), "w") as f:
                f.write(text)
        self.chosen = dict(iso.CHOSEN)
        iso.CHOSEN.clear()
        iso.CHOSEN.update({"tellers": "0" * 40, "item": "1" * 40})

    def tearDown(self):
        iso.CHOSEN.clear()
        iso.CHOSEN.update(self.chosen)
        self.tmp.cleanup()

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = iso.main(list(args))
        return rc, out.getvalue(), err.getvalue()

    def test_write_then_check(self):
        # the source tree's top folder finds src/test/isolation/specs under it
        rc, out, _ = self.run_main("--specs", os.path.join(self.tmp.name, "postgres"), "--out", self.scripts)
        self.assertEqual(rc, 0, out)
        self.assertIn("pgiso-tellers-3: left out: a step marker", out)
        files = sorted(os.listdir(self.scripts))
        self.assertEqual(files, [f"pgiso-item-{n}.json" for n in range(1, 7)] + ["pgiso-tellers-1.json", "pgiso-tellers-2.json"])
        with open(os.path.join(self.scripts, "pgiso-tellers-2.json")) as f:
            doc = json.load(f)
        self.assertEqual(list(doc), ["name", "description", "workload", "database", "steps", "trials"])
        self.assertIn("at commit " + "0" * 40, doc["description"])
        rc, out, _ = self.run_main("--specs", self.specs, "--out", self.scripts, "--check")
        self.assertEqual((rc, out.splitlines()[-1]), (0, f"8 scripts of 2 specs agree with {self.scripts}"))

    def test_check_finds_a_difference(self):
        self.run_main("--specs", self.specs, "--out", self.scripts)
        with open(os.path.join(self.specs, "tellers.spec"), "a") as f:
            f.write("permutation lock1 end1 try2 end2\n")  # a permutation more
        os.remove(os.path.join(self.scripts, "pgiso-item-6.json"))
        with open(os.path.join(self.scripts, "pgiso-gone-1.json"), "w") as f:
            f.write("{}\n")
        rc, out, _ = self.run_main("--specs", self.specs, "--out", self.scripts, "--check")
        self.assertEqual(rc, 1, out)
        for says in ["pgiso-tellers-5.json: not in", "pgiso-item-6.json: not in", "pgiso-gone-1.json: no chosen spec makes it"]:
            self.assertIn(says, out)
        # writing brings the folder in line, removing what no chosen spec makes
        self.assertEqual(self.run_main("--specs", self.specs, "--out", self.scripts)[0], 0)
        self.assertFalse(os.path.exists(os.path.join(self.scripts, "pgiso-gone-1.json")))
        self.assertEqual(self.run_main("--specs", self.specs, "--out", self.scripts, "--check")[0], 0)

    def test_bad_input(self):
        rc, _, err = self.run_main("--specs", os.path.join(self.tmp.name, "nowhere"), "--check")
        self.assertEqual((rc, len(err.splitlines())), (2, 1))
        os.remove(os.path.join(self.specs, "item.spec"))
        rc, _, err = self.run_main("--specs", self.specs, "--out", self.scripts, "--check")
        self.assertEqual(rc, 2)
        self.assertIn("item.spec: no such spec", err)
        with open(os.path.join(self.specs, "item.spec"), "w") as f:
            f.write("session a\nstep a1 { SELECT 1; }\npermutation a1 a9\n")
        self.assertEqual(self.run_main("--specs", self.specs, "--out", self.scripts, "--check")[0], 2)
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(self.run_main("--out", self.scripts)[0], 2)  # no --specs


class Committed(unittest.TestCase):
    def test_docs_list_what_is_left_out(self):
        with open(os.path.join(SOURCE, "docs", "conformance.md")) as f:
            docs = f.read()
        section = docs.split("## PostgreSQL's isolation specs", 1)[1].split("\n## ", 1)[0]
        for name in list(iso.CHOSEN) + list(iso.NOT_CHOSEN) + list(iso.LEFT_OUT):
            self.assertIn(f"`{name}`", section, f"docs/conformance.md does not list {name}")

    def test_the_committed_scripts_come_from_the_chosen_specs(self):
        folder = os.path.join(HERE, "pg-scripts")
        made = {}
        for file in sorted(os.listdir(folder)):
            if file.startswith(iso.PREFIX):
                with open(os.path.join(folder, file)) as f:
                    doc = json.load(f)
                spec = doc["name"][len(iso.PREFIX):].rsplit("-", 1)[0]
                self.assertIn(spec, iso.CHOSEN, file)
                self.assertIn(f"{spec}.spec ({iso.source_of(spec)})", doc["description"], file)
                made[spec] = made.get(spec, 0) + 1
        self.assertEqual(sorted(made), sorted(iso.CHOSEN))
        self.assertFalse(set(iso.CHOSEN) & set(iso.NOT_CHOSEN))


if __name__ == "__main__":
    unittest.main()
