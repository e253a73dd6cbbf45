"""What both conformance suites read, and how they refuse what they cannot: BadInput, a fault of the
input that ends the run with one line and exit 2, as Parser answers a bad command line; the scripts of
a suite's folders, read and checked (load_folders); and the divergences docs/conformance.md explains
(load_explained)."""

import argparse
import fnmatch
import json
import os
import re
import sys


class BadInput(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        print(f"conformance: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


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
