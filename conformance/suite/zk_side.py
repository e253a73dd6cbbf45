"""ZooKeeper's real side: each session of a script a kazoo client in a worker process of its own (a
pause stops the process, as a stopped client's machine would be), speaking JSON lines on its stdin and
stdout. The worker is zk_worker, run as coord.py --zk-worker; ZkSession is the session as the harness
sees it; real_zk runs a script and writes each outcome as the driver writes the model's."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from coord_scripts import compact, session_order
from coord_servers import RESUME_LIMIT_S, RESUME_RETRY_S, TICK_MS, ZK_RETRY, log_text
from servers import SCRIPT_LIMIT_S, STEP_LIMIT_S, die_with_parent


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
    soon as the worker says them: before any later answer of its is read. `worker`: the command that
    starts the worker process (coord.py --zk-worker), its hosts and session timeout to follow."""

    owners_lock = threading.Lock()

    def __init__(self, name, hosts, timeout_s, owners, logdir, worker):
        self.name = name
        self.owners = owners
        self.opened = 0
        self.paused = False
        self.log = os.path.join(logdir, f"{name}.log".replace("/", "_"))
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(
                [*worker, hosts, str(timeout_s)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1,
                preexec_fn=die_with_parent)
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


def real_zk(server, script, logdir, worker):
    """A ZooKeeper script on the real server: a fresh /NAME, its czxid the base; each session a worker
    (started by the command `worker`) chrooted there, opened in the order the sessions first appear; at
    the end the nodes left."""
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
            sessions[s] = ZkSession(s, f"127.0.0.1:{server.port}{top}", timeout_s, owners, logdir, worker)
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
