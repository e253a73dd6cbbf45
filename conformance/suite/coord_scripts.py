"""The coordination services' scripts (coord.py): ZooKeeper's in zk-scripts/ and etcd's in
etcd-scripts/, what each step may be (checked as the driver checks it, bad input naming the step), and
how a step and a final state are written, alike on both sides. coord.py's opening comment describes
every step and its outcome."""

import json
import re

from inputs import BadInput, load_folders

KINDS = ("zk", "etcd")
FOLDERS = {"zk": "zk-scripts", "etcd": "etcd-scripts"}
SERVICES = {"zk": "ZooKeeper", "etcd": "etcd"}
CLIENTS = {"zk": "kazoo", "etcd": "etcd3"}  # the module each service's real side is driven with
FINAL = {"zk": "nodes", "etcd": "keys"}     # what a script's final text is, in a divergence's line
NAME = re.compile(r"[A-Za-z0-9_.+-]+")  # a script's name: a ZooKeeper node's and a key prefix's too


ZK_MODES = ("persistent", "ephemeral", "persistent_sequential", "ephemeral_sequential")
ZK_ARGS = {"create": (3, 3), "delete": (1, 2), "exists": (1, 2), "get": (1, 2), "set": (2, 3),
           "children": (1, 2), "events": (0, 0), "close": (0, 0)}  # the fewest and most arguments
ETCD_ARGS = {"grant": (1, 1), "keepalive": (1, 1), "revoke": (1, 1), "put": (2, 3), "get": (1, 1),
             "range": (1, 1), "del": (1, 1), "txn": (3, 3)}
TXN_TARGETS = ("create_revision", "mod_revision", "version", "value")
TXN_OPS = ("=", "<", ">", "!=")


def check(ok, where, what):
    if not ok:
        raise BadInput(f"{where}: expected {what}")


def check_zk_step(words, where):
    op = words[0]
    check(op in ZK_ARGS, f"{where}/0", f"an operation of {', '.join(ZK_ARGS)}, got {op!r}")
    least, most = ZK_ARGS[op]
    check(least <= len(words) - 1 <= most, where,
          f"{op} and {least}{'' if least == most else f' to {most}'} argument{'' if most == 1 else 's'}")
    if len(words) > 1:
        # kazoo would make /a of /a/ and the chroot of //: a path the server reads as the script says
        # (a sequential node's may end in /: its name is the counter alone).
        path = words[1]
        if op == "create" and words[3] in ZK_MODES[2:] and isinstance(path, str) and path.endswith("/"):
            path += "0000000000"
        check(isinstance(path, str) and path.startswith("/") and (path == "/" or all(
            part not in ("", ".", "..") for part in path.split("/")[1:])),
            f"{where}/1", "a path: / or /a/b, with no empty, . or .. part")
    if op in ("create", "set"):
        check(isinstance(words[2], str), f"{where}/2", "the data, a string")
    if op == "create":
        check(words[3] in ZK_MODES, f"{where}/3", " or ".join(ZK_MODES))
    if op in ("delete", "set") and len(words) == most + 1:
        check(isinstance(words[-1], int) and not isinstance(words[-1], bool), f"{where}/{most}",
              "a version, an integer")
    if op in ("exists", "get", "children") and len(words) == 3:
        check(words[2] == "watch", f"{where}/2", '"watch"')


def check_key(key, where):
    # Every key is sent under /NAME: one without its / would leave the script's range.
    check(isinstance(key, str) and key.startswith("/"), where, "a key starting with /")


def check_etcd_step(words, where, granted):
    """`granted`: the leases the steps before this one grant (L1 to Ln)."""
    op = words[0]
    check(op in ETCD_ARGS, f"{where}/0", f"an operation of {', '.join(ETCD_ARGS)}, got {op!r}")
    least, most = ETCD_ARGS[op]
    check(least <= len(words) - 1 <= most, where,
          f"{op} and {least}{'' if least == most else f' to {most}'} argument{'' if most == 1 else 's'}")

    def lease(name, at):
        check(isinstance(name, str) and re.fullmatch(r"L[1-9][0-9]*", name) and int(name[1:]) <= granted, at,
              f"a lease granted before, L1 to L{granted}" if granted else "a lease granted before (none is)")

    def operation(o, at):
        check(isinstance(o, list) and o and o[0] in ("put", "del") and len(o) in ((3, 4) if o[0] == "put" else (2,)),
              at, '["put", KEY, VALUE], ["put", KEY, VALUE, LEASE] or ["del", KEY]')
        check_key(o[1], f"{at}/1")
        if o[0] == "put":
            check(isinstance(o[2], str), f"{at}/2", "the value, a string")
            if len(o) == 4:
                lease(o[3], f"{at}/3")

    if op == "grant":
        check(isinstance(words[1], int) and not isinstance(words[1], bool) and 1 <= words[1] <= 3600, f"{where}/1",
              "a TTL of 1 to 3600 s")
    elif op in ("keepalive", "revoke"):
        lease(words[1], f"{where}/1")
    elif op == "put":
        operation(words, where)
    elif op == "txn":
        for part in (1, 2, 3):
            check(isinstance(words[part], list), f"{where}/{part}", "a list")
        for i, c in enumerate(words[1]):
            at = f"{where}/1/{i}"
            check(isinstance(c, list) and len(c) == 4, at, "[TARGET, KEY, OP, VALUE]")
            check(c[0] in TXN_TARGETS, f"{at}/0", " or ".join(TXN_TARGETS))
            check_key(c[1], f"{at}/1")
            check(c[2] in TXN_OPS, f"{at}/2", " or ".join(TXN_OPS))
            if c[0] == "value":
                check(isinstance(c[3], str), f"{at}/3", "a string")
            elif c[0] == "version":
                check(isinstance(c[3], int) and not isinstance(c[3], bool), f"{at}/3", "a version, an integer")
            else:
                check((isinstance(c[3], int) and not isinstance(c[3], bool))
                      or (isinstance(c[3], str) and re.fullmatch(r"\+[0-9]+", c[3])), f"{at}/3",
                      'a revision: an integer (0: the key is absent) or "+N", N after the base')
        for part in (2, 3):
            for i, o in enumerate(words[part]):
                operation(o, f"{where}/{part}/{i}")
    else:
        check_key(words[1], f"{where}/1")


def check_script(doc, kind, path):
    """The script's steps, as the driver checks them: bad input names the step (/steps/3, from 0)."""
    extra = set(doc) - {"name", "description", "steps"} - ({"zookeeper"} if kind == "zk" else set())
    check(not extra, f"{path}: /{sorted(extra)[0] if extra else ''}",
          "name, description, steps" + (" and zookeeper" if kind == "zk" else ""))
    if kind == "zk" and "zookeeper" in doc:
        zk = doc["zookeeper"]
        check(isinstance(zk, dict) and set(zk) == {"session_timeout_ms"} and isinstance(zk["session_timeout_ms"], int)
              and not isinstance(zk["session_timeout_ms"], bool) and 1 <= zk["session_timeout_ms"] <= 600000,
              f"{path}: /zookeeper", '{"session_timeout_ms": a number of ms from 1 to 600000}')
    service = "zk" if kind == "zk" else "etcd"
    paused = {}
    granted = 0
    for i, step in enumerate(doc["steps"]):
        where = f"{path}: /steps/{i}"
        check(isinstance(step, dict), where, "an object")
        if "zk" in step or "etcd" in step:
            check(service in step, where,
                  f"{service}: a script of {FOLDERS[kind]} sends its requests to {SERVICES[kind]}")
            check(set(step) == {"session", service}, where, f"session and {service}, nothing else")
            check(isinstance(step["session"], str) and step["session"], f"{where}/session", "a session's name")
            check(not paused.get(step["session"]), f"{where}/session", f"a session not paused ({step['session']} is)")
            words = step[service]
            check(isinstance(words, list) and words and isinstance(words[0], str), f"{where}/{service}",
                  "a list of an operation and its arguments")
            if kind == "zk":
                check_zk_step(words, f"{where}/zk")
            else:
                check_etcd_step(words, f"{where}/etcd", granted)
                granted += words[0] == "grant"
        elif "sleep_ms" in step:
            check(set(step) == {"sleep_ms"}, where, "sleep_ms alone")
            ms = step["sleep_ms"]
            check(isinstance(ms, (int, float)) and not isinstance(ms, bool) and 0 <= ms <= 600000, f"{where}/sleep_ms",
                  "a number of ms from 0 to 600000")
        elif "pause" in step or "resume" in step:
            check(kind == "zk", where, "zk requests or sleep_ms: pause and resume are for ZooKeeper sessions")
            what = "pause" if "pause" in step else "resume"
            check(set(step) == {what}, where, f"{what} alone")
            name = step[what]
            check(isinstance(name, str) and name, f"{where}/{what}", "a session's name")
            check(paused.get(name, False) == (what == "resume"), f"{where}/{what}",
                  f"a session {'paused' if what == 'resume' else 'not paused'} ({name} is "
                  f"{'not' if what == 'resume' else 'already'} paused)")
            paused[name] = what == "pause"
        else:
            check(False, where, f"{service} (with session), sleep_ms" + (", pause or resume" if kind == "zk" else ""))
    check(any(service in s for s in doc["steps"]), f"{path}: /steps", f"a {service} request among the steps")
    still = sorted(n for n, p in paused.items() if p)
    check(not still, f"{path}: /steps", f"each paused session resumed ({still[0] if still else ''} is not)")


def load_scripts(folder, only):
    """Every script of zk-scripts/ and etcd-scripts/, checked; a name is a script's in one folder only."""
    def check(doc, kind, path):
        # The name is a ZooKeeper node's (/zookeeper is the server's own) and a key prefix.
        if not NAME.fullmatch(doc["name"]) or doc["name"] in (".", "..", "zookeeper"):
            raise BadInput(f"{path}: /name: expected letters, digits and _ . + - (and not {doc['name']!r})")
        check_script(doc, kind, path)
    return load_folders(folder, KINDS, FOLDERS, only, check,
                        f"{folder}: no scripts in {' or '.join(FOLDERS.values())}")


def session_order(script):
    """The script's sessions in the order they first appear, as a step's session or a pause's."""
    names = []
    for step in script["steps"]:
        name = step.get("session") or step.get("pause") or step.get("resume")
        if name and name not in names:
            names.append(name)
    return names


def describe(step):
    """A step in a line, for --real-only: `create /a x persistent`, `pause c1`, `sleep_ms 100`."""
    for service in ("zk", "etcd"):
        if service in step:
            return " ".join(w if isinstance(w, str) and w and not re.search(r"\s", w) else json.dumps(w)
                            for w in step[service])
    return next(f"{k} {step[k]}" for k in ("pause", "resume", "sleep_ms") if k in step)


def compact(value):
    """JSON as the driver writes it (nlohmann::json's dump): no spaces, sorted keys, UTF-8 unescaped."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
