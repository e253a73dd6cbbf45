#!/usr/bin/env python3
"""The conformance suite of the coordination services: each script runs on locksim's models of
ZooKeeper and etcd (models/coord) and on a real ZooKeeper 3.8 or etcd 3.4, and the outcomes are
compared step by step, as conformance.py compares the databases'.

usage: coord.py --driver LOCKSIM_COORD_SCRIPT [--scripts DIR] [--explained FILE] [--only NAME]...
                [--model-only | --real-only] [-v]
       coord.py --real-only [--only NAME]...

The driver (locksim_coord_script SCRIPT.json) runs a script on the model and prints
{"steps": [outcome, ...], "final": TEXT}; the real side runs it here. Both write each outcome as
below, and the report compares the texts.

A ZooKeeper script (zk-scripts/NAME.json): {"name": NAME, "description": ..., "zookeeper":
{"session_timeout_ms": 1000} (optional; the server's tickTime is 100 ms), "steps": [...]}, a step
one of
  {"session": S, "zk": ["create", PATH, DATA, MODE]}   ok PATH_CREATED  (MODE persistent, ephemeral,
                                                       persistent_sequential, ephemeral_sequential)
  ["delete", PATH] or ["delete", PATH, VERSION]        ok
  ["exists", PATH] or ["exists", PATH, "watch"]        STAT, or none
  ["get", PATH] or ["get", PATH, "watch"]              "DATA" STAT  (the data as a JSON string)
  ["set", PATH, DATA] or ["set", PATH, DATA, VERSION]  STAT
  ["children", PATH] or ["children", PATH, "watch"]    ["a","b"]  (sorted, compact JSON)
  ["events"]                                           the watch events the session's client took
                                                       since it last asked, in order, joined by ", ":
                                                       created PATH, deleted PATH, changed PATH,
                                                       child PATH; or none
  ["close"]                                            ok: the session ends; the session's next
                                                       step opens a new one
  {"pause": S} / {"resume": S}                         ok / session expired or session kept: S's
                                                       client process stopped (SIGSTOP) and
                                                       started again, then round trips 50 ms apart
                                                       (at most 10 s) until one succeeds
  {"sleep_ms": N}                                      ok
A failed request gives the client's exception without "Error": NoNode, NodeExists, NotEmpty,
BadVersion, NoChildrenForEphemerals, SessionExpired, ConnectionLoss. STAT is
  czxid=+A mzxid=+B pzxid=+C version=V cversion=W children=N owner=O
with the zxids counted from the script's base, and O none (a persistent node), the owning session's
name (c1; c1#2 for its second session, after a close or an expiry, and so on) or other.
A PATH is / or /a/b (a sequential node's may end in /). The final text is the nodes left under the
chroot, {path: data} as sorted compact JSON, compared as `nodes`.

An etcd script (etcd-scripts/NAME.json): {"name": NAME, "description": ..., "steps": [...]}, a
step one of
  {"session": S, "etcd": ["grant", TTL_S]}     lease L1 ttl T  (leases are L1, L2, ... in the order
                                               granted; T the granted TTL)
  ["keepalive", L]                             alive (the refresh gave a TTL), or gone
  ["revoke", L]                                ok rev +R, or error lease not found
  ["put", KEY, VALUE] or [..., L]              ok rev +R, or error lease not found
  ["get", KEY]                                 KV, or none
  ["range", PREFIX]                            the KVs of the keys under PREFIX, in key order,
                                               joined by "; ", or none
  ["del", KEY]                                 ok rev +R
  ["txn", IF, THEN, ELSE]                      succeeded rev +R, or failed rev +R; IF a list of
                                               [TARGET, KEY, OP, VALUE] (TARGET create_revision,
                                               mod_revision, version or value; OP =, <, > or !=;
                                               VALUE an integer, "+N" for a revision N after the
                                               base, or a string for value), THEN and ELSE lists
                                               of ["put", KEY, VALUE(, L)] and ["del", KEY]
  {"sleep_ms": N}                              ok
KV is KEY="VALUE" create=+C mod=+M version=V lease=L1 (lease=none without one); revisions count
from the script's base; another error is `error` and the server's message in lower case, without
"etcdserver: ". Keys start with "/". The final text is {key: "VALUE create=+C mod=+M version=V
lease=L"} as sorted compact JSON, compared as `keys`.

A script's name is its file's, unique across both folders. Each real server is started once for the
run, on a free loopback port in a private folder under one temporary folder, and stopped and
removed at the end, on failure too. Each script has a namespace of its own: ZooKeeper's sessions
are chrooted to a fresh /NAME, whose czxid is the base (the model's is 0), and etcd's keys are sent
under /NAME, the base being the store's revision before the first step (the model's is 1). Each
ZooKeeper session is a kazoo client in a worker process of its own (what a pause stops), the
sessions opened one after the other in the order they first appear, so that their opens take the
zxids +1, +2, ...; each etcd session an etcd3 client here.
Without Java and ZooKeeper's jar or etcd, without the Python clients (kazoo, etcd3), or with
--model-only, the model side runs alone and the report says the real side was skipped.

The report has one line per script, `agree` or `diverge at step N: model X, server Y`, and the last
line `conformance: A of N scripts agree (ZooKeeper a of n, etcd b of m)` (the services the run had
scripts of). Divergences are explained in docs/conformance.md's "Known divergences" table, as
conformance.py's are: the exit status is 1 on one that is not, or on a listed script that agrees
again (unless listed "sometimes"), 2 on bad input.
"""

import ctypes  # noqa: F401  (imported here, not first in a forked child: conformance.die_with_parent)
import importlib.util
import json
import logging
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.realpath(__file__))
# Python puts the script's folder first on its path: nothing here may stand in for a client module.
sys.path = [p for p in sys.path if os.path.realpath(p or os.curdir) != HERE]


def load_conformance():
    """conformance.py, as a module: its helpers (the servers' start-up, the explained divergences,
    the comparison) are this suite's too."""
    spec = importlib.util.spec_from_file_location("locksim_conformance", os.path.join(HERE, "conformance.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conformance = load_conformance()
BadInput = conformance.BadInput
STEP_LIMIT_S = conformance.STEP_LIMIT_S      # no request may take longer
START_LIMIT_S = conformance.START_LIMIT_S    # server start-up
SCRIPT_LIMIT_S = conformance.SCRIPT_LIMIT_S  # one script on the real server

KINDS = ("zk", "etcd")
FOLDERS = {"zk": "zk-scripts", "etcd": "etcd-scripts"}
SERVICES = {"zk": "ZooKeeper", "etcd": "etcd"}
CLIENTS = {"zk": "kazoo", "etcd": "etcd3"}  # the module each service's real side is driven with
FINAL = {"zk": "nodes", "etcd": "keys"}     # what a script's final text is, in a divergence's line
ZK_JAR = "/usr/share/java/zookeeper.jar"    # Debian's zookeeper: the server and its dependencies
TICK_MS = 100           # ZooKeeper's tickTime: sessions of 200 ms to 2 s, expired at 100 ms ticks
RESUME_RETRY_S = 0.05   # a resumed client's round trips, this far apart
RESUME_LIMIT_S = 10     # for at most this long
REEXEC = "LOCKSIM_COORD_INTERPRETER"  # set when this script has started itself again elsewhere
NAME = re.compile(r"[A-Za-z0-9_.+-]+")  # a script's name: a ZooKeeper node's and a key prefix's too


# ---------------------------------------------------------------------------------------------
# The interpreter: one whose clients import


def clients_of(python):
    """{module: version or None} for kazoo and etcd3 under the interpreter `python` (conformance.py's
    probe, run from an empty folder)."""
    with tempfile.TemporaryDirectory(prefix="locksim-coord-probe-") as empty:
        try:
            p = subprocess.run([python, "-c", conformance.CLIENT_PROBE, *CLIENTS.values()], cwd=empty,
                               capture_output=True, text=True, timeout=30)
            return json.loads(p.stdout) if p.returncode == 0 else {}
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return {}


def choose_interpreter(needed):
    """As conformance.py's: when this python3 lacks a client the kinds in `needed` require and another
    has them all (Debian's /usr/bin/python3, where python3-kazoo and python3-etcd3 import), the suite
    starts itself again there; otherwise it goes on here and those kinds run the model side alone."""
    mine = clients_of(sys.executable)
    if all(mine.get(CLIENTS[k]) for k in needed) or os.environ.get(REEXEC):
        return mine
    for python in conformance.interpreters():
        theirs = clients_of(python)
        if all(theirs.get(CLIENTS[k]) for k in needed):
            lacking = ", ".join(CLIENTS[k] for k in needed if not mine.get(CLIENTS[k]))
            print(f"conformance: {sys.executable} has no {lacking}; running under {python}", flush=True)
            os.environ[REEXEC] = python
            os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])
    return mine


# ---------------------------------------------------------------------------------------------
# Scripts


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
    return conformance.load_folders(folder, KINDS, FOLDERS, only, check,
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


# ---------------------------------------------------------------------------------------------
# The model side


def model_side(driver, script):
    """The driver's steps and final text; its exit 2 is bad input (its line names the script's file)."""
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


# ---------------------------------------------------------------------------------------------
# The servers


def log_text(path):
    return conformance.log_tail(path, 3)


class ZooKeeper:
    """A standalone ZooKeeper (Debian's jar, with its dependencies on its manifest's class path) on a
    free loopback port, in a private folder: tickTime 100 ms, so sessions of 200 ms to 2 s, expired
    at 100 ms ticks; its four-letter words srvr and mntr answer the harness."""

    def __init__(self, root):
        self.dir = os.path.join(root, "zookeeper")
        self.port = None
        self.proc = None

    @staticmethod
    def available():
        return conformance.program("java") and os.path.isfile(ZK_JAR)

    def start(self):
        import kazoo  # noqa: F401  (fails here, before a server starts, when the client is missing)
        os.makedirs(os.path.join(self.dir, "data"))
        self.port = conformance.free_port()
        config = os.path.join(self.dir, "zoo.cfg")
        with open(config, "w") as f:
            f.write(f"tickTime={TICK_MS}\ndataDir={os.path.join(self.dir, 'data')}\nclientPort={self.port}\n"
                    "clientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxClientCnxns=0\n"
                    "4lw.commands.whitelist=srvr,mntr\n")
        self.log = os.path.join(self.dir, "zookeeper.log")
        with open(self.log, "w") as log:
            # forceSync=no: the log is not fsynced at each write; a crash is no scenario here.
            self.proc = subprocess.Popen(
                [conformance.program("java"), "-Xmx256m", "-XX:+UseSerialGC", "-Dzookeeper.forceSync=no",
                 f"-Dzookeeper.log.dir={self.dir}", "-cp", ZK_JAR, "org.apache.zookeeper.server.ZooKeeperServerMain",
                 config], stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.dir,
                preexec_fn=conformance.die_with_parent)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited at start: {log_text(self.log)}")
            try:
                return "Mode: standalone" in self.four_letters("srvr")
            except OSError:
                return False
        conformance.wait_until(up, START_LIMIT_S, "ZooKeeper")

    def four_letters(self, word):
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(word.encode())
            out = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return out.decode(errors="replace")
                out += chunk

    def sessions(self):
        """How many sessions the server holds (mntr's zk_global_sessions)."""
        for line in self.four_letters("mntr").splitlines():
            key, _, value = line.partition("\t")
            if key == "zk_global_sessions":
                return int(value)
        raise RuntimeError("ZooKeeper's mntr gave no zk_global_sessions")

    def client(self):
        """The harness's own client, no chroot: its session the longest the server gives (2 s)."""
        from kazoo.client import KazooClient
        # kazoo logs each lost connection: the script's outcome says what matters.
        logging.getLogger("kazoo").addHandler(logging.NullHandler())
        logging.getLogger("kazoo").propagate = False
        c = KazooClient(hosts=f"127.0.0.1:{self.port}", timeout=TICK_MS * 20 / 1000, connection_retry=ZK_RETRY)
        try:
            c.start(timeout=STEP_LIMIT_S)
        except Exception:
            c.stop()
            c.close()
            raise
        return c

    def stop(self):
        conformance.stop(self.proc)


# kazoo's default reconnects with a delay doubling up to an hour: a resumed client is to reconnect
# at once, as the model's does.
ZK_RETRY = {"max_tries": -1, "delay": RESUME_RETRY_S, "backoff": 1, "max_jitter": 0, "max_delay": RESUME_RETRY_S}


class Etcd:
    """A one-member etcd on free loopback ports, in a private folder: heartbeat 10 ms and election
    timeout 100 ms, so its shortest lease TTL is 1 s."""

    def __init__(self, root):
        self.dir = os.path.join(root, "etcd")
        self.port = None
        self.proc = None

    @staticmethod
    def available():
        return conformance.program("etcd")

    def start(self):
        import etcd3  # noqa: F401  (fails here, before a server starts, when the client is missing)
        os.makedirs(self.dir)
        self.port, peer = conformance.free_port(), conformance.free_port()
        client_url, peer_url = f"http://127.0.0.1:{self.port}", f"http://127.0.0.1:{peer}"
        self.log = os.path.join(self.dir, "etcd.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [conformance.program("etcd"), "--name", "t", "--data-dir", os.path.join(self.dir, "data"),
                 "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
                 "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                 "--initial-cluster", f"t={peer_url}", "--heartbeat-interval", "10", "--election-timeout", "100"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.dir, preexec_fn=conformance.die_with_parent)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError(f"etcd exited at start: {log_text(self.log)}")
            c = self.client(timeout_s=2)
            try:
                c.status()
                return True
            except Exception:
                return False
            finally:
                c.close()
        conformance.wait_until(up, START_LIMIT_S, "etcd")

    def client(self, timeout_s=STEP_LIMIT_S):
        import etcd3
        return etcd3.client("127.0.0.1", self.port, timeout=timeout_s)

    def stop(self):
        conformance.stop(self.proc)


# ---------------------------------------------------------------------------------------------
# ZooKeeper's real side: each session a kazoo client in a worker process of its own (a pause stops
# the process, as a stopped client's machine would be), speaking JSON lines on its stdin and stdout


def zk_worker(hosts, timeout_s):
    """The worker: connects, then answers each request line with one line {"ok": result} or {"error":
    the exception's name}, each with "sid", the session it ran in; a line {"session": id} says each
    new session as it opens (after a close, or kazoo's own after an expiry)."""
    from kazoo.client import KazooClient
    from kazoo.exceptions import ConnectionLoss, KazooException, SessionExpiredError
    from kazoo.protocol.states import Callback, EventType, KazooState

    out = threading.Lock()
    said = set()
    events, events_lock = [], threading.Lock()
    lost = threading.Event()
    last = [None]
    words = {EventType.CREATED: "created", EventType.DELETED: "deleted", EventType.CHANGED: "changed",
             EventType.CHILD: "child"}

    def send(msg):
        with out:
            sys.stdout.write(json.dumps(msg) + "\n")
            sys.stdout.flush()

    def watcher(event):
        # On kazoo's callback thread, in the order the events came. A session's state (NONE: kazoo
        # drops its watches on a disconnection) is no node event. kazoo hands one event to each of
        # the watches it fires (a delete fires a node's exists and children watches): the server
        # sent it once, as the Java client delivers it once.
        if event.type not in words or event is last[0]:
            return
        last[0] = event
        with events_lock:
            events.append(f"{words[event.type]} {event.path}")

    def connect():
        c = KazooClient(hosts=hosts, timeout=timeout_s, connection_retry=ZK_RETRY)

        def listener(state):  # on kazoo's connection thread: must not block
            if state == KazooState.LOST:
                lost.set()
            elif state == KazooState.CONNECTED and c._session_id and c._session_id not in said:
                said.add(c._session_id)
                send({"session": c._session_id})
        c.add_listener(listener)
        try:
            c.start(timeout=STEP_LIMIT_S)
        except Exception:
            c.stop()
            c.close()
            raise
        return c

    def stat(st):
        if st is None:
            return None
        return {"czxid": st.czxid, "mzxid": st.mzxid, "pzxid": st.pzxid, "version": st.version,
                "cversion": st.cversion, "children": st.numChildren, "owner": st.ephemeralOwner}

    def request(c, w):
        op, watch = w[0], (watcher if w[-1] == "watch" else None)
        if op == "create":
            return c.create(w[1], w[2].encode(), ephemeral=w[3].startswith("ephemeral"),
                            sequence=w[3].endswith("sequential"))
        if op == "delete":
            c.delete(w[1], version=w[2] if len(w) > 2 else -1)
            return None
        if op == "exists":
            return stat(c.exists(w[1], watch=watch))
        if op == "get":
            data, st = c.get(w[1], watch=watch)
            return [(data or b"").decode("utf-8", "replace"), stat(st)]
        if op == "set":
            return stat(c.set(w[1], w[2].encode(), version=w[3] if len(w) > 3 else -1))
        if op == "children":
            return c.get_children(w[1], watch=watch)
        if op == "events":
            # ZooKeeper sends a watch's event before its reply to any later request: after a round trip
            # every event sent before it has come, and a marker through kazoo's callback queue runs
            # after every watch callback queued before it.
            c.exists("/")
            done = threading.Event()
            c.handler.dispatch_callback(Callback("watch", done.set, ()))
            done.wait(STEP_LIMIT_S)
            with events_lock:
                taken = events[:]
                events.clear()
            return taken
        raise ValueError(f"no request {op!r}")

    client = None
    first = json.loads(sys.stdin.readline() or '{"quit": true}')  # started (and kazoo imported) ahead of its turn
    if "open" not in first:
        send({"ok": None, "sid": None})  # a quit before its session opened
        return 0
    try:
        client = connect()
        send({"ok": None, "sid": client._session_id})
    except Exception as e:
        send({"failed": f"{type(e).__name__}: {e}"})
        return 1
    for line in sys.stdin:
        msg = json.loads(line)
        try:
            if "pause" in msg:
                lost.clear()  # what the resume says: whether the session was lost since this pause
                result = None
            elif "resume" in msg:
                deadline = time.monotonic() + RESUME_LIMIT_S
                while client is not None and time.monotonic() < deadline:
                    try:
                        client.exists("/")
                        break
                    except (ConnectionLoss, SessionExpiredError):
                        time.sleep(RESUME_RETRY_S)
                result = "expired" if lost.is_set() else "kept"
            elif "quit" in msg:
                if client is not None:
                    client.stop()
                    client.close()
                send({"ok": None, "sid": None})
                return 0
            else:
                if client is None:  # closed by an earlier step: a new session
                    client = connect()
                if msg["op"][0] == "close":
                    client.stop()
                    client.close()
                    client, result = None, None
                else:
                    result = request(client, msg["op"])
            send({"ok": result, "sid": client._session_id if client else None})
        except KazooException as e:
            name = type(e).__name__
            send({"error": name[:-5] if name.endswith("Error") else name,
                  "sid": client._session_id if client else None})
        except Exception as e:  # the harness's fault, not an outcome
            send({"failed": f"{type(e).__name__}: {e}"})
    return 0


class ZkSession:
    """One session of a ZooKeeper script, as the harness sees it: the worker process and the lines
    it sends. `owners` names the sessions the worker opens (c1, then c1#2, ...) by their ids, as
    soon as the worker says them: before any later answer of its is read."""

    owners_lock = threading.Lock()

    def __init__(self, name, hosts, timeout_s, owners, logdir):
        self.name = name
        self.owners = owners
        self.opened = 0
        self.paused = False
        self.log = os.path.join(logdir, f"{name}.log".replace("/", "_"))
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--zk-worker", hosts, str(timeout_s)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1,
                preexec_fn=conformance.die_with_parent)
        self.lines = queue.Queue()
        threading.Thread(target=self.read, daemon=True).start()

    def open(self):
        """The worker's first session; the process was started before, its imports done meanwhile."""
        self.call({"open": True}, what="its connection")

    def read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            if "session" in msg:
                self.opened_session(msg["session"])
            else:
                self.lines.put(msg)
        self.lines.put(None)

    def opened_session(self, sid):
        with self.owners_lock:
            if sid and sid not in self.owners:
                self.opened += 1
                self.owners[sid] = self.name if self.opened == 1 else f"{self.name}#{self.opened}"

    def answer(self, limit_s, what):
        try:
            msg = self.lines.get(timeout=limit_s)
        except queue.Empty:
            raise RuntimeError(f"session {self.name} did not answer {what} within {limit_s:.0f} s")
        if msg is None:
            self.lines.put(None)  # the end, for a later call too
            raise RuntimeError(f"session {self.name}'s worker ended ({self.proc.wait()}): {log_text(self.log)}")
        if "failed" in msg:
            raise RuntimeError(f"session {self.name}: {msg['failed']}")
        self.opened_session(msg.get("sid"))
        return msg

    def call(self, msg, limit_s=STEP_LIMIT_S, what="its request"):
        try:
            self.proc.stdin.write(json.dumps(msg) + "\n")
            self.proc.stdin.flush()
        except OSError:
            raise RuntimeError(f"session {self.name}'s worker ended ({self.proc.poll()}): {log_text(self.log)}")
        return self.answer(limit_s, what)

    def pause(self):
        self.call({"pause": True})
        self.proc.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)
        self.paused = False
        reply = self.call({"resume": True}, RESUME_LIMIT_S + STEP_LIMIT_S, "its resume")
        return f"session {reply['ok']}"

    def quit(self):
        """Asks the worker to close its session and end (finish() waits for it): the sessions of a
        script close together."""
        if self.proc.poll() is None:
            if self.paused:
                self.proc.send_signal(signal.SIGCONT)
                self.paused = False
            try:
                self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
                self.proc.stdin.flush()
            except OSError:
                pass

    def finish(self, deadline):
        """The worker's end; one that has not closed its session by the deadline is killed."""
        try:
            self.answer(max(0.0, deadline - time.monotonic()), "its quit")
            self.proc.wait(max(0.0, deadline - time.monotonic()))
        except (RuntimeError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass


def zk_stat(st, base, owners):
    owner = "none" if not st["owner"] else owners.get(st["owner"], "other")
    return (f"czxid={st['czxid'] - base:+d} mzxid={st['mzxid'] - base:+d} pzxid={st['pzxid'] - base:+d} "
            f"version={st['version']} cversion={st['cversion']} children={st['children']} owner={owner}")


def zk_outcome(words, reply, base, owners):
    if "error" in reply:
        return reply["error"]
    op, result = words[0], reply["ok"]
    if op == "create":
        return f"ok {result}"
    if op in ("delete", "close"):
        return "ok"
    if op in ("exists", "set"):
        return "none" if result is None else zk_stat(result, base, owners)
    if op == "get":
        return f"{json.dumps(result[0], ensure_ascii=False)} {zk_stat(result[1], base, owners)}"
    if op == "children":
        return compact(sorted(result))
    return ", ".join(result) or "none"  # events


def zk_tree(admin, top):
    """The nodes under `top` (itself left out), {path relative to it: data}, as sorted compact JSON."""
    from kazoo.exceptions import NoNodeError
    nodes, todo = {}, [top]
    while todo:
        parent = todo.pop()
        try:
            children = admin.get_children(parent)
        except NoNodeError:
            continue
        for child in children:
            path = f"{parent}/{child}"
            try:
                data, _ = admin.get(path)
            except NoNodeError:
                continue
            nodes[path[len(top):]] = (data or b"").decode("utf-8", "replace")
            todo.append(path)
    return compact(nodes)


def settle(server, limit_s=STEP_LIMIT_S):
    """Until the server holds one session, the admin's: a session of an earlier script still open
    (a worker killed) expires within its timeout, and its expiry would take a zxid of this one's."""
    deadline = time.monotonic() + limit_s
    while server.sessions() > 1:
        if time.monotonic() > deadline:
            raise RuntimeError(f"ZooKeeper still holds {server.sessions() - 1} sessions of an earlier script")
        time.sleep(TICK_MS / 1000)


def real_zk(server, script, logdir):
    """A ZooKeeper script on the real server: a fresh /NAME, its czxid the base; each session a worker
    chrooted there, opened in the order the sessions first appear; at the end the nodes left."""
    name = script["name"]
    top = f"/{name}"
    timeout_s = script.get("zookeeper", {}).get("session_timeout_ms", 1000) / 1000
    admin = server.client()
    sessions = {}
    try:
        settle(server)
        if admin.exists(top):
            admin.delete(top, recursive=True)
        admin.create(top, b"")
        base = admin.exists(top).czxid
        owners = {}
        for s in session_order(script):
            sessions[s] = ZkSession(s, f"127.0.0.1:{server.port}{top}", timeout_s, owners, logdir)
        for s in sessions.values():  # one after the other: each session's open takes the next zxid
            s.open()
        deadline = time.monotonic() + SCRIPT_LIMIT_S
        outcomes = []
        for i, step in enumerate(script["steps"]):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the script ran past its time limit ({SCRIPT_LIMIT_S} s) at step {i + 1}")
            if "sleep_ms" in step:
                time.sleep(step["sleep_ms"] / 1000)
                outcomes.append("ok")
            elif "pause" in step:
                sessions[step["pause"]].pause()
                outcomes.append("ok")
            elif "resume" in step:
                outcomes.append(sessions[step["resume"]].resume())
            else:
                reply = sessions[step["session"]].call({"op": step["zk"]})
                outcomes.append(zk_outcome(step["zk"], reply, base, owners))
        final = zk_tree(admin, top)
        return outcomes, {"nodes": final}
    finally:
        for s in sessions.values():
            s.quit()
        deadline = time.monotonic() + STEP_LIMIT_S
        for s in sessions.values():
            s.finish(deadline)
        try:
            admin.delete(top, recursive=True)
        except Exception:
            pass  # gone already, or the server is not answering: the next script's node is made afresh
        admin.stop()
        admin.close()


# ---------------------------------------------------------------------------------------------
# etcd's real side: each session an etcd3 client (its own gRPC channel), here


def prefix_end(key):
    """The end of the range of keys that start with `key`: its last byte one more."""
    b = key.encode()
    return b[:-1] + bytes([b[-1] + 1])


class EtcdRun:
    """One etcd script on the real server, its keys under /NAME."""

    def __init__(self, server, script):
        from etcd3 import etcdrpc
        self.rpc = etcdrpc
        self.server = server
        self.script = script
        self.prefix = f"/{script['name']}"
        self.leases = {}  # the script's name for each lease it granted, L1, ...: its id
        self.clients = {}
        self.admin = server.client()
        self.base = None

    def key(self, k):
        return (self.prefix + k).encode()

    def kv_attributes(self, kv):
        names = {v: k for k, v in self.leases.items()}
        lease = "none" if not kv.lease else names.get(kv.lease, "other")
        return (f"create={kv.create_revision - self.base:+d} mod={kv.mod_revision - self.base:+d} version={kv.version} "
                f"lease={lease}")

    def kv_text(self, kv):
        key, value = kv.key.decode()[len(self.prefix):], kv.value.decode("utf-8", "replace")
        return f"{key}={json.dumps(value, ensure_ascii=False)} {self.kv_attributes(kv)}"

    def rev(self, response):
        return f"ok rev {response.header.revision - self.base:+d}"

    def compare(self, c):
        target, key, op, value = c
        rpc = self.rpc
        m = rpc.Compare(key=self.key(key), result={"=": rpc.Compare.EQUAL, ">": rpc.Compare.GREATER,
                                                   "<": rpc.Compare.LESS, "!=": rpc.Compare.NOT_EQUAL}[op])
        if target == "value":
            m.target, m.value = rpc.Compare.VALUE, value.encode()
        elif target == "version":
            m.target, m.version = rpc.Compare.VERSION, value
        else:
            n = self.base + int(value[1:]) if isinstance(value, str) else value
            if target == "create_revision":
                m.target, m.create_revision = rpc.Compare.CREATE, n
            else:
                m.target, m.mod_revision = rpc.Compare.MOD, n
        return m

    def operation(self, o):
        rpc = self.rpc
        if o[0] == "put":
            return rpc.RequestOp(request_put=rpc.PutRequest(key=self.key(o[1]), value=o[2].encode(),
                                                            lease=self.leases[o[3]] if len(o) > 3 else 0))
        return rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=self.key(o[1])))

    def request(self, c, w):
        rpc, op, t = self.rpc, w[0], STEP_LIMIT_S
        if op == "grant":
            r = c.leasestub.LeaseGrant(rpc.LeaseGrantRequest(TTL=w[1]), t)
            name = f"L{len(self.leases) + 1}"
            self.leases[name] = r.ID
            return f"lease {name} ttl {r.TTL}"
        if op == "keepalive":
            call = c.leasestub.LeaseKeepAlive(iter([rpc.LeaseKeepAliveRequest(ID=self.leases[w[1]])]), t)
            try:
                return "alive" if next(call).TTL > 0 else "gone"
            except StopIteration:
                return "gone"
            finally:
                call.cancel()
        if op == "revoke":
            return self.rev(c.leasestub.LeaseRevoke(rpc.LeaseRevokeRequest(ID=self.leases[w[1]]), t))
        if op == "put":
            return self.rev(c.kvstub.Put(self.operation(w).request_put, t))
        if op == "get":
            kvs = c.kvstub.Range(rpc.RangeRequest(key=self.key(w[1])), t).kvs
            return self.kv_text(kvs[0]) if kvs else "none"
        if op == "range":
            kvs = c.kvstub.Range(rpc.RangeRequest(key=self.key(w[1]), range_end=prefix_end(self.prefix + w[1])), t).kvs
            return "; ".join(self.kv_text(kv) for kv in kvs) or "none"
        if op == "del":
            return self.rev(c.kvstub.DeleteRange(rpc.DeleteRangeRequest(key=self.key(w[1])), t))
        r = c.kvstub.Txn(rpc.TxnRequest(compare=[self.compare(x) for x in w[1]],
                                        success=[self.operation(o) for o in w[2]],
                                        failure=[self.operation(o) for o in w[3]]), t)
        return f"{'succeeded' if r.succeeded else 'failed'} rev {r.header.revision - self.base:+d}"

    def run(self):
        import grpc
        rpc, mine = self.rpc, prefix_end(self.prefix + "/")
        try:
            self.admin.kvstub.DeleteRange(rpc.DeleteRangeRequest(key=self.key("/"), range_end=mine), STEP_LIMIT_S)
            self.base = self.admin.kvstub.Range(rpc.RangeRequest(key=self.key("/")), STEP_LIMIT_S).header.revision
            deadline = time.monotonic() + SCRIPT_LIMIT_S
            outcomes = []
            for i, step in enumerate(self.script["steps"]):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the script ran past its time limit ({SCRIPT_LIMIT_S} s) at step {i + 1}")
                if "sleep_ms" in step:
                    time.sleep(step["sleep_ms"] / 1000)
                    outcomes.append("ok")
                    continue
                if step["session"] not in self.clients:
                    self.clients[step["session"]] = self.server.client()
                try:
                    outcomes.append(self.request(self.clients[step["session"]], step["etcd"]))
                except grpc.RpcError as e:
                    outcomes.append(etcd_error(e))
            kvs = self.admin.kvstub.Range(rpc.RangeRequest(key=self.key("/"), range_end=mine), STEP_LIMIT_S).kvs
            final = compact({kv.key.decode()[len(self.prefix):]: f"{kv.value.decode('utf-8', 'replace')} "
                             f"{self.kv_attributes(kv)}" for kv in kvs})
            return outcomes, {"keys": final}
        finally:
            for lease in self.leases.values():
                try:
                    self.admin.leasestub.LeaseRevoke(rpc.LeaseRevokeRequest(ID=lease), STEP_LIMIT_S)
                except grpc.RpcError:
                    pass  # expired or revoked by the script
            try:
                self.admin.kvstub.DeleteRange(rpc.DeleteRangeRequest(key=self.key("/"), range_end=mine), STEP_LIMIT_S)
            finally:
                for c in [*self.clients.values(), self.admin]:
                    c.close()


def etcd_error(e):
    """A refused request: `error lease not found`, or `error` and the server's message."""
    import grpc
    message = (e.details() or str(e.code())).strip()
    if e.code() == grpc.StatusCode.NOT_FOUND and "lease not found" in message:
        return "error lease not found"
    if message.startswith("etcdserver: "):
        message = message[len("etcdserver: "):]
    return f"error {message.lower().strip()}"


# ---------------------------------------------------------------------------------------------
# The run


def by_service(figures):
    """ (ZooKeeper 3 of 4, etcd 2 of 2): each service the run had scripts of."""
    return " (" + ", ".join(f"{SERVICES[k]} {v}" for k, v in figures.items()) + ")" if figures else ""


def main():
    ap = conformance.Parser(description="locksim's conformance suite of ZooKeeper and etcd: the models against "
                                        "real servers")
    ap.add_argument("--driver",
                    help="the models' script driver (locksim_coord_script; may be left out with --real-only)")
    ap.add_argument("--scripts", default=HERE, help="the folder of zk-scripts/ and etcd-scripts/")
    ap.add_argument("--explained", default=os.path.join(HERE, "..", "docs", "conformance.md"))
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="run this script only (repeatable; a shell pattern such as 'zk-*' runs those it matches)")
    sides = ap.add_mutually_exclusive_group()
    sides.add_argument("--model-only", action="store_true")
    sides.add_argument("--real-only", action="store_true",
                       help="run the real side alone and print every step's outcome there (writing a script)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print both sides' outcomes of every step")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        if not a.driver and not a.real_only:
            raise BadInput("--driver is needed (it may be left out with --real-only)")
        if a.driver:
            a.driver = os.path.abspath(a.driver)
            if not os.path.isfile(a.driver) or not os.access(a.driver, os.X_OK):
                raise BadInput(f"{a.driver}: not an executable")
        scripts = load_scripts(a.scripts, set(a.only))
        explained = conformance.load_explained(a.explained)
    except BadInput as e:
        print(f"conformance: {e}", file=sys.stderr)
        return 2

    have = {"zk": ZooKeeper.available(), "etcd": Etcd.available()}
    needed = [kind for kind in KINDS if have[kind] and not a.model_only and any(s["_kind"] == kind for s in scripts)]
    versions = choose_interpreter(needed) if needed else {}
    if needed:
        print(f"conformance: python {sys.executable}: "
              + ", ".join(f"{CLIENTS[k]} {versions.get(CLIENTS[k]) or 'missing'}" for k in needed), flush=True)
    skipped = {}
    missing = {"zk": f"no java or no {ZK_JAR}: scripts/setup installs zookeeper",
               "etcd": "no etcd: scripts/setup installs etcd-server"}
    for kind in KINDS:
        if a.model_only:
            skipped[kind] = "--model-only"
        elif not have[kind]:
            skipped[kind] = missing[kind]
        elif not versions.get(CLIENTS[kind]):
            skipped[kind] = (f"no Python module {CLIENTS[kind]} under {sys.executable} or any python3 on the PATH: "
                             f"scripts/setup installs Debian's python3-{CLIENTS[kind]}")

    # The model side first: a script it refuses is bad input, found before a server starts.
    models = {}
    if not a.real_only:
        for script in scripts:
            try:
                models[script["name"]] = model_side(a.driver, script)
            except BadInput as e:
                print(f"conformance: {e}", file=sys.stderr)
                return 2
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                models[script["name"]] = f"{type(e).__name__}: {e}"

    # A termination (CTest's timeout, a ^C) ends the run through the clean-up below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    root = tempfile.mkdtemp(prefix="locksim-coord-")
    servers = {}
    count = {k: sum(s["_kind"] == k for s in scripts) for k in KINDS}
    verdicts = conformance.Verdicts(KINDS, explained)
    ran = 0
    failed = False
    t0 = time.monotonic()
    try:
        for kind, server in (("zk", ZooKeeper), ("etcd", Etcd)):
            if kind not in skipped and count[kind]:
                began = time.monotonic()
                servers[kind] = server(root)
                try:
                    servers[kind].start()
                    print(f"conformance: {SERVICES[kind]} started ({time.monotonic() - began:.1f} s)", flush=True)
                except Exception as e:  # that service's real side fails; the other's still runs
                    print(f"conformance: {SERVICES[kind]} did not start: {type(e).__name__}: {e}", file=sys.stderr)
                    failed = True
                    servers[kind].stop()
                    del servers[kind]
        logdir = os.path.join(root, "sessions")
        os.makedirs(logdir)
        for script in scripts:
            name, kind = script["name"], script["_kind"]
            model = models.get(name)
            if isinstance(model, str):
                print(f"{name}: failed on the model: {model}", flush=True)
                failed = True
                continue
            if kind in skipped:
                if a.real_only:
                    print(f"{name}: real side skipped", flush=True)
                else:
                    print(f"{name}: model ran ({len(model[0])} steps); real side skipped", flush=True)
                continue
            if kind not in servers:
                print(f"{name}: failed on the server: {SERVICES[kind]} did not start", flush=True)
                continue
            began = time.monotonic()
            try:
                if kind == "zk":
                    real = real_zk(servers[kind], script, logdir)
                else:
                    real = EtcdRun(servers[kind], script).run()
            except Exception as e:  # this script's real side: reported, the others still run
                print(f"{name}: failed on the server: {type(e).__name__}: {e}", flush=True)
                failed = True
                continue
            if a.real_only:
                ran += 1
                print(f"{name} ({SERVICES[kind]}):")
                for i, (step, r) in enumerate(zip(script["steps"], real[0]), 1):
                    who = step.get("session") or step.get("pause") or step.get("resume") or "-"
                    print(f"  step {i} {who}: {describe(step)} => {r}")
                for t in sorted(real[1]):
                    print(f"  {t}: {real[1][t]}")
                print(f"{name}: ran on the server ({time.monotonic() - began:.1f} s)", flush=True)
                continue
            if a.verbose:
                for i, (m, r) in enumerate(zip(model[0], real[0]), 1):
                    print(f"  {name} step {i}: model {m} | server {r}")
                for t in model[1]:
                    print(f"  {name} {t}: model {model[1][t]} | server {real[1].get(t)}")
            verdicts.add(name, kind, conformance.compare(script, model, real))
    except Exception as e:
        print(f"conformance: the real side failed: {type(e).__name__}: {e}", file=sys.stderr)
        failed = True
    finally:
        for s in servers.values():
            s.stop()
        shutil.rmtree(root, ignore_errors=True)
    for kind, why in skipped.items():
        if count[kind]:
            print(f"conformance: the real side of the {SERVICES[kind]} scripts was skipped ({why})"
                  + ("" if a.real_only else "; the model ran them"))
    failed = failed or verdicts.stale
    unexplained = verdicts.unexplained
    if unexplained:
        print(f"conformance: {unexplained} unexplained divergence{'s' if unexplained != 1 else ''}: fix the model or "
              f"list them in docs/conformance.md with the reason")
    print(f"conformance: {time.monotonic() - t0:.1f} s")
    if a.real_only:
        print(f"conformance: real side only: {ran} of {len(scripts)} scripts ran"
              + by_service({k: f"{count[k]}" for k in KINDS if count[k]}))
        return 1 if failed or ran < len(scripts) else 0
    last = (f"conformance: {verdicts.agree} of {len(scripts)} scripts agree"
            + by_service({k: f"{verdicts.agree_of[k]} of {count[k]}" for k in KINDS if count[k]}))
    if verdicts.compared < len(scripts) and not failed:
        last += f"; {len(scripts) - verdicts.compared} not compared (the real side was skipped)"
    print(last)
    return 1 if failed or unexplained else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--zk-worker"]:  # a session's worker process (ZkSession), not the suite
        sys.exit(zk_worker(sys.argv[2], float(sys.argv[3])))
    sys.exit(main())
